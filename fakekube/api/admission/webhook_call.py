"""One admission webhook call over HTTPS: where to connect, whom to trust, and the errors
worded as upstream's webhook client words them.

A webhook's ``clientConfig`` names a ``url`` (https only) or a ``service`` (namespace, name,
port, path). Upstream dials a service through its endpoints; fakekube has no pod network, so
the test says where a name lives: :attr:`WebhookTransport.addresses` maps the ``host:port``
the apiserver would dial (``hooks.default.svc:443``, or a URL's host and port) to the
address to connect to (``127.0.0.1:8443``). TLS is verified as upstream does: the
``caBundle`` (PEM) is the only trust root when given (else the system's), and the server's
certificate must name the host dialled (``<service>.<namespace>.svc`` for a service).

The call's timeout (``timeoutSeconds``; 30 s for a conversion webhook) is transport time:
a wall-clock deadline for the whole call — connect, TLS handshake, send, read — as
upstream's request context, so an answer dripped slowly is cut off at it, not at each read.
"""

from __future__ import annotations

from typing import Any, NamedTuple
from urllib.parse import urlsplit

Obj = dict[str, Any]

#: The largest webhook answer read; past it the call fails (upstream's limit on a response
#: body is the same order: 3 MiB of request plus headroom).
MAX_RESPONSE_BYTES = 10 * 1024 * 1024
CONTENT_TYPE = "application/json"


class CallFailed(Exception):
    """The webhook could not be called or answered unusably; ``str()`` is upstream's
    ``ErrCallingWebhook`` reason (after ``failed calling webhook "<name>": ``)."""


class Endpoint(NamedTuple):
    """Where a webhook is reached: the host name TLS verifies, the address dialled, the
    URL shown in errors (with upstream's ``?timeout=`` parameter)."""

    server_name: str
    port: int
    path: str
    connect_host: str
    connect_port: int

    def shown_url(self, timeout_s: int) -> str:
        return f"https://{join_host(self.server_name, self.port)}{self.path}?timeout={timeout_s}s"


def join_host(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class WebhookTransport:
    """Resolves and calls webhooks; :attr:`addresses` is the test's map of names to sockets."""

    __slots__ = ("addresses",)

    def __init__(self, addresses: dict[str, str] | None = None) -> None:
        #: ``"host:port"`` as dialled (``hooks.default.svc:443``) → ``"127.0.0.1:8443"``.
        self.addresses: dict[str, str] = {} if addresses is None else addresses

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
        dialled = join_host(host, port)
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
        from fakekube.api.admission.webhook_https import post  # http.client and ssl: on the first call only
        return post(endpoint, ca_bundle, body, timeout_s)
