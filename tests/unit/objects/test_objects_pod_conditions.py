"""update_pod_condition: upstream podutil.UpdatePodCondition's add / keep / replace rules."""

from __future__ import annotations

from datetime import datetime, timezone

from fakekube.objects.pods import update_pod_condition

T1 = datetime(2025, 1, 1, 0, 0, 10, tzinfo=timezone.utc)
T2 = datetime(2025, 1, 1, 0, 0, 20, tzinfo=timezone.utc)
TARGET = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler", "message": "m"}


def test_adds_a_missing_condition_at_the_end_and_leaves_the_pod_alone() -> None:
    pod = {"metadata": {"name": "p"}, "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
    updated = update_pod_condition(pod, TARGET, T1)
    assert updated is not None
    assert updated["status"]["conditions"] == [
        {"type": "Ready", "status": "True"},
        {"type": "DisruptionTarget", "status": "True", "lastProbeTime": None,
         "lastTransitionTime": "2025-01-01T00:00:10Z", "reason": "PreemptionByScheduler", "message": "m"}]
    assert updated["status"]["phase"] == "Running"
    assert len(pod["status"]["conditions"]) == 1  # type: ignore[index]


def test_same_condition_again_is_no_change() -> None:
    once = update_pod_condition({"status": {}}, TARGET, T1)
    assert once is not None
    assert update_pod_condition(once, TARGET, T2) is None


def test_replaces_in_place_keeping_transition_time_when_status_is_unchanged() -> None:
    once = update_pod_condition({"status": {"conditions": [{"type": "X", "status": "True"}]}}, TARGET, T1)
    assert once is not None
    once["status"]["conditions"].append({"type": "Y", "status": "True"})
    changed = update_pod_condition(once, dict(TARGET, message="other"), T2)
    assert changed is not None
    assert [c["type"] for c in changed["status"]["conditions"]] == ["X", "DisruptionTarget", "Y"]
    assert changed["status"]["conditions"][1]["lastTransitionTime"] == "2025-01-01T00:00:10Z"
    flipped = update_pod_condition(changed, dict(TARGET, status="False"), T2)
    assert flipped is not None and flipped["status"]["conditions"][1]["lastTransitionTime"] == "2025-01-01T00:00:20Z"
