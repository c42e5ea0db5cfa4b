"""The engine: one thread, one defined order for all controller and kubelet work.

See :mod:`fakekube.engine.engine` (the loop), :mod:`fakekube.engine.workqueue` (the
queue) and :mod:`fakekube.engine.controller` (what a controller is).
"""

from fakekube.engine.controller import Context, Controller
from fakekube.engine.engine import ControllerError, Engine, EngineStuck
from fakekube.engine.workqueue import WorkQueue

__all__ = ["Context", "Controller", "ControllerError", "Engine", "EngineStuck", "WorkQueue"]
