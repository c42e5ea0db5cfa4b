"""The kubelet's event texts are upstream's, and each container step records them at its instant."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from fakekube.clock import DEFAULT_EPOCH
from fakekube.kubelet import ContainerBehaviour, Timeline
from fakekube.kubelet import events as texts
from fakekube.kubelet.backoff import ImagePullBackoff, RestartBackoff
from fakekube.kubelet.containers import ContainerRun, RunContext
from fakekube.kubelet.events import EventText
from fakekube.kubelet.probefailures import LIVENESS, READINESS, STARTUP, ProbeFailures
from fakekube.kubelet.probes import plan_probes


def at(seconds: float) -> datetime:
    return DEFAULT_EPOCH + timedelta(seconds=seconds)


# -- texts ---------------------------------------------------------------------------------

@pytest.mark.parametrize("seconds,text", [
    (0, "0s"), (0.0004, "0s"), (0.5, "500ms"), (1, "1s"), (1.5617, "1.561s"), (62.25, "1m2.25s"),
    (3600, "1h0m0s"), (3723.1, "1h2m3.1s"),
])
def test_durations_print_as_go_prints_them_truncated_to_milliseconds(seconds: float, text: str) -> None:
    assert texts.go_duration(seconds) == text


def test_texts_are_upstreams() -> None:
    assert texts.pulling("nginx") == EventText("Normal", "Pulling", 'Pulling image "nginx"')
    size = texts.image_size_bytes("nginx")
    assert texts.pulled("nginx", 1.5) == EventText(
        "Normal", "Pulled", f'Successfully pulled image "nginx" in 1.5s (1.5s including waiting). Image size: {size} bytes.')
    assert texts.already_present("nginx:1.27").message == 'Container image "nginx:1.27" already present on machine'
    assert texts.pull_failed("x", "boom") == EventText("Warning", "Failed", 'Failed to pull image "x": boom')
    assert texts.start_error("ErrImagePull") == EventText("Warning", "Failed", "Error: ErrImagePull")
    assert texts.pull_backoff("x") == EventText("Normal", "BackOff", 'Back-off pulling image "x"')
    assert texts.created("c") == EventText("Normal", "Created", "Created container: c")
    assert texts.started("c") == EventText("Normal", "Started", "Started container c")
    assert texts.stopping("c") == EventText("Normal", "Killing", "Stopping container c")
    assert texts.probe_kill("c", "liveness", True).message == "Container c failed liveness probe, will be restarted"
    assert texts.probe_kill("c", "startup", False).message == "Container c failed startup probe"
    assert texts.restart_backoff("c", "p_ns(u)") == EventText(
        "Warning", "BackOff", "Back-off restarting failed container c in pod p_ns(u)")
    assert texts.unhealthy("Readiness", "x") == EventText("Warning", "Unhealthy", "Readiness probe failed: x")


def test_image_sizes_are_stable_per_image() -> None:
    assert texts.image_size_bytes("nginx") == texts.image_size_bytes("docker.io/library/nginx:latest")
    assert texts.MIN_IMAGE_BYTES <= texts.image_size_bytes("redis:7") < texts.MAX_IMAGE_BYTES


def test_probe_outputs_per_handler() -> None:
    container = {"ports": [{"name": "web", "containerPort": 8080}]}
    assert texts.probe_failure_output({"httpGet": {"port": 80}}, container, "10.0.0.5") == \
        "HTTP probe failed with statuscode: 500"
    assert texts.probe_failure_output({"tcpSocket": {"port": "web"}}, container, "10.0.0.5") == \
        "dial tcp 10.0.0.5:8080: connect: connection refused"
    assert texts.probe_failure_output({"grpc": {"port": 9}}, container, "") == texts.GRPC_FAILURE_OUTPUT
    assert texts.probe_failure_output({"exec": {"command": ["false"]}}, container, "") == ""


# -- when probes fail ----------------------------------------------------------------------

def failures(container: dict[str, Any], behaviour: ContainerBehaviour, until_s: float) -> list[tuple[float, tuple]]:
    found, after_s = [], -1.0
    schedule = ProbeFailures(container, behaviour, plan_probes(container, behaviour))
    while (failure := schedule.next_after(after_s)) is not None and failure[0] <= until_s:
        found.append(failure)
        after_s = failure[0]
    return found


def test_every_failed_liveness_probe_until_the_kill() -> None:
    container = {"livenessProbe": {"exec": {}, "periodSeconds": 5, "failureThreshold": 3}}
    behaviour = ContainerBehaviour(liveness=Timeline(((0, True), (12, False))))
    assert failures(container, behaviour, 100) == [(15, (LIVENESS,)), (20, (LIVENESS,)), (25, (LIVENESS,))]


def test_failures_below_the_threshold_are_recorded_too() -> None:
    container = {"readinessProbe": {"exec": {}, "periodSeconds": 10}}
    blip = ContainerBehaviour(readiness=Timeline(((0, True), (18, False), (35, True))))
    assert failures(container, blip, 100) == [(20, (READINESS,)), (30, (READINESS,))]


def test_a_probe_failing_forever_fails_at_every_tick() -> None:
    container = {"readinessProbe": {"exec": {}, "initialDelaySeconds": 3, "periodSeconds": 10}}
    assert [t for t, _ in failures(container, ContainerBehaviour(readiness=Timeline.constant(False)), 50)] == \
        [3, 13, 23, 33, 43]


def test_startup_failures_until_it_succeeds_then_readiness_is_triggered() -> None:
    container = {"startupProbe": {"exec": {}, "periodSeconds": 10, "failureThreshold": 5},
                 "readinessProbe": {"exec": {}, "periodSeconds": 10}}
    behaviour = ContainerBehaviour(startup=Timeline(((0, False), (25, True))),
                                   readiness=Timeline.constant(False))
    assert failures(container, behaviour, 40) == [(0, (STARTUP,)), (10, (STARTUP,)), (20, (STARTUP,)),
                                                  (30, (READINESS,)), (40, (READINESS,))]


def test_nothing_fails_without_probes_or_while_healthy() -> None:
    assert failures({}, ContainerBehaviour(readiness=Timeline.constant(False)), 100) == []
    assert failures({"livenessProbe": {"exec": {}}}, ContainerBehaviour(), 10_000) == []


# -- the container state machine records events -------------------------------------------

class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[float, str, str, str]] = []

    def __call__(self, run: ContainerRun, moment: datetime, text: EventText) -> None:
        self.events.append(((moment - DEFAULT_EPOCH).total_seconds(), run.field_path, text.reason, text.message))


def run_until(run: ContainerRun, until_s: float, **context: Any) -> Recorder:
    recorder = Recorder()
    ids = iter(range(1000))
    ctx = RunContext("uid", RestartBackoff(), ImagePullBackoff(), lambda: f"containerd://{next(ids)}", DEFAULT_EPOCH,
                     record=recorder, pod_label="p_default(uid)", **context)
    run.begin(at(0), ctx)
    while run.due is not None and run.due <= at(until_s):
        run.step(ctx)
    return recorder


def test_a_crash_looping_container_records_the_back_off_at_every_resync() -> None:
    run = ContainerRun({"name": "c", "image": "busybox", "imagePullPolicy": "IfNotPresent"},
                       ContainerBehaviour(run_for_s=5, exit_code=1), False, "Always")
    events = run_until(run, 53).events
    assert [(t, reason) for t, _, reason, _ in events] == [
        (0, "Pulling"), (0, "Pulled"), (1, "Created"), (1, "Started"),   # runs 1..6, crashes
        (6, "Pulled"), (7, "Created"), (7, "Started"),                    # first crash: restart at once
        (12, "BackOff"), (22, "Pulled"), (23, "Created"), (23, "Started"),  # 10 s back-off
        (28, "BackOff"), (38, "BackOff"), (48, "Pulled"), (49, "Created"), (49, "Started")]  # 20 s
    assert events[4][3] == 'Container image "busybox" already present on machine'
    assert events[7][3] == "Back-off restarting failed container c in pod p_default(uid)"
    assert {path for _, path, _, _ in events} == {"spec.containers{c}"}


def test_a_failing_pull_records_failed_then_back_off_until_the_retry() -> None:
    run = ContainerRun({"name": "i", "image": "nope"}, ContainerBehaviour(image_pull_error="not found"), True, "Always")
    events = run_until(run, 30).events
    assert [(t, reason, message) for t, _, reason, message in events] == [
        (0, "Pulling", 'Pulling image "nope"'), (0, "Failed", 'Failed to pull image "nope": not found'),
        (0, "Failed", "Error: ErrImagePull"),
        (1, "BackOff", 'Back-off pulling image "nope"'), (1, "Failed", "Error: ImagePullBackOff"),
        (10, "Pulling", 'Pulling image "nope"'), (10, "Failed", 'Failed to pull image "nope": not found'),
        (10, "Failed", "Error: ErrImagePull"),
        (11, "BackOff", 'Back-off pulling image "nope"'), (11, "Failed", "Error: ImagePullBackOff"),
        (21, "BackOff", 'Back-off pulling image "nope"'), (21, "Failed", "Error: ImagePullBackOff"),
        (30, "Pulling", 'Pulling image "nope"'), (30, "Failed", 'Failed to pull image "nope": not found'),
        (30, "Failed", "Error: ErrImagePull")]
    assert events[0][1] == "spec.initContainers{i}"


def test_a_liveness_kill_records_each_failure_then_killing() -> None:
    spec = {"name": "c", "image": "app:1", "livenessProbe": {"httpGet": {"port": 80}, "periodSeconds": 5}}
    behaviour = ContainerBehaviour(liveness=Timeline(((0, True), (12, False))))
    events = run_until(ContainerRun(spec, behaviour, False, "Always"), 27).events
    assert [(t, reason, message) for t, _, reason, message in events[4:]] == [
        (16, "Unhealthy", "Liveness probe failed: HTTP probe failed with statuscode: 500"),
        (21, "Unhealthy", "Liveness probe failed: HTTP probe failed with statuscode: 500"),
        (26, "Unhealthy", "Liveness probe failed: HTTP probe failed with statuscode: 500"),
        (26, "Killing", "Container c failed liveness probe, will be restarted"),
        (26, "Pulled", 'Container image "app:1" already present on machine'),
        (27, "Created", "Created container: c"), (27, "Started", "Started container c")]


@pytest.mark.parametrize("others_running,message", [
    (False, "Stopping container c"), (True, "Container c failed liveness probe")])
def test_a_liveness_kill_without_restart_names_what_upstream_kills(others_running: bool, message: str) -> None:
    spec = {"name": "c", "image": "app:1", "livenessProbe": {"exec": {}, "periodSeconds": 5, "failureThreshold": 1}}
    behaviour = ContainerBehaviour(liveness=Timeline.constant(False))
    events = run_until(ContainerRun(spec, behaviour, False, "Never"), 10,
                       others_running=lambda run: others_running).events
    assert [(t, reason, text) for t, _, reason, text in events if reason == "Killing"] == [(1, "Killing", message)]


def test_stop_says_when_the_kubelet_first_asks_a_running_process_to_stop() -> None:
    run = ContainerRun({"name": "c", "image": "x"}, ContainerBehaviour(), False, "Always")
    run_until(run, 2)
    assert run.stop(at(40), 0) is True
    assert run.stop(at(35), 137) is False  # a shorter second delete moves the stop, not a new Killing
