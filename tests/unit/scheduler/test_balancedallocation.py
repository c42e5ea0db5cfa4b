"""NodeResourcesBalancedAllocation: upstream's standard-deviation score on hand-computed
examples, the best-effort PreScore Skip, args validation."""

from __future__ import annotations

from typing import Any

import pytest

from fakekube.scheduler.framework import Code, CycleState, PodInfo
from fakekube.scheduler.plugins.balancedallocation import NodeResourcesBalancedAllocation
from tests.unit.scheduler.builders import container, handle, node, node_info, pod

Obj = dict[str, Any]


def balanced(args: dict[str, Any] | None = None) -> NodeResourcesBalancedAllocation:
    return NodeResourcesBalancedAllocation(handle(), args or {})


def run_score(plugin: NodeResourcesBalancedAllocation, incoming: Obj, node_obj: Obj, *placed: Obj) -> int:
    state = CycleState()
    info = PodInfo(incoming)
    target = node_info(node_obj, *placed)
    assert plugin.pre_score(state, info, [target]) is None
    return plugin.score(state, info, target)


def test_two_resources() -> None:
    # 4 cpu / 8Gi node, 1 cpu + 2Gi placed, pod 1 cpu + 1Gi (the pod counts):
    # fractions cpu 2000/4000 = 0.5, memory 3Gi/8Gi = 0.375; std = |0.5 - 0.375| / 2 = 0.0625;
    # (1 - 0.0625) * 100 = 93.75 -> 93.
    assert run_score(balanced(), pod(cpu="1", memory="1Gi"), node(), pod("a", cpu="1", memory="2Gi")) == 93


def test_perfect_balance_scores_100() -> None:
    # cpu 2000/4000 = 0.5 and memory 4Gi/8Gi = 0.5: std 0.
    assert run_score(balanced(), pod(cpu="1", memory="2Gi"), node(), pod("a", cpu="1", memory="2Gi")) == 100


def test_three_resources_use_the_population_standard_deviation() -> None:
    # Fractions: cpu 0.5, memory 0.375, ephemeral-storage 10Gi/100Gi = 0.1.
    # mean = 0.975 / 3 = 0.325; squared deviations 0.030625 + 0.0025 + 0.050625 = 0.08375;
    # std = sqrt(0.08375 / 3) = 0.16708; (1 - 0.16708) * 100 = 83.29 -> 83.
    args = {"resources": [{"name": "cpu"}, {"name": "memory"}, {"name": "ephemeral-storage"}]}
    incoming = pod(cpu="1", memory="1Gi", ephemeral_storage="10Gi")
    assert run_score(balanced(args), incoming, node(ephemeral_storage="100Gi"),
                     pod("a", cpu="1", memory="2Gi")) == 83


def test_real_requests_not_non_zero_defaults() -> None:
    # The placed pod requests nothing (non-zero would count 100m/200Mi; balanced counts 0).
    # Pod 2 cpu, no memory: cpu 2000/4000 = 0.5, memory 0/8Gi = 0; std 0.25 -> 75.
    assert run_score(balanced(), pod(cpu="2"), node(), pod("a", containers=[container()])) == 75


def test_fraction_above_one_counts_as_one() -> None:
    # cpu 6000/4000 -> 1; memory 4Gi/8Gi = 0.5; std 0.25 -> 75.
    assert run_score(balanced(), pod(cpu="3", memory="2Gi"), node(), pod("a", cpu="3", memory="2Gi")) == 75


def test_scalar_resource_the_pod_does_not_request_is_left_out() -> None:
    # Only cpu is requested among cpu and example.com/gpu: one fraction, std 0 -> 100.
    args = {"resources": [{"name": "cpu"}, {"name": "example.com/gpu"}]}
    assert run_score(balanced(args), pod(cpu="1"), node(scalar={"example.com/gpu": "4"})) == 100


def test_best_effort_pod_skips_the_plugin() -> None:
    plugin = balanced()
    status = plugin.pre_score(CycleState(), PodInfo(pod(containers=[container()])), [])
    assert status is not None and status.code == Code.SKIP
    # Score called anyway (no PreScore state) scores 0, as upstream.
    assert plugin.score(CycleState(), PodInfo(pod(containers=[container()])), node_info(node())) == 0


def test_a_pod_requesting_only_unscored_resources_is_best_effort_too() -> None:
    status = balanced().pre_score(CycleState(), PodInfo(pod(ephemeral_storage="1Gi")), [])
    assert status is not None and status.code == Code.SKIP


@pytest.mark.parametrize("args, message", [
    ({"resources": [{"name": "cpu", "weight": 2}]}, "resources[0].weight: Invalid value: 2: must be 1"),
    ({"resources": [{"name": "cpu"}, {"name": "cpu"}]}, 'resources[1].name: Duplicate value: "cpu"'),
    ({"shape": []}, "unknown field(s) shape"),
])
def test_bad_args_are_refused(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as raised:
        balanced(args)
    assert message in str(raised.value)
