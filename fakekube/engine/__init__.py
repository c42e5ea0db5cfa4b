"""The engine: one thread, one defined order for all controller and kubelet work, and the
controller runtime every controller is written against.

See :mod:`fakekube.engine.engine` (the loop), :mod:`fakekube.engine.controller` (what a
controller is and its :class:`Context`), :mod:`fakekube.engine.client` (the write client),
:mod:`fakekube.engine.timers` (one timer per key), :mod:`fakekube.engine.ratelimit`
(client-go's back-off), :mod:`fakekube.engine.events` (the event recorder) and
:mod:`fakekube.engine.enablement` (``--controllers`` enable lists).

The names below load with their module on first use: a cluster's config holds the engine's
settings (``RateLimits``), and reading a config — the first half of a phased boot, which
serves before the engine exists — should not load the loop, the client and the recorder.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fakekube.engine.client import Client
    from fakekube.engine.controller import Context, Controller
    from fakekube.engine.enablement import ControllerSpec, enabled_controllers, parse_enable_list
    from fakekube.engine.engine import ControllerError, Engine, EngineStopped, EngineStuck, Retry, freeze_startup_heap
    from fakekube.engine.ratelimit import RateLimits
    from fakekube.engine.workqueue import WorkQueue

#: Each public name and the module it lives in.
_HOMES = {
    "Client": "client", "Context": "controller", "Controller": "controller", "ControllerSpec": "enablement",
    "enabled_controllers": "enablement", "parse_enable_list": "enablement", "ControllerError": "engine",
    "Engine": "engine", "EngineStopped": "engine", "EngineStuck": "engine", "Retry": "engine",
    "freeze_startup_heap": "engine", "RateLimits": "ratelimit", "WorkQueue": "workqueue",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"fakekube.engine.{home}"), name)
