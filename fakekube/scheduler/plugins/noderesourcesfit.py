"""NodeResourcesFit: a pod fits a node only if the node's allocatable cpu, memory,
ephemeral storage, pod count and scalar resources cover what its pods already request plus
this pod's requests (Filter); nodes are scored by the configured strategy (Score).

Upstream: ``pkg/scheduler/framework/plugins/noderesources/fit.go`` (1.33). Filter reports
*every* insufficient resource, in the order: Too many pods, cpu, memory, ephemeral-storage,
then scalar resources (upstream walks a Go map there; we sort by name). Scoring uses the
non-zero requests (:mod:`~fakekube.scheduler.plugins.resourceallocation`).

Args (NodeResourcesFitArgs): ``ignoredResources`` (extended resources Filter does not
check), ``ignoredResourceGroups`` (their ``<group>/`` prefixes), ``scoringStrategy``
``{type: LeastAllocated | MostAllocated | RequestedToCapacityRatio, resources: [{name,
weight}], requestedToCapacityRatio: {shape: [{utilization, score}]}}`` — by default
LeastAllocated over cpu and memory, weight 1 each.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Hashable, Mapping, NamedTuple

from fakekube.objects.pods import pod_requests as pod_request_list
from fakekube.objects.syntax import qualified_name_errors
from fakekube.scheduler.framework import (
    ASSIGNED_POD, NODE, UNSCHEDULED_POD, Action, ClusterEvent, CycleState, EventHint, Hint, NodeInfo, Obj,
    PodInfo, Resources, Status, unschedulable,
)
from fakekube.scheduler.plugins import resourceallocation as ra
from fakekube.scheduler.plugins.helper import NodeMemo

if TYPE_CHECKING:
    from fakekube.scheduler.runtime import Handle

NAME = "NodeResourcesFit"
PRE_FILTER_KEY = "PreFilter" + NAME
PRE_SCORE_KEY = "PreScore" + NAME
FILTER_MEMO_KEY = "FilterMemo" + NAME

TOO_MANY_PODS = "Too many pods"
INSUFFICIENT = "Insufficient {resource}"
INSUFFICIENT_CPU = "Insufficient cpu"
INSUFFICIENT_MEMORY = "Insufficient memory"
INSUFFICIENT_EPHEMERAL_STORAGE = "Insufficient ephemeral-storage"

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
STRATEGIES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

#: Args keys besides the fields (a typed args document may carry them).
_TYPE_META = ("apiVersion", "kind")
_ARGS_FIELDS = ("ignoredResources", "ignoredResourceGroups", "scoringStrategy")
#: Resource names with this prefix are quota scopes, never extended resources.
_REQUESTS_PREFIX = "requests."


class FitArgs(NamedTuple):
    """Validated NodeResourcesFitArgs."""

    ignored_resources: frozenset[str] = frozenset()
    ignored_groups: frozenset[str] = frozenset()
    strategy: str = LEAST_ALLOCATED
    resources: tuple[ra.ResourceSpec, ...] = ra.DEFAULT_RESOURCES
    shape: tuple[tuple[int, int], ...] = ()


class _Wanted(NamedTuple):
    """The PreFilter state: the pod's requests, and the scalar ones Filter checks (sorted)."""

    requests: Resources
    empty: bool
    scalars: tuple[tuple[str, int], ...] = ()


class NodeResourcesFit:
    name = NAME

    def __init__(self, handle: "Handle", args: Mapping[str, Any]) -> None:
        self.args = parse_args(args)
        resources = self.args.resources
        if self.args.strategy == MOST_ALLOCATED:
            self._scorer = ra.most_allocated_scorer(resources)
        elif self.args.strategy == REQUESTED_TO_CAPACITY_RATIO:
            self._scorer = ra.requested_to_capacity_ratio_scorer(resources, self.args.shape)
        else:
            self._scorer = ra.least_allocated_scorer(resources)
        self._gather = ra.gatherer(resources, use_requested=False)
        self._filter_memo = NodeMemo()

    # -- filtering -------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, info: PodInfo) -> tuple[set[str] | None, Status | None]:
        requests = info.requests
        scalars = tuple(sorted((name, value) for name, value in requests.scalar.items()
                               if value and not self._ignored(name)))
        empty = not (requests.milli_cpu or requests.memory or requests.ephemeral_storage or requests.scalar)
        state.data[PRE_FILTER_KEY] = _Wanted(requests, empty, scalars)
        signature = (requests.milli_cpu, requests.memory, requests.ephemeral_storage, scalars, empty)
        state.data[FILTER_MEMO_KEY] = self._filter_memo.table(signature)
        return None, None

    def filter(self, state: CycleState, info: PodInfo, node: NodeInfo) -> Status | None:
        """fitsRequest, remembered per (node state, pod requests): see helper.NodeMemo."""
        memo = state.data.get(FILTER_MEMO_KEY)
        if memo is not None:
            hit = memo.get(node.name)
            if hit is not None and hit[0] == node.generation:
                return hit[1]
        wanted = state.data.get(PRE_FILTER_KEY)
        if wanted is None:  # PreFilter did not run (a what-if outside a cycle): compute as it would
            self.pre_filter(state, info)
            wanted = state.data[PRE_FILTER_KEY]
        reasons = insufficient_resources(wanted, node)
        status = unschedulable(NAME, *reasons) if reasons else None
        if memo is not None:
            memo[node.name] = (node.generation, status)
        return status

    def filter_signature(self, state: CycleState, info: PodInfo) -> Hashable | None:
        """The verdict reads only the pod's requests (as PreFilter summed them)."""
        wanted = state.data.get(PRE_FILTER_KEY)
        if wanted is None:
            return None
        requests = wanted.requests
        return (requests.milli_cpu, requests.memory, requests.ephemeral_storage, wanted.scalars, wanted.empty)

    def _ignored(self, name: str) -> bool:
        """Filter skips extended resources named in ignoredResources or in an ignored group."""
        if not is_extended_resource(name):
            return False
        return name in self.args.ignored_resources or name.split("/", 1)[0] in self.args.ignored_groups

    # -- scoring ---------------------------------------------------------------------------
    def pre_score(self, state: CycleState, info: PodInfo, nodes: list[NodeInfo]) -> Status | None:
        requests = ra.pod_requests(info, self.args.resources, use_requested=False)
        state.data[PRE_SCORE_KEY] = requests
        return None

    def score(self, state: CycleState, info: PodInfo, node: NodeInfo) -> int:
        requests = state.data.get(PRE_SCORE_KEY)
        if requests is None:
            requests = ra.pod_requests(info, self.args.resources, use_requested=False)
        return self._scorer(*self._gather(node, requests))

    def score_signature(self, state: CycleState, info: PodInfo) -> Hashable | None:
        """The score reads only the pod's (non-zero) requests, as PreScore gathered them (so
        the framework remembers it per node generation: runtime.Framework.run_score)."""
        requests = state.data.get(PRE_SCORE_KEY)
        return None if requests is None else (NAME, tuple(requests))

    # -- queueing --------------------------------------------------------------------------
    def events_to_register(self) -> list[EventHint]:
        """1.33 with SchedulerQueueingHints and InPlacePodVerticalScaling on (their defaults):
        a pod deleted or scaled down, a node added or its allocatable changed."""
        pod_actions = Action.DELETE | Action.UPDATE_POD_SCALE_DOWN
        return [EventHint(ClusterEvent(ASSIGNED_POD, pod_actions), schedulable_after_pod_event),
                EventHint(ClusterEvent(UNSCHEDULED_POD, pod_actions), schedulable_after_pod_event),
                EventHint(ClusterEvent(NODE, Action.ADD | Action.UPDATE_NODE_ALLOCATABLE),
                          schedulable_after_node_change)]


# -- the fit rule --------------------------------------------------------------------------
def insufficient_resources(wanted: _Wanted, node: NodeInfo) -> list[str]:
    """fitsRequest: the reason for every resource the node lacks (empty: the pod fits)."""
    reasons = []
    allocatable, used = node.allocatable, node.requested
    if len(node.pods) + 1 > allocatable.allowed_pods:
        reasons.append(TOO_MANY_PODS)
    if wanted.empty:
        return reasons
    requests = wanted.requests
    if 0 < requests.milli_cpu and requests.milli_cpu > allocatable.milli_cpu - used.milli_cpu:
        reasons.append(INSUFFICIENT_CPU)
    if 0 < requests.memory and requests.memory > allocatable.memory - used.memory:
        reasons.append(INSUFFICIENT_MEMORY)
    if 0 < requests.ephemeral_storage and \
            requests.ephemeral_storage > allocatable.ephemeral_storage - used.ephemeral_storage:
        reasons.append(INSUFFICIENT_EPHEMERAL_STORAGE)
    for name, value in wanted.scalars:
        if value > allocatable.scalar.get(name, 0) - used.scalar.get(name, 0):
            reasons.append(INSUFFICIENT.format(resource=name))
    return reasons


def is_extended_resource(name: str) -> bool:
    """v1helper.IsExtendedResourceName: a domain-qualified name outside kubernetes.io/ (and
    not a ``requests.`` quota name) — the only resources Filter may be told to ignore."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith(_REQUESTS_PREFIX):
        return False
    return not qualified_name_errors(_REQUESTS_PREFIX + name)


def _wanted_for(pod: Obj) -> _Wanted:
    requests = Resources.from_list(pod_request_list(pod))
    scalars = tuple(sorted((name, value) for name, value in requests.scalar.items() if value))
    empty = not (requests.milli_cpu or requests.memory or requests.ephemeral_storage or requests.scalar)
    return _Wanted(requests, empty, scalars)


# -- queueing hints ------------------------------------------------------------------------
def schedulable_after_pod_event(pod: Obj, old: Obj | None, new: Obj | None) -> Hint:
    """isSchedulableAfterPodEvent: a deleted pod frees room only if it was bound; a scaled-down
    pod only if it is the pod itself, or a bound pod whose requests of something this pod
    needs went down."""
    if new is None:
        return Hint.QUEUE if old is not None and _node_name(old) else Hint.SKIP
    if _uid(new) == _uid(pod):
        return Hint.QUEUE
    if not _node_name(new) or old is None:
        return Hint.SKIP
    before, after = _requests(old), _requests(new)
    for name, value in pod_request_list(pod).items():
        if value and before.get(name) > after.get(name):
            return Hint.QUEUE
    return Hint.SKIP


def schedulable_after_node_change(pod: Obj, old: Obj | None, new: Obj | None) -> Hint:
    """isSchedulableAfterNodeChange: the pod must fit the new node (empty of pods); an added one
    queues it, an update only if something the pod requests (or the pod count) grew."""
    if new is None:
        return Hint.SKIP
    wanted = _wanted_for(pod)
    fresh = NodeInfo(new)
    if insufficient_resources(wanted, fresh):
        return Hint.SKIP
    if old is None:
        return Hint.QUEUE
    return Hint.QUEUE if _requested_resource_grew(wanted, NodeInfo(old).allocatable, fresh.allocatable) else Hint.SKIP


def _requested_resource_grew(wanted: _Wanted, before: Resources, after: Resources) -> bool:
    """haveAnyRequestedResourcesIncreased."""
    if after.allowed_pods > before.allowed_pods:
        return True
    if wanted.empty:
        return False
    requests = wanted.requests
    for name in ("milli_cpu", "memory", "ephemeral_storage"):
        if getattr(requests, name) > 0 and getattr(after, name) > getattr(before, name):
            return True
    return any(after.scalar.get(name, 0) > before.scalar.get(name, 0) for name, _ in wanted.scalars)


def _requests(pod: Obj) -> Resources:
    return Resources.from_list(pod_request_list(pod))


def _node_name(pod: Obj) -> str:
    return str((pod.get("spec") or {}).get("nodeName") or "")


def _uid(pod: Obj) -> str:
    return str((pod.get("metadata") or {}).get("uid") or "")


# -- args ------------------------------------------------------------------------------------
def parse_args(args: Mapping[str, Any]) -> FitArgs:
    """ValidateNodeResourcesFitArgs after v1 defaulting; ValueError with the field path."""
    unknown = sorted(set(args) - set(_ARGS_FIELDS) - set(_TYPE_META))
    if unknown:
        raise ValueError(f"{NAME} args: unknown field(s) {', '.join(unknown)}")
    ignored = _names(args.get("ignoredResources"), "ignoredResources")
    groups = _names(args.get("ignoredResourceGroups"), "ignoredResourceGroups")
    for index, group in enumerate(groups):
        if "/" in group:
            raise ValueError(f"{NAME} args: ignoredResourceGroups[{index}]: Invalid value: {group!r}: "
                             "resource group name can't contain '/'")
    raw = args.get("scoringStrategy")
    if raw is None:
        return FitArgs(frozenset(ignored), frozenset(groups))
    if not isinstance(raw, Mapping):
        raise ValueError(f"{NAME} args: scoringStrategy: must be a mapping")
    strategy = raw.get("type")
    if strategy not in STRATEGIES:
        supported = ", ".join(f'"{name}"' for name in STRATEGIES)
        raise ValueError(f'{NAME} args: scoringStrategy.type: Unsupported value: "{strategy or ""}": '
                         f"supported values: {supported}")
    resources = ra.parse_resources(raw.get("resources"), f"{NAME} args: scoringStrategy.resources")
    for index, spec in enumerate(resources):
        if not 0 < spec.weight <= 100:
            raise ValueError(f"{NAME} args: scoringStrategy.resources[{index}].weight: Invalid value: {spec.weight}: "
                             f"resource weight of {spec.name} not in valid range (0, 100]")
    shape: tuple[tuple[int, int], ...] = ()
    if strategy == REQUESTED_TO_CAPACITY_RATIO:
        shape = _parse_shape((raw.get("requestedToCapacityRatio") or {}).get("shape"))
    return FitArgs(frozenset(ignored), frozenset(groups), strategy, resources, shape)


def _names(raw: Any, where: str) -> list[str]:
    if raw is None:
        return []
    if not isinstance(raw, list) or not all(isinstance(name, str) for name in raw):
        raise ValueError(f"{NAME} args: {where}: must be a list of resource names")
    for index, name in enumerate(raw):
        if qualified_name_errors(name):
            raise ValueError(f"{NAME} args: {where}[{index}]: Invalid value: {name!r}: must be a qualified name")
    return list(raw)


def _parse_shape(raw: Any) -> tuple[tuple[int, int], ...]:
    """validateFunctionShape: at least one point, utilization strictly increasing in 0…100,
    scores in 0…10."""
    where = f"{NAME} args: scoringStrategy.shape"
    if not raw:
        raise ValueError(f"{where}: Required value: at least one point must be specified")
    points: list[tuple[int, int]] = []
    for index, point in enumerate(raw):
        utilization, score = (point or {}).get("utilization", 0), (point or {}).get("score", 0)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (utilization, score)):
            raise ValueError(f"{where}[{index}]: utilization and score must be integers")
        if not 0 <= utilization <= ra.MAX_UTILIZATION:
            raise ValueError(f"{where}[{index}].utilization: Invalid value: {utilization}: not in valid range [0, 100]")
        if not 0 <= score <= ra.MAX_CUSTOM_PRIORITY_SCORE:
            raise ValueError(f"{where}[{index}].score: Invalid value: {score}: not in valid range [0, 10]")
        if points and points[-1][0] >= utilization:
            raise ValueError(f"{where}[{index}].utilization: Invalid value: {utilization}: "
                             "values must be sorted in increasing order")
        points.append((utilization, score))
    return tuple(points)

