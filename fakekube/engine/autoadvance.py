"""Auto-advance: while no client is talking to the cluster, jump to the next timer.

For black-box clients that wait (``kubectl wait``, ``helm --wait``, an operator's
requeue) on a cluster nobody advances: when a whole tick passes without a request,
cluster time jumps to the next timer deadline — the next heartbeat, monitor pass,
back-off or CronJob — and the reactions due then run. A client's own calls are never
raced: time moves only between them. Watches and followed logs are waiting, not
talking (see :mod:`fakekube.api.http.activity`).

Like scaled time this is transport-driven, so *when* the clock moves relative to a
client's calls depends on wall timing; what happens at each instant does not. The tick
wait is injected, so tests step it by hand.
"""

from __future__ import annotations

from typing import Callable, Hashable

from fakekube.engine.engine import Engine
from fakekube.engine.ticker import Ticker

#: Wall seconds between idle checks: at most one timer step per tick.
DEFAULT_TICK_S = 0.01


class AutoAdvance(Ticker):
    """Steps ``engine`` one timer at a time while ``activity()`` stays the same."""

    thread_name = "fakekube-auto-advance"

    def __init__(self, engine: Engine, activity: Callable[[], Hashable], tick_s: float = DEFAULT_TICK_S) -> None:
        super().__init__(tick_s)
        self.engine = engine
        self._activity = activity
        self._last_seen = activity()

    def tick(self) -> bool:
        """One check: step to the next timer if nobody spoke since the last; True if time moved."""
        seen = self._activity()
        busy = seen != self._last_seen or _in_flight(seen)
        self._last_seen = seen
        return not busy and self.engine.step() is not None

    def _on_start(self) -> None:
        self._last_seen = self._activity()


def _in_flight(snapshot: Hashable) -> bool:
    """ActivityMeter snapshots are (started, in flight); anything else only compares equal."""
    return isinstance(snapshot, tuple) and len(snapshot) == 2 and snapshot[1] > 0
