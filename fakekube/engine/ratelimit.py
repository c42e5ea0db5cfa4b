"""client-go's default controller rate limiter, on the virtual clock.

``workqueue.DefaultControllerRateLimiter()`` is the larger of two limiters:

* per item, exponential: a key that failed ``n`` times in a row waits ``5 ms × 2^(n-1)``,
  at most 1000 s (``ItemExponentialFailureRateLimiter``); ``forget`` resets it;
* overall, a token bucket of 10 retries a second with a burst of 100
  (``BucketRateLimiter``), shared by every key of one controller.

Time is passed in (seconds of cluster time), so the same failures give the same delays.
Memory bound: one failure count per key that is failing now (a success forgets it), at
most :data:`MAX_TRACKED_KEYS`; past that the oldest count is dropped, which only makes
that key's next retry come sooner.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Hashable, NamedTuple

#: workqueue.DefaultItemBasedRateLimiter: 5 ms doubling, capped at 1000 s.
BASE_DELAY_S = 0.005
MAX_DELAY_S = 1000.0
#: The overall bucket: 10 qps, burst 100.
BUCKET_QPS = 10.0
BUCKET_BURST = 100
#: Failing keys whose counts are remembered at once (see the module docstring).
MAX_TRACKED_KEYS = 100_000


class RateLimits(NamedTuple):
    """The limiter's settings (upstream's defaults)."""

    base_delay_s: float = BASE_DELAY_S
    max_delay_s: float = MAX_DELAY_S
    qps: float = BUCKET_QPS
    burst: int = BUCKET_BURST


class ControllerRateLimiter:
    """When a failed key may be retried: max(its exponential back-off, the shared bucket's)."""

    def __init__(self, limits: RateLimits = RateLimits()) -> None:
        self.limits = limits
        self._failures: OrderedDict[Hashable, int] = OrderedDict()
        self._tokens = float(limits.burst)
        self._last_s: float | None = None

    def when(self, key: Hashable, now_s: float) -> float:
        """The delay (seconds) before ``key``'s next try; counts one more failure."""
        failures = self._failures.pop(key, 0)
        self._failures[key] = failures + 1
        if len(self._failures) > MAX_TRACKED_KEYS:
            self._failures.popitem(last=False)
        exponential = min(self.limits.base_delay_s * 2 ** failures, self.limits.max_delay_s)
        return max(exponential, self._reserve(now_s))

    def forget(self, key: Hashable) -> None:
        """``key`` succeeded: its next failure starts from the base delay again."""
        self._failures.pop(key, None)

    def _reserve(self, now_s: float) -> float:
        """Take one token (going into debt if none is left): how long until it is ours."""
        if self._last_s is not None:
            elapsed = max(0.0, now_s - self._last_s)
            self._tokens = min(float(self.limits.burst), self._tokens + elapsed * self.limits.qps)
        self._last_s = now_s
        self._tokens -= 1
        return 0.0 if self._tokens >= 0 else -self._tokens / self.limits.qps
