"""The HPA's replica calculator and behavior rules, as upstream's replica_calculator.go and
horizontal.go compute them (pure functions: pods and figures in, counts out)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from fakekube.controllers.podautoscaler import behavior
from fakekube.controllers.podautoscaler.replicas import MetricError, resource_replicas
from fakekube.objects.metrics import ContainerUsage, PodUsage

NOW = datetime(2025, 1, 1, 1, 0, tzinfo=timezone.utc)


def pod(name: str, phase: str = "Running", ready: bool = True, started_s_ago: int = 600,
        request: str | None = "100m") -> dict[str, Any]:
    container: dict[str, Any] = {"name": "app"}
    if request is not None:
        container["resources"] = {"requests": {"cpu": request}}
    stamp = (NOW - timedelta(seconds=started_s_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"metadata": {"namespace": "ns", "name": name}, "spec": {"containers": [container]},
            "status": {"phase": phase, "startTime": stamp, "conditions": [
                {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": stamp}]}}


def usage(**cpu_m: int) -> dict[tuple[str, str], PodUsage]:
    return {("ns", name): PodUsage(NOW - timedelta(seconds=5), 15.0, (ContainerUsage("app", m * 1_000_000, 0),))
            for name, m in cpu_m.items()}


def test_utilization_within_tolerance_keeps_the_count_and_outside_it_takes_the_ceiling() -> None:
    pods = [pod("a"), pod("b")]
    assert resource_replicas(2, 50, None, "cpu", pods, usage(a=54, b=54), NOW).replicas == 2  # 54 %: within 10 %
    found = resource_replicas(2, 50, None, "cpu", pods, usage(a=80, b=70), NOW)
    assert (found.replicas, found.utilization, found.average_milli) == (3, 75, 75)


def test_missing_figures_count_as_full_when_scaling_down_and_empty_when_scaling_up() -> None:
    pods = [pod("a"), pod("b"), pod("c")]
    # down: c assumed at 100 % → (10+10+100)/300 = 40 % vs 50 → ceil(0.8 × 3) = 3: no change
    assert resource_replicas(3, 50, None, "cpu", pods, usage(a=10, b=10), NOW).replicas == 3
    # up: c assumed at 0 → (100+100+0)/300 = 66 % → ceil(1.33 × 3) = 4
    assert resource_replicas(3, 50, None, "cpu", pods, usage(a=100, b=100), NOW).replicas == 4


def test_unready_pods_are_left_out_and_count_as_empty_when_scaling_up() -> None:
    pods = [pod("a"), pod("b", ready=False, started_s_ago=60)]
    found = resource_replicas(2, 50, None, "cpu", pods, usage(a=100, b=100), NOW)
    assert (found.utilization, found.replicas) == (100, 2)  # a alone: 100 % → with b at 0: 50 % → no change


def test_deleted_failed_and_requestless_pods() -> None:
    gone = pod("gone")
    gone["metadata"]["deletionTimestamp"] = "2025-01-01T00:59:00Z"
    found = resource_replicas(2, 50, None, "cpu", [pod("a"), gone, pod("f", phase="Failed")], usage(a=100), NOW)
    assert found.replicas == 2
    with pytest.raises(MetricError, match="missing request for cpu in container app of Pod b"):
        resource_replicas(2, 50, None, "cpu", [pod("a"), pod("b", request=None)], usage(a=10, b=10), NOW)
    with pytest.raises(MetricError, match="no pods returned by selector"):
        resource_replicas(2, 50, None, "cpu", [], {}, NOW)


def test_average_value_targets_compare_usage_per_pod() -> None:
    found = resource_replicas(2, None, 100, "cpu", [pod("a"), pod("b")], usage(a=300, b=300), NOW)
    assert (found.replicas, found.utilization, found.average_milli) == (6, None, 300)


def test_scale_down_waits_for_the_highest_recommendation_of_the_window() -> None:
    history = behavior.History()
    assert behavior.stabilized(history, None, 4, 8, NOW)[0] == 8
    later = NOW + timedelta(seconds=200)
    recommendation, reason, _ = behavior.stabilized(history, None, 8, 2, later)
    assert (recommendation, reason) == (8, "ScaleDownStabilized")   # 8 was recommended within 300 s
    assert behavior.stabilized(history, None, 8, 2, NOW + timedelta(seconds=301))[0] == 2
    custom = {"scaleDown": {"stabilizationWindowSeconds": 60}}
    assert behavior.stabilized(behavior.History(), custom, 8, 2, NOW)[0] == 2


def test_rate_limits_follow_the_policies_in_their_period() -> None:
    history = behavior.History()
    limited = behavior.rate_limited(history, None, 2, 20, 1, 30, NOW)
    assert limited == (4 + 2, "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate")
    behavior.record_scale(history, 2, 6, NOW)
    assert behavior.rate_limited(history, None, 6, 20, 1, 30, NOW + timedelta(seconds=10)).replicas == 6
    assert behavior.rate_limited(history, None, 6, 20, 1, 30, NOW + timedelta(seconds=16)).replicas == 12
    assert behavior.rate_limited(history, None, 6, 40, 1, 8, NOW + timedelta(seconds=16)).reason == "TooManyReplicas"
    slow_down = {"scaleDown": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}}
    assert behavior.rate_limited(behavior.History(), slow_down, 5, 1, 1, 10, NOW).replicas == 4
    disabled = {"scaleUp": {"selectPolicy": "Disabled"}}
    assert behavior.rate_limited(behavior.History(), disabled, 5, 9, 1, 10, NOW).replicas == 5
