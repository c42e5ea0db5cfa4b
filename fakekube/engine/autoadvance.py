"""Auto-advance: while a client waits on the cluster and nobody talks to it, jump to the next timer.

For black-box clients that wait (``kubectl wait``, ``rollout status``, ``helm --wait``, an
operator's informer) on a cluster nobody advances. The rule, checked once per tick:

* some client is **waiting** — at least one watch or followed log stream is open; and
* nobody is **talking** — no other request is in flight, and none arrived or ended since
  the last tick; and
* the waiters have had their turn — nothing was sent to a waiter (a watch event, log
  lines) in the last :data:`REPLY_WINDOW_S` of wall time, so a client that got what it
  waited for can hang up (``kubectl wait`` returning) or ask again before time moves on.

Then cluster time jumps to the next timer deadline (the next heartbeat, monitor pass,
back-off or CronJob) and the reactions due then run: one timer instant per tick. With no
waiter, time stands still, so a script's commands (``curl .../fail``, ``sleep 2``,
``kubectl get``) see the cluster exactly where the last one left it; a client's own calls
are never raced either. What the meter counts is :mod:`fakekube.api.http.activity`'s.

Like scaled time this is transport-driven, so *when* the clock moves relative to a
client's calls depends on wall timing; what happens at each instant does not. The tick
wait is injected, so tests step it by hand.
"""

from __future__ import annotations

from typing import Callable

from fakekube.engine.engine import Engine
from fakekube.engine.ticker import Ticker

#: Wall seconds between checks: at most one timer step per tick.
DEFAULT_TICK_S = 0.01
#: How often, in wall seconds, a waiting stream checks that its client is still there
#: while auto-advance runs (a client that hung up stops counting as a waiter within this).
WAITER_CHECK_S = 0.02

#: Wall seconds a waiter has to answer what it was sent before time moves again: enough
#: for kubectl to exit and the server to see it (a few WAITER_CHECK_S).
REPLY_WINDOW_S = 0.06

#: ``(requests started so far, requests in flight, waiters open, chunks delivered to them)``:
#: an ActivityMeter reading.
Reading = tuple[int, int, int, int]


class AutoAdvance(Ticker):
    """Steps ``engine`` one timer at a time while ``activity()`` shows a waiter and no talker."""

    thread_name = "fakekube-auto-advance"

    def __init__(self, engine: Engine, activity: Callable[[], Reading], tick_s: float = DEFAULT_TICK_S) -> None:
        super().__init__(tick_s)
        self.engine = engine
        self._activity = activity
        self._last_talk = activity()[:2]
        self._last_delivered = activity()[3]
        self._reply_ticks = max(1, round(REPLY_WINDOW_S / tick_s))
        self._hold = 0  # ticks left in the waiters' turn

    def tick(self) -> bool:
        """One check: step to the next timer if a client waits and none spoke; True if time moved."""
        started, in_flight, waiting, delivered = self._activity()
        talked = (started, in_flight) != self._last_talk or in_flight > 0  # a whole quiet tick is needed
        self._last_talk = (started, in_flight)
        if delivered != self._last_delivered:
            self._last_delivered, self._hold = delivered, self._reply_ticks
        if self._hold > 0:
            self._hold -= 1
            return False
        return waiting > 0 and not talked and self.engine.step() is not None

    def _on_start(self) -> None:
        self._last_talk = self._activity()[:2]
        self._last_delivered = self._activity()[3]
