"""kube-scheduler as a client of the controller runtime: the queue, the cache and one
scheduling cycle per pod (upstream's ``schedule_one.go``).

Work keys: every change of a pod, node or storage object the scheduler watches becomes the
key ``<resource>/<namespace>/<name>``; its reconcile updates the cache (nodes, bound pods),
the queue (pending pods) and moves unschedulable pods the change may help. The key
``~schedule`` pops pods from activeQ one at a time, running each one's cycle, until activeQ
is empty (one reconcile per burst rather than per pod: 30,000 pods created at one instant
are one batch); it is queued whenever activeQ holds a pod and armed as a timer at the
next back-off expiry. ``~flush`` is upstream's
30-second loop that sends pods unschedulable for over 5 minutes back; it is armed only for
the tick at which the oldest such pod becomes due (the same instants, no idle wake-ups).

A cycle: PreFilter; the nominated node first, if any; Filter from a rotating start over
the nodes in node-tree order until ``numFeasibleNodesToFind`` fit (percentageOfNodesToScore:
adaptive, at least 100 nodes); one fit is taken as is, several are scored and the highest
total wins, ties broken from the scheduler's seeded random stream (reservoir sampling, as
upstream's selectHost). Then Reserve, Permit, PreBind, Bind; the cache counts the pod at
once. A pod that fits nowhere runs PostFilter (preemption) and gets upstream's
FailedScheduling event and PodScheduled=False condition with the same message.

Pods are scheduled one at a time, in the queue's order, so a run is deterministic.
"""

from __future__ import annotations

import math
from itertools import compress
from datetime import datetime, timedelta
from typing import Any, Iterable, Mapping

from fakekube.api.machinery.errors import ApiError
from fakekube.engine import Context
from fakekube.objects.kinds import NODES, PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, PODS, STORAGE_CLASSES, Resource
from fakekube.objects.pods import is_pod_terminal
from fakekube.scheduler.cache import Cache, Snapshot
from fakekube.scheduler.config import SchedulerConfig
from fakekube.scheduler.framework import (
    ASSIGNED_POD, NODE, PV, PVC, STORAGE_CLASS, Action, ClusterEvent, Code, CycleState, Diagnosis, EventHint,
    NodeInfo, PodInfo, QueuedPodInfo, Status,
)
from fakekube.scheduler.plugins.helper import LoggedMemo, LoggedTable
from fakekube.scheduler.queue import SchedulingQueue
from fakekube.scheduler.registry import IN_TREE
from fakekube.scheduler.runtime import Framework, Handle, PluginFactory
from fakekube.store import Change

Obj = dict[str, Any]

SCHEDULE = "~schedule"
FLUSH = "~flush"
FLUSH_PERIOD_S = 30.0

#: The resources whose changes the scheduler watches, with the event resource each makes.
WATCHED: dict[str, tuple[Resource, str]] = {
    "pods": (PODS, ""),
    "nodes": (NODES, NODE),
    "persistentvolumeclaims": (PERSISTENT_VOLUME_CLAIMS, PVC),
    "persistentvolumes": (PERSISTENT_VOLUMES, PV),
    "storageclasses": (STORAGE_CLASSES, STORAGE_CLASS),
}

#: Upstream's minFeasibleNodesToFind and minFeasibleNodesPercentageToFind.
MIN_FEASIBLE_NODES_TO_FIND = 100
#: Distinct condition lists (without heartbeat times) the scheduler shares among the nodes it
#: keeps (:meth:`Scheduler._kept`); past it the table starts again (kept nodes keep theirs).
MAX_SHARED_CONDITIONS = 1024
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
NO_NODES_AVAILABLE = "no nodes available to schedule pods"
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"
#: A filter memo learns at most this many changed nodes again at once (more: they are
#: learnt as cycles visit them; the memo is sliced only when it knows every node).
RELEARN_NODES_MAX = 64
_UNKNOWN = object()


class FitError(Exception):
    """No node fits: the message FailedScheduling shows (upstream's FitError.Error())."""

    def __init__(self, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        super().__init__()
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis

    def __str__(self) -> str:
        message = f"0/{self.num_all_nodes} nodes are available:"
        diagnosis = self.diagnosis
        if diagnosis.pre_filter_msg:
            message += f" {diagnosis.pre_filter_msg}."
        else:
            counts: dict[str, int] = {}
            for status in diagnosis.node_statuses.values():
                for reason in status.reasons:
                    counts[reason] = counts.get(reason, 0) + 1
            absent = self.num_all_nodes - len(diagnosis.node_statuses)
            if absent > 0 and diagnosis.absent_status is not None:
                for reason in diagnosis.absent_status.reasons:
                    counts[reason] = counts.get(reason, 0) + absent
            histogram = sorted(f"{count} {reason}" for reason, count in counts.items())
            if histogram:
                message += f" {', '.join(histogram)}."
        if diagnosis.post_filter_msg:
            message += f" {diagnosis.post_filter_msg}"
        return message


class NoNodesAvailable(Exception):
    def __str__(self) -> str:
        return NO_NODES_AVAILABLE


class SchedulingError(Exception):
    """A plugin failed with Code.ERROR: the pod is retried after its back-off."""


class Scheduler:
    """kube-scheduler with its profiles, queue and cache."""

    name = "kube-scheduler"
    resources = tuple(resource for resource, _ in WATCHED.values())
    #: A node heartbeat (only its conditions' heartbeat times moved: engine/routing.py) is not
    #: synced: the cache reads none of what it moved and ``node_update_actions`` ignores it, so
    #: the next sync compares the version before it with the next one and finds what an eager
    #: sync would. Nothing else a node sync does depends on the time it runs (``_arm``'s
    #: timers are already armed by the scheduler's previous reconcile, or fire first).
    keyless_heartbeats = True

    def __init__(self, config: SchedulerConfig = SchedulerConfig(),
                 registry: Mapping[str, PluginFactory] = IN_TREE) -> None:
        self.config = config
        self.cache = Cache()
        self.snapshot = Snapshot(self.cache)
        self.frameworks: dict[str, Framework] = {}
        for profile in config.profiles:
            self.frameworks[profile.scheduler_name] = Framework(profile, Handle(self.snapshot, config, profile),
                                                                registry)
        first = self.frameworks[config.profiles[0].scheduler_name]
        self.queue = SchedulingQueue(config, first.sort_key, self._pre_enqueue, self._hints())
        self._seen: dict[str, Obj] = {}
        #: Node conditions without heartbeat times, one list per distinct content (see _kept).
        self._shared_conditions: dict[tuple[Any, ...], list[Obj]] = {}
        self._next_start = 0
        self._origin: datetime | None = None
        #: Filter-chain verdicts per (profile, pod signature) and node (see LoggedMemo).
        self._verdicts = LoggedMemo()
        #: The node list ``_rotation`` last indexed, twice over, and each node's index.
        self._rotation_of: list[NodeInfo] | None = None
        self._doubled: list[NodeInfo] = []
        self._positions: dict[str, int] = {}

    def _hints(self) -> dict[str, list[EventHint]]:
        hints: dict[str, list[EventHint]] = {}
        for framework in self.frameworks.values():
            for plugin, registrations in framework.events_to_register().items():
                hints.setdefault(plugin, []).extend(registrations)
        return hints

    def _pre_enqueue(self, info: PodInfo) -> Status | None:
        framework = self.frameworks.get(scheduler_name(info.pod))
        return framework.run_pre_enqueue(info) if framework is not None else None

    # -- the controller ------------------------------------------------------------------
    def keys_for(self, change: Change) -> Iterable[str]:
        return (f"{change.resource}/{change.namespace}/{change.name}",)

    def reconcile(self, key: str, ctx: Context) -> None:
        for framework in self.frameworks.values():
            framework.handle.use(ctx)
        now_s = self._seconds(ctx.now)
        if key == SCHEDULE:
            while self._schedule_one(ctx, now_s):
                pass
        elif key == FLUSH:
            self.queue.flush_leftover(now_s)
        else:
            self._sync(key, ctx, now_s)
        self._arm(ctx, now_s)

    def _seconds(self, moment: datetime) -> float:
        """Cluster time as seconds since the scheduler's first reconcile (small floats stay exact)."""
        if self._origin is None:
            self._origin = moment
        return (moment - self._origin).total_seconds()

    def _arm(self, ctx: Context, now_s: float) -> None:
        self.queue.flush_backoff(now_s)
        if self.queue.has_active():
            ctx.enqueue(SCHEDULE)
        expiry_s = self.queue.next_backoff_expiry_s()
        if expiry_s is not None:
            ctx.enqueue_at(SCHEDULE, self._moment(expiry_s))
        oldest_s = self.queue.oldest_unschedulable_s()
        if oldest_s is not None:
            ctx.enqueue_at(FLUSH, self._moment(flush_tick_s(oldest_s, self.config.pod_max_in_unschedulable_s)))

    def _moment(self, seconds: float) -> datetime:
        """The instant ``seconds`` after the origin, rounded up to a whole microsecond (so a
        timer never fires a hair before what it waits for)."""
        assert self._origin is not None
        return self._origin + timedelta(microseconds=math.ceil(seconds * 1e6 - 1e-3))

    # -- keeping up with the cluster -------------------------------------------------------
    def _sync(self, key: str, ctx: Context, now_s: float) -> None:
        resource_name, namespace, name = key.split("/", 2)
        resource, event_resource = WATCHED[resource_name]
        obj = ctx.get(resource, name, namespace)
        old = self._seen.get(key)
        if resource == PODS:
            if obj is None:
                self._seen.pop(key, None)
            else:
                self._seen[key] = obj
            self._sync_pod(f"{namespace}/{name}", old, obj, now_s)
            return
        if obj is None:
            self._seen.pop(key, None)
        else:
            self._seen[key] = self._kept(obj) if resource == NODES else obj
        if resource == NODES:
            self._sync_node(name, old, obj, now_s)
        elif old is not obj:
            action = Action.ADD if old is None else Action.DELETE if obj is None else Action.UPDATE
            self.queue.on_event(ClusterEvent(event_resource, action), old, obj, now_s)

    def _sync_node(self, name: str, old: Obj | None, node: Obj | None, now_s: float) -> None:
        if node is None:
            if old is not None:
                self.cache.remove_node(name)
                self.queue.on_event(ClusterEvent(NODE, Action.DELETE), old, None, now_s)
            return
        if old is None or name not in self.cache.nodes:
            self.cache.set_node(node)
            self.queue.on_event(ClusterEvent(NODE, Action.ADD), None, node, now_s)
            return
        if old.get("metadata") is node.get("metadata"):  # the version synced last (a write stamps new metadata)
            return
        self.cache.set_node(node)
        actions = node_update_actions(old, node)
        if actions:
            self.queue.on_event(ClusterEvent(NODE, actions), old, node, now_s)

    def _kept(self, node: Obj) -> Obj:
        """What the scheduler keeps of a node it synced — to compare the next version with,
        and the queueing hints' ``old`` — : the node without its conditions' heartbeat times,
        the conditions list shared by every node reporting the same ones. Heartbeats are not
        synced (``keyless_heartbeats``), so the version kept is older than the stored one by
        its status reports; without the heartbeat times, what it holds apart from the store
        is two small dicts and that version's metadata, not a node's worth (nothing the
        scheduler reads differs: ``node_update_actions`` and every hint ignore those times)."""
        status = node.get("status")
        if not isinstance(status, dict) or not status.get("conditions") or not isinstance(status["conditions"], list):
            return node
        conditions = status["conditions"]
        try:
            content = tuple(tuple(item for item in c.items() if item[0] != "lastHeartbeatTime") for c in conditions)
            shared = self._shared_conditions.get(content)
        except (AttributeError, TypeError):  # a condition that is not a dict, or an unhashable value
            return node
        if shared is None:
            if len(self._shared_conditions) >= MAX_SHARED_CONDITIONS:
                self._shared_conditions.clear()
            shared = self._shared_conditions[content] = [dict(pairs) for pairs in content]
        return dict(node, status=dict(status, conditions=shared))

    def _sync_pod(self, key: str, old: Obj | None, pod: Obj | None, now_s: float) -> None:
        """``key`` is the pod's namespace/name (the queue's and the cache's key)."""
        if pod is not None and is_pod_terminal(pod):
            pod = None  # upstream's pod informer leaves Succeeded and Failed pods out
        if pod is None:
            self.queue.delete(key)
            self.cache.clear_nomination(key)
            gone = self.cache.remove_pod(key)
            if gone is not None:
                self.queue.on_event(ClusterEvent(ASSIGNED_POD, Action.DELETE), gone.pod, None, now_s)
            return
        node_name = (pod.get("spec") or {}).get("nodeName")
        if node_name:
            self._sync_bound_pod(key, node_name, pod, now_s)
            return
        if scheduler_name(pod) not in self.frameworks or (pod.get("metadata") or {}).get("deletionTimestamp"):
            self.queue.delete(key)
            self.cache.clear_nomination(key)
            return
        self._sync_pending_pod(key, old, pod, now_s)

    def _sync_bound_pod(self, key: str, node_name: str, pod: Obj, now_s: float) -> None:
        self.queue.delete(key)
        self.cache.clear_nomination(key)
        cached = self.cache.bound(key)
        if cached is not None and cached.pod is pod:
            return
        if cached is None:
            self.cache.add_pod(node_name, PodInfo(pod))
            self.queue.on_event(ClusterEvent(ASSIGNED_POD, Action.ADD), None, pod, now_s)
            return
        actions = pod_update_actions(cached.pod, pod)
        if actions or _scheduling_view(cached.pod) != _scheduling_view(pod):
            self.cache.add_pod(node_name, PodInfo(pod))
        else:
            self.cache.refresh_pod(cached.with_pod(pod))
        if actions:
            self.queue.on_event(ClusterEvent(ASSIGNED_POD, actions), cached.pod, pod, now_s)

    def _sync_pending_pod(self, key: str, old: Obj | None, pod: Obj, now_s: float) -> None:
        nominated = (pod.get("status") or {}).get("nominatedNodeName") or ""
        queued = self.queue.get(key)
        if queued is None:
            info = PodInfo(pod)
            self.queue.add(info, now_s)
        elif old is None or _scheduling_view(old) != _scheduling_view(pod):
            info = PodInfo(pod)
            self.queue.update(info, now_s)
        else:
            info = queued.info = queued.info.with_pod(pod)
            self.cache.refresh_nominated(info)
        if nominated != self.cache.nominated_node(key):
            self.cache.nominate(info, nominated)

    # -- one scheduling cycle ---------------------------------------------------------------
    def _schedule_one(self, ctx: Context, now_s: float) -> bool:
        """One pod's cycle (upstream's scheduleOne); False when activeQ is empty."""
        queued = self.queue.pop(now_s)
        if queued is None:
            return False
        info = queued.info
        pod = ctx.get(PODS, info.name, info.namespace)
        if pod is None or (pod.get("spec") or {}).get("nodeName") or (pod.get("metadata") or {}).get(
                "deletionTimestamp") or (pod.get("metadata") or {}).get("uid") != info.uid:
            return True  # skipPodSchedule: gone, bound by someone else, or being deleted
        if pod is not info.pod:
            info = queued.info = PodInfo(pod)
        framework = self.frameworks[scheduler_name(pod)]
        state = CycleState()
        try:
            node_name = self._schedule_pod(framework, state, info, ctx)
        except FitError as fit:
            nominated = self._post_filter(framework, state, info, fit)
            self._fail(ctx, framework, queued, str(fit), True, fit.diagnosis.unschedulable_plugins, nominated, now_s)
            return True
        except NoNodesAvailable as none:
            self._fail(ctx, framework, queued, str(none), True, set(), None, now_s)
            return True
        except SchedulingError as failure:
            self._fail(ctx, framework, queued, str(failure), False, set(), None, now_s)
            return True
        self._bind(ctx, framework, state, queued, node_name, now_s)
        return True

    def _schedule_pod(self, framework: Framework, state: CycleState, info: PodInfo, ctx: Context) -> str:
        nodes = self.snapshot.node_infos()
        if not nodes:
            raise NoNodesAvailable()
        feasible = self._find_nodes_that_fit(framework, state, info, nodes)
        if len(feasible) == 1:
            return feasible[0].name
        status = framework.run_pre_score(state, info, feasible)
        if status is not None:
            raise SchedulingError(f"running PreScore plugin {status.plugin!r}: {status.message}")
        totals = framework.run_score(state, info, feasible)
        return select_host(feasible, totals, ctx)

    def _find_nodes_that_fit(self, framework: Framework, state: CycleState, info: PodInfo,
                             nodes: list[NodeInfo]) -> list[NodeInfo]:
        diagnosis = Diagnosis()
        names, status = framework.run_pre_filter(state, info)
        if status is not None:
            if status.code == Code.ERROR:
                raise SchedulingError(f"running PreFilter plugin {status.plugin!r}: {status.message}")
            diagnosis.pre_filter_msg = status.message
            diagnosis.unschedulable_plugins.add(status.plugin)
            diagnosis.node_statuses = {node.name: status for node in nodes}
            raise FitError(len(nodes), diagnosis)
        nominated = self._nominated_fit(framework, state, info)
        if nominated is not None:
            return [nominated]
        candidates = nodes if names is None else [node for node in nodes if node.name in names]
        if names is not None and len(candidates) < len(nodes):
            diagnosis.absent_status = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (
                "node(s) didn't satisfy plugin(s) [" + " ".join(state.node_name_plugins) + "]",))
        feasible = self._filter(framework, state, info, candidates, diagnosis)
        if not feasible:
            raise FitError(len(nodes), diagnosis)
        return feasible

    def _nominated_fit(self, framework: Framework, state: CycleState, info: PodInfo) -> NodeInfo | None:
        """Upstream evaluates a pod's nominated node first: if it fits, that is the node."""
        nominated = (info.pod.get("status") or {}).get("nominatedNodeName") or ""
        node = self.snapshot.get(nominated) if nominated else None
        if node is None:
            return None
        return node if framework.run_filters_with_nominated(state, info, node) is None else None

    def _filter(self, framework: Framework, state: CycleState, info: PodInfo, candidates: list[NodeInfo],
                diagnosis: Diagnosis) -> list[NodeInfo]:
        """Filter from the rotating start until enough nodes fit (the hot loop of a cycle).

        When the filter chain's verdicts for this pod's signature are known for every node
        (see ``_filter_memo``), the nodes that fit are the runs between the rejected ones:
        sliced, not visited one by one — the same nodes, statuses and next start."""
        count = len(candidates)
        if count == 0:
            return []
        to_find = self._num_feasible_nodes_to_find(framework, count)
        filters = framework.filters_for(state)
        memo = self._filter_memo(framework, state, info, filters)
        nominated_anywhere = self.cache.has_nominations()
        start = self._next_start % count
        if (memo is not None and not nominated_anywhere and len(memo.values) == count
                and candidates is self.snapshot.node_infos()):
            feasible, processed = self._slice_known(memo, candidates, start, to_find, diagnosis)
        else:
            feasible, processed = self._visit(framework, state, info, candidates, start, to_find, filters, memo,
                                              nominated_anywhere, diagnosis)
        self._next_start = (start + processed) % count
        return feasible

    def _visit(self, framework: Framework, state: CycleState, info: PodInfo, candidates: list[NodeInfo], start: int,
               to_find: int, filters: list[Any], memo: LoggedTable | None, nominated_anywhere: bool,
               diagnosis: Diagnosis) -> tuple[list[NodeInfo], int]:
        """Each node in turn from ``start``: the feasible ones and how many were visited."""
        feasible: list[NodeInfo] = []
        processed = 0
        known = memo.values if memo is not None else None
        for node in (candidates[start:] + candidates[:start]) if start else candidates:
            processed += 1
            if nominated_anywhere and self.snapshot.nominated_pods(node.name, info):
                status = framework.run_filters_with_nominated(state, info, node)
            elif known is not None and (status := known.get(node.name, _UNKNOWN)) is not _UNKNOWN:
                pass
            else:
                status = _run_chain(filters, state, info, node)
                if memo is not None:
                    memo.put(node.name, status)
            if status is None:
                feasible.append(node)
                if len(feasible) >= to_find:
                    break
                continue
            if status.code == Code.ERROR:
                raise SchedulingError(f"running Filter plugin {status.plugin!r}: {status.message}")
            diagnosis.node_statuses[node.name] = status
            diagnosis.unschedulable_plugins.add(status.plugin)
        return feasible, processed

    def _slice_known(self, memo: LoggedTable, nodes: list[NodeInfo], start: int, to_find: int,
                     diagnosis: Diagnosis) -> tuple[list[NodeInfo], int]:
        """``_visit`` for a memo that knows every node: the rejected nodes' offsets from
        ``start``, sorted, split the rotated node list into runs that fit; the runs are
        sliced until ``to_find`` nodes fit, and each rejection passed is recorded as
        ``_visit`` records it."""
        count = len(nodes)
        doubled, positions = self._rotation(nodes)
        blocked = memo.blocked
        if not blocked:
            return doubled[start:start + to_find], to_find
        feasible: list[NodeInfo] = []
        done = 0  # offset of the first node not yet passed
        for offset in sorted((positions[name] - start) % count for name in blocked):
            need = to_find - len(feasible)
            if offset - done >= need:
                feasible += doubled[start + done:start + done + need]
                return feasible, done + need
            feasible += doubled[start + done:start + offset]
            name = doubled[start + offset].name
            status = blocked[name]
            if status.code == Code.ERROR:
                raise SchedulingError(f"running Filter plugin {status.plugin!r}: {status.message}")
            diagnosis.node_statuses[name] = status
            diagnosis.unschedulable_plugins.add(status.plugin)
            done = offset + 1
        take = min(to_find - len(feasible), count - done)
        feasible += doubled[start + done:start + done + take]
        return feasible, done + take

    def _rotation(self, nodes: list[NodeInfo]) -> tuple[list[NodeInfo], dict[str, int]]:
        """The node list twice over (so a rotated run is one slice) and each node's index,
        kept while the cache's node list is the same list."""
        if self._rotation_of is not nodes:
            self._rotation_of = nodes
            self._doubled = nodes + nodes
            self._positions = {node.name: index for index, node in enumerate(nodes)}
        return self._doubled, self._positions

    def _filter_memo(self, framework: Framework, state: CycleState, info: PodInfo,
                     filters: list[Any]) -> LoggedTable | None:
        """The remembered verdicts of this cycle's whole filter chain per node (see
        LoggedMemo), when every active Filter says what of the pod it depends on
        (``filter_signature``); None when one does not (e.g. inter-pod affinity). The few
        nodes that changed since the table's last use are learnt again at once (in a
        burst, the node the last pod landed on), so once cycles have visited every node
        the table keeps knowing every node."""
        signature = framework.filter_chain_signature(state, info)
        if signature is None:
            return None
        memo, dropped = self._verdicts.table((framework.name, signature), self.snapshot.changes)
        if dropped and len(dropped) <= RELEARN_NODES_MAX:
            for name in dropped:
                node = self.snapshot.get(name)
                if node is not None:
                    memo.put(name, _run_chain(filters, state, info, node))
        return memo

    def _num_feasible_nodes_to_find(self, framework: Framework, num_all_nodes: int) -> int:
        """numFeasibleNodesToFind: every node below 100; else percentageOfNodesToScore
        (adaptive when 0: 50 % minus 1 % per 125 nodes, at least 5 %), at least 100."""
        if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
            return num_all_nodes
        percentage = framework.profile.percentage_of_nodes_to_score
        if percentage is None:
            percentage = self.config.percentage_of_nodes_to_score
        if percentage == 0:
            percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
        return max(num_all_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)

    def _post_filter(self, framework: Framework, state: CycleState, info: PodInfo, fit: FitError) -> str | None:
        if not framework.post_filter:
            return None
        nominated, status = framework.run_post_filter(state, info, fit.diagnosis.node_statuses)
        if status is not None:
            fit.diagnosis.post_filter_msg = status.message
        return nominated

    # -- outcomes ------------------------------------------------------------------------------
    def _bind(self, ctx: Context, framework: Framework, state: CycleState, queued: QueuedPodInfo, node_name: str,
              now_s: float) -> None:
        info = queued.info
        status = framework.run_reserve(state, info, node_name)
        if status is None:
            status = framework.run_permit(state, info, node_name) or framework.run_pre_bind(state, info, node_name)
        try:
            if status is None:
                status = framework.run_bind(state, info, node_name)
        except ApiError as refused:
            status = Status(Code.ERROR, (f'running Bind plugin "DefaultBinder": {refused.message}',), "DefaultBinder")
        if status is not None:
            framework.run_unreserve(state, info, node_name)
            pending = frozenset({status.plugin}) if status.code == Code.PENDING else frozenset()
            self._fail(ctx, framework, queued, status.message, status.is_rejected(), {status.plugin}, None, now_s,
                       pending)
            return
        bound = ctx.get(PODS, info.name, info.namespace)
        if bound is not None:
            self.cache.add_pod(node_name, info.for_pod(bound))
            self._seen[f"pods/{info.key}"] = bound
        self.cache.clear_nomination(info.key)
        ctx.record_eventf(info.pod, "Pod", "Normal", "Scheduled", "Binding",
                          f"Successfully assigned {info.namespace}/{info.name} to {node_name}", framework.name)
        framework.run_post_bind(state, info, node_name)

    def _fail(self, ctx: Context, framework: Framework, queued: QueuedPodInfo, message: str, rejected: bool,
              plugins: set[str], nominated: str | None, now_s: float, pending: frozenset[str] = frozenset()) -> None:
        """handleSchedulingFailure: the event, the PodScheduled=False condition (and the
        nominated node), and the pod back in the queue."""
        info = queued.info
        if rejected:
            self.queue.requeue_unschedulable(queued, plugins, now_s, pending)
        else:
            self.queue.requeue_error(queued, now_s)
        if nominated:
            self.cache.nominate(info, nominated)
        elif nominated == "":
            self.cache.clear_nomination(info.key)
        ctx.record_eventf(info.pod, "Pod", "Warning", "FailedScheduling", "Scheduling", message, framework.name)
        reason = REASON_UNSCHEDULABLE if rejected else REASON_SCHEDULER_ERROR
        self._update_pod_status(ctx, info, reason, message, nominated)

    def _update_pod_status(self, ctx: Context, info: PodInfo, reason: str, message: str,
                           nominated: str | None) -> None:
        pod = ctx.get(PODS, info.name, info.namespace)
        if pod is None or (pod.get("spec") or {}).get("nodeName"):
            return
        status = dict(pod.get("status") or {})
        conditions = list(status.get("conditions") or [])
        old = next((c for c in conditions if c.get("type") == "PodScheduled"), None)
        condition = {"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                     "lastTransitionTime": ctx.client.api.now_rfc3339(), "reason": reason, "message": message}
        changed = old is None or any(old.get(k) != condition[k] for k in ("status", "reason", "message"))
        if old is not None and old.get("status") == "False":
            condition["lastTransitionTime"] = old.get("lastTransitionTime")
        nominate = nominated is not None and (status.get("nominatedNodeName") or "") != nominated
        if not changed and not nominate:
            return
        status["conditions"] = [condition if c is old else c for c in conditions] if old else conditions + [condition]
        if nominated:
            status["nominatedNodeName"] = nominated
        elif nominated == "":
            status.pop("nominatedNodeName", None)
        try:
            ctx.client.update_status(PODS, {"metadata": dict(pod["metadata"]), "status": status})
        except ApiError:
            pass  # the pod changed or went away: its own change brings it back


def _run_chain(filters: list[Any], state: CycleState, info: PodInfo, node: NodeInfo) -> Status | None:
    """The first rejection of ``filters`` on ``node`` (later ones do not run), or None."""
    for plugin_filter in filters:
        status = plugin_filter(state, info, node)
        if status is not None:
            return status
    return None


def flush_tick_s(queued_s: float, max_wait_s: float) -> float:
    """The first tick of upstream's 30-second flush loop (from the scheduler's start) at
    which a pod unschedulable since ``queued_s`` has waited more than ``max_wait_s``: only
    then is a timer armed, so an idle scheduler never wakes the clock."""
    return (math.floor((queued_s + max_wait_s) / FLUSH_PERIOD_S) + 1) * FLUSH_PERIOD_S


def select_host(nodes: list[NodeInfo], totals: list[int], ctx: Context) -> str:
    """The highest total; among equal totals one drawn uniformly from the seeded stream
    (upstream's selectHost samples the ties the same way, one reservoir draw per tie; one
    draw over the tied nodes in evaluation order gives the same distribution)."""
    best = max(totals)
    ties = totals.count(best)
    if ties == 1:
        return nodes[totals.index(best)].name
    tied = list(compress(range(len(totals)), map(best.__eq__, totals)))
    return nodes[tied[ctx.rng.randrange(0, ties)]].name


def scheduler_name(pod: Obj) -> str:
    return (pod.get("spec") or {}).get("schedulerName") or "default-scheduler"


def _scheduling_view(pod: Obj) -> tuple[Any, ...]:
    """What a pending pod's scheduling depends on: its spec and labels/annotations (an
    update of its status alone — our own FailedScheduling condition — changes nothing)."""
    meta = pod.get("metadata") or {}
    return (pod.get("spec"), meta.get("labels"), meta.get("annotations"), meta.get("deletionTimestamp"))


def pod_update_actions(old: Obj, new: Obj) -> Action:
    """The scheduling-relevant parts of a pod update (upstream's PodSchedulingPropertiesChange)."""
    actions = Action(0)
    if (old.get("metadata") or {}).get("labels") != (new.get("metadata") or {}).get("labels"):
        actions |= Action.UPDATE_POD_LABEL
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    if old_spec.get("tolerations") != new_spec.get("tolerations"):
        actions |= Action.UPDATE_POD_TOLERATIONS
    if old_spec.get("schedulingGates") and not new_spec.get("schedulingGates"):
        actions |= Action.UPDATE_POD_SCHEDULING_GATES_ELIMINATED
    if old_spec.get("containers") != new_spec.get("containers") and _requests_decreased(old, new):
        actions |= Action.UPDATE_POD_SCALE_DOWN
    return actions


def _requests_decreased(old: Obj, new: Obj) -> bool:
    before, after = PodInfo(old).requests, PodInfo(new).requests
    return (after.milli_cpu < before.milli_cpu or after.memory < before.memory
            or after.ephemeral_storage < before.ephemeral_storage)


def node_update_actions(old: Obj, new: Obj) -> Action:
    """nodeSchedulingPropertiesChange: which parts of a node that scheduling reads changed
    (heartbeat times alone change nothing)."""
    actions = Action(0)
    old_meta, new_meta = old.get("metadata") or {}, new.get("metadata") or {}
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    old_status, new_status = old.get("status") or {}, new.get("status") or {}
    if old_spec.get("unschedulable") != new_spec.get("unschedulable") or old_spec.get("taints") != new_spec.get("taints"):
        actions |= Action.UPDATE_NODE_TAINT
    if old_status.get("allocatable") != new_status.get("allocatable"):
        actions |= Action.UPDATE_NODE_ALLOCATABLE
    if old_meta.get("labels") != new_meta.get("labels"):
        actions |= Action.UPDATE_NODE_LABEL
    if old_meta.get("annotations") != new_meta.get("annotations"):
        actions |= Action.UPDATE_NODE_ANNOTATION
    if _conditions(old_status) != _conditions(new_status):
        actions |= Action.UPDATE_NODE_CONDITION
    return actions


def _conditions(status: Mapping[str, Any]) -> list[tuple[Any, Any, Any, Any]]:
    return [(c.get("type"), c.get("status"), c.get("reason"), c.get("message")) for c in status.get("conditions") or []]
