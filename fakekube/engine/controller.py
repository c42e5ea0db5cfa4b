"""What a controller (or a simulated kubelet) is, as the engine sees it.

A controller names the resources whose changes concern it, maps each change to the
work keys it makes (usually ``namespace/name`` of the object to reconcile), and
reconciles one key at a time with a :class:`Context` that gives it the current cluster
time, the apiserver to write through, its own seeded random stream, and a way to ask
to be called again later on the virtual clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Iterable, Protocol

from fakekube.api.verbs.apiserver import APIServer
from fakekube.random import SeededRandom
from fakekube.store import Change

if TYPE_CHECKING:
    from fakekube.engine.engine import Engine


class Controller(Protocol):
    """A reconcile function with the routing the engine needs."""

    #: Unique, stable name (it seeds the controller's random stream and names it in errors).
    name: str
    #: (group, plural) pairs whose changes this controller reacts to.
    resources: tuple[tuple[str, str], ...]

    def keys_for(self, change: Change) -> Iterable[str]:
        """The work keys a store change makes for this controller (may be none)."""
        ...

    def reconcile(self, key: str, ctx: "Context") -> None:
        """Bring the world one step closer to what ``key`` wants. Writes go through ctx.api."""
        ...


@dataclass
class Context:
    """What a reconcile may use: time, the apiserver, randomness, timers."""

    engine: "Engine"
    controller: str
    key: str
    now: datetime
    api: APIServer
    rng: SeededRandom

    def requeue_after(self, delay_s: float) -> None:
        """Reconcile this key again ``delay_s`` seconds of cluster time from now."""
        self.engine.call_later(delay_s, self.controller, self.key)
