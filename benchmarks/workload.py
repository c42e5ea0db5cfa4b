"""What the benchmarks serve and send: valid objects, the fixture data, the ceiling app.

Shared by ``bench_apiserver.py`` and ``profile_apiserver.py`` so both measure the same
requests against the same data.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable

from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request, Response

from fakekube import Cluster

Obj = dict[str, Any]

#: Where GET and POST benchmarks read and write configmaps.
NAMESPACE = "bench"
#: Holds the pods that LIST reads (and nothing else).
PODS_NAMESPACE = "bench-pods"
#: Watchers stream this namespace; only the watch benchmark writes here.
WATCH_NAMESPACE = "bench-watch"
#: The one configmap the GET benchmark reads.
GET_NAME = "bench-get"

CONFIGMAPS_PATH = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
GET_PATH = f"{CONFIGMAPS_PATH}/{GET_NAME}"
LIST_PATH = f"/api/v1/namespaces/{PODS_NAMESPACE}/pods"
WATCH_CONFIGMAPS_PATH = f"/api/v1/namespaces/{WATCH_NAMESPACE}/configmaps"

JSON_HEADERS = {"Accept": "application/json", "Content-Type": "application/json"}


def configmap(name: str, namespace: str = NAMESPACE, data: dict[str, str] | None = None) -> Obj:
    """A small ConfigMap, about what a test writes."""
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace, "labels": {"app": "bench"}},
            "data": data if data is not None else {"key": "value", "other": "another value"}}


def configmap_body(name: str, namespace: str = NAMESPACE, data: dict[str, str] | None = None) -> bytes:
    return json.dumps(configmap(name, namespace, data), separators=(",", ":")).encode()


def pod(index: int, namespace: str = PODS_NAMESPACE) -> Obj:
    """A valid Pod with what a Deployment's pod template usually has (labels, ports, requests)."""
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": f"web-{index:05d}", "namespace": namespace,
                     "labels": {"app": "web", "tier": "frontend", "index": str(index)}},
        "spec": {"containers": [{
            "name": "web", "image": "nginx:1.27",
            "ports": [{"name": "http", "containerPort": 80}],
            "env": [{"name": "MODE", "value": "bench"}],
            "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}},
        }]},
    }


def prepare(cluster: Cluster, pods: int) -> None:
    """Create the namespaces, the configmap GET reads and ``pods`` pods for LIST (Python API)."""
    for name in (NAMESPACE, PODS_NAMESPACE, WATCH_NAMESPACE):
        cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    cluster.create(configmap(GET_NAME))
    for index in range(pods):
        cluster.create(pod(index))


def environ(method: str, path: str, body: bytes | None = None) -> dict[str, Any]:
    """A WSGI environ for one request, as werkzeug's server would build it."""
    return EnvironBuilder(path=path, method=method, data=body, headers=list(JSON_HEADERS.items()),
                          base_url="http://127.0.0.1:80").get_environ()


def call_wsgi(app: Callable[..., Iterable[bytes]], env: dict[str, Any]) -> str:
    """Call ``app`` the way a server does (consume and close the body); return the status."""
    status: list[str] = []

    def start_response(line: str, headers: list[tuple[str, str]], exc_info: object = None) -> Callable[[bytes], None]:
        status.append(line)
        return lambda data: None

    result = app(env, start_response)
    try:
        for _ in result:
            pass
    finally:
        close = getattr(result, "close", None)
        if close is not None:
            close()
    return status[0] if status else ""


HELLO_BODY = b"hello\n"
CREATED_BODY = b'{"kind":"Status","status":"Success"}\n'


@Request.application
def hello_app(request: Request) -> Response:
    """The ceiling: a bare werkzeug app that does no work beyond parsing and answering.

    POST reads the body (so the server does the same socket work as a real create) and
    answers 201 with a small JSON body; anything else answers "hello".
    """
    if request.method == "POST":
        request.get_data()
        return Response(CREATED_BODY, status=201, content_type="application/json")
    return Response(HELLO_BODY, content_type="text/plain; charset=utf-8")


class _KeepAliveHelloHandler(BaseHTTPRequestHandler):
    """The same answers as :func:`hello_app`, from a handler that keeps connections open."""

    protocol_version = "HTTP/1.1"   # keep-alive: the connection stays open between requests
    disable_nagle_algorithm = True  # headers and body leave in two writes: without this, 40 ms stalls

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._answer(200, HELLO_BODY, "text/plain; charset=utf-8")

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._answer(201, CREATED_BODY, "application/json")

    def _answer(self, code: int, body: bytes, content_type: str) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's name
        pass


class KeepAliveHelloServer:
    """Not this stack, for reference: stdlib ``http.server`` with real HTTP/1.1 keep-alive.

    werkzeug's development server answers every request with ``Connection: close``, so
    each request through BackgroundServer pays a TCP connect and a new thread. This shows
    what the same hello answers cost when the connection is kept.
    """

    def __init__(self, host: str = "127.0.0.1") -> None:
        self._server = ThreadingHTTPServer((host, 0), _KeepAliveHelloHandler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="bench-keepalive-hello", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}" if isinstance(host, str) else f"http://{host.decode()}:{port}"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
