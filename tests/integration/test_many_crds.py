"""Many CRDs: a CRD change costs its own group, not every CRD. The documents that list
every type (``/openapi/v2``, ``/openapi/v3``, aggregated discovery) are assembled from
per-group-version pieces, so after a change only that CRD's group-version is described
again, the answers stay byte for byte what a from-scratch build gives, and building
them holds up no other request; the naming pass reads only the CRD's group."""

from __future__ import annotations

import hashlib
import http.client
import json
import threading
from typing import Any, Callable
from urllib.parse import urlsplit

import pytest

from fakekube import Cluster
from fakekube.api.http.app import shared_openapi
from fakekube.api.verbs import discovery, openapi, openapi_v2
from fakekube.controllers.apiextensions import establishing
from fakekube.api.verbs.openapi_custom import build_custom_document
from fakekube.api.wire import schema
from fakekube.api.wire.protobuf.openapiv2 import encode_document

Obj = dict[str, Any]
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
AGGREGATED = "application/json;g=apidiscovery.k8s.io;v={};as=APIGroupDiscoveryList"
#: How long the concurrent requests may take while the slow one is held (wall seconds).
ANSWER_TIMEOUT_S = 60.0


def small_crd(group: str, kind: str, versions: tuple[str, ...] = ("v1",), columns: int = 0) -> Obj:
    plural = kind.lower() + "s"
    spec_schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "size": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}}}}}
    served = [{"name": version, "served": True, "storage": i == 0, "schema": {"openAPIV3Schema": spec_schema},
               "subresources": {"status": {}},
               **({"additionalPrinterColumns": [{"name": f"Size{c}", "type": "integer", "jsonPath": ".spec.size"}
                                                for c in range(columns)]} if columns else {})}
              for i, version in enumerate(versions)]
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": "Namespaced", "versions": served,
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind}}}


def call(cluster: Cluster, method: str, path: str, body: Obj | None = None,
         accept: str = "application/json") -> tuple[int, bytes, dict[str, str]]:
    url = urlsplit(cluster.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=ANSWER_TIMEOUT_S)
    try:
        headers = {"Accept": accept, "Content-Type": "application/json"}
        connection.request(method, path, body=json.dumps(body).encode() if body is not None else None, headers=headers)
        response = connection.getresponse()
        return response.status, response.read(), dict(response.getheaders())
    finally:
        connection.close()


def create(cluster: Cluster, crd: Obj) -> None:
    code, data, _ = call(cluster, "POST", CRDS, crd)
    assert code == 201, data


def read_everything(cluster: Cluster) -> None:
    for path, accept in (("/openapi/v2", "application/json"), ("/openapi/v2", PROTOBUF), ("/openapi/v3", "application/json"),
                         ("/apis", AGGREGATED.format("v2")), ("/api", AGGREGATED.format("v2"))):
        assert call(cluster, "GET", path, accept=accept)[0] == 200


class Counter:
    """Counts the calls of a module's function (wrapped in place)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> None:
        self.calls = 0
        original: Callable[..., Any] = getattr(module, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)


@pytest.mark.parametrize("group", ["new.example.com", "shared.example.com"])
def test_a_crd_change_describes_only_its_own_types_again(fakekube: Cluster, monkeypatch: pytest.MonkeyPatch,
                                                         group: str) -> None:
    """A new CRD, in a group of its own or in a group of ten: its own v3 paths, v2
    operations and the aggregated discovery of its group are built, nothing else."""
    for i in range(10):
        create(fakekube, small_crd(f"g{i}.example.com", f"Widget{i}"))
        create(fakekube, small_crd("shared.example.com", f"Gadget{i}"))
    read_everything(fakekube)
    resources = Counter(monkeypatch, openapi, "_resource_paths")  # a v3 document's paths, per type
    operations = Counter(monkeypatch, openapi_v2, "_operation")  # a v2 operation converted
    groups = Counter(monkeypatch, discovery, "_discovery_group")  # a group's aggregated discovery
    create(fakekube, small_crd(group, "Sprocket"))
    read_everything(fakekube)
    _, data, _ = call(fakekube, "GET", f"/openapi/v3/apis/{group}/v1")
    new_operations = sum(1 for path, item in json.loads(data)["paths"].items() if "sprockets" in path
                         for key in item if key in openapi_v2._METHODS)
    if group == "new.example.com":
        new_operations += 1  # the group-version's own GET of its resource list
    assert (resources.calls, operations.calls, groups.calls) == (1, new_operations, 1)


def test_a_crd_create_reads_only_its_group_once(fakekube: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    """Names conflict only within a group: the naming pass reads the group's CRDs, and the
    re-check of the group its accepted names trigger skips the CRDs whose names are all
    accepted (upstream's sync does), so a create in a group of many costs one pass."""
    for i in range(10):
        create(fakekube, small_crd(f"g{i}.example.com", f"Widget{i}"))
        create(fakekube, small_crd("shared.example.com", f"Gadget{i}"))
    read: list[int] = []
    names_in_use = establishing.names_in_use
    monkeypatch.setattr(establishing, "names_in_use", lambda crds, group: read.append(len(list(crds)))
                        or names_in_use(crds, group))
    create(fakekube, small_crd("shared.example.com", "Sprocket"))
    assert read == [11]  # the ten Gadgets and the Sprocket, once


def test_served_documents_equal_from_scratch_builds(fakekube: Cluster) -> None:
    steps: list[Callable[[], object]] = [
        lambda: create(fakekube, small_crd("a.example.com", "Widget")),
        lambda: create(fakekube, small_crd("shared.example.com", "One")),
        lambda: create(fakekube, small_crd("shared.example.com", "Two", versions=("v1", "v2beta1"))),
        lambda: call(fakekube, "PUT", f"{CRDS}/twos.shared.example.com",
                     dict(small_crd("shared.example.com", "Two", columns=2),
                          metadata=json.loads(call(fakekube, "GET", f"{CRDS}/twos.shared.example.com")[1])["metadata"])),
        lambda: create(fakekube, dict(small_crd("networking.k8s.io", "Policy"), metadata={
            "name": "policys.networking.k8s.io", "annotations": {"api-approved.kubernetes.io": "https://k8s.io/1"}})),
        lambda: call(fakekube, "DELETE", f"{CRDS}/widgets.a.example.com"),
        lambda: call(fakekube, "DELETE", f"{CRDS}/ones.shared.example.com"),
    ]
    for index, step in enumerate(steps):
        step()
        fakekube.settle()
        if index % 2:  # the protobuf form first, half the time: its pieces are made on first use
            assert call(fakekube, "GET", "/openapi/v2", accept=PROTOBUF)[0] == 200
        assert_like_from_scratch(fakekube)


def assert_like_from_scratch(cluster: Cluster) -> None:
    registry = cluster.api.registry  # unchanged while the test reads: nothing writes
    _, index, _ = call(cluster, "GET", "/openapi/v3")
    documents = []
    custom = set()
    for path, entry in json.loads(index)["paths"].items():
        _, data, _ = call(cluster, "GET", entry["serverRelativeURL"])
        documents.append((path, data))
        group_version = path.split("/")[1:]
        if path.startswith("apis/") and len(group_version) == 2 and \
                any(rt.custom is not None for rt in registry.in_group_version(*group_version)):
            custom.add(path)
            version = cluster.api.kubernetes_version
            scratch = build_custom_document(registry, schema.load(version), *group_version, version)
            assert data == openapi.encode(scratch), path
    # /openapi/v2 is made of the built-in documents' v2 sources (DeleteOptions' whole kind list)
    built_in = shared_openapi(registry, cluster.api.kubernetes_version)
    sources = [(path, data if path in custom else built_in.v2_source(path) or b"") for path, data in documents]
    wanted_json, wanted_protobuf, wanted_etag = openapi_v2.served(
        openapi_v2.swagger([json.loads(data) for _, data in sorted(sources)], cluster.api.kubernetes_version))
    _, served_json, headers = call(cluster, "GET", "/openapi/v2")
    _, served_protobuf, pb_headers = call(cluster, "GET", "/openapi/v2", accept=PROTOBUF)
    assert served_json == wanted_json
    assert served_protobuf == wanted_protobuf == encode_document(json.loads(served_json))
    assert headers["ETag"] == pb_headers["ETag"] == f'"{wanted_etag}"' == \
        '"' + hashlib.sha512(served_json).hexdigest().upper() + '"'
    for path, core in (("/apis", False), ("/api", True)):
        for version in discovery.AGGREGATED_VERSIONS:
            _, body, _ = call(cluster, "GET", path, accept=AGGREGATED.format(version))
            scratch = json.dumps(discovery.aggregated_discovery(registry, core, version), separators=(",", ":"))
            assert body == scratch.encode()


def test_requests_are_answered_while_the_document_is_built(fakekube: Cluster,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The first ``/openapi/v2`` after a change is held in the middle of its build: a
    ConfigMap GET and another client's ``/openapi/v2`` are answered meanwhile."""
    create(fakekube, small_crd("held.example.com", "Held"))
    fakekube.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"a": "b"}})
    holding, release = threading.Event(), threading.Event()
    held_thread: list[int] = []
    convert = openapi_v2.v2_schema

    def held(schema_: Any) -> Any:
        if not held_thread:
            held_thread.append(threading.get_ident())
        if held_thread[0] == threading.get_ident() and not release.is_set():
            holding.set()
            release.wait(ANSWER_TIMEOUT_S)
        return convert(schema_)

    monkeypatch.setattr(openapi_v2, "v2_schema", held)
    answers: dict[str, int] = {}
    slow = threading.Thread(target=lambda: answers.setdefault("slow", call(fakekube, "GET", "/openapi/v2")[0]))
    slow.start()
    try:
        assert holding.wait(ANSWER_TIMEOUT_S), "the build never started"
        others = [threading.Thread(target=lambda: answers.setdefault(
                      "configmap", call(fakekube, "GET", "/api/v1/namespaces/default/configmaps/cm")[0])),
                  threading.Thread(target=lambda: answers.setdefault("v2", call(fakekube, "GET", "/openapi/v2")[0]))]
        for thread in others:
            thread.start()
        for thread in others:
            thread.join(ANSWER_TIMEOUT_S)
        answered_while_held = dict(answers)
    finally:
        release.set()
        slow.join(ANSWER_TIMEOUT_S)
    assert answered_while_held == {"configmap": 200, "v2": 200}
    assert answers["slow"] == 200
