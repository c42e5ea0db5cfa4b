"""A manual virtual clock.

Time starts at a fixed epoch (so two runs with the same seed write the same
timestamps) and moves only when told to. Timers and the scaled mode arrive with the
engine (issue 3); this is the part the store and apiserver need: ``now()``.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

#: Where cluster time starts unless configured: a fixed instant, never the wall clock.
DEFAULT_EPOCH = datetime(2025, 1, 1, 0, 0, 0, tzinfo=timezone.utc)


class VirtualClock:
    """Cluster time. ``now()`` is cheap and thread-safe; time never goes back."""

    def __init__(self, start: datetime = DEFAULT_EPOCH) -> None:
        if start.tzinfo is None:
            raise ValueError("clock start must be timezone-aware (UTC)")
        self._now = start.astimezone(timezone.utc)
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> datetime:
        """Move time forward by ``seconds`` (>= 0) and return the new time."""
        if seconds < 0:
            raise ValueError(f"time never goes back: advance({seconds})")
        with self._lock:
            self._now += timedelta(seconds=seconds)
            return self._now


def format_rfc3339(moment: datetime) -> str:
    """Kubernetes' metav1.Time wire format: second precision, ``Z`` suffix."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
