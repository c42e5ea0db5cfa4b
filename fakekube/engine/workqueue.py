"""A deterministic work queue: first in, first out, each item at most once while queued.

Like client-go's workqueue it is *stingy*: an item added again while it waits keeps its
place instead of queueing twice, so a burst of changes to one object costs one
reconcile. Unlike client-go's it is *ordered*: items come out in the order they were
first added, which is the order of the store changes that caused them — never an order
that depends on hashing or thread timing.

It is bounded by coalescing, not by refusing: an item is a (controller, key) pair, so the
queue never holds more items than there are distinct keys its controllers were told
about — about eight per pod (one per controller that watches pods), however many times
each changed. An add is never refused: refusing would fail the store write that caused
it (a burst of 125,000 pod creates before a settle did, at the old 1,000,000-item bound)
or lose the work. Past ``limit`` waiting items — distinct keys that cannot coalesce,
e.g. a burst of many objects nobody settles between — ``on_over_limit`` is told once
(the engine logs it), and told again only after the queue has drained below half the
limit; the items stay queued and run in order.

Each waiting item also carries the :class:`Ticket` of every client write whose
consequences it is part of (see :mod:`fakekube.engine.tickets`): the count of items a
ticket is waiting on is kept here, under the queue's own lock, so that a write's
consequences are never counted done while one of them is still being queued. Items of an
*urgent* ticket — a write that came while the engine was busy with other work — come out
first (in their own first-added order): a client's write is not kept waiting behind
another's thousands of reactions or a long advance. A write to an idle engine is not
urgent, so a single client's calls keep plain first in, first out order.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Generic, Hashable, TypeVar

from fakekube.engine.tickets import Ticket

T = TypeVar("T", bound=Hashable)

#: Waiting items past which the queue reports itself over its limit (never refuses an add).
DEFAULT_LIMIT = 1_000_000
NO_TICKETS: tuple[Ticket, ...] = ()


class WorkQueue(Generic[T]):
    """FIFO of distinct hashable items; thread-safe.

    :attr:`condition` (over the queue's lock) is notified whenever a ticket's last item is
    done; the engine also notifies it when its own state changes, so writers waiting for
    their tickets need only this one condition."""

    def __init__(self, limit: int = DEFAULT_LIMIT, name_of: Callable[[T], Hashable] | None = None,
                 on_over_limit: Callable[[int], None] | None = None) -> None:
        self.limit = limit
        #: Told the number of waiting items when the queue first reaches ``limit``
        #: (called under the queue's lock: it must not touch the queue).
        self.on_over_limit = on_over_limit
        #: Times the queue reached its limit (re-armed below half of it), and the most items it held.
        self.over_limit_count = 0
        self.high_water = 0
        self._over = False
        #: Which queue an item is counted in for ``/metrics`` (client-go's queue name; the
        #: engine's items name their controller); None: all in one, ``None``.
        self._name_of = name_of
        #: Items added (not already waiting) per name, client-go's ``workqueue_adds_total``.
        self._adds: dict[Hashable, int] = {}
        #: Items carrying a live ticket (a write waits for them), then all others.
        self._urgent: OrderedDict[T, tuple[Ticket, ...]] = OrderedDict()
        self._items: OrderedDict[T, tuple[Ticket, ...]] = OrderedDict()
        self.condition = threading.Condition(threading.Lock())

    def add(self, item: T, tickets: tuple[Ticket, ...] = NO_TICKETS) -> None:
        """Queue ``item`` (or keep its place), counting it for each of ``tickets``."""
        with self.condition:
            held = self._urgent.get(item)
            if held is None:
                held = self._items.get(item)
            if held is None:
                (self._urgent if _any_urgent(tickets) else self._items)[item] = tickets
                waiting = len(self._urgent) + len(self._items)
                if waiting > self.high_water:
                    self.high_water = waiting
                if waiting >= self.limit and not self._over:
                    self._report_over_limit(waiting)
                name = self._name_of(item) if self._name_of is not None else None
                self._adds[name] = self._adds.get(name, 0) + 1
                for ticket in tickets:
                    ticket.pending += 1
            elif tickets:
                added = tuple(ticket for ticket in tickets if ticket not in held)
                if added:
                    if _any_urgent(added) and self._items.pop(item, None) is not None:
                        self._urgent[item] = held + added  # a busy engine's writer waits for it: it moves up
                    elif item in self._urgent:
                        self._urgent[item] = held + added
                    else:
                        self._items[item] = held + added
                    for ticket in added:
                        ticket.pending += 1

    def _report_over_limit(self, waiting: int) -> None:
        """The queue reached its limit: count it and tell ``on_over_limit`` (once per crossing)."""
        self._over = True
        self.over_limit_count += 1
        if self.on_over_limit is not None:
            self.on_over_limit(waiting)

    def pop(self) -> T | None:
        """The oldest waiting item, or None when empty (its tickets count it as done)."""
        popped = self.pop_with_tickets()
        if popped is None:
            return None
        self.done(popped[1])
        return popped[0]

    def pop_with_tickets(self) -> tuple[T, tuple[Ticket, ...]] | None:
        """The oldest waiting item and the tickets it counts for; call :meth:`done` with
        those tickets once the item's work (and whatever it queued) is finished."""
        with self.condition:
            if self._over and len(self._urgent) + len(self._items) < self.limit // 2:
                self._over = False  # the next crossing is reported again
            if self._urgent:
                popped = self._urgent.popitem(last=False)
                if not self._urgent:
                    self._urgent = OrderedDict()
                return popped
            if not self._items:
                return None
            popped = self._items.popitem(last=False)
            if not self._items:  # an emptied OrderedDict keeps its largest table (a 5,000-node
                self._items = OrderedDict()  # build's 50,000 items: 3.7 MB): let it go
            return popped

    def done(self, tickets: tuple[Ticket, ...]) -> None:
        """An item of these tickets is finished; wake the writers whose last item it was."""
        if not tickets:
            return
        with self.condition:
            finished = False
            for ticket in tickets:
                ticket.pending -= 1
                ticket.reconciles += 1
                finished = finished or ticket.pending == 0 or ticket.reconciles == ticket.budget
            if finished:
                self.condition.notify_all()

    def stats(self) -> tuple[dict[Hashable, int], dict[Hashable, int]]:
        """Waiting items per name (client-go's ``workqueue_depth``) and items added per name
        (``workqueue_adds_total``), read together; O(items), for a scrape."""
        name_of = self._name_of
        with self.condition:
            items = list(self._urgent) + list(self._items)
            adds = dict(self._adds)
        depths: dict[Hashable, int] = {}
        for item in items:
            name = name_of(item) if name_of is not None else None
            depths[name] = depths.get(name, 0) + 1
        return depths, adds

    def __len__(self) -> int:
        with self.condition:
            return len(self._urgent) + len(self._items)


def _any_urgent(tickets: tuple[Ticket, ...]) -> bool:
    for ticket in tickets:
        if ticket.urgent:
            return True
    return False
