"""Termination that takes its time, at exact virtual times (kubelet/termination.py).

A deleted pod stays Terminating — phase Running, its containers running — until each has
stopped: its preStop hook runs first (its time counts against the grace period), then
SIGTERM, which ``sleep`` and shell loops ignore as PID 1 (killed with exit 137 when the
grace ends) and servers or a script's ``trap`` handle; then the kubelet deletes the pod.
Times in comments are seconds since the cluster's epoch; containers start 1 s after the pod.
"""

from __future__ import annotations

import json
from typing import Any

from fakekube import Cluster
from fakekube.api.verbs.deletion import DeleteOptions
from fakekube.kubelet.behaviour import BEHAVIOUR_ANNOTATION
from fakekube.kubelet.logs import PodLogOptions
from fakekube.store import DELETED
from tests.integration.timeline import at

Obj = dict[str, Any]
PODS = ("", "pods")


def busybox(name: str, command: list[str], **fields: Any) -> Obj:
    return {"name": name, "image": "busybox:1.36", "command": command, **fields}


def make_pod(name: str, containers: list[Obj], annotations: Obj | None = None, **spec: Any) -> Obj:
    meta: Obj = {"name": name, "namespace": "default"}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"nodeName": "node-1", "containers": containers, **spec}}


def live(cluster: Cluster, name: str) -> Obj | None:
    return cluster.store.get(PODS, ("default", name))


def final_status(cluster: Cluster, name: str) -> Obj:
    """The status the pod had when the kubelet removed it."""
    deleted = [change for change in cluster.store.changes_since(0) if change.type == DELETED and change.name == name]
    return deleted[-1].obj["status"]


def terminated(status: Obj, index: int = 0) -> Obj:
    return status["containerStatuses"][index]["state"]["terminated"]


def events(cluster: Cluster, name: str) -> list[tuple[str, str, str]]:
    """The kubelet's events about the pod: (reason, the second they were last recorded, message)."""
    return [(e["reason"], e["lastTimestamp"][17:19], e["message"]) for e in cluster.events(involved_name=name)
            if (e.get("source") or {}).get("component") == "kubelet"]


def state_of(pod: Obj, container: str) -> Obj:
    return next(c["state"] for c in pod["status"]["containerStatuses"] if c["name"] == container)


def test_a_deleted_jobs_sleep_pod_stays_terminating_for_exactly_its_grace_period() -> None:
    """``kubectl delete job … --cascade=background``: the garbage collector deletes the pod
    (30 s grace); ``sleep 600`` as PID 1 ignores SIGTERM, so it is killed at 30 s."""
    cluster = Cluster(nodes=1)
    cluster.create({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "gc", "namespace": "default"},
                    "spec": {"template": {"spec": {"restartPolicy": "Never",
                                                   "containers": [busybox("sleeper", ["sleep", "600"])]}}}})
    at(cluster, 5)
    [pod] = cluster.list("v1", "Pod", "default")
    name = pod["metadata"]["name"]
    assert pod["status"]["phase"] == "Running"
    cluster.api.delete(cluster.resource("batch/v1", "Job"), "default", "gc",
                       DeleteOptions(propagation_policy="Background"))
    at(cluster, 34.999)
    lingering = live(cluster, name)
    assert lingering is not None and lingering["metadata"]["deletionTimestamp"] == "2025-01-01T00:00:35Z"
    assert lingering["status"]["phase"] == "Running"
    assert lingering["status"]["containerStatuses"][0]["state"] == {"running": {"startedAt": "2025-01-01T00:00:01Z"}}
    at(cluster, 35)
    assert live(cluster, name) is None
    final = final_status(cluster, name)
    assert final["phase"] == "Failed"
    assert terminated(final) == {"exitCode": 137, "reason": "Error", "startedAt": "2025-01-01T00:00:01Z",
                                 "finishedAt": "2025-01-01T00:00:35Z",
                                 "containerID": final["containerStatuses"][0]["containerID"]}
    assert ("Killing", "05", "Stopping container sleeper") in events(cluster, name)


def test_a_server_stops_on_sigterm_at_once_and_a_shell_loop_is_killed() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(make_pod("two", [{"name": "web", "image": "nginx:1.27"},
                                    busybox("loop", ["sh", "-c", "while true; do echo tick; sleep 1; done"])],
                            terminationGracePeriodSeconds=10))
    at(cluster, 5)
    cluster.delete("v1", "Pod", "two")
    at(cluster, 6)
    statuses = {c["name"]: c["state"] for c in live(cluster, "two")["status"]["containerStatuses"]}
    assert statuses["web"]["terminated"]["exitCode"] == 0 and statuses["web"]["terminated"]["reason"] == "Completed"
    assert statuses["web"]["terminated"]["finishedAt"] == "2025-01-01T00:00:05Z"
    assert "running" in statuses["loop"]
    at(cluster, 14.999)
    assert live(cluster, "two") is not None
    at(cluster, 15)
    assert live(cluster, "two") is None
    assert terminated(final_status(cluster, "two"), 1)["exitCode"] == 137


def test_a_prestop_sleep_counts_against_the_grace_period() -> None:
    """preStop ``sh -c 'sleep 5'``: the server gets SIGTERM at 10 and stops; the sleeper's
    SIGTERM (also at 10) changes nothing, and it is killed when the grace (30 s from 5) ends."""
    cluster = Cluster(nodes=1)
    hook = {"preStop": {"exec": {"command": ["sh", "-c", "sleep 5"]}}}
    cluster.create(make_pod("hooked", [{"name": "web", "image": "nginx:1.27", "lifecycle": hook},
                                       busybox("sleeper", ["sleep", "600"], lifecycle=hook)]))
    at(cluster, 5)
    cluster.delete("v1", "Pod", "hooked")
    at(cluster, 9.999)
    assert "running" in state_of(live(cluster, "hooked"), "web")
    at(cluster, 10)
    assert state_of(live(cluster, "hooked"), "web")["terminated"]["finishedAt"] == "2025-01-01T00:00:10Z"
    assert "running" in state_of(live(cluster, "hooked"), "sleeper")
    at(cluster, 34.999)
    assert live(cluster, "hooked") is not None
    at(cluster, 35)
    assert live(cluster, "hooked") is None


def test_a_prestop_hook_longer_than_the_grace_is_cut_and_the_container_still_gets_two_seconds() -> None:
    """``killContainer``: the hook waits at most the grace (10 s), then the container gets the
    2 s minimum, so the pod outlives its deletionTimestamp by 2 s."""
    cluster = Cluster(nodes=1)
    cluster.create(make_pod("long", [busybox("c", ["sleep", "600"], lifecycle={"preStop": {"sleep": {"seconds": 40}}})],
                            terminationGracePeriodSeconds=10))
    at(cluster, 5)
    cluster.delete("v1", "Pod", "long")
    at(cluster, 16.999)
    assert live(cluster, "long")["metadata"]["deletionTimestamp"] == "2025-01-01T00:00:15Z"
    at(cluster, 17)
    assert live(cluster, "long") is None
    assert terminated(final_status(cluster, "long"))["finishedAt"] == "2025-01-01T00:00:17Z"


def test_a_trap_runs_when_the_foreground_command_ends_and_its_exit_code_is_the_containers() -> None:
    """The loop sleeps 5 s per round from 1; SIGTERM at 13 waits for the sleep that ends at
    16, then the trap logs ``bye`` and exits 3 (a second container keeps the pod until 30)."""
    cluster = Cluster(nodes=1)
    script = "trap 'echo bye; exit 3' TERM; while true; do echo tick; sleep 5; done"
    cluster.create(make_pod("trapped", [busybox("c", ["sh", "-c", script]),
                                        busybox("keeper", ["sleep", "600"])], terminationGracePeriodSeconds=20))
    at(cluster, 13)
    cluster.delete("v1", "Pod", "trapped")
    at(cluster, 15.999)
    assert "running" in live(cluster, "trapped")["status"]["containerStatuses"][0]["state"]
    at(cluster, 16)
    state = live(cluster, "trapped")["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (state["exitCode"], state["reason"], state["finishedAt"]) == (3, "Error", "2025-01-01T00:00:16Z")
    log = cluster.kubelets.pods.logs("default", "trapped", "c", PodLogOptions(timestamps=True), cluster.now).decode()
    assert log.splitlines()[-3:] == ["2025-01-01T00:00:06.000000000Z tick", "2025-01-01T00:00:11.000000000Z tick",
                                     "2025-01-01T00:00:16.000000000Z bye"]
    at(cluster, 33)
    assert live(cluster, "trapped") is None


def test_a_trap_that_does_not_exit_leaves_the_script_running_until_the_kill() -> None:
    cluster = Cluster(nodes=1)
    script = "trap 'echo got TERM' TERM; while true; do sleep 2; done"
    cluster.create(make_pod("stubborn", [busybox("c", ["sh", "-c", script])], terminationGracePeriodSeconds=5))
    at(cluster, 4)
    cluster.delete("v1", "Pod", "stubborn")
    at(cluster, 8.999)
    assert live(cluster, "stubborn") is not None
    log = cluster.kubelets.pods.logs("default", "stubborn", None, PodLogOptions(timestamps=True), cluster.now)
    assert log.decode() == "2025-01-01T00:00:05.000000000Z got TERM\n"  # the sleep ending at 5 finished first
    at(cluster, 9)
    assert terminated(final_status(cluster, "stubborn"))["exitCode"] == 137


def test_with_a_shared_process_namespace_sleep_dies_of_sigterm_at_once() -> None:
    """``pause`` is PID 1 there: SIGTERM's default action ends ``sleep`` (exit 143)."""
    cluster = Cluster(nodes=1)
    cluster.create(make_pod("shared", [busybox("c", ["sleep", "600"])], shareProcessNamespace=True))
    at(cluster, 5)
    cluster.delete("v1", "Pod", "shared")
    assert live(cluster, "shared") is None
    state = terminated(final_status(cluster, "shared"))
    assert (state["exitCode"], state["reason"], state["finishedAt"]) == (143, "Error", "2025-01-01T00:00:05Z")


def test_an_http_prestop_hook_takes_the_declared_answers_time_and_a_missing_command_fails_the_hook() -> None:
    cluster = Cluster(nodes=1)
    behaviour = {"http": [{"port": 8080, "path": "/drain", "delay_s": 7, "body": "draining"}]}
    http_hook = {"preStop": {"httpGet": {"path": "/drain", "port": "http"}}}
    exec_hook = {"preStop": {"exec": {"command": ["/app/drain"]}}}
    cluster.create(make_pod("hooks", [{"name": "api", "image": "example/api:1", "lifecycle": http_hook,
                                       "ports": [{"name": "http", "containerPort": 8080}]},
                                      {"name": "worker", "image": "example/worker:1", "lifecycle": exec_hook}],
                            {BEHAVIOUR_ANNOTATION: json.dumps(behaviour)}))
    at(cluster, 5)
    cluster.delete("v1", "Pod", "hooks")
    statuses = {c["name"]: c["state"] for c in live(cluster, "hooks")["status"]["containerStatuses"]}
    assert "running" in statuses["api"] and statuses["worker"]["terminated"]["finishedAt"] == "2025-01-01T00:00:05Z"
    assert ("FailedPreStopHook", "05", "PreStopHook failed") in events(cluster, "hooks")
    at(cluster, 11.999)
    assert live(cluster, "hooks") is not None
    at(cluster, 12)
    assert live(cluster, "hooks") is None
    assert terminated(final_status(cluster, "hooks"))["exitCode"] == 0


def test_a_second_delete_with_a_shorter_grace_kills_sooner_and_the_kubelet_gives_at_least_two_seconds() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(make_pod("twice", [busybox("c", ["sleep", "600"])]))
    at(cluster, 5)
    cluster.delete("v1", "Pod", "twice")  # 30 s: killed at 35
    at(cluster, 10)
    cluster.api.delete(cluster.resource("v1", "Pod"), "default", "twice", DeleteOptions(grace_period_s=1))
    assert live(cluster, "twice")["metadata"]["deletionGracePeriodSeconds"] == 1
    at(cluster, 11.999)  # the deletionTimestamp (11) passed; the kubelet's minimum 2 s has not
    assert live(cluster, "twice") is not None
    at(cluster, 12)
    assert live(cluster, "twice") is None
    assert terminated(final_status(cluster, "twice"))["finishedAt"] == "2025-01-01T00:00:12Z"
