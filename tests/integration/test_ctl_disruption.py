"""The disruption controller and the pods/eviction subresource, at exact virtual times.

Pods of a ReplicaSet are Running and Ready 1 s after they are created (the default
behaviour); a PodDisruptionBudget's status follows at the same instant. Evictions go
through HTTP, so the answers are the Status bodies and headers a client sees.
"""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

import pytest

from fakekube import Cluster
from fakekube.kubelet.behaviour import BEHAVIOUR_ANNOTATION
from tests.integration.timeline import at

Obj = dict[str, Any]
PODS = "/api/v1/namespaces/default/pods"
PDBS = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"
REFUSED = "Cannot evict pod as it would violate the pod's disruption budget."

pytestmark = pytest.mark.fakekube(nodes=2)


# -- helpers ---------------------------------------------------------------------------------

def call(cluster: Cluster, method: str, path: str, body: Any = None,
         content_type: str = "application/json") -> tuple[int, Any, dict[str, str]]:
    """One HTTP request: (status, decoded JSON, headers)."""
    url = urlsplit(cluster.url)
    connection = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=30)
    try:
        connection.request(method, path, body=None if body is None else json.dumps(body).encode(),
                           headers={"Content-Type": content_type, "Accept": "application/json"})
        response = connection.getresponse()
        return response.status, json.loads(response.read()), dict(response.headers)
    finally:
        connection.close()


def evict(cluster: Cluster, name: str, api_version: str = "policy/v1", query: str = "",
          delete_options: Obj | None = None) -> tuple[int, Any, dict[str, str]]:
    body: Obj = {"apiVersion": api_version, "kind": "Eviction", "metadata": {"name": name, "namespace": "default"}}
    if delete_options is not None:
        body["deleteOptions"] = delete_options
    return call(cluster, "POST", f"{PODS}/{name}/eviction{query}", body)


def replicaset(name: str, replicas: int, app: str | None = None, **template_meta: Any) -> Obj:
    labels = {"app": app or name}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels, **template_meta},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def budget(name: str, app: str, **spec: Any) -> Obj:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": app}}, **spec}}


def pod(name: str, app: str, node: str = "node-1", behaviour: Obj | None = None, owner: Obj | None = None,
        **spec: Any) -> Obj:
    meta: Obj = {"name": name, "namespace": "default", "labels": {"app": app}}
    if behaviour is not None:
        meta["annotations"] = {BEHAVIOUR_ANNOTATION: json.dumps(behaviour)}
    if owner is not None:
        meta["ownerReferences"] = [owner]
    containers = spec.pop("containers", [{"name": "c", "image": "nginx"}])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"nodeName": node, "containers": containers, **spec}}


def unready(name: str, app: str) -> Obj:
    """A pod that runs but never passes its readiness probe."""
    probe = {"exec": {"command": ["true"]}, "periodSeconds": 10}
    return pod(name, app, behaviour={"ready_after_s": 100000},
               containers=[{"name": "c", "image": "nginx", "readinessProbe": probe}])


def owner(obj: Obj) -> Obj:
    meta = obj["metadata"]
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": meta["name"], "uid": meta["uid"],
            "controller": True, "blockOwnerDeletion": True}


def status(cluster: Cluster, name: str) -> Obj:
    return cluster.get("policy/v1", "PodDisruptionBudget", name)["status"]


def numbers(cluster: Cluster, name: str) -> tuple[int, int, int, int]:
    """(currentHealthy, desiredHealthy, expectedPods, disruptionsAllowed)."""
    s = status(cluster, name)
    return s["currentHealthy"], s["desiredHealthy"], s["expectedPods"], s["disruptionsAllowed"]


def allowed_condition(cluster: Cluster, name: str) -> tuple[str, str, str, str]:
    [cond] = [c for c in status(cluster, name).get("conditions", []) if c["type"] == "DisruptionAllowed"]
    return cond["status"], cond["reason"], cond["message"], cond["lastTransitionTime"][11:19]


def pod_names(cluster: Cluster, app: str) -> list[str]:
    return [p["metadata"]["name"] for p in cluster.list("v1", "Pod", "default", label_selector=f"app={app}")]


def events(cluster: Cluster, reason: str) -> list[tuple[str, str, str, str]]:
    return [(e["involvedObject"]["kind"], e["involvedObject"]["name"], e["type"], e["message"])
            for e in cluster.events("default") if e["reason"] == reason]


# -- status ----------------------------------------------------------------------------------

def test_status_follows_the_pods_from_creation_to_ready(fakekube: Cluster) -> None:
    fakekube.create(replicaset("web", 3))
    fakekube.create(budget("web", "web", minAvailable=2))
    s = status(fakekube, "web")
    assert s == {"observedGeneration": 1, "disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 2,
                 "expectedPods": 3, "conditions": [
                     {"type": "DisruptionAllowed", "status": "False", "observedGeneration": 1,
                      "lastTransitionTime": "2025-01-01T00:00:00Z", "reason": "InsufficientPods", "message": ""}]}
    at(fakekube, 0.999)
    assert numbers(fakekube, "web") == (0, 2, 3, 0)
    at(fakekube, 1)  # the pods turn Ready, and the budget sees it at that instant
    assert numbers(fakekube, "web") == (3, 2, 3, 1)
    assert allowed_condition(fakekube, "web") == ("True", "SufficientPods", "", "00:00:01")


@pytest.mark.parametrize(("spec", "expected"), [
    ({"minAvailable": 2}, (3, 2, 3, 1)),
    ({"minAvailable": "50%"}, (3, 2, 3, 1)),     # 1.5 rounds up
    ({"minAvailable": "100%"}, (3, 3, 3, 0)),
    ({"maxUnavailable": 1}, (3, 2, 3, 1)),
    ({"maxUnavailable": "34%"}, (3, 1, 3, 2)),   # 1.02 unavailable rounds up to 2
    ({"maxUnavailable": "0%"}, (3, 3, 3, 0)),
    ({"maxUnavailable": 5}, (3, 0, 3, 3)),       # desiredHealthy never below 0
])
def test_int_and_percent_budgets(fakekube: Cluster, spec: Obj, expected: tuple[int, int, int, int]) -> None:
    fakekube.create(replicaset("web", 3))
    fakekube.create(budget("web", "web", **spec))
    at(fakekube, 1)
    assert numbers(fakekube, "web") == expected


def test_expected_pods_come_from_the_controllers_scale_not_the_pod_count(fakekube: Cluster) -> None:
    fakekube.create(replicaset("web", 4, app="web"))
    fakekube.create(budget("web", "web", maxUnavailable=1))
    at(fakekube, 1)
    assert numbers(fakekube, "web") == (4, 3, 4, 1)
    # A pod goes (a client deletes it): the ReplicaSet's scale still says 4 until its
    # replacement is Ready one second later.
    fakekube.delete("v1", "Pod", pod_names(fakekube, "web")[0])
    assert numbers(fakekube, "web") == (3, 3, 4, 0)
    at(fakekube, 2)
    assert numbers(fakekube, "web") == (4, 3, 4, 1)


#: Only the disruption controller acts on the workloads; node IPAM and the service accounts
#: (a pod needs its namespace's ``default`` account: ServiceAccount admission) run too.
INERT = ("disruption", "nodeipam", "serviceaccount")


@pytest.mark.fakekube(nodes=1, controllers=INERT)
def test_each_kind_of_controller_gives_its_scale(fakekube: Cluster) -> None:
    """Nothing but the disruption controller runs: the workloads are inert objects and the
    pods name them as their controllers; expectedPods is the sum of their scales."""
    deployment = fakekube.create({"apiVersion": "apps/v1", "kind": "Deployment",
                                  "metadata": {"name": "d", "namespace": "default"},
                                  "spec": {"replicas": 5, "selector": {"matchLabels": {"x": "d"}},
                                           "template": {"metadata": {"labels": {"x": "d"}},
                                                        "spec": {"containers": [{"name": "c", "image": "i"}]}}}})
    deployed_rs = replicaset("d-rs", 2, app="d-rs")
    deployed_rs["metadata"]["ownerReferences"] = [owner(deployment)]
    deployed_rs = fakekube.create(deployed_rs)
    lone_rs = fakekube.create(replicaset("lone", 3, app="lone"))
    sts = fakekube.create({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s", "namespace": "default"},
                           "spec": {"replicas": 7, "serviceName": "s", "selector": {"matchLabels": {"x": "s"}},
                                    "template": {"metadata": {"labels": {"x": "s"}},
                                                 "spec": {"containers": [{"name": "c", "image": "i"}]}}}})
    rc = fakekube.create({"apiVersion": "v1", "kind": "ReplicationController",
                          "metadata": {"name": "rc", "namespace": "default"},
                          "spec": {"replicas": 11, "selector": {"x": "rc"},
                                   "template": {"metadata": {"labels": {"x": "rc"}},
                                                "spec": {"containers": [{"name": "c", "image": "i"}]}}}})
    for index, controller in enumerate((deployed_rs, deployed_rs, lone_rs, sts, rc)):
        fakekube.create(pod(f"p{index}", "all", owner=owner(controller)))
    fakekube.create(budget("all", "all", maxUnavailable="10%"))
    at(fakekube, 1)
    # Deployment 5 (through its ReplicaSet, counted once) + ReplicaSet 3 + StatefulSet 7 + RC 11.
    assert numbers(fakekube, "all") == (5, 23, 26, 0)


@pytest.mark.fakekube(nodes=1, controllers=INERT)
def test_a_pod_whose_controller_has_no_scale_fails_the_sync_safely(fakekube: Cluster) -> None:
    job = fakekube.create({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
                           "spec": {"template": {"spec": {"restartPolicy": "Never",
                                                          "containers": [{"name": "c", "image": "i"}]}}}})
    fakekube.create(pod("worker", "batch", owner=owner(job)))
    fakekube.create(budget("batch", "batch", maxUnavailable=1))
    at(fakekube, 1)
    s = status(fakekube, "batch")
    assert s["disruptionsAllowed"] == 0 and "observedGeneration" not in s
    assert allowed_condition(fakekube, "batch") == ("False", "SyncFailed",
                                                    "jobs.batch does not implement the scale subresource", "00:00:00")
    assert events(fakekube, "CalculateExpectedPodCountFailed") == [
        ("PodDisruptionBudget", "batch", "Warning",
         "Failed to calculate the number of expected pods: jobs.batch does not implement the scale subresource")]
    # The eviction subresource refuses while the status lags the budget's generation.
    code, answer, headers = evict(fakekube, "worker")
    assert (code, answer["details"], headers.get("Retry-After")) == (429, {
        "causes": [{"reason": "DisruptionBudget",
                    "message": "The disruption budget batch is still being processed by the server."}],
        "retryAfterSeconds": 10}, "10")


@pytest.mark.fakekube(nodes=1, controllers=INERT)
def test_unmanaged_and_unknown_controllers(fakekube: Cluster) -> None:
    fakekube.create(pod("bare", "bare"))
    fakekube.create(budget("bare", "bare", maxUnavailable=1))
    fakekube.create(pod("odd", "odd", owner={"apiVersion": "example.com/v1", "kind": "Widget", "name": "w",
                                             "uid": "u-1", "controller": True}))
    fakekube.create(budget("odd", "odd", minAvailable="50%"))
    at(fakekube, 1)
    assert numbers(fakekube, "bare") == (1, 0, 0, 0)  # nothing expected: nothing may go
    assert events(fakekube, "UnmanagedPods")[0] == (
        "PodDisruptionBudget", "bare", "Warning",
        "Pods selected by this PodDisruptionBudget (selector: &LabelSelector{MatchLabels:map[string]string{app: bare,},"
        "MatchExpressions:[]LabelSelectorRequirement{},}) were found to be unmanaged. As a result, the status of the "
        "PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please "
        "set \".spec.minAvailable\" field of the PDB to an integer value.")
    assert allowed_condition(fakekube, "odd")[:3] == (
        "False", "SyncFailed", 'no matches for kind "Widget" in version "example.com/v1"')


def test_no_pods_and_several_budgets_are_reported(fakekube: Cluster) -> None:
    fakekube.create(budget("empty", "nothing", minAvailable=1))
    assert events(fakekube, "NoPods") == [("PodDisruptionBudget", "empty", "Normal", "No matching pods found")]
    fakekube.create(budget("a", "web", minAvailable=1))
    fakekube.create(budget("b", "web", maxUnavailable=1))
    fakekube.create(pod("p", "web"))
    assert events(fakekube, "MultiplePodDisruptionBudgets")[0] == (
        "Pod", "p", "Warning", 'Pod "default"/"p" matches multiple PodDisruptionBudgets.  Chose "a" arbitrarily.')
    at(fakekube, 1)
    code, answer, _ = evict(fakekube, "p")
    assert (code, answer) == (500, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                    "message": "This pod has more than one PodDisruptionBudget, which the eviction "
                                               "subresource does not support.", "code": 500})
    assert pod_names(fakekube, "web") == ["p"]


# -- eviction --------------------------------------------------------------------------------

def test_eviction_spends_the_budget_and_refuses_when_it_is_spent(fakekube: Cluster) -> None:
    fakekube.create(replicaset("web", 3))
    fakekube.create(budget("web", "web", maxUnavailable=1))
    at(fakekube, 5)
    first, second, _ = pod_names(fakekube, "web")
    rv = fakekube.store.resource_version
    code, answer, _ = evict(fakekube, first)
    assert (code, answer) == (201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                                    "code": 201})
    # In the request: the budget spends its disruption and records the pod, then the pod
    # is marked and deleted; the controller drops the entry once the pod is terminating.
    budget_writes = [c.obj["status"] for c in fakekube.store.changes_since(rv) if c.resource == "poddisruptionbudgets"]
    assert budget_writes[0]["disruptionsAllowed"] == 0
    assert budget_writes[0]["disruptedPods"] == {first: "2025-01-01T00:00:05Z"}
    assert budget_writes[0]["conditions"][0]["reason"] == "InsufficientPods"
    pod_writes = [c for c in fakekube.store.changes_since(rv) if c.resource == "pods" and c.name == first]
    target = [c for c in pod_writes[0].obj["status"]["conditions"] if c["type"] == "DisruptionTarget"]
    assert target == [{"type": "DisruptionTarget", "status": "True", "lastProbeTime": None,
                       "lastTransitionTime": "2025-01-01T00:00:05Z", "reason": "EvictionByEvictionAPI",
                       "message": "Eviction API: evicting"}]
    assert "disruptedPods" not in status(fakekube, "web")
    assert first not in pod_names(fakekube, "web")  # the default container stops at once

    code, answer, headers = evict(fakekube, second)
    assert (code, answer["reason"], answer["message"], answer["details"]) == (429, "TooManyRequests", REFUSED, {
        "causes": [{"reason": "DisruptionBudget",
                    "message": "The disruption budget web needs 2 healthy pods and has 2 currently"}]})
    assert "Retry-After" not in headers
    at(fakekube, 6)  # the ReplicaSet's replacement is Ready: the budget allows one again
    assert numbers(fakekube, "web") == (3, 2, 3, 1)
    assert evict(fakekube, second)[0] == 201


def test_a_disrupted_pod_that_is_never_deleted_counts_again_after_two_minutes(fakekube: Cluster) -> None:
    fakekube.create(replicaset("web", 3))
    fakekube.create(budget("web", "web", maxUnavailable=1))
    at(fakekube, 10)
    name = pod_names(fakekube, "web")[0]
    # What an eviction writes when its delete then never happens.
    patch = {"status": {"disruptionsAllowed": 0, "disruptedPods": {name: "2025-01-01T00:00:10Z"}}}
    assert call(fakekube, "PATCH", f"{PDBS}/web/status", patch, "application/merge-patch+json")[0] == 200
    assert numbers(fakekube, "web") == (2, 2, 3, 0)
    assert status(fakekube, "web")["disruptedPods"] == {name: "2025-01-01T00:00:10Z"}
    at(fakekube, 130)  # DeletionTimeout ends at 00:02:10; the recheck comes 5 ms after
    assert numbers(fakekube, "web") == (2, 2, 3, 0)
    at(fakekube, 130.005)
    assert numbers(fakekube, "web") == (3, 2, 3, 1)
    assert "disruptedPods" not in status(fakekube, "web")
    assert events(fakekube, "NotDeleted") == [
        ("Pod", name, "Warning", "Pod was expected by PDB default/default to be deleted but it wasn't")]


def test_unhealthy_pods_under_both_eviction_policies(fakekube: Cluster) -> None:
    fakekube.create(pod("ready", "web"))
    fakekube.create(unready("sick", "web"))
    fakekube.create(budget("web", "web", minAvailable=1))
    at(fakekube, 5)
    assert numbers(fakekube, "web") == (1, 1, 2, 0)
    # IfHealthyBudget (the default): the budget is met, so the unready pod may go, and the
    # budget is not spent.
    rv = fakekube.store.resource_version
    assert evict(fakekube, "sick")[0] == 201
    assert not [c for c in fakekube.store.changes_since(rv) if c.resource == "poddisruptionbudgets"
                and "disruptedPods" in c.obj["status"]]
    assert evict(fakekube, "ready")[0] == 429

    # Not met: an unready pod is guarded like a ready one ...
    fakekube.create(unready("sick-a", "db"))
    fakekube.create(unready("sick-b", "db"))
    fakekube.create(budget("db", "db", minAvailable=1))
    at(fakekube, 10)
    assert numbers(fakekube, "db") == (0, 1, 2, 0)
    code, answer, _ = evict(fakekube, "sick-a")
    assert (code, answer["details"]["causes"][0]["message"]) == (
        429, "The disruption budget db needs 1 healthy pods and has 0 currently")
    # ... unless the budget says AlwaysAllow.
    patch = {"spec": {"unhealthyPodEvictionPolicy": "AlwaysAllow"}}
    assert call(fakekube, "PATCH", f"{PDBS}/db", patch, "application/merge-patch+json")[0] == 200
    assert status(fakekube, "db")["observedGeneration"] == 2
    assert evict(fakekube, "sick-a")[0] == 201
    assert pod_names(fakekube, "db") == ["sick-b"]


def test_pending_and_finished_pods_are_evicted_whatever_the_budget(fakekube: Cluster) -> None:
    fakekube.create(pod("waiting", "web", node="", nodeSelector={"no": "such-node"}))
    fakekube.create(pod("done", "web", behaviour={"run_for_s": 1}, restartPolicy="Never"))
    fakekube.create(budget("web", "web", minAvailable="100%"))
    at(fakekube, 5)
    assert fakekube.get("v1", "Pod", "done")["status"]["phase"] == "Succeeded"
    assert numbers(fakekube, "web") == (0, 0, 0, 0)  # bare pods and a percentage: nothing expected
    assert evict(fakekube, "waiting")[0] == 201
    assert evict(fakekube, "done")[0] == 201
    assert pod_names(fakekube, "web") == []


def test_dry_run_and_v1beta1_evictions(fakekube: Cluster) -> None:
    fakekube.create(replicaset("web", 2))
    fakekube.create(budget("web", "web", minAvailable=1))
    at(fakekube, 2)
    first = pod_names(fakekube, "web")[0]
    before = fakekube.store.resource_version
    assert evict(fakekube, first, query="?dryRun=All")[0] == 201
    assert evict(fakekube, first, delete_options={"dryRun": ["All"]})[0] == 201
    assert fakekube.store.resource_version == before
    assert evict(fakekube, first, api_version="policy/v1beta1",
                 delete_options={"gracePeriodSeconds": 0})[0] == 201
    assert first not in pod_names(fakekube, "web")


def test_eviction_body_checks(fakekube: Cluster) -> None:
    fakekube.create(pod("p", "web"))
    code, answer, _ = call(fakekube, "POST", f"{PODS}/p/eviction",
                           {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "q"}})
    assert (code, answer["message"]) == (400, "name in URL does not match name in Eviction object")
    code, answer, _ = call(fakekube, "POST", f"{PODS}/p/eviction",
                           {"apiVersion": "apps/v1", "kind": "Eviction", "metadata": {"name": "p"}})
    assert (code, answer["message"]) == (
        400, "the API version in the data (apps/v1) does not match the expected API version (policy/v1)")
    code, answer, _ = evict(fakekube, "p", delete_options={"preconditions": {"uid": "other"}})
    assert (code, answer["reason"]) == (409, "Conflict")
    assert answer["message"].startswith('Operation cannot be fulfilled on Pod "p": the UID in the precondition (other)')
    assert evict(fakekube, "missing")[0] == 404


def test_a_disruption_target_nobody_acted_on_is_reset_after_two_minutes(fakekube: Cluster) -> None:
    fakekube.create(pod("p", "web"))
    at(fakekube, 10)
    condition = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
                 "message": "preempted", "lastTransitionTime": "2025-01-01T00:00:10Z"}
    current = fakekube.get("v1", "Pod", "p")
    patch = {"status": {"conditions": current["status"]["conditions"] + [condition]}}
    assert call(fakekube, "PATCH", f"{PODS}/p/status", patch, "application/merge-patch+json")[0] == 200

    def target() -> Obj:
        found = [c for c in fakekube.get("v1", "Pod", "p")["status"]["conditions"] if c["type"] == "DisruptionTarget"]
        return found[0]

    at(fakekube, 129.999)
    assert target()["status"] == "True"
    at(fakekube, 130)
    assert target() == {"type": "DisruptionTarget", "status": "False", "lastProbeTime": None,
                        "lastTransitionTime": "2025-01-01T00:02:10Z"}
