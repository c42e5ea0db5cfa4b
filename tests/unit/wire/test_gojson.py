"""The Go JSON round trip (fakekube/api/wire/gojson.py): each built-in field by its Go tag.

The expected bodies are kube-apiserver 1.36's answers to the same objects (a reference
run: every case here was sent to it and its answer copied), except where a case says 1.33.
"""

from __future__ import annotations

import copy

import pytest

from fakekube.api.wire import gojson

V136 = gojson.for_version("1.36")
V133 = gojson.for_version("1.33")


def message(group: str, kind: str, version: str = "v1") -> str:
    found = gojson.message_name(group, version, kind)
    assert found is not None
    return found


def test_omitempty_zero_values_are_not_written_and_pointers_keep_theirs() -> None:
    node = {"metadata": {"name": "n"}, "spec": {"unschedulable": False, "taints": [], "podCIDRs": [], "providerID": ""}}
    assert V136.stored(message("", "Node"), node)["spec"] == {}
    configmap = {"metadata": {"name": "c"}, "data": {}, "binaryData": {}, "immutable": False}
    assert V136.stored(message("", "ConfigMap"), configmap) == {"metadata": {"name": "c"}, "immutable": False}
    deployment = {"metadata": {"name": "d"}, "spec": {"replicas": 0, "paused": False, "minReadySeconds": 0}}
    assert V136.stored(message("apps", "Deployment"), deployment)["spec"] == {
        "replicas": 0, "selector": None, "template": {"metadata": {}, "spec": {"containers": None}}, "strategy": {}}


def test_fields_without_omitempty_and_struct_values_are_always_written() -> None:
    node = V136.stored(message("", "Node"), {"metadata": {"name": "n"}})
    assert node["status"] == {"daemonEndpoints": {"kubeletEndpoint": {"Port": 0}}, "nodeInfo": {
        "machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": "", "osImage": "",
        "containerRuntimeVersion": "", "kubeletVersion": "", "kubeProxyVersion": "", "operatingSystem": "",
        "architecture": ""}}
    status = {"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z"}]}
    pod = V136.stored(message("", "Pod"), {"metadata": {"name": "p"}, "status": status})
    assert pod["status"]["conditions"][0]["lastProbeTime"] is None


def test_storage_has_no_empty_list_where_go_writes_null() -> None:
    """A non-omitempty ``rules: []`` is answered as ``null`` (protobuf keeps no empty list),
    while the typed object the field manager reads still has it."""
    role = {"metadata": {"name": "r"}, "rules": []}
    assert V136.stored(message("rbac.authorization.k8s.io", "ClusterRole"), role)["rules"] is None
    assert V136.typed(message("rbac.authorization.k8s.io", "ClusterRole"), role)["rules"] == []
    assert V136.stored(message("rbac.authorization.k8s.io", "ClusterRole"), {"metadata": {"name": "r"}})["rules"] is None


def test_a_template_creation_timestamp_is_null_in_1_33_and_gone_from_1_34() -> None:
    """``omitzero`` came to ObjectMeta.creationTimestamp in 1.34 (apimachinery v0.34)."""
    deployment = {"metadata": {"name": "d", "creationTimestamp": "2025-01-01T00:00:00Z"},
                  "spec": {"template": {"metadata": {"labels": {"a": "b"}}}}}
    assert V133.stored(message("apps", "Deployment"), deployment)["spec"]["template"]["metadata"] == {
        "labels": {"a": "b"}, "creationTimestamp": None}
    assert V136.stored(message("apps", "Deployment"), deployment)["spec"]["template"]["metadata"] == {
        "labels": {"a": "b"}}


def test_quantities_and_times_are_written_canonically() -> None:
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "resources": {
        "limits": {"cpu": "1000m", "memory": "1024Mi"}, "requests": {"cpu": 0.5, "memory": 1000}}}],
        "overhead": {"cpu": "1n"}},
        "status": {"conditions": [{"type": "X", "status": "True", "lastTransitionTime": "2025-01-01T01:00:00+01:00"}]}}
    stored = V136.stored(message("", "Pod"), pod)
    assert stored["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "1", "memory": "1Gi"},
                                                            "requests": {"cpu": "500m", "memory": "1k"}}
    assert stored["spec"]["overhead"] == {"cpu": "1m"}  # a core ResourceList: rounded up to milli-units
    assert stored["status"]["conditions"][0]["lastTransitionTime"] == "2025-01-01T00:00:00Z"
    runtime_class = {"metadata": {"name": "r"}, "handler": "h", "overhead": {"podFixed": {"cpu": "1e-9"}}}
    assert V136.stored(message("node.k8s.io", "RuntimeClass"), runtime_class)["overhead"] == {"podFixed": {"cpu": "1e-9"}}
    lease = {"metadata": {"name": "l"}, "spec": {"renewTime": "2025-01-01T01:00:00.500000+01:00"}}
    assert V136.stored(message("coordination.k8s.io", "Lease"), lease)["spec"] == {
        "renewTime": "2025-01-01T00:00:00.500000Z"}


def test_a_crd_schema_is_walked_as_jsonschemaprops() -> None:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {}, "nullable": False,
                                                        "items": {"type": "string", "enum": []}}}}
    crd = {"metadata": {"name": "x"}, "spec": {"versions": [{"name": "v1", "served": True, "storage": True,
                                                            "schema": {"openAPIV3Schema": schema}}]}}
    stored = V136.stored(message("apiextensions.k8s.io", "CustomResourceDefinition"), crd)
    assert stored["spec"]["versions"][0]["schema"]["openAPIV3Schema"] == {
        "type": "object", "properties": {"spec": {"type": "object", "items": {"type": "string"}}}}


def test_a_field_older_releases_lack_is_never_added() -> None:
    """The table is 1.36's; 1.33's schema decides which always-written fields exist."""
    job = V133.stored(message("batch", "Job"), {"metadata": {"name": "j"}})
    assert set(job["spec"]["template"]) == {"metadata", "spec"}


@pytest.mark.parametrize("obj", [
    {"metadata": {"name": "n", "labels": {"a": "b"}}, "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}},
    {"metadata": {"name": "n"}, "spec": {"unschedulable": False}},
])
def test_the_round_trip_is_pure_and_settles_after_one_pass(obj: dict) -> None:
    before = copy.deepcopy(obj)
    once = V136.stored(message("", "Node"), obj)
    assert obj == before  # the input is never edited
    assert V136.stored(message("", "Node"), once) is once  # nothing left to change: the same object back


def test_keys_the_table_does_not_know_are_left_alone() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "b"}, "future": 0}
    assert V136.stored(message("", "ConfigMap"), obj) is obj
    assert gojson.message_name("example.com", "v1", "Widget") is None


def test_an_update_walks_only_what_differs_from_the_stored_version() -> None:
    stored = V136.stored(message("", "Pod"), {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]},
                                               "status": {"phase": "Pending"}})
    update = copy.deepcopy(stored)
    update["status"]["conditions"] = [{"type": "PodScheduled", "status": "False"}]
    with_like = V136.stored(message("", "Pod"), update, like=stored)
    assert with_like == V136.stored(message("", "Pod"), update)
    assert with_like["spec"] is update["spec"]  # equal to the stored spec: not walked, not copied
    assert with_like["status"]["conditions"][0]["lastProbeTime"] is None
