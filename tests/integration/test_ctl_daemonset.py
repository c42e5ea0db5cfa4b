"""The DaemonSet controller (kube-controller-manager 1.33) at exact virtual times: one pod
per eligible node, pinned for the default scheduler; nodes joining, leaving, failing and
being tainted; RollingUpdate without and with surge, OnDelete; ControllerRevisions; the
failed-pod back-off; status with minReadySeconds."""

from __future__ import annotations

import json
from typing import Any

from fakekube import Cluster
from fakekube.api.registry import STATUS
from fakekube.api.verbs.apiserver import WriteOptions
from fakekube.clock import format_rfc3339
from fakekube.cluster.bootstrap import node_object
from fakekube.cluster.nodespec import NodeSpec
from tests.integration.timeline import at

Obj = dict[str, Any]
MERGE = "application/merge-patch+json"

DAEMON_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]


def daemonset(name: str = "agent", image: str = "busybox:1.36", namespace: str = "default", **spec: Any) -> Obj:
    pod_spec = {"containers": [{"name": "agent", "image": image}], **spec.pop("pod", {})}
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec}, **spec}}


def pods(cluster: Cluster, app: str = "agent") -> list[Obj]:
    return cluster.list("v1", "Pod", "default", label_selector=f"app={app}")


def by_node(cluster: Cluster, app: str = "agent") -> dict[str, str]:
    """Node → the (not deleting) daemon pod's image, for bound pods."""
    return {p["spec"]["nodeName"]: p["spec"]["containers"][0]["image"] for p in pods(cluster, app)
            if p["spec"].get("nodeName") and not p["metadata"].get("deletionTimestamp")}


def images(cluster: Cluster, app: str = "agent") -> dict[str, list[str]]:
    """Node → the images of its daemon pods that are not being deleted."""
    found: dict[str, list[str]] = {}
    for pod in pods(cluster, app):
        if pod["spec"].get("nodeName") and not pod["metadata"].get("deletionTimestamp"):
            found.setdefault(pod["spec"]["nodeName"], []).append(pod["spec"]["containers"][0]["image"])
    return {node: sorted(found[node]) for node in sorted(found)}


def status(cluster: Cluster, name: str = "agent") -> Obj:
    return cluster.get("apps/v1", "DaemonSet", name)["status"]


def counts(cluster: Cluster, name: str = "agent") -> tuple[int, ...]:
    """(desired, current, ready, up-to-date, available, misscheduled) as kubectl shows the first five."""
    s = status(cluster, name)
    return (s["desiredNumberScheduled"], s["currentNumberScheduled"], s["numberReady"],
            s.get("updatedNumberScheduled", 0), s.get("numberAvailable", 0), s["numberMisscheduled"])


def ds_events(cluster: Cluster) -> list[tuple[str, str, str]]:
    return [(e["lastTimestamp"][11:19], e["reason"], e["message"]) for e in cluster.events("default")
            if e["source"].get("component") == "daemonset-controller"]


def update_template(cluster: Cluster, name: str = "agent", image: str = "busybox:1.37") -> None:
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "agent", "image": image}]}}}}
    cluster.api.patch(cluster.resource("apps/v1", "DaemonSet"), "default", name,
                      "application/strategic-merge-patch+json", json.dumps(patch).encode())
    cluster.settle()


def patch_node(cluster: Cluster, name: str, patch: Obj) -> None:
    cluster.api.patch(cluster.resource("v1", "Node"), "", name, MERGE, json.dumps(patch).encode())
    cluster.settle()


def join_node(cluster: Cluster, name: str, index: int, **spec: Any) -> None:
    """A node registering as a kubelet does (labels, capacity, Ready)."""
    node = node_object(name, index, cluster.rng.fork(f"test/{name}"), cluster.config.kubelet_version,
                       format_rfc3339(cluster.now), NodeSpec(**spec))
    cluster.create({"apiVersion": "v1", "kind": "Node", **node})


def test_one_pod_per_node_pinned_to_it_and_bound_by_the_scheduler() -> None:
    cluster = Cluster(nodes=3)
    cluster.create(daemonset())
    placed = pods(cluster)
    assert sorted(p["spec"]["nodeName"] for p in placed) == ["node-1", "node-2", "node-3"]
    for pod in placed:
        node = pod["spec"]["nodeName"]
        assert pod["metadata"]["generateName"] == "agent-"
        assert pod["spec"]["affinity"] == {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}
        assert pod["spec"]["tolerations"] == DAEMON_TOLERATIONS  # and so none from DefaultTolerationSeconds
        [ref] = pod["metadata"]["ownerReferences"]
        assert (ref["apiVersion"], ref["kind"], ref["name"], ref["controller"], ref["blockOwnerDeletion"]) == (
            "apps/v1", "DaemonSet", "agent", True, True)
    [revision] = cluster.list("apps/v1", "ControllerRevision", "default")
    hash_ = revision["metadata"]["labels"]["controller-revision-hash"]
    assert revision["metadata"]["name"] == f"agent-{hash_}" and revision["revision"] == 1
    assert {json.dumps(p["metadata"]["labels"], sort_keys=True) for p in placed} == {json.dumps(
        {"app": "agent", "controller-revision-hash": hash_, "pod-template-generation": "1"}, sort_keys=True)}
    assert status(cluster) == {"currentNumberScheduled": 3, "numberMisscheduled": 0, "desiredNumberScheduled": 3,
                               "numberReady": 0, "observedGeneration": 1, "updatedNumberScheduled": 3,
                               "numberUnavailable": 3}
    at(cluster, 1)  # containers start a second after binding
    assert counts(cluster) == (3, 3, 3, 3, 3, 0) and "numberUnavailable" not in status(cluster)
    names = sorted(p["metadata"]["name"] for p in placed)
    assert sorted(message for _, reason, message in ds_events(cluster) if reason == "SuccessfulCreate") == [
        f"Created pod: {name}" for name in names]


def test_a_node_that_joins_gets_a_daemon_pod_and_a_host_network_one_tolerates_no_network() -> None:
    cluster = Cluster(nodes=2)
    cluster.create(daemonset())
    cluster.create(daemonset("proxy", pod={"hostNetwork": True}))
    at(cluster, 10)
    join_node(cluster, "node-3", 2)
    assert by_node(cluster) == {f"node-{i}": "busybox:1.36" for i in (1, 2, 3)}
    assert counts(cluster) == (3, 3, 2, 3, 2, 0)
    at(cluster, 11)
    assert counts(cluster) == (3, 3, 3, 3, 3, 0)
    proxy = pods(cluster, "proxy")[0]["spec"]["tolerations"]
    assert proxy == DAEMON_TOLERATIONS + [
        {"key": "node.kubernetes.io/network-unavailable", "operator": "Exists", "effect": "NoSchedule"}]


def test_taints_and_node_selectors_decide_which_nodes_run_one() -> None:
    gpu_taint = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    cluster = Cluster(nodes=(NodeSpec(count=2, labels={"disk": "ssd"}), NodeSpec(name="gpu", taints=(gpu_taint,))))
    cluster.create(daemonset())
    cluster.create(daemonset("gpu-agent", pod={"tolerations": [{"key": "dedicated", "operator": "Exists"}]}))
    cluster.create(daemonset("ssd-agent", pod={"nodeSelector": {"disk": "ssd"}}))
    assert sorted(by_node(cluster)) == ["node-1", "node-2"]  # the tainted node gets none
    assert sorted(by_node(cluster, "gpu-agent")) == ["gpu", "node-1", "node-2"]
    assert sorted(by_node(cluster, "ssd-agent")) == ["node-1", "node-2"]
    at(cluster, 5)
    patch_node(cluster, "node-2", {"metadata": {"labels": {"disk": None}}})  # no longer selected: deleted now
    assert sorted(by_node(cluster, "ssd-agent")) == ["node-1"]
    assert ds_events(cluster)[-1][:2] == ("00:00:05", "SuccessfulDelete")
    patch_node(cluster, "node-1", {"spec": {"taints": [{"key": "maintenance", "effect": "NoSchedule"}]}})
    assert sorted(by_node(cluster)) == ["node-1", "node-2"]  # a NoSchedule taint keeps no running pod off
    assert counts(cluster) == (1, 1, 1, 1, 1, 1)  # ...but it is misscheduled there
    patch_node(cluster, "node-1", {"spec": {"taints": [{"key": "maintenance", "effect": "NoExecute"}]}})
    assert sorted(by_node(cluster)) == ["node-2"]  # an untolerated NoExecute taint removes it
    assert counts(cluster) == (1, 1, 1, 1, 1, 0)


def test_a_failed_nodes_daemon_pod_stays_it_tolerates_unreachable() -> None:
    cluster = Cluster(nodes=3)
    cluster.create(daemonset())
    cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
                    "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx"}]}})
    at(cluster, 10)
    cluster.fail_node("node-1")
    at(cluster, 400)  # NotReady (unreachable) and the 300 s default toleration long gone
    assert cluster.get("v1", "Pod", "web")["metadata"].get("deletionTimestamp")  # the plain pod is evicted
    assert by_node(cluster) == {f"node-{i}": "busybox:1.36" for i in (1, 2, 3)}  # the daemon pod stays
    taints = {(t["key"], t["effect"]) for t in cluster.get("v1", "Node", "node-1", "")["spec"]["taints"]}
    assert taints == {("node.kubernetes.io/unreachable", "NoSchedule"), ("node.kubernetes.io/unreachable", "NoExecute")}
    # Not tolerated for scheduling, tolerated for running: no longer desired, but kept.
    assert counts(cluster) == (2, 2, 2, 2, 2, 1)
    cluster.recover_node("node-1")
    at(cluster, 410)
    assert counts(cluster) == (3, 3, 3, 3, 3, 0)


def test_a_deleted_nodes_pod_goes_with_pod_gc() -> None:
    cluster = Cluster(nodes=3)
    cluster.create(daemonset())
    at(cluster, 25)
    cluster.delete("v1", "Node", "node-3", "")
    assert counts(cluster) == (3, 3, 3, 3, 3, 0)  # node deletions wake no DaemonSet upstream
    at(cluster, 79)
    assert sorted(by_node(cluster)) == ["node-1", "node-2", "node-3"]
    at(cluster, 80)  # PodGC: noticed at its pass at 40 s, quarantined 40 s
    assert sorted(by_node(cluster)) == ["node-1", "node-2"]
    assert counts(cluster) == (2, 2, 2, 2, 2, 0)


def test_rolling_update_replaces_one_node_at_a_time() -> None:
    cluster = Cluster(nodes=3)
    cluster.create(daemonset())
    at(cluster, 10)
    start = cluster.store.resource_version
    update_template(cluster)
    assert by_node(cluster) == {"node-1": "busybox:1.37", "node-2": "busybox:1.36", "node-3": "busybox:1.36"}
    at(cluster, 11)
    assert by_node(cluster) == {"node-1": "busybox:1.37", "node-2": "busybox:1.37", "node-3": "busybox:1.36"}
    at(cluster, 12)
    assert set(by_node(cluster).values()) == {"busybox:1.37"}
    at(cluster, 13)
    assert counts(cluster) == (3, 3, 3, 3, 3, 0) and status(cluster)["observedGeneration"] == 2
    statuses = [c.obj["status"] for c in cluster.store.changes_since(start) if c.resource == "daemonsets"]
    assert max(s.get("numberUnavailable", 0) for s in statuses) == 1  # maxUnavailable 1, never more
    assert [t for t, reason, _ in ds_events(cluster) if reason == "SuccessfulDelete"] == [
        "00:00:10", "00:00:11", "00:00:12"]
    revisions = sorted(cluster.list("apps/v1", "ControllerRevision", "default"), key=lambda r: r["revision"])
    assert [r["revision"] for r in revisions] == [1, 2]
    new_hash = revisions[1]["metadata"]["labels"]["controller-revision-hash"]
    assert revisions[1]["data"]["spec"]["template"]["spec"]["containers"][0]["image"] == "busybox:1.37"
    assert revisions[1]["data"]["spec"]["template"]["$patch"] == "replace"
    assert {p["metadata"]["labels"]["controller-revision-hash"] for p in pods(cluster)} == {new_hash}
    assert {p["metadata"]["labels"]["pod-template-generation"] for p in pods(cluster)} == {"2"}


def test_max_surge_starts_the_new_pod_before_the_old_one_goes() -> None:
    cluster = Cluster(nodes=3)
    cluster.create(daemonset(updateStrategy={"type": "RollingUpdate",
                                             "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}))
    at(cluster, 10)
    start = cluster.store.resource_version
    update_template(cluster)
    assert len(pods(cluster)) == 4  # the surge pod next to node-1's old one
    at(cluster, 11)  # the new pod is available: the old one goes, the next node surges
    assert images(cluster) == {"node-1": ["busybox:1.37"], "node-2": ["busybox:1.36", "busybox:1.37"],
                               "node-3": ["busybox:1.36"]}
    at(cluster, 13)
    assert set(by_node(cluster).values()) == {"busybox:1.37"} and len(pods(cluster)) == 3
    statuses = [c.obj["status"] for c in cluster.store.changes_since(start) if c.resource == "daemonsets"]
    assert min(s.get("numberAvailable", 0) for s in statuses) == 3


def test_on_delete_waits_for_each_pod_to_be_deleted() -> None:
    cluster = Cluster(nodes=2)
    cluster.create(daemonset(updateStrategy={"type": "OnDelete"}))
    at(cluster, 10)
    update_template(cluster)
    at(cluster, 100)
    assert set(by_node(cluster).values()) == {"busybox:1.36"}
    assert counts(cluster) == (2, 2, 2, 0, 2, 0) and status(cluster)["observedGeneration"] == 2
    on_node_2 = next(p["metadata"]["name"] for p in pods(cluster) if p["spec"]["nodeName"] == "node-2")
    cluster.delete("v1", "Pod", on_node_2)
    assert by_node(cluster) == {"node-1": "busybox:1.36", "node-2": "busybox:1.37"}
    at(cluster, 101)
    assert counts(cluster) == (2, 2, 2, 1, 2, 0)


def fail_pod(cluster: Cluster) -> None:
    """The pod's phase becomes Failed (as when a kubelet rejects it)."""
    pod = pods(cluster)[0]
    pod["status"]["phase"] = "Failed"
    cluster.api.update(cluster.resource("v1", "Pod"), "default", pod["metadata"]["name"], pod, WriteOptions(), STATUS)
    cluster.settle()


def test_failed_daemon_pods_are_replaced_with_back_off() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(daemonset())
    names = []
    for second in (5, 6, 7):  # back-off: a 1 s window from 5, then 2 s from 6
        at(cluster, second)
        names.append(pods(cluster)[0]["metadata"]["name"])
        fail_pod(cluster)
    at(cluster, 8.9)  # the failure at 7 is inside the window: looked at again a window (2 s) later
    assert pods(cluster)[0]["status"]["phase"] == "Failed"
    at(cluster, 9)
    failed = [(t, m) for t, reason, m in ds_events(cluster) if reason == "FailedDaemonPod"]
    assert failed == [(t, f"Found failed daemon pod default/{name} on node node-1, will try to kill it")
                      for t, name in zip(("00:00:05", "00:00:06", "00:00:09"), names)]
    creates = [t for t, reason, _ in ds_events(cluster) if reason == "SuccessfulCreate"]
    assert creates == ["00:00:00", "00:00:05", "00:00:06", "00:00:09"]
    at(cluster, 10)
    assert counts(cluster) == (1, 1, 1, 1, 1, 0)


def test_a_relabelled_pod_is_released_and_replaced() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(daemonset())
    at(cluster, 5)
    old = pods(cluster)[0]["metadata"]["name"]
    cluster.api.patch(cluster.resource("v1", "Pod"), "default", old, MERGE,
                      json.dumps({"metadata": {"labels": {"app": "debug"}}}).encode())
    cluster.settle()
    assert not cluster.get("v1", "Pod", old)["metadata"].get("ownerReferences")  # released
    [replacement] = pods(cluster)
    assert replacement["metadata"]["name"] != old and replacement["spec"]["nodeName"] == "node-1"


def test_revision_history_is_cut_to_the_limit() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(daemonset(revisionHistoryLimit=1))
    for second, image in ((10, "busybox:2"), (20, "busybox:3"), (30, "busybox:4")):
        at(cluster, second)
        update_template(cluster, image=image)
    at(cluster, 40)
    assert sorted(r["revision"] for r in cluster.list("apps/v1", "ControllerRevision", "default")) == [3, 4]


def test_min_ready_seconds_delays_availability() -> None:
    cluster = Cluster(nodes=2)
    cluster.create(daemonset(minReadySeconds=10))
    at(cluster, 11)  # ready at 1 s, available more than 10 s later
    assert counts(cluster) == (2, 2, 2, 2, 0, 0)
    at(cluster, 12)  # the second upstream adds after a pod turns ready
    assert counts(cluster) == (2, 2, 2, 2, 2, 0)
