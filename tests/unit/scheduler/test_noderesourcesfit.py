"""NodeResourcesFit: Filter verdicts with upstream's reason texts, the three scoring
strategies on hand-computed examples, args validation and queueing hints."""

from __future__ import annotations

from typing import Any

import pytest

from fakekube.scheduler.framework import (
    ASSIGNED_POD, NODE, UNSCHEDULED_POD, Action, Code, CycleState, Hint, PodInfo, Status,
)
from fakekube.scheduler.plugins.noderesourcesfit import (
    NAME, NodeResourcesFit, schedulable_after_node_change, schedulable_after_pod_event,
)
from tests.unit.scheduler.builders import GI, MI, container, handle, node, node_info, pod

Obj = dict[str, Any]


def fit(args: dict[str, Any] | None = None) -> NodeResourcesFit:
    return NodeResourcesFit(handle(), args or {})


def run_filter(plugin: NodeResourcesFit, incoming: Obj, node_obj: Obj, *placed: Obj) -> Status | None:
    state = CycleState()
    info = PodInfo(incoming)
    assert plugin.pre_filter(state, info) == (None, None)
    return plugin.filter(state, info, node_info(node_obj, *placed))


def run_score(plugin: NodeResourcesFit, incoming: Obj, node_obj: Obj, *placed: Obj) -> int:
    state = CycleState()
    info = PodInfo(incoming)
    target = node_info(node_obj, *placed)
    assert plugin.pre_score(state, info, [target]) is None
    return plugin.score(state, info, target)


# -- Filter -------------------------------------------------------------------------------
def test_fits_when_requests_fit() -> None:
    # 4 cpu allocatable, 3 requested: a 1-cpu pod fits exactly (request <= allocatable - requested).
    assert run_filter(fit(), pod(cpu="1", memory="1Gi"), node(), pod("a", cpu="3", memory="6Gi")) is None


def test_insufficient_cpu() -> None:
    status = run_filter(fit(), pod(cpu="2", memory="1Gi"), node(), pod("a", cpu="3", memory="6Gi"))
    assert status is not None and status.code == Code.UNSCHEDULABLE and status.plugin == NAME
    assert status.reasons == ("Insufficient cpu",)


def test_every_insufficient_resource_is_listed_in_upstream_order() -> None:
    # Allocatable pods 1 and one pod there: Too many pods comes first, then cpu, memory,
    # ephemeral-storage, then the scalar resources (sorted by name here).
    incoming = pod(cpu="2", memory="3Gi", ephemeral_storage="2Gi",
                   scalar={"example.com/zeta": "1", "example.com/alpha": "1"})
    status = run_filter(fit(), incoming, node(pods=1, ephemeral_storage="1Gi"), pod("a", cpu="3", memory="6Gi"))
    assert status is not None
    assert status.reasons == ("Too many pods", "Insufficient cpu", "Insufficient memory",
                              "Insufficient ephemeral-storage", "Insufficient example.com/alpha",
                              "Insufficient example.com/zeta")
    assert status.message == ("Too many pods, Insufficient cpu, Insufficient memory, Insufficient ephemeral-storage, "
                              "Insufficient example.com/alpha, Insufficient example.com/zeta")


def test_a_pod_requesting_nothing_is_only_checked_against_the_pod_count() -> None:
    full = pod("a", cpu="4", memory="8Gi")
    assert run_filter(fit(), pod(containers=[container()]), node(), full) is None
    status = run_filter(fit(), pod(containers=[container()]), node(pods=1), full)
    assert status is not None and status.reasons == ("Too many pods",)


def test_init_containers_and_sidecars_count_as_pod_requests() -> None:
    # PodRequests: max(init 3 cpu, sum of app containers 1 cpu) = 3 cpu > 4 - 2.
    incoming = pod(containers=[container(cpu="1")], init=[container("i", cpu="3")])
    status = run_filter(fit(), incoming, node(), pod("a", cpu="2"))
    assert status is not None and status.reasons == ("Insufficient cpu",)


def test_extended_resource_missing_on_node() -> None:
    status = run_filter(fit(), pod(scalar={"example.com/gpu": "1"}), node())
    assert status is not None and status.reasons == ("Insufficient example.com/gpu",)
    assert run_filter(fit(), pod(scalar={"example.com/gpu": "1"}), node(scalar={"example.com/gpu": "1"})) is None


def test_ignored_resources_and_groups_skip_extended_resources_only() -> None:
    gpu = pod(scalar={"example.com/gpu": "1"})
    assert run_filter(fit({"ignoredResources": ["example.com/gpu"]}), gpu, node()) is None
    assert run_filter(fit({"ignoredResourceGroups": ["example.com"]}), gpu, node()) is None
    # hugepages-* is not an extended resource: it cannot be ignored.
    huge = pod(scalar={"hugepages-2Mi": "2Mi"})
    status = run_filter(fit({"ignoredResources": ["hugepages-2Mi"]}), huge, node())
    assert status is not None and status.reasons == ("Insufficient hugepages-2Mi",)


# -- Score --------------------------------------------------------------------------------
# Node: 4 cpu (4000m), 8Gi; one pod there requests 1 cpu and 2Gi; the pod 1 cpu and 1Gi.
PLACED = pod("a", cpu="1", memory="2Gi")
INCOMING = pod(cpu="1", memory="1Gi")


def test_least_allocated_default() -> None:
    # cpu: (4000 - 2000) * 100 / 4000 = 50; memory: (8Gi - 3Gi) * 100 / 8Gi = 62.5 -> 62;
    # (50 + 62) / 2 = 56.
    assert run_score(fit(), INCOMING, node(), PLACED) == 56


def test_least_allocated_counts_non_zero_requests() -> None:
    # Neither pod requests anything: each counts 100m and 200Mi.
    # cpu: (4000 - 200) * 100 / 4000 = 95; memory: (8Gi - 400Mi) * 100 / 8Gi = 95.11 -> 95.
    # A node with 8 cpu: (8000 - 200) * 100 / 8000 = 97.5 -> 97; (97 + 95) / 2 = 96.
    empty = pod(containers=[container()])
    assert run_score(fit(), empty, node(), pod("a", containers=[container()])) == 95
    assert run_score(fit(), empty, node(cpu="8"), pod("a", containers=[container()])) == 96


def test_least_allocated_over_capacity_scores_zero_for_that_resource() -> None:
    # cpu 5000 requested of 4000: 0; memory (8Gi - 3Gi) -> 62; weights 1: 31.
    assert run_score(fit(), pod(cpu="4", memory="1Gi"), node(), PLACED) == 31


def test_most_allocated_with_weights() -> None:
    # cpu 2000/4000 -> 50 (weight 2); memory 3Gi/8Gi -> 37.5 -> 37 (weight 1):
    # (50 * 2 + 37) / 3 = 137 / 3 = 45.
    args = {"scoringStrategy": {"type": "MostAllocated",
                                "resources": [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}]}}
    assert run_score(fit(args), INCOMING, node(), PLACED) == 45


def test_most_allocated_caps_requests_at_allocatable() -> None:
    # cpu 5000 of 4000 counts as 4000: 100; memory 37; (100 + 37) / 2 = 68.
    assert run_score(fit({"scoringStrategy": {"type": "MostAllocated"}}), pod(cpu="4", memory="1Gi"), node(),
                     PLACED) == 68


def test_requested_to_capacity_ratio_rounds_half_away_from_zero() -> None:
    # Shape (0, 0) (100, 10) scaled to (0, 0) (100, 100): cpu utilization 2000 * 100 / 4000 = 50
    # -> 50; memory 3Gi * 100 / 8Gi = 37.5 -> 37 -> 37; mean 43.5 rounds to 44.
    args = {"scoringStrategy": {"type": "RequestedToCapacityRatio",
                                "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0},
                                                                       {"utilization": 100, "score": 10}]}}}
    assert run_score(fit(args), INCOMING, node(), PLACED) == 44


def test_requested_to_capacity_ratio_truncates_toward_zero_on_a_falling_shape() -> None:
    # Shape (0, 10) (30, 3) scaled to (0, 100) (30, 30). 10 cpu node with 1 cpu placed, pod 1 cpu:
    # utilization 2000 * 100 / 10000 = 20 -> 100 + (30 - 100) * 20 / 30 = 100 + trunc(-46.67) = 54
    # (flooring would give 53). Memory: 3Gi of 8Gi = 37 > 30 -> the last point's 30.
    # (54 + 30) / 2 = 42.
    args = {"scoringStrategy": {"type": "RequestedToCapacityRatio",
                                "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 10},
                                                                       {"utilization": 30, "score": 3}]}}}
    assert run_score(fit(args), INCOMING, node(cpu="10"), PLACED) == 42


def test_requested_to_capacity_ratio_leaves_out_zero_scores_and_missing_resources() -> None:
    # Only example.com/gpu is scored. A node without it scores 0; one with 4 gpus, 1 taken,
    # pod asks 1: utilization 50 -> 50 with shape (0, 0) (100, 10).
    args = {"scoringStrategy": {"type": "RequestedToCapacityRatio",
                                "resources": [{"name": "example.com/gpu", "weight": 3}],
                                "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0},
                                                                       {"utilization": 100, "score": 10}]}}}
    gpu_pod = pod(scalar={"example.com/gpu": "1"})
    assert run_score(fit(args), gpu_pod, node()) == 0
    gpu_node = node(scalar={"example.com/gpu": "4"})
    assert run_score(fit(args), gpu_pod, gpu_node, pod("a", scalar={"example.com/gpu": "1"})) == 50


def test_score_without_pre_score_computes_the_same() -> None:
    plugin = fit()
    info = PodInfo(INCOMING)
    assert plugin.score(CycleState(), info, node_info(node(), PLACED)) == 56


# -- args ---------------------------------------------------------------------------------
@pytest.mark.parametrize("args, message", [
    ({"scoringStrategy": {"type": "Fancy"}},
     'scoringStrategy.type: Unsupported value: "Fancy": supported values: "LeastAllocated", "MostAllocated", '
     '"RequestedToCapacityRatio"'),
    ({"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 101}]}},
     "resource weight of cpu not in valid range (0, 100]"),
    ({"scoringStrategy": {"type": "RequestedToCapacityRatio"}}, "at least one point must be specified"),
    ({"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {
        "shape": [{"utilization": 50, "score": 1}, {"utilization": 50, "score": 2}]}}},
     "values must be sorted in increasing order"),
    ({"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {
        "shape": [{"utilization": 50, "score": 11}]}}}, "not in valid range [0, 10]"),
    ({"ignoredResourceGroups": ["example.com/x"]}, "resource group name can't contain '/'"),
    ({"ignoredResource": ["x"]}, "unknown field(s) ignoredResource"),
])
def test_bad_args_are_refused(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=None) as raised:
        fit(args)
    assert message in str(raised.value)


def test_defaults_fill_in_resources_and_weights() -> None:
    plugin = fit({"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu"}]}})
    assert [(spec.name, spec.weight) for spec in plugin.args.resources] == [("cpu", 1)]
    assert [(spec.name, spec.weight) for spec in fit().args.resources] == [("cpu", 1), ("memory", 1)]


# -- queueing hints -----------------------------------------------------------------------
def test_registered_events() -> None:
    events = {(hint.event.resource, hint.event.action) for hint in fit().events_to_register()}
    pods = Action.DELETE | Action.UPDATE_POD_SCALE_DOWN
    assert events == {(ASSIGNED_POD, pods), (UNSCHEDULED_POD, pods),
                      (NODE, Action.ADD | Action.UPDATE_NODE_ALLOCATABLE)}


def test_pod_deleted_hint() -> None:
    target = pod(cpu="1")
    assert schedulable_after_pod_event(target, pod("a", node_name="node-1"), None) == Hint.QUEUE
    assert schedulable_after_pod_event(target, pod("a"), None) == Hint.SKIP


def test_pod_scaled_down_hint() -> None:
    target = pod(cpu="1")
    before = pod("a", node_name="node-1", cpu="2", memory="2Gi")
    less_cpu = pod("a", node_name="node-1", cpu="1", memory="2Gi")
    less_memory = pod("a", node_name="node-1", cpu="2", memory="1Gi")
    assert schedulable_after_pod_event(target, before, less_cpu) == Hint.QUEUE
    assert schedulable_after_pod_event(target, before, less_memory) == Hint.SKIP  # target wants no memory
    unbound = pod("a", cpu="2"), pod("a", cpu="1")
    assert schedulable_after_pod_event(target, *unbound) == Hint.SKIP
    assert schedulable_after_pod_event(target, pod(cpu="2"), pod(cpu="1")) == Hint.QUEUE  # the pod itself


def test_node_change_hints() -> None:
    target = pod(cpu="3", memory=f"{512 * MI}")
    small, big = node(cpu="2"), node(cpu="4")
    assert schedulable_after_node_change(target, None, big) == Hint.QUEUE
    assert schedulable_after_node_change(target, None, small) == Hint.SKIP
    assert schedulable_after_node_change(target, small, big) == Hint.QUEUE
    relabelled = node(cpu="4", labels={"a": "b"})
    assert schedulable_after_node_change(target, big, relabelled) == Hint.SKIP  # fits, but nothing grew
    assert schedulable_after_node_change(target, node(cpu="4", pods=0), big) == Hint.QUEUE  # pod count grew
    assert schedulable_after_node_change(target, big, node(cpu="4", memory=f"{16 * GI}")) == Hint.QUEUE
