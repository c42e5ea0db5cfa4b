"""What a simulated container answers over HTTP: a small behaviour model, as data.

A simulated container runs no server, so a request that reaches one of its ports — through
``kubectl port-forward``, the apiserver's pod or service ``proxy`` (``kubectl proxy``), an
HTTP preStop hook, or a ``curl``/``wget`` run inside another container of the cluster — is
answered from its behaviour:

* ``http`` routes declared in the behaviour (annotation, image rules, config), tried in
  order: each names an optional ``port``, an optional ``method``, a ``path`` glob (fnmatch,
  over the path without its query; default ``*``), and what it answers — ``status``
  (default 200), ``body``, ``headers`` and ``delay_s`` (how long the answer takes, in cluster
  time: an HTTP preStop hook takes that long);
* else what the image's own server answers, for the few images fakekube knows
  (:data:`IMAGE_SERVERS`: nginx's welcome page on ``/`` and its 404 page elsewhere, httpd's
  "It works!");
* else, on a port the container declares (``ports[].containerPort``), ``200 OK`` with an
  empty body; and a request no route of its port matches, when routes are declared for
  that port, is ``404 page not found`` (Go's ``http.NotFound``).

A port is listened on when a route names it, the container declares it, or the image's
server listens there; any other port refuses the connection (:func:`answer` returns None).
Only HTTP/1.x is answered. Pure: the same request, behaviour and instant give the same bytes.
"""

from __future__ import annotations

import fnmatch
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

from fakekube.kubelet.imageref import familiar_repository
from fakekube.record import FrozenRecord

#: The most a declared body may hold (UTF-8 bytes): answers are held whole in memory.
MAX_BODY_BYTES = 1024 * 1024
#: Declared routes per behaviour.
MAX_ROUTES = 256

#: Reason phrases of the status codes people declare (others: "Status").
REASONS = {200: "OK", 201: "Created", 202: "Accepted", 204: "No Content", 301: "Moved Permanently", 302: "Found",
           304: "Not Modified", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
           405: "Method Not Allowed", 409: "Conflict", 413: "Payload Too Large", 418: "I'm a teapot",
           429: "Too Many Requests", 431: "Request Header Fields Too Large", 500: "Internal Server Error",
           501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout"}


class HttpRoute(FrozenRecord):
    """One declared answer: for ``port`` (None: any port the container listens on), ``method``
    (None: any) and ``path`` (an fnmatch glob over the path, without the query)."""

    __slots__ = ("port", "method", "path", "status", "body", "headers", "delay_s")
    port: int | None
    method: str | None
    path: str
    status: int
    body: str
    headers: tuple[tuple[str, str], ...]
    delay_s: float

    def __init__(self, port: int | None = None, method: str | None = None, path: str = "*", status: int = 200,
                 body: str = "", headers: tuple[tuple[str, str], ...] = (), delay_s: float = 0.0) -> None:
        if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536):
            raise ValueError(f"port: must be a port number from 1 to 65535, got {port!r}")
        if method is not None and (not isinstance(method, str) or not method.isalpha()):
            raise ValueError(f"method: must be an HTTP method such as GET, got {method!r}")
        if not isinstance(path, str) or not path:
            raise ValueError(f"path: must be a non-empty glob such as /healthz or /api/*, got {path!r}")
        if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
            raise ValueError(f"status: must be an HTTP status code from 100 to 599, got {status!r}")
        if not isinstance(body, str) or len(body.encode("utf-8", "surrogatepass")) > MAX_BODY_BYTES:
            raise ValueError(f"body: must be a string of at most {MAX_BODY_BYTES} bytes")
        for header, text in headers:
            if not _is_token(header) or not isinstance(text, str) or "\r" in text or "\n" in text:
                raise ValueError(f"headers: {header!r}: {text!r} is not a valid header")
        if isinstance(delay_s, bool) or not isinstance(delay_s, (int, float)) or not 0 <= delay_s <= 86400 * 365:
            raise ValueError(f"delay_s: must be a number of seconds >= 0, got {delay_s!r}")
        values = (port, method.upper() if method else None, path, status, body, tuple(headers), float(delay_s))
        for slot, value in zip(self.__slots__, values):
            self._set(slot, value)

    def matches(self, port: int, method: str, path: str) -> bool:
        return ((self.port is None or self.port == port) and (self.method is None or self.method == method)
                and fnmatch.fnmatchcase(path, self.path))


def routes_from(raw: Any) -> tuple[HttpRoute, ...]:
    """Routes from a list of ``{port, method, path, status, body, headers, delay_s}`` mappings."""
    if isinstance(raw, (str, bytes, Mapping)) or not isinstance(raw, Iterable):
        raise ValueError("must be a list of {path, status, body, headers, port, method, delay_s} mappings")
    routes = []
    for index, item in enumerate(raw):
        if index >= MAX_ROUTES:
            raise ValueError(f"at most {MAX_ROUTES} routes")
        if not isinstance(item, Mapping):
            raise ValueError(f"[{index}]: must be a mapping such as {{path: /healthz, status: 200, body: ok}}")
        unknown = sorted(map(str, set(item) - set(HttpRoute.__slots__)))
        if unknown:
            raise ValueError(f"[{index}]: unknown field(s) {', '.join(unknown)}; known: {', '.join(HttpRoute.__slots__)}")
        headers = item.get("headers") or {}
        if not isinstance(headers, Mapping):
            raise ValueError(f"[{index}].headers: must be a mapping of header names to values")
        try:
            routes.append(HttpRoute(item.get("port"), item.get("method"), item.get("path", "*"),
                                    item.get("status", 200), item.get("body", ""),
                                    tuple((str(k), v) for k, v in headers.items()), item.get("delay_s", 0.0)))
        except ValueError as error:
            raise ValueError(f"[{index}].{error}") from None
    return tuple(routes)


class HttpRequest(NamedTuple):
    """A request as it reached the container (the target may carry a query)."""

    method: str
    target: str
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    version: str = "HTTP/1.1"

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0] or "/"


class HttpAnswer(NamedTuple):
    """What the container answers; ``delay_s``: cluster seconds before it does."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    delay_s: float = 0.0

    @property
    def reason(self) -> str:
        return REASONS.get(self.status, "Status")

    def render(self, request: HttpRequest, now: datetime, close: bool = False) -> bytes:
        """The response's bytes: status line, the headers (with ``Date`` at cluster time and
        ``Content-Length``), the body (none for HEAD, 204 and 304)."""
        lines = [f"HTTP/1.1 {self.status} {self.reason}"]
        names = {name.lower() for name, _ in self.headers}
        lines += [f"{name}: {value}" for name, value in self.headers]
        if "date" not in names:
            lines.append(f"Date: {http_date(now)}")
        bodiless = request.method == "HEAD" or self.status in (204, 304) or self.status < 200
        if "content-length" not in names and self.status not in (204, 304) and self.status >= 200:
            lines.append(f"Content-Length: {len(self.body)}")
        if close:
            lines.append("Connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace") + (b"" if bodiless else self.body)


def http_date(now: datetime) -> str:
    """RFC 9110's IMF-fixdate."""
    return now.astimezone(timezone.utc).strftime("%a, %d %b %Y %H:%M:%S GMT")


# -- images whose server fakekube knows ----------------------------------------------------

NGINX_VERSION = "1.29.1"
NGINX_INDEX = """<!DOCTYPE html>
<html>
<head>
<title>Welcome to nginx!</title>
<style>
html { color-scheme: light dark; }
body { width: 35em; margin: 0 auto;
font-family: Tahoma, Verdana, Arial, sans-serif; }
</style>
</head>
<body>
<h1>Welcome to nginx!</h1>
<p>If you see this page, the nginx web server is successfully installed and
working. Further configuration is required.</p>

<p>For online documentation and support please refer to
<a href="http://nginx.org/">nginx.org</a>.<br/>
Commercial support is available at
<a href="http://nginx.com/">nginx.com</a>.</p>

<p><em>Thank you for using nginx.</em></p>
</body>
</html>
"""
HTTPD_INDEX = "<html><body><h1>It works!</h1></body></html>\n"


class ImageServer(NamedTuple):
    """An image's own HTTP server: its port, and its answer for a path."""

    port: int
    name: str


#: Images whose own server is known, by repository (docker.io names short).
IMAGE_SERVERS: Mapping[str, ImageServer] = {"nginx": ImageServer(80, "nginx"), "httpd": ImageServer(80, "httpd")}


def _nginx(image: str, request: HttpRequest) -> HttpAnswer:
    tag = image.rsplit(":", 1)[-1] if ":" in image.rsplit("/", 1)[-1] else ""
    version = tag.split("-", 1)[0] if tag.count(".") == 2 and tag.split("-", 1)[0].replace(".", "").isdigit() \
        else NGINX_VERSION
    server = ("Server", f"nginx/{version}")
    if request.method not in ("GET", "HEAD"):
        return _nginx_error(405, "Not Allowed", server)
    if request.path in ("/", "/index.html"):
        return HttpAnswer(200, (server, ("Content-Type", "text/html"), ("Last-Modified", "Tue, 13 Aug 2024 15:09:11 GMT"),
                                ("Connection", "keep-alive"), ("ETag", '"66bb7a47-267"'), ("Accept-Ranges", "bytes")),
                          NGINX_INDEX.encode())
    return _nginx_error(404, "Not Found", server)


def _nginx_error(status: int, text: str, server: tuple[str, str]) -> HttpAnswer:
    body = (f"<html>\r\n<head><title>{status} {text}</title></head>\r\n<body>\r\n"
            f"<center><h1>{status} {text}</h1></center>\r\n<hr><center>{server[1]}</center>\r\n</body>\r\n</html>\r\n")
    return HttpAnswer(status, (server, ("Content-Type", "text/html"), ("Connection", "keep-alive")), body.encode())


def _httpd(image: str, request: HttpRequest) -> HttpAnswer:
    server = ("Server", "Apache/2.4.65 (Unix)")
    if request.path in ("/", "/index.html"):
        return HttpAnswer(200, (server, ("Last-Modified", "Mon, 11 Jun 2007 18:53:14 GMT"), ("ETag", '"2d-432a5e4a73a80"'),
                                ("Accept-Ranges", "bytes"), ("Content-Type", "text/html")), HTTPD_INDEX.encode())
    body = ('<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">\n<html><head>\n<title>404 Not Found</title>\n'
            "</head><body>\n<h1>Not Found</h1>\n<p>The requested URL was not found on this server.</p>\n</body></html>\n")
    return HttpAnswer(404, (server, ("Content-Type", "text/html; charset=iso-8859-1")), body.encode())


_SERVER_ANSWERS = {"nginx": _nginx, "httpd": _httpd}


# -- the model ------------------------------------------------------------------------------

def listening_ports(routes: Sequence[HttpRoute], container: Mapping[str, Any], image: str,
                    own_program: bool = True) -> tuple[int, ...]:
    """The TCP ports the container listens on, in ascending order. ``own_program``: the
    container runs its image's program (a ``command`` replaces it, and its server)."""
    ports = {route.port for route in routes if route.port is not None}
    for declared in container.get("ports") or []:
        if isinstance(declared, Mapping) and isinstance(declared.get("containerPort"), int) \
                and (declared.get("protocol") or "TCP") == "TCP":
            ports.add(int(declared["containerPort"]))
    server = IMAGE_SERVERS.get(familiar_repository(image))
    if server is not None and own_program:
        ports.add(server.port)
    return tuple(sorted(ports))


def answer(routes: Sequence[HttpRoute], container: Mapping[str, Any], image: str, port: int,
           request: HttpRequest, own_program: bool = True) -> HttpAnswer | None:
    """The container's answer to ``request`` on ``port``; None: nothing listens there (the
    connection is refused)."""
    if port not in listening_ports(routes, container, image, own_program):
        return None
    applicable = [route for route in routes if route.port is None or route.port == port]
    for route in applicable:
        if route.matches(port, request.method, request.path):
            headers = route.headers
            if not any(name.lower() == "content-type" for name, _ in headers) and route.body:
                headers += (("Content-Type", "text/plain; charset=utf-8"),)
            return HttpAnswer(route.status, headers, route.body.encode(), route.delay_s)
    if applicable:
        return HttpAnswer(404, (("Content-Type", "text/plain; charset=utf-8"),
                                ("X-Content-Type-Options", "nosniff")), b"404 page not found\n")
    server = IMAGE_SERVERS.get(familiar_repository(image))
    if server is not None and own_program and port == server.port:
        return _SERVER_ANSWERS[server.name](image, request)
    return HttpAnswer(200, (), b"")


def _is_token(name: Any) -> bool:
    return isinstance(name, str) and bool(name) and all(c.isalnum() or c in "!#$%&'*+-.^_`|~" for c in name)
