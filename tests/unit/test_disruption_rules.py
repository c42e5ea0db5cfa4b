"""The pure PodDisruptionBudget rules (fakekube/objects/disruption.py) and the helpers they
use: IntOrString scaling, metav1 condition lists."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from fakekube.objects import disruption as rules
from fakekube.objects.conditions import set_condition
from fakekube.objects.intstr import scaled_value

T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)


def pod(name: str, ready: bool = True, deleting: bool = False, labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "labels": labels or {"app": "web"}}
    if deleting:
        meta["deletionTimestamp"] = "2025-01-01T00:00:30Z"
    return {"metadata": meta, "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


@pytest.mark.parametrize(("value", "total", "up", "expected"), [
    (3, 10, True, 3), ("50%", 3, True, 2), ("50%", 3, False, 1), ("34%", 3, True, 2), ("0%", 7, True, 0),
    ("100%", 7, False, 7), ("33%", 0, True, 0),
])
def test_scaled_value_rounds_as_asked(value: Any, total: int, up: bool, expected: int) -> None:
    assert scaled_value(value, total, up) == expected


@pytest.mark.parametrize(("value", "message"), [
    (None, "nil value for IntOrString"),
    ("5", "invalid value for IntOrString: invalid type: string is not a percentage"),
    ("x%", 'invalid value for IntOrString: invalid value "x%": strconv.Atoi: parsing "x": invalid syntax'),
])
def test_scaled_value_errors_are_upstreams(value: Any, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        scaled_value(value, 10, True)
    assert str(raised.value) == message


def test_set_condition_moves_the_transition_time_only_when_the_status_changes() -> None:
    first, changed = set_condition(None, {"type": "A", "status": "True", "reason": "R"}, T0)
    assert changed and first == [{"type": "A", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z",
                                  "reason": "R", "message": ""}]
    same, changed = set_condition(first, {"type": "A", "status": "True", "reason": "R"}, T0 + timedelta(seconds=5))
    assert not changed and same == first
    reworded, changed = set_condition(first, {"type": "A", "status": "True", "reason": "S", "observedGeneration": 2},
                                      T0 + timedelta(seconds=5))
    assert changed and reworded[0]["lastTransitionTime"] == "2025-01-01T00:00:00Z"
    assert reworded[0]["observedGeneration"] == 2 and reworded[0]["reason"] == "S"
    flipped, _ = set_condition(reworded, {"type": "A", "status": "False", "reason": "S"}, T0 + timedelta(seconds=9))
    assert flipped[0]["lastTransitionTime"] == "2025-01-01T00:00:09Z" and "observedGeneration" not in flipped[0]


def test_selectors_nil_matches_nothing_empty_everything_invalid_nothing() -> None:
    def budget(selector: Any) -> dict[str, Any]:
        return {"metadata": {"name": "b", "namespace": "default"}, "spec": {"selector": selector}}
    assert not rules.pdb_selects(budget(None), pod("p"))
    assert rules.pdb_selects(budget({}), pod("p"))
    assert not rules.pdb_selects(budget({"matchExpressions": [{"key": "app", "operator": "Bogus"}]}), pod("p"))
    other_namespace = {"metadata": {"name": "b", "namespace": "other"}, "spec": {"selector": {}}}
    assert not rules.pdb_selects(other_namespace, pod("p"))
    assert rules.budgets_for_pod([budget({"matchLabels": {"app": "db"}}), budget({})], pod("p")) == [budget({})]


def test_healthy_pods_exclude_terminating_and_recently_disrupted_ones() -> None:
    pods = [pod("a"), pod("b", ready=False), pod("c", deleting=True), pod("d"), pod("e")]
    disrupted = {"d": "2025-01-01T00:00:00Z", "e": "2024-12-31T23:57:00Z"}
    assert rules.count_healthy(pods, disrupted, T0 + timedelta(seconds=10)) == 2  # a, and e (its 2 min are over)
    assert rules.count_healthy(pods, disrupted, T0 + timedelta(seconds=120)) == 3  # d's timeout ends at 120 s


def test_a_disruption_entry_expires_only_after_its_deadline() -> None:
    pods = [pod("d"), pod("gone-soon", deleting=True)]
    disrupted = {"d": "2025-01-01T00:00:00Z", "gone-soon": "2025-01-01T00:00:00Z", "vanished": "2025-01-01T00:00:00Z"}
    at_deadline = rules.live_disruptions(pods, disrupted, T0 + timedelta(seconds=120))
    assert at_deadline == rules.Disruptions({"d": "2025-01-01T00:00:00Z"}, T0 + timedelta(seconds=120), [])
    after = rules.live_disruptions(pods, disrupted, T0 + timedelta(seconds=120, microseconds=1))
    assert after == rules.Disruptions({}, None, ["d"])


@pytest.mark.parametrize(("spec", "needs", "target"), [
    ({"minAvailable": 2}, False, (4, 2)),
    ({"minAvailable": "50%"}, True, (5, 3)),
    ({"maxUnavailable": 2}, True, (5, 3)),
    ({"maxUnavailable": "100%"}, True, (5, 0)),
    ({}, False, (0, 0)),
])
def test_expected_and_desired(spec: dict[str, Any], needs: bool, target: tuple[int, int]) -> None:
    assert rules.needs_scale(spec) is needs
    assert rules.healthy_target(spec, pod_count=4, scale=5) == target


def test_allowed_condition_and_up_to_date_check() -> None:
    status = rules.pdb_status(3, 2, 3, 1, {}, 4, None)
    assert list(status) == ["observedGeneration", "disruptionsAllowed", "currentHealthy", "desiredHealthy",
                            "expectedPods"]
    status = rules.with_allowed_condition(status, T0)
    assert status["conditions"] == [{"type": "DisruptionAllowed", "status": "True", "observedGeneration": 4,
                                     "lastTransitionTime": "2025-01-01T00:00:00Z", "reason": "SufficientPods",
                                     "message": ""}]
    assert rules.conditions_up_to_date({"metadata": {"generation": 4}, "status": status})
    assert not rules.conditions_up_to_date({"metadata": {"generation": 5}, "status": status})
    failed = rules.with_sync_failed(status, "boom", T0 + timedelta(seconds=1))
    assert failed["disruptionsAllowed"] == 0
    assert failed["conditions"][0]["reason"] == "SyncFailed" and failed["conditions"][0]["message"] == "boom"
    assert not rules.conditions_up_to_date({"metadata": {"generation": 4}, "status": failed})


def test_selector_go_string_is_the_generated_string_method() -> None:
    selector = {"matchLabels": {"b": "2", "a": "1"},
                "matchExpressions": [{"key": "k", "operator": "In", "values": ["x", "y"]}]}
    assert rules.selector_go_string(selector) == (
        "&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},MatchExpressions:[]LabelSelectorRequirement"
        "{LabelSelectorRequirement{Key:k,Operator:In,Values:[x y],},},}")
    assert rules.selector_go_string(None) == "nil"
