"""Restart and image-pull back-off, as upstream's kubelet computes them, on virtual seconds.

Upstream keeps one ``flowcontrol.Backoff`` (client-go ``util/flowcontrol/backoff.go``) per
kubelet, keyed per container, and uses it two ways:

* **CrashLoopBackOff** (``kuberuntime_manager.go`` ``doBackOff``): when an exited container
  is due to restart, the kubelet asks ``IsInBackOffSince(key, finishedAt)`` — "is
  ``now - finishedAt`` still below the entry's back-off?". If so the container waits
  (reason ``CrashLoopBackOff``); if not, it calls ``Next(key, finishedAt)`` and restarts.
  ``Next`` starts an entry at 10 s (``initialCrashLoopBackOff``) or doubles it, capped at
  300 s (``MaxContainerBackOff``), and stamps ``lastUpdate = now`` (the restart instant).
  The entry counts as expired — back to the start of the curve — when
  ``finishedAt - lastUpdate > 600 s``: the kubelet pins that rule with
  ``HasExpiredFunc`` (``pkg/kubelet/kubelet.go``). Since ``lastUpdate`` is the restart
  instant, this means "the container ran for more than 10 minutes". Consequences: the
  first crash restarts at once, then waits are 10, 20, 40, 80, 160, 300, 300 … s.
  The kubelet's housekeeping calls ``GC()``, which drops entries not updated for 600 s.
* **ImagePullBackOff** (``images/image_manager.go``): ``IsInBackOffSinceUpdate(key, now)``
  before pulling, ``Next(key, now)`` after a failed pull: retries at 10, 20, 40 … s
  after each failure (capped at 300 s), reason ``ImagePullBackOff`` while waiting.

Upstream's jitter is 0 for both. Keys here are ``(pod uid, container name)`` for restarts
(upstream hashes pod name/namespace/uid, container name, image and resources, so an
image change also resets the curve — callers may put the image in the key to match) and
``(pod uid, image)`` for pulls.

Memory is bounded: at most ``max_entries`` keys. Adding one more first drops expired
entries, then the least recently updated entry (oldest ``lastUpdate``, ties by insertion
order). A dropped entry behaves exactly like one upstream's GC removed: that container's
next crash restarts at once and its curve starts again at 10 s.
"""

from __future__ import annotations

from typing import Hashable

from fakekube.clock import format_go_duration as go_duration_string

#: Upstream kubelet defaults (pkg/kubelet/kubelet.go; KEP-4603 gates off).
INITIAL_BACKOFF_S = 10.0
MAX_BACKOFF_S = 300.0
#: An entry not updated for this long is forgotten (kubelet's HasExpiredFunc and GC).
RESET_AFTER_S = 600.0
#: Back-off entries kept per kubelet; see the module docstring for what happens at the limit.
MAX_BACKOFF_ENTRIES = 10_000

#: Cluster instants are whole microseconds, but the seconds here are floats: two instants
#: closer than half a microsecond are the same instant (54.165455 + 10 is 64.16545500000001).
SAME_INSTANT_S = 0.5e-6

#: Upstream reason strings.
CRASH_LOOP_BACK_OFF = "CrashLoopBackOff"


class _Entry:
    """One key's back-off: the current delay and when it last moved."""

    __slots__ = ("backoff_s", "last_update_s")

    def __init__(self, backoff_s: float, last_update_s: float) -> None:
        self.backoff_s = backoff_s
        self.last_update_s = last_update_s


class Backoff:
    """client-go's ``flowcontrol.Backoff`` without a clock: every instant is passed in."""

    def __init__(self, initial_s: float = INITIAL_BACKOFF_S, max_s: float = MAX_BACKOFF_S,
                 reset_after_s: float = RESET_AFTER_S, max_entries: int = MAX_BACKOFF_ENTRIES) -> None:
        if not 0 < initial_s <= max_s:
            raise ValueError(f"back-off needs 0 < initial_s <= max_s, got {initial_s}, {max_s}")
        if reset_after_s <= 0 or max_entries < 1:
            raise ValueError("reset_after_s must be > 0 and max_entries >= 1")
        self.initial_s = float(initial_s)
        self.max_s = float(max_s)
        self.reset_after_s = float(reset_after_s)
        self.max_entries = max_entries
        self._entries: dict[Hashable, _Entry] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def delay_s(self, key: Hashable) -> float:
        """The key's current back-off (upstream ``Get``); 0 when it has none."""
        entry = self._entries.get(key)
        return entry.backoff_s if entry else 0.0

    def next(self, key: Hashable, event_s: float, now_s: float) -> float:
        """Move the key's back-off to its next step (upstream ``Next``); returns the new delay."""
        entry = self._entries.get(key)
        if entry is None or self._expired(event_s, entry):
            self._make_room(key, now_s)
            entry = self._entries[key] = _Entry(self.initial_s, now_s)
        else:
            entry.backoff_s = min(entry.backoff_s * 2, self.max_s)
        entry.last_update_s = now_s
        return entry.backoff_s

    def backoff_end_s(self, key: Hashable, event_s: float) -> float:
        """The first instant ``in_backoff_since(key, event_s, ...)`` is false."""
        entry = self._entries.get(key)
        if entry is None or self._expired(event_s, entry):
            return event_s
        return event_s + entry.backoff_s

    def in_backoff_since(self, key: Hashable, event_s: float, now_s: float) -> bool:
        """Is ``now_s - event_s`` still inside the key's back-off? (``IsInBackOffSince``)"""
        entry = self._entries.get(key)
        if entry is None or self._expired(event_s, entry):
            return False
        return now_s - event_s < entry.backoff_s - SAME_INSTANT_S

    def in_backoff_since_update(self, key: Hashable, now_s: float) -> bool:
        """Is ``now_s`` still inside the back-off counted from the last update?"""
        entry = self._entries.get(key)
        if entry is None or self._expired(now_s, entry):
            return False
        return now_s - entry.last_update_s < entry.backoff_s - SAME_INSTANT_S

    def forget(self, key: Hashable) -> None:
        """Drop a key (the pod is gone), like upstream ``Reset``/``DeleteEntry``."""
        self._entries.pop(key, None)

    def gc(self, now_s: float) -> int:
        """Drop entries not updated for ``reset_after_s`` (upstream ``GC``); returns how many."""
        stale = [key for key, entry in self._entries.items() if self._expired(now_s, entry)]
        for key in stale:
            del self._entries[key]
        return len(stale)

    def _expired(self, event_s: float, entry: _Entry) -> bool:
        return event_s - entry.last_update_s > self.reset_after_s + SAME_INSTANT_S

    def _make_room(self, key: Hashable, now_s: float) -> None:
        if key in self._entries or len(self._entries) < self.max_entries:
            return
        self.gc(now_s)
        if len(self._entries) >= self.max_entries:
            oldest = min(self._entries, key=lambda k: self._entries[k].last_update_s)
            del self._entries[oldest]


class _KeyedBackoff:
    """What both kubelet back-offs share: one :class:`Backoff`, its size, reads and clean-up."""

    def __init__(self, backoff: Backoff) -> None:
        self._backoff = backoff

    def __len__(self) -> int:
        return len(self._backoff)

    def delay_s(self, key: Hashable) -> float:
        """The key's current back-off (e.g. for ``back-off 20s restarting failed container``)."""
        return self._backoff.delay_s(key)

    def forget(self, key: Hashable) -> None:
        self._backoff.forget(key)

    def gc(self, now_s: float) -> int:
        return self._backoff.gc(now_s)


class RestartBackoff(_KeyedBackoff):
    """CrashLoopBackOff for containers keyed by (pod uid, container name).

    Use: when a container exits at ``finished_s``, ``restart_at_s`` says when it may start
    again (the kubelet shows ``CrashLoopBackOff`` until then); when it does start, call
    ``record_restart``. ``restart_at_s`` never changes state, so it may be asked freely.
    """

    def __init__(self, initial_s: float = INITIAL_BACKOFF_S, max_s: float = MAX_BACKOFF_S,
                 reset_after_s: float = RESET_AFTER_S, max_entries: int = MAX_BACKOFF_ENTRIES) -> None:
        super().__init__(Backoff(initial_s, max_s, reset_after_s, max_entries))

    def restart_at_s(self, key: Hashable, finished_s: float) -> float:
        """The earliest instant the container that exited at ``finished_s`` may restart."""
        return self._backoff.backoff_end_s(key, finished_s)

    def in_backoff(self, key: Hashable, finished_s: float, now_s: float) -> bool:
        """Must the container still wait at ``now_s``? (reason ``CrashLoopBackOff``)"""
        return self._backoff.in_backoff_since(key, finished_s, now_s)

    def record_restart(self, key: Hashable, finished_s: float, now_s: float) -> float:
        """The container restarts now; returns the wait its *next* crash will get."""
        if self.in_backoff(key, finished_s, now_s):
            raise ValueError(f"{key!r} is in back-off until {self.restart_at_s(key, finished_s)}; "
                             f"cannot restart at {now_s}")
        return self._backoff.next(key, finished_s, now_s)


class ImagePullBackoff(_KeyedBackoff):
    """ImagePullBackOff for pulls keyed by (pod uid, image)."""

    def __init__(self, initial_s: float = INITIAL_BACKOFF_S, max_s: float = MAX_BACKOFF_S,
                 reset_after_s: float = 2 * MAX_BACKOFF_S, max_entries: int = MAX_BACKOFF_ENTRIES) -> None:
        super().__init__(Backoff(initial_s, max_s, reset_after_s, max_entries))

    def record_failure(self, key: Hashable, now_s: float) -> float:
        """A pull failed at ``now_s``; returns the instant the next pull may start."""
        return now_s + self._backoff.next(key, now_s, now_s)

    def in_backoff(self, key: Hashable, now_s: float) -> bool:
        """Must the next pull still wait? (reason ``ImagePullBackOff``)"""
        return self._backoff.in_backoff_since_update(key, now_s)


def format_go_duration(seconds: float) -> str:
    """Go's ``time.Duration.String`` for whole seconds, as in upstream messages: 10s, 1m20s, 5m0s."""
    return go_duration_string(int(seconds) * 1_000_000_000)
