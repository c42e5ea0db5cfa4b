"""What the benchmarks serve and send: valid objects, the fixture data, the ceiling app.

Shared by ``bench_apiserver.py`` and ``profile_apiserver.py`` so both measure the same
requests against the same data.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable

from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request, Response

import measure
from fakekube import Cluster
from fakekube.api.verbs.apiserver import WriteOptions

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


def create_cost(api_version: str, kind: str, build: Callable[[int], Obj], count: int,
                **cluster_settings: Any) -> measure.Sample:
    """Wall and CPU seconds per create of ``count`` objects (``build(i)``) through the
    in-process API of a fresh started cluster, built untimed (``cluster_settings``: its
    config). What a benchmark switches off around it is its own business."""
    cluster = Cluster(**cluster_settings)
    cluster.start()
    try:
        rt = cluster.resource(api_version, kind)
        bodies = [build(i) for i in range(count)]
        options = WriteOptions(field_manager="bench")

        def create_all() -> None:
            for body in bodies:
                cluster.api.create(rt, "default", body, options)
        sample = measure.time_call(create_all)
    finally:
        cluster.stop()
    return measure.Sample(sample.wall_s / count, sample.cpu_s / count)
