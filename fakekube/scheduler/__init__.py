"""kube-scheduler 1.33's default profile as a client of the controller runtime.

The shape is upstream's scheduling framework: a queue (activeQ ordered by priority,
back-off, unschedulable pods requeued by the cluster events their rejecting plugins
registered), a cache of node infos kept from the pods and nodes the scheduler has seen,
and one scheduling cycle per pod running the profile's plugins at each extension point
(framework.py). One small module per plugin under plugins/, registered in registry.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fakekube.scheduler.config import PluginSet, Profile, SchedulerConfig

if TYPE_CHECKING:
    from fakekube.scheduler.scheduler import Scheduler

__all__ = ["PluginSet", "Profile", "Scheduler", "SchedulerConfig"]


def __getattr__(name: str) -> Any:
    """``Scheduler`` loads on first use: a cluster's config holds a ``SchedulerConfig``, and
    reading a config (a phased boot's first half) should not load every plugin."""
    if name == "Scheduler":
        from fakekube.scheduler.scheduler import Scheduler
        return Scheduler
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
