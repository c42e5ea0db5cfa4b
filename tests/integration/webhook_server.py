"""A real HTTPS admission webhook server for tests: a CA and a server certificate made on
the spot (the ``cryptography`` package), ``http.server`` on 127.0.0.1 in a thread, and a
handler per path that turns an AdmissionReview into a response."""

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
from typing import Any, Callable

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

Obj = dict[str, Any]
#: A handler: the AdmissionReview's request → the response's fields (uid is filled in).
Handler = Callable[[Obj], Obj]
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
                handler = server.handlers.get(self.path.split("?")[0])
                if handler is None:
                    self.send_response(404)
                    self.end_headers()
                    return
                response = {"uid": review["request"]["uid"], **handler(review["request"])}
                body = json.dumps({"apiVersion": server.review[0], "kind": server.review[1],
                                   "response": response}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler


def json_patch(*operations: Obj) -> Obj:
    """A mutating response's fields for these RFC 6902 operations."""
    return {"allowed": True, "patchType": "JSONPatch",
            "patch": base64.b64encode(json.dumps(list(operations)).encode()).decode()}
