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
    at(cluster, 44)
    assert renewed(cluster, "node-1") == "00:00:00" and condition(cluster, "node-1", "Ready")["status"] == "True"
    at(cluster, 45)
    assert condition(cluster, "node-1", "Ready")["status"] == "Unknown"
    at(cluster, 50)
    assert ("node.kubernetes.io/unreachable", "NoExecute", "00:00:50") in taints(cluster, "node-1")
    at(cluster, 400)
    # Evicted at 350 (300 s default toleration), but the cut-off kubelet cannot finish the deletion.
    pod = cluster.get("v1", "Pod", "web")
    assert pod["metadata"]["deletionTimestamp"] == "2025-01-01T00:06:20Z"  # 350 s + 30 s grace
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
    # The monitor pass at 10 s runs after the report: upstream's event-driven NoSchedule
    # worker would taint at once too.
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
    assert taints(cluster, "node-1") == [("node.kubernetes.io/not-ready", "NoSchedule", "00:00:10"),
                                         ("node.kubernetes.io/not-ready", "NoExecute", "00:00:10")]


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
