"""docs/time-and-faults.md, as tests: every code block there is a region of this file, run
by the test around it, which then checks what the page says happens."""

from __future__ import annotations

import pytest

from fakekube import Cluster


def ready(cluster: Cluster, node: str) -> str:
    conditions = cluster.get("v1", "Node", node, "")["status"]["conditions"]
    return next(c["status"] for c in conditions if c["type"] == "Ready")


# -- "Move the clock" -----------------------------------------------------------------------
def test_howto_fast_forward_a_node_failure() -> None:
    # docs:begin docs/time-and-faults.md#move-the-clock
    from fakekube import Cluster


    def ready(cluster, node):
        """The status of the node's Ready condition: "True", "False" or "Unknown"."""
        conditions = cluster.get("v1", "Node", node, "")["status"]["conditions"]
        return next(c["status"] for c in conditions if c["type"] == "Ready")


    cluster = Cluster(nodes=3)
    cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                    "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx"}]}})
    cluster.fail_node("node-1")                  # its kubelet stops: no Lease, no status
    cluster.advance(55)                          # 55 virtual seconds, a few milliseconds of wall time
    assert ready(cluster, "node-1") == "Unknown"
    cluster.advance(310)                         # the 300 s default toleration runs out at 360 s
    assert cluster.get("v1", "Pod", "web")["metadata"]["deletionTimestamp"]
    # docs:end


def test_howto_wait_for_a_condition_in_virtual_time(capsys: pytest.CaptureFixture[str]) -> None:
    # docs:begin docs/time-and-faults.md#advance-until
    from fakekube import Cluster

    cluster = Cluster(nodes=2)
    cluster.fail_node("node-2")
    # The node lifecycle controller taints node-2 unreachable when it marks it Unknown.
    when = cluster.advance_until(lambda c: c.get("v1", "Node", "node-2", "")["spec"].get("taints"), timeout_s=600)
    print(when)                                  # 2025-01-01 00:00:55+00:00
    # docs:end
    assert capsys.readouterr().out == "2025-01-01 00:00:55+00:00\n"
    assert ready(cluster, "node-2") == "Unknown"


# -- "Containers are data" ----------------------------------------------------------------------
def test_howto_a_command_runs_as_its_script_says(capsys: pytest.CaptureFixture[str]) -> None:
    # docs:begin docs/time-and-faults.md#program
    from fakekube import Cluster

    cluster = Cluster(nodes=1)
    cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "once"},
                    "spec": {"nodeName": "node-1", "restartPolicy": "Never", "containers": [
                        {"name": "c", "image": "busybox", "command": ["sh", "-c", "echo start; sleep 5; exit 3"]}]}})
    cluster.advance(10)
    done = cluster.get("v1", "Pod", "once")["status"]["containerStatuses"][0]["state"]["terminated"]
    print(done["exitCode"], done["startedAt"], done["finishedAt"])   # 3 2025-01-01T00:00:01Z 2025-01-01T00:00:06Z
    # docs:end
    assert capsys.readouterr().out == "3 2025-01-01T00:00:01Z 2025-01-01T00:00:06Z\n"
    assert cluster.get("v1", "Pod", "once")["status"]["phase"] == "Failed"


def test_howto_make_a_container_crash_loop(capsys: pytest.CaptureFixture[str]) -> None:
    # docs:begin docs/time-and-faults.md#crash-loop
    import json

    from fakekube import Cluster

    cluster = Cluster(nodes=1)
    cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {
                        "name": "flaky", "annotations": {"fakekube.io/behaviour": json.dumps(
                            {"run_for_s": 5, "exit_code": 1, "log_lines": ["starting", [4, "boom"]]})}},
                    "spec": {"nodeName": "node-1", "containers": [{"name": "app", "image": "my/app:1"}]}})
    cluster.advance(60)
    status = cluster.get("v1", "Pod", "flaky")["status"]["containerStatuses"][0]
    print(status["state"]["waiting"]["reason"], status["restartCount"])      # CrashLoopBackOff 3
    print(cluster.events(involved_name="flaky", reason="BackOff")[0]["count"])   # 4
    # docs:end
    assert capsys.readouterr().out == "CrashLoopBackOff 3\n4\n"


def test_howto_read_logs_of_the_previous_crash(capsys: pytest.CaptureFixture[str]) -> None:
    # docs:begin docs/time-and-faults.md#previous-logs
    import json

    from kubernetes import client

    from fakekube import Cluster

    with Cluster(nodes=1) as cluster:            # serves HTTP inside the with block
        cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {
                            "name": "flaky", "annotations": {"fakekube.io/behaviour": json.dumps(
                                {"run_for_s": 5, "exit_code": 1, "log_lines": ["starting", [4, "boom"]]})}},
                        "spec": {"nodeName": "node-1", "containers": [{"name": "app", "image": "my/app:1"}]}})
        cluster.advance(7)                       # crashed at 6 s (started at 1 s), restarted at once
        core = client.CoreV1Api(cluster.client())
        print(core.read_namespaced_pod_log("flaky", "default", previous=True), end="")   # starting, boom
    # docs:end
    assert capsys.readouterr().out == "starting\nboom\n"


# -- "Break nodes" -------------------------------------------------------------------------------
def test_howto_report_memory_pressure(capsys: pytest.CaptureFixture[str]) -> None:
    # docs:begin docs/time-and-faults.md#node-condition
    from fakekube import Cluster

    cluster = Cluster(nodes=1)
    cluster.set_node_condition("node-1", "MemoryPressure", "True")
    cluster.advance(10)                          # reported at the kubelet's next 10 s status check
    print(cluster.get("v1", "Node", "node-1", "")["spec"]["taints"])
    # [{'key': 'node.kubernetes.io/memory-pressure', 'effect': 'NoSchedule', 'timeAdded': '2025-01-01T00:00:10Z'}]
    # docs:end
    assert capsys.readouterr().out == (
        "[{'key': 'node.kubernetes.io/memory-pressure', 'effect': 'NoSchedule', 'timeAdded': '2025-01-01T00:00:10Z'}]\n")


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
