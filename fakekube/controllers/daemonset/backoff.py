"""The back-off between deleting failed daemon pods on one node (client-go ``flowcontrol.Backoff``).

A kubelet that keeps rejecting a daemon pod would otherwise make the controller delete
and recreate it in a hot loop. kube-controller-manager gives the DaemonSet controller
``flowcontrol.NewBackOff(1 s, 15 min)``: per key (``<ds uid>/<observedGeneration>/<node>``)
the first failure is handled at once and starts a 1 s window; a failure inside the window
waits; each handled failure doubles the window up to 15 min; an entry untouched for twice
the maximum starts over, and is forgotten by the minutely GC. No jitter (upstream's is 0).

Bounded: at most :data:`MAX_ENTRIES` keys; past it the entry updated longest ago is
dropped (it would only have made its node wait less).
"""

from __future__ import annotations

from datetime import datetime, timedelta

#: ``flowcontrol.NewBackOff(1*time.Second, 15*time.Minute)`` in startDaemonSetController.
INITIAL_BACKOFF_S = 1.0
MAX_BACKOFF_S = 15 * 60.0
#: ``BackoffGCInterval``: how often expired entries are dropped.
GC_INTERVAL_S = 60.0
#: The most keys kept (one per DaemonSet generation and node with a failing pod).
MAX_ENTRIES = 100_000


class _Entry:
    """One key's back-off: its current window and when it was last updated."""

    __slots__ = ("backoff_s", "last_update")

    def __init__(self, backoff_s: float, last_update: datetime) -> None:
        self.backoff_s = backoff_s
        self.last_update = last_update


class FailedPodBackoff:
    """Per-key exponential back-off on cluster time."""

    def __init__(self, initial_s: float = INITIAL_BACKOFF_S, max_s: float = MAX_BACKOFF_S,
                 max_entries: int = MAX_ENTRIES) -> None:
        self.initial_s = initial_s
        self.max_s = max_s
        self.max_entries = max_entries
        self._entries: dict[str, _Entry] = {}
        self._last_gc: datetime | None = None

    def _expired(self, entry: _Entry, now: datetime) -> bool:
        """``hasExpired``: untouched for more than twice the maximum back-off."""
        return now - entry.last_update > timedelta(seconds=2 * self.max_s)

    def in_backoff(self, key: str, now: datetime) -> bool:
        """``IsInBackOffSinceUpdate``: is ``now`` inside the window that began at the last update?"""
        entry = self._entries.get(key)
        if entry is None or self._expired(entry, now):
            return False
        return now - entry.last_update < timedelta(seconds=entry.backoff_s)

    def delay_s(self, key: str) -> float:
        """``Get``: the key's current window (0 for an unknown key)."""
        entry = self._entries.get(key)
        return entry.backoff_s if entry is not None else 0.0

    def next(self, key: str, now: datetime) -> None:
        """``Next``: start (1 s) or double the key's window from ``now``."""
        entry = self._entries.get(key)
        if entry is None or self._expired(entry, now):
            self._entries.pop(key, None)
            if len(self._entries) >= self.max_entries:
                oldest = min(self._entries, key=lambda k: self._entries[k].last_update)
                del self._entries[oldest]
            self._entries[key] = _Entry(self.initial_s, now)
            return
        entry.backoff_s = min(entry.backoff_s * 2, self.max_s)
        entry.last_update = now

    def gc(self, now: datetime) -> None:
        """``GC`` at most once per :data:`GC_INTERVAL_S` of cluster time (upstream's minutely loop)."""
        if self._last_gc is not None and now - self._last_gc < timedelta(seconds=GC_INTERVAL_S):
            return
        self._last_gc = now
        for key in [k for k, e in self._entries.items() if self._expired(e, now)]:
            del self._entries[key]

    def __len__(self) -> int:
        return len(self._entries)
