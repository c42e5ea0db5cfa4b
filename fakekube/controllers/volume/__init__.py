"""kube-controller-manager's volume controllers: the PersistentVolume binder
(``persistentvolume-binder-controller``) and the in-use protection controllers
(``persistentvolumeclaim-protection-controller``, ``persistentvolume-protection-controller``,
``volumeattributesclass-protection-controller``)."""

from fakekube.controllers.volume.binder import PersistentVolumeBinder
from fakekube.controllers.volume.protection import PVCProtectionController, PVProtectionController, VACProtectionController

__all__ = ["PersistentVolumeBinder", "PVCProtectionController", "PVProtectionController", "VACProtectionController"]
