"""Request semantics of the REST layer: refuse before writing, DeleteOptions bodies, dryRun
on every write path, huge grace periods, watch parameters and abandoned watches, health paths.

Expected answers come from Kubernetes 1.33's sources (k8s.io/apiserver v0.33.9
``endpoints/handlers/{create,update,patch,delete,get,rest}.go``, ``endpoints/handlers/
negotiation``, ``storage/cacher``, ``storage/api_object_versioner.go``,
``server/healthz/healthz.go``, ``util/notfoundhandler``; k8s.io/apimachinery v0.33.9
``runtime/serializer/json``, ``runtime/conversion.go``, ``apis/meta/internalversion``).
Every refused request must leave the store exactly as it was.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit

import pytest

from fakekube import Cluster
from tests.integration.support import snapshot

pytestmark = pytest.mark.fakekube(nodes=3)

NS = "/api/v1/namespaces/default"
CM = f"{NS}/configmaps"
PODS = f"{NS}/pods"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
JSON = "application/json"
MERGE = "application/merge-patch+json"
META_SCHEME = "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme/register.go:27"
INT64_MAX = 2 ** 63 - 1


def request(cluster: Cluster, method: str, path: str, body: Any = None, content_type: str | None = JSON,
            accept: str | None = JSON) -> tuple[int, Any, http.client.HTTPResponse]:
    """One raw HTTP request: (status, decoded JSON or text, the response)."""
    url = urlsplit(cluster.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    headers = {}
    if accept is not None:
        headers["Accept"] = accept
    if content_type is not None and body is not None:
        headers["Content-Type"] = content_type
    raw = body if body is None or isinstance(body, bytes) else json.dumps(body).encode()
    try:
        connection.request(method, path, body=raw, headers=headers)
        response = connection.getresponse()
        data = response.read()
        try:
            return response.status, json.loads(data), response
        except ValueError:
            return response.status, data.decode(), response
    finally:
        connection.close()


def assert_status(answer: Any, code: int, reason: str, message: str = "") -> None:
    assert isinstance(answer, dict), answer
    assert (answer.get("kind"), answer.get("apiVersion"), answer.get("status")) == ("Status", "v1", "Failure"), answer
    assert (answer.get("code"), answer.get("reason", "")) == (code, reason), answer
    assert message in answer.get("message", ""), answer


def configmap(name: str, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, **extra}


def pod(name: str, node: str = "", grace_s: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx:1.27"}]}
    if node:
        spec["nodeName"] = node
    if grace_s is not None:
        spec["terminationGracePeriodSeconds"] = grace_s
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def deployment(name: str) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}}


@pytest.fixture
def seeded(fakekube: Cluster) -> Cluster:
    fakekube.create(configmap("cm", data={"k": "v"}))
    unbound = pod("unbound")
    unbound["spec"]["schedulerName"] = "manual"  # no scheduler binds it: the test does
    fakekube.create(unbound)
    fakekube.create(pod("bound", node="ghost-node"))  # no kubelet acts on it
    fakekube.create(deployment("web"))
    fakekube.settle()
    return fakekube


# --- 2: the response type is negotiated before anything is written ----------------------------------------

WRITES = [
    pytest.param("POST", CM, configmap("new"), JSON, id="create"),
    pytest.param("PUT", f"{CM}/cm", configmap("cm", data={"k": "changed"}), JSON, id="update"),
    pytest.param("PATCH", f"{CM}/cm", {"data": {"k": "changed"}}, MERGE, id="patch"),
    pytest.param("DELETE", f"{CM}/cm", None, None, id="delete"),
    pytest.param("DELETE", CM, None, None, id="deletecollection"),
    pytest.param("PATCH", f"{DEPLOYMENTS}/web/status", {"status": {"replicas": 7}}, MERGE, id="status-patch"),
    pytest.param("PATCH", f"{DEPLOYMENTS}/web/scale", {"spec": {"replicas": 5}}, MERGE, id="scale-patch"),
    pytest.param("PUT", f"{DEPLOYMENTS}/web/scale",
                 {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "web"},
                  "spec": {"replicas": 5}}, JSON, id="scale-put"),
    pytest.param("POST", f"{PODS}/unbound/binding",
                 {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "unbound"},
                  "target": {"kind": "Node", "name": "node-1"}}, JSON, id="binding"),
    pytest.param("POST", f"{PODS}/bound/eviction",
                 {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "bound"}}, JSON, id="eviction"),
]


@pytest.mark.parametrize("accept", ["text/html", "garbage", "application/*", "application/vnd.kubernetes.protobuf"])
@pytest.mark.parametrize(("method", "path", "body", "content_type"), WRITES)
def test_a_write_the_client_cannot_read_is_refused_before_anything_is_written(
        seeded: Cluster, method: str, path: str, body: Any, content_type: str | None, accept: str) -> None:
    """go-restful's router refuses an Accept no route produces (kube-apiserver 1.36: its
    "Available representations" and ``"details":{}``); fakekube writes no protobuf, so its
    handler refuses that one, as upstream's refuses a representation it cannot write."""
    before = snapshot(seeded)
    status, answer, _ = request(seeded, method, path, body, content_type, accept=accept)
    assert status == 406
    if accept == "application/vnd.kubernetes.protobuf":
        assert_status(answer, 406, "NotAcceptable", "only the following media types are accepted: ")
    else:
        assert_status(answer, 406, "NotAcceptable", "406: Not Acceptable\n\nAvailable representations: "
                      "application/json, application/yaml, application/vnd.kubernetes.protobuf")
        assert answer["details"] == {}
    assert snapshot(seeded) == before


@pytest.mark.parametrize(("method", "path", "accept", "produces"), [
    ("GET", f"{CM}/cm", "application/xml", "application/json, application/yaml, application/vnd.kubernetes.protobuf"),
    ("GET", CM, "text/html", "application/json, application/yaml, application/vnd.kubernetes.protobuf, "
     "application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"),
    ("GET", "/api/v1/watch/namespaces/default/configmaps", "application/xml",
     "application/json, application/yaml, application/vnd.kubernetes.protobuf, "
     "application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"),
    ("GET", f"{PODS}/bound/log", "text/html",
     "text/plain, application/json, application/yaml, application/vnd.kubernetes.protobuf"),
    ("GET", "/api/v1", "application/xml", "application/json, application/yaml, application/vnd.kubernetes.protobuf"),
    ("GET", "/version", "application/xml", "application/json"),
])
def test_an_accept_no_route_produces_is_the_router_s_406(seeded: Cluster, method: str, path: str, accept: str,
                                                          produces: str) -> None:
    status, answer, _ = request(seeded, method, path, accept=accept)
    assert_status(answer, 406, "NotAcceptable", f"406: Not Acceptable\n\nAvailable representations: {produces}")
    assert answer["message"].endswith(produces) and answer["details"] == {}
    # A media type the route produces, with parameters its handler does not know: the handler's 406.
    status, answer, _ = request(seeded, "GET", f"{CM}/cm", accept="application/json;as=Table;v=v9;g=meta.k8s.io")
    assert_status(answer, 406, "NotAcceptable", "only the following media types are accepted: ")
    assert "details" not in answer


@pytest.mark.parametrize("content_type", ["application/json", "application/foo", None])
def test_a_built_in_patch_in_no_patch_type_is_the_router_s_415(seeded: Cluster, content_type: str | None) -> None:
    """go-restful checks what the PATCH route consumes before the Accept header and whatever
    the body (kube-apiserver 1.36: ``415: Unsupported Media Type``, ``"details":{}``)."""
    for path in (f"{CM}/cm", f"{DEPLOYMENTS}/web/status"):
        for body in (b'{"data":{"k":"x"}}', b""):
            status, answer, _ = request(seeded, "PATCH", path, body, content_type, accept="text/html")
            assert (status, answer["message"], answer["details"]) == (415, "415: Unsupported Media Type", {})
    assert snapshot(seeded) == snapshot(seeded)


# --- 4: a DELETE body is DeleteOptions, and dryRun holds everywhere ----------------------------------------

#: A DELETE body that does not decode: a 400 BadRequest from 1.35 (kubernetes#133358); before,
#: the decoder's plain error reached the client unconverted (a 500 without reason).
UNDECODABLE = [pytest.param("1.34", 500, "", id="1.34"), pytest.param("1.35", 400, "BadRequest", id="1.35"),
               pytest.param("1.36", 400, "BadRequest", id="1.36")]


@pytest.mark.parametrize(("version", "code", "reason"), UNDECODABLE)
def test_a_node_as_delete_body_deletes_no_node(version: str, code: int, reason: str) -> None:
    """delete.go decodes the body with the meta scheme: a Node is not registered there."""
    with Cluster(nodes=1, kubernetes_version=version) as seeded:
        seeded.create(configmap("cm", data={"k": "v"}))
        node = seeded.get("v1", "Node", "node-1", namespace="")
        before = snapshot(seeded)
        status, answer, _ = request(seeded, "DELETE", "/api/v1/nodes?dryRun=All", node)
        assert status == code
        assert_status(answer, code, reason, f'no kind "Node" is registered for version "v1" in scheme "{META_SCHEME}"')
        assert snapshot(seeded) == before
        status, answer, _ = request(seeded, "DELETE", f"{CM}/cm", configmap("cm"))
        assert_status(answer, code, reason, f'no kind "ConfigMap" is registered for version "v1" in scheme "{META_SCHEME}"')
        status, answer, _ = request(seeded, "DELETE", f"{CM}/cm", {"gracePeriodSeconds": "soon"})
        assert_status(answer, code, reason,
                      "json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64")
        assert snapshot(seeded) == before


@pytest.mark.parametrize(("version", "code", "reason"), UNDECODABLE)
def test_another_meta_kind_as_delete_body_is_an_unknown_conversion(version: str, code: int, reason: str) -> None:
    with Cluster(kubernetes_version=version) as seeded:
        seeded.create(configmap("cm", data={"k": "v"}))
        before = snapshot(seeded)
        body = {"apiVersion": "meta.k8s.io/v1", "kind": "ListOptions"}
        status, answer, _ = request(seeded, "DELETE", f"{CM}/cm", body)
        assert_status(answer, code, reason, "converting (v1.ListOptions) to (v1.DeleteOptions): unknown conversion")
        assert snapshot(seeded) == before


@pytest.mark.parametrize("body", [
    {"apiVersion": "meta.k8s.io/v1", "kind": "DeleteOptions", "dryRun": ["All"]},
    {"apiVersion": "v1", "kind": "DeleteOptions", "dryRun": ["All"]},  # per-group DeleteOptions (backwards compat)
    {"apiVersion": "apps/v1", "kind": "DeleteOptions", "dryRun": ["All"]},
    {"kind": "DeleteOptions", "dryRun": ["All"]},
    {"dryRun": ["All"]},
], ids=["meta-v1", "core-v1", "apps-v1", "no-version", "no-kind"])
def test_delete_options_bodies_of_any_version_are_read(seeded: Cluster, body: dict[str, Any]) -> None:
    before = snapshot(seeded)
    status, answer, _ = request(seeded, "DELETE", "/api/v1/nodes", body)
    assert status == 200, answer
    assert [item["metadata"]["name"] for item in answer["items"]] == ["node-1", "node-2", "node-3"]
    status, answer, _ = request(seeded, "DELETE", f"{CM}/cm", body)
    assert status == 200, answer
    assert snapshot(seeded) == before


DRY_RUN_WRITES = WRITES + [
    pytest.param("PUT", f"{DEPLOYMENTS}/web/status", None, JSON, id="status-put"),
    pytest.param("DELETE", f"{PODS}/bound", None, None, id="graceful-delete"),
    pytest.param("POST", f"{NS}/serviceaccounts/default/token",
                 {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}, JSON, id="token"),
]


@pytest.mark.parametrize(("method", "path", "body", "content_type"), DRY_RUN_WRITES)
def test_dry_run_writes_nothing_on_any_path(seeded: Cluster, method: str, path: str, body: Any,
                                            content_type: str | None) -> None:
    if body is None and path.endswith("/status"):
        body = dict(seeded.get("apps/v1", "Deployment", "web"), status={"replicas": 7})
    before = snapshot(seeded)
    status, answer, _ = request(seeded, method, f"{path}?dryRun=All", body, content_type)
    assert status < 300, answer
    assert snapshot(seeded) == before


def test_eviction_dry_run_in_its_delete_options_writes_nothing(seeded: Cluster) -> None:
    before = snapshot(seeded)
    body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "bound"},
            "deleteOptions": {"dryRun": ["All"]}}
    status, answer, _ = request(seeded, "POST", f"{PODS}/bound/eviction", body)
    assert status == 201, answer
    assert snapshot(seeded) == before


# --- 5: grace periods are int64 seconds with Go's time arithmetic ------------------------------------------

def go_deletion_timestamp(now: datetime, grace_s: int) -> str:
    """metav1.Now().Add(time.Second * time.Duration(grace)): the product wraps in int64 nanoseconds."""
    wrapped_ns = (grace_s * 10 ** 9 + 2 ** 63) % 2 ** 64 - 2 ** 63
    now_ns = int(now.timestamp()) * 10 ** 9 + now.microsecond * 1000
    seconds = (now_ns + wrapped_ns) // 10 ** 9
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.parametrize("where", ["query", "body", "spec"])
def test_a_grace_period_of_int64_max_is_accepted_like_upstream(seeded: Cluster, where: str) -> None:
    seeded.create(pod("huge", node="ghost-node", grace_s=INT64_MAX if where == "spec" else None))
    now = seeded.clock.now()
    path, body = f"{PODS}/huge", None
    if where == "query":
        path += f"?gracePeriodSeconds={INT64_MAX}"
    elif where == "body":
        body = {"gracePeriodSeconds": INT64_MAX}
    status, answer, _ = request(seeded, "DELETE", path, body)
    assert status == 200, answer
    meta = answer["metadata"]
    assert meta["deletionGracePeriodSeconds"] == INT64_MAX
    assert meta["deletionTimestamp"] == go_deletion_timestamp(now, INT64_MAX)


def test_a_grace_period_past_int64_is_refused(seeded: Cluster) -> None:
    before = snapshot(seeded)
    status, answer, _ = request(seeded, "DELETE", f"{PODS}/bound?gracePeriodSeconds={INT64_MAX + 1}")
    assert_status(answer, 400, "BadRequest",
                  f'strconv.ParseInt: parsing "{INT64_MAX + 1}": value out of range')
    assert snapshot(seeded) == before


def _deletion_changes(cluster: Cluster, resource: str, name: str, since: int) -> list[tuple[str, Any, Any]]:
    return [(c.type, c.obj["metadata"].get("deletionTimestamp"), c.obj["metadata"].get("deletionGracePeriodSeconds"))
            for c in cluster.store.changes_since(since) if c.resource == resource and c.name == name]


def test_a_pod_deleted_with_grace_0_is_marked_then_removed(seeded: Cluster) -> None:
    """Store.Delete writes a pod's deletion first even when its grace is 0 (kube-apiserver
    1.36: the answer and a watch's MODIFIED carry deletionTimestamp and grace 0, then
    DELETED); a second delete shortens a pending grace from the first one's start."""
    start = seeded.store.resource_version
    now = seeded.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")
    status, answer, _ = request(seeded, "DELETE", f"{PODS}/unbound")
    meta = answer["metadata"]
    assert (status, meta["deletionTimestamp"], meta["deletionGracePeriodSeconds"]) == (200, now, 0)
    assert _deletion_changes(seeded, "pods", "unbound", start) == [("MODIFIED", now, 0), ("DELETED", now, 0)]
    seeded.advance(5)
    start = seeded.store.resource_version
    first = request(seeded, "DELETE", f"{PODS}/bound")[1]["metadata"]
    assert first["deletionGracePeriodSeconds"] == 30 and first["deletionTimestamp"] == "2025-01-01T00:00:35Z"
    seeded.advance(2)
    assert request(seeded, "DELETE", f"{PODS}/bound?gracePeriodSeconds=10")[1]["metadata"]["deletionTimestamp"] == \
        "2025-01-01T00:00:15Z"  # the first delete's start, 10 s on: not now + 10
    assert request(seeded, "DELETE", f"{PODS}/bound?gracePeriodSeconds=20")[1]["metadata"]["deletionGracePeriodSeconds"] == 10
    status, answer, _ = request(seeded, "DELETE", f"{PODS}/bound?gracePeriodSeconds=0")
    assert (status, answer["metadata"]["deletionGracePeriodSeconds"]) == (200, 0)
    assert [change[0] for change in _deletion_changes(seeded, "pods", "bound", start)] == [
        "MODIFIED", "MODIFIED", "MODIFIED", "DELETED"]
    assert request(seeded, "GET", f"{PODS}/bound")[0] == 404


def test_an_object_held_by_finalizers_is_marked_with_a_new_generation(seeded: Cluster) -> None:
    """markAsDeleting: deletionTimestamp now, grace 0, and the generation one more (its
    controllers see the deletion); a second delete changes nothing."""
    body = deployment("held")
    body["metadata"]["finalizers"] = ["example.com/hold"]
    request(seeded, "POST", DEPLOYMENTS, body)
    generation = request(seeded, "GET", f"{DEPLOYMENTS}/held")[1]["metadata"]["generation"]
    meta = request(seeded, "DELETE", f"{DEPLOYMENTS}/held")[1]["metadata"]
    assert (meta["deletionGracePeriodSeconds"], meta["generation"]) == (0, generation + 1)
    seeded.advance(3)
    again = request(seeded, "DELETE", f"{DEPLOYMENTS}/held")[1]["metadata"]
    assert (again["deletionTimestamp"], again["generation"]) == (meta["deletionTimestamp"], generation + 1)


@pytest.mark.parametrize(("path", "body", "kind"), [
    (f"{NS}/serviceaccounts", {"metadata": {"name": "gone"}}, "ServiceAccount"),
    (f"{NS}/resourcequotas", {"metadata": {"name": "gone"}, "spec": {"hard": {"pods": "1"}}}, "ResourceQuota"),
    ("/apis/storage.k8s.io/v1/storageclasses", {"metadata": {"name": "gone"}, "provisioner": "example.com/p"},
     "StorageClass"),
    (CM, {"metadata": {"name": "gone"}}, "Status"),
])
def test_kinds_whose_registry_returns_the_deleted_object(seeded: Cluster, path: str, body: Any, kind: str) -> None:
    """ReturnDeletedObject: these registries answer a DELETE with the object as it was
    (kube-apiserver 1.36); the rest with a Success Status."""
    assert request(seeded, "POST", path, body)[0] == 201
    status, answer, _ = request(seeded, "DELETE", f"{path}/gone")
    assert (status, answer["kind"]) == (200, kind)
    if kind != "Status":
        assert answer["metadata"]["name"] == "gone" and answer["apiVersion"] in ("v1", "storage.k8s.io/v1")


# --- 6: watch parameters are checked before the stream starts ----------------------------------------------

def test_a_watch_with_a_malformed_resource_version_is_answered_before_streaming(seeded: Cluster) -> None:
    """The cacher's versioner refuses it with a storage.InvalidError that no layer converts:
    upstream answers 500 without a reason (kubernetes/kubernetes#139485), as a whole Status."""
    for path in (f"{CM}?watch=true&resourceVersion=abc", f"/api/v1/watch/namespaces/default/configmaps?resourceVersion=abc"):
        status, answer, response = request(seeded, "GET", path)
        assert status == 500
        assert response.getheader("Transfer-Encoding") is None
        assert_status(answer, 500, "",
                      'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax')
    assert not seeded._app.internal_errors


@pytest.mark.parametrize(("query", "code", "reason", "message"), [
    ("timeoutSeconds=abc", 400, "BadRequest", 'strconv.ParseInt: parsing "abc": invalid syntax'),
    ("timeoutSeconds=99999999999999999999", 400, "BadRequest",
     'strconv.ParseInt: parsing "99999999999999999999": value out of range'),
    ("limit=x", 400, "BadRequest", 'strconv.ParseInt: parsing "x": invalid syntax'),
    ("resourceVersionMatch=NotOlderThan&resourceVersion=1", 422, "Invalid",
     "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents "
     "is provided"),
    ("labelSelector=a%20in", 400, "BadRequest", ""),
])
def test_bad_watch_parameters_are_refused_before_streaming(seeded: Cluster, query: str, code: int, reason: str,
                                                           message: str) -> None:
    status, answer, response = request(seeded, "GET", f"{CM}?watch=true&{query}")
    assert status == code
    assert response.getheader("Transfer-Encoding") is None
    assert_status(answer, code, reason, message)


def test_watch_is_any_value_but_false_or_0_as_upstream_parses_it(seeded: Cluster) -> None:
    status, answer, _ = request(seeded, "GET", f"{CM}?watch=false")
    assert status == 200 and answer["kind"] == "ConfigMapList"
    status, answer, _ = request(seeded, "GET", f"{CM}?watch=yes&timeoutSeconds=abc")
    assert_status(answer, 400, "BadRequest", 'strconv.ParseInt: parsing "abc": invalid syntax')


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE", "FROB"])
@pytest.mark.parametrize("path", ["/api/v1/watch/namespaces/default/configmaps",
                                  "/api/v1/watch/namespaces/default/configmaps/cm",
                                  "/apis/apps/v1/watch/deployments"])
def test_legacy_watch_paths_serve_get_only(seeded: Cluster, method: str, path: str) -> None:
    before = snapshot(seeded)
    status, answer, _ = request(seeded, method, path, b"{}" if method != "DELETE" else None)
    assert status == 405
    assert_status(answer, 405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
    assert snapshot(seeded) == before


def _open_raw_watch(cluster: Cluster, path: str) -> socket.socket:
    url = urlsplit(cluster.url)
    sock = socket.create_connection((url.hostname, url.port), timeout=10)
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(4096)
        assert chunk, "the server closed a new watch"
        head += chunk
    assert head.startswith(b"HTTP/1.1 200"), head
    return sock


def _wait_until(condition: Any, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_abandoned_watches_free_their_slots_promptly(seeded: Cluster) -> None:
    app = seeded._app
    app.watch_check_interval_s = 0.1
    sockets = [_open_raw_watch(seeded, f"{CM}?watch=true") for _ in range(20)]
    assert _wait_until(lambda: app.watches_open == 20, 5)
    for sock in sockets:
        sock.close()
    assert _wait_until(lambda: app.watches_open == 0, 5), app.watches_open
    assert not app.internal_errors


def test_a_full_watch_table_frees_up_when_clients_leave(seeded: Cluster) -> None:
    app = seeded._app
    app.watch_check_interval_s = 0.1
    app.max_watches = 3
    sockets = [_open_raw_watch(seeded, f"{CM}?watch=true") for _ in range(3)]
    status, answer, _ = request(seeded, "GET", f"{CM}?watch=true&timeoutSeconds=1")
    assert_status(answer, 429, "TooManyRequests")
    for sock in sockets:
        sock.close()
    assert _wait_until(lambda: app.watches_open == 0, 5), app.watches_open
    _open_raw_watch(seeded, f"{CM}?watch=true").close()


def test_a_watch_stops_when_the_server_says_the_client_disconnected(seeded: Cluster) -> None:
    """Through the WSGI app: ``fakekube.disconnected`` is polled while the watch waits."""
    app = seeded._app
    app.watch_check_interval_s = 0.05
    gone = threading.Event()
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": CM, "QUERY_STRING": "watch=true", "SERVER_NAME": "x",
               "SERVER_PORT": "80", "wsgi.url_scheme": "http", "HTTP_ACCEPT": JSON,
               "fakekube.disconnected": gone.is_set}
    body = app(environ, lambda status, headers: None)
    chunks: list[bytes] = []
    reader = threading.Thread(target=lambda: chunks.extend(body), daemon=True)
    reader.start()
    assert _wait_until(lambda: app.watches_open == 1, 5)
    gone.set()
    reader.join(5)
    assert not reader.is_alive()
    getattr(body, "close", lambda: None)()
    assert app.watches_open == 0


# --- 11: health paths answer as upstream's healthz handlers and not-found handler ---------------------------

@pytest.mark.parametrize(("path", "code", "text"), [
    ("/healthz", 200, "ok"),
    ("/livez/ping", 200, "ok"),
    ("/readyz/etcd", 200, "ok"),
    ("/livez/bogus", 404, "404 page not found\n"),
    ("/healthz/..", 404, "404 page not found\n"),
    ("/healthz/", 404, "404 page not found\n"),
    ("/livez//", 404, "404 page not found\n"),
    ("/livez/ping/extra", 404, "404 page not found\n"),
])
def test_health_paths_answer_as_upstream(fakekube: Cluster, path: str, code: int, text: str) -> None:
    status, answer, response = request(fakekube, "GET", path)
    assert (status, answer) == (code, text)
    assert response.getheader("Content-Type") == "text/plain; charset=utf-8"
    assert response.getheader("X-Content-Type-Options") == "nosniff"


def test_version_is_a_get_route() -> None:
    with Cluster() as cluster:
        host, port = cluster.url.removeprefix("http://").rsplit(":", 1)
        for method, expected in (("GET", 200), ("POST", 405), ("DELETE", 405)):
            conn = http.client.HTTPConnection(host, int(port), timeout=10)
            conn.request(method, "/version")
            response = conn.getresponse()
            body = json.loads(response.read())
            assert response.status == expected
            if expected == 405:
                assert (body["kind"], body["reason"]) == ("Status", "MethodNotAllowed")
            conn.close()


# --- 12: paths no group serves, and the Status bodies of routing errors (kube-apiserver 1.36) ----------------

@pytest.mark.parametrize("path", ["/foo", "/apis/nope.example.com", "/apis/nope.example.com/v1/widgets",
                                  "/apis/nope.example.com/v1/namespaces/default/widgets/x"])
def test_a_path_outside_every_api_group_is_go_s_plain_not_found(fakekube: Cluster, path: str) -> None:
    status, answer, response = request(fakekube, "GET", path)
    assert (status, answer, response.getheader("Content-Type")) == (404, "404 page not found\n",
                                                                   "text/plain; charset=utf-8")


@pytest.mark.parametrize(("method", "path", "code", "reason"), [
    ("GET", "/apis/apps/v1/widgets", 404, "NotFound"),  # a served group: go-restful's Status
    ("GET", "/api/v2/pods", 404, "NotFound"),
    ("PUT", PODS, 405, "MethodNotAllowed"),
    ("DELETE", "/api/v1/componentstatuses/etcd-0", 405, "MethodNotAllowed"),
])
def test_routing_errors_carry_an_empty_details(fakekube: Cluster, method: str, path: str, code: int,
                                               reason: str) -> None:
    """``NewGenericServerResponse`` sets a details pointer with nothing in it: ``"details":{}``."""
    status, answer, _ = request(fakekube, method, path, {} if method == "PUT" else None)
    assert status == code and answer["reason"] == reason and answer["details"] == {}
    assert list(answer) == ["kind", "apiVersion", "metadata", "status", "message", "reason", "details", "code"]


def test_a_json_patch_that_does_not_apply_has_an_empty_details(seeded: Cluster) -> None:
    status, answer, _ = request(seeded, "PATCH", f"{CM}/cm", [{"op": "test", "path": "/data/k", "value": "other"}],
                                content_type="application/json-patch+json")
    assert (status, answer["message"], answer["details"]) == (
        422, "the server rejected our request due to an error in our request", {})


def test_a_json_patch_copy_from_a_missing_key_adds_null(seeded: Cluster) -> None:
    """json-patch v4 reads a missing key as a nil node: the copy adds null, which decodes as a
    string's Go zero value "" (kube-apiserver 1.36 answers 200 with ``copied: ""``)."""
    status, patched, _ = request(seeded, "PATCH", f"{CM}/cm",
                                 [{"op": "copy", "from": "/data/absent", "path": "/data/copied"},
                                  {"op": "test", "path": "/data/missing", "value": None}],
                                 content_type="application/json-patch+json")
    assert (status, patched["data"]) == (200, {"k": "v", "copied": ""})


# --- 13: resourceVersion preconditions of PUT and PATCH (upstream's Store.Update) ---------------------------

def test_resource_version_0_is_an_unconditional_update_where_the_kind_allows_it(seeded: Cluster) -> None:
    node = request(seeded, "GET", "/api/v1/nodes/node-1")[1]
    node["metadata"]["resourceVersion"] = "0"
    node["metadata"].setdefault("labels", {})["zero"] = "yes"
    status, updated, _ = request(seeded, "PUT", "/api/v1/nodes/node-1", node)
    assert status == 200 and updated["metadata"]["labels"]["zero"] == "yes"
    assert updated["metadata"]["resourceVersion"] not in ("0", node["metadata"]["resourceVersion"])
    status, _, _ = request(seeded, "PUT", f"{CM}/cm", configmap("cm", data={"k": "v2"},
                                                              metadata={"name": "cm", "resourceVersion": "00"}))
    assert status == 200
    # A resourceVersion that is not a number is a plain Go error.
    status, answer, _ = request(seeded, "PUT", f"{CM}/cm", configmap("cm", metadata={"name": "cm", "resourceVersion": "x1"}))
    assert_status(answer, 500, "", 'strconv.ParseUint: parsing "x1": invalid syntax')


def test_a_kind_that_refuses_unconditional_updates_needs_a_resource_version(seeded: Cluster) -> None:
    leases = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
    assert request(seeded, "POST", leases, {"metadata": {"name": "l"}, "spec": {"holderIdentity": "a"}})[0] == 201
    invalid = ('leases.coordination.k8s.io "l" is invalid: metadata.resourceVersion: Invalid value: 0: '
               'must be specified for an update')
    for meta in ({"name": "l"}, {"name": "l", "resourceVersion": "0"}):
        status, answer, _ = request(seeded, "PUT", f"{leases}/l", {"metadata": meta, "spec": {"holderIdentity": "b"}})
        assert_status(answer, 422, "Invalid", invalid)
        assert answer["details"]["kind"] == "leases" and answer["details"]["group"] == "coordination.k8s.io"
    status, answer, _ = request(seeded, "PATCH", f"{leases}/l", {"metadata": {"resourceVersion": "0"}},
                                content_type=MERGE)
    assert_status(answer, 422, "Invalid", invalid)
    # A Lease is created on update: "0" there means "none".
    status, _, _ = request(seeded, "PUT", f"{leases}/m", {"metadata": {"name": "m", "resourceVersion": "0"}})
    assert status == 201


# --- 14: request bodies in a media type no decoder reads (NegotiateInputSerializer) -------------------------

@pytest.mark.parametrize("content_type", ["text/plain", "text/plain; charset=utf-8", "*/*", "application/x-yaml",
                                          "text/yaml", ";"])
def test_a_body_in_a_media_type_the_server_does_not_decode_is_415(fakekube: Cluster, content_type: str) -> None:
    for method, path in (("POST", CM), ("PUT", f"{CM}/x")):
        status, answer, _ = request(fakekube, method, path, b'{"metadata":{"name":"x"}}', content_type=content_type)
        assert_status(answer, 415, "UnsupportedMediaType",
                      "the body of the request was in an unknown format - accepted media types include: "
                      "application/json, application/yaml, application/vnd.kubernetes.protobuf")
    assert request(fakekube, "POST", CM, b'{"metadata":{"name":"x"}}', content_type="application/JSON;")[0] == 201


def test_finalizers_without_a_domain_are_refused_only_where_kubernetes_own_meta_rules_apply(fakekube: Cluster) -> None:
    """k8s.io/kubernetes' ObjectMeta wrapper refuses ``hold`` (no domain, not a standard name),
    by its index; coordination (a Lease) validates with apimachinery's rules alone and keeps it."""
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l", "finalizers": ["hold"]}}
    code, _, _ = request(fakekube, "POST", "/apis/coordination.k8s.io/v1/namespaces/default/leases", lease)
    assert code == 201
    revision = {"apiVersion": "apps/v1", "kind": "ControllerRevision", "revision": 1,
                "metadata": {"name": "r", "finalizers": ["orphan", "hold"]}}
    code, status, _ = request(fakekube, "POST", "/apis/apps/v1/namespaces/default/controllerrevisions", revision)
    assert code == 422
    assert [(c["field"], c["message"]) for c in status["details"]["causes"]] == [
        ("metadata.finalizers[1]", 'Invalid value: "hold": name is neither a standard finalizer name nor is it fully qualified')]
