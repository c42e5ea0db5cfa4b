"""Rate limiting on virtual time: a token bucket and upstream's RateLimitedTimedQueue.

Guarantees of :class:`RateLimitedTimedQueue`, as upstream's (pkg/controller/nodelifecycle/
scheduler/rate_limited_queue.go) with two fixes for determinism and bounds:
- unique: a value is queued at most once until ``remove`` — even after it was processed,
  so a node is tainted once per outage, until it is marked reachable again;
- ordered: by (process time, insertion sequence) — upstream's heap leaves ties to chance;
- rate limited: each step of ``try_process`` first takes a token (upstream does this even
  when the head is not due yet, and so do we);
- bounded: at most ``capacity`` values are remembered; one more raises QueueFullError.

:class:`TokenBucket` mirrors client-go's NewTokenBucketRateLimiter (x/time/rate): it
starts full with ``burst`` tokens and refills at ``rate_per_s``; a rate <= 0 never
accepts (client-go's FakeNeverRateLimiter, which SwapLimiter uses for rate 0).
"""

from __future__ import annotations

import heapq
import itertools
import math
from typing import Any, Callable, Iterator, NamedTuple

from fakekube.controllers.nodelifecycle.config import EVICTION_BURST, MAX_QUEUED_NODES_PER_ZONE

#: Upstream requeues a failed item at now + wait + 1 ns; on our float clock, 1 µs.
RETRY_EPSILON_S = 1e-6


class QueueFullError(RuntimeError):
    """A zone's queue already remembers ``capacity`` nodes: more nodes than the fake supports."""


class TokenBucket:
    """A token bucket on virtual seconds; exact for burst 1 (one accept every 1/rate s)."""

    def __init__(self, rate_per_s: float, burst: int = EVICTION_BURST) -> None:
        if burst < 1:
            raise ValueError(f"burst must be >= 1, got {burst}")
        self.rate_per_s = rate_per_s
        self.burst = burst
        # The instant the bucket is (or was) full again; None: full from the start.
        self._full_at_s: float | None = None

    @property
    def never(self) -> bool:
        return self.rate_per_s <= 0

    def next_allowed_s(self) -> float | None:
        """The earliest virtual second ``try_accept`` succeeds; None if never, -inf if now."""
        if self.never:
            return None
        if self._full_at_s is None:
            return -math.inf
        return self._full_at_s - (self.burst - 1) / self.rate_per_s

    def try_accept(self, now_s: float) -> bool:
        """Take a token if one is there at ``now_s``."""
        allowed = self.next_allowed_s()
        if allowed is None or now_s < allowed:
            return False
        start = now_s if self._full_at_s is None else max(self._full_at_s, now_s)
        self._full_at_s = start + 1 / self.rate_per_s
        return True


class TimedValue(NamedTuple):
    """A queued node: its name, an id (the node's UID), when added, when due."""

    value: str
    uid: Any
    added_at_s: float
    process_at_s: float


#: The action a queue step runs: (done, retry_after_s). Not done → retried after that wait.
Action = Callable[[TimedValue], "tuple[bool, float]"]


class RateLimitedTimedQueue:
    """A unique, time-ordered queue of node names worked off at a zone's rate."""

    def __init__(self, rate_per_s: float, burst: int = EVICTION_BURST, capacity: int = MAX_QUEUED_NODES_PER_ZONE) -> None:
        self.limiter = TokenBucket(rate_per_s, burst)
        self.capacity = capacity
        self._heap: list[tuple[float, int, TimedValue]] = []
        self._members: set[str] = set()  # membership only; never iterated
        self._sequence = itertools.count()

    def __len__(self) -> int:
        return len(self._heap)

    def __iter__(self) -> Iterator[TimedValue]:
        """Queued values in the order they will be processed."""
        return (entry[2] for entry in sorted(self._heap))

    def add(self, value: str, uid: Any, now_s: float) -> bool:
        """Queue ``value`` due now; False if it is queued or was processed and not removed."""
        if value in self._members:
            return False
        if len(self._members) >= self.capacity:
            raise QueueFullError(f"eviction queue holds {self.capacity} nodes; cannot add {value!r}")
        self._push(TimedValue(value, uid, now_s, now_s))
        self._members.add(value)
        return True

    def remove(self, value: str) -> bool:
        """Forget ``value`` so it may be added again; True if it was known."""
        if value not in self._members:
            return False
        self._members.discard(value)
        self._drop(value)
        return True

    def clear(self) -> None:
        self._heap.clear()
        self._members.clear()

    def head(self) -> TimedValue | None:
        return self._heap[0][2] if self._heap else None

    def try_process(self, now_s: float, action: Action) -> list[str]:
        """Process due values while the limiter allows; returns the values acted on, in order."""
        acted = []
        while self._heap:
            if not self.limiter.try_accept(now_s):
                break
            item = self._heap[0][2]
            if now_s < item.process_at_s:
                break
            acted.append(item.value)
            done, retry_after_s = action(item)
            self._drop(item.value)
            if not done:
                self._push(item._replace(process_at_s=now_s + retry_after_s + RETRY_EPSILON_S))
        return acted

    def next_due_s(self) -> float | None:
        """When ``try_process`` could next act: None if empty or the rate is 0."""
        head = self.head()
        allowed = self.limiter.next_allowed_s()
        if head is None or allowed is None:
            return None
        return max(head.process_at_s, allowed)

    def swap_rate(self, rate_per_s: float, now_s: float) -> None:
        """Upstream SwapLimiter: a new bucket, drained if the old one had no token at ``now_s``."""
        if rate_per_s == self.limiter.rate_per_s:
            return
        new = TokenBucket(rate_per_s, self.limiter.burst)
        if not new.never and not self.limiter.try_accept(now_s):
            new.try_accept(now_s)
        self.limiter = new

    def _push(self, item: TimedValue) -> None:
        heapq.heappush(self._heap, (item.process_at_s, next(self._sequence), item))

    def _drop(self, value: str) -> None:
        self._heap = [entry for entry in self._heap if entry[2].value != value]
        heapq.heapify(self._heap)
