"""The Priority admission plugin and the system PriorityClasses, as a 1.33 apiserver has them.

Expected answers come from ``plugin/pkg/admission/priority/admission.go`` (``admitPod``,
``establishPriority``, ``getDefaultPriority``) and ``pkg/apis/scheduling`` (the system classes):
a new pod's priority and preemption policy come from its class, or the ``globalDefault`` class
(whose name the pod then carries), else 0 and ``PreemptLowerPriority``; values a client sets
must equal the computed ones; a class that does not exist is a 403.
"""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

import pytest

from fakekube import Cluster
from fakekube.api.machinery.errors import ApiError
from fakekube.api.verbs.apiserver import WriteOptions
from tests.integration.support import snapshot

Obj = dict[str, Any]

SYSTEM_CLASSES = {
    "system-cluster-critical": {
        "value": 2000000000, "preemptionPolicy": "PreemptLowerPriority",
        "description": "Used for system critical pods that must run in the cluster, but can be moved to another "
                       "node if necessary.",
    },
    "system-node-critical": {
        "value": 2000001000, "preemptionPolicy": "PreemptLowerPriority",
        "description": "Used for system critical pods that must not be moved from their current node.",
    },
}


def pod(name: str = "p", namespace: str = "default", **spec: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}], **spec}}


def priority_class(name: str, value: int, **extra: Any) -> Obj:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, **extra}


def refusal(cluster: Cluster, obj: Obj) -> Obj:
    """The Status a create of ``obj`` is refused with; the store must be unchanged."""
    before = snapshot(cluster)
    with pytest.raises(ApiError) as refused:
        cluster.create(obj)
    assert snapshot(cluster) == before
    return refused.value.status()


def forbidden(name: str, why: str) -> Obj:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f'pods "{name}" is forbidden: {why}', "reason": "Forbidden",
            "details": {"name": name, "kind": "pods"}, "code": 403}


def priority_fields(created: Obj) -> tuple[Any, Any, Any]:
    spec = created["spec"]
    return spec.get("priorityClassName"), spec.get("priority"), spec.get("preemptionPolicy")


# -- bootstrap -------------------------------------------------------------------------------


def test_a_new_cluster_has_the_two_system_classes_as_kind_shows_them() -> None:
    cluster = Cluster()
    classes = cluster.list("scheduling.k8s.io/v1", "PriorityClass")
    assert [pc["metadata"]["name"] for pc in classes] == ["system-cluster-critical", "system-node-critical"]
    for pc in classes:
        assert {k: pc[k] for k in ("value", "preemptionPolicy", "description")} == SYSTEM_CLASSES[pc["metadata"]["name"]]
        assert "globalDefault" not in pc  # false, omitted on the wire
        assert set(pc["metadata"]) >= {"uid", "resourceVersion", "creationTimestamp"}
        assert pc["metadata"]["generation"] == 1  # upstream's strategy sets it on create
        assert "labels" not in pc["metadata"] and "annotations" not in pc["metadata"]


def test_a_priority_class_keeps_generation_1_across_updates() -> None:
    cluster = Cluster()
    created = cluster.create(priority_class("batch", 1000))
    assert created["metadata"]["generation"] == 1
    rt = cluster.resource("scheduling.k8s.io/v1", "PriorityClass")
    cluster.api.update(rt, "", "batch", dict(created, description="changed"))
    updated = cluster.get("scheduling.k8s.io/v1", "PriorityClass", "batch", "")
    assert (updated["description"], updated["metadata"]["generation"]) == ("changed", 1)


# -- resolution ------------------------------------------------------------------------------


def test_a_pod_naming_no_class_gets_priority_0_and_the_default_policy() -> None:
    created = Cluster().create(pod())
    assert priority_fields(created) == (None, 0, "PreemptLowerPriority")


def test_a_pod_gets_its_class_value_and_policy() -> None:
    cluster = Cluster()
    cluster.create(priority_class("batch", 1000, preemptionPolicy="Never"))
    assert priority_fields(cluster.create(pod(priorityClassName="batch"))) == ("batch", 1000, "Never")
    stored = cluster.get("v1", "Pod", "p")
    assert priority_fields(stored) == ("batch", 1000, "Never")


def test_a_class_without_a_policy_gives_preempt_lower_priority() -> None:
    cluster = Cluster()
    cluster.create(priority_class("high", 500))
    assert priority_fields(cluster.create(pod(priorityClassName="high"))) == ("high", 500, "PreemptLowerPriority")


def test_the_global_default_class_names_and_prioritises_pods_that_name_none() -> None:
    cluster = Cluster()
    cluster.create(priority_class("everyone", -10, globalDefault=True, preemptionPolicy="Never"))
    assert priority_fields(cluster.create(pod())) == ("everyone", -10, "Never")


def test_of_two_global_defaults_the_lowest_value_wins() -> None:
    cluster = Cluster()
    # Upstream refuses a second default at PriorityClass admission; a race can still leave two
    # (two apiservers each admitting one): the second is written past admission here.
    rt = cluster.resource("scheduling.k8s.io/v1", "PriorityClass")
    cluster.api.create(rt, "", priority_class("b-high", 7, globalDefault=True), WriteOptions())
    low = cluster.api.create(rt, "", priority_class("a-low", 3), WriteOptions()).obj
    with cluster.store.lock:
        cluster.api.write_internal(rt, dict(low, globalDefault=True))
    assert priority_fields(cluster.create(pod())) == ("a-low", 3, "PreemptLowerPriority")


def test_a_second_global_default_is_refused() -> None:
    # validatePriorityClass, measured on kube-apiserver 1.36: creating a second default, or
    # making another class the default, is a 403 naming the default there is.
    cluster = Cluster()
    cluster.create(priority_class("d1", 5, globalDefault=True))
    message = ('priorityclasses.scheduling.k8s.io "d2" is forbidden: PriorityClass d1 is already marked as '
               "default. Only one default can exist")
    with pytest.raises(ApiError) as refused:
        cluster.create(priority_class("d2", 5, globalDefault=True))
    assert (refused.value.code, refused.value.reason, refused.value.message) == (403, "Forbidden", message)
    plain = cluster.create(priority_class("d2", 5))
    with pytest.raises(ApiError, match="PriorityClass d1 is already marked as default"):
        cluster.api.update(rt_of(cluster), "", "d2", dict(plain, globalDefault=True), WriteOptions())
    current = cluster.get("scheduling.k8s.io/v1", "PriorityClass", "d1", namespace="")
    cluster.api.update(rt_of(cluster), "", "d1", dict(current, description="still the default"), WriteOptions())


@pytest.mark.parametrize("name", sorted(SYSTEM_CLASSES))
def test_a_system_class_cannot_be_deleted(name: str) -> None:
    # The PriorityClass storage's Delete, measured on kube-apiserver 1.36 (also with dryRun).
    cluster = Cluster()
    before = snapshot(cluster)
    with pytest.raises(ApiError) as refused:
        cluster.delete("scheduling.k8s.io/v1", "PriorityClass", name, namespace="")
    assert refused.value.status() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": f'priorityclasses.scheduling.k8s.io "{name}" is forbidden: this is a system priority class and '
                   "cannot be deleted",
        "reason": "Forbidden", "details": {"name": name, "group": "scheduling.k8s.io", "kind": "priorityclasses"},
        "code": 403}
    assert snapshot(cluster) == before
    cluster.create(priority_class("mine", 5))
    cluster.delete("scheduling.k8s.io/v1", "PriorityClass", "mine", namespace="")


def rt_of(cluster: Cluster) -> Any:
    return cluster.resource("scheduling.k8s.io/v1", "PriorityClass")


def test_system_classes_may_be_named_in_any_namespace() -> None:
    cluster = Cluster()
    created = cluster.create(pod(priorityClassName="system-node-critical"))
    assert priority_fields(created) == ("system-node-critical", 2000001000, "PreemptLowerPriority")
    created = cluster.create(pod("q", namespace="kube-system", priorityClassName="system-cluster-critical"))
    assert priority_fields(created) == ("system-cluster-critical", 2000000000, "PreemptLowerPriority")


def test_values_equal_to_the_computed_ones_are_accepted() -> None:
    cluster = Cluster()
    cluster.create(priority_class("batch", 1000, preemptionPolicy="Never"))
    created = cluster.create(pod(priorityClassName="batch", priority=1000, preemptionPolicy="Never"))
    assert priority_fields(created) == ("batch", 1000, "Never")
    assert priority_fields(cluster.create(pod("q", priority=0))) == (None, 0, "PreemptLowerPriority")


def test_generated_pods_and_dry_runs_are_admitted_too() -> None:
    cluster = Cluster()
    cluster.create(priority_class("batch", 1000))
    generated = pod(priorityClassName="batch")
    generated["metadata"] = {"generateName": "web-", "namespace": "default"}
    assert priority_fields(cluster.create(generated)) == ("batch", 1000, "PreemptLowerPriority")
    rt = cluster.resource("v1", "Pod")
    dry = cluster.api.create(rt, "default", pod("dry", priorityClassName="batch"), WriteOptions(dry_run=True)).obj
    assert priority_fields(dry) == ("batch", 1000, "PreemptLowerPriority")


# -- refusals --------------------------------------------------------------------------------


def test_an_unknown_class_is_a_403() -> None:
    cluster = Cluster()
    assert refusal(cluster, pod("x", priorityClassName="y")) == forbidden(
        "x", "no PriorityClass with name y was found")


def test_a_generated_pod_is_named_by_its_prefix_in_the_refusal() -> None:
    cluster = Cluster()
    generated = pod(priorityClassName="missing")
    generated["metadata"] = {"generateName": "web-", "namespace": "default"}
    assert refusal(cluster, generated) == forbidden("web-", "no PriorityClass with name missing was found")


def test_a_priority_other_than_the_class_value_is_a_403() -> None:
    cluster = Cluster()
    cluster.create(priority_class("batch", 1000))
    why = ("the integer value of priority (5) must not be provided in pod spec; priority admission controller "
           "computed 1000 from the given PriorityClass name")
    assert refusal(cluster, pod("x", priorityClassName="batch", priority=5)) == forbidden("x", why)
    why0 = ("the integer value of priority (5) must not be provided in pod spec; priority admission controller "
            "computed 0 from the given PriorityClass name")
    assert refusal(cluster, pod("x", priority=5)) == forbidden("x", why0)


def test_a_policy_other_than_the_class_policy_is_a_403() -> None:
    cluster = Cluster()
    cluster.create(priority_class("batch", 1000, preemptionPolicy="Never"))
    why = ("the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority "
           "admission controller computed Never from the given PriorityClass name")
    assert refusal(cluster, pod("x", priorityClassName="batch", preemptionPolicy="PreemptLowerPriority")) == \
        forbidden("x", why)


def test_the_refusal_on_the_wire_is_upstreams_status() -> None:
    cluster = Cluster().start()
    try:
        url = urlsplit(cluster.url)
        connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
        body = json.dumps(pod("x", priorityClassName="y")).encode()
        connection.request("POST", "/api/v1/namespaces/default/pods", body=body,
                           headers={"Content-Type": "application/json", "Accept": "application/json"})
        response = connection.getresponse()
        assert response.status == 403
        assert json.loads(response.read()) == forbidden("x", "no PriorityClass with name y was found")
        connection.close()
    finally:
        cluster.stop()


# -- updates ---------------------------------------------------------------------------------


def _update(cluster: Cluster, obj: Obj) -> Obj:
    rt = cluster.resource("v1", "Pod")
    return cluster.api.update(rt, "default", obj["metadata"]["name"], obj, WriteOptions()).obj


def test_an_update_cannot_change_priority_or_policy() -> None:
    cluster = Cluster()
    cluster.create(priority_class("batch", 1000))
    created = cluster.create(pod(priorityClassName="batch"))
    current = cluster.api.get(cluster.resource("v1", "Pod"), "default", created["metadata"]["name"])
    for field, value in (("priority", 7), ("preemptionPolicy", "Never"), ("priorityClassName", "other")):
        changed = json.loads(json.dumps(current))
        changed["spec"][field] = value
        before = snapshot(cluster)
        with pytest.raises(ApiError) as refused:
            _update(cluster, changed)
        assert (refused.value.code, refused.value.reason) == (422, "Invalid")
        assert "spec: Forbidden: pod updates may not change fields other than" in refused.value.message
        assert snapshot(cluster) == before


def test_an_update_leaving_them_out_keeps_them() -> None:
    cluster = Cluster()
    cluster.create(priority_class("batch", 1000, preemptionPolicy="Never"))
    created = cluster.create(pod(priorityClassName="batch"))
    current = json.loads(json.dumps(cluster.api.get(cluster.resource("v1", "Pod"), "default", created["metadata"]["name"])))
    current["metadata"]["labels"] = {"a": "b"}
    del current["spec"]["priority"], current["spec"]["preemptionPolicy"]
    updated = _update(cluster, current)
    assert updated["metadata"]["labels"] == {"a": "b"}
    assert priority_fields(updated) == ("batch", 1000, "Never")
