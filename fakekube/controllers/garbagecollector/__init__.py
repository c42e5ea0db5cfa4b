"""The garbage collector (kube-controller-manager's ``garbage-collector-controller``):
:mod:`.graph` holds what a store change means for it (pure), :mod:`.controller` the work."""

from fakekube.controllers.garbagecollector.controller import GarbageCollectorController

__all__ = ["GarbageCollectorController"]
