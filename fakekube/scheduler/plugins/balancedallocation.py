"""NodeResourcesBalancedAllocation: prefer nodes whose resources would be used evenly once
the pod is placed — score = (1 − standard deviation of requested/allocatable over the
configured resources) × 100.

Upstream: ``pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go`` (1.33).
It counts real requests (not the 100m/200Mi non-zero defaults NodeResourcesFit scores
with), including the pod being scheduled; a fraction above 1 counts as 1. PreScore skips
the plugin for a pod that requests none of the resources (best-effort): without it such
pods piled onto one node (kubernetes#129138, fixed in 1.33 by #130260).

Args (NodeResourcesBalancedAllocationArgs): ``resources: [{name, weight}]``, by default
cpu and memory; every weight must be 1 (the formula has no weights).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Hashable, Mapping

from fakekube.scheduler.framework import SKIP, CycleState, NodeInfo, PodInfo, Status
from fakekube.scheduler.plugins import resourceallocation as ra

if TYPE_CHECKING:
    from fakekube.scheduler.runtime import Handle

NAME = "NodeResourcesBalancedAllocation"
PRE_SCORE_KEY = "PreScore" + NAME


class NodeResourcesBalancedAllocation:
    name = NAME

    def __init__(self, handle: "Handle", args: Mapping[str, Any]) -> None:
        self.resources = parse_args(args)
        self._gather = ra.gatherer(self.resources, use_requested=True)

    def pre_score(self, state: CycleState, info: PodInfo, nodes: list[NodeInfo]) -> Status | None:
        requests = ra.pod_requests(info, self.resources, use_requested=True)
        if not any(requests):
            return SKIP
        state.data[PRE_SCORE_KEY] = requests
        return None

    def score(self, state: CycleState, info: PodInfo, node: NodeInfo) -> int:
        requests = state.data.get(PRE_SCORE_KEY)
        if requests is None:
            requests = ra.pod_requests(info, self.resources, use_requested=True)
            if not any(requests):
                return 0
        return ra.balanced_scorer(*self._gather(node, requests))

    def score_signature(self, state: CycleState, info: PodInfo) -> Hashable | None:
        """The score reads only the pod's requests, as PreScore gathered them (so the
        framework remembers it per node generation: runtime.Framework.run_score)."""
        requests = state.data.get(PRE_SCORE_KEY)
        return None if requests is None else (NAME, tuple(requests))


def parse_args(args: Mapping[str, Any]) -> tuple[ra.ResourceSpec, ...]:
    """ValidateNodeResourcesBalancedAllocationArgs after v1 defaulting: no duplicate resource,
    every weight 1. ValueError with the field path."""
    unknown = sorted(set(args) - {"resources", "apiVersion", "kind"})
    if unknown:
        raise ValueError(f"{NAME} args: unknown field(s) {', '.join(unknown)}")
    resources = ra.parse_resources(args.get("resources"), f"{NAME} args: resources")
    seen: set[str] = set()
    for index, spec in enumerate(resources):
        if spec.name in seen:
            raise ValueError(f'{NAME} args: resources[{index}].name: Duplicate value: "{spec.name}"')
        seen.add(spec.name)
        if spec.weight != 1:
            raise ValueError(f"{NAME} args: resources[{index}].weight: Invalid value: {spec.weight}: must be 1")
    return resources
