"""Scoring a node by what is requested of it against what it can allocate (upstream's
``noderesources/resource_allocation.go`` and the scorers of ``least_allocated.go``,
``most_allocated.go``, ``requested_to_capacity_ratio.go``), shared by NodeResourcesFit's
scoring strategies and NodeResourcesBalancedAllocation.

Everything is integer arithmetic where upstream's is (Go's int64 division, which
truncates toward zero), so scores equal kube-scheduler's to the unit.

Two ways to count requests, as upstream:

* NodeResourcesFit scores with *non-zero* cpu and memory: a container that requests
  neither counts as 100m / 200Mi (``PodInfo.non_zero_*``, ``NodeInfo.non_zero_*``), so
  best-effort pods still spread;
* NodeResourcesBalancedAllocation uses the real requests (``use_requested``).

Ephemeral storage and scalar (extended, hugepages-*) resources always use real requests; a
scalar resource the pod does not request, or the node does not have, is left out of the score.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable, Mapping, NamedTuple, Sequence

from fakekube.scheduler.framework import (
    CPU, EPHEMERAL_STORAGE, MAX_NODE_SCORE, MEMORY, NodeInfo, PodInfo, is_scalar_resource,
)

#: config.MaxCustomPriorityScore: a RequestedToCapacityRatio shape's scores are 0…10.
MAX_CUSTOM_PRIORITY_SCORE = 10
#: The utilization axis of a shape, in percent.
MAX_UTILIZATION = 100

#: (requested per resource, allocatable per resource) -> node score 0…100.
Scorer = Callable[[Sequence[int], Sequence[int]], int]


class ResourceSpec(NamedTuple):
    """config.ResourceSpec: a resource a strategy scores, and its weight."""

    name: str
    weight: int = 1


#: defaultResourceSpec: cpu and memory, weight 1 each.
DEFAULT_RESOURCES = (ResourceSpec(CPU, 1), ResourceSpec(MEMORY, 1))


def parse_resources(raw: Any, where: str) -> tuple[ResourceSpec, ...]:
    """``resources`` args as upstream's v1 defaulting leaves them: empty means cpu and memory;
    a missing or 0 weight means 1. Shape errors raise ValueError naming ``where``."""
    if raw is None or raw == []:
        return DEFAULT_RESOURCES
    if not isinstance(raw, list):
        raise ValueError(f"{where}: must be a list of {{name, weight}}")
    specs = []
    for index, entry in enumerate(raw):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str) or not entry["name"]:
            raise ValueError(f"{where}[{index}].name: Required value")
        weight = entry.get("weight") or 0
        if isinstance(weight, bool) or not isinstance(weight, int):
            raise ValueError(f"{where}[{index}].weight: must be an integer, got {weight!r}")
        specs.append(ResourceSpec(entry["name"], weight or 1))
    return tuple(specs)


# -- requests and allocatable per resource ------------------------------------------------
def pod_request(info: PodInfo, name: str, use_requested: bool) -> int:
    """calculatePodResourceRequest: what the pod asks of resource ``name`` (millicores for cpu)."""
    if name == CPU:
        return info.requests.milli_cpu if use_requested else info.non_zero_cpu
    if name == MEMORY:
        return info.requests.memory if use_requested else info.non_zero_memory
    if name == EPHEMERAL_STORAGE:
        return info.requests.ephemeral_storage
    return info.requests.scalar.get(name, 0)


def pod_requests(info: PodInfo, resources: Sequence[ResourceSpec], use_requested: bool) -> list[int]:
    """The pod's request of every scored resource, in ``resources`` order (the PreScore state)."""
    return [pod_request(info, spec.name, use_requested) for spec in resources]


def allocatable_and_requested(node: NodeInfo, name: str, pod_request_value: int,
                              use_requested: bool) -> tuple[int, int]:
    """calculateResourceAllocatableRequest: (allocatable, requested including the pod) of one
    resource on ``node``; (0, 0) leaves the resource out of the score."""
    if pod_request_value == 0 and is_scalar_resource(name):
        return 0, 0
    allocatable, requested = node.allocatable, node.requested
    if name == CPU:
        used = requested.milli_cpu if use_requested else node.non_zero_cpu
        return allocatable.milli_cpu, used + pod_request_value
    if name == MEMORY:
        used = requested.memory if use_requested else node.non_zero_memory
        return allocatable.memory, used + pod_request_value
    if name == EPHEMERAL_STORAGE:
        return allocatable.ephemeral_storage, requested.ephemeral_storage + pod_request_value
    if name in allocatable.scalar:
        return allocatable.scalar[name], requested.scalar.get(name, 0) + pod_request_value
    return 0, 0


#: (node, the pod's request of each scored resource) -> (requested, allocatable) per resource.
Gather = Callable[[NodeInfo, Sequence[int]], tuple[list[int], list[int]]]


def gatherer(resources: Sequence[ResourceSpec], use_requested: bool) -> Gather:
    """resourceAllocationScorer.score's first half, built once per plugin: each resource's
    (requested including the pod, allocatable); a resource left out has allocatable 0, which
    every scorer skips. The default cpu-and-memory pair gets a loop-free version (it runs
    once per scored node per pod). A partial of a module function, not a closure: plain
    data that a snapshot file can name (cluster/snapfile.py)."""
    names = tuple(spec.name for spec in resources)
    if names == (CPU, MEMORY):
        return functools.partial(_cpu_and_memory, use_requested)
    return functools.partial(_any_resources, names, use_requested)


def _cpu_and_memory(use_requested: bool, node: NodeInfo, requests: Sequence[int]) -> tuple[list[int], list[int]]:
    allocatable = node.allocatable
    if use_requested:
        used_cpu, used_memory = node.requested.milli_cpu, node.requested.memory
    else:
        used_cpu, used_memory = node.non_zero_cpu, node.non_zero_memory
    return ([used_cpu + requests[0], used_memory + requests[1]],
            [allocatable.milli_cpu, allocatable.memory])


def _any_resources(names: tuple[str, ...], use_requested: bool, node: NodeInfo,
                   requests: Sequence[int]) -> tuple[list[int], list[int]]:
    requested, allocatable = [], []
    for name, request in zip(names, requests):
        alloc, req = allocatable_and_requested(node, name, request, use_requested)
        requested.append(req)
        allocatable.append(alloc)
    return requested, allocatable


# -- the scorers (partials of module functions over immutable weights: shared as they are) ---
def least_allocated_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """LeastAllocated: the weighted mean of each resource's free share, 0…100 (more free is better)."""
    return functools.partial(_least_allocated, tuple(spec.weight for spec in resources))


def _least_allocated(weights: tuple[int, ...], requested: Sequence[int], allocatable: Sequence[int]) -> int:
    total = weight_sum = 0
    for req, alloc, weight in zip(requested, allocatable, weights):
        if alloc == 0:
            continue
        free_score = 0 if req > alloc else (alloc - req) * MAX_NODE_SCORE // alloc
        total += free_score * weight
        weight_sum += weight
    return total // weight_sum if weight_sum else 0


def most_allocated_scorer(resources: Sequence[ResourceSpec]) -> Scorer:
    """MostAllocated: the weighted mean of each resource's used share, 0…100 (requests above
    allocatable count as full: non-zero defaults can exceed it)."""
    return functools.partial(_most_allocated, tuple(spec.weight for spec in resources))


def _most_allocated(weights: tuple[int, ...], requested: Sequence[int], allocatable: Sequence[int]) -> int:
    total = weight_sum = 0
    for req, alloc, weight in zip(requested, allocatable, weights):
        if alloc == 0:
            continue
        total += min(req, alloc) * MAX_NODE_SCORE // alloc * weight
        weight_sum += weight
    return total // weight_sum if weight_sum else 0


def requested_to_capacity_ratio_scorer(resources: Sequence[ResourceSpec],
                                       shape: Sequence[tuple[int, int]]) -> Scorer:
    """RequestedToCapacityRatio: each resource's utilization (percent, truncated) through the
    piecewise-linear ``shape`` of (utilization, score 0…10) points, scores scaled ×10; the
    weighted mean of the resources scoring above 0, rounded half away from zero."""
    scaled = tuple((utilization, score * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for utilization, score in shape)
    return functools.partial(_requested_to_capacity_ratio, scaled, tuple(spec.weight for spec in resources))


def _requested_to_capacity_ratio(scaled: tuple[tuple[int, int], ...], weights: tuple[int, ...],
                                 requested: Sequence[int], allocatable: Sequence[int]) -> int:
    total = weight_sum = 0
    for req, alloc, weight in zip(requested, allocatable, weights):
        if alloc == 0:
            continue
        value = broken_linear(scaled, MAX_UTILIZATION if req > alloc else req * MAX_UTILIZATION // alloc)
        if value > 0:
            total += value * weight
            weight_sum += weight
    return (2 * total + weight_sum) // (2 * weight_sum) if weight_sum else 0  # math.Round, non-negative


def broken_linear(shape: Sequence[tuple[int, int]], p: int) -> int:
    """helper.BuildBrokenLinearFunction: the first point's score left of it, the last's right
    of it, linear in between (Go's truncating integer division)."""
    for index, (x, y) in enumerate(shape):
        if p <= x:
            if index == 0:
                return y
            x0, y0 = shape[index - 1]
            return y0 + _go_div((y - y0) * (p - x0), x - x0)
    return shape[-1][1]


def _go_div(a: int, b: int) -> int:
    """Go's int64 division: truncates toward zero (Python's // floors)."""
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b >= 0) else -quotient


def balanced_scorer(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """balancedResourceScorer: (1 − standard deviation of the used fractions) × 100, each
    fraction capped at 1; float64 arithmetic in upstream's order, truncated."""
    fractions = []
    total = 0.0
    for req, alloc in zip(requested, allocatable):
        if alloc == 0:
            continue
        fraction = min(float(req) / float(alloc), 1.0)
        total += fraction
        fractions.append(fraction)
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        squares = 0.0
        for fraction in fractions:
            squares = squares + (fraction - mean) * (fraction - mean)
        std = math.sqrt(squares / len(fractions))
    return int((1 - std) * float(MAX_NODE_SCORE))
