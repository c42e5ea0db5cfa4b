"""Running a profile's plugins at each extension point (upstream's frameworkruntime).

One :class:`Framework` per profile: it builds the profile's plugins from the registry,
sorts them into extension points by the methods they define (a plugin "implements"
Filter when it has ``filter``), and runs them in the profile's order. Scores are summed
as upstream: each plugin's scores normalized to 0…100 (when it normalizes), times its
weight.
"""

from __future__ import annotations

from itertools import repeat
from operator import add, attrgetter, itemgetter, mul
from typing import TYPE_CHECKING, Any, Callable, Hashable, Iterable, Mapping

from fakekube.scheduler.config import Profile, SchedulerConfig
from fakekube.scheduler.plugins.helper import LoggedMemo
from fakekube.scheduler.framework import (
    Code, CycleState, EventHint, NodeInfo, PodInfo, QueuedPodInfo, Status, error,
)

if TYPE_CHECKING:
    from fakekube.engine import Context
    from fakekube.scheduler.cache import Snapshot

#: A plugin factory: (handle, args from pluginConfig) -> plugin.
PluginFactory = Callable[["Handle", Mapping[str, Any]], Any]


class Handle:
    """What plugins may use besides their arguments (upstream's framework.Handle): the
    snapshot of nodes, the framework (preemption re-runs filters), and ``ctx`` — the
    controller runtime's context of the reconcile running now (reads, writes, events)."""

    def __init__(self, snapshot: "Snapshot", config: SchedulerConfig, profile: Profile) -> None:
        self.snapshot = snapshot
        self.config = config
        self.profile = profile
        self.framework: Framework | None = None
        self._ctx: "Context | None" = None

    @property
    def ctx(self) -> "Context":
        assert self._ctx is not None, "plugins run only inside a scheduler reconcile"
        return self._ctx

    def use(self, ctx: "Context") -> None:
        self._ctx = ctx


class Framework:
    """One profile's plugins, by extension point."""

    def __init__(self, profile: Profile, handle: Handle, registry: Mapping[str, PluginFactory]) -> None:
        self.profile = profile
        self.handle = handle
        handle.framework = self
        plugins = profile.plugins()
        unknown = [name for name, _ in plugins if name not in registry]
        for point in profile.points:
            unknown += [name for name, _ in point[1].enabled if name not in registry]
        if unknown:
            raise ValueError(f"profile {profile.scheduler_name!r}: unknown plugin(s) {sorted(set(unknown))}")
        names = [name for name, _ in plugins] + [n for _, s in profile.points for n, _ in s.enabled]
        self.plugins: dict[str, Any] = {}
        for name in dict.fromkeys(names):
            self.plugins[name] = registry[name](handle, profile.args(name))
        self.weights = {name: weight or 1 for name, weight in plugins}
        #: Score plugins' per-node results by pod signature (run_score's memo).
        self._score_memo = LoggedMemo()
        self.pre_enqueue = self._point("preEnqueue", "pre_enqueue", plugins)
        self.queue_sort = self._point("queueSort", "sort_key", plugins)
        self.pre_filter = self._point("preFilter", "pre_filter", plugins)
        self.filter = self._point("filter", "filter", plugins)
        self.post_filter = self._point("postFilter", "post_filter", plugins)
        self.pre_score = self._point("preScore", "pre_score", plugins)
        self.score = self._point("score", "score", plugins)
        self.reserve = self._point("reserve", "reserve", plugins)
        self.permit = self._point("permit", "permit", plugins)
        self.pre_bind = self._point("preBind", "pre_bind", plugins)
        self.bind = self._point("bind", "bind", plugins)
        self.post_bind = self._point("postBind", "post_bind", plugins)
        if len(self.queue_sort) != 1:
            raise ValueError(f"profile {profile.scheduler_name!r}: exactly one queueSort plugin is needed")
        if not self.bind:
            raise ValueError(f"profile {profile.scheduler_name!r}: at least one bind plugin is needed")

    def _point(self, point: str, method: str, plugins: list[tuple[str, int]]) -> list[Any]:
        implementing = [(name, weight) for name, weight in plugins if hasattr(self.plugins[name], method)]
        chosen = self.profile.point(point, implementing)
        for name, weight in chosen:
            if weight:
                self.weights[name] = weight
        return [self.plugins[name] for name, _ in chosen if hasattr(self.plugins[name], method)]

    @property
    def name(self) -> str:
        return self.profile.scheduler_name

    def events_to_register(self) -> dict[str, list[EventHint]]:
        """Each plugin's registered events (for the queue's hints), by plugin name."""
        return {name: list(plugin.events_to_register()) for name, plugin in self.plugins.items()
                if hasattr(plugin, "events_to_register")}

    # -- queueing ------------------------------------------------------------------------
    def run_pre_enqueue(self, info: PodInfo) -> Status | None:
        for plugin in self.pre_enqueue:
            status = plugin.pre_enqueue(info)
            if status is not None and status.code != Code.SUCCESS:
                return _named(status, plugin.name)
        return None

    def sort_key(self, queued: QueuedPodInfo) -> tuple[Any, ...]:
        key: tuple[Any, ...] = self.queue_sort[0].sort_key(queued)
        return key

    # -- filtering -----------------------------------------------------------------------
    def run_pre_filter(self, state: CycleState, info: PodInfo) -> tuple[set[str] | None, Status | None]:
        """PreFilter: a failure ends the cycle; SKIP drops the plugin's filter; node-name
        results intersect."""
        names: set[str] | None = None
        for plugin in self.pre_filter:
            result, status = plugin.pre_filter(state, info)
            if status is not None and status.code == Code.SKIP:
                state.skip_filter.add(plugin.name)
                continue
            if status is not None and status.code != Code.SUCCESS:
                return None, _named(status, plugin.name)
            if result is not None:
                names = set(result) if names is None else names & set(result)
                state.node_name_plugins.append(plugin.name)
        return names, None

    def filters_for(self, state: CycleState) -> list[Callable[[CycleState, PodInfo, NodeInfo], Status | None]]:
        """The bound filter methods this cycle runs, in order (PreFilter SKIPs left out)."""
        return [plugin.filter for plugin in self.filter if plugin.name not in state.skip_filter]

    def filter_chain_signature(self, state: CycleState, info: PodInfo) -> Hashable | None:
        """What this cycle's active Filters read of the pod, when each of them says so: a
        plugin's ``filter_signature(state, info)`` promises that its verdict on a node
        depends only on that value and the node's NodeInfo (so it can be remembered per
        node generation). None when an active filter has no signature (or returns None)."""
        parts: list[tuple[str, Hashable]] = []
        for plugin in self.filter:
            if plugin.name in state.skip_filter:
                continue
            signature = getattr(plugin, "filter_signature", None)
            value = signature(state, info) if signature is not None else None
            if value is None:
                return None
            parts.append((plugin.name, value))
        return tuple(parts)

    def run_filters(self, state: CycleState, info: PodInfo, node: NodeInfo) -> Status | None:
        """Filter: the first rejection on ``node`` (later filters do not run), or None."""
        for plugin in self.filter:
            if plugin.name in state.skip_filter:
                continue
            status = plugin.filter(state, info, node)
            if status is not None:
                return _named(status, plugin.name)
        return None

    def run_filters_with_nominated(self, state: CycleState, info: PodInfo, node: NodeInfo) -> Status | None:
        """Filters with the higher-or-equal priority pods nominated to ``node`` counted as
        if already there (upstream's RunFilterPluginsWithNominatedPods: a pod must not take
        room a preemptor freed). Two passes, as upstream: with them, then without."""
        nominated = self.handle.snapshot.nominated_pods(node.name, info)
        if not nominated:
            return self.run_filters(state, info, node)
        with_them = node.clone()
        state_with = state.clone()
        for other in nominated:
            with_them.add_pod(other)
            self.run_add_pod(state_with, info, other, with_them)
        status = self.run_filters(state_with, info, with_them)
        if status is not None:
            return status
        return self.run_filters(state, info, node)

    def run_add_pod(self, state: CycleState, info: PodInfo, other: PodInfo, node: NodeInfo) -> Status | None:
        """PreFilterExtensions.AddPod: ``other`` counted on ``node`` in this cycle's state."""
        return self._run_extension("add_pod", state, info, other, node)

    def run_remove_pod(self, state: CycleState, info: PodInfo, other: PodInfo, node: NodeInfo) -> Status | None:
        """PreFilterExtensions.RemovePod: ``other`` taken off ``node`` in this cycle's state."""
        return self._run_extension("remove_pod", state, info, other, node)

    def _run_extension(self, method: str, state: CycleState, info: PodInfo, other: PodInfo,
                       node: NodeInfo) -> Status | None:
        for plugin in self.pre_filter:
            if plugin.name in state.skip_filter or not hasattr(plugin, method):
                continue
            status = getattr(plugin, method)(state, info, other, node)
            if status is not None and status.code != Code.SUCCESS:
                return _named(status, plugin.name)
        return None

    def run_post_filter(self, state: CycleState, info: PodInfo,
                        statuses: Mapping[str, Status]) -> tuple[str | None, Status | None]:
        """PostFilter (preemption): the first plugin that nominates a node wins; otherwise
        the last rejection's message is what FailedScheduling adds, and a failing plugin's
        ``""`` nomination (upstream's "clear the nominated node") is passed on (None: keep)."""
        last: Status | None = None
        clear: str | None = None
        for plugin in self.post_filter:
            nominated, status = plugin.post_filter(state, info, statuses)
            if status is not None and status.code == Code.SUCCESS:
                return nominated, status
            if status is not None and status.code == Code.ERROR:
                return None, _named(status, plugin.name)
            last = _named(status, plugin.name) if status is not None else last
            clear = nominated if nominated is not None else clear
        return clear, last

    # -- scoring -------------------------------------------------------------------------
    def run_pre_score(self, state: CycleState, info: PodInfo, nodes: list[NodeInfo]) -> Status | None:
        for plugin in self.pre_score:
            status = plugin.pre_score(state, info, nodes)
            if status is not None and status.code == Code.SKIP:
                state.skip_score.add(plugin.name)
            elif status is not None and status.code != Code.SUCCESS:
                return _named(status, plugin.name)
        return None

    def run_score(self, state: CycleState, info: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        """Each node's weighted total over the score plugins (in ``nodes`` order).

        Plugins that declare what of the pod their raw score reads (``score_signature``)
        are scored together from one memo per node generation (see ``_memoized_totals``);
        the others one by one."""
        active = [plugin for plugin in self.score if plugin.name not in state.skip_score]
        memoizable, others = self._split_by_signature(active, state, info)
        totals = self._memoized_totals(memoizable, state, info, nodes) if memoizable else [0] * len(nodes)
        for plugin in others:
            scores = self.plugin_scores(plugin, state, info, nodes)
            weight = self.weights.get(plugin.name, 1)
            totals = [total + weight * value for total, value in zip(totals, scores)]
        return totals

    def _split_by_signature(self, plugins: list[Any], state: CycleState,
                            info: PodInfo) -> tuple[list[tuple[Any, Hashable]], list[Any]]:
        memoizable: list[tuple[Any, Hashable]] = []
        others: list[Any] = []
        for plugin in plugins:
            signature = plugin.score_signature(state, info) if hasattr(plugin, "score_signature") else None
            if signature is None:
                others.append(plugin)
            else:
                memoizable.append((plugin, signature))
        return memoizable, others

    def _memoized_totals(self, plugins: list[tuple[Any, Hashable]], state: CycleState, info: PodInfo,
                         nodes: list[NodeInfo]) -> list[int]:
        """The weighted total of ``plugins`` per node. Per node one memo entry (valid until
        the cache logs the node again: LoggedMemo) holds the weighted sum of the plugins
        that do not normalize and the raw scores of those that do (normalized here, across
        these nodes): a burst of alike pods looks its nodes up at C speed instead of
        calling each plugin per node."""
        plain = [plugin for plugin, _ in plugins if not hasattr(plugin, "normalize_score")]
        normalizing = [plugin for plugin, _ in plugins if hasattr(plugin, "normalize_score")]
        weights = [self.weights.get(plugin.name, 1) for plugin in plain]
        snapshot = self.handle.snapshot

        def entry(node: NodeInfo) -> tuple[int, ...]:
            fixed = sum(w * plugin.score(state, info, node) for plugin, w in zip(plain, weights))
            return (fixed, *(plugin.score(state, info, node) for plugin in normalizing))
        table, dropped = self._score_memo.table(tuple(signature for _, signature in plugins), snapshot.changes)
        known = table.values
        if len(dropped) <= RELEARN_NODES_MAX:  # in a burst, the node the last pod landed on
            for name in dropped:
                node = snapshot.get(name)
                if node is not None:
                    known[name] = entry(node)
        entries: list[Any] = list(map(known.get, map(_node_name, nodes)))
        if None in entries:  # nodes this signature has not scored since they changed
            for index, node in enumerate(nodes):
                if entries[index] is None:
                    entries[index] = known[node.name] = entry(node)
        totals = list(map(_first, entries))
        for index, plugin in enumerate(normalizing, 1):
            scores = list(map(itemgetter(index), entries))
            plugin.normalize_score(state, info, scores)
            weight = self.weights.get(plugin.name, 1)
            totals = list(map(add, totals, map(mul, scores, repeat(weight))))
        return totals

    @staticmethod
    def plugin_scores(plugin: Any, state: CycleState, info: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        """One score plugin's normalized scores for ``nodes``: its ``score_nodes`` when it
        has one (all nodes in one call: the hot path of a 5,000-node cycle), else
        ``score`` per node; then its NormalizeScore."""
        if hasattr(plugin, "score_nodes"):
            scores: list[int] = plugin.score_nodes(state, info, nodes)
        else:
            score = plugin.score
            scores = [score(state, info, node) for node in nodes]
        if hasattr(plugin, "normalize_score"):
            plugin.normalize_score(state, info, scores)
        return scores

    # -- after a node is chosen -----------------------------------------------------------
    def run_reserve(self, state: CycleState, info: PodInfo, node_name: str) -> Status | None:
        for plugin in self.reserve:
            status = plugin.reserve(state, info, node_name)
            if status is not None and status.code != Code.SUCCESS:
                self.run_unreserve(state, info, node_name)
                return _named(status, plugin.name)
        return None

    def run_unreserve(self, state: CycleState, info: PodInfo, node_name: str) -> None:
        for plugin in reversed(self.reserve):
            if hasattr(plugin, "unreserve"):
                plugin.unreserve(state, info, node_name)

    def run_permit(self, state: CycleState, info: PodInfo, node_name: str) -> Status | None:
        return _first_failure(self.permit, "permit", state, info, node_name)

    def run_pre_bind(self, state: CycleState, info: PodInfo, node_name: str) -> Status | None:
        """PreBind; an error is reported as upstream's ``running PreBind plugin "<name>": ...``."""
        status = _first_failure(self.pre_bind, "pre_bind", state, info, node_name)
        if status is not None and not status.is_rejected():
            return Status(status.code, (f'running PreBind plugin "{status.plugin}": {status.message}',), status.plugin)
        return status

    def run_bind(self, state: CycleState, info: PodInfo, node_name: str) -> Status | None:
        for plugin in self.bind:
            status = plugin.bind(state, info, node_name)
            if status is not None and status.code == Code.SKIP:
                continue
            return None if status is None or status.code == Code.SUCCESS else _named(status, plugin.name)
        return error("", f"no bind plugin bound pod {info.key}")

    def run_post_bind(self, state: CycleState, info: PodInfo, node_name: str) -> None:
        for plugin in self.post_bind:
            plugin.post_bind(state, info, node_name)


_node_name = attrgetter("name")
#: A score memo learns at most this many changed nodes again at once (more: as cycles score them).
RELEARN_NODES_MAX = 64
_first = itemgetter(0)


def _first_failure(plugins: Iterable[Any], method: str, state: CycleState, info: PodInfo,
                   node_name: str) -> Status | None:
    for plugin in plugins:
        status = getattr(plugin, method)(state, info, node_name)
        if status is not None and status.code not in (Code.SUCCESS, Code.SKIP):
            return _named(status, plugin.name)
    return None


def _named(status: Status, plugin: str) -> Status:
    """The status with the plugin that returned it (the queue keys its hints on it)."""
    return status if status.plugin == plugin else Status(status.code, status.reasons, plugin)
