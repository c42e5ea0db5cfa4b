"""Simulated work costs per event, never per unit of a user-supplied number (issue 12, defect 9).

Every number a pod author gives the kubelet or a controller to simulate (probe periods,
thresholds and delays, grace periods, tolerationSeconds, behaviour delays) is tried at
2^31-1 and 2^63-1. The work is counted, not timed: probe evaluations (every call of
``Timeline.healthy_at``, with a budget that fails fast instead of running for minutes) and
the engine's reconciles (``Engine.reconciles``). Times are exact virtual times.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

import pytest

from fakekube import Cluster
from tests.integration.support import pod
from fakekube.api.machinery.errors import ApiError
from fakekube.kubelet.behaviour import BEHAVIOUR_ANNOTATION, ContainerBehaviour, Timeline
from fakekube.kubelet.probefailures import ProbeFailures
from fakekube.kubelet.probes import plan_probes
from tests.integration.timeline import at

Obj = dict[str, Any]

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
HUGE = (INT32_MAX, INT64_MAX)
#: Probe evaluations one test may make; the per-tick walk made ~2^31 before the fix.
PROBE_BUDGET = 10_000
#: Reconciles one advance(60) of one pod may take (a pod start and its Unhealthy events).
RECONCILE_BUDGET = 200


class ProbeBudgetExceeded(AssertionError):
    pass


@pytest.fixture()
def probe_evaluations(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Counts ``Timeline.healthy_at`` calls; past the budget the test fails at once."""
    count = [0]
    original = Timeline.healthy_at

    def counted(self: Timeline, t_s: float) -> bool:
        count[0] += 1
        if count[0] > PROBE_BUDGET:
            raise ProbeBudgetExceeded(f"more than {PROBE_BUDGET} probe evaluations")
        return original(self, t_s)

    monkeypatch.setattr(Timeline, "healthy_at", counted)
    yield count





def probed(kind: str, field: str, value: int) -> list[Obj]:
    return [{"name": "c", "image": "nginx:1.27", kind: {"exec": {"command": ["true"]}, field: value}}]


def reconciles_of(cluster: Cluster, seconds: float) -> int:
    before = cluster.engine.reconciles
    cluster.advance(seconds)
    return cluster.engine.reconciles - before


# -- probes --------------------------------------------------------------------------------

PROBE_FIELDS = ("failureThreshold", "successThreshold", "periodSeconds", "initialDelaySeconds", "timeoutSeconds")
PROBE_KINDS = {"livenessProbe": "liveness", "readinessProbe": "readiness", "startupProbe": "startup"}


@pytest.mark.parametrize("kind", sorted(PROBE_KINDS))
@pytest.mark.parametrize("field", PROBE_FIELDS)
@pytest.mark.parametrize("healthy", [False, True])
def test_a_huge_probe_number_costs_per_event_in_a_cluster(probe_evaluations: list[int], kind: str, field: str,
                                                          healthy: bool) -> None:
    if field == "successThreshold" and kind != "readinessProbe":
        pytest.skip("upstream requires successThreshold 1 for liveness and startup probes")
    cluster = Cluster(nodes=1)
    cluster.create(pod(behaviour={PROBE_KINDS[kind]: healthy}, containers=probed(kind, field, INT32_MAX)))
    assert reconciles_of(cluster, 60) <= RECONCILE_BUDGET
    assert probe_evaluations[0] <= 1_000
    assert cluster.engine.errors == []
    container = cluster.get("v1", "Pod", "p")["status"]["containerStatuses"][0]
    if field != "timeoutSeconds":  # (a probe's result is instantaneous: its timeout changes nothing)
        assert container["restartCount"] == 0  # nothing crosses a threshold of 2^31-1 in a minute


def test_a_liveness_probe_failing_forever_below_its_threshold_only_reports_unhealthy(
        probe_evaluations: list[int]) -> None:
    # Started at t=1; liveness ticks every 10 s from then: failures at 1, 11, ..., 51 (6 in a minute).
    cluster = Cluster(nodes=1)
    cluster.create(pod(behaviour={"liveness": False},
                       containers=probed("livenessProbe", "failureThreshold", INT32_MAX)))
    at(cluster, 60)
    unhealthy = cluster.events(involved_name="p", reason="Unhealthy")
    assert [event["count"] for event in unhealthy] == [6]
    assert unhealthy[0]["lastTimestamp"] == "2025-01-01T00:00:51Z"
    assert cluster.get("v1", "Pod", "p")["status"]["phase"] == "Running"


@pytest.mark.parametrize("field", ["failure_threshold", "success_threshold", "period_s", "initial_delay_s",
                                   "timeout_s"])
@pytest.mark.parametrize("value", HUGE)
@pytest.mark.parametrize("healthy", [False, True])
def test_a_probe_plan_is_arithmetic_at_any_value(probe_evaluations: list[int], field: str, value: int,
                                                 healthy: bool) -> None:
    camel = {"failure_threshold": "failureThreshold", "success_threshold": "successThreshold",
             "period_s": "periodSeconds", "initial_delay_s": "initialDelaySeconds",
             "timeout_s": "timeoutSeconds"}[field]
    flapping = Timeline(((0.0, healthy), (30.0, not healthy), (90.0, healthy)))
    behaviour = ContainerBehaviour(readiness=flapping, liveness=flapping, startup=flapping)
    container = {"name": "c", **{probe: {camel: value} for probe in PROBE_KINDS}}
    plan = plan_probes(container, behaviour)
    failures = ProbeFailures(container, behaviour, plan)
    t_s, seen = -1.0, 0
    while (failure := failures.next_after(t_s)) is not None and seen < 50:
        t_s, seen = failure[0], seen + 1
    assert probe_evaluations[0] <= 1_000


def test_the_arithmetic_plan_matches_tick_by_tick_counting() -> None:
    # A flapping outcome against small thresholds: the same answers as counting every tick.
    outcome = Timeline(((0.0, False), (15.0, True), (25.0, False), (35.0, True), (95.0, False), (96.0, True)))
    behaviour = ContainerBehaviour(readiness=outcome, liveness=outcome)
    readiness = {"periodSeconds": 5, "successThreshold": 3, "failureThreshold": 2}
    # ticks 0 F,5 F,10 F,15 T,20 T,25 F,30 F,35 T,40 T,45 T -> Ready at 45; 95 F, 100 T: no change
    assert plan_probes({"name": "c", "readinessProbe": readiness}, behaviour).ready == ((45.0, True),)
    readiness["failureThreshold"] = 1  # ... and 95 F turns it off at once, 100..110 T back on at 110
    assert plan_probes({"name": "c", "readinessProbe": readiness}, behaviour).ready == (
        (45.0, True), (95.0, False), (110.0, True))
    liveness = {"periodSeconds": 5, "failureThreshold": 2, "initialDelaySeconds": 3}
    # ticks 3 F, 8 F -> killed at 8
    assert plan_probes({"name": "c", "livenessProbe": liveness}, behaviour).kill_s == 8.0
    liveness["initialDelaySeconds"] = 18  # 18 T, 23 T, 28 F, 33 F -> killed at 33
    assert plan_probes({"name": "c", "livenessProbe": liveness}, behaviour).kill_s == 33.0


# -- grace periods -------------------------------------------------------------------------

@pytest.mark.parametrize("grace_s", HUGE)
def test_a_huge_grace_period_on_a_failed_node_lets_the_node_recover(grace_s: int) -> None:
    cluster = Cluster(nodes=3)
    cluster.create(pod(terminationGracePeriodSeconds=grace_s))
    at(cluster, 5)
    cluster.fail_node("node-1")
    at(cluster, 400)  # tainted unreachable at 60, the default 300 s toleration ends at 360
    before = cluster.engine.reconciles
    cluster.recover_node("node-1")  # raised EngineStuck: the kubelet and taint eviction fought over conditions
    assert cluster.engine.reconciles - before <= RECONCILE_BUDGET
    assert reconciles_of(cluster, 60) <= RECONCILE_BUDGET
    controllers = {error.controller for error in cluster.engine.errors}
    assert "kubelet-pods" not in controllers


@pytest.mark.parametrize("grace_s", [INT32_MAX])
def test_a_huge_grace_period_stops_the_container_when_it_exits_by_itself(grace_s: int) -> None:
    cluster = Cluster(nodes=1)
    cluster.create(pod(terminationGracePeriodSeconds=grace_s, behaviour={"stop_delay_s": 2}))
    at(cluster, 5)
    cluster.delete("v1", "Pod", "p")
    assert reconciles_of(cluster, 1) <= RECONCILE_BUDGET
    assert cluster.store.get(("", "pods"), ("default", "p")) is not None
    at(cluster, 7)  # the process stops 2 s after it was asked: the pod is removed
    assert cluster.store.get(("", "pods"), ("default", "p")) is None


# -- tolerationSeconds ---------------------------------------------------------------------

def unreachable_for(seconds: int) -> list[Obj]:
    return [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
             "tolerationSeconds": seconds}]


def test_a_toleration_of_int32_max_seconds_evicts_68_years_later() -> None:
    cluster = Cluster(nodes=3)
    cluster.create(pod(tolerations=unreachable_for(INT32_MAX)))
    cluster.fail_node("node-1")
    assert reconciles_of(cluster, 400) <= 2_000
    assert cluster.engine.errors == []
    deadline = cluster.engine.timer_deadline("taint-eviction-controller", "pod/default/p")
    assert deadline is not None and (deadline - cluster.config.start_time).total_seconds() == 60 + INT32_MAX


@pytest.mark.parametrize("seconds", [INT64_MAX, 9_223_372_037])
def test_a_toleration_past_gos_duration_range_tolerates_forever(seconds: int) -> None:
    # Upstream's taint manager: MaxInt64 is its "no tolerationSeconds" sentinel, and
    # time.Duration(s) * time.Second wraps to a negative duration for 9223372037: forever.
    cluster = Cluster(nodes=3)
    cluster.create(pod(tolerations=unreachable_for(seconds)))
    cluster.fail_node("node-1")
    assert reconciles_of(cluster, 400) <= 2_000
    assert cluster.engine.errors == []
    assert cluster.engine.timer_deadline("taint-eviction-controller", "pod/default/p") is None
    assert "deletionTimestamp" not in cluster.get("v1", "Pod", "p")["metadata"]


# -- behaviour delays ----------------------------------------------------------------------

DELAYS = ("pull_delay_s", "start_delay_s", "run_for_s", "stop_delay_s", "ready_after_s")


@pytest.mark.parametrize("field", DELAYS)
def test_a_behaviour_delay_of_int32_max_seconds_costs_nothing(probe_evaluations: list[int], field: str) -> None:
    cluster = Cluster(nodes=1)
    cluster.create(pod(behaviour={field: INT32_MAX}, containers=probed("readinessProbe", "periodSeconds", 1)))
    assert reconciles_of(cluster, 60) <= RECONCILE_BUDGET
    cluster.delete("v1", "Pod", "p")
    assert reconciles_of(cluster, 60) <= RECONCILE_BUDGET
    assert cluster.engine.errors == []


@pytest.mark.parametrize("field", DELAYS + ("log_lines",))
@pytest.mark.parametrize("value", [INT64_MAX, 1e300])
def test_a_behaviour_delay_past_gos_duration_range_is_refused(field: str, value: float) -> None:
    cluster = Cluster(nodes=1)
    raw = [[value, "line"]] if field == "log_lines" else value
    with pytest.raises(ApiError) as refused:
        cluster.create(pod(behaviour={field: raw}))
    assert refused.value.code == 422
    assert cluster.engine.errors == []
