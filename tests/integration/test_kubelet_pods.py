"""The simulated kubelet's pod lifecycle at exact virtual times (upstream's texts and timings).

Default behaviour: no pull time, 1 s to create and start, runs forever, healthy. Times in
comments are seconds since the cluster's epoch; the pod is created at t=0.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from fakekube import Cluster
from tests.integration.support import pod
from fakekube.kubelet.behaviour import BEHAVIOUR_ANNOTATION
from fakekube.kubelet.logs import PodLogOptions
from fakekube.kubelet.pods import PodRunner
from fakekube.store import DELETED
from tests.integration.timeline import at

Obj = dict[str, Any]


def make_cluster() -> tuple[Cluster, PodRunner]:
    """A cluster whose nodes run pods: every cluster registers its PodRunner."""
    cluster = Cluster(nodes=2)
    return cluster, cluster.kubelets.pods





def status(cluster: Cluster, name: str) -> Obj:
    return cluster.get("v1", "Pod", name)["status"]


def container(cluster: Cluster, name: str, index: int = 0, kind: str = "containerStatuses") -> Obj:
    return status(cluster, name)[kind][index]


def condition(cluster: Cluster, name: str, kind: str) -> Obj:
    return next(c for c in status(cluster, name)["conditions"] if c["type"] == kind)


def stamp(seconds: int) -> str:
    return f"2025-01-01T00:{seconds // 60:02d}:{seconds % 60:02d}Z"


def exists(cluster: Cluster, name: str) -> bool:
    return cluster.store.get(("", "pods"), ("default", name)) is not None


# -- startup -----------------------------------------------------------------------------

def test_default_pod_is_pending_then_running_and_ready_after_one_second() -> None:
    cluster, _ = make_cluster()
    cluster.create(pod("web"))
    pending = status(cluster, "web")
    assert pending["phase"] == "Pending"
    assert pending["hostIP"] == "172.18.0.2" and pending["podIP"] == "10.224.0.2"
    assert pending["startTime"] == stamp(0) and pending["qosClass"] == "BestEffort"
    assert [c["type"] for c in pending["conditions"]] == [
        "PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"]
    assert condition(cluster, "web", "Ready") == {
        "type": "Ready", "observedGeneration": 1, "status": "False", "lastProbeTime": None, "lastTransitionTime": stamp(0),
        "reason": "ContainersNotReady", "message": "containers with unready status: [c]"}
    assert pending["containerStatuses"][0]["state"] == {"waiting": {"reason": "ContainerCreating"}}

    at(cluster, 0.5)
    assert status(cluster, "web")["phase"] == "Pending"
    at(cluster, 1)
    running = status(cluster, "web")
    assert running["phase"] == "Running"
    assert condition(cluster, "web", "Ready") == {
        "type": "Ready", "observedGeneration": 1, "status": "True", "lastProbeTime": None, "lastTransitionTime": stamp(1)}
    assert condition(cluster, "web", "PodScheduled")["lastTransitionTime"] == stamp(0)
    c = running["containerStatuses"][0]
    assert c["state"] == {"running": {"startedAt": stamp(1)}}
    assert (c["ready"], c["started"], c["restartCount"]) == (True, True, 0)
    assert c["image"] == "docker.io/library/nginx:1.27"
    assert c["imageID"].startswith("docker.io/library/nginx@sha256:")
    assert c["containerID"].startswith("containerd://") and len(c["containerID"]) == len("containerd://") + 64


def test_pod_ips_are_the_next_free_addresses_of_each_node_cidr() -> None:
    cluster, _ = make_cluster()
    for name, node in (("a", "node-1"), ("b", "node-1"), ("c", "node-2")):
        cluster.create(pod(name, node=node))
    assert [status(cluster, n)["podIP"] for n in "abc"] == ["10.224.0.2", "10.224.0.3", "10.224.1.2"]
    assert status(cluster, "c")["hostIP"] == "172.18.0.3"


def test_a_status_write_happens_only_when_something_changed() -> None:
    cluster, _ = make_cluster()
    cluster.create(pod("quiet"))
    at(cluster, 1)
    rv = cluster.get("v1", "Pod", "quiet")["metadata"]["resourceVersion"]
    at(cluster, 600)
    assert cluster.get("v1", "Pod", "quiet")["metadata"]["resourceVersion"] == rv


def test_init_containers_run_in_order_each_to_completion() -> None:
    cluster, _ = make_cluster()
    inits = [{"name": "init-a", "image": "busybox"}, {"name": "init-b", "image": "busybox"}]
    cluster.create(pod("staged", {"init-a": {"run_for_s": 2}, "init-b": {"run_for_s": 3}}, initContainers=inits))
    # init-a runs 1..3, init-b 4..7, the app starts at 8.
    at(cluster, 2)
    assert status(cluster, "staged")["phase"] == "Pending"
    assert container(cluster, "staged", 0, "initContainerStatuses")["state"] == {"running": {"startedAt": stamp(1)}}
    assert container(cluster, "staged", 1, "initContainerStatuses")["state"] == {"waiting": {"reason": "PodInitializing"}}
    assert container(cluster, "staged")["state"] == {"waiting": {"reason": "PodInitializing"}}
    assert condition(cluster, "staged", "Initialized") == {
        "type": "Initialized", "observedGeneration": 1, "status": "False", "lastProbeTime": None, "lastTransitionTime": stamp(0),
        "reason": "ContainersNotInitialized", "message": "containers with incomplete status: [init-a init-b]"}
    at(cluster, 5)
    first = container(cluster, "staged", 0, "initContainerStatuses")["state"]["terminated"]
    assert (first["exitCode"], first["reason"], first["startedAt"], first["finishedAt"]) == (0, "Completed", stamp(1), stamp(3))
    assert container(cluster, "staged", 1, "initContainerStatuses")["state"] == {"running": {"startedAt": stamp(4)}}
    at(cluster, 7)
    assert condition(cluster, "staged", "Initialized")["status"] == "True"
    assert condition(cluster, "staged", "Initialized")["lastTransitionTime"] == stamp(7)
    assert status(cluster, "staged")["phase"] == "Pending"
    at(cluster, 8)
    assert status(cluster, "staged")["phase"] == "Running"
    assert container(cluster, "staged")["state"] == {"running": {"startedAt": stamp(8)}}


def test_a_failed_init_container_fails_the_pod_under_restart_policy_never() -> None:
    cluster, _ = make_cluster()
    cluster.create(pod("broken", {"init": {"run_for_s": 1, "exit_code": 2}}, restartPolicy="Never",
                       initContainers=[{"name": "init", "image": "busybox"}]))
    at(cluster, 2)
    assert status(cluster, "broken")["phase"] == "Failed"
    assert container(cluster, "broken")["state"] == {"waiting": {"reason": "PodInitializing"}}


# -- exits and restarts -------------------------------------------------------------------

def test_a_crashing_container_restarts_on_the_crash_loop_back_off_curve() -> None:
    cluster, _ = make_cluster()
    created = cluster.create(pod("crash", {"start_delay_s": 0, "run_for_s": 5, "exit_code": 1}))
    uid = created["metadata"]["uid"]
    # Runs 0..5; upstream restarts the first crash at once (5..10), then waits 10 s (20..25),
    # 20 s (45..50), 40 s (90..).
    at(cluster, 5)
    assert container(cluster, "crash")["restartCount"] == 1
    assert container(cluster, "crash")["state"] == {"running": {"startedAt": stamp(5)}}
    at(cluster, 12)
    c = container(cluster, "crash")
    assert c["state"] == {"waiting": {"reason": "CrashLoopBackOff", "message":
                                      f"back-off 10s restarting failed container=c pod=crash_default({uid})"}}
    assert c["lastState"]["terminated"]["exitCode"] == 1 and c["lastState"]["terminated"]["reason"] == "Error"
    assert c["lastState"]["terminated"]["finishedAt"] == stamp(10)
    assert status(cluster, "crash")["phase"] == "Running"
    assert condition(cluster, "crash", "Ready")["status"] == "False"
    for before, restart, count in ((19, 20, 2), (44, 45, 3), (89, 90, 4)):
        at(cluster, before)
        assert "waiting" in container(cluster, "crash")["state"]
        at(cluster, restart)
        assert container(cluster, "crash")["state"] == {"running": {"startedAt": stamp(restart)}}
        assert container(cluster, "crash")["restartCount"] == count
    at(cluster, 96)  # the crash at 95 waits 80 s, written as Go prints durations
    assert "back-off 1m20s restarting" in container(cluster, "crash")["state"]["waiting"]["message"]


@pytest.mark.parametrize(("policy", "exit_code", "phase"), [
    ("OnFailure", 0, "Succeeded"), ("Never", 0, "Succeeded"), ("Never", 1, "Failed"), ("Always", 0, "Running")])
def test_exits_end_the_pod_as_its_restart_policy_says(policy: str, exit_code: int, phase: str) -> None:
    cluster, _ = make_cluster()
    cluster.create(pod("job", {"run_for_s": 3, "exit_code": exit_code}, restartPolicy=policy))
    at(cluster, 3.5)
    assert status(cluster, "job")["phase"] == "Running"
    at(cluster, 4)
    assert status(cluster, "job")["phase"] == phase
    if phase != "Running":
        terminated = container(cluster, "job")["state"]["terminated"]
        assert terminated["exitCode"] == exit_code
        assert terminated["reason"] == ("Completed" if exit_code == 0 else "Error")
        ready = condition(cluster, "job", "Ready")
        assert (ready["status"], ready["reason"]) == ("False", "PodCompleted" if phase == "Succeeded" else "PodFailed")
        assert condition(cluster, "job", "PodReadyToStartContainers")["status"] == "False"


def test_on_failure_restarts_a_failed_container() -> None:
    cluster, _ = make_cluster()
    cluster.create(pod("retry", {"run_for_s": 3, "exit_code": 1}, restartPolicy="OnFailure"))
    at(cluster, 5)  # exited at 4, restarted at once: running again from 5
    assert status(cluster, "retry")["phase"] == "Running"
    assert container(cluster, "retry")["restartCount"] == 1


# -- probes --------------------------------------------------------------------------------

def test_readiness_follows_the_probe_timeline() -> None:
    cluster, _ = make_cluster()
    probe = {"exec": {"command": ["true"]}, "periodSeconds": 10, "failureThreshold": 3}
    cluster.create(pod("flaky", {"readiness": [[0, True], [30, False]]},
                       containers=[{"name": "c", "image": "nginx", "readinessProbe": probe}]))
    # Started at 1; probes at +0, +10, ...: ready at +0; unhealthy from +30, third failure at +50.
    at(cluster, 1)
    assert condition(cluster, "flaky", "Ready")["status"] == "True"
    at(cluster, 50)
    assert container(cluster, "flaky")["ready"] is True
    at(cluster, 51)
    assert container(cluster, "flaky")["ready"] is False
    assert condition(cluster, "flaky", "Ready") == {
        "type": "Ready", "observedGeneration": 1, "status": "False", "lastProbeTime": None, "lastTransitionTime": stamp(51),
        "reason": "ContainersNotReady", "message": "containers with unready status: [c]"}
    assert status(cluster, "flaky")["phase"] == "Running"


def test_ready_after_a_delay_on_the_next_probe_tick() -> None:
    cluster, _ = make_cluster()
    probe = {"exec": {"command": ["true"]}, "periodSeconds": 5}
    cluster.create(pod("slow", {"ready_after_s": 12},
                       containers=[{"name": "c", "image": "nginx", "readinessProbe": probe}]))
    at(cluster, 15)
    assert container(cluster, "slow")["ready"] is False and container(cluster, "slow")["started"] is True
    at(cluster, 16)  # probe at +15 is the first healthy one
    assert container(cluster, "slow")["ready"] is True


def test_a_liveness_failure_kills_and_restarts_the_container() -> None:
    cluster, _ = make_cluster()
    probe = {"exec": {"command": ["true"]}, "periodSeconds": 10, "failureThreshold": 3}
    cluster.create(pod("stuck", {"liveness": [[20, False]]},
                       containers=[{"name": "c", "image": "nginx", "livenessProbe": probe}]))
    # Started at 1; failures at +20, +30, +40: killed at 41, restarted at once, running at 42.
    at(cluster, 41)
    killed = container(cluster, "stuck")["state"]["terminated"]
    assert (killed["exitCode"], killed["reason"], killed["finishedAt"]) == (137, "Error", stamp(41))
    at(cluster, 42)
    c = container(cluster, "stuck")
    assert c["state"] == {"running": {"startedAt": stamp(42)}} and c["restartCount"] == 1
    assert c["lastState"]["terminated"]["exitCode"] == 137


# -- deletion ------------------------------------------------------------------------------

def _final_status(cluster: Cluster, name: str) -> Obj:
    """The status the pod had when it was removed (the kubelet writes it just before)."""
    deleted = [ch for ch in cluster.store.changes_since(0) if ch.type == DELETED and ch.name == name]
    return deleted[-1].obj["status"]


def test_graceful_deletion_stops_containers_then_removes_the_pod() -> None:
    cluster, runner = make_cluster()
    cluster.create(pod("bye", {"stop_delay_s": 3}))
    at(cluster, 5)
    cluster.delete("v1", "Pod", "bye")  # terminationGracePeriodSeconds 30 by default
    assert cluster.get("v1", "Pod", "bye")["metadata"]["deletionGracePeriodSeconds"] == 30
    at(cluster, 7.5)
    assert exists(cluster, "bye")
    at(cluster, 8)
    assert not exists(cluster, "bye")
    final = _final_status(cluster, "bye")
    assert final["phase"] == "Succeeded"
    assert final["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 0
    assert len(runner) == 0


def test_a_container_slower_than_the_grace_period_is_killed_at_its_end() -> None:
    cluster, _ = make_cluster()
    cluster.create(pod("slowstop", {"stop_delay_s": 100}, terminationGracePeriodSeconds=10))
    at(cluster, 5)
    cluster.delete("v1", "Pod", "slowstop")
    at(cluster, 14)
    assert exists(cluster, "slowstop")
    at(cluster, 15)
    assert not exists(cluster, "slowstop")
    final = _final_status(cluster, "slowstop")
    assert final["phase"] == "Failed"
    assert final["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 137


def test_the_pod_ip_is_released_with_the_pod() -> None:
    cluster, _ = make_cluster()
    cluster.create(pod("first"))
    cluster.delete("v1", "Pod", "first")  # Pending: still graceful (bound), stops at once
    assert not exists(cluster, "first")
    cluster.create(pod("second"))
    assert status(cluster, "second")["podIP"] == "10.224.0.3"  # host-local: round-robin, no instant reuse


# -- image pulls -----------------------------------------------------------------------------

def test_a_failing_pull_shows_err_image_pull_then_image_pull_back_off() -> None:
    cluster, _ = make_cluster()
    cluster.create(pod("pull", {"image_pull_error": True, "image_pull_failures": 2},
                       containers=[{"name": "c", "image": "example/app:bad"}]))
    waiting = container(cluster, "pull")["state"]["waiting"]
    assert waiting["reason"] == "ErrImagePull"
    reference = "docker.io/example/app:bad"
    error = (f'rpc error: code = NotFound desc = failed to pull and unpack image "{reference}": '
             f'failed to resolve reference "{reference}": {reference}: not found')
    assert waiting["message"] == error
    at(cluster, 1)
    assert container(cluster, "pull")["state"] == {
        "waiting": {"reason": "ImagePullBackOff",
                    "message": f'Back-off pulling image "example/app:bad": ErrImagePull: {error}'}}
    assert status(cluster, "pull")["phase"] == "Pending"
    at(cluster, 10)  # retry after 10 s fails again; the next waits 20 s
    assert container(cluster, "pull")["state"]["waiting"]["reason"] == "ErrImagePull"
    at(cluster, 11)
    assert container(cluster, "pull")["state"]["waiting"]["reason"] == "ImagePullBackOff"
    at(cluster, 30)  # third pull succeeds
    assert container(cluster, "pull")["state"]["waiting"]["reason"] == "ImagePullBackOff"
    at(cluster, 31)
    assert container(cluster, "pull")["state"] == {"running": {"startedAt": stamp(31)}}


def test_back_off_names_the_image_as_the_spec_wrote_it() -> None:
    cluster, _ = make_cluster()
    cluster.create(pod("untagged", {"image_pull_error": True}, containers=[{"name": "c", "image": "nope"}]))
    at(cluster, 1)
    message = container(cluster, "untagged")["state"]["waiting"]["message"]
    assert message.startswith('Back-off pulling image "nope": ErrImagePull: ')  # then the last pull's error



# -- nodes that are not simulated or down ---------------------------------------------------

def test_pods_on_unknown_or_stopped_nodes_are_left_alone_until_the_kubelet_returns() -> None:
    cluster, runner = make_cluster()
    cluster.create(pod("ghost", node="no-such-node"))
    assert status(cluster, "ghost") == {"phase": "Pending", "qosClass": "BestEffort"}
    cluster.fail_node("node-2")
    cluster.create(pod("frozen", node="node-2"))
    at(cluster, 5)
    assert "containerStatuses" not in status(cluster, "frozen")
    cluster.recover_node("node-2")  # the kubelet catches up with its pods at once
    assert status(cluster, "frozen")["startTime"] == stamp(5)  # the kubelet first saw it now
    at(cluster, 6)
    assert status(cluster, "frozen")["phase"] == "Running"
    assert status(cluster, "ghost") == {"phase": "Pending", "qosClass": "BestEffort"}


# -- logs -------------------------------------------------------------------------------------

def test_logs_follow_the_container_start_time() -> None:
    cluster, runner = make_cluster()
    cluster.create(pod("talk", {"log_lines": [[0, "hello"], [2, "world"]]}))
    with pytest.raises(ValueError, match='container "c" in pod "talk" is waiting to start: ContainerCreating'):
        runner.logs("default", "talk", None, PodLogOptions(), cluster.now)
    at(cluster, 2)
    assert runner.logs("default", "talk", "c", PodLogOptions(), cluster.now) == b"hello\n"
    at(cluster, 3)
    assert runner.logs("default", "talk", None, PodLogOptions(), cluster.now) == b"hello\nworld\n"
    with pytest.raises(ValueError, match="previous terminated container"):
        runner.logs("default", "talk", None, PodLogOptions(previous=True), cluster.now)
