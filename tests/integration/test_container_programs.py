"""A container whose command is a known short script runs it; an init container finishes.

``kubectl run --restart=Never … -- echo hi`` succeeds and prints ``hi``, ``sleep`` takes its time and ``exit N`` gives the exit code, as in a real
cluster; any other program keeps its image's behaviour (by default it runs forever), and
behaviour data still overrides what the command says. Times are seconds since the cluster's
epoch; the pod is created at t=0 and its container starts at t=1.
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest
from kubernetes import client

from fakekube import Cluster
from tests.integration.support import pod
from tests.integration.timeline import at

Obj = dict[str, Any]


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    with Cluster(nodes=1) as served:
        yield served


def busybox(name: str = "c", **fields: Any) -> Obj:
    return {"name": name, "image": "busybox:1.36", **fields}


def state(cluster: Cluster, name: str, kind: str = "containerStatuses", index: int = 0) -> Obj:
    return cluster.get("v1", "Pod", name)["status"][kind][index]["state"]


def phase(cluster: Cluster, name: str) -> str:
    return cluster.get("v1", "Pod", name)["status"]["phase"]


def logs(cluster: Cluster, name: str, container: str | None = None, timestamps: bool = False) -> str:
    core = client.CoreV1Api(cluster.client())
    kwargs: dict[str, Any] = {"timestamps": timestamps}
    if container is not None:
        kwargs["container"] = container
    return core.read_namespaced_pod_log(name, "default", **kwargs)


def stamp(seconds: int) -> str:
    return f"2025-01-01T00:{seconds // 60:02d}:{seconds % 60:02d}Z"


def test_kubectl_run_of_echo_with_restart_never_succeeds_and_logs_its_output(cluster: Cluster) -> None:
    # `kubectl run tmp --image=busybox --restart=Never -- echo hi` puts the words in args.
    cluster.create(pod("tmp", restartPolicy="Never", containers=[busybox(args=["echo", "hi"])]))
    at(cluster, 1)
    terminated = state(cluster, "tmp")["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (0, "Completed")
    assert terminated["startedAt"] == terminated["finishedAt"] == stamp(1)
    assert phase(cluster, "tmp") == "Succeeded"
    assert logs(cluster, "tmp") == "hi\n"


def test_a_script_takes_its_sleeps_and_exits_with_its_code(cluster: Cluster) -> None:
    script = "echo start; sleep 5; echo $GREETING from $HOSTNAME; false || exit 3"
    cluster.create(pod("script", restartPolicy="Never", containers=[
        busybox(command=["sh", "-c", script], env=[{"name": "GREETING", "value": "hello"}])]))
    at(cluster, 5)
    assert state(cluster, "script") == {"running": {"startedAt": stamp(1)}}
    assert logs(cluster, "script") == "start\n"
    at(cluster, 6)
    terminated = state(cluster, "script")["terminated"]
    assert (terminated["exitCode"], terminated["reason"], terminated["finishedAt"]) == (3, "Error", stamp(6))
    assert phase(cluster, "script") == "Failed"
    assert logs(cluster, "script", timestamps=True) == (
        "2025-01-01T00:00:01.000000000Z start\n2025-01-01T00:00:06.000000000Z hello from script\n")


def test_command_and_args_expand_the_containers_variables_as_the_kubelet_does(cluster: Cluster) -> None:
    cluster.create(pod("expand", restartPolicy="Never", containers=[
        busybox(command=["echo", "$(GREETING)"], args=["$$(GREETING)", "$(UNSET)"],
                env=[{"name": "GREETING", "value": "hello"}])]))
    at(cluster, 1)
    assert logs(cluster, "expand") == "hello $(GREETING) $(UNSET)\n"


def test_a_sleep_under_restart_always_exits_and_restarts_and_sleep_infinity_runs_on(cluster: Cluster) -> None:
    cluster.create(pod("nap", containers=[busybox(command=["sleep", "1m"])]))
    cluster.create(pod("idle", containers=[busybox(args=["sh", "-c", "echo up && sleep infinity"])]))
    at(cluster, 60)
    assert state(cluster, "nap") == {"running": {"startedAt": stamp(1)}}
    at(cluster, 61)
    assert state(cluster, "nap")["terminated"]["reason"] == "Completed"
    at(cluster, 62)  # the first exit is restarted at once (upstream's back-off), started a second later
    status = cluster.get("v1", "Pod", "nap")["status"]["containerStatuses"][0]
    assert (status["state"], status["restartCount"]) == ({"running": {"startedAt": stamp(62)}}, 1)
    assert status["lastState"]["terminated"]["finishedAt"] == stamp(61)
    at(cluster, 3600)
    assert state(cluster, "idle") == {"running": {"startedAt": stamp(1)}}
    assert logs(cluster, "idle") == "up\n"


@pytest.mark.parametrize("fields", [
    {"command": ["sh", "-c", "until false; do sleep 1; done"]},      # an endless loop
    {"image": "coredns/coredns:1.11.3", "args": ["-conf", "/etc/coredns/Corefile"]},  # args for its entrypoint
    {"command": ["sh", "-c", "tail -f /dev/null"]},
    {},
], ids=["loop", "entrypoint-args", "tail-f", "image-default"])
# (busybox has no ENTRYPOINT: args alone, or a missing /app/server, fail to start there: test_container_start_error.py)
def test_any_other_program_keeps_the_default_and_runs_forever(cluster: Cluster, fields: Obj) -> None:
    cluster.create(pod("server", containers=[busybox(**fields)]))
    at(cluster, 3600)
    assert state(cluster, "server") == {"running": {"startedAt": stamp(1)}}
    assert logs(cluster, "server") == ""


def test_an_application_images_own_command_takes_over_after_the_script_so_far(cluster: Cluster) -> None:
    cluster.create(pod("app", containers=[{"name": "c", "image": "example/myapp:1",
                                            "command": ["sh", "-c", "echo starting; exec /app/server"]}]))
    at(cluster, 3600)
    assert state(cluster, "app") == {"running": {"startedAt": stamp(1)}}
    assert logs(cluster, "app") == "starting\n"


@pytest.mark.parametrize(("fields", "exit_code", "log"), [
    ({"command": ["sh", "-c", "echo starting; exec /app/server"]}, 127, "starting\nsh: 1: /app/server: not found\n"),
    ({"command": ["sh"]}, 0, ""),                                   # a shell whose stdin (its script) is empty
    ({"command": ["sleep", "soon"]}, 1, "sleep: invalid number 'soon'\n"),
], ids=["unknown-in-busybox", "bare-shell", "bad-sleep"])
def test_a_program_a_base_image_cannot_run_fails_as_it_would(cluster: Cluster, fields: Obj, exit_code: int,
                                                             log: str) -> None:
    cluster.create(pod("broken", restartPolicy="Never", containers=[busybox(**fields)]))
    at(cluster, 5)
    assert state(cluster, "broken")["terminated"]["exitCode"] == exit_code
    assert logs(cluster, "broken") == log


def test_an_endless_loop_logs_each_round_at_its_time_and_runs_on(cluster: Cluster) -> None:
    script = """
        echo starting   # a comment
        for n in 1 2; do echo "warm-up $n"; done
        while true; do
            echo tick
            sleep 5
        done
    """
    cluster.create(pod("ticker", containers=[busybox(command=["/bin/sh", "-c"], args=[script])]))
    at(cluster, 12)
    assert logs(cluster, "ticker", timestamps=True) == "".join(
        f"2025-01-01T00:00:{second:02d}.000000000Z {text}\n"
        for second, text in ((1, "starting"), (1, "warm-up 1"), (1, "warm-up 2"), (1, "tick"), (6, "tick"), (11, "tick")))
    at(cluster, 3600)
    assert state(cluster, "ticker") == {"running": {"startedAt": stamp(1)}}
    assert logs(cluster, "ticker").count("tick") == 720


def test_behaviour_data_overrides_what_the_command_says(cluster: Cluster) -> None:
    cluster.create(pod("declared", {"run_for_s": None}, containers=[busybox(command=["echo", "hi"])]))
    at(cluster, 600)
    assert state(cluster, "declared") == {"running": {"startedAt": stamp(1)}}
    assert logs(cluster, "declared") == "hi\n"  # the fields the annotation leaves keep the command's


# -- init containers ------------------------------------------------------------------------

def test_an_init_container_finishes_at_once_by_default_and_the_pod_starts() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(pod("staged", initContainers=[busybox("init-a"), busybox("init-b")]))
    # init-a starts and exits at 1, init-b at 2, the app starts at 3.
    at(cluster, 3)
    for index, second in ((0, 1), (1, 2)):
        terminated = state(cluster, "staged", "initContainerStatuses", index)["terminated"]
        assert (terminated["exitCode"], terminated["reason"], terminated["finishedAt"]) == (0, "Completed", stamp(second))
    assert state(cluster, "staged") == {"running": {"startedAt": stamp(3)}}
    assert phase(cluster, "staged") == "Running"


def test_an_init_containers_script_decides_its_time_and_outcome(cluster: Cluster) -> None:
    cluster.create(pod("waits", initContainers=[busybox("wait", command=["sh", "-c", "echo waiting; sleep 10"])]))
    cluster.create(pod("fails", restartPolicy="Never", initContainers=[busybox("check", command=["sh", "-c", "exit 1"])]))
    at(cluster, 11)
    assert state(cluster, "waits", "initContainerStatuses")["terminated"]["finishedAt"] == stamp(11)
    assert state(cluster, "waits") == {"waiting": {"reason": "PodInitializing"}}
    at(cluster, 12)
    assert state(cluster, "waits") == {"running": {"startedAt": stamp(12)}}
    assert logs(cluster, "waits", container="wait") == "waiting\n"
    assert phase(cluster, "fails") == "Failed"
    assert state(cluster, "fails", "initContainerStatuses")["terminated"]["exitCode"] == 1


def test_a_log_request_without_a_container_names_the_init_containers_too(cluster: Cluster) -> None:
    cluster.create(pod("multi", initContainers=[busybox("setup")], containers=[busybox("a"), busybox("b")]))
    core = client.CoreV1Api(cluster.client())
    with pytest.raises(client.ApiException) as error:
        core.read_namespaced_pod_log("multi", "default")
    assert error.value.status == 400
    assert ('"a container name must be specified for pod multi, choose one of: [a b] or one of the init '
            'containers: [setup]"') in error.value.body


# -- ephemeral containers (kubectl debug) ------------------------------------------------------

def test_an_ephemeral_container_starts_runs_its_command_once_and_is_logged(cluster: Cluster) -> None:
    cluster.create(pod("web", containers=[busybox("app", command=["sleep", "infinity"])]))
    at(cluster, 10)
    core = client.CoreV1Api(cluster.client())
    core.patch_namespaced_pod_ephemeralcontainers("web", "default", {"spec": {"ephemeralContainers": [
        {"name": "debugger", "image": "busybox", "command": ["sh", "-c", "echo debugging $HOSTNAME; sleep 3"]}]}})
    at(cluster, 11)
    statuses = cluster.get("v1", "Pod", "web")["status"]["ephemeralContainerStatuses"]
    assert [(s["name"], s["state"], s["restartCount"]) for s in statuses] == [
        ("debugger", {"running": {"startedAt": stamp(11)}}, 0)]
    at(cluster, 30)
    (status,) = cluster.get("v1", "Pod", "web")["status"]["ephemeralContainerStatuses"]
    assert (status["state"]["terminated"]["finishedAt"], status["restartCount"]) == (stamp(14), 0)  # never restarted
    assert logs(cluster, "web", container="debugger") == "debugging web\n"
    assert phase(cluster, "web") == "Running"   # the phase is the app containers'
    paths = {e["involvedObject"].get("fieldPath") for e in cluster.events(involved_name="web", reason="Started")}
    assert paths == {"spec.containers{app}", "spec.ephemeralContainers{debugger}"}
