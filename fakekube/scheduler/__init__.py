"""kube-scheduler 1.33's default profile as a client of the controller runtime.

The shape is upstream's scheduling framework: a queue (activeQ ordered by priority,
back-off, unschedulable pods requeued by the cluster events their rejecting plugins
registered), a cache of node infos kept from the pods and nodes the scheduler has seen,
and one scheduling cycle per pod running the profile's plugins at each extension point
(framework.py). One small module per plugin under plugins/, registered in registry.py.
"""

from fakekube.scheduler.config import PluginSet, Profile, SchedulerConfig
from fakekube.scheduler.scheduler import Scheduler

__all__ = ["PluginSet", "Profile", "Scheduler", "SchedulerConfig"]
