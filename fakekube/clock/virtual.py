"""A manual virtual clock with timers.

Time starts at a fixed epoch (so two runs with the same seed write the same timestamps)
and moves only when told to. Timers fire in (deadline, sequence) order — the sequence
number, taken when a timer is set, makes timers due at the same instant fire in the
order they were set (simpy's trick): that order never depends on thread timing. While
a timer fires, ``now()`` reads its deadline, so whatever it does is stamped with the
instant it was due. Time never goes back.

The engine (DESIGN.md part 5) drives ``advance``; the scaled mode arrives with it.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from datetime import datetime, timedelta, timezone
from typing import Callable

#: Where cluster time starts unless configured: a fixed instant, never the wall clock.
DEFAULT_EPOCH = datetime(2025, 1, 1, 0, 0, 0, tzinfo=timezone.utc)

#: Timers that may be pending at once; one more is refused (a runaway timer loop).
MAX_PENDING_TIMERS = 1_000_000


class Timer:
    """A pending call. Ordered by (deadline, sequence) for the clock's heap; ``cancel()``
    makes it a no-op."""

    __slots__ = ("deadline", "sequence", "callback", "cancelled")

    def __init__(self, deadline: datetime, sequence: int, callback: Callable[[], None],
                 cancelled: bool = False) -> None:
        self.deadline = deadline
        self.sequence = sequence
        self.callback = callback
        self.cancelled = cancelled

    def __lt__(self, other: Timer) -> bool:
        """The heap's order: earlier deadline first, then the timer set first."""
        return (self.deadline, self.sequence) < (other.deadline, other.sequence)

    def cancel(self) -> None:
        self.cancelled = True


class VirtualClock:
    """Cluster time. ``now()`` is cheap and thread-safe; time never goes back."""

    def __init__(self, start: datetime = DEFAULT_EPOCH, max_pending: int = MAX_PENDING_TIMERS) -> None:
        if start.tzinfo is None:
            raise ValueError("clock start must be timezone-aware (UTC)")
        self._now = start.astimezone(timezone.utc)
        self._lock = threading.RLock()
        self._timers: list[Timer] = []
        self._sequence = itertools.count()
        self._max_pending = max_pending
        self._observers: list[Callable[[datetime], None]] = []

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def add_observer(self, observer: Callable[[datetime], None]) -> None:
        """Call ``observer(now)`` whenever time moves (e.g. to keep freezegun in step)."""
        with self._lock:
            self._observers.append(observer)

    def set_observers(self, observers: list[Callable[[datetime], None]]) -> None:
        """Exactly ``observers`` from now on (a restored clock takes its cluster's)."""
        with self._lock:
            self._observers = list(observers)

    def remove_observer(self, observer: Callable[[datetime], None]) -> None:
        with self._lock:
            if observer in self._observers:
                self._observers.remove(observer)

    def _moved(self) -> None:
        with self._lock:
            now, observers = self._now, list(self._observers)
        for observer in observers:
            observer(now)

    # -- timers ---------------------------------------------------------------
    def call_at(self, deadline: datetime, callback: Callable[[], None]) -> Timer:
        """Run ``callback`` when time reaches ``deadline`` (a past deadline: at the next advance)."""
        with self._lock:
            if len(self._timers) >= self._max_pending:
                self._compact()
            if len(self._timers) >= self._max_pending:
                raise RuntimeError(f"more than {self._max_pending} timers pending: is a timer re-arming itself?")
            timer = Timer(max(deadline, self._now), next(self._sequence), callback)
            heapq.heappush(self._timers, timer)
            return timer

    def call_later(self, delay_s: float, callback: Callable[[], None]) -> Timer:
        """Run ``callback`` ``delay_s`` seconds of cluster time from now."""
        if delay_s < 0:
            raise ValueError(f"a timer cannot be set in the past: call_later({delay_s})")
        with self._lock:
            return self.call_at(self._now + timedelta(seconds=delay_s), callback)

    def next_deadline(self) -> datetime | None:
        """When the earliest pending timer is due, or None."""
        with self._lock:
            self._drop_cancelled()
            return self._timers[0].deadline if self._timers else None

    def pending(self) -> int:
        with self._lock:
            self._drop_cancelled()
            return sum(1 for t in self._timers if not t.cancelled)

    # -- moving time ----------------------------------------------------------
    def advance(self, seconds: float) -> datetime:
        """Move forward ``seconds`` (>= 0), firing every timer due on the way, in order."""
        if seconds < 0:
            raise ValueError(f"time never goes back: advance({seconds})")
        with self._lock:
            target = self._now + timedelta(seconds=seconds)
        return self.advance_to(target)

    def advance_to(self, target: datetime) -> datetime:
        """Move forward to ``target``; timers set while firing also fire if due by then."""
        with self._lock:
            if target < self._now:
                raise ValueError(f"time never goes back: {target.isoformat()} < {self._now.isoformat()}")
        while True:
            timer = self._pop_due(target)
            if timer is None:
                break
            self._moved()
            timer.callback()
        with self._lock:
            self._now = max(self._now, target)
        self._moved()
        return self.now()

    def _pop_due(self, target: datetime) -> Timer | None:
        """The next timer due by ``target``, with the clock moved to its deadline."""
        with self._lock:
            self._drop_cancelled()
            if not self._timers or self._timers[0].deadline > target:
                return None
            timer = heapq.heappop(self._timers)
            self._now = max(self._now, timer.deadline)
            return timer

    def _compact(self) -> None:
        """Drop every cancelled timer, not only those at the top of the heap: the pending
        limit counts live timers, however often timers are cancelled and set again."""
        self._timers = [timer for timer in self._timers if not timer.cancelled]
        heapq.heapify(self._timers)

    def _drop_cancelled(self) -> None:
        while self._timers and self._timers[0].cancelled:
            heapq.heappop(self._timers)
