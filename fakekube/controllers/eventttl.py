"""Events expire ``--event-ttl`` after their last write, as kube-apiserver's etcd leases make them.

Upstream, the Event storage (core/v1 and events.k8s.io/v1 Events share it,
``pkg/registry/core/event/storage``) gives every create *and every update* an etcd lease
of ``--event-ttl`` (1 h by default; its ``TTLFunc`` answers the same TTL for updates, so
an update renews the lease). When the lease runs out etcd deletes the key: no admission,
finalizer or grace period takes part, and watchers see the Event DELETED. A TTL under a
second (0 included) attaches no lease: Events then live until deleted.

Here, an apiserver-side controller (registered with apiextensions-apiserver's, whatever
the ``controllers`` list says) keeps the leases as one queue in deadline order. The TTL is
the same for every write and cluster time never goes back, so an Event written later
always expires later: the queue is kept in write order, and

* a write (create, update, patch; by the engine's recorders or by any client) reconciles
  the Event's key at the instant of the write, which moves it to the queue's end with
  the version now stored and the deadline now + TTL (a deleted Event leaves the queue);
* one timer, for the deadline at the queue's head, pops every Event due and removes it as
  etcd removes an expired key (``Client.expire``) — only if it still has the version
  queued: an update at the very instant of expiry renews the Event, never loses it.

Cost: one queue entry per live Event, O(1) per write, no timer per Event and no scan;
expiry order is write order (never hash order). The queue is plain data (a snapshot can
copy it).

Simplification: upstream's lease manager shares a lease among the writes of a window
(min(60 s, 5 % of the TTL)) and grants it TTL plus that window, so an Event lives between
TTL and TTL + 60 s after its last write; here it lives exactly TTL.
"""

from __future__ import annotations

from collections import OrderedDict
from datetime import datetime, timedelta
from typing import Iterable

from fakekube.engine import Context
from fakekube.engine.timers import MAX_DELAY_S
from fakekube.objects.kinds import EVENTS
from fakekube.store import Change

#: kube-apiserver's ``--event-ttl`` default.
DEFAULT_EVENT_TTL_S = 3600.0

NAME = "event-ttl-controller"
#: The work key of the queue's timer (an Event's key is ``namespace/name``, which has a "/").
EXPIRE_KEY = "~expire"


class EventTTLController:
    """Removes each Event ``ttl_s`` seconds of cluster time after its last write."""

    name = NAME

    def __init__(self, ttl_s: float = DEFAULT_EVENT_TTL_S) -> None:
        #: Upstream hands etcd whole seconds: under one second means no lease at all.
        self.ttl = timedelta(seconds=int(ttl_s)) if 1 <= ttl_s <= MAX_DELAY_S else None
        self.resources = (EVENTS,) if self.ttl is not None else ()
        #: ``namespace/name`` → (the resourceVersion leased, its deadline), oldest deadline first.
        self.leases: OrderedDict[str, tuple[str, datetime]] = OrderedDict()
        #: The last deadline handed out: the Events written at one instant share it (a
        #: 5,000-node cluster writes 35,000 at its start) rather than a datetime each.
        self._deadline: datetime | None = None

    def keys_for(self, change: Change) -> Iterable[str]:
        """Every write of an Event, its deletion included."""
        return [f"{change.namespace}/{change.name}"]

    def reconcile(self, key: str, ctx: Context) -> None:
        if key == EXPIRE_KEY:
            self._expire_due(ctx)
        else:
            self._lease(key, ctx)

    def _lease(self, key: str, ctx: Context) -> None:
        """The Event at ``key`` was written now: its lease moves to the end of the queue."""
        self.leases.pop(key, None)
        namespace, name = key.split("/", 1)
        event = ctx.get(EVENTS, name, namespace)
        deadline = _later(ctx.now, self.ttl)
        if event is None or deadline is None:
            return
        if deadline == self._deadline:
            deadline = self._deadline
        self._deadline = deadline
        self.leases[key] = (event["metadata"]["resourceVersion"], deadline)
        self._arm(ctx)

    def _expire_due(self, ctx: Context) -> None:
        """Remove every Event whose lease ran out by now, oldest first; wait for the next one."""
        while self.leases:
            key, (version, deadline) = next(iter(self.leases.items()))
            if deadline > ctx.now:
                break
            del self.leases[key]
            namespace, name = key.split("/", 1)
            ctx.client.expire(EVENTS, name, namespace, resource_version=version)
        self._arm(ctx)

    def _arm(self, ctx: Context) -> None:
        """The timer for the head of the queue (an earlier armed one wins and re-arms when it fires)."""
        if self.leases:
            ctx.enqueue_at(EXPIRE_KEY, next(iter(self.leases.values()))[1])


def _later(now: datetime, ttl: timedelta | None) -> datetime | None:
    """``now + ttl``, or None past the calendar (year 9999): that lease never runs out."""
    if ttl is None:
        return None
    try:
        return now + ttl
    except OverflowError:
        return None
