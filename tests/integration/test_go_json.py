"""Built-in objects are stored and answered as their Go types write them, on every write path.

kube-apiserver decodes a body into the type's Go struct and stores that (as protobuf), so
what a client reads back follows each field's JSON tag: ``omitempty`` zero values are gone
(``spec.unschedulable: false`` after an uncordon, ``spec.taints: []``, ``data: {}``),
fields without it are written with Go's zero (``rules: null``, ``lastProbeTime: null``),
quantities and times are written canonically. Every expected body here is what
kube-apiserver 1.36 answered to the same requests (a reference run), unless a test says
1.33; fakekube/api/wire/gojson.py is the implementation.
"""

from __future__ import annotations

from typing import Any

import pytest

from fakekube import Cluster
from tests.integration.test_request_semantics import MERGE, request

Obj = dict[str, Any]
SMP = "application/strategic-merge-patch+json"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"

pytestmark = pytest.mark.fakekube(nodes=1, kubernetes_version="1.36")


def managed(obj: Obj) -> list[Obj]:
    return [entry["fieldsV1"] for entry in obj["metadata"].get("managedFields") or []]


def test_an_uncordoned_node_keeps_neither_unschedulable_nor_empty_taints(fakekube: Cluster) -> None:
    taint = {"key": "maintenance", "effect": "NoSchedule"}
    code, _, _ = request(fakekube, "PATCH", "/api/v1/nodes/node-1", {"spec": {"unschedulable": True, "taints": [taint]}},
                         content_type=SMP)
    assert code == 200
    code, node, _ = request(fakekube, "PATCH", "/api/v1/nodes/node-1",
                            {"spec": {"unschedulable": False, "taints": []}}, content_type=SMP)
    assert code == 200 and "unschedulable" not in node["spec"] and "taints" not in node["spec"]
    assert all("f:unschedulable" not in (fields.get("f:spec") or {}) for fields in managed(node))
    assert request(fakekube, "GET", "/api/v1/nodes/node-1")[1]["spec"] == node["spec"]


def test_zero_values_set_explicitly_are_stored_as_go_omits_them(fakekube: Cluster) -> None:
    code, configmap, _ = request(fakekube, "POST", "/api/v1/namespaces/default/configmaps",
                                 {"metadata": {"name": "empty"}, "data": {}, "binaryData": {}, "immutable": False})
    assert code == 201 and "data" not in configmap and "binaryData" not in configmap
    assert configmap["immutable"] is False  # a pointer keeps its explicit false
    deployment = {"metadata": {"name": "web"}, "spec": {
        "replicas": 0, "paused": False, "minReadySeconds": 0, "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
            "hostNetwork": False, "containers": [{"name": "c", "image": "nginx", "ports": [], "stdin": False}]}}}}
    code, created, _ = request(fakekube, "POST", DEPLOYMENTS, deployment)
    assert code == 201
    spec = created["spec"]
    assert spec["replicas"] == 0 and "paused" not in spec and "minReadySeconds" not in spec
    assert "hostNetwork" not in spec["template"]["spec"]
    assert {"ports", "stdin"}.isdisjoint(spec["template"]["spec"]["containers"][0])
    # The field manager reads the typed object too: nothing it does not hold is owned.
    fields = managed(created)[0]["f:spec"]
    assert "f:paused" not in fields and "f:hostNetwork" not in fields["f:template"]["f:spec"]
    assert "f:replicas" in fields
    fakekube.settle()
    current = request(fakekube, "GET", f"{DEPLOYMENTS}/web")[1]["metadata"]["resourceVersion"]
    code, patched, _ = request(fakekube, "PATCH", f"{DEPLOYMENTS}/web", {"spec": {"paused": False}}, content_type=MERGE)
    assert code == 200 and patched["metadata"]["resourceVersion"] == current  # a no-op: nothing written


def test_fields_go_always_writes_are_there_even_when_empty(fakekube: Cluster) -> None:
    code, role, _ = request(fakekube, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
                            {"metadata": {"name": "nothing"}, "rules": []})
    assert code == 201 and role["rules"] is None  # not omitempty, and storage keeps no empty list
    assert managed(role) == [{"f:rules": {}}]  # the decoded object still had it
    assert request(fakekube, "GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/nothing")[1]["rules"] is None
    # A controller's write too: the EndpointSlice of a Service that selects no pod.
    code, _, _ = request(fakekube, "POST", "/api/v1/namespaces/default/services",
                         {"metadata": {"name": "lonely"}, "spec": {"selector": {"app": "none"}, "ports": [{"port": 80}]}})
    assert code == 201
    fakekube.settle()
    slices = request(fakekube, "GET", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"
                                      "?labelSelector=kubernetes.io%2Fservice-name%3Dlonely")[1]["items"]
    assert [s["endpoints"] for s in slices] == [None]


def test_quantities_and_times_are_written_canonically(fakekube: Cluster) -> None:
    code, limits, _ = request(fakekube, "POST", "/api/v1/namespaces/default/limitranges", {
        "metadata": {"name": "limits"}, "spec": {"limits": [{"type": "Container", "max": {"cpu": "2000m", "memory": "1024Mi"}}]}})
    assert code == 201 and limits["spec"]["limits"][0]["max"] == {"cpu": "2", "memory": "1Gi"}
    code, event, _ = request(fakekube, "POST", "/api/v1/namespaces/default/events", {
        "metadata": {"name": "e"}, "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
        "reason": "R", "message": "m", "firstTimestamp": "2025-01-01T01:00:00+01:00"})
    assert code == 201 and event["firstTimestamp"] == "2025-01-01T00:00:00Z" and event["lastTimestamp"] is None


@pytest.mark.parametrize("version, template_meta", [
    ("1.33", {"labels": {"app": "web"}, "creationTimestamp": None}),  # ObjectMeta.creationTimestamp: omitempty only
    ("1.36", {"labels": {"app": "web"}}),  # omitzero since 1.34
])
def test_a_pod_templates_creation_timestamp_follows_the_release(version: str, template_meta: Obj) -> None:
    with Cluster(kubernetes_version=version) as cluster:
        deployment = cluster.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}}})
        assert deployment["spec"]["template"]["metadata"] == template_meta


def test_list_and_table_bodies_as_go_writes_them(fakekube: Cluster) -> None:
    """A Table row without its object writes the empty RawExtension (``"object": null``); a
    PartialObjectMetadataList of nothing has Go's nil items (``null``); a custom resource list
    is unstructured and always sets ``metadata.continue`` (``""``), which a Table's typed
    ListMeta leaves out."""
    table_accept = "application/json;as=Table;v=v1;g=meta.k8s.io"
    cms = "/api/v1/namespaces/default/configmaps"
    assert request(fakekube, "POST", cms, {"metadata": {"name": "one"}})[0] == 201
    rows = request(fakekube, "GET", f"{cms}?includeObject=None", accept=table_accept)[1]["rows"]
    assert rows and all("object" in row and row["object"] is None for row in rows)
    nothing = request(fakekube, "GET", f"{cms}?labelSelector=none%3Dx",
                      accept="application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io")[1]
    assert nothing["kind"] == "PartialObjectMetadataList" and nothing["items"] is None
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}
    assert request(fakekube, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)[0] == 201
    widgets = "/apis/example.com/v1/namespaces/default/widgets"
    assert request(fakekube, "POST", widgets, {"apiVersion": "example.com/v1", "kind": "Widget",
                                               "metadata": {"name": "w"}})[0] == 201
    assert request(fakekube, "GET", widgets)[1]["metadata"]["continue"] == ""
    assert "continue" not in request(fakekube, "GET", widgets, accept=table_accept)[1]["metadata"]


def test_a_daemonset_s_metadata_views_lack_its_template_generation_annotation(fakekube: Cluster) -> None:
    """The annotation is apps/v1's form of the internal ``spec.templateGeneration``: the
    DaemonSet carries it, but Table rows and PartialObjectMetadata, made from the internal
    object, do not (kube-apiserver 1.36 answers so)."""
    daemonsets = "/apis/apps/v1/namespaces/default/daemonsets"
    labels = {"app": "agent"}
    body = {"metadata": {"name": "agent", "annotations": {"team": "a"}},
            "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels},
                     "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    code, created, _ = request(fakekube, "POST", daemonsets, body)
    assert code == 201 and created["metadata"]["annotations"] == {
        "deprecated.daemonset.template.generation": "1", "team": "a"}
    rows = request(fakekube, "GET", daemonsets, accept="application/json;as=Table;v=v1;g=meta.k8s.io")[1]["rows"]
    assert [row["object"]["metadata"]["annotations"] for row in rows] == [{"team": "a"}]
    partial = request(fakekube, "GET", f"{daemonsets}/agent",
                      accept="application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io")[1]
    assert partial["metadata"]["annotations"] == {"team": "a"}


def test_the_managed_fields_entry_a_create_builds_is_already_in_go_stored_form(fakekube: Cluster) -> None:
    """A create's storage shaping skips the managedFields entry the create built (its
    strings all set, its time canonical): over every stored object of a cluster, created
    anew, the entry the field manager returns is what the full walk would leave, and the
    walk that skips it gives the same object."""
    from fakekube.api.machinery.jsonutil import deep_copy
    from fakekube.api.verbs import fieldmanager

    api = fakekube.api
    fakekube.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": "c", "namespace": "default", "labels": {"a": "b"}, "annotations": {"x": ""}}, "data": {"k": ""}})
    checked = 0
    for rt in api.registry:
        if rt.stored_as is not None or rt.custom is not None or "create" not in rt.verbs:
            continue
        for stored in api.store.list(rt.key, "")[0]:
            obj = deep_copy(stored)
            meta = obj["metadata"]
            for field in ("managedFields", "uid", "resourceVersion", "creationTimestamp", "generation"):
                meta.pop(field, None)
            obj = api._go_typed(rt, obj)
            for manager in ("kubectl-create", "unknown"):
                entries = fieldmanager.track_create(rt, obj, api.schemas, manager, api.now_rfc3339())
                if entries is None:
                    continue  # nothing owned (an object with a name only): no entry
                full = api._go_stored(rt, obj)
                assert full["metadata"]["managedFields"] == entries, rt.plural
                assert api._go_stored(rt, obj, {"metadata": {"managedFields": entries}}) == full, rt.plural
                checked += 1
    assert checked > 40, checked
