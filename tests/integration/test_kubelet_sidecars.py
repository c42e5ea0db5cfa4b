"""Native sidecars (init containers with ``restartPolicy: Always``, KEP-753) at exact virtual times.

Every container's behaviour is set explicitly (no pull time, 1 s to create and start, and
its own run time), so these timings do not lean on the catalog's defaults. Times in
comments are seconds since the cluster's epoch; the pod is created at t=0.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from fakekube import Cluster
from fakekube.kubelet.behaviour import BEHAVIOUR_ANNOTATION
from fakekube.store import DELETED
from tests.integration.support import pod
from tests.integration.timeline import at

Obj = dict[str, Any]

FOREVER = {"run_for_s": None}
TIMING = {"pull_delay_s": 0, "start_delay_s": 1}


def sidecar(name: str, **fields: Any) -> Obj:
    return {"name": name, "image": "envoyproxy/envoy:v1.30.0", "restartPolicy": "Always", **fields}


def init(name: str) -> Obj:
    return {"name": name, "image": "busybox"}


APP = [{"name": "app", "image": "my/app:1"}]


def make_pod(name: str, behaviour: Obj, inits: list[Obj], **spec: Any) -> Obj:
    return pod(name, {**TIMING, **behaviour}, initContainers=inits, containers=spec.pop("containers", APP), **spec)


def status(cluster: Cluster, name: str) -> Obj:
    return cluster.get("v1", "Pod", name)["status"]


def init_status(cluster: Cluster, name: str, container: str) -> Obj:
    return next(c for c in status(cluster, name)["initContainerStatuses"] if c["name"] == container)


def app_status(cluster: Cluster, name: str) -> Obj:
    return status(cluster, name)["containerStatuses"][0]


def condition(cluster: Cluster, name: str, kind: str) -> Obj:
    return next(c for c in status(cluster, name)["conditions"] if c["type"] == kind)


def brief(condition: Obj) -> tuple[str, str, str]:
    return condition["status"], condition.get("reason", ""), condition.get("message", "")


def stamp(seconds: int) -> str:
    return f"2025-01-01T00:{seconds // 60:02d}:{seconds % 60:02d}Z"


def events(cluster: Cluster, name: str, reason: str) -> list[tuple[str, str, str]]:
    """(fieldPath, lastTimestamp, message) of the pod's events with ``reason``, in order."""
    return [(e["involvedObject"]["fieldPath"], e["lastTimestamp"], e["message"])
            for e in cluster.events(involved_name=name, reason=reason)]


def terminated(cluster: Cluster, name: str, container: str) -> tuple[int, str, str]:
    state = init_status(cluster, name, container)["state"]["terminated"]
    return state["exitCode"], state["reason"], state["finishedAt"]


def exists(cluster: Cluster, name: str) -> bool:
    return cluster.store.get(("", "pods"), ("default", name)) is not None


# -- startup ----------------------------------------------------------------------------------

def test_a_sidecar_runs_in_its_turn_and_the_next_container_starts_once_it_runs() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(make_pod("mesh", {"init-a": {"run_for_s": 2}, "proxy": FOREVER, "init-b": {"run_for_s": 2},
                                     "app": FOREVER},
                            [init("init-a"), sidecar("proxy"), init("init-b")]))
    # init-a runs 1..3; proxy starts at 4 and keeps running; init-b runs 5..7; the app from 8.
    at(cluster, 3)
    assert init_status(cluster, "mesh", "proxy")["state"] == {"waiting": {"reason": "PodInitializing"}}
    at(cluster, 5)
    proxy = init_status(cluster, "mesh", "proxy")
    assert proxy["state"] == {"running": {"startedAt": stamp(4)}}
    assert (proxy["started"], proxy["ready"], proxy["restartCount"]) == (True, True, 0)
    init_b = init_status(cluster, "mesh", "init-b")
    assert init_b["state"] == {"running": {"startedAt": stamp(5)}}
    assert (init_b["started"], init_b["ready"]) == (True, False)  # a regular init container is ready once done
    assert status(cluster, "mesh")["phase"] == "Pending"
    assert brief(condition(cluster, "mesh", "Initialized")) == (
        "False", "ContainersNotInitialized", "containers with incomplete status: [init-b]")
    at(cluster, 8)
    assert status(cluster, "mesh")["phase"] == "Running"
    assert app_status(cluster, "mesh")["state"] == {"running": {"startedAt": stamp(8)}}
    assert init_status(cluster, "mesh", "proxy")["state"] == {"running": {"startedAt": stamp(4)}}
    assert [c["ready"] for c in status(cluster, "mesh")["initContainerStatuses"]] == [True, True, True]
    assert condition(cluster, "mesh", "Initialized")["status"] == "True"
    assert condition(cluster, "mesh", "Initialized")["lastTransitionTime"] == stamp(7)
    assert brief(condition(cluster, "mesh", "Ready")) == ("True", "", "")
    assert [(reason, path, when) for reason in ("Pulling", "Pulled", "Created", "Started")
            for path, when, _ in events(cluster, "mesh", reason) if path == "spec.initContainers{proxy}"] == [
        ("Pulling", "spec.initContainers{proxy}", stamp(3)), ("Pulled", "spec.initContainers{proxy}", stamp(3)),
        ("Created", "spec.initContainers{proxy}", stamp(4)), ("Started", "spec.initContainers{proxy}", stamp(4))]


def test_a_sidecars_startup_probe_holds_the_next_container_until_it_passes() -> None:
    cluster = Cluster(nodes=1)
    probe = {"exec": {"command": ["true"]}, "periodSeconds": 5, "failureThreshold": 10}
    cluster.create(make_pod("slow", {"proxy": {"run_for_s": None, "startup": [[0, False], [12, True]]},
                                     "app": FOREVER},
                            [sidecar("proxy", startupProbe=probe)]))
    # proxy runs from 1; startup probes at +0, +5, +10 fail, +15 passes: started at 16, the app runs from 17.
    at(cluster, 15)
    proxy = init_status(cluster, "slow", "proxy")
    assert proxy["state"] == {"running": {"startedAt": stamp(1)}}
    assert (proxy["started"], proxy["ready"]) == (False, False)
    assert app_status(cluster, "slow")["state"] == {"waiting": {"reason": "PodInitializing"}}
    assert status(cluster, "slow")["phase"] == "Pending"
    assert brief(condition(cluster, "slow", "Initialized")) == (
        "False", "ContainersNotInitialized", "containers with incomplete status: [proxy]")
    assert brief(condition(cluster, "slow", "ContainersReady")) == (
        "False", "ContainersNotReady", "containers with unready status: [proxy app]")
    at(cluster, 16)
    assert (init_status(cluster, "slow", "proxy")["started"], init_status(cluster, "slow", "proxy")["ready"]) == (
        True, True)
    assert condition(cluster, "slow", "Initialized")["lastTransitionTime"] == stamp(16)
    at(cluster, 17)
    assert app_status(cluster, "slow")["state"] == {"running": {"startedAt": stamp(17)}}
    assert status(cluster, "slow")["phase"] == "Running"


def test_a_sidecar_failing_its_startup_probe_is_killed_and_restarted() -> None:
    cluster = Cluster(nodes=1)
    probe = {"exec": {"command": ["true"]}, "periodSeconds": 5, "failureThreshold": 2}
    cluster.create(make_pod("stuck", {"proxy": {"run_for_s": None, "startup": False}, "app": FOREVER},
                            [sidecar("proxy", startupProbe=probe)], restartPolicy="Never"))
    # Runs from 1; probes at +0 and +5 fail: killed at 6, restarted at once, running again from 7.
    at(cluster, 7)
    proxy = init_status(cluster, "stuck", "proxy")
    assert proxy["state"] == {"running": {"startedAt": stamp(7)}} and proxy["restartCount"] == 1
    assert proxy["lastState"]["terminated"]["exitCode"] == 137
    assert ("spec.initContainers{proxy}", stamp(6), "Init container proxy failed startup probe") in events(
        cluster, "stuck", "Killing")
    assert status(cluster, "stuck")["phase"] == "Pending"
    assert app_status(cluster, "stuck")["state"] == {"waiting": {"reason": "PodInitializing"}}


def test_a_sidecar_failing_its_liveness_probe_is_killed_and_restarted_beside_the_app() -> None:
    cluster = Cluster(nodes=1)
    probe = {"exec": {"command": ["true"]}, "periodSeconds": 5, "failureThreshold": 2}
    cluster.create(make_pod("sick", {"proxy": {"run_for_s": None, "liveness": [[5, False]]}, "app": FOREVER},
                            [sidecar("proxy", livenessProbe=probe)], restartPolicy="Never"))
    # proxy runs from 1 (the app from 2); probes at +5 and +10 fail: killed at 11, running again from 12.
    at(cluster, 12)
    proxy = init_status(cluster, "sick", "proxy")
    assert proxy["state"] == {"running": {"startedAt": stamp(12)}} and proxy["restartCount"] == 1
    assert ("spec.initContainers{proxy}", stamp(11), "Init container proxy failed liveness probe") in events(
        cluster, "sick", "Killing")
    assert app_status(cluster, "sick")["state"] == {"running": {"startedAt": stamp(2)}}
    assert status(cluster, "sick")["phase"] == "Running"


# -- restarts and readiness ----------------------------------------------------------------------

def test_a_sidecar_restarts_whenever_it_exits_whatever_the_pod_restart_policy() -> None:
    cluster = Cluster(nodes=1)
    created = cluster.create(make_pod("relay", {"proxy": {"run_for_s": 5, "exit_code": 0}, "app": FOREVER},
                                      [sidecar("proxy")], restartPolicy="Never"))
    uid = created["metadata"]["uid"]
    # proxy runs 1..6 (the app from 2), restarts at once (7..12), then waits out 10 s of back-off: 23.
    at(cluster, 7)
    assert init_status(cluster, "relay", "proxy")["restartCount"] == 1
    at(cluster, 15)
    proxy = init_status(cluster, "relay", "proxy")
    assert proxy["state"] == {"waiting": {"reason": "CrashLoopBackOff", "message":
                                          f"back-off 10s restarting failed container=proxy pod=relay_default({uid})"}}
    assert (proxy["lastState"]["terminated"]["exitCode"], proxy["lastState"]["terminated"]["reason"]) == (
        0, "Completed")
    assert (proxy["started"], proxy["ready"]) == (False, False)
    assert status(cluster, "relay")["phase"] == "Running"
    assert app_status(cluster, "relay")["state"] == {"running": {"startedAt": stamp(2)}}
    # The app ran, so the pod stays initialized while its sidecar restarts; it is not ready.
    assert brief(condition(cluster, "relay", "Initialized")) == ("True", "", "")
    assert condition(cluster, "relay", "Initialized")["lastTransitionTime"] == stamp(1)
    assert brief(condition(cluster, "relay", "Ready")) == (
        "False", "ContainersNotReady", "containers with unready status: [proxy]")
    assert events(cluster, "relay", "BackOff")[0][::2] == (
        "spec.initContainers{proxy}", f"Back-off restarting failed container proxy in pod relay_default({uid})")
    at(cluster, 23)
    proxy = init_status(cluster, "relay", "proxy")
    assert proxy["state"] == {"running": {"startedAt": stamp(23)}} and proxy["restartCount"] == 2
    assert condition(cluster, "relay", "Ready")["status"] == "True"


def test_the_pod_is_ready_only_when_its_sidecars_are() -> None:
    cluster = Cluster(nodes=1)
    probe = {"exec": {"command": ["true"]}, "periodSeconds": 5}
    cluster.create(make_pod("gated", {"proxy": {"run_for_s": None, "ready_after_s": 12}, "app": FOREVER},
                            [sidecar("proxy", readinessProbe=probe)]))
    # A readiness probe does not hold the app: proxy runs from 1, the app from 2; proxy is ready at 16 (+15).
    at(cluster, 10)
    assert app_status(cluster, "gated")["ready"] is True
    assert init_status(cluster, "gated", "proxy")["started"] is True
    assert init_status(cluster, "gated", "proxy")["ready"] is False
    assert status(cluster, "gated")["phase"] == "Running"
    for kind in ("Ready", "ContainersReady"):
        assert brief(condition(cluster, "gated", kind)) == (
            "False", "ContainersNotReady", "containers with unready status: [proxy]")
    at(cluster, 16)
    assert condition(cluster, "gated", "Ready") == {
        "type": "Ready", "observedGeneration": 1, "status": "True", "lastProbeTime": None, "lastTransitionTime": stamp(16)}


# -- the pod ends ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("policy", "exit_code", "phase"), [
    ("Never", 0, "Succeeded"), ("OnFailure", 0, "Succeeded"), ("Never", 1, "Failed")])
def test_when_the_app_is_done_the_sidecars_stop_last_declared_first(policy: str, exit_code: int,
                                                                    phase: str) -> None:
    cluster = Cluster(nodes=1)
    stopping = {"run_for_s": None, "stop_delay_s": 3}
    cluster.create(make_pod("batch", {"proxy": stopping, "log": stopping, "app": {"run_for_s": 10,
                                                                                  "exit_code": exit_code}},
                            [sidecar("proxy"), sidecar("log")], restartPolicy=policy))
    # proxy from 1, log from 2, the app 3..13; then log stops 13..16 and proxy 16..19.
    at(cluster, 13)
    assert status(cluster, "batch")["phase"] == "Running"
    assert events(cluster, "batch", "Killing") == [
        ("spec.initContainers{log}", stamp(13), "Stopping container log"),
        ("spec.initContainers{proxy}", stamp(13), "Stopping container proxy")]
    at(cluster, 16)
    assert terminated(cluster, "batch", "log") == (0, "Completed", stamp(16))
    assert init_status(cluster, "batch", "proxy")["state"] == {"running": {"startedAt": stamp(1)}}
    at(cluster, 18.5)
    assert status(cluster, "batch")["phase"] == "Running"
    at(cluster, 19)
    assert status(cluster, "batch")["phase"] == phase
    assert terminated(cluster, "batch", "proxy") == (0, "Completed", stamp(19))
    assert [c["restartCount"] for c in status(cluster, "batch")["initContainerStatuses"]] == [0, 0]
    reason = "PodCompleted" if phase == "Succeeded" else "PodFailed"
    assert brief(condition(cluster, "batch", "Ready")) == ("False", reason, "")
    assert brief(condition(cluster, "batch", "Initialized"))[0] == "True"
    at(cluster, 120)
    assert init_status(cluster, "batch", "proxy")["restartCount"] == 0  # stopped for good


def test_a_sidecar_outliving_the_grace_period_is_killed_and_does_not_fail_the_pod() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(make_pod("linger", {"proxy": {"run_for_s": None, "stop_delay_s": 60}, "app": {"run_for_s": 10}},
                            [sidecar("proxy")], restartPolicy="Never", terminationGracePeriodSeconds=5))
    # The app runs 2..12; proxy is asked to stop at 12 and killed when the 5 s grace ends.
    at(cluster, 16)
    assert status(cluster, "linger")["phase"] == "Running"
    at(cluster, 17)
    assert terminated(cluster, "linger", "proxy") == (137, "Error", stamp(17))
    assert status(cluster, "linger")["phase"] == "Succeeded"


def test_a_failed_init_container_under_never_stops_the_sidecars_started_before_it() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(make_pod("broken", {"proxy": FOREVER, "setup": {"run_for_s": 1, "exit_code": 2}, "app": FOREVER},
                            [sidecar("proxy"), init("setup")], restartPolicy="Never"))
    # proxy from 1; setup runs 2..3 and fails: the pod fails and proxy is stopped at 3.
    at(cluster, 3)
    assert status(cluster, "broken")["phase"] == "Failed"
    assert terminated(cluster, "broken", "proxy") == (0, "Completed", stamp(3))
    assert ("spec.initContainers{proxy}", stamp(3), "Stopping container proxy") in events(
        cluster, "broken", "Killing")
    assert app_status(cluster, "broken")["state"] == {"waiting": {"reason": "PodInitializing"}}


def test_a_job_whose_pod_has_a_sidecar_completes_once_the_sidecar_is_stopped() -> None:
    cluster = Cluster(nodes=1)
    behaviour = {**TIMING, "proxy": {"run_for_s": None, "stop_delay_s": 3}, "app": {"run_for_s": 5}}
    template = {"metadata": {"annotations": {BEHAVIOUR_ANNOTATION: json.dumps(behaviour)}},
                "spec": {"restartPolicy": "Never", "initContainers": [sidecar("proxy")], "containers": APP}}
    cluster.create({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "once", "namespace": "default"},
                    "spec": {"template": template}})
    # proxy from 1, the app 2..7; proxy is stopped 7..10, then the pod succeeds and the Job completes.
    at(cluster, 9)
    job = cluster.get("batch/v1", "Job", "once")
    assert not job["status"].get("conditions") and job["status"]["active"] == 1
    at(cluster, 10)
    job = cluster.get("batch/v1", "Job", "once")
    complete = next(c for c in job["status"]["conditions"] if c["type"] == "Complete")
    assert (complete["status"], complete["lastTransitionTime"]) == ("True", stamp(10))
    assert (job["status"]["succeeded"], job["status"]["completionTime"]) == (1, stamp(10))
    [job_pod] = cluster.list("v1", "Pod", "default")
    assert job_pod["status"]["phase"] == "Succeeded"


# -- deletion ----------------------------------------------------------------------------------------

def _final_status(cluster: Cluster, name: str) -> Obj:
    """The status the pod had when it was removed (the kubelet writes it just before)."""
    deleted = [ch for ch in cluster.store.changes_since(0) if ch.type == DELETED and ch.name == name]
    return deleted[-1].obj["status"]


def _final_terminations(cluster: Cluster, name: str) -> dict[str, tuple[int, str]]:
    final = _final_status(cluster, name)
    return {c["name"]: (c["state"]["terminated"]["exitCode"], c["state"]["terminated"]["finishedAt"])
            for c in final["initContainerStatuses"] + final["containerStatuses"]}


def test_deleting_a_pod_stops_the_app_first_then_the_sidecars_last_declared_first() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(make_pod("web", {"proxy": {"run_for_s": None, "stop_delay_s": 2},
                                    "log": {"run_for_s": None, "stop_delay_s": 2},
                                    "app": {"run_for_s": None, "stop_delay_s": 5}},
                            [sidecar("proxy"), sidecar("log")]))
    at(cluster, 10)
    cluster.delete("v1", "Pod", "web")  # grace 30: the app stops 10..15, log 15..17, proxy 17..19
    assert [(path, when) for path, when, _ in events(cluster, "web", "Killing")] == [
        ("spec.containers{app}", stamp(10)), ("spec.initContainers{log}", stamp(10)),
        ("spec.initContainers{proxy}", stamp(10))]
    at(cluster, 18)
    assert exists(cluster, "web")
    at(cluster, 19)
    assert not exists(cluster, "web")
    assert _final_terminations(cluster, "web") == {"app": (0, stamp(15)), "log": (0, stamp(17)),
                                                   "proxy": (0, stamp(19))}
    assert _final_status(cluster, "web")["phase"] == "Succeeded"


def test_a_sidecar_whose_turn_comes_at_the_end_of_the_grace_still_gets_two_seconds() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(make_pod("slow-stop", {"proxy": FOREVER, "log": {"run_for_s": None, "stop_delay_s": 5},
                                          "app": {"run_for_s": None, "stop_delay_s": 60}},
                            [sidecar("proxy"), sidecar("log")], terminationGracePeriodSeconds=10))
    at(cluster, 10)
    cluster.delete("v1", "Pod", "slow-stop")
    # The app is killed when the grace ends (20); log's turn comes then and it gets the 2 s
    # minimum (killed at 22); proxy stopped waiting for log at 20 and stops at once.
    at(cluster, 21)
    assert exists(cluster, "slow-stop")
    at(cluster, 22)
    assert not exists(cluster, "slow-stop")
    assert _final_terminations(cluster, "slow-stop") == {"app": (137, stamp(20)), "log": (137, stamp(22)),
                                                         "proxy": (0, stamp(20))}
