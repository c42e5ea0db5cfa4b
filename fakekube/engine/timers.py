"""At most one timer per (controller, key): the earliest deadline wins.

client-go's delaying queue (``AddAfter``) keeps one entry per item and moves it only
earlier; a controller that wants a key later than an armed timer simply gets the
earlier call, finds nothing due and asks again. That rule makes timers cheap to ask
for (a reconcile can ask on every pass) and impossible to leak per key.

Memory bound: one entry per armed key; an entry goes when its timer fires or is cancelled.
"""

from __future__ import annotations

import functools

from datetime import datetime
from typing import Callable

from fakekube.clock import Timer, VirtualClock

WorkItem = tuple[str, str]  # (controller name, key)

#: The longest delay a timer may be asked for: Go's time.Duration range (int64 nanoseconds,
#: about 292 years), which bounds every upstream timer. A delay past it is never due.
MAX_DELAY_S = (2**63 - 1) / 1e9


class KeyTimers:
    """The armed timers of every controller's keys, on one clock."""

    def __init__(self, clock: VirtualClock, fire: Callable[[WorkItem], None]) -> None:
        self._clock = clock
        self._fire = fire
        self._armed: dict[WorkItem, tuple[Timer, datetime]] = {}

    def arm(self, item: WorkItem, deadline: datetime) -> None:
        """Queue ``item`` at ``deadline`` unless a timer for it is already due no later."""
        armed = self._armed.get(item)
        if armed is not None:
            if armed[1] <= deadline:
                return
            armed[0].cancel()
        timer = self._clock.call_at(max(deadline, self._clock.now()), functools.partial(self._on_fire, item))
        self._armed[item] = (timer, deadline)

    def cancel(self, item: WorkItem) -> None:
        armed = self._armed.pop(item, None)
        if armed is not None:
            armed[0].cancel()

    def deadline(self, item: WorkItem) -> datetime | None:
        armed = self._armed.get(item)
        return armed[1] if armed is not None else None

    def __len__(self) -> int:
        return len(self._armed)

    def _on_fire(self, item: WorkItem) -> None:
        self._armed.pop(item, None)
        self._fire(item)
