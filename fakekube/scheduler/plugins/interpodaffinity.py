"""InterPodAffinity: required pod affinity and anti-affinity (Filter), in both directions
(an existing pod's required anti-affinity keeps the incoming pod away too), and preferred
terms of the incoming and the existing pods (Score).

Upstream: ``pkg/scheduler/framework/plugins/interpodaffinity/`` (1.33): plugin.go,
filtering.go, scoring.go, and ``framework/types.go``'s AffinityTerm. PreFilter counts,
per topology pair (label key, value), the existing pods that match the incoming pod's
required terms and the existing pods whose required anti-affinity matches the incoming
pod; Filter then only looks up the node's own pairs. A pod with no required terms skips
Filter when no existing pod has required anti-affinity (the common case costs one
scan of the nodes that hold such pods), and PreScore skips when nothing would score.

Each pod's parsed terms are cached in ``PodInfo.data[NAME]`` (a PodInfo is rebuilt on
every pod change). A term selects pods in its ``namespaces`` (the pod's own when neither
those nor a ``namespaceSelector`` are set) or in namespaces its ``namespaceSelector``
matches, whose labels match its ``labelSelector``; for the incoming pod the selector is
resolved into names once per cycle, as upstream.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, NamedTuple

from fakekube.objects.kinds import NAMESPACES
from fakekube.objects.labels import MATCH_NOTHING, LabelMatcher, compile_selector
from fakekube.objects.podaffinity import merged_label_selector
from fakekube.scheduler.plugins.labelindex import PodLabelIndex
from fakekube.scheduler.framework import (
    ASSIGNED_POD, MAX_NODE_SCORE, NODE, SKIP, Action, ClusterEvent, CycleState, EventHint, Hint, NodeInfo,
    PodInfo, Status, error, unresolvable, unschedulable,
)

if TYPE_CHECKING:
    from fakekube.scheduler.runtime import Handle

NAME = "InterPodAffinity"
ERR_REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"

DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1
MIN_HARD_POD_AFFINITY_WEIGHT = 0
MAX_HARD_POD_AFFINITY_WEIGHT = 100

#: The error when Filter or AddPod/RemovePod run without this cycle's PreFilter.
_NO_STATE = f'reading "PreFilter{NAME}" from cycleState: not found'

#: How many pending pods' parsed terms the queueing hints keep (least recently used goes).
HINT_MEMO_SIZE = 4096

#: Where PreScore's topology scores live in the cycle state (PreFilter's is state.data[NAME]).
PRE_SCORE_KEY = "PreScore" + NAME

Obj = Mapping[str, Any]


# -- terms --------------------------------------------------------------------------------
class AffinityTerm:
    """One parsed PodAffinityTerm (upstream's framework.AffinityTerm)."""

    __slots__ = ("namespaces", "selector", "topology_key", "namespace_selector")

    def __init__(self, namespaces: frozenset[str], selector: LabelMatcher, topology_key: str,
                 namespace_selector: LabelMatcher) -> None:
        self.namespaces = namespaces
        self.selector = selector
        self.topology_key = topology_key
        self.namespace_selector = namespace_selector

    def matches(self, namespace: str, labels: Mapping[str, str], namespace_labels: Mapping[str, str] | None) -> bool:
        """Does a pod in ``namespace`` with ``labels`` match (``namespace_labels``: the labels
        of that namespace; None reads as none, as upstream's nil set)?"""
        if namespace in self.namespaces or self.namespace_selector.matches(namespace_labels):
            return self.selector.matches(labels)
        return False

    def with_namespaces(self, names: Iterable[str]) -> "AffinityTerm":
        """The term with its namespaceSelector replaced by the names it selected."""
        return AffinityTerm(self.namespaces | frozenset(names), self.selector, self.topology_key, MATCH_NOTHING)


class WeightedTerm(NamedTuple):
    weight: int
    term: AffinityTerm


class PodTerms(NamedTuple):
    """A pod's parsed pod (anti-)affinity; a group that fails to parse is empty and its
    error is in ``errors`` (upstream's NewPodInfo)."""

    required_affinity: tuple[AffinityTerm, ...] = ()
    required_anti: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[WeightedTerm, ...] = ()
    preferred_anti: tuple[WeightedTerm, ...] = ()
    errors: tuple[str, ...] = ()

    @property
    def has_preferred(self) -> bool:
        return bool(self.preferred_affinity or self.preferred_anti)


_NO_TERMS = PodTerms()


def parse_terms(pod: Obj) -> PodTerms:
    """Parse a pod's podAffinity/podAntiAffinity (matchLabelKeys merged into selectors)."""
    affinity = (pod.get("spec") or {}).get("affinity") or {}
    pod_affinity = affinity.get("podAffinity") or {}
    pod_anti = affinity.get("podAntiAffinity") or {}
    if not pod_affinity and not pod_anti:
        return _NO_TERMS
    meta = pod.get("metadata") or {}
    namespace, labels = meta.get("namespace") or "", meta.get("labels") or {}
    errors: list[str] = []

    def required(group: Obj, label: str) -> tuple[AffinityTerm, ...]:
        try:
            return tuple(_term(t, namespace, labels)
                         for t in group.get("requiredDuringSchedulingIgnoredDuringExecution") or [])
        except ValueError as exc:
            errors.append(f"{label}: {exc}")
            return ()

    def preferred(group: Obj, label: str) -> tuple[WeightedTerm, ...]:
        try:
            return tuple(WeightedTerm(int(w.get("weight") or 0), _term(w.get("podAffinityTerm") or {}, namespace, labels))
                         for w in group.get("preferredDuringSchedulingIgnoredDuringExecution") or [])
        except ValueError as exc:
            errors.append(f"{label}: {exc}")
            return ()

    return PodTerms(required(pod_affinity, "requiredAffinityTerms"), required(pod_anti, "requiredAntiAffinityTerms"),
                    preferred(pod_affinity, "preferredAffinityTerms"),
                    preferred(pod_anti, "preferredAntiAffinityTerms"), tuple(errors))


def _term(term: Obj, namespace: str, pod_labels: Mapping[str, str]) -> AffinityTerm:
    """newAffinityTerm: no namespaces and no namespaceSelector mean the pod's own namespace."""
    names = term.get("namespaces") or []
    ns_selector = term.get("namespaceSelector")
    namespaces = frozenset(names) if names or ns_selector is not None else frozenset((namespace,))
    selector = compile_selector(merged_label_selector(term, pod_labels))
    return AffinityTerm(namespaces, selector, term.get("topologyKey") or "", compile_selector(ns_selector))


def pod_terms(info: PodInfo) -> PodTerms:
    """The pod's parsed terms, once per PodInfo."""
    cached = info.data.get(NAME)
    if cached is None:
        cached = info.data[NAME] = parse_terms(info.pod) if info.has_affinity else _NO_TERMS
    return cached


def _matches_all(terms: tuple[AffinityTerm, ...], namespace: str, labels: Mapping[str, str]) -> bool:
    """podMatchesAllAffinityTerms: false for no terms; namespace labels read as none."""
    if not terms:
        return False
    for term in terms:
        if not term.matches(namespace, labels, None):
            return False
    return True


# -- per-cycle counts ----------------------------------------------------------------------
class TopologyCounts:
    """Matching pods per topology pair: key -> value -> count; pairs at zero are dropped."""

    __slots__ = ("by_key",)

    def __init__(self, by_key: dict[str, dict[str, int]] | None = None) -> None:
        self.by_key: dict[str, dict[str, int]] = by_key if by_key is not None else {}

    def add(self, node_labels: Mapping[str, str], key: str, delta: int) -> None:
        """Count ``delta`` for the pair (key, the node's value), if the node has the key."""
        value = node_labels.get(key)
        if value is None:
            return
        values = self.by_key.setdefault(key, {})
        count = values.get(value, 0) + delta
        if count:
            values[value] = count
        else:
            values.pop(value, None)
            if not values:
                del self.by_key[key]

    def get(self, key: str, value: str) -> int:
        return self.by_key.get(key, {}).get(value, 0)

    def any_on(self, node_labels: Mapping[str, str]) -> bool:
        """Is a positive count on any of the node's pairs?"""
        for key, values in self.by_key.items():
            value = node_labels.get(key)
            if value is not None and values.get(value, 0) > 0:
                return True
        return False

    def __bool__(self) -> bool:
        return bool(self.by_key)

    def clone(self) -> "TopologyCounts":
        return TopologyCounts({key: dict(values) for key, values in self.by_key.items()})


class _FilterState:
    """PreFilter's result (upstream's preFilterState); cloned for preemption's what-ifs."""

    __slots__ = ("namespace", "labels", "namespace_labels", "affinity_terms", "anti_terms", "matches_own_affinity",
                 "existing_anti", "affinity", "anti")

    def __init__(self, info: PodInfo, namespace_labels: Mapping[str, str], affinity_terms: tuple[AffinityTerm, ...],
                 anti_terms: tuple[AffinityTerm, ...]) -> None:
        self.namespace = info.namespace
        self.labels = info.labels
        self.namespace_labels = namespace_labels
        #: The incoming pod's required terms, namespaceSelectors resolved to names.
        self.affinity_terms = affinity_terms
        self.anti_terms = anti_terms
        self.matches_own_affinity = _matches_all(affinity_terms, info.namespace, info.labels)
        #: Existing pods whose required anti-affinity matches the incoming pod.
        self.existing_anti = TopologyCounts()
        #: Existing pods matching all of the incoming pod's required affinity terms.
        self.affinity = TopologyCounts()
        #: Existing pods matching each of the incoming pod's required anti-affinity terms.
        self.anti = TopologyCounts()

    def clone(self) -> "_FilterState":
        other = _FilterState.__new__(_FilterState)
        other.namespace, other.labels, other.namespace_labels = self.namespace, self.labels, self.namespace_labels
        other.affinity_terms, other.anti_terms = self.affinity_terms, self.anti_terms
        other.matches_own_affinity = self.matches_own_affinity
        other.existing_anti = self.existing_anti.clone()
        other.affinity = self.affinity.clone()
        other.anti = self.anti.clone()
        return other

    def count_existing(self, other: PodInfo, node_labels: Mapping[str, str], sign: int) -> None:
        """Count ``other``'s required anti-affinity terms that match the incoming pod."""
        for term in pod_terms(other).required_anti:
            if term.matches(self.namespace, self.labels, self.namespace_labels):
                self.existing_anti.add(node_labels, term.topology_key, sign)

    def count_incoming(self, other: PodInfo, node_labels: Mapping[str, str], sign: int) -> None:
        """Count ``other`` against the incoming pod's required affinity and anti-affinity."""
        if self.affinity_terms and _matches_all(self.affinity_terms, other.namespace, other.labels):
            for term in self.affinity_terms:
                self.affinity.add(node_labels, term.topology_key, sign)
        for term in self.anti_terms:
            if term.matches(other.namespace, other.labels, None):
                self.anti.add(node_labels, term.topology_key, sign)


# -- the plugin ----------------------------------------------------------------------------
class InterPodAffinity:
    name = NAME

    def __init__(self, handle: "Handle", args: Mapping[str, Any]) -> None:
        self.handle = handle
        weight = args.get("hardPodAffinityWeight", DEFAULT_HARD_POD_AFFINITY_WEIGHT)
        if isinstance(weight, bool) or not isinstance(weight, int) or not (
                MIN_HARD_POD_AFFINITY_WEIGHT <= weight <= MAX_HARD_POD_AFFINITY_WEIGHT):
            raise ValueError(f"hardPodAffinityWeight: Invalid value: {weight!r}: not in valid range "
                             f"[{MIN_HARD_POD_AFFINITY_WEIGHT}, {MAX_HARD_POD_AFFINITY_WEIGHT}]")
        self.hard_pod_affinity_weight: int = weight
        self.ignore_preferred_terms_of_existing_pods = bool(args.get("ignorePreferredTermsOfExistingPods", False))
        self._index = PodLabelIndex()
        self._hint_memo: OrderedDict[int, tuple[Obj, PodTerms]] = OrderedDict()

    # -- filtering -----------------------------------------------------------------------
    def pre_filter(self, state: CycleState, info: PodInfo) -> tuple[set[str] | None, Status | None]:
        terms = pod_terms(info)
        if terms.errors:
            return None, unresolvable(NAME, f"parsing pod: {_aggregate(terms.errors)}")
        snapshot = self.handle.snapshot
        holders = snapshot.have_pods_with_required_anti_affinity()
        if not holders and not terms.required_affinity and not terms.required_anti:
            return None, SKIP  # nothing could be counted: upstream's Skip, without the work
        s = _FilterState(info, self._namespace_labels(info.namespace),
                         self._resolve(terms.required_affinity), self._resolve(terms.required_anti))
        for node in holders:
            for other in node.pods_with_required_anti_affinity.values():
                s.count_existing(other, node.labels, 1)
        if not s.existing_anti and not s.affinity_terms and not s.anti_terms:
            return None, SKIP
        if s.affinity_terms or s.anti_terms:
            self._count_incoming(s)
        state.data[NAME] = s
        return None, None

    def _count_incoming(self, s: _FilterState) -> None:
        """The existing pods that match the incoming pod's required terms, by topology pair
        (pods looked up by label; see labelindex)."""
        nodes = self._indexed_nodes()
        if s.affinity_terms:
            for other, node in self._pods_matching(s.affinity_terms, nodes):
                for term in s.affinity_terms:
                    s.affinity.add(node.labels, term.topology_key, 1)
        for term in s.anti_terms:
            for other, node in self._pods_matching((term,), nodes):
                s.anti.add(node.labels, term.topology_key, 1)

    def _indexed_nodes(self) -> list[NodeInfo]:
        nodes = self.handle.snapshot.node_infos()
        self._index.refresh(nodes)
        return nodes

    def _pods_matching(self, terms: tuple[AffinityTerm, ...],
                       nodes: list[NodeInfo]) -> Iterator[tuple[PodInfo, NodeInfo]]:
        """Bound pods matching every one of ``terms`` (namespace labels read as none, as
        for the incoming pod's resolved terms), with their nodes."""
        lookups = [self._index.candidates(term.selector) for term in terms]
        found = [c for c in lookups if c is not None]
        candidates = found[0] if found else ((other, node) for node in nodes for other in node.pods.values())
        for other, node in candidates:
            if _matches_all(terms, other.namespace, other.labels):
                yield other, node

    def filter(self, state: CycleState, info: PodInfo, node: NodeInfo) -> Status | None:
        s: _FilterState | None = state.data.get(NAME)
        if s is None:
            return error(NAME, _NO_STATE)
        labels = node.labels
        if s.affinity_terms and not _satisfies_affinity(s, labels):
            return unresolvable(NAME, ERR_REASON_AFFINITY)
        if s.anti:
            for term in s.anti_terms:
                value = labels.get(term.topology_key)
                if value is not None and s.anti.get(term.topology_key, value) > 0:
                    return unschedulable(NAME, ERR_REASON_ANTI_AFFINITY)
        if s.existing_anti and s.existing_anti.any_on(labels):
            return unschedulable(NAME, ERR_REASON_EXISTING_ANTI_AFFINITY)
        return None

    def add_pod(self, state: CycleState, info: PodInfo, other: PodInfo, node: NodeInfo) -> Status | None:
        return self._update(state, other, node, 1)

    def remove_pod(self, state: CycleState, info: PodInfo, other: PodInfo, node: NodeInfo) -> Status | None:
        return self._update(state, other, node, -1)

    @staticmethod
    def _update(state: CycleState, other: PodInfo, node: NodeInfo, sign: int) -> Status | None:
        s: _FilterState | None = state.data.get(NAME)
        if s is None:
            return error(NAME, _NO_STATE)
        s.count_existing(other, node.labels, sign)
        s.count_incoming(other, node.labels, sign)
        return None

    # -- scoring -------------------------------------------------------------------------
    def pre_score(self, state: CycleState, info: PodInfo, nodes: list[NodeInfo]) -> Status | None:
        if not nodes:
            return SKIP
        terms = pod_terms(info)
        has_constraints = terms.has_preferred or (bool(terms.errors) and _has_preferred_in_spec(info))
        if self.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return SKIP
        with_affinity = self.handle.snapshot.have_pods_with_affinity()
        if not has_constraints and not with_affinity:
            return SKIP
        if terms.errors:
            return error(NAME, f"failed to parse pod: {_aggregate(terms.errors)}")
        scorer = _Scorer(info, self._namespace_labels(info.namespace), self.hard_pod_affinity_weight)
        # The incoming pod's preferred terms against every bound pod that matches them...
        if has_constraints:
            nodes = self._indexed_nodes()
            for weight, term in self._resolve_weighted(terms.preferred_affinity):
                for other, node in self._pods_matching((term,), nodes):
                    scorer.add(node.labels, term.topology_key, weight)
            for weight, term in self._resolve_weighted(terms.preferred_anti):
                for other, node in self._pods_matching((term,), nodes):
                    scorer.add(node.labels, term.topology_key, -weight)
        # ...and the terms of the bound pods that have any against the incoming pod.
        for node in with_affinity:
            for other in node.pods_with_affinity.values():
                scorer.process(other, node.labels)
        if not scorer.scores:
            return SKIP
        state.data[PRE_SCORE_KEY] = scorer.scores
        return None

    def score(self, state: CycleState, info: PodInfo, node: NodeInfo) -> int:
        scores: dict[str, dict[str, int]] = state.data[PRE_SCORE_KEY]
        labels = node.labels
        total = 0
        for key, values in scores.items():
            value = labels.get(key)
            if value is not None:
                total += values.get(value, 0)
        return total

    def normalize_score(self, state: CycleState, info: PodInfo, scores: list[int]) -> None:
        """Min-max to 0…100 (negative totals are possible), truncated as Go's int64(float64)."""
        if not scores:
            return
        low, high = min(scores), max(scores)
        spread = high - low
        for index, score in enumerate(scores):
            scores[index] = int(float(MAX_NODE_SCORE) * (float(score - low) / float(spread))) if spread > 0 else 0

    # -- queueing ------------------------------------------------------------------------
    def events_to_register(self) -> list[EventHint]:
        """Assigned pods added, relabelled or deleted; nodes added or relabelled (1.33 with
        queueing hints on, so no UpdateNodeTaint)."""
        return [
            EventHint(ClusterEvent(ASSIGNED_POD, Action.ADD | Action.UPDATE_POD_LABEL | Action.DELETE),
                      self._pod_hint),
            EventHint(ClusterEvent(NODE, Action.ADD | Action.UPDATE_NODE_LABEL), self._node_hint),
        ]

    def _pod_hint(self, pod: Obj, old: Obj | None, new: Obj | None) -> Hint:
        return _after_pod_change(self._hint_terms(pod), old, new)

    def _node_hint(self, pod: Obj, old: Obj | None, new: Obj | None) -> Hint:
        return _after_node_change(self._hint_terms(pod), old, new)

    def _hint_terms(self, pod: Obj) -> PodTerms:
        """A pending pod's terms for the hints, parsed once per pod object: a hint runs for
        every waiting pod on every bound-pod event, and stored pods are never changed in
        place (a changed pod is a new object). At most HINT_MEMO_SIZE pods are kept."""
        entry = self._hint_memo.get(id(pod))
        if entry is not None and entry[0] is pod:
            self._hint_memo.move_to_end(id(pod))
            return entry[1]
        terms = parse_terms(pod)
        self._hint_memo[id(pod)] = (pod, terms)
        if len(self._hint_memo) > HINT_MEMO_SIZE:
            self._hint_memo.popitem(last=False)
        return terms

    # -- helpers -------------------------------------------------------------------------
    def _namespace_labels(self, namespace: str) -> Mapping[str, str]:
        """The incoming pod's namespace's labels (none if the namespace is not there)."""
        obj = self.handle.ctx.get(NAMESPACES, namespace)
        return ((obj or {}).get("metadata") or {}).get("labels") or {}

    def _resolve_weighted(self, terms: tuple[WeightedTerm, ...]) -> tuple[WeightedTerm, ...]:
        resolved = self._resolve(tuple(weighted.term for weighted in terms))
        return tuple(WeightedTerm(weighted.weight, term) for weighted, term in zip(terms, resolved))

    def _resolve(self, terms: tuple[AffinityTerm, ...]) -> tuple[AffinityTerm, ...]:
        """mergeAffinityTermNamespacesIfNotEmpty: a non-empty namespaceSelector becomes the
        names of the namespaces it selects now (an empty one keeps matching every namespace)."""
        if all(t.namespace_selector.everything or t.namespace_selector.nothing for t in terms):
            return terms
        namespaces = self.handle.ctx.list(NAMESPACES)
        out = []
        for term in terms:
            if term.namespace_selector.everything or term.namespace_selector.nothing:
                out.append(term)
                continue
            chosen = [ns["metadata"]["name"] for ns in namespaces
                      if term.namespace_selector.matches((ns.get("metadata") or {}).get("labels") or {})]
            out.append(term.with_namespaces(chosen))
        return tuple(out)


def _satisfies_affinity(s: _FilterState, labels: Mapping[str, str]) -> bool:
    """Every required affinity term's topology key is on the node and a matching pod is in
    that domain; or no pod matches anywhere and the pod matches its own terms (the first
    pod of a group with affinity to itself)."""
    pods_exist = True
    for term in s.affinity_terms:
        value = labels.get(term.topology_key)
        if value is None:
            return False
        if s.affinity.get(term.topology_key, value) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    return not s.affinity and s.matches_own_affinity


class _Scorer:
    """PreScore's accumulation (upstream's processExistingPod, split in two: the incoming
    pod's preferred terms are matched through the label index, the existing pods' own
    terms here): topology key -> value -> summed weights."""

    __slots__ = ("namespace", "labels", "namespace_labels", "hard_weight", "scores")

    def __init__(self, info: PodInfo, namespace_labels: Mapping[str, str], hard_weight: int) -> None:
        self.namespace, self.labels = info.namespace, info.labels
        self.namespace_labels = namespace_labels
        self.hard_weight = hard_weight
        self.scores: dict[str, dict[str, int]] = {}

    def add(self, node_labels: Mapping[str, str], key: str, weight: int) -> None:
        """Add ``weight`` to the pair (key, the node's value), if the node has the key."""
        value = node_labels.get(key)
        if value is not None:
            values = self.scores.setdefault(key, {})
            values[value] = values.get(value, 0) + weight

    def process(self, other: PodInfo, node_labels: Mapping[str, str]) -> None:
        """``other``'s required affinity (at hardPodAffinityWeight) and preferred terms that
        match the incoming pod, on the pair of ``other``'s node."""
        theirs = pod_terms(other)
        if self.hard_weight > 0:
            for term in theirs.required_affinity:
                if term.matches(self.namespace, self.labels, self.namespace_labels):
                    self.add(node_labels, term.topology_key, self.hard_weight)
        for weight, term in theirs.preferred_affinity:
            if term.matches(self.namespace, self.labels, self.namespace_labels):
                self.add(node_labels, term.topology_key, weight)
        for weight, term in theirs.preferred_anti:
            if term.matches(self.namespace, self.labels, self.namespace_labels):
                self.add(node_labels, term.topology_key, -weight)


def _has_preferred_in_spec(info: PodInfo) -> bool:
    """Upstream decides "has constraints" from the spec (a group that failed to parse counts)."""
    affinity = (info.pod.get("spec") or {}).get("affinity") or {}
    return any(((affinity.get(kind) or {}).get("preferredDuringSchedulingIgnoredDuringExecution"))
               for kind in ("podAffinity", "podAntiAffinity"))


def _aggregate(messages: Iterable[str]) -> str:
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


# -- queueing hints ------------------------------------------------------------------------
def _after_pod_change(terms: PodTerms, old: Any, new: Any) -> Hint:
    """isSchedulableAfterPodChange (1.33): an assigned pod that now matches all of the
    pod's affinity terms (added, or relabelled into them), or that stopped matching all of
    its anti-affinity terms (relabelled or deleted). Terms are matched with namespace
    selectors unresolved and no namespace labels, as upstream's hint does."""
    if (new is not None and not _node_name(new)) or (old is not None and not _node_name(old)):
        return Hint.SKIP
    if terms.errors:
        return Hint.QUEUE

    def matches(group: tuple[AffinityTerm, ...], other: Any) -> bool:
        meta = other.get("metadata") or {}
        return _matches_all(group, meta.get("namespace") or "", meta.get("labels") or {})

    if old is not None and new is not None:
        if not matches(terms.required_affinity, old) and matches(terms.required_affinity, new):
            return Hint.QUEUE
        if matches(terms.required_anti, old) and not matches(terms.required_anti, new):
            return Hint.QUEUE
        return Hint.SKIP
    if new is not None:
        return Hint.QUEUE if matches(terms.required_affinity, new) else Hint.SKIP
    return Hint.QUEUE if old is not None and matches(terms.required_anti, old) else Hint.SKIP


def _after_node_change(terms: PodTerms, old: Any, new: Any) -> Hint:
    """isSchedulableAfterNodeChange (1.33): a new node with an affinity term's topology
    key, or any new node when the pod has anti-affinity terms; an updated node that gained
    an affinity key, lost an anti-affinity key, or changed either key's value."""
    if new is None:
        return Hint.SKIP
    if terms.errors:
        return Hint.QUEUE
    new_labels = (new.get("metadata") or {}).get("labels") or {}
    old_labels = None if old is None else (old.get("metadata") or {}).get("labels") or {}
    for term in terms.required_affinity:
        key = term.topology_key
        if old_labels is None:
            if key in new_labels:
                return Hint.QUEUE
            continue
        if key in new_labels and (key not in old_labels or old_labels[key] != new_labels[key]):
            return Hint.QUEUE
    for term in terms.required_anti:
        key = term.topology_key
        if old_labels is None:
            return Hint.QUEUE
        if key in old_labels and (key not in new_labels or old_labels[key] != new_labels[key]):
            return Hint.QUEUE
    return Hint.SKIP


def _node_name(pod: Any) -> str:
    return (pod.get("spec") or {}).get("nodeName") or ""
