"""The scheduling queue (upstream's ``internal/queue``): activeQ, backoffQ, unschedulable pods.

* **activeQ** pops the pod with the smallest QueueSort key (PrioritySort: highest
  priority, then the earliest queued);
* **backoffQ** holds pods that failed until their back-off ends: 1 s doubling per
  attempt up to 10 s (``podInitialBackoffSeconds``/``podMaxBackoffSeconds``), measured
  from the failed attempt, on cluster time;
* **unschedulable** pods wait for a cluster event that one of the plugins that rejected
  them registered and whose queueing hint says Queue (a node added, a pod deleted, a
  taint removed…), then go to backoffQ (still backing off) or activeQ; pods left there
  longer than ``podMaxInUnschedulablePodsDuration`` (5 min) are flushed back by a pass
  every 30 s, as upstream's ``flushUnschedulablePodsLeftover``;
* **gated** pods (a PreEnqueue plugin refused them: scheduling gates) wait for an update
  of the pod itself.

Simplified: a backed-off pod moves to activeQ at its exact expiry (upstream polls every
second); pods rejected by an error go to backoffQ. Bounded by the number of pending pods
(one entry per pod; heaps drop stale entries lazily and are rebuilt when mostly stale).
"""

from __future__ import annotations

import heapq
from collections import OrderedDict
from typing import Any, Callable, Iterator, Mapping

from fakekube.scheduler.config import SchedulerConfig
from fakekube.scheduler.framework import (
    Action, ClusterEvent, EventHint, Hint, PodInfo, QueuedPodInfo, Status, WILDCARD,
)

Obj = dict[str, Any]

ACTIVE = "activeQ"
BACKOFF = "backoffQ"
UNSCHEDULABLE = "unschedulablePods"
GATED = "gated"

#: How often unschedulable pods are checked for podMaxInUnschedulablePodsDuration.
FLUSH_PERIOD_S = 30.0

AFTER_BACKOFF = "after back-off"
IMMEDIATELY = "immediately"

#: Times are float seconds; timers fire at whole microseconds: this much earlier counts as due.
TIME_EPSILON_S = 1e-7

#: Plugin name under which pods that failed with no rejecting plugin (an error) wait:
#: any event moves them.
ANY_PLUGIN = ""


class SchedulingQueue:
    """Pending pods by state; every operation takes ``now_s`` (cluster time in seconds)."""

    def __init__(self, config: SchedulerConfig, sort_key: Callable[[QueuedPodInfo], tuple[Any, ...]],
                 pre_enqueue: Callable[[PodInfo], Status | None],
                 hints: Mapping[str, list[EventHint]]) -> None:
        self.config = config
        self._sort_key = sort_key
        self._pre_enqueue = pre_enqueue
        self._hints = hints
        self._pods: dict[str, QueuedPodInfo] = {}
        self._where: dict[str, str] = {}
        self._active: list[tuple[tuple[Any, ...], int, str]] = []
        self._backoff: list[tuple[float, int, str]] = []
        self._unschedulable: OrderedDict[str, None] = OrderedDict()
        self._by_plugin: dict[str, OrderedDict[str, None]] = {}
        self._seq = 0

    # -- what is where -------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._pods)

    def __contains__(self, key: str) -> bool:
        return key in self._pods

    def where(self, key: str) -> str | None:
        return self._where.get(key)

    def get(self, key: str) -> QueuedPodInfo | None:
        return self._pods.get(key)

    def has_active(self) -> bool:
        self._drop_stale(self._active, ACTIVE)
        return bool(self._active)

    def pending(self) -> Iterator[tuple[str, str]]:
        """(pod key, queue) for every pending pod, in the order they were queued."""
        for key, queued in sorted(self._pods.items(), key=lambda item: item[1].seq):
            yield key, self._where[key]

    def oldest_unschedulable_s(self) -> float | None:
        """When the longest-waiting unschedulable pod was last tried (None: there is none)."""
        for key in self._unschedulable:  # in the order they were put there: oldest first
            return self._pods[key].timestamp_s
        return None

    def next_backoff_expiry_s(self) -> float | None:
        self._drop_stale(self._backoff, BACKOFF)
        return self._backoff[0][0] if self._backoff else None

    # -- pods coming and going ---------------------------------------------------------
    def add(self, info: PodInfo, now_s: float) -> None:
        """A new pending pod (or one whose PreEnqueue gate may have opened)."""
        queued = QueuedPodInfo(info, now_s, self._next_seq())
        self._pods[info.key] = queued
        self._enqueue_active_or_gated(queued, now_s)

    def update(self, info: PodInfo, now_s: float) -> None:
        """A pending pod changed. A gated or unschedulable pod is tried again (its update
        may be what it waited for); elsewhere it keeps its place with the new spec."""
        queued = self._pods.get(info.key)
        if queued is None:
            self.add(info, now_s)
            return
        queued.info = info
        where = self._where[info.key]
        if where in (GATED, UNSCHEDULABLE):
            self._leave(info.key)
            self._move(queued, now_s)
        elif where == ACTIVE:
            self._push_active(queued)  # its sort key may have changed (priority)

    def delete(self, key: str) -> None:
        if key in self._pods:
            self._leave(key)
            del self._pods[key]
            del self._where[key]

    def pop(self, now_s: float) -> QueuedPodInfo | None:
        """The next pod to schedule (after moving every finished back-off to activeQ)."""
        self.flush_backoff(now_s)
        while self._active:
            _, seq, key = heapq.heappop(self._active)
            queued = self._pods.get(key)
            if queued is not None and self._where[key] == ACTIVE and queued.seq == seq:
                del self._pods[key]
                del self._where[key]
                queued.attempts += 1
                if queued.initial_attempt_s is None:
                    queued.initial_attempt_s = now_s
                return queued
        return None

    # -- after an attempt ------------------------------------------------------------------
    def requeue_unschedulable(self, queued: QueuedPodInfo, plugins: set[str], now_s: float,
                              pending: frozenset[str] = frozenset()) -> None:
        """The pod fit nowhere (or a plugin in ``pending`` is waiting for something): wait
        for an event one of them registered. An event for a *pending* plugin sends the pod
        straight to activeQ, skipping its back-off (upstream's queueImmediately)."""
        queued.timestamp_s = now_s
        queued.unschedulable_plugins = frozenset(plugins) | pending
        queued.pending_plugins = pending
        queued.backoff_expiry_s = now_s + self._backoff_s(queued.attempts)
        queued.seq = self._next_seq()
        self._pods[queued.info.key] = queued
        self._where[queued.info.key] = UNSCHEDULABLE
        self._unschedulable[queued.info.key] = None
        for plugin in sorted(plugins) or [ANY_PLUGIN]:
            self._by_plugin.setdefault(plugin, OrderedDict())[queued.info.key] = None

    def requeue_error(self, queued: QueuedPodInfo, now_s: float) -> None:
        """The attempt failed with an error: retry after the back-off."""
        queued.timestamp_s = now_s
        queued.consecutive_errors += 1
        queued.backoff_expiry_s = now_s + self._backoff_s(queued.attempts)
        queued.seq = self._next_seq()
        self._pods[queued.info.key] = queued
        self._push_backoff(queued)

    def _backoff_s(self, attempts: int) -> float:
        duration = self.config.pod_initial_backoff_s
        for _ in range(1, max(1, attempts)):
            duration *= 2
            if duration >= self.config.pod_max_backoff_s:
                return self.config.pod_max_backoff_s
        return min(duration, self.config.pod_max_backoff_s)

    # -- moving pods back ------------------------------------------------------------------
    def flush_backoff(self, now_s: float) -> None:
        while self._backoff and self._backoff[0][0] <= now_s + TIME_EPSILON_S:
            _, seq, key = heapq.heappop(self._backoff)
            queued = self._pods.get(key)
            if queued is not None and self._where[key] == BACKOFF and queued.seq == seq:
                self._push_active(queued)

    def flush_leftover(self, now_s: float) -> None:
        """Unschedulable pods waiting longer than podMaxInUnschedulablePodsDuration go back."""
        limit = self.config.pod_max_in_unschedulable_s
        stale = [key for key in self._unschedulable if now_s - self._pods[key].timestamp_s > limit - TIME_EPSILON_S]
        for key in stale:
            self._leave(key)
            self._move(self._pods[key], now_s)

    def on_event(self, event: ClusterEvent, old: Obj | None, new: Obj | None, now_s: float) -> int:
        """Move the unschedulable pods this event may help (by their rejecting plugins'
        registrations and hints); returns how many moved."""
        candidates: dict[str, None] = {}
        for plugin, registrations in self._hints.items():
            waiting = self._by_plugin.get(plugin)
            if waiting and any(_matches(r.event, event) for r in registrations):
                candidates.update(waiting)
        candidates.update(self._by_plugin.get(ANY_PLUGIN) or {})
        moved = 0
        for key in sorted(candidates, key=lambda k: self._pods[k].seq):
            queued = self._pods[key]
            verdict = self._worth_retrying(queued, event, old, new)
            if verdict is not None:
                self._leave(key)
                if verdict == IMMEDIATELY:
                    queued.backoff_expiry_s = now_s
                self._move(queued, now_s)
                moved += 1
        return moved

    def _worth_retrying(self, queued: QueuedPodInfo, event: ClusterEvent, old: Obj | None,
                        new: Obj | None) -> str | None:
        """None (stay), AFTER_BACKOFF or IMMEDIATELY (a pending plugin's event)."""
        if not queued.unschedulable_plugins:
            return AFTER_BACKOFF
        for plugin in sorted(queued.unschedulable_plugins):
            for registration in self._hints.get(plugin, ()):
                if not _matches(registration.event, event):
                    continue
                if registration.hint is None or registration.hint(queued.info.pod, old, new) == Hint.QUEUE:
                    return IMMEDIATELY if plugin in queued.pending_plugins else AFTER_BACKOFF
        return None

    # -- internals -------------------------------------------------------------------------
    def _move(self, queued: QueuedPodInfo, now_s: float) -> None:
        """Back to activeQ, or backoffQ while its back-off lasts (gates re-checked)."""
        if queued.backoff_expiry_s > now_s:
            self._push_backoff(queued)
        else:
            self._enqueue_active_or_gated(queued, now_s)

    def _enqueue_active_or_gated(self, queued: QueuedPodInfo, now_s: float) -> None:
        status = self._pre_enqueue(queued.info)
        key = queued.info.key
        if status is not None:
            queued.gated_by = status.plugin
            self._where[key] = GATED
            return
        queued.gated_by = ""
        self._push_active(queued)

    def _push_active(self, queued: QueuedPodInfo) -> None:
        queued.seq = self._next_seq()
        self._where[queued.info.key] = ACTIVE
        heapq.heappush(self._active, (self._sort_key(queued), queued.seq, queued.info.key))
        self._compact(self._active, ACTIVE)

    def _push_backoff(self, queued: QueuedPodInfo) -> None:
        queued.seq = self._next_seq()
        self._where[queued.info.key] = BACKOFF
        heapq.heappush(self._backoff, (queued.backoff_expiry_s, queued.seq, queued.info.key))
        self._compact(self._backoff, BACKOFF)

    def _leave(self, key: str) -> None:
        """Take ``key`` out of the unschedulable indexes (heap entries go stale by seq)."""
        if key in self._unschedulable:
            del self._unschedulable[key]
            for plugin in sorted(self._pods[key].unschedulable_plugins) or [ANY_PLUGIN]:
                waiting = self._by_plugin.get(plugin)
                if waiting is not None:
                    waiting.pop(key, None)
                    if not waiting:
                        del self._by_plugin[plugin]

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _is_live(self, entry: tuple[Any, int, str], where: str) -> bool:
        queued = self._pods.get(entry[2])
        return queued is not None and self._where.get(entry[2]) == where and queued.seq == entry[1]

    def _drop_stale(self, heap: list[Any], where: str) -> None:
        while heap and not self._is_live(heap[0], where):
            heapq.heappop(heap)

    def _compact(self, heap: list[Any], where: str) -> None:
        """Rebuild a heap that is mostly stale entries (keeps it bounded by live pods)."""
        if len(heap) > 64 and len(heap) > 2 * len(self._pods):
            heap[:] = [entry for entry in heap if self._is_live(entry, where)]
            heapq.heapify(heap)


def _matches(registered: ClusterEvent, event: ClusterEvent) -> bool:
    """upstream's ClusterEvent.Match: same resource (or a wildcard) and a shared action."""
    if registered.resource not in (event.resource, WILDCARD):
        return False
    return bool(registered.action & event.action)


__all__ = ["SchedulingQueue", "Action", "ClusterEvent", "ACTIVE", "BACKOFF", "UNSCHEDULABLE", "GATED"]
