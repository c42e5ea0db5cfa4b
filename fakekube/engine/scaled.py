"""Scaled time: cluster time runs at ``scale`` × wall time, for black-box clients.

kubectl's ``rollout status``, ``helm --wait`` and client-go's wait loops poll with
wall-clock timeouts; they cannot move a manual clock. In scaled mode a background
ticker advances the engine by ``scale × elapsed wall time`` every ``tick_s`` — so with
``scale=60`` a node heartbeat timeout of 40 virtual seconds passes in under a second.

This is the one place in fakekube that reads the wall clock, and it reads it through an
injected ``wall`` function (monotonic seconds), so tests drive it by hand.
"""

from __future__ import annotations

import time
from typing import Callable

from fakekube.engine.engine import Engine
from fakekube.engine.ticker import Ticker

#: How often the ticker moves cluster time (wall seconds).
DEFAULT_TICK_S = 0.05
#: The most virtual time one tick may cover (a stalled process must not leap hours).
MAX_STEP_S = 60.0


class ScaledTime(Ticker):
    """Advances ``engine`` in step with the wall clock, ``scale`` times faster."""

    thread_name = "fakekube-scaled-time"

    def __init__(self, engine: Engine, scale: float, wall: Callable[[], float] = time.monotonic,
                 tick_s: float = DEFAULT_TICK_S) -> None:
        if scale <= 0:
            raise ValueError(f"time scale must be positive, got {scale}")
        super().__init__(tick_s)
        self.engine = engine
        self.scale = scale
        self._wall = wall
        self._last_wall = wall()

    def tick(self) -> float:
        """Advance by the scaled wall time since the last tick; returns virtual seconds moved."""
        now = self._wall()
        step_s = min((now - self._last_wall) * self.scale, MAX_STEP_S)
        self._last_wall = now
        if step_s > 0:
            self.engine.advance(step_s)
        return max(step_s, 0.0)

    def _on_start(self) -> None:
        self._last_wall = self._wall()
