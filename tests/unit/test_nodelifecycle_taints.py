"""Node taints from conditions, toleration matching, the taint manager's timing, admission defaults."""

from datetime import timedelta

import pytest

from fakekube.clock import DEFAULT_EPOCH, format_rfc3339
from fakekube.controllers.nodelifecycle import (
    NodeLifecycleConfig, NoExecuteAction, desired_noschedule_taints, noexecute_decision, noschedule_diff, swap_taints,
)
from fakekube.objects.tolerations import default_tolerations, eviction_time, min_toleration_s
from fakekube.objects.tolerations import tolerates_taint as tolerates
from fakekube.controllers.nodelifecycle import events

UNREACHABLE = {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}
NOT_READY = {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}


def at(seconds: float):
    return DEFAULT_EPOCH + timedelta(seconds=seconds)


def node(conditions, taints=(), unschedulable=False):
    return {"spec": {"taints": list(taints), "unschedulable": unschedulable},
            "status": {"conditions": [{"type": t, "status": s} for t, s in conditions]}}


def test_noschedule_taints_follow_conditions_and_cordon() -> None:
    sick = node([("Ready", "Unknown"), ("MemoryPressure", "True"), ("DiskPressure", "False"),
                 ("PIDPressure", "True"), ("NetworkUnavailable", "True")], unschedulable=True)
    assert [t["key"] for t in desired_noschedule_taints(sick)] == [
        "node.kubernetes.io/unreachable", "node.kubernetes.io/memory-pressure", "node.kubernetes.io/pid-pressure",
        "node.kubernetes.io/network-unavailable", "node.kubernetes.io/unschedulable",
    ]
    assert all(t["effect"] == "NoSchedule" for t in desired_noschedule_taints(sick))
    assert desired_noschedule_taints(node([("Ready", "False")]))[0]["key"] == "node.kubernetes.io/not-ready"
    assert desired_noschedule_taints(node([("Ready", "True"), ("MemoryPressure", "False")])) == []


def test_noschedule_diff_leaves_user_and_noexecute_taints_alone() -> None:
    user = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
    stale = {"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule", "timeAdded": format_rfc3339(at(45))}
    recovered = node([("Ready", "True"), ("DiskPressure", "True")], taints=[user, stale, UNREACHABLE])
    to_add, to_remove = noschedule_diff(recovered)
    assert to_add == [{"key": "node.kubernetes.io/disk-pressure", "effect": "NoSchedule"}]
    assert to_remove == [stale]
    after = swap_taints(recovered["spec"]["taints"], to_add, to_remove, at(50))
    assert after == [user, UNREACHABLE, {**to_add[0], "timeAdded": format_rfc3339(at(50))}]


def test_noexecute_decisions() -> None:
    assert noexecute_decision("Unknown", []).action is NoExecuteAction.QUEUE
    assert noexecute_decision("Unknown", []).requeue
    assert not noexecute_decision("Unknown", [UNREACHABLE]).requeue
    swap = noexecute_decision("Unknown", [NOT_READY])
    assert (swap.action, swap.to_add, swap.to_remove) == (NoExecuteAction.SWAP_NOW, (UNREACHABLE,), (NOT_READY,))
    assert noexecute_decision("False", [UNREACHABLE]).to_add == (NOT_READY,)
    assert noexecute_decision("True", [UNREACHABLE]).action is NoExecuteAction.MARK_REACHABLE
    assert swap_taints([NOT_READY], swap.to_add, swap.to_remove, at(40)) == [{**UNREACHABLE, "timeAdded": format_rfc3339(at(40))}]


@pytest.mark.parametrize(("toleration", "taint", "expected"), [
    ({"operator": "Exists"}, {"key": "anything", "value": "v", "effect": "NoExecute"}, True),
    ({"key": "k", "operator": "Exists"}, {"key": "k", "value": "v", "effect": "NoSchedule"}, True),
    ({"key": "k", "operator": "Exists", "effect": "NoSchedule"}, {"key": "k", "effect": "NoExecute"}, False),
    ({"key": "k", "operator": "Equal", "value": "a"}, {"key": "k", "value": "a", "effect": "NoExecute"}, True),
    ({"key": "k", "value": "a"}, {"key": "k", "value": "b", "effect": "NoExecute"}, False),
    ({"key": "k"}, {"key": "k", "effect": "NoExecute"}, True),  # empty operator is Equal, both values empty
    ({"key": "other", "operator": "Exists"}, {"key": "k", "effect": "NoExecute"}, False),
    # Gt/Lt are a 1.35 alpha (TaintTolerationComparisonOperators): 1.33 tolerates nothing with them.
    ({"key": "k", "operator": "Gt", "value": "5"}, {"key": "k", "value": "7", "effect": "NoExecute"}, False),
    ({"key": "k", "operator": "Lt", "value": "5"}, {"key": "k", "value": "x", "effect": "NoExecute"}, False),
])
def test_toleration_matching(toleration, taint, expected) -> None:
    assert tolerates(toleration, taint) is expected


def tainted(seconds_added: float):
    return [{**UNREACHABLE, "timeAdded": format_rfc3339(at(seconds_added))}]


def test_unreachable_toleration_60s_tainted_at_40_evicts_at_100() -> None:
    tolerations = [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}]
    seconds = min_toleration_s(tolerations, tainted(40))
    assert seconds == 60
    assert eviction_time(at(40), seconds) == at(100)


def test_toleration_without_seconds_never_evicts() -> None:
    tolerations = [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}]
    assert min_toleration_s(tolerations, tainted(40)) is None
    assert eviction_time(at(40), None) is None


def test_untolerated_taint_evicts_at_once() -> None:
    assert min_toleration_s([], tainted(40)) == 0
    other = [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]
    assert min_toleration_s(other, tainted(40)) == 0
    assert eviction_time(at(40), 0) == at(40)


def test_min_over_used_tolerations_and_negative_is_zero() -> None:
    both = [*tainted(0), NOT_READY]
    tolerations = [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 90},
    ]
    assert min_toleration_s(tolerations, both) == 30
    tolerations[0] = {**tolerations[0], "tolerationSeconds": -5}
    assert min_toleration_s(tolerations, both) == 0
    assert min_toleration_s(tolerations, []) is None


def test_only_first_matching_toleration_counts() -> None:
    tolerations = [
        {"operator": "Exists"},  # tolerates everything forever, and comes first
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 10},
    ]
    assert min_toleration_s(tolerations, tainted(0)) is None


def test_default_tolerations_admission() -> None:
    config = NodeLifecycleConfig()
    seconds = (config.default_not_ready_toleration_s, config.default_unreachable_toleration_s)
    added = default_tolerations({"spec": {}}, *seconds)
    assert added == [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    ]
    has_unreachable = {"spec": {"tolerations": [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}]}}
    assert [t["key"] for t in default_tolerations(has_unreachable, *seconds)] == ["node.kubernetes.io/not-ready"]
    # A NoSchedule-only toleration for the key does not count; an empty-key one counts for both.
    noschedule = {"spec": {"tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule"}]}}
    assert len(default_tolerations(noschedule, *seconds)) == 2
    assert default_tolerations({"spec": {"tolerations": [{"operator": "Exists"}]}}, *seconds) == []
    assert [t["tolerationSeconds"] for t in default_tolerations({"spec": {}}, 30, 60)] == [30, 60]


def test_taint_manager_event_texts() -> None:
    marked = events.taint_eviction_marked("default", "web-0")
    assert (marked.type, marked.reason, marked.message) == ("Normal", "TaintManagerEviction", "Marking for deletion Pod default/web-0")
    assert events.taint_eviction_cancelled("default", "web-0").message == "Cancelling deletion of Pod default/web-0"
    assert events.node_status_change("n1").message == "Node n1 status is now: NodeNotReady"
