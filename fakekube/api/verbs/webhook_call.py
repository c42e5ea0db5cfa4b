"""One admission webhook call over HTTPS: where to connect, whom to trust, and the errors
worded as upstream's webhook client words them.

A webhook's ``clientConfig`` names a ``url`` (https only) or a ``service`` (namespace, name,
port, path). Upstream dials a service through its endpoints; fakekube has no pod network, so
the test says where a name lives: :attr:`WebhookTransport.addresses` maps the ``host:port``
the apiserver would dial (``hooks.default.svc:443``, or a URL's host and port) to the
address to connect to (``127.0.0.1:8443``). TLS is verified as upstream does: the
``caBundle`` (PEM) is the only trust root when given (else the system's), and the server's
certificate must name the host dialled (``<service>.<namespace>.svc`` for a service).

The call's timeout (``timeoutSeconds``) is transport time: wall clock, on the connection.
"""

from __future__ import annotations

import base64
import errno
import http.client
import json
import socket
import ssl
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

Obj = dict[str, Any]

#: The largest webhook answer read; past it the call fails (upstream's limit on a response
#: body is the same order: 3 MiB of request plus headroom).
MAX_RESPONSE_BYTES = 10 * 1024 * 1024
CONTENT_TYPE = "application/json"


class CallFailed(Exception):
    """The webhook could not be called or answered unusably; ``str()`` is upstream's
    ``ErrCallingWebhook`` reason (after ``failed calling webhook "<name>": ``)."""


@dataclass(frozen=True)
class Endpoint:
    """Where a webhook is reached: the host name TLS verifies, the address dialled, the
    URL shown in errors (with upstream's ``?timeout=`` parameter)."""

    server_name: str
    port: int
    path: str
    connect_host: str
    connect_port: int

    def shown_url(self, timeout_s: int) -> str:
        return f"https://{_join_host(self.server_name, self.port)}{self.path}?timeout={timeout_s}s"


def _join_host(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


@dataclass
class WebhookTransport:
    """Resolves and calls webhooks; :attr:`addresses` is the test's map of names to sockets."""

    #: ``"host:port"`` as dialled (``hooks.default.svc:443``) → ``"127.0.0.1:8443"``.
    addresses: dict[str, str] = field(default_factory=dict)

    def endpoint(self, client_config: Obj, service_exists: bool | None = None) -> Endpoint:
        """The endpoint of a ``clientConfig``; :class:`CallFailed` when a service has no address."""
        service = client_config.get("service")
        if isinstance(service, dict):
            host = f"{service.get('name', '')}.{service.get('namespace', '')}.svc"
            port = int(service.get("port") or 443)
            path = service.get("path") or "/"
        else:
            parts = urlsplit(str(client_config.get("url") or ""))
            host, port = parts.hostname or "", parts.port or 443
            path = parts.path or "/"
        dialled = _join_host(host, port)
        target = self.addresses.get(dialled)
        if target is None:
            if isinstance(service, dict):
                shown = f"https://{dialled}{path}"
                why = (f'no endpoints available for service "{service.get("name", "")}"' if service_exists
                       else f'service "{service.get("name", "")}" not found')
                raise CallFailed(f'failed to call webhook: Post "{shown}": {why}')
            return Endpoint(host, port, path, host, port)
        connect_host, _, connect_port = target.rpartition(":")
        return Endpoint(host, port, path, connect_host.strip("[]"), int(connect_port))

    def post(self, endpoint: Endpoint, ca_bundle: str | None, body: Obj, timeout_s: int) -> Obj:
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
    address = _join_host(endpoint.connect_host, endpoint.connect_port)
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
