"""The bounded log of changes that watches resume from.

Every write appends one :class:`Change`. The log keeps the newest ``limit`` changes
(10,000 by default) and at most ``max_bytes`` of them (128 MiB by default, counted as
the objects' serialized sizes; the newest change always stays); older ones are
compacted away, like etcd compaction. A watch or an exact-version list that needs a
change older than the log gets 410 Gone / Expired, as upstream does when a
resourceVersion is "too old". Compaction never blocks writers: it trims the list in
amortised O(1) (past the byte budget, a trim per write of a big object).

What a change holds beyond its counted object is the version before it, which is
either another retained change's object or one version per key: memory stays within
about twice the budget.
"""

from __future__ import annotations

import array
import bisect
import json
import marshal
from typing import Any, Callable, Iterator, NamedTuple

Obj = dict[str, Any]

ADDED = "ADDED"
MODIFIED = "MODIFIED"
DELETED = "DELETED"

DEFAULT_HISTORY_LIMIT = 10_000
#: The most object bytes the log holds (1,500 updates of a 900 KB object took 2.7 GB
#: of RSS when only entries were counted).
DEFAULT_HISTORY_BYTES = 128 * 1024 * 1024


class Change(NamedTuple):
    """One write: the object after it (for DELETED, the last state) and before it.

    A named tuple rather than a frozen dataclass: every write makes one, and building a
    frozen dataclass costs five times as much (it is an idle cluster's hottest object).
    """

    rv: int
    type: str
    group: str
    resource: str
    namespace: str
    name: str
    obj: Obj
    prev: Obj | None


def change_bytes(change: Change) -> int:
    """About the serialized size of the change's object: ``marshal``'s (a microsecond
    for a Lease, C speed), or JSON's for a frozen object (the check-mode store's
    immutable subclasses, which marshal refuses)."""
    try:
        return len(marshal.dumps(change.obj))
    except ValueError:
        return len(json.dumps(change.obj, separators=(",", ":"), ensure_ascii=False))


class History:
    """Changes with resourceVersion in ``(compacted_rv, newest_rv]``, oldest first."""

    def __init__(self, limit: int = DEFAULT_HISTORY_LIMIT, max_bytes: int = DEFAULT_HISTORY_BYTES) -> None:
        if limit < 1:
            raise ValueError("history limit must be at least 1")
        self.limit = limit
        self.max_bytes = max_bytes
        self._changes: list[Change] = []
        # machine integers (C arrays): a snapshot copies them as bytes, not number by number
        self._rvs = array.array("q")
        self._sizes = array.array("q")
        #: Each live object's last measured size, by resource and (namespace, name): a write
        #: that changes a few scalars of an object (``same_size``: a Lease renewal, a binding)
        #: reuses it instead of measuring. One entry per live object, dropped with it; its key
        #: is the store's own key tuple (given by the store's writes), so it costs no tuple.
        self._object_sizes: dict[tuple[str, str], dict[tuple[str, str], int]] = {}
        #: Bytes of the changes physically held (counted by :func:`change_bytes`).
        self.held_bytes = 0
        #: Every change with rv <= compacted_rv has been dropped.
        self.compacted_rv = 0
        #: Set by the store while it holds deferred writes (store/deferred.py): a reader of the
        #: log from outside the store (a watch's start, a 410's message) has them written first.
        self.before_read: Callable[[], None] | None = None

    def append(self, change: Change, same_size: bool = False, resource: tuple[str, str] | None = None,
               key: tuple[str, str] | None = None) -> None:
        """Log ``change``; ``same_size``: it changed only a few scalar fields of the previous
        version (about a microsecond saved per Lease renewal, an idle cluster's every write).
        ``resource`` and ``key``: the change's (group, plural) and (namespace, name), as the
        store holds them (else made from the change)."""
        sizes = self._object_sizes.get(resource or (change.group, change.resource))
        if sizes is None:
            sizes = self._object_sizes[(change.group, change.resource)] = {}
        if key is None:
            key = (change.namespace, change.name)
        size = sizes.get(key) if same_size else None
        if size is None:
            size = change_bytes(change)
        if change.type == DELETED:
            sizes.pop(key, None)
        else:
            sizes[key] = size
        self._changes.append(change)
        self._rvs.append(change.rv)
        self._sizes.append(size)
        self.held_bytes += size
        if len(self._changes) >= 2 * self.limit:
            self._drop(len(self._changes) - self.limit)
        if self.held_bytes > self.max_bytes:
            self._drop(self._over_budget())

    def append_counted(self, change: Change, size: int) -> None:
        """Log ``change`` counted at ``size`` bytes, with no trim (a deferred write the caller
        already trimmed for: store/deferred.py)."""
        self._changes.append(change)
        self._rvs.append(change.rv)
        self._sizes.append(size)
        self.held_bytes += size

    def object_sizes(self, resource: tuple[str, str]) -> dict[tuple[str, str], int]:
        """Each live object of ``resource``'s last measured size, by (namespace, name)."""
        return self._object_sizes.get(resource) or {}

    def physical_len(self) -> int:
        """Changes physically held (up to twice the limit; ``len`` counts the retained ones)."""
        return len(self._changes)

    def drop_oldest(self, count: int) -> None:
        """Drop the ``count`` oldest changes held (as the count rule would have)."""
        self._drop(count)

    def _over_budget(self) -> int:
        """How many of the oldest changes to drop to be within the byte budget (the newest stays)."""
        excess, drop, sizes = self.held_bytes - self.max_bytes, 0, self._sizes
        while excess > 0 and drop < len(sizes) - 1:
            excess -= sizes[drop]
            drop += 1
        return drop

    def _drop(self, drop: int) -> None:
        if drop <= 0:
            return
        self.compacted_rv = self._rvs[drop - 1]
        self.held_bytes -= sum(self._sizes[:drop])
        del self._changes[:drop]
        del self._rvs[:drop]
        del self._sizes[:drop]

    def compact_to(self, rv: int) -> None:
        """Forget every change: the log starts after ``rv`` (a restored snapshot's store
        continuing above resourceVersions it never held)."""
        self._drop(len(self._changes))
        self.compacted_rv = max(self.compacted_rv, rv)

    def covers(self, rv: int) -> bool:
        """True when every change after ``rv`` is still in the log."""
        return rv >= self.horizon_rv()

    def horizon_rv(self) -> int:
        """The oldest resourceVersion a watch may still start from."""
        if self.before_read is not None:
            self.before_read()
        return self.held_horizon_rv()

    def held_horizon_rv(self) -> int:
        """:meth:`horizon_rv` of the changes held, without the store's deferred writes (for
        the store itself, which knows they all come after)."""
        # Only the newest ``limit`` entries count as retained, so the horizon moves
        # smoothly instead of jumping at each physical trim.
        excess = len(self._changes) - self.limit
        if excess > 0:
            return self._rvs[excess - 1]
        return self.compacted_rv

    def since(self, rv: int) -> list[Change]:
        """Changes with resourceVersion > ``rv`` (caller checked ``covers(rv)``)."""
        index = bisect.bisect_right(self._rvs, rv)
        return self._changes[index:]

    def newer_than(self, rv: int) -> Iterator[Change]:
        """Changes after ``rv``, newest first (for rolling a snapshot back)."""
        index = bisect.bisect_right(self._rvs, rv)
        return reversed(self._changes[index:])

    def __len__(self) -> int:
        return min(len(self._changes), self.limit)
