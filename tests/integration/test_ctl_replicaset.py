"""The ReplicaSet and ReplicationController controllers at exact virtual times (upstream 1.33).

Pods come from the template (generateName ``<name>-``, controller reference), slow-start
batches stop at the first failing batch and retry with the 5 ms-doubling back-off,
orphans are adopted and relabelled pods released, scale-down follows upstream's deletion
ranking, availableReplicas changes the instant a pod has been ready for more than
minReadySeconds, and pods evicted from a failed node are replaced at the eviction.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from fakekube import Cluster
from fakekube.api.admission import CREATE, Attributes, Chain, Handler
from fakekube.api.machinery import errors
from fakekube.kubelet.behaviour import BEHAVIOUR_ANNOTATION
from fakekube.objects.kinds import PODS
from tests.integration.timeline import at

Obj = dict[str, Any]
MERGE = "application/merge-patch+json"
START = datetime(2025, 1, 1, tzinfo=timezone.utc)


def replica_set(name: str = "web", replicas: int = 3, labels: Obj | None = None, **spec: Any) -> Obj:
    labels = labels or {"app": name}
    template_spec = spec.pop("template_spec", {"containers": [{"name": "c", "image": "nginx:1.27"}]})
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": template_spec}, **spec}}


def orphan(name: str, labels: Obj, behaviour: Obj | None = None, annotations: Obj | None = None,
           **spec: Any) -> Obj:
    meta: Obj = {"name": name, "namespace": "default", "labels": labels, "annotations": dict(annotations or {})}
    if behaviour is not None:
        meta["annotations"][BEHAVIOUR_ANNOTATION] = json.dumps(behaviour)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}], **spec}}


def pods(cluster: Cluster, active_only: bool = True) -> list[Obj]:
    found = cluster.list("v1", "Pod", "default")
    return [p for p in found if not (active_only and p["metadata"].get("deletionTimestamp"))]


def names(cluster: Cluster) -> list[str]:
    return sorted(p["metadata"]["name"] for p in pods(cluster))


def status(cluster: Cluster, name: str = "web") -> Obj:
    return cluster.get("apps/v1", "ReplicaSet", name)["status"]


def scale(cluster: Cluster, replicas: int, name: str = "web") -> None:
    cluster.api.patch(cluster.resource("apps/v1", "ReplicaSet"), "default", name, MERGE,
                      json.dumps({"spec": {"replicas": replicas}}).encode(), subresource="scale")
    cluster.settle()


def patch_pod(cluster: Cluster, name: str, patch: Obj) -> None:
    cluster.api.patch(cluster.resource("v1", "Pod"), "default", name, MERGE, json.dumps(patch).encode())
    cluster.settle()


def rs_events(cluster: Cluster, reason: str) -> list[tuple[str, int]]:
    return [(e["message"], e["count"]) for e in cluster.events("default", reason=reason)
            if e["involvedObject"]["kind"] in ("ReplicaSet", "ReplicationController")]


# -- creation ------------------------------------------------------------------------------

def test_pods_come_from_the_template_with_a_controller_reference() -> None:
    cluster = Cluster(nodes=3)
    created = cluster.create(replica_set(replicas=3, minReadySeconds=0))
    made = pods(cluster)
    assert len(made) == 3
    for pod in made:
        meta = pod["metadata"]
        assert meta["generateName"] == "web-" and len(meta["name"]) == len("web-") + 5
        assert meta["labels"] == {"app": "web"}
        assert meta["ownerReferences"] == [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                                            "uid": created["metadata"]["uid"], "controller": True,
                                            "blockOwnerDeletion": True}]
    assert sorted(m for m, _ in rs_events(cluster, "SuccessfulCreate")) == [f"Created pod: {n}" for n in names(cluster)]
    # terminatingReplicas (a pointer, so 0 is written): DeploymentReplicaSetTerminatingReplicas, on from 1.35
    assert status(cluster) == {"replicas": 3, "fullyLabeledReplicas": 3, "terminatingReplicas": 0, "observedGeneration": 1}
    at(cluster, 1)  # the default behaviour is Ready one second after binding
    assert status(cluster) == {"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 3,
                               "availableReplicas": 3, "terminatingReplicas": 0, "observedGeneration": 1}


def test_a_replication_controller_is_the_same_logic_over_a_map_selector() -> None:
    cluster = Cluster(nodes=2)
    created = cluster.create({
        "apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "old", "namespace": "default"},
        "spec": {"replicas": 2, "selector": {"app": "old"},
                 "template": {"metadata": {"labels": {"app": "old", "tier": "web"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}})
    made = pods(cluster)
    assert [p["metadata"]["ownerReferences"][0]["kind"] for p in made] == ["ReplicationController"] * 2
    assert {p["metadata"]["ownerReferences"][0]["apiVersion"] for p in made} == {"v1"}
    assert {p["metadata"]["ownerReferences"][0]["uid"] for p in made} == {created["metadata"]["uid"]}
    sources = {e["source"]["component"] for e in cluster.events("default", reason="SuccessfulCreate")}
    assert sources == {"replication-controller"}
    at(cluster, 1)
    assert cluster.get("v1", "ReplicationController", "old")["status"] == {
        "replicas": 2, "fullyLabeledReplicas": 2, "readyReplicas": 2, "availableReplicas": 2,
        "observedGeneration": 1}


# -- slow start and ReplicaFailure ------------------------------------------------------------

class PodQuota(Handler):
    """A test stand-in for ResourceQuota admission: at most ``limit`` pods in the namespace,
    refused with upstream's 403 text."""

    name = "PodQuota"
    operations = frozenset((CREATE,))

    def __init__(self, cluster: Cluster, limit: int) -> None:
        self.cluster = cluster
        self.limit = limit
        #: (seconds since the start, accepted) for every pod create.
        self.attempts: list[tuple[float, bool]] = []

    def admit(self, a: Attributes) -> None:
        if a.rt.key != PODS:
            return
        used = len(self.cluster.store.list(PODS, "default")[0])
        self.attempts.append((round((self.cluster.now - START).total_seconds(), 6), used < self.limit))
        if used >= self.limit:
            raise errors.forbidden_error("", "pods", "web-", f"exceeded quota: pods, requested: pods=1, "
                                         f"used: pods={used}, limited: pods={self.limit}")


QUOTA_MESSAGE = 'pods "web-" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=3, limited: pods=3'


def test_slow_start_stops_at_the_first_failing_batch_and_backs_off() -> None:
    cluster = Cluster(nodes=3)
    quota = PodQuota(cluster, 3)
    cluster.api.admission = Chain(cluster.api.admission.plugins + (quota,))
    cluster.create(replica_set(replicas=10))
    # Batches of 1 and 2 succeed (3 pods); the batch of 4 is made whole and fails.
    assert quota.attempts[:7] == [(0.0, True)] * 3 + [(0.0, False)] * 4
    assert len(pods(cluster)) == 3 and status(cluster)["replicas"] == 3
    [failure] = status(cluster)["conditions"]
    assert failure == {"type": "ReplicaFailure", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z",
                       "reason": "FailedCreate", "message": QUOTA_MESSAGE}
    at(cluster, 10)
    quota.limit = 100
    at(cluster, 16.484)
    # Every later sync tries one pod: the status write and the pods' binding and start at
    # 0 s wake it four more times, their Ready at 1 s twice; the retries back off from 5 ms
    # doubling per failure (the 8th waits 640 ms, the 11th 5.12 s, the 12th 10.24 s).
    retries = [(0.0, False)] * 4 + [(0.005, False), (0.165, False), (0.485, False), (1.0, False), (1.0, False),
                                     (1.125, False), (6.245, False)]
    assert quota.attempts[7:] == retries
    assert rs_events(cluster, "FailedCreate") == [(f"Error creating: {QUOTA_MESSAGE}", 4 + len(retries))]
    at(cluster, 16.485)
    assert quota.attempts[7 + len(retries):] == [(16.485, True)] * 7  # batches of 1, 2 and 4
    assert len(pods(cluster)) == 10 and "conditions" not in status(cluster)
    assert len(rs_events(cluster, "SuccessfulCreate")) == 10


def test_an_admission_refusal_is_reported_and_cleared_when_it_stops() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(replica_set(replicas=2, template_spec={
        "priorityClassName": "high", "containers": [{"name": "c", "image": "nginx:1.27"}]}))
    message = 'pods "web-" is forbidden: no PriorityClass with name high was found'
    assert pods(cluster) == []
    assert status(cluster)["conditions"][0]["message"] == message
    assert rs_events(cluster, "FailedCreate") == [(f"Error creating: {message}", 2)]
    cluster.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                    "metadata": {"name": "high"}, "value": 1000})
    at(cluster, 0.005)  # the next retry of the back-off
    assert len(pods(cluster)) == 2 and "conditions" not in status(cluster)


# -- adoption and release ------------------------------------------------------------------

def test_orphans_are_adopted_and_relabelled_pods_released_and_replaced() -> None:
    cluster = Cluster(nodes=2)
    cluster.create(orphan("stray", {"app": "web"}))
    created = cluster.create(replica_set(replicas=2))
    stray = cluster.get("v1", "Pod", "stray")
    assert stray["metadata"]["ownerReferences"][0]["uid"] == created["metadata"]["uid"]
    assert len(pods(cluster)) == 2  # the orphan counts: one pod created
    assert len(rs_events(cluster, "SuccessfulCreate")) == 1
    at(cluster, 100)
    patch_pod(cluster, "stray", {"metadata": {"labels": {"app": "debug"}}})
    assert "ownerReferences" not in cluster.get("v1", "Pod", "stray")["metadata"]
    assert len(pods(cluster)) == 3  # released, and replaced at once
    [replacement] = [p["metadata"]["name"] for p in pods(cluster)
                     if p["metadata"]["creationTimestamp"] == "2025-01-01T00:01:40Z"]
    assert status(cluster)["replicas"] == 2
    # Labelled back, it is adopted again: one pod too many, and the one ready for the
    # least time goes (49 s against 149 s on upstream's log2 scale).
    at(cluster, 150)
    patch_pod(cluster, "stray", {"metadata": {"labels": {"app": "web"}}})
    assert cluster.get("v1", "Pod", "stray")["metadata"]["ownerReferences"][0]["name"] == "web"
    assert len(pods(cluster)) == 2 and replacement not in names(cluster)
    assert rs_events(cluster, "SuccessfulDelete") == [(f"Deleted pod: {replacement}", 1)]
    assert status(cluster)["replicas"] == 2


def test_pods_of_another_controller_are_left_alone() -> None:
    cluster = Cluster(nodes=1)
    owner = cluster.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner",
                                                                                "namespace": "default"}})
    taken = orphan("taken", {"app": "web"})
    taken["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
                                             "uid": owner["metadata"]["uid"], "controller": True}]
    cluster.create(taken)
    cluster.create(replica_set(replicas=1))
    assert cluster.get("v1", "Pod", "taken")["metadata"]["ownerReferences"][0]["kind"] == "ConfigMap"
    assert len(pods(cluster)) == 2


# -- scale-down order ----------------------------------------------------------------------

def ranking_cluster() -> Cluster:
    """Seven orphans in every state the ranking tells apart, adopted by a 7-replica RS at 100 s."""
    cluster = Cluster(nodes=2)
    web = {"app": "web"}
    probe = {"readinessProbe": {"exec": {"command": ["true"]}, "periodSeconds": 10}}
    cluster.create(orphan("unassigned", web, nodeSelector={"disk": "none"}))
    cluster.create(orphan("pending", web, behaviour={"pull_delay_s": 10_000}))
    cluster.create(orphan("not-ready", web, behaviour={"ready_after_s": 100_000},
                          containers=[{"name": "c", "image": "nginx:1.27", **probe}]))
    cluster.create(orphan("crashing", web, behaviour={"run_for_s": 5, "exit_code": 1, "ready_after_s": 100_000},
                          containers=[{"name": "c", "image": "nginx:1.27", **probe}]))
    cluster.create(orphan("cheap", web, annotations={"controller.kubernetes.io/pod-deletion-cost": "-10"}))
    cluster.create(orphan("old", web))
    at(cluster, 100)
    cluster.create(orphan("young", web))
    cluster.create(replica_set(replicas=7))
    return cluster


def test_scale_down_follows_upstreams_deletion_ranking() -> None:
    cluster = ranking_cluster()
    at(cluster, 200)
    assert len(pods(cluster)) == 7
    crashing = cluster.get("v1", "Pod", "crashing")["status"]["containerStatuses"][0]
    assert crashing["restartCount"] > 0
    deleted = []
    for replicas in range(6, -1, -1):
        before = set(names(cluster))
        scale(cluster, replicas)
        [gone] = before - set(names(cluster))
        deleted.append(gone)
    # unbound < Pending < (not ready: more restarts first) < lower deletion cost
    # < ready for less time (log2 scale: 99 s vs 199 s) < the last one.
    assert deleted == ["unassigned", "pending", "crashing", "not-ready", "cheap", "young", "old"]
    assert [m for m, _ in rs_events(cluster, "SuccessfulDelete")] == [f"Deleted pod: {n}" for n in deleted]


def test_doubled_up_pods_go_first_when_the_replica_set_has_a_controller() -> None:
    cluster = Cluster(nodes=2)
    owner = cluster.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner",
                                                                                "namespace": "default"}})
    web = {"app": "web"}
    for name, node in (("a-alone", "node-1"), ("b-paired", "node-2"), ("c-paired", "node-2")):
        cluster.create(orphan(name, web, nodeName=node))
    rs = replica_set(replicas=3)
    rs["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
                                          "uid": owner["metadata"]["uid"], "controller": True}]
    cluster.create(rs)
    at(cluster, 10)
    scale(cluster, 2)
    remaining = names(cluster)
    assert "a-alone" in remaining and len(remaining) == 2


# -- availability ---------------------------------------------------------------------------

def test_available_replicas_change_the_instant_min_ready_seconds_have_passed() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(replica_set(replicas=1, minReadySeconds=10))
    at(cluster, 1)  # Ready since 00:00:01
    assert status(cluster)["readyReplicas"] == 1 and "availableReplicas" not in status(cluster)
    at(cluster, 11)  # 1.33: available only once ready for *more than* minReadySeconds
    assert "availableReplicas" not in status(cluster)
    start_rv = cluster.store.resource_version
    cluster.advance(0.000001)
    assert status(cluster)["availableReplicas"] == 1
    [write] = [c for c in cluster.store.changes_since(start_rv) if c.resource == "replicasets"]
    assert write.obj["status"]["availableReplicas"] == 1


# -- node failure ---------------------------------------------------------------------------

def test_pods_evicted_from_a_failed_node_are_replaced_at_the_eviction_never_before() -> None:
    cluster = Cluster(nodes=3)
    cluster.create(replica_set(replicas=6))
    at(cluster, 2)
    on_node_1 = sorted(p["metadata"]["name"] for p in pods(cluster) if p["spec"]["nodeName"] == "node-1")
    assert on_node_1
    cluster.fail_node("node-1")  # its last Lease renewal was at 0 s
    at(cluster, 359.999)
    assert names(cluster) == sorted(p["metadata"]["name"] for p in pods(cluster, active_only=False))
    assert len(names(cluster)) == 6
    at(cluster, 360)  # the default 300 s toleration of unreachable (tainted at 60 s) ends
    active = pods(cluster)
    assert len(active) == 6
    assert not set(on_node_1) & {p["metadata"]["name"] for p in active}
    replacements = [p for p in active if p["metadata"]["creationTimestamp"] == "2025-01-01T00:06:00Z"]
    assert len(replacements) == len(on_node_1)
    assert {p["spec"]["nodeName"] for p in replacements} <= {"node-2", "node-3"}
    assert status(cluster)["replicas"] == 6
