"""Probe timing follows the kubelet's prober worker: first probe at initialDelay, then every period."""

import pytest

from fakekube.kubelet import (
    KILLED_BY_LIVENESS,
    KILLED_BY_STARTUP,
    ContainerBehaviour,
    ProbeSpec,
    Timeline,
    liveness_failure_s,
    plan_probes,
    readiness_transitions,
    startup_outcome,
)
from fakekube.kubelet.probes import probe_times

UNHEALTHY_FROM_42 = Timeline(((0.0, True), (42.0, False)))


def test_defaults_are_upstreams() -> None:
    spec = ProbeSpec.from_k8s({"httpGet": {"path": "/", "port": 80}})
    assert spec == ProbeSpec(initial_delay_s=0, period_s=10, timeout_s=1, success_threshold=1, failure_threshold=3)
    assert ProbeSpec.from_k8s(None) is None


def test_probes_tick_from_the_initial_delay() -> None:
    spec = ProbeSpec(initial_delay_s=5, period_s=10)
    assert list(probe_times(spec, 0, 40)) == [5, 15, 25, 35]
    assert list(probe_times(spec, 15, 40)) == [15, 25, 35]
    assert list(probe_times(spec, 15, 40, inclusive=False)) == [25, 35]


def test_readiness_starts_false_then_flips_false_after_failure_threshold() -> None:
    # Probes at 5, 15, 25, 35, 45, 55, 65: healthy until 42, so failures at 45, 55, 65.
    spec = ProbeSpec(initial_delay_s=5, period_s=10, failure_threshold=3)
    assert readiness_transitions(spec, UNHEALTHY_FROM_42) == [(5, True), (65, False)]


def test_readiness_needs_success_threshold_in_a_row() -> None:
    spec = ProbeSpec(period_s=10, success_threshold=3, failure_threshold=1)
    flapping = Timeline(((0, False), (15, True), (25, False), (35, True)))
    # probes at 0 F, 10 F, 20 T, 30 F, 40 T, 50 T, 60 T -> ready at 60
    assert readiness_transitions(spec, flapping) == [(60, True)]


def test_ready_after_recovers_after_a_failing_stretch() -> None:
    spec = ProbeSpec(period_s=5, failure_threshold=2)
    outage = Timeline(((0, True), (12, False), (31, True)))
    # 0 T ready; 15 F, 20 F -> not ready at 20; 25 F, 30 F; 35 T -> ready again.
    assert readiness_transitions(spec, outage) == [(0, True), (20, False), (35, True)]


def test_short_failures_below_threshold_change_nothing() -> None:
    spec = ProbeSpec(period_s=10, failure_threshold=3)
    blip = Timeline(((0, True), (18, False), (35, True)))  # fails at 20 and 30 only
    assert readiness_transitions(spec, blip) == [(0, True)]
    assert liveness_failure_s(spec, blip) is None


def test_liveness_kills_at_the_failure_threshold() -> None:
    spec = ProbeSpec(initial_delay_s=5, period_s=10, failure_threshold=3)
    assert liveness_failure_s(spec, UNHEALTHY_FROM_42) == 65
    assert liveness_failure_s(ProbeSpec(failure_threshold=1), UNHEALTHY_FROM_42) == 50
    assert liveness_failure_s(spec, UNHEALTHY_FROM_42, until_s=60) is None  # exited first


def test_startup_probe_success_and_failure() -> None:
    spec = ProbeSpec(initial_delay_s=0, period_s=5, failure_threshold=30)
    slow_start = Timeline(((0, False), (23, True)))
    assert startup_outcome(spec, slow_start) == (25, True)
    never = Timeline.constant(False)
    assert startup_outcome(spec, never) == (145, False)   # 30 failures: probes at 0, 5, ..., 145
    assert startup_outcome(spec, never, until_s=100) is None


def test_plan_without_probes_is_started_and_ready_at_once() -> None:
    plan = plan_probes({"name": "app"}, ContainerBehaviour())
    assert (plan.started_s, plan.ready, plan.kill_s) == (0, ((0, True),), None)
    assert plan.ready_at(0) and not plan.ready_at(-1)


def test_startup_gates_readiness_and_liveness() -> None:
    container = {
        "startupProbe": {"periodSeconds": 5, "failureThreshold": 30},
        "readinessProbe": {"periodSeconds": 10},
        "livenessProbe": {"periodSeconds": 10, "failureThreshold": 1},
    }
    behaviour = ContainerBehaviour(startup=Timeline(((0, False), (23, True))),
                                   liveness=Timeline(((0, False), (28, True))))
    plan = plan_probes(container, behaviour)
    assert plan.started_s == 25
    # Readiness is triggered at once when Started; liveness waits for its tick after 25 (30: healthy).
    assert plan.ready == ((25, True),)
    assert plan.kill_s is None


def test_failed_startup_probe_kills_and_never_starts() -> None:
    container = {"startupProbe": {"periodSeconds": 10, "failureThreshold": 3}, "readinessProbe": {}}
    plan = plan_probes(container, ContainerBehaviour(startup=Timeline.constant(False)))
    assert (plan.started_s, plan.ready, plan.kill_s, plan.kill_reason) == (None, (), 20, KILLED_BY_STARTUP)


def test_liveness_kill_ends_the_readiness_plan() -> None:
    container = {"readinessProbe": {"initialDelaySeconds": 5}, "livenessProbe": {"initialDelaySeconds": 5}}
    broken = Timeline(((0, True), (42, False)))
    plan = plan_probes(container, ContainerBehaviour(readiness=broken, liveness=broken))
    assert (plan.kill_s, plan.kill_reason) == (65, KILLED_BY_LIVENESS)
    assert plan.ready == ((5, True), (65, False))


def test_probing_stops_when_the_container_exits_by_itself() -> None:
    container = {"livenessProbe": {"initialDelaySeconds": 5}}
    plan = plan_probes(container, ContainerBehaviour(run_for_s=50, liveness=UNHEALTHY_FROM_42))
    assert plan.kill_s is None


def test_invalid_specs_are_refused() -> None:
    with pytest.raises(ValueError):
        ProbeSpec(period_s=0)
    with pytest.raises(ValueError):
        ProbeSpec(failure_threshold=0)
