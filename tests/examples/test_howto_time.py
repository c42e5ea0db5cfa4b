"""docs/time-and-faults.md, as tests: every example there is one of these (if they break, the page is wrong)."""

from __future__ import annotations

import json

from kubernetes import client

from fakekube import Cluster


def ready(cluster: Cluster, node: str) -> str:
    conditions = cluster.get("v1", "Node", node, "")["status"]["conditions"]
    return next(c["status"] for c in conditions if c["type"] == "Ready")


# -- "Move the clock" -----------------------------------------------------------------------
def test_howto_fast_forward_a_node_failure() -> None:
    cluster = Cluster(nodes=3)
    cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                    "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx"}]}})
    cluster.fail_node("node-1")                  # its kubelet stops: no Lease, no status
    cluster.advance(55)                          # 55 virtual seconds, a few milliseconds of wall time
    assert ready(cluster, "node-1") == "Unknown"
    cluster.advance(310)                         # the 300 s default toleration runs out at 360 s
    assert cluster.get("v1", "Pod", "web")["metadata"]["deletionTimestamp"]


def test_howto_wait_for_a_condition_in_virtual_time() -> None:
    cluster = Cluster(nodes=2)
    cluster.fail_node("node-2")
    when = cluster.advance_until(lambda c: ready(c, "node-2") == "Unknown", timeout_s=600)
    assert (when - cluster.config.start_time).total_seconds() == 55


# -- "Containers are data" ----------------------------------------------------------------------
def test_howto_make_a_container_crash_loop() -> None:
    cluster = Cluster(nodes=1)
    cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {
                        "name": "flaky", "annotations": {"fakekube.io/behaviour": json.dumps(
                            {"run_for_s": 5, "exit_code": 1, "log_lines": ["starting", [4, "boom"]]})}},
                    "spec": {"nodeName": "node-1", "containers": [{"name": "app", "image": "my/app:1"}]}})
    cluster.advance(60)
    status = cluster.get("v1", "Pod", "flaky")["status"]["containerStatuses"][0]
    assert status["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert status["restartCount"] >= 3
    back_offs = cluster.events(involved_name="flaky", reason="BackOff")
    assert back_offs and back_offs[0]["count"] > 1   # counted, as client-go's recorder does


# -- "Break nodes" -------------------------------------------------------------------------------
def test_howto_report_memory_pressure() -> None:
    cluster = Cluster(nodes=1)
    cluster.set_node_condition("node-1", "MemoryPressure", "True")
    cluster.advance(10)                          # the kubelet reports at its next 10 s status check
    taints = cluster.get("v1", "Node", "node-1", "")["spec"]["taints"]
    assert [(t["key"], t["effect"]) for t in taints] == [("node.kubernetes.io/memory-pressure", "NoSchedule")]


def test_howto_partition_a_node() -> None:
    cluster = Cluster(nodes=2)
    cluster.partition_node("node-1")             # the kubelet runs on but cannot report
    cluster.advance(60)
    assert ready(cluster, "node-1") == "Unknown"
    cluster.heal_node("node-1")                  # it reports at once
    assert ready(cluster, "node-1") == "True"


# -- "Same seed, same story" ---------------------------------------------------------------------
def test_howto_the_same_run_twice_is_the_same() -> None:
    def run() -> list[str]:
        cluster = Cluster(nodes=2, seed=11)
        cluster.fail_node("node-1")
        cluster.advance(400)
        return [f"{e['lastTimestamp']} {e['reason']}" for e in cluster.events()]
    assert run() == run()


def test_howto_read_logs_of_the_previous_crash() -> None:
    with Cluster(nodes=1) as cluster:
        cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {
                            "name": "flaky", "annotations": {"fakekube.io/behaviour": json.dumps(
                                {"run_for_s": 5, "exit_code": 1, "log_lines": ["starting", [4, "boom"]]})}},
                        "spec": {"nodeName": "node-1", "containers": [{"name": "app", "image": "my/app:1"}]}})
        cluster.advance(7)                       # crashed at 6 s (started at 1 s), restarted at once
        core = client.CoreV1Api(cluster.client())
        assert core.read_namespaced_pod_log("flaky", "default", previous=True) == "starting\nboom\n"
