"""deploymentutil's rules on worked examples: fenceposts, sizes, proportions, revisions,
annotations, which ReplicaSet is new, and the status and conditions."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from fakekube.objects import deployments as du
from fakekube.objects import deploymentstatus as ds

Obj = dict[str, Any]
NOW = datetime(2025, 1, 1, tzinfo=timezone.utc)


def deployment(replicas: int = 10, surge: Any = "25%", unavailable: Any = "25%", strategy: str = "RollingUpdate",
               **extra: Any) -> Obj:
    spec: Obj = {"replicas": replicas, "strategy": {"type": strategy}, "template": {"metadata": {"labels": {"a": "b"}}}}
    if strategy == "RollingUpdate":
        spec["strategy"]["rollingUpdate"] = {"maxSurge": surge, "maxUnavailable": unavailable}
    return {"metadata": {"name": "web", "generation": extra.pop("generation", 1)}, "spec": spec, **extra}


def rs(name: str, size: int, created: str = "2025-01-01T00:00:00Z", annotations: Obj | None = None,
       **status: int) -> Obj:
    return {"metadata": {"name": name, "uid": name, "creationTimestamp": created, "annotations": annotations or {}},
            "spec": {"replicas": size, "template": {"metadata": {"labels": {"a": "b", "pod-template-hash": name}}}},
            "status": status}


@pytest.mark.parametrize("surge, unavailable, replicas, expected", [
    ("25%", "25%", 10, (3, 2)),  # surge rounds up, unavailable down
    ("25%", "25%", 1, (1, 0)),
    ("10%", "10%", 7, (1, 0)),
    (0, "1%", 10, (0, 1)),  # both 0 after rounding: unavailable becomes 1
    (2, 0, 5, (2, 0)),
    ("100%", "100%", 3, (3, 3)),
])
def test_fenceposts(surge: Any, unavailable: Any, replicas: int, expected: tuple[int, int]) -> None:
    assert du.resolve_fenceposts(surge, unavailable, replicas) == expected


def test_max_unavailable_is_capped_by_replicas_and_zero_for_recreate() -> None:
    assert du.max_unavailable(deployment(2, 0, 5)) == 2
    assert du.max_unavailable(deployment(0)) == 0
    assert du.max_surge(deployment(strategy="Recreate")) == 0


def test_new_replica_set_grows_within_the_surge() -> None:
    d = deployment(10)
    old, new = rs("old", 10), rs("new", 0)
    assert du.new_rs_new_replicas(d, [old, new], new) == 3
    assert du.new_rs_new_replicas(d, [rs("old", 8), rs("new", 5)], rs("new", 5)) == 5
    assert du.new_rs_new_replicas(deployment(strategy="Recreate"), [old, new], new) == 10


def test_proportions_follow_the_annotated_maximum() -> None:
    d = deployment(20)
    old = rs("old", 8, annotations={du.MAX_REPLICAS_ANNOTATION: "13"})
    new = rs("new", 5, annotations={du.MAX_REPLICAS_ANNOTATION: "13"})
    assert du.proportion(old, d, 12, 0) == 7  # round(8 * 25 / 13) - 8
    assert du.proportion(new, d, 12, 7) == 5  # round(5 * 25 / 13) - 5 = 5, within the 5 left
    assert du.proportion(new, d, 12, 12) == 0
    assert du.replica_set_fraction(old, deployment(0)) == -8


def test_revisions_and_history() -> None:
    sets = [rs("a", 0, annotations={du.REVISION_ANNOTATION: "3"}), rs("b", 0, annotations={du.REVISION_ANNOTATION: "x"}),
            rs("c", 0, annotations={du.REVISION_ANNOTATION: "5"}), rs("d", 0)]
    assert du.max_revision(sets) == 5 and du.last_revision(sets) == 3
    rolled_back = rs("a", 1, annotations={du.REVISION_ANNOTATION: "3", du.REVISION_HISTORY_ANNOTATION: "1"})
    assert du.set_new_rs_annotations(deployment(), rolled_back, 6, exists=True)
    assert rolled_back["metadata"]["annotations"] == {du.REVISION_ANNOTATION: "6", du.REVISION_HISTORY_ANNOTATION: "1,3"}
    assert du._appended_history("1,22,333", "4444", 10) == "333,4444"
    assert du._appended_history("", "7", 10) == "7"


def test_new_replica_sets_get_the_deployments_annotations_but_not_its_own() -> None:
    d = deployment(4, annotations=None)
    d["metadata"]["annotations"] = {"team": "x", du.REVISION_ANNOTATION: "9", du.LAST_APPLIED_ANNOTATION: "{}"}
    fresh = rs("n", 0)
    du.set_new_rs_annotations(d, fresh, 2, exists=False)
    assert fresh["metadata"]["annotations"] == {"team": "x", du.REVISION_ANNOTATION: "2",
                                                du.DESIRED_REPLICAS_ANNOTATION: "4", du.MAX_REPLICAS_ANNOTATION: "5"}


def test_the_new_replica_set_is_the_oldest_with_the_template_ignoring_the_hash() -> None:
    d = deployment()
    late, early = rs("late", 1, "2025-01-01T00:00:09Z"), rs("early", 1, "2025-01-01T00:00:01Z")
    assert du.find_new_replica_set(d, [late, early]) is early
    other = rs("other", 1)
    other["spec"]["template"]["metadata"]["labels"]["a"] = "c"
    assert du.find_new_replica_set(d, [other]) is None
    assert du.equal_ignore_hash({"metadata": {"labels": {"a": "b"}, "annotations": {}}, "spec": {"x": None}},
                                {"metadata": {"labels": {"a": "b", "pod-template-hash": "q"}}})


def test_active_or_latest_and_saturation() -> None:
    old, new = rs("old", 0, "2025-01-01T00:00:01Z"), rs("new", 0, "2025-01-01T00:00:02Z")
    assert du.find_active_or_latest(new, [old]) is new
    assert du.find_active_or_latest(None, [old, rs("older", 0)]) is old
    assert du.find_active_or_latest(rs("new", 2), [rs("old", 1)]) is None
    full = rs("new", 10, annotations={du.DESIRED_REPLICAS_ANNOTATION: "10"}, availableReplicas=10)
    assert du.is_saturated(deployment(10), full) and not du.is_saturated(deployment(11), full)


def test_size_orders_break_ties_by_age() -> None:
    a, b, c = rs("a", 3, "2025-01-01T00:00:01Z"), rs("b", 3, "2025-01-01T00:00:02Z"), rs("c", 5)
    assert [x["metadata"]["name"] for x in du.sorted_by_size_newer([a, b, c])] == ["c", "b", "a"]
    assert [x["metadata"]["name"] for x in du.sorted_by_size_older([a, b, c])] == ["c", "a", "b"]


def test_status_counts_and_availability() -> None:
    d = deployment(10, status={"conditions": []})
    sets = [rs("old", 8, replicas=8, readyReplicas=8, availableReplicas=8), rs("new", 5, replicas=5)]
    status = ds.calculate_status(sets, sets[1], d, NOW)
    assert {k: v for k, v in status.items() if k != "conditions"} == {
        "observedGeneration": 1, "replicas": 13, "updatedReplicas": 5, "readyReplicas": 8, "availableReplicas": 8,
        "unavailableReplicas": 5}
    assert status["conditions"][0]["reason"] == "MinimumReplicasAvailable"  # 8 >= 10 - 2
    status = ds.calculate_status([rs("new", 10, replicas=10, availableReplicas=7)], None, d, NOW)
    assert status["conditions"][0]["reason"] == "MinimumReplicasUnavailable"


def test_set_condition_keeps_the_transition_time_when_only_the_reason_changes() -> None:
    status: Obj = {}
    ds.set_condition(status, ds.new_condition("Progressing", "True", "A", "a", NOW))
    ds.set_condition(status, ds.new_condition("Available", "True", "B", "b", NOW))
    later = NOW + timedelta(seconds=5)
    ds.set_condition(status, ds.new_condition("Progressing", "True", "C", "c", later))
    assert [c["type"] for c in status["conditions"]] == ["Available", "Progressing"]
    assert status["conditions"][1]["lastTransitionTime"] == "2025-01-01T00:00:00Z"
    assert status["conditions"][1]["lastUpdateTime"] == "2025-01-01T00:00:05Z"
    ds.set_condition(status, ds.new_condition("Progressing", "True", "C", "c", later + timedelta(seconds=5)))
    assert status["conditions"][1]["lastUpdateTime"] == "2025-01-01T00:00:05Z"  # same status and reason: kept


def test_timed_out_means_strictly_more_than_the_deadline() -> None:
    d = deployment(spec_deadline=None)
    d["spec"]["progressDeadlineSeconds"] = 60
    status = {"conditions": [ds.new_condition("Progressing", "True", "ReplicaSetUpdated", "", NOW)]}
    assert not ds.deployment_timed_out(d, status, NOW + timedelta(seconds=60))
    assert ds.deployment_timed_out(d, status, NOW + timedelta(seconds=60.001))
    d["spec"]["progressDeadlineSeconds"] = 2**31 - 1
    assert not ds.deployment_timed_out(d, status, NOW + timedelta(days=9999))
