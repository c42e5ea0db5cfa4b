"""Node faults beyond a dead kubelet: partition, conditions the kubelet reports, kubelet restart.

Every node registers at t=0: its Lease renews at 0, 10, 20, … and its kubelet checks its
status at 0, 10, 20, … (posting when the server's copy differs, else every 5 min); the
node lifecycle controller passes every 5 s.
"""

from __future__ import annotations

import pytest

from fakekube import Cluster
from tests.integration.timeline import at


def condition(cluster: Cluster, node: str, kind: str) -> dict:
    conditions = cluster.get("v1", "Node", node, "")["status"]["conditions"]
    return next(c for c in conditions if c["type"] == kind)


def taints(cluster: Cluster, node: str) -> list[tuple[str, str, str]]:
    found = cluster.get("v1", "Node", node, "")["spec"].get("taints") or []
    return [(t["key"], t["effect"], t["timeAdded"][11:19]) for t in found]


def renewed(cluster: Cluster, node: str) -> str:
    return cluster.get("coordination.k8s.io/v1", "Lease", node, "kube-node-lease")["spec"]["renewTime"][11:19]


def running_pod(cluster: Cluster, name: str, node: str, **spec: object) -> None:
    cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                    "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx"}], **spec}})


# -- network partition ------------------------------------------------------------------
def test_a_partitioned_node_goes_unknown_and_its_pods_wait_terminating_until_it_heals() -> None:
    cluster = Cluster(nodes=2)
    running_pod(cluster, "web", "node-1")
    at(cluster, 5)
    assert cluster.get("v1", "Pod", "web")["status"]["phase"] == "Running"
    cluster.partition_node("node-1")
    at(cluster, 54)
    assert renewed(cluster, "node-1") == "00:00:00" and condition(cluster, "node-1", "Ready")["status"] == "True"
    at(cluster, 55)
    assert condition(cluster, "node-1", "Ready")["status"] == "Unknown"
    assert ("node.kubernetes.io/unreachable", "NoSchedule", "00:00:55") in taints(cluster, "node-1")  # at once
    at(cluster, 60)
    assert ("node.kubernetes.io/unreachable", "NoExecute", "00:01:00") in taints(cluster, "node-1")
    at(cluster, 400)
    # Evicted at 360 (300 s default toleration), but the cut-off kubelet cannot finish the deletion.
    pod = cluster.get("v1", "Pod", "web")
    assert pod["metadata"]["deletionTimestamp"] == "2025-01-01T00:06:30Z"  # 360 s + 30 s grace
    assert pod["status"]["phase"] == "Running"
    assert cluster.kubelet_state("node-1")["heartbeats"] == "partitioned"
    cluster.heal_node("node-1")
    assert renewed(cluster, "node-1") == "00:06:40"
    assert condition(cluster, "node-1", "Ready")["status"] == "True"
    with pytest.raises(Exception, match="not found"):
        cluster.get("v1", "Pod", "web")  # the kubelet saw the deletion and finished it
    at(cluster, 410)
    assert not [t for t in taints(cluster, "node-1") if t[0] == "node.kubernetes.io/unreachable"]


def test_a_partitioned_kubelet_keeps_running_its_pods_and_reports_them_when_healed() -> None:
    cluster = Cluster(nodes=1)
    cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "job",
                    "annotations": {"fakekube.io/behaviour": '{"run_for_s": 20, "exit_code": 0}'}},
                    "spec": {"nodeName": "node-1", "restartPolicy": "Never",
                             "containers": [{"name": "c", "image": "busybox"}]}})
    at(cluster, 5)
    cluster.partition_node("node-1")
    at(cluster, 30)
    assert cluster.get("v1", "Pod", "job")["status"]["phase"] == "Running"  # nobody could report the exit
    cluster.heal_node("node-1")
    status = cluster.get("v1", "Pod", "job")["status"]
    assert status["phase"] == "Succeeded"
    terminated = status["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["finishedAt"]) == (0, "2025-01-01T00:00:21Z")


# -- conditions the kubelet reports ---------------------------------------------------------
def test_memory_pressure_is_reported_at_the_next_status_check_and_taints_the_node() -> None:
    cluster = Cluster(nodes=1)
    at(cluster, 3)
    cluster.set_node_condition("node-1", "MemoryPressure", "True")
    at(cluster, 9)
    assert condition(cluster, "node-1", "MemoryPressure")["status"] == "False"
    at(cluster, 10)
    pressure = condition(cluster, "node-1", "MemoryPressure")
    assert pressure == {"type": "MemoryPressure", "status": "True", "reason": "KubeletHasInsufficientMemory",
                        "message": "kubelet has insufficient memory available",
                        "lastHeartbeatTime": "2025-01-01T00:00:10Z", "lastTransitionTime": "2025-01-01T00:00:10Z"}
    assert condition(cluster, "node-1", "Ready")["lastTransitionTime"] == "2025-01-01T00:00:00Z"
    # The NoSchedule pass follows the Node update at once, as upstream's node update worker.
    assert taints(cluster, "node-1") == [("node.kubernetes.io/memory-pressure", "NoSchedule", "00:00:10")]
    cluster.clear_node_condition("node-1", "MemoryPressure")
    at(cluster, 20)
    assert condition(cluster, "node-1", "MemoryPressure")["reason"] == "KubeletHasSufficientMemory"
    assert taints(cluster, "node-1") == []


def test_a_kubelet_reporting_not_ready_gets_the_not_ready_taints() -> None:
    cluster = Cluster(nodes=2)  # one node of one not ready would be a full disruption: no NoExecute
    cluster.set_node_condition("node-1", "Ready", "False", message="PLEG is not healthy")
    at(cluster, 10)
    ready = condition(cluster, "node-1", "Ready")
    assert (ready["status"], ready["reason"], ready["message"]) == ("False", "KubeletNotReady", "PLEG is not healthy")
    # Both at the instant of the report: the monitor pass due then and the update worker
    # (simultaneous upstream too; their order in spec.taints is not a contract).
    assert sorted(taints(cluster, "node-1")) == [("node.kubernetes.io/not-ready", "NoExecute", "00:00:10"),
                                                 ("node.kubernetes.io/not-ready", "NoSchedule", "00:00:10")]


@pytest.mark.parametrize("kind, status", [("", "True"), ("MemoryPressure", "yes"), ("Ready", "true")])
def test_bad_conditions_are_refused(kind: str, status: str) -> None:
    cluster = Cluster(nodes=1)
    with pytest.raises(ValueError):
        cluster.set_node_condition("node-1", kind, status)
    assert cluster.kubelet_state("node-1")["conditions"]["MemoryPressure"]["status"] == "False"


# -- kubelet restart ------------------------------------------------------------------------
def test_a_restarted_kubelet_reports_at_once_and_restarts_its_cadence() -> None:
    cluster = Cluster(nodes=1)
    at(cluster, 3)
    cluster.restart_kubelet("node-1")
    assert renewed(cluster, "node-1") == "00:00:03"
    assert condition(cluster, "node-1", "Ready")["lastHeartbeatTime"] == "2025-01-01T00:00:03Z"
    at(cluster, 12)
    assert renewed(cluster, "node-1") == "00:00:03"
    at(cluster, 13)
    assert renewed(cluster, "node-1") == "00:00:13"


def test_restarting_a_failed_kubelet_brings_the_node_back() -> None:
    cluster = Cluster(nodes=1)
    cluster.fail_node("node-1")
    at(cluster, 60)
    assert condition(cluster, "node-1", "Ready")["status"] == "Unknown"
    cluster.restart_kubelet("node-1")
    ready = condition(cluster, "node-1", "Ready")
    assert (ready["status"], ready["lastTransitionTime"]) == ("True", "2025-01-01T00:01:00Z")
    assert cluster.kubelet_state("node-1")["heartbeats"] == "running"


def test_faults_name_a_missing_node() -> None:
    cluster = Cluster(nodes=1)
    for fault in (cluster.partition_node, cluster.heal_node, cluster.restart_kubelet, cluster.kubelet_state):
        with pytest.raises(KeyError, match="ghost"):
            fault("ghost")


# -- what kubectl describe node shows ---------------------------------------------------------
def node_events(cluster: Cluster, node: str) -> list[tuple[str, str, str, int, str]]:
    """(last seen HH:MM:SS, source, reason, count, message) about the node, in write order."""
    return [(e["lastTimestamp"][11:19], e["source"]["component"], e["reason"], e["count"], e["message"])
            for e in cluster.events(involved_name=node) if e["involvedObject"]["kind"] == "Node"]


def test_a_new_node_records_the_kubelet_start_and_its_registration() -> None:
    cluster = Cluster(nodes=1)
    cluster.advance(1)
    assert node_events(cluster, "node-1") == [
        ("00:00:00", "kubelet", "Starting", 1, "Starting kubelet."),
        ("00:00:00", "kubelet", "NodeHasSufficientMemory", 1, "Node node-1 status is now: NodeHasSufficientMemory"),
        ("00:00:00", "kubelet", "NodeHasNoDiskPressure", 1, "Node node-1 status is now: NodeHasNoDiskPressure"),
        ("00:00:00", "kubelet", "NodeHasSufficientPID", 1, "Node node-1 status is now: NodeHasSufficientPID"),
        ("00:00:00", "kubelet", "NodeAllocatableEnforced", 1, "Updated Node Allocatable limit across pods"),
        ("00:00:00", "kubelet", "NodeReady", 1, "Node node-1 status is now: NodeReady"),
        ("00:00:00", "node-controller", "RegisteredNode", 1, "Node node-1 event: Registered Node node-1 in Controller")]
    kubelet_ref = cluster.events(reason="Starting")[0]["involvedObject"]
    assert kubelet_ref == {"kind": "Node", "name": "node-1", "uid": "node-1"}  # upstream's nodeRef: UID = name


def test_condition_changes_failure_and_restart_are_recorded() -> None:
    cluster = Cluster(nodes=2)
    cluster.set_node_condition("node-1", "MemoryPressure", "True")
    at(cluster, 10)
    assert node_events(cluster, "node-1")[-1] == (
        "00:00:10", "kubelet", "NodeHasInsufficientMemory", 1, "Node node-1 status is now: NodeHasInsufficientMemory")
    cluster.fail_node("node-2")  # its last Lease renewal was at 10 s: Unknown at the pass after 60 s
    at(cluster, 70)
    assert node_events(cluster, "node-2")[-1] == (
        "00:01:05", "node-controller", "NodeNotReady", 1, "Node node-2 status is now: NodeNotReady")
    cluster.recover_node("node-2")  # Unknown → reported again: the kubelet records each transition
    assert [e[2:4] for e in node_events(cluster, "node-2")[-4:]] == [
        ("NodeHasSufficientMemory", 2), ("NodeHasNoDiskPressure", 2), ("NodeHasSufficientPID", 2), ("NodeReady", 2)]
    cluster.restart_kubelet("node-1")
    assert [e[2:4] for e in node_events(cluster, "node-1")[-6:]] == [
        ("Starting", 2), ("NodeHasInsufficientMemory", 2), ("NodeHasNoDiskPressure", 2), ("NodeHasSufficientPID", 2),
        ("NodeAllocatableEnforced", 2), ("NodeReady", 2)]


def test_a_deleted_node_is_removed_from_the_controller() -> None:
    cluster = Cluster(nodes=2)
    at(cluster, 1)
    cluster.delete("v1", "Node", "node-2", "")
    at(cluster, 5)
    assert node_events(cluster, "node-2")[-1] == (
        "00:00:05", "node-controller", "RemovingNode", 1, "Node node-2 event: Removing Node node-2 from Controller")


def test_a_node_first_seen_loses_the_controllers_no_execute_taints() -> None:
    cluster = Cluster(nodes=1)
    at(cluster, 2)
    taints = [{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"},
              {"key": "dedicated", "value": "gpu", "effect": "NoExecute"}]
    cluster.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "late"}, "spec": {"taints": taints}})
    assert [t["key"] for t in cluster.get("v1", "Node", "late", "")["spec"]["taints"]] == [
        "node.kubernetes.io/unreachable", "dedicated"]
    at(cluster, 5)  # the next pass sees it first: upstream markNodeAsReachable
    assert cluster.get("v1", "Node", "late", "")["spec"]["taints"] == [taints[1]]
    assert node_events(cluster, "late")[-1][2] == "RegisteredNode"
