"""Taint identity and edits, and toleration matching (upstream's ToleratesTaint table)."""

from datetime import datetime, timedelta, timezone

import pytest

from fakekube.objects import (
    add_or_update_taint,
    default_tolerations,
    eviction_time,
    first_untolerated_taint,
    match_taint,
    matching_tolerations,
    min_toleration_s,
    noexecute_taints,
    remove_taint,
    taint_diff,
    taint_to_string,
    tolerates_all,
    tolerates_taint,
)
from fakekube.objects.taints import NO_EXECUTE, NO_SCHEDULE, TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE

T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)


def test_match_taint_is_key_and_effect_only():
    assert match_taint({"key": "a", "value": "1", "effect": NO_SCHEDULE}, {"key": "a", "value": "2", "effect": NO_SCHEDULE})
    assert not match_taint({"key": "a", "effect": NO_SCHEDULE}, {"key": "a", "effect": NO_EXECUTE})


@pytest.mark.parametrize("taint,text", [
    ({"key": "a", "value": "1", "effect": "NoSchedule"}, "a=1:NoSchedule"),
    ({"key": "a", "effect": "NoSchedule"}, "a:NoSchedule"),
    ({"key": "a", "value": "1"}, "a=1:"),
    ({"key": "a"}, "a"),
])
def test_taint_to_string(taint, text):
    assert taint_to_string(taint) == text


def test_add_or_update_taint_replaces_in_place_or_appends():
    node = {"metadata": {"name": "n"}, "spec": {"taints": [{"key": "a", "value": "1", "effect": NO_SCHEDULE},
                                                           {"key": "b", "effect": NO_EXECUTE}]}}
    updated, changed = add_or_update_taint(node, {"key": "a", "value": "2", "effect": NO_SCHEDULE})
    assert changed
    assert updated["spec"]["taints"] == [{"key": "a", "value": "2", "effect": NO_SCHEDULE}, {"key": "b", "effect": NO_EXECUTE}]
    same, changed = add_or_update_taint(updated, {"key": "a", "value": "2", "effect": NO_SCHEDULE})
    assert not changed and same == updated
    appended, changed = add_or_update_taint({"metadata": {}}, {"key": "c", "effect": NO_SCHEDULE})
    assert changed and appended["spec"]["taints"] == [{"key": "c", "effect": NO_SCHEDULE}]
    assert node["spec"]["taints"][0]["value"] == "1"  # input untouched


def test_remove_taint_by_key_and_effect():
    node = {"spec": {"taints": [{"key": "a", "effect": NO_SCHEDULE}, {"key": "a", "effect": NO_EXECUTE}]}}
    updated, changed = remove_taint(node, {"key": "a", "effect": NO_EXECUTE, "value": "ignored"})
    assert changed and updated["spec"]["taints"] == [{"key": "a", "effect": NO_SCHEDULE}]
    _, changed = remove_taint(node, {"key": "x", "effect": NO_EXECUTE})
    assert not changed
    assert len(node["spec"]["taints"]) == 2


def test_taint_diff_and_noexecute_filter():
    a, b, c = {"key": "a", "effect": NO_SCHEDULE}, {"key": "b", "effect": NO_EXECUTE}, {"key": "c", "effect": NO_EXECUTE}
    assert taint_diff([a, b], [b, c]) == ([a], [c])
    assert noexecute_taints([a, b, c]) == [b, c]
    assert noexecute_taints(None) == []


TAINT = {"key": "foo", "value": "bar", "effect": NO_SCHEDULE}


@pytest.mark.parametrize("toleration,expected", [
    # upstream toleration_test.go TestTolerationToleratesTaint cases
    ({"key": "foo", "operator": "Exists", "effect": NO_SCHEDULE}, True),
    ({"key": "foo", "operator": "Equal", "value": "bar", "effect": NO_SCHEDULE}, True),
    ({"key": "foo", "value": "bar", "effect": NO_SCHEDULE}, True),  # empty operator is Equal
    ({"key": "foo", "operator": "Equal", "value": "baz", "effect": NO_SCHEDULE}, False),
    ({"key": "foo", "operator": "Exists", "effect": NO_EXECUTE}, False),
    ({"key": "other", "operator": "Exists"}, False),
    ({"operator": "Exists"}, True),  # empty key + Exists tolerates everything
    ({"operator": "Exists", "effect": NO_EXECUTE}, False),
    ({"key": "foo", "operator": "Exists"}, True),  # empty effect matches every effect
    ({"key": "foo", "operator": "Equal", "value": "bar"}, True),
    ({"key": "foo", "operator": "Lt", "value": "9"}, False),  # no Lt/Gt in 1.33
])
def test_tolerates_taint(toleration, expected):
    assert tolerates_taint(toleration, TAINT) is expected


def test_tolerates_all_and_first_untolerated():
    taints = [{"key": "a", "effect": NO_SCHEDULE}, {"key": "b", "effect": "PreferNoSchedule"}]
    assert tolerates_all([{"key": "a", "operator": "Exists"}, {"key": "b", "operator": "Exists"}], taints)
    assert not tolerates_all([{"key": "a", "operator": "Exists"}], taints)
    assert tolerates_all(None, [])
    tolerations = [{"key": "a", "operator": "Exists"}]
    assert first_untolerated_taint(taints, tolerations) == taints[1]
    assert first_untolerated_taint(taints, tolerations, (NO_SCHEDULE, NO_EXECUTE)) is None


def test_matching_tolerations_uses_the_first_match_only():
    taints = [{"key": "a", "effect": NO_EXECUTE}]
    short = {"key": "a", "operator": "Exists", "tolerationSeconds": 10}
    long = {"key": "a", "operator": "Exists", "tolerationSeconds": 100}
    assert matching_tolerations(taints, [short, long]) == [short]
    assert min_toleration_s([short, long], taints) == 10.0
    assert min_toleration_s([long, short], taints) == 100.0


@pytest.mark.parametrize("tolerations,expected", [
    (None, 0.0),  # untolerated: evict now
    ([{"operator": "Exists"}], None),  # no seconds: forever
    ([{"operator": "Exists", "tolerationSeconds": -5}], 0.0),
    ([{"key": "a", "operator": "Exists", "tolerationSeconds": 30}, {"key": "b", "operator": "Exists",
                                                                     "tolerationSeconds": 20}], 20.0),
])
def test_min_toleration_s(tolerations, expected):
    taints = [{"key": "a", "effect": NO_EXECUTE}, {"key": "b", "effect": NO_EXECUTE}]
    assert min_toleration_s(tolerations, taints) == expected


def test_min_toleration_s_without_taints_is_forever():
    assert min_toleration_s(None, []) is None


def test_eviction_time():
    assert eviction_time(T0, 30.0) == T0 + timedelta(seconds=30)
    assert eviction_time(T0, 0.0) == T0
    assert eviction_time(T0, None) is None


def test_default_tolerations_added_unless_covered():
    added = default_tolerations({"spec": {}})
    assert added == [
        {"key": TAINT_NODE_NOT_READY, "operator": "Exists", "effect": NO_EXECUTE, "tolerationSeconds": 300},
        {"key": TAINT_NODE_UNREACHABLE, "operator": "Exists", "effect": NO_EXECUTE, "tolerationSeconds": 300},
    ]
    pod = {"spec": {"tolerations": [{"key": TAINT_NODE_NOT_READY, "operator": "Equal", "value": "x"}]}}
    assert [t["key"] for t in default_tolerations(pod, 10, 20)] == [TAINT_NODE_UNREACHABLE]
    assert default_tolerations(pod, 10, 20)[0]["tolerationSeconds"] == 20
    # An empty key with an empty or NoExecute effect covers both.
    assert default_tolerations({"spec": {"tolerations": [{"operator": "Exists"}]}}) == []
    # A NoSchedule toleration for the key does not.
    covered = default_tolerations({"spec": {"tolerations": [{"key": TAINT_NODE_UNREACHABLE, "operator": "Exists",
                                                             "effect": NO_SCHEDULE}]}})
    assert len(covered) == 2
    assert pod["spec"]["tolerations"] == [{"key": TAINT_NODE_NOT_READY, "operator": "Equal", "value": "x"}]
