"""The admission webhook the scenarios register: HTTPS on 127.0.0.1, answers that depend on
the review alone (so both servers get the same answers), and a log of every review received.

Scenarios point ``clientConfig.url`` at ``${webhook_url}/<path>`` with ``caBundle:
${webhook_ca}``; a real apiserver and fakekube both dial a URL's host as it is (fakekube's
loopback rules: docs/api.md "Admission webhooks and policies"). The CA and serving key are
made when the server starts; their bytes are masked (:mod:`.normalize`).

Paths (each answers an AdmissionReview v1):

- ``/allow``: allowed.
- ``/deny``: refused with code 403 and the message ``conformance webhook says no``.
- ``/deny-labelled``: refused (code 400, reason ``BadRequest``) when the object carries the label
  ``deny: "yes"``; allowed otherwise.
- ``/warn``: allowed with two warnings.
- ``/mutate``: a JSONPatch adding the label ``mutated: "yes"`` (and ``metadata.labels`` if missing).
- ``/bad-patch``: a JSONPatch whose operation cannot apply (removes a missing path).
- ``/not-json``: HTTP 200 with a body that is not JSON.
- ``/error-500``: HTTP 500.
- ``/wrong-uid``: an answer for another review's uid.
"""

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
_VALIDITY_START = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
_VALIDITY = datetime.timedelta(days=36500)


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _certificates() -> tuple[bytes, bytes, bytes]:
    """(CA PEM, serving certificate PEM, serving key PEM); the certificate names 127.0.0.1."""
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder().subject_name(_name("conformance-webhook-ca")).issuer_name(_name("conformance-webhook-ca"))
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(_VALIDITY_START).not_valid_after(_VALIDITY_START + _VALIDITY)
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    alt = x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    cert = (x509.CertificateBuilder().subject_name(_name("127.0.0.1")).issuer_name(ca.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(_VALIDITY_START).not_valid_after(_VALIDITY_START + _VALIDITY)
            .add_extension(alt, critical=False).sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    key_pem = key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return ca.public_bytes(pem), cert.public_bytes(pem), key_pem


def _labels(request: Obj) -> Obj:
    obj = request.get("object") or {}
    return ((obj.get("metadata") or {}).get("labels")) or {}


def _patch(operations: list[Obj]) -> Obj:
    return {"allowed": True, "patchType": "JSONPatch",
            "patch": base64.b64encode(json.dumps(operations).encode()).decode()}


def _mutate(request: Obj) -> Obj:
    obj = request.get("object") or {}
    if (obj.get("metadata") or {}).get("labels") is None:
        return _patch([{"op": "add", "path": "/metadata/labels", "value": {"mutated": "yes"}}])
    return _patch([{"op": "add", "path": "/metadata/labels/mutated", "value": "yes"}])


def _deny_labelled(request: Obj) -> Obj:
    if _labels(request).get("deny") == "yes":
        return {"allowed": False, "status": {"code": 400, "reason": "BadRequest", "message": "labelled deny"}}
    return {"allowed": True}


#: The answer's fields by path (``uid`` is added).
HANDLERS: dict[str, Callable[[Obj], Obj]] = {
    "/allow": lambda request: {"allowed": True},
    "/deny": lambda request: {"allowed": False, "status": {"code": 403, "message": "conformance webhook says no"}},
    "/deny-labelled": _deny_labelled,
    "/warn": lambda request: {"allowed": True, "warnings": ["conformance warning one", "conformance warning two"]},
    "/mutate": _mutate,
    "/bad-patch": lambda request: _patch([{"op": "remove", "path": "/metadata/labels/not-there"}]),
}


class WebhookServer:
    """The webhook, served in a thread until :meth:`close`; ``reviews`` is what it was sent."""

    def __init__(self) -> None:
        ca_pem, cert_pem, key_pem = _certificates()
        self.ca_bundle = base64.b64encode(ca_pem).decode()
        self.reviews: list[Obj] = []
        self._lock = threading.Lock()
        with tempfile.TemporaryDirectory() as directory:
            cert_path, key_path = Path(directory, "tls.crt"), Path(directory, "tls.key")
            cert_path.write_bytes(cert_pem)
            key_path.write_bytes(key_pem)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(cert_path, key_path)
        self._server = _QuietServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self._thread = threading.Thread(target=self._server.serve_forever, name="conformance-webhook", daemon=True)
        self._thread.start()

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self._server.server_address[1]}"

    @property
    def url(self) -> str:
        return f"https://{self.host}"

    def take_reviews(self) -> list[Obj]:
        """The reviews received since the last call, in arrival order (then forgotten)."""
        with self._lock:
            taken, self.reviews = self.reviews, []
        return taken

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _answer(self, path: str, review: Obj) -> tuple[int, bytes]:
        request = review.get("request") or {}
        if path == "/not-json":
            return 200, b"this is not json"
        if path == "/error-500":
            return 500, b"webhook failed"
        handler = HANDLERS.get("/allow" if path == "/wrong-uid" else path)
        if handler is None:
            return 404, b"404 page not found"
        uid = "00000000-0000-0000-0000-000000000000" if path == "/wrong-uid" else request.get("uid", "")
        response = {"uid": uid, **handler(request)}
        return 200, json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                "response": response}).encode()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    review = json.loads(self.rfile.read(length))
                except ValueError:
                    review = {}
                path = self.path.split("?")[0]
                with server._lock:
                    server.reviews.append({"path": self.path, "review": review})
                status, body = server._answer(path, review)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler


class _QuietServer(ThreadingHTTPServer):
    """A client refusing the certificate is not printed."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass
