"""The in-tree plugins by upstream name: the one place a plugin is registered.

A profile names plugins from this table (config.py's defaults list them in upstream's
order); each entry builds the plugin from the framework handle and its pluginConfig args.
"""

from __future__ import annotations

from typing import Mapping

from fakekube.scheduler.plugins.balancedallocation import NodeResourcesBalancedAllocation
from fakekube.scheduler.plugins.defaultbinder import DefaultBinder
from fakekube.scheduler.plugins.defaultpreemption import DefaultPreemption
from fakekube.scheduler.plugins.imagelocality import ImageLocality
from fakekube.scheduler.plugins.interpodaffinity import InterPodAffinity
from fakekube.scheduler.plugins.nodeaffinity import NodeAffinity
from fakekube.scheduler.plugins.nodename import NodeName
from fakekube.scheduler.plugins.nodeports import NodePorts
from fakekube.scheduler.plugins.noderesourcesfit import NodeResourcesFit
from fakekube.scheduler.plugins.nodeunschedulable import NodeUnschedulable
from fakekube.scheduler.plugins.nodevolumelimits import NodeVolumeLimits
from fakekube.scheduler.plugins.podtopologyspread import PodTopologySpread
from fakekube.scheduler.plugins.prioritysort import PrioritySort
from fakekube.scheduler.plugins.schedulinggates import SchedulingGates
from fakekube.scheduler.plugins.tainttoleration import TaintToleration
from fakekube.scheduler.plugins.volumebinding import VolumeBinding
from fakekube.scheduler.plugins.volumerestrictions import VolumeRestrictions
from fakekube.scheduler.plugins.volumezone import VolumeZone
from fakekube.scheduler.runtime import PluginFactory

IN_TREE: Mapping[str, PluginFactory] = {
    "SchedulingGates": SchedulingGates,
    "PrioritySort": PrioritySort,
    "NodeUnschedulable": NodeUnschedulable,
    "NodeName": NodeName,
    "TaintToleration": TaintToleration,
    "NodeAffinity": NodeAffinity,
    "NodePorts": NodePorts,
    "NodeResourcesFit": NodeResourcesFit,
    "NodeResourcesBalancedAllocation": NodeResourcesBalancedAllocation,
    "ImageLocality": ImageLocality,
    "VolumeRestrictions": VolumeRestrictions,
    "NodeVolumeLimits": NodeVolumeLimits,
    "VolumeBinding": VolumeBinding,
    "VolumeZone": VolumeZone,
    "PodTopologySpread": PodTopologySpread,
    "InterPodAffinity": InterPodAffinity,
    "DefaultPreemption": DefaultPreemption,
    "DefaultBinder": DefaultBinder,
}
