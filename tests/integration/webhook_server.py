"""A real HTTPS admission webhook server for tests: a CA and a server certificate made on
the spot (the ``cryptography`` package), ``http.server`` on 127.0.0.1 in a thread, and a
handler per path that turns an AdmissionReview into a response — or, for a hostile
webhook, into an :class:`Answer`: raw bytes, dripped a byte at a time."""

from __future__ import annotations

import base64
import datetime
import ipaddress
import json
import ssl
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, NamedTuple, Union

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

Obj = dict[str, Any]


class Answer(NamedTuple):
    """A handler's answer when a review's fields are not enough: ``raw`` is the whole body
    (else the review of ``fields``, uid filled in), sent one byte every ``drip_s`` seconds
    after the head — the head too with ``drip_head`` — until done, the client hangs up or
    the server closes; ``status`` and ``content_type`` head it."""

    fields: Obj | None = None
    raw: bytes | None = None
    drip_s: float = 0.0
    drip_head: bool = False
    status: str = "200 OK"
    content_type: str = "application/json"


#: A handler: the AdmissionReview's request → the response's fields (uid is filled in).
Handler = Callable[[Obj], Union[Obj, Answer]]
START = datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def make_ca(common_name: str = "webhook-ca") -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(_name(common_name)).issuer_name(_name(common_name))
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(START).not_valid_after(START + datetime.timedelta(days=36500))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    return key, cert


def make_server_cert(ca: tuple[ec.EllipticCurvePrivateKey, x509.Certificate], dns_names: list[str]
                     ) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    ca_key, ca_cert = ca
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = [x509.DNSName(n) for n in dns_names]
    names.append(x509.IPAddress(ipaddress.ip_address("127.0.0.1")))
    cert = (x509.CertificateBuilder().subject_name(_name(dns_names[0])).issuer_name(ca_cert.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(START).not_valid_after(START + datetime.timedelta(days=36500))
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return key, cert


def pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


class _QuietServer(ThreadingHTTPServer):
    """A client refusing our certificate (a test's wrong caBundle) is expected: not printed."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


class WebhookServer:
    """Serves AdmissionReviews over HTTPS; ``handlers`` by path, ``reviews`` as received."""

    def __init__(self, dns_names: list[str] | None = None,
                 review: tuple[str, str] = ("admission.k8s.io/v1", "AdmissionReview")) -> None:
        #: The answer's apiVersion and kind (a CRD conversion webhook answers a ConversionReview).
        self.review = review
        self.ca = make_ca()
        key, cert = make_server_cert(self.ca, dns_names or ["hooks.default.svc", "localhost"])
        self.handlers: dict[str, Handler] = {}
        self.reviews: list[Obj] = []
        #: Set with each review received (a test waits on it to know a call is under way).
        self.received = threading.Event()
        #: Set by :meth:`close`: dripping answers stop.
        self.stopping = threading.Event()
        self._dir = tempfile.TemporaryDirectory()
        cert_path, key_path = Path(self._dir.name, "tls.crt"), Path(self._dir.name, "tls.key")
        cert_path.write_bytes(pem(cert))
        key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert_path, key_path)
        self._server = _QuietServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def ca_bundle(self) -> str:
        """The CA as a webhook's ``clientConfig.caBundle`` holds it (base64 of the PEM)."""
        return base64.b64encode(pem(self.ca[1])).decode()

    def close(self) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._dir.cleanup()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.reviews.append(dict(review, path=self.path))
                server.received.set()
                handler = server.handlers.get(self.path.split("?")[0])
                if handler is None:
                    self.send_response(404)
                    self.end_headers()
                    return
                answer = handler(review["request"])
                if not isinstance(answer, Answer):
                    answer = Answer(fields=answer)
                body = answer.raw
                if body is None:
                    response = {"uid": review["request"]["uid"], **(answer.fields or {})}
                    body = json.dumps({"apiVersion": server.review[0], "kind": server.review[1],
                                       "response": response}).encode()
                head = (f"HTTP/1.0 {answer.status}\r\nContent-Type: {answer.content_type}\r\n"
                        f"Content-Length: {len(body)}\r\n\r\n").encode()
                self.close_connection = True
                if not answer.drip_s:
                    self.wfile.write(head + body)
                elif answer.drip_head:
                    self._drip(head + body, answer.drip_s)
                else:
                    self.wfile.write(head)
                    self._drip(body, answer.drip_s)

            def _drip(self, data: bytes, pause_s: float) -> None:
                for index in range(len(data)):
                    if server.stopping.wait(pause_s):
                        return
                    try:
                        self.wfile.write(data[index:index + 1])
                    except OSError:  # the client hung up
                        return

        return Handler


def json_patch(*operations: Obj) -> Obj:
    """A mutating response's fields for these RFC 6902 operations."""
    return {"allowed": True, "patchType": "JSONPatch",
            "patch": base64.b64encode(json.dumps(list(operations)).encode()).decode()}
