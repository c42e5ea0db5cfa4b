"""PodTopologySpread: spread matching pods evenly over topology domains (zones, nodes, …).

Upstream: ``pkg/scheduler/framework/plugins/podtopologyspread`` (plugin.go, filtering.go,
scoring.go, common.go), Kubernetes 1.33.

* **Filter** (``whenUnsatisfiable: DoNotSchedule``): placing the pod in the node's domain
  must keep ``matching pods there + self-match - global minimum <= maxSkew``, the global
  minimum being the smallest count over the eligible domains, or 0 while fewer than
  ``minDomains`` domains exist. A node without a constraint's topology key is
  UnschedulableAndUnresolvable; a too-skewed one is Unschedulable (preemption may help).
* **Score** (``ScheduleAnyway``, and the default constraints for pods without their own):
  per constraint ``matching pods in the node's domain × log(domains + 2) + maxSkew - 1``,
  summed, rounded, then inverted to 0…100 (fewest matching pods scores highest).
* Default constraints: ``defaultingType: System`` (the default) is hostname maxSkew 3 and
  zone maxSkew 5, both ScheduleAnyway; ``List`` takes ``defaultConstraints`` from the args.
  Either applies only to pods without constraints of their own, with the selector of the
  Services, ReplicationController, ReplicaSet or StatefulSet selecting the pod.

Counts come from :mod:`podtopologyspread_counts`, kept across cycles and recounted only
for changed nodes; per-cycle data lives in ``state.data`` under upstream's state keys.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from fakekube.objects.constants import LABEL_HOSTNAME, LABEL_TOPOLOGY_ZONE
from fakekube.objects.syntax import go_quote, qualified_name_errors
from fakekube.scheduler.framework import (
    ASSIGNED_POD, MAX_NODE_SCORE, NODE, SKIP, UNSCHEDULED_POD, Action, ClusterEvent, CycleState, EventHint, Hint,
    NodeInfo, PodInfo, Status, error, unresolvable, unschedulable,
)
from fakekube.scheduler.plugins.podtopologyspread_counts import (
    DO_NOT_SCHEDULE, SCHEDULE_ANYWAY, Constraint, CounterPool, DefaultSelector, NodeChanges, PodSpread,
    has_all_keys, matches_inclusion, parse_constraints,
)

if TYPE_CHECKING:
    from fakekube.scheduler.runtime import Handle

NAME = "PodTopologySpread"

#: Filter reasons, word for word (plugin.go ErrReasonConstraintsNotMatch / ErrReasonNodeLabelNotMatch).
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"

#: systemDefaultConstraints.
SYSTEM_DEFAULT_CONSTRAINTS: tuple[Mapping[str, Any], ...] = (
    {"topologyKey": LABEL_HOSTNAME, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 3},
    {"topologyKey": LABEL_TOPOLOGY_ZONE, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 5},
)

#: Cycle state keys, as upstream's.
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

#: The error when Filter or AddPod/RemovePod run without this cycle's PreFilter (upstream's words).
_NO_STATE = f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found'

_MISSING_LABEL = unresolvable(NAME, ERR_REASON_NODE_LABEL_NOT_MATCH)
_TOO_SKEWED = unschedulable(NAME, ERR_REASON_CONSTRAINTS_NOT_MATCH)

#: What Score returns for a node missing a topology key (upstream's IgnoredNodes); the
#: normalization turns it into 0 and leaves it out of the minimum and maximum.
_IGNORED = -1


class PodTopologySpread:
    name = NAME

    def __init__(self, handle: "Handle", args: Mapping[str, Any]) -> None:
        defaulting, defaults = validate_args(args)
        self._handle = handle
        self._system_defaulted = defaulting == SYSTEM_DEFAULTING
        raw_defaults = SYSTEM_DEFAULT_CONSTRAINTS if self._system_defaulted else defaults
        # Default constraints get their selector per pod (matchLabelKeys in them is ignored, as 1.33).
        self._defaults = {action: parse_constraints(raw_defaults, {}, action)
                          for action in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)}
        self._pool = CounterPool()
        self._changes = NodeChanges()
        self._default_selector = DefaultSelector()
        self._hint_cache: dict[str, tuple[Mapping[str, Any], PodSpread]] = {}

    # -- constraints ---------------------------------------------------------------------
    def _constraints(self, info: PodInfo, spread: PodSpread, action: str) -> tuple[tuple[Constraint, ...], str | None]:
        """The pod's constraints for ``action``: its own, else the defaults with its default
        selector (none when nothing selects it). Returns (constraints, parse error)."""
        if spread.has_spec_constraints:
            if action == DO_NOT_SCHEDULE:
                return spread.hard, spread.hard_error
            return spread.soft, spread.soft_error
        templates = self._defaults[action]
        if not templates:
            return (), None
        selector = self._default_selector.for_pod(self._handle.ctx, info)
        if selector.everything:
            return (), None
        return tuple(c._replace(selector=selector) for c in templates), None

    def _sync(self) -> None:
        """Note which nodes changed since the last cycle (through the snapshot's change
        log when it keeps one)."""
        snapshot = self._handle.snapshot
        self._changes.sync(snapshot.node_infos(), getattr(snapshot, "changes", None))

    # -- PreFilter / Filter --------------------------------------------------------------
    def pre_filter(self, state: CycleState, info: PodInfo) -> tuple[set[str] | None, Status | None]:
        """Count matching pods per domain of each hard constraint; Skip without any."""
        spread = pod_spread(info)
        constraints, problem = self._constraints(info, spread, DO_NOT_SCHEDULE)
        if problem is not None:
            return None, error(NAME, "get constraints from pod: obtaining pod's hard topology spread constraints: "
                                     + problem)
        if not constraints:
            return None, SKIP
        self._sync()
        required = tuple(sorted({c.topology_key for c in constraints}))
        counts = [self._pool.counts(self._changes, info.namespace, c, spread, required) for c in constraints]
        state.data[PRE_FILTER_STATE_KEY] = FilterState(
            constraints, spread, [c.lend() for c in counts], [c.min_count() for c in counts],
            [1 if c.selector.matches(info.labels) else 0 for c in constraints])
        return None, None

    def filter(self, state: CycleState, info: PodInfo, node: NodeInfo) -> Status | None:
        filter_state: FilterState | None = state.data.get(PRE_FILTER_STATE_KEY)
        if filter_state is None:
            return error(NAME, _NO_STATE)
        labels = node.labels
        for key, counts, limit in filter_state.checks:
            value = labels.get(key)
            if value is None:
                return _MISSING_LABEL
            if counts.get(value, 0) > limit:
                return _TOO_SKEWED
        return None

    def add_pod(self, state: CycleState, info: PodInfo, other: PodInfo, node: NodeInfo) -> Status | None:
        return _update(state, info, other, node, 1)

    def remove_pod(self, state: CycleState, info: PodInfo, other: PodInfo, node: NodeInfo) -> Status | None:
        return _update(state, info, other, node, -1)

    # -- PreScore / Score ----------------------------------------------------------------
    def pre_score(self, state: CycleState, info: PodInfo, nodes: list[NodeInfo]) -> Status | None:
        """Count matching pods per domain of each soft constraint once for the cycle;
        Skip without nodes or soft constraints."""
        all_nodes = self._handle.snapshot.node_infos()
        if not all_nodes:
            return SKIP
        spread = pod_spread(info)
        constraints, problem = self._constraints(info, spread, SCHEDULE_ANYWAY)
        if problem is not None:
            return error(NAME, "calculating preScoreState: obtaining pod's soft topology spread constraints: "
                               + problem)
        if not constraints:
            return SKIP
        if PRE_FILTER_STATE_KEY not in state.data:  # else PreFilter synced this very cycle
            self._sync()
        # Only the system defaults let nodes without a zone label still spread by hostname.
        require_all = spread.has_spec_constraints or not self._system_defaulted
        ignored = {n.name for n in nodes if not has_all_keys(n.labels, constraints)} if require_all else set()
        counted = [n for n in nodes if n.name not in ignored] if ignored else nodes
        all_keys = tuple(sorted({c.topology_key for c in constraints}))
        entries = []
        for constraint in constraints:
            required = all_keys if require_all else (constraint.topology_key,)
            counter = self._pool.counts(self._changes, info.namespace, constraint, spread, required)
            entries.append((constraint.topology_key, counter.lend(),
                            topology_normalizing_weight(_domain_count(constraint, counted)),
                            constraint.max_skew - 1))
        state.data[PRE_SCORE_STATE_KEY] = ScoreState(entries, ignored)
        return None

    def score(self, state: CycleState, info: PodInfo, node: NodeInfo) -> int:
        return self.score_nodes(state, info, [node])[0]

    def score_nodes(self, state: CycleState, info: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        """Raw scores of ``nodes`` in one pass (the ignored marker for nodes missing a key)."""
        score_state: ScoreState = state.data[PRE_SCORE_STATE_KEY]
        return raw_scores(nodes, score_state.entries, score_state.ignored)

    def normalize_score(self, state: CycleState, info: PodInfo, scores: list[int]) -> None:
        normalize_scores(scores)

    # -- queueing ------------------------------------------------------------------------
    def events_to_register(self) -> list[EventHint]:
        """Assigned pods added, deleted or relabelled; the pod's own labels or tolerations;
        nodes added, deleted, relabelled or retainted (1.33's registrations)."""
        return [
            EventHint(ClusterEvent(ASSIGNED_POD, Action.ADD | Action.UPDATE_POD_LABEL | Action.DELETE),
                      self.is_schedulable_after_pod_change),
            EventHint(ClusterEvent(UNSCHEDULED_POD, Action.UPDATE_POD_LABEL | Action.UPDATE_POD_TOLERATIONS),
                      self.is_schedulable_after_pod_change),
            EventHint(ClusterEvent(NODE, Action.ADD | Action.DELETE | Action.UPDATE_NODE_LABEL
                                   | Action.UPDATE_NODE_TAINT), self.is_schedulable_after_node_change),
        ]

    def is_schedulable_after_pod_change(self, pod: Mapping[str, Any], old: Mapping[str, Any] | None,
                                        new: Mapping[str, Any] | None) -> Hint:
        """Queue when an assigned pod in the namespace (or the pod itself) starts or stops
        matching a hard constraint's selector, or the pod gets new tolerations while a
        constraint honours taints."""
        if (new is not None and not _involved(new, pod)) or (old is not None and not _involved(old, pod)):
            return Hint.SKIP
        constraints = self._hard_constraints_for_hint(pod)
        if constraints is None:
            return Hint.QUEUE
        if old is not None and new is not None:
            if (_uid(new) == _uid(pod) and _tolerations(new) != _tolerations(old)
                    and any(c.honor_taints for c in constraints)):
                return Hint.QUEUE
            old_labels, new_labels = _labels(old), _labels(new)
            if old_labels == new_labels:
                return Hint.SKIP
            changed = any(c.selector.matches(old_labels) != c.selector.matches(new_labels) for c in constraints)
            return Hint.QUEUE if changed else Hint.SKIP
        changed_pod = new if new is not None else old
        if changed_pod is None:
            return Hint.QUEUE
        labels = _labels(changed_pod)
        return Hint.QUEUE if any(c.selector.matches(labels) for c in constraints) else Hint.SKIP

    def is_schedulable_after_node_change(self, pod: Mapping[str, Any], old: Mapping[str, Any] | None,
                                         new: Mapping[str, Any] | None) -> Hint:
        """Queue when a node with every topology key appears or goes, gains or loses one,
        changes a topology value, or (still having them all) changes its taints."""
        constraints = self._hard_constraints_for_hint(pod)
        if constraints is None:
            return Hint.QUEUE
        old_match = old is not None and has_all_keys(_labels(old), constraints)
        new_match = new is not None and has_all_keys(_labels(new), constraints)
        if old is not None and new is not None:
            if old_match != new_match:
                return Hint.QUEUE
            if new_match and (_topology_values_changed(_labels(old), _labels(new), constraints)
                              or _taints(old) != _taints(new)):
                return Hint.QUEUE
            return Hint.SKIP
        if new is not None:
            return Hint.QUEUE if new_match else Hint.SKIP
        return Hint.QUEUE if old_match else Hint.SKIP

    def _hard_constraints_for_hint(self, pod: Mapping[str, Any]) -> tuple[Constraint, ...] | None:
        """getConstraints(pod) for DoNotSchedule; None on an error (the hint then Queues)."""
        spread = self._spread_for_hint(pod)
        if spread.has_spec_constraints:
            return None if spread.hard_error is not None else spread.hard
        if not self._defaults[DO_NOT_SCHEDULE]:
            return ()
        constraints, problem = self._constraints(PodInfo(dict(pod)), spread, DO_NOT_SCHEDULE)
        return None if problem is not None else constraints

    def _spread_for_hint(self, pod: Mapping[str, Any]) -> PodSpread:
        """The pod's parsed spec, kept by uid while the stored object is the same one."""
        uid = _uid(pod)
        cached = self._hint_cache.get(uid)
        if cached is not None and cached[0] is pod:
            return cached[1]
        if len(self._hint_cache) >= 4096:
            self._hint_cache.clear()
        spread = PodSpread(pod)
        self._hint_cache[uid] = (pod, spread)
        return spread


# -- cycle state ---------------------------------------------------------------------------
class FilterState:
    """PreFilter's counts: per hard constraint the domain totals (shared with the counter
    until this state changes them), the global minimum and the resulting Filter check
    ``(topology key, counts, most matching pods a domain may already have)``."""

    __slots__ = ("constraints", "spread", "counts", "minimums", "self_matches", "owned", "checks")

    def __init__(self, constraints: Sequence[Constraint], spread: PodSpread, counts: list[dict[str, int]],
                 minimums: list[int | None], self_matches: list[int]) -> None:
        self.constraints = constraints
        self.spread = spread
        self.counts = counts
        self.minimums = minimums
        self.self_matches = self_matches
        self.owned = [False] * len(counts)
        self.checks = [self._check(i) for i in range(len(constraints))]

    def _check(self, index: int) -> tuple[str, dict[str, int], int]:
        constraint = self.constraints[index]
        counts = self.counts[index]
        minimum = self.minimums[index]
        if minimum is None or len(counts) < constraint.min_domains:
            minimum = 0  # fewer eligible domains than minDomains: the global minimum is 0
        return constraint.topology_key, counts, constraint.max_skew + minimum - self.self_matches[index]

    def update(self, info: PodInfo, other: PodInfo, node: NodeInfo, delta: int) -> None:
        """updateWithPod: count ``other`` in (or out of) its node's domains, for
        preemption's what-ifs."""
        if other.namespace != info.namespace or not has_all_keys(node.labels, self.constraints):
            return
        for index, constraint in enumerate(self.constraints):
            if not constraint.selector.matches(other.labels):
                continue
            if not matches_inclusion(constraint, self.spread, node):
                continue
            if not self.owned[index]:
                self.counts[index] = dict(self.counts[index])
                self.owned[index] = True
            value = node.labels[constraint.topology_key]
            counts = self.counts[index]
            counts[value] = counts.get(value, 0) + delta
            self.minimums[index] = min(counts.values())
            self.checks[index] = self._check(index)

    def clone(self) -> "FilterState":
        other = FilterState.__new__(FilterState)
        other.constraints, other.spread = self.constraints, self.spread
        other.counts, other.minimums = list(self.counts), list(self.minimums)
        other.self_matches = self.self_matches
        other.owned = [False] * len(self.counts)
        other.checks = list(self.checks)
        return other


class ScoreState:
    """PreScore's counts: per soft constraint ``(topology key, domain totals, weight,
    maxSkew - 1)``, and the feasible nodes missing a topology key (scored 0). Read-only
    after PreScore, so a clone is itself."""

    __slots__ = ("entries", "ignored")

    def __init__(self, entries: list[tuple[str, dict[str, int], float, int]], ignored: set[str]) -> None:
        self.entries = entries
        self.ignored = ignored

    def clone(self) -> "ScoreState":
        return self


def _update(state: CycleState, info: PodInfo, other: PodInfo, node: NodeInfo, delta: int) -> Status | None:
    filter_state: FilterState | None = state.data.get(PRE_FILTER_STATE_KEY)
    if filter_state is None:
        return error(NAME, _NO_STATE)
    filter_state.update(info, other, node, delta)
    return None


# -- pure helpers --------------------------------------------------------------------------
def pod_spread(info: PodInfo) -> PodSpread:
    """The pod's parsed spread data, kept in its PodInfo while its spec and labels are the
    same objects (a PodInfo may carry its data over to a later version of the pod)."""
    spec, labels = info.pod.get("spec"), (info.pod.get("metadata") or {}).get("labels")
    cached = info.data.get(NAME)
    if cached is not None and cached[0] is spec and cached[1] is labels:
        return cached[2]
    spread = PodSpread(info.pod)
    info.data[NAME] = (spec, labels, spread)
    return spread


def topology_normalizing_weight(domains: int) -> float:
    """log(domains + 2): counts in a topology with few domains weigh less than in one
    with many, so hostname spreading is not drowned by zone spreading."""
    return math.log(domains + 2)


def _domain_count(constraint: Constraint, nodes: Sequence[NodeInfo]) -> int:
    """The number of domains among the scored nodes (for hostname: the number of nodes;
    a node without the key counts as the domain "")."""
    if constraint.topology_key == LABEL_HOSTNAME:
        return len(nodes)
    key = constraint.topology_key
    return len({n.labels.get(key, "") for n in nodes})


def raw_scores(nodes: Sequence[NodeInfo], entries: Sequence[tuple[str, dict[str, int], float, int]],
               ignored: set[str]) -> list[int]:
    """Each node's Σ (matching pods in its domain × weight + maxSkew - 1) over the
    constraints whose key it has, rounded half up as Go's math.Round; the ignored marker
    for nodes missing a key. One tight loop: this is the per-node part of scoring."""
    out = []
    for node in nodes:
        if ignored and node.name in ignored:
            out.append(_IGNORED)
            continue
        labels = node.labels
        total = 0.0
        for key, counts, weight, slack in entries:
            value = labels.get(key)
            if value is not None:
                total += counts.get(value, 0) * weight + slack
        rounded = int(total)
        out.append(rounded + 1 if total - rounded >= 0.5 else rounded)
    return out


def normalize_scores(scores: list[int]) -> None:
    """NormalizeScore: ignored nodes 0; the rest ``100 × (max + min - score) / max`` in
    integer arithmetic, or 100 each when the maximum is 0."""
    valid = [s for s in scores if s != _IGNORED]
    if not valid:
        scores[:] = [0] * len(scores)
        return
    low, high = min(valid), max(valid)
    if high == 0:
        scores[:] = [0 if s == _IGNORED else MAX_NODE_SCORE for s in scores]
        return
    top = high + low
    scores[:] = [0 if s == _IGNORED else MAX_NODE_SCORE * (top - s) // high for s in scores]


def _involved(incoming: Mapping[str, Any], target: Mapping[str, Any]) -> bool:
    """involvedInTopologySpreading: the pod itself, or an assigned pod in its namespace."""
    if _uid(incoming) == _uid(target):
        return True
    return bool((incoming.get("spec") or {}).get("nodeName")) and _namespace(incoming) == _namespace(target)


def _topology_values_changed(old: Mapping[str, str], new: Mapping[str, str], constraints: Sequence[Constraint]) -> bool:
    return any(old.get(c.topology_key, "") != new.get(c.topology_key, "") for c in constraints)


def _uid(obj: Mapping[str, Any]) -> str:
    return (obj.get("metadata") or {}).get("uid") or ""


def _namespace(obj: Mapping[str, Any]) -> str:
    return (obj.get("metadata") or {}).get("namespace") or ""


def _labels(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return (obj.get("metadata") or {}).get("labels") or {}


def _tolerations(pod: Mapping[str, Any]) -> list[Any]:
    return (pod.get("spec") or {}).get("tolerations") or []


def _taints(node: Mapping[str, Any]) -> list[Any]:
    return (node.get("spec") or {}).get("taints") or []


# -- args ----------------------------------------------------------------------------------
def validate_args(args: Mapping[str, Any]) -> tuple[str, list[Mapping[str, Any]]]:
    """PodTopologySpreadArgs, defaulted (defaultingType System) and validated as
    ValidatePodTopologySpreadArgs; raises ValueError with its aggregated messages."""
    defaulting = args.get("defaultingType") or SYSTEM_DEFAULTING
    constraints = list(args.get("defaultConstraints") or [])
    errors = []
    if defaulting not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
        errors.append(f'defaultingType: Unsupported value: {go_quote(str(defaulting))}: '
                      f'supported values: "{SYSTEM_DEFAULTING}", "{LIST_DEFAULTING}"')
    elif defaulting == SYSTEM_DEFAULTING and constraints:
        errors.append(f'defaultingType: Invalid value: "{SYSTEM_DEFAULTING}": when .defaultConstraints are not empty')
    for index, constraint in enumerate(constraints):
        errors += _constraint_errors(f"defaultConstraints[{index}]", constraint, constraints[:index])
    if errors:
        raise ValueError(errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")
    return defaulting, constraints


def _constraint_errors(path: str, constraint: Mapping[str, Any], earlier: Sequence[Mapping[str, Any]]) -> list[str]:
    errors = []
    max_skew = constraint.get("maxSkew") or 0
    if not isinstance(max_skew, int) or max_skew <= 0:
        errors.append(f"{path}.maxSkew: Invalid value: {max_skew}: not in valid range (0, inf)")
    key = constraint.get("topologyKey") or ""
    if not key:
        errors.append(f"{path}.topologyKey: Required value: can not be empty")
    errors += [f"{path}.topologyKey: Invalid value: {go_quote(key)}: {problem}" for problem in
               (qualified_name_errors(key) if key else [])]
    action = constraint.get("whenUnsatisfiable") or ""
    if not action:
        errors.append(f"{path}.whenUnsatisfiable: Required value: can not be empty")
    elif action not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
        errors.append(f'{path}.whenUnsatisfiable: Unsupported value: {go_quote(action)}: '
                      f'supported values: "{DO_NOT_SCHEDULE}", "{SCHEDULE_ANYWAY}"')
    if constraint.get("labelSelector") is not None:
        errors.append(f"{path}.labelSelector: Forbidden: constraint must not define a selector, "
                      "as they deduced for each pod")
    if any(key == (e.get("topologyKey") or "") and action == (e.get("whenUnsatisfiable") or "") for e in earlier):
        errors.append(f'{path}: Duplicate value: "{{{key}, {action}}}"')
    return errors
