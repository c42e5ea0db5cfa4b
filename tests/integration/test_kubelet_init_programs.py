"""Init containers run their program like any container, and a program that prints the time
prints the time it runs (kubelet/programs.py, run again at each start).

Times are seconds since the cluster's epoch (2025-01-01T00:00:00Z); containers start 1 s
after their turn comes.
"""

from __future__ import annotations

from typing import Any

from fakekube import Cluster
from fakekube.kubelet.logs import PodLogOptions
from tests.integration.timeline import at

Obj = dict[str, Any]


def make_pod(name: str, inits: list[Obj], **spec: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": "node-1", "initContainers": inits,
                     "containers": [{"name": "app", "image": "nginx:1.27"}], **spec}}


def log(cluster: Cluster, name: str, container: str, previous: bool = False) -> list[str]:
    return cluster.kubelets.pods.logs("default", name, container, PodLogOptions(previous=previous),
                                      cluster.now).decode().splitlines()


def test_an_init_container_looping_forever_keeps_the_pod_initializing() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(make_pod("waits", [{"name": "wait", "image": "busybox:1.36",
                                       "command": ["sh", "-c", "while true; do date; sleep 5; done"]}]))
    at(cluster, 600)
    status = cluster.get("v1", "Pod", "waits")["status"]
    assert status["phase"] == "Pending"
    assert status["initContainerStatuses"][0]["state"] == {"running": {"startedAt": "2025-01-01T00:00:01Z"}}
    assert status["containerStatuses"][0]["state"] == {"waiting": {"reason": "PodInitializing"}}
    initialized = next(c for c in status["conditions"] if c["type"] == "Initialized")
    assert (initialized["status"], initialized["reason"]) == ("False", "ContainersNotInitialized")
    assert log(cluster, "waits", "wait")[:3] == ["Wed Jan  1 00:00:01 UTC 2025", "Wed Jan  1 00:00:06 UTC 2025",
                                                 "Wed Jan  1 00:00:11 UTC 2025"]
    assert log(cluster, "waits", "wait")[-1] == "Wed Jan  1 00:09:56 UTC 2025"


def test_an_init_container_that_finishes_lets_the_app_start_and_a_restart_prints_its_own_time() -> None:
    """The first init fails (exit 1 at 3) and is restarted at once (at 3, running from 4): each
    run's ``date`` is that run's time; the second init sleeps 2 s; the app starts at 9."""
    cluster = Cluster(nodes=1)
    cluster.create(make_pod("steps", [
        {"name": "check", "image": "busybox:1.36", "command": ["sh", "-c", "date +%T; sleep 2; exit 1"]},
        {"name": "prepare", "image": "busybox:1.36", "command": ["sh", "-c", "date +%T; sleep 2"]}],
        restartPolicy="Never"))
    at(cluster, 10)
    status = cluster.get("v1", "Pod", "steps")["status"]
    assert status["phase"] == "Failed"  # an init container failed under Never: the pod fails
    assert log(cluster, "steps", "check") == ["00:00:01"]

    cluster.create(make_pod("retry", [
        {"name": "check", "image": "busybox:1.36", "command": ["sh", "-c", "date +%T; sleep 2; exit 1"]}],
        restartPolicy="OnFailure"))
    at(cluster, 14)  # created at 10: runs 11..13, restarted at once, runs 14..
    assert log(cluster, "retry", "check", previous=True) == ["00:00:11"]
    assert log(cluster, "retry", "check") == ["00:00:14"]


def test_date_in_an_app_containers_command_is_logged_at_its_time() -> None:
    cluster = Cluster(nodes=1)
    cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "clock", "namespace": "default"},
                    "spec": {"nodeName": "node-1", "restartPolicy": "Never", "containers": [
                        {"name": "c", "image": "busybox:1.36", "command": ["sh", "-c", "date -u +%s; sleep 3; date"]}]}})
    at(cluster, 10)
    assert log(cluster, "clock", "c") == ["1735689601", "Wed Jan  1 00:00:04 UTC 2025"]
    terminated = cluster.get("v1", "Pod", "clock")["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["finishedAt"]) == (0, "2025-01-01T00:00:04Z")
