"""The engine: one thread, one defined order for all controller and kubelet work, and the
controller runtime every controller is written against.

See :mod:`fakekube.engine.engine` (the loop), :mod:`fakekube.engine.controller` (what a
controller is and its :class:`Context`), :mod:`fakekube.engine.client` (the write client),
:mod:`fakekube.engine.timers` (one timer per key), :mod:`fakekube.engine.ratelimit`
(client-go's back-off), :mod:`fakekube.engine.events` (the event recorder) and
:mod:`fakekube.engine.enablement` (``--controllers`` enable lists).
"""

from fakekube.engine.client import Client
from fakekube.engine.controller import Context, Controller
from fakekube.engine.enablement import ControllerSpec, enabled_controllers, parse_enable_list
from fakekube.engine.engine import ControllerError, Engine, EngineStopped, EngineStuck, Retry, freeze_startup_heap
from fakekube.engine.ratelimit import RateLimits
from fakekube.engine.workqueue import WorkQueue

__all__ = ["Client", "Context", "Controller", "ControllerError", "ControllerSpec", "Engine", "EngineStopped",
           "EngineStuck", "RateLimits", "Retry", "WorkQueue", "enabled_controllers", "freeze_startup_heap", "parse_enable_list"]
