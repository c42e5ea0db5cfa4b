"""Lease renewals the monitor has seen but not yet applied, and the deadlines they move.

Upstream's monitor pass looks at every node every 5 s: a renewed Lease moves the node's
probe time to the pass's ``now``, and a node is stale once ``now`` is past probe + grace
period. On an idle 5,000-node cluster that is 2,500 renewals and 5,000 visits a pass for
nothing observable. Here a pass records a cohort's renewal once — each member's newest
``(renewTime, seen at)`` in one dict update, and one deadline for the whole cohort on a
heap — and the controller applies a sighting to a node's health only when it checks
that node (:meth:`Sightings.take`), which gives the very record the eager pass would
hold. A pass visits only the nodes whose deadline the heap says is due, besides the ones
whose objects changed.

Plain data (names, times, tuples): it goes into snapshots as it is.
"""

from __future__ import annotations

import heapq
import itertools
import operator
from datetime import datetime, timedelta
from typing import Callable, Iterable

#: A heap entry: (deadline, sequence, node names, the sighting — (renewTime, seen at) — it is
#: for: None for a full check's deadline).
Entry = tuple[datetime, int, tuple[str, ...], tuple[datetime, datetime] | None]


class Sightings:
    """Per node, the newest Lease renewal seen since its last check; and the deadlines.

    Invariant: a node's sighting is newer than the renewal its health record holds (the
    fast path only stores a renewTime above every one ever seen; the slow path compares).
    Memory: one sighting per node, one heap entry per cohort renewal seen in the last
    grace period plus one per full check (stale entries are skipped when they come up).
    """

    __slots__ = ("seen", "heap", "sequence", "newest_renew")

    def __init__(self) -> None:
        #: node → (renewTime, the pass instant that saw it).
        self.seen: dict[str, tuple[datetime, datetime]] = {}
        self.heap: list[Entry] = []
        self.sequence = 0
        #: The newest renewTime any sighting or check has held (None: none yet).
        self.newest_renew: datetime | None = None

    def push(self, deadline: datetime, names: tuple[str, ...], sighting: tuple[datetime, datetime] | None) -> None:
        heapq.heappush(self.heap, (deadline, self.sequence, names, sighting))
        self.sequence += 1

    def note_renew(self, renew: datetime | None) -> None:
        """A check read this renewTime from the Lease itself."""
        if renew is not None and (self.newest_renew is None or renew > self.newest_renew):
            self.newest_renew = renew

    def see(self, names: list[str], renew: datetime, now: datetime, grace_s: float,
            held: Callable[[str], datetime | None]) -> None:
        """``names`` renewed their Leases at ``renew``, seen by the pass at ``now``; ``held``
        gives the renewTime a node's health already holds (for the slow path only)."""
        sighting = (renew, now)
        if self.newest_renew is None or renew > self.newest_renew:
            self.seen.update(dict.fromkeys(names, sighting))  # newer than anything held: at C speed
            self.newest_renew = renew
        else:
            for name in names:
                before = self.seen[name][0] if name in self.seen else held(name)
                if before is None or before < renew:
                    self.seen[name] = sighting
        self.push(now + timedelta(seconds=grace_s), tuple(names), sighting)

    def take(self, name: str) -> tuple[datetime, datetime] | None:
        return self.seen.pop(name, None)

    def discard(self, names: Iterable[str]) -> None:
        for name in names:
            self.seen.pop(name, None)

    def expired(self, now: datetime) -> list[tuple[datetime, list[str], datetime | None]]:
        """The heap entries whose deadline is before ``now``: (deadline, the nodes whose newest
        sighting is still the entry's — all of a full check's entry —, seen at). Nodes renewed
        since are left out at C speed (a cohort's entry comes up every renewal period, and a
        healthy cohort has renewed since)."""
        heap, seen = self.heap, self.seen
        out: list[tuple[datetime, list[str], datetime | None]] = []
        while heap and heap[0][0] < now:
            deadline, _, names, sighting = heapq.heappop(heap)
            if sighting is None:
                out.append((deadline, list(names), None))
                continue
            held = list(itertools.compress(names, map(operator.eq, map(seen.get, names), itertools.repeat(sighting))))
            if held:
                out.append((deadline, held, sighting[1]))
        return out

    def live_expired(self, now: datetime, check_due: Callable[[str, datetime], bool]) -> bool:
        """Whether an entry before ``now`` still holds for some node (what :meth:`expired`
        would give the pass anything for); ``check_due(name, deadline)`` says whether a full
        check's entry holds for ``name``. Stale entries met on the way are dropped, as
        :meth:`expired` drops them (a stale entry stays stale: a node's newest sighting only
        ever moves to a newer one or is applied, and a quiet check's deadline only moves)."""
        heap, seen = self.heap, self.seen
        while heap and heap[0][0] < now:
            deadline, _, names, sighting = heap[0]
            if sighting is None:
                if any(check_due(name, deadline) for name in names):
                    return True
            elif any(map(operator.eq, map(seen.get, names), itertools.repeat(sighting))):
                return True
            heapq.heappop(heap)
        return False

    def clear(self) -> None:
        """Every node is checked afresh (the caller applied the sightings first)."""
        self.seen.clear()
        self.heap.clear()

