"""PodTopologySpread's parts that are not extension points: the constraints as the plugin
reads them, the default selector, and matching-pod counts per topology domain.

Upstream: ``pkg/scheduler/framework/plugins/podtopologyspread/common.go`` and
``plugins/helper/spread.go`` (``DefaultSelector``), Kubernetes 1.33.

Counting is the expensive part: upstream walks every pod on every node twice per cycle
(PreFilter and PreScore). Here a :class:`DomainCounts` keeps, for one (namespace,
selector, topology key, node eligibility), each node's domain and matching-pod count and
the per-domain totals, and on the next cycle recounts only the nodes whose
``NodeInfo.generation`` moved (a pod bound, a label changed), as found by one
:class:`NodeChanges` pass per cycle over the node generations (or the snapshot's change
log). A selector seen for the first time (each new ReplicaSet under default spreading)
is counted from the bound-pod label index (:class:`IndexedPods`), in time proportional to
the pods carrying its rarest key=value plus a copy of the per-domain zeros of the
:class:`Layout` shared by every selector with the same topology key and eligibility.
"""

from __future__ import annotations

import functools
import json
import weakref
from collections import OrderedDict
from operator import is_
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, NamedTuple, Protocol, Sequence

from fakekube.objects.kinds import REPLICA_SETS, REPLICATION_CONTROLLERS, SERVICES, STATEFUL_SETS
from fakekube.objects.labels import EQUALS, IN, MATCH_EVERYTHING, LabelMatcher, Requirement, compile_selector
from fakekube.objects.nodeaffinity import RequiredNodeAffinity, node_affinity_of, required_node_affinity
from fakekube.objects.owners import controller_of
from fakekube.objects.taints import NO_EXECUTE, NO_SCHEDULE
from fakekube.objects.tolerations import first_untolerated_taint
from fakekube.scheduler.framework import NodeInfo, PodInfo
from fakekube.scheduler.plugins.labelindex import PodLabelIndex

if TYPE_CHECKING:
    from fakekube.engine import Context

Obj = Mapping[str, Any]

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"

#: Taint effects a NodeTaintsPolicy of Honor looks at (helper.DoNotScheduleTaintsFilterFunc).
_DO_NOT_SCHEDULE_EFFECTS = (NO_SCHEDULE, NO_EXECUTE)

#: The most DomainCounts kept at once (one per selector × topology key × eligibility in
#: use), hence the most selectors remembered; past it the least recently used is dropped
#: and rebuilt from the label index when next needed. Each holds a dict of its domains
#: (5,000 entries for hostname spreading on 5,000 nodes).
MAX_COUNTERS = 256

class Constraint(NamedTuple):
    """A topology spread constraint with its selector compiled (upstream's
    topologySpreadConstraint): nil minDomains is 1, nil policies are Honor / Ignore."""

    max_skew: int
    topology_key: str
    selector: LabelMatcher
    min_domains: int = 1
    honor_affinity: bool = True
    honor_taints: bool = False


def parse_constraints(raw: Sequence[Obj], pod_labels: Mapping[str, str], action: str) -> tuple[Constraint, ...]:
    """The constraints of ``raw`` whose whenUnsatisfiable is ``action``, with
    ``matchLabelKeys`` merged into the selector (1.33 merges in the scheduler: the
    apiserver-side merge, MatchLabelKeysInPodTopologySpreadSelectorMerge, is 1.34).
    Raises ValueError for an invalid labelSelector, as LabelSelectorAsSelector."""
    out = []
    for item in raw:
        if item.get("whenUnsatisfiable") != action:
            continue
        selector = compile_selector(item.get("labelSelector"))
        keys = item.get("matchLabelKeys") or ()
        if keys:
            selector = _with_match_label_keys(selector, keys, pod_labels)
        out.append(Constraint(
            max_skew=int(item.get("maxSkew") or 0),
            topology_key=item.get("topologyKey") or "",
            selector=selector,
            min_domains=int(item.get("minDomains") or 1),
            honor_affinity=(item.get("nodeAffinityPolicy") or HONOR) == HONOR,
            honor_taints=(item.get("nodeTaintsPolicy") or IGNORE) == HONOR,
        ))
    return tuple(out)


def _with_match_label_keys(selector: LabelMatcher, keys: Sequence[str], pod_labels: Mapping[str, str]) -> LabelMatcher:
    """mergeLabelSetWithSelector: the pod's values of ``keys`` (keys it lacks are left
    out) ANDed with the selector's requirements. A nil selector stays nil (validation
    refuses matchLabelKeys without a labelSelector anyway)."""
    pairs = {key: pod_labels[key] for key in keys if key in pod_labels}
    if not pairs or selector.nothing:
        return selector
    requirements = [Requirement(key, EQUALS, (value,)) for key, value in pairs.items()]
    return canonical_matcher(requirements + list(selector.requirements))


def canonical_matcher(requirements: Sequence[Requirement]) -> LabelMatcher:
    """A matcher whose requirements are in one fixed order, so equal selectors built from
    the same parts compare (and hash) equal: they key the counts cache."""
    return LabelMatcher(tuple(sorted(requirements)))


def has_all_keys(labels: Mapping[str, str], constraints: Sequence[Constraint]) -> bool:
    """nodeLabelsMatchSpreadConstraints: does the node carry every topology key?"""
    for constraint in constraints:
        if constraint.topology_key not in labels:
            return False
    return True


# -- the pod's side: node affinity and tolerations ------------------------------------
class PodSpread:
    """What every cycle of one pod needs from its spec, parsed once per PodInfo (kept in
    ``PodInfo.data``): its own hard and soft constraints (or the parse error), its
    required node affinity and tolerations, with keys that say when two pods share them."""

    __slots__ = ("has_spec_constraints", "hard", "soft", "hard_error", "soft_error", "affinity", "affinity_key",
                 "tolerations", "tolerations_key")
    #: Set once by ``__init__`` and never changed: snapshots (cluster/statecopy.py) refer to
    #: it rather than copy it.
    SNAPSHOT_SHARED = True

    def __init__(self, pod: Obj) -> None:
        spec = pod.get("spec") or {}
        labels = (pod.get("metadata") or {}).get("labels") or {}
        raw = spec.get("topologySpreadConstraints") or []
        self.has_spec_constraints = bool(raw)
        self.hard, self.hard_error = _parse_or_error(raw, labels, DO_NOT_SCHEDULE)
        self.soft, self.soft_error = _parse_or_error(raw, labels, SCHEDULE_ANYWAY)
        affinity = required_node_affinity(pod)
        self.affinity: RequiredNodeAffinity | None = None
        self.affinity_key: str | None = None
        if affinity.node_selector or affinity.affinity is not None:  # else every node matches
            self.affinity = affinity
            required = node_affinity_of(pod).get("requiredDuringSchedulingIgnoredDuringExecution")
            self.affinity_key = json.dumps([affinity.node_selector, required], sort_keys=True)
        self.tolerations: Sequence[Obj] = spec.get("tolerations") or []
        self.tolerations_key = json.dumps(self.tolerations, sort_keys=True)


def _parse_or_error(raw: Sequence[Obj], labels: Mapping[str, str],
                    action: str) -> tuple[tuple[Constraint, ...], str | None]:
    try:
        return parse_constraints(raw, labels, action), None
    except ValueError as exc:
        return (), str(exc)


class Eligibility(NamedTuple):
    """Which nodes count for a constraint: those with every required topology key, and,
    per the constraint's node inclusion policies, matching the pod's required node
    affinity (Honor) and with no NoSchedule/NoExecute taint it does not tolerate (Honor).
    ``None`` affinity or tolerations means the policy is Ignore (or the pod has none)."""

    required_keys: tuple[str, ...]
    affinity: RequiredNodeAffinity | None
    tolerations: Sequence[Obj] | None

    def admits(self, node: NodeInfo) -> bool:
        labels = node.labels
        for key in self.required_keys:
            if key not in labels:
                return False
        if self.affinity is not None and not self.affinity.matches(labels, node.name):
            return False
        if self.tolerations is not None and node.taints:
            return first_untolerated_taint(node.taints, self.tolerations, _DO_NOT_SCHEDULE_EFFECTS) is None
        return True


def eligibility(constraint: Constraint, spread: PodSpread,
                required_keys: tuple[str, ...]) -> tuple[Eligibility, tuple[Any, ...]]:
    """The constraint's node eligibility for this pod, and a hashable key equal for every
    pod whose eligibility is the same."""
    affinity = spread.affinity if constraint.honor_affinity else None
    tolerations = spread.tolerations if constraint.honor_taints else None
    key = (required_keys, spread.affinity_key if affinity is not None else None,
           spread.tolerations_key if tolerations is not None else None)
    return Eligibility(required_keys, affinity, tolerations), key


def matches_inclusion(constraint: Constraint, spread: PodSpread, node: NodeInfo) -> bool:
    """matchNodeInclusionPolicies for one node (preemption's AddPod/RemovePod)."""
    if constraint.honor_affinity and spread.affinity is not None and not spread.affinity.matches(node.labels, node.name):
        return False
    if constraint.honor_taints and node.taints:
        return first_untolerated_taint(node.taints, spread.tolerations, _DO_NOT_SCHEDULE_EFFECTS) is None
    return True


# -- counting -------------------------------------------------------------------------
def count_matching(node: NodeInfo, namespace: str, matches: Callable[[Mapping[str, str]], bool]) -> int:
    """countPodsMatchSelector: pods on ``node`` in ``namespace`` whose labels ``matches``,
    leaving out terminating ones (#87621)."""
    count = 0
    for other in node.pods.values():
        if other.namespace != namespace or not matches(other.labels):
            continue
        if (other.pod.get("metadata") or {}).get("deletionTimestamp") is None:
            count += 1
    return count


def label_predicate(selector: LabelMatcher) -> Callable[[Mapping[str, str]], bool] | None:
    """A fast test for the selector: for plain ``key=value`` terms (every ReplicaSet's
    matchLabels) a C-level items-subset check. None for a selector that counts nothing
    (nil, or empty: upstream's countPodsMatchSelector skips an empty one)."""
    if selector.nothing or not selector.requirements:
        return None
    pairs = {r.key: r.values[0] for r in selector.requirements if r.operator in (EQUALS, IN) and len(r.values) == 1}
    if len(pairs) == len(selector.requirements):
        # A partial over an immutable set: shared as it is by snapshots, and plain data a
        # snapshot file can name (cluster/snapfile.py).
        return functools.partial(_has_all, frozenset(pairs.items()))
    return selector.matches


def _has_all(wanted: frozenset[tuple[str, str]], labels: Mapping[str, str]) -> bool:
    return wanted <= labels.items()


class ChangeLog(Protocol):
    """What a snapshot may offer to spare the scan: the names of the nodes whose NodeInfo
    changed, in order, readable from a position (None: no longer kept)."""

    @property
    def position(self) -> int: ...

    def since(self, position: int) -> Sequence[str] | None: ...


class NodeChanges:
    """Which of the snapshot's nodes changed since a given point: a journal of node
    indices that counters read from their own position. Found once per cycle from the
    snapshot's change log when it has one, else by comparing every
    ``NodeInfo.generation`` with the previous cycle's (the one O(nodes) step). A new node
    list starts a new epoch (every counter then rebuilds), as does a counter so far
    behind that its entries were dropped."""

    def __init__(self, limit: int = 16384) -> None:
        self.limit = limit
        self.nodes: list[NodeInfo] = []
        self.gens: list[int] = []
        self.epoch = 0
        self.start = 0
        self.journal: list[int] = []
        self._log_position: int | None = None
        self._index: dict[str, int] | None = None

    @property
    def position(self) -> int:
        return self.start + len(self.journal)

    def sync(self, nodes: list[NodeInfo], log: ChangeLog | None = None) -> None:
        """Record the nodes that changed since the last sync."""
        if not self._same_nodes(nodes):
            self._new_epoch(nodes, log)
            return
        if log is not None and self._log_position is not None:
            names = log.since(self._log_position)
            if names is None:
                self._new_epoch(nodes, log)
                return
            self._log_position = log.position
            if names:
                index = self.node_index()
                self._record([index[name] for name in names if name in index])
            return
        gens = [node.generation for node in nodes]
        if gens != self.gens:
            changed: list[int] = []
            _differences(gens, self.gens, 0, len(gens), changed)
            self._record(changed)
            self.gens = gens

    def since(self, epoch: int, position: int) -> list[int] | None:
        """Indices of the nodes changed after ``position`` of ``epoch`` (repeats
        possible), or None when that is no longer known: rebuild."""
        if epoch != self.epoch or position < self.start:
            return None
        return self.journal[position - self.start:]

    def node_index(self) -> dict[str, int]:
        """Node name -> its index in this epoch's node list."""
        if self._index is None:
            self._index = {node.name: index for index, node in enumerate(self.nodes)}
        return self._index

    def _new_epoch(self, nodes: list[NodeInfo], log: ChangeLog | None) -> None:
        self.nodes, self.epoch, self.start, self.journal, self._index = nodes, self.epoch + 1, 0, [], None
        self._log_position = log.position if log is not None else None
        self.gens = [node.generation for node in nodes] if log is None else []

    def _record(self, changed: list[int]) -> None:
        self.journal.extend(changed)
        if len(self.journal) > self.limit:
            dropped = len(self.journal) // 2
            del self.journal[:dropped]
            self.start += dropped

    def _same_nodes(self, nodes: list[NodeInfo]) -> bool:
        if nodes is self.nodes:
            return True
        if len(nodes) != len(self.nodes) or not all(map(is_, nodes, self.nodes)):
            return False
        self.nodes = nodes
        return True


def _differences(new: list[int], old: list[int], low: int, high: int, out: list[int]) -> None:
    """Append the indices in [low, high) where the lists differ: halves that compare equal
    (one C-level comparison) are skipped whole."""
    if new[low:high] == old[low:high]:
        return
    if high - low <= 16:
        out.extend(index for index in range(low, high) if new[index] != old[index])
        return
    middle = (low + high) // 2
    _differences(new, old, low, middle, out)
    _differences(new, old, middle, high, out)


class IndexedPods:
    """The bound pods by label (:class:`PodLabelIndex`), brought up to the nodes
    ``changes`` last synced only when some selector's counts are built: the nodes changed
    since are re-indexed (after a new node list, every node's identity and generation is
    compared, and only changed nodes are re-indexed)."""

    def __init__(self) -> None:
        self.index = PodLabelIndex()
        self.epoch = -1
        self.position = 0

    def candidates(self, changes: NodeChanges, selector: LabelMatcher) -> Iterator[tuple[PodInfo, NodeInfo]] | None:
        """A superset of the bound pods ``selector`` matches, with their nodes (None when
        it has no key=value term to look up)."""
        changed = changes.since(self.epoch, self.position)
        if changed is None:
            self.index.refresh(changes.nodes)
        elif changed:
            nodes = changes.nodes
            self.index.refresh_nodes([nodes[index] for index in set(changed)])
        self.epoch, self.position = changes.epoch, changes.position
        return self.index.candidates(selector)


class PodCounts:
    """Matching pods per node for one (namespace, selector), only for nodes with some
    (node index -> count), shared by the DomainCounts of every topology key and
    eligibility using the selector, so a changed node is recounted once. A new selector's
    counts come from the label index, in time proportional to the pods carrying its
    rarest key=value (a scan of every node's pods only for a selector without an
    equality term); later only the nodes changed since are recounted."""

    __slots__ = ("namespace", "selector", "matches", "epoch", "position", "counts", "__weakref__")

    def __init__(self, namespace: str, selector: LabelMatcher) -> None:
        self.namespace = namespace
        self.selector = selector
        self.matches = label_predicate(selector)
        self.epoch = -1
        self.position = 0
        self.counts: dict[int, int] = {}

    def sync(self, changes: NodeChanges, pods: IndexedPods) -> None:
        """Bring the counts up to the nodes ``changes`` last synced."""
        if self.matches is None:
            return
        changed = changes.since(self.epoch, self.position)
        self.epoch, self.position = changes.epoch, changes.position
        if changed is None:
            self._rebuild(changes, pods)
            return
        nodes, counts = changes.nodes, self.counts
        for index in set(changed):
            count = count_matching(nodes[index], self.namespace, self.matches)
            if count:
                counts[index] = count
            else:
                counts.pop(index, None)

    def _rebuild(self, changes: NodeChanges, pods: IndexedPods) -> None:
        namespace, matches = self.namespace, self.matches
        assert matches is not None
        counts: dict[int, int] = {}
        candidates = pods.candidates(changes, self.selector)
        if candidates is None:
            for index, node in enumerate(changes.nodes):
                count = count_matching(node, namespace, matches)
                if count:
                    counts[index] = count
        else:
            where = changes.node_index()
            for other, node in candidates:
                if other.namespace != namespace or not matches(other.labels):
                    continue
                if (other.pod.get("metadata") or {}).get("deletionTimestamp") is not None:
                    continue
                at = where.get(node.name)
                if at is not None:
                    counts[at] = counts.get(at, 0) + 1
        self.counts = counts


class Layout:
    """Each node's domain for one topology key (None when the node is not eligible) and
    how many eligible nodes each domain has: shared by the DomainCounts of every selector
    with that key and eligibility, kept up by re-reading the changed nodes. ``version``
    moves when a domain appears or goes."""

    __slots__ = ("topology_key", "eligibility", "epoch", "position", "values", "domain_nodes", "version",
                 "_zeros", "__weakref__")

    def __init__(self, topology_key: str, rule: Eligibility) -> None:
        self.topology_key = topology_key
        self.eligibility = rule
        self.epoch = -1
        self.position = 0
        self.values: list[str | None] = []
        self.domain_nodes: dict[str, int] = {}
        self.version = 0
        self._zeros: dict[str, int] | None = None

    def sync(self, changes: NodeChanges) -> None:
        changed = changes.since(self.epoch, self.position)
        self.epoch, self.position = changes.epoch, changes.position
        if changed is None:
            self.values = [self._value(node) for node in changes.nodes]
            domain_nodes: dict[str, int] = {}
            for value in self.values:
                if value is not None:
                    domain_nodes[value] = domain_nodes.get(value, 0) + 1
            self.domain_nodes, self.version, self._zeros = domain_nodes, self.version + 1, None
            return
        nodes, values, domain_nodes, version = changes.nodes, self.values, self.domain_nodes, self.version
        for index in set(changed):
            old, new = values[index], self._value(nodes[index])
            if old == new:
                continue
            values[index] = new
            if old is not None:
                left = domain_nodes[old] - 1
                if left:
                    domain_nodes[old] = left
                else:
                    del domain_nodes[old]
                    self.version += 1
            if new is not None:
                had = domain_nodes.get(new, 0)
                domain_nodes[new] = had + 1
                if not had:
                    self.version += 1
        if self.version != version:
            self._zeros = None

    def zeros(self) -> dict[str, int]:
        """Every domain with an eligible node, counting 0 (copied by each counter)."""
        if self._zeros is None:
            self._zeros = dict.fromkeys(self.domain_nodes, 0)
        return self._zeros

    def _value(self, node: NodeInfo) -> str | None:
        return node.labels[self.topology_key] if self.eligibility.admits(node) else None


class DomainCounts:
    """Matching pods per domain of one topology key over the eligible nodes, kept across
    cycles. ``totals`` has every domain with at least one eligible node (zero counts
    included: they are the global minimum's candidates). Built from the layout's zeros
    and the selector's nodes with matching pods; updated for the nodes changed since."""

    __slots__ = ("pods", "layout", "epoch", "position", "version", "nonzero", "totals", "_min")

    def __init__(self, pods: PodCounts, layout: Layout) -> None:
        self.pods = pods
        self.layout = layout
        self.epoch = -1
        self.position = 0
        self.version = -1
        #: Node index -> (its domain, its count) for the eligible nodes counting some.
        self.nonzero: dict[int, tuple[str, int]] = {}
        self.totals: dict[str, int] = {}
        self._min: int | None = None

    def refresh(self, changes: NodeChanges) -> None:
        """Bring the counts up to the nodes ``changes`` last synced (the layout and pod
        counts synced first): the nodes changed since this counter's last refresh, or
        everything when that is unknown or the set of domains changed."""
        changed = changes.since(self.epoch, self.position)
        self.epoch, self.position = changes.epoch, changes.position
        layout = self.layout
        if changed is None or self.version != layout.version:
            self._rebuild()
            return
        if not changed:
            return
        values, counts, nonzero, totals = layout.values, self.pods.counts, self.nonzero, self.totals
        for index in set(changed):
            old = nonzero.pop(index, None)
            if old is not None:
                totals[old[0]] -= old[1]
            value = values[index]
            if value is not None:
                count = counts.get(index)
                if count:
                    totals[value] += count
                    nonzero[index] = (value, count)
        self._min = None

    def lend(self) -> dict[str, int]:
        """The per-domain totals for this cycle's state: valid for the cycle (the next
        refresh, in a later cycle's PreFilter or PreScore, changes them in place; a state
        changing them for a what-if copies them first)."""
        return self.totals

    def min_count(self) -> int | None:
        """The smallest domain total (None without domains)."""
        if self._min is None and self.totals:
            self._min = min(self.totals.values())
        return self._min

    def _rebuild(self) -> None:
        layout = self.layout
        values = layout.values
        totals = dict(layout.zeros())
        nonzero: dict[int, tuple[str, int]] = {}
        for index, count in self.pods.counts.items():
            value = values[index]
            if value is not None:
                totals[value] += count
                nonzero[index] = (value, count)
        self.totals, self.nonzero, self.version, self._min = totals, nonzero, layout.version, None


class CounterPool:
    """The DomainCounts in use, least recently used dropped past ``limit``: at most
    ``limit`` (namespace, selector, topology key, eligibility) counters are remembered, so
    at most that many selectors' PodCounts and (topology key, eligibility) Layouts (those
    are held only by counters). A dropped one is rebuilt when next needed, in time
    proportional to its matching pods plus its domains."""

    def __init__(self, limit: int = MAX_COUNTERS) -> None:
        self.limit = limit
        self._counters: OrderedDict[tuple[Any, ...], DomainCounts] = OrderedDict()
        self._pod_counts: weakref.WeakValueDictionary[tuple[str, LabelMatcher], PodCounts] = \
            weakref.WeakValueDictionary()
        self._layouts: weakref.WeakValueDictionary[tuple[Any, ...], Layout] = weakref.WeakValueDictionary()
        self._pods = IndexedPods()

    def counts(self, changes: NodeChanges, namespace: str, constraint: Constraint, spread: PodSpread,
               required_keys: tuple[str, ...]) -> DomainCounts:
        """The up-to-date counts for one constraint of one pod (``changes`` synced)."""
        rule, rule_key = eligibility(constraint, spread, required_keys)
        key = (namespace, constraint.selector, constraint.topology_key, rule_key)
        counter = self._counters.get(key)
        if counter is None:
            pods = self._pod_counts.get((namespace, constraint.selector))
            if pods is None:
                pods = self._pod_counts[(namespace, constraint.selector)] = PodCounts(namespace, constraint.selector)
            layout = self._layouts.get((constraint.topology_key, rule_key))
            if layout is None:
                layout = self._layouts[(constraint.topology_key, rule_key)] = Layout(constraint.topology_key, rule)
            counter = self._counters[key] = DomainCounts(pods, layout)
            while len(self._counters) > self.limit:
                self._counters.popitem(last=False)
        else:
            self._counters.move_to_end(key)
        counter.layout.sync(changes)
        counter.pods.sync(changes, self._pods)
        counter.refresh(changes)
        return counter

    def __len__(self) -> int:
        return len(self._counters)


# -- the default selector ----------------------------------------------------------------
_OWNER_KINDS = {("v1", "ReplicationController"): REPLICATION_CONTROLLERS,
                ("apps/v1", "ReplicaSet"): REPLICA_SETS,
                ("apps/v1", "StatefulSet"): STATEFUL_SETS}


class DefaultSelector:
    """helper.DefaultSelector: the selector of the Services selecting the pod, ANDed with
    that of its controller when that is a ReplicationController, ReplicaSet or StatefulSet.
    Compiled owner selectors are kept by object identity (stored objects are immutable)."""

    def __init__(self, limit: int = 1024) -> None:
        self._compiled: OrderedDict[tuple[str, str], tuple[Obj, LabelMatcher | None]] = OrderedDict()
        self._limit = limit

    def for_pod(self, ctx: "Context", info: PodInfo) -> LabelMatcher:
        """The pod's default selector; MATCH_EVERYTHING (empty) when nothing selects it."""
        label_set: dict[str, str] = {}
        for service in ctx.list(SERVICES, info.namespace):
            selector = (service.get("spec") or {}).get("selector")
            if selector is None:  # a nil selector selects nothing
                continue
            if all(info.labels.get(key) == value for key, value in selector.items()):
                label_set.update(selector)
        requirements = _pairs(label_set)
        owner = controller_of(info.pod)
        resource = _OWNER_KINDS.get((owner.get("apiVersion") or "", owner.get("kind") or "")) if owner else None
        if owner is not None and resource is not None:
            obj = ctx.get(resource, owner.get("name") or "", info.namespace)
            if obj is not None and resource == REPLICATION_CONTROLLERS:
                label_set.update((obj.get("spec") or {}).get("selector") or {})
                requirements = _pairs(label_set)
            elif obj is not None:
                matcher = self._compile(obj)
                if matcher is not None and not matcher.nothing:
                    requirements += list(matcher.requirements)
        return canonical_matcher(requirements) if requirements else MATCH_EVERYTHING

    def _compile(self, obj: Obj) -> LabelMatcher | None:
        """The owner's spec.selector compiled (None if invalid: upstream then ignores it)."""
        meta = obj.get("metadata") or {}
        key = (meta.get("namespace") or "", meta.get("uid") or meta.get("name") or "")
        cached = self._compiled.get(key)
        if cached is not None and cached[0] is obj:
            return cached[1]
        try:
            matcher: LabelMatcher | None = compile_selector((obj.get("spec") or {}).get("selector"))
        except ValueError:
            matcher = None
        self._compiled[key] = (obj, matcher)
        self._compiled.move_to_end(key)
        while len(self._compiled) > self._limit:
            self._compiled.popitem(last=False)
        return matcher


def _pairs(label_set: Mapping[str, str]) -> list[Requirement]:
    return [Requirement(key, EQUALS, (value,)) for key, value in label_set.items()]
