"""A webhook call's transport: HTTPS with upstream's trust rules and Go's error wording.

Kept apart from :mod:`fakekube.api.verbs.webhook_call` so that ``http.client`` and ``ssl``
(a fifth of a cold import) load when a cluster first calls a webhook, not at import.
"""

from __future__ import annotations

import base64
import errno
import http.client
import json
import socket
import ssl
import time
from typing import Any

from fakekube.api.verbs.webhook_call import MAX_RESPONSE_BYTES, CONTENT_TYPE, CallFailed, Endpoint, join_host

Obj = dict[str, Any]


def post(endpoint: Endpoint, ca_bundle: str | None, body: Obj, timeout_s: int) -> Obj:
    """POST an AdmissionReview and return the decoded answer (or raise :class:`CallFailed`)."""
    shown = endpoint.shown_url(timeout_s)
    deadline = time.monotonic() + timeout_s
    try:
        context = _tls_context(ca_bundle)
        connection = _Connection(endpoint, context, timeout_s)
        try:
            payload = json.dumps(body, separators=(",", ":")).encode()
            connection.request("POST", f"{endpoint.path}?timeout={timeout_s}s", payload,
                               {"Content-Type": CONTENT_TYPE, "Accept": CONTENT_TYPE})
            response = connection.getresponse()
            raw = response.read(MAX_RESPONSE_BYTES + 1)
        finally:
            connection.close()
    except CallFailed:
        raise
    except Exception as exc:  # transport errors: worded as Go's net/http
        expired = time.monotonic() >= deadline or isinstance(exc, (socket.timeout, TimeoutError))
        why = "context deadline exceeded" if expired else go_transport_error(exc, endpoint)
        raise CallFailed(f'failed to call webhook: Post "{shown}": {why}') from None
    if len(raw) > MAX_RESPONSE_BYTES:
        raise CallFailed(f"failed to call webhook: response body larger than {MAX_RESPONSE_BYTES} bytes")
    if not 200 <= response.status < 300:
        raise CallFailed(f"failed to call webhook: {_http_error(response.status, raw)}")
    try:
        answer = json.loads(raw)
    except ValueError as exc:
        raise CallFailed(f"failed to call webhook: {exc}") from None
    if not isinstance(answer, dict):
        raise CallFailed("failed to call webhook: the response is not a JSON object")
    return answer




class _Connection(http.client.HTTPSConnection):
    """HTTPS to ``connect_host:connect_port`` while verifying (and sending SNI and Host for)
    the name the apiserver would dial."""

    def __init__(self, endpoint: Endpoint, context: ssl.SSLContext, timeout_s: float) -> None:
        super().__init__(endpoint.server_name, endpoint.port, context=context, timeout=timeout_s)
        self._address = (endpoint.connect_host, endpoint.connect_port)
        self._tls = context

    def connect(self) -> None:
        sock = socket.create_connection(self._address, self.timeout)
        self.sock = self._tls.wrap_socket(sock, server_hostname=self.host)


def _tls_context(ca_bundle: str | None) -> ssl.SSLContext:
    """The caBundle (base64 of PEM in the API object) as the only trust root, or the system's."""
    if not ca_bundle:
        return ssl.create_default_context()
    try:
        pem = base64.b64decode(ca_bundle).decode("ascii")
        return ssl.create_default_context(cadata=pem)
    except (ValueError, ssl.SSLError, UnicodeDecodeError):
        raise CallFailed("failed to call webhook: x509: malformed certificate in caBundle") from None


def go_transport_error(exc: BaseException, endpoint: Endpoint) -> str:
    """Go's wording of a dial or TLS failure (what users grep for)."""
    address = join_host(endpoint.connect_host, endpoint.connect_port)
    if isinstance(exc, ssl.SSLCertVerificationError):
        if exc.verify_code == 62 or "match" in str(exc.verify_message or ""):  # hostname mismatch
            return f"tls: failed to verify certificate: x509: certificate is not valid for {endpoint.server_name}"
        return "tls: failed to verify certificate: x509: certificate signed by unknown authority"
    if isinstance(exc, ConnectionRefusedError) or getattr(exc, "errno", None) == errno.ECONNREFUSED:
        return f"dial tcp {address}: connect: connection refused"
    if isinstance(exc, socket.gaierror):
        return f"dial tcp: lookup {endpoint.connect_host}: no such host"
    if isinstance(exc, (ConnectionResetError, http.client.RemoteDisconnected)):
        return "EOF"
    return str(exc) or type(exc).__name__


def _http_error(code: int, raw: bytes) -> str:
    """client-go's error for a non-2xx answer that is not a Status."""
    if code == 404:
        return "the server could not find the requested resource"
    text = raw.decode("utf-8", "replace").strip()
    return f'an error on the server ("{text}") has prevented the request from succeeding'
