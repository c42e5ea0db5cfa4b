"""The bounded log of changes that watches resume from.

Every write appends one :class:`Change`. The log keeps the newest ``limit`` changes;
older ones are compacted away, like etcd compaction. A watch or an exact-version list
that needs a change older than the log gets 410 Gone / Expired, as upstream does when
a resourceVersion is "too old". Compaction never blocks writers: it trims the list
in amortised O(1).
"""

from __future__ import annotations

import bisect
from typing import Any, Iterator, NamedTuple

Obj = dict[str, Any]

ADDED = "ADDED"
MODIFIED = "MODIFIED"
DELETED = "DELETED"

DEFAULT_HISTORY_LIMIT = 10_000


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


class History:
    """Changes with resourceVersion in ``(compacted_rv, newest_rv]``, oldest first."""

    def __init__(self, limit: int = DEFAULT_HISTORY_LIMIT) -> None:
        if limit < 1:
            raise ValueError("history limit must be at least 1")
        self.limit = limit
        self._changes: list[Change] = []
        self._rvs: list[int] = []
        #: Every change with rv <= compacted_rv has been dropped.
        self.compacted_rv = 0

    def append(self, change: Change) -> None:
        self._changes.append(change)
        self._rvs.append(change.rv)
        if len(self._changes) >= 2 * self.limit:
            drop = len(self._changes) - self.limit
            self.compacted_rv = self._rvs[drop - 1]
            del self._changes[:drop]
            del self._rvs[:drop]

    def covers(self, rv: int) -> bool:
        """True when every change after ``rv`` is still in the log."""
        return rv >= self.horizon_rv()

    def horizon_rv(self) -> int:
        """The oldest resourceVersion a watch may still start from."""
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
