"""StorageObjectInUseProtection (plugin/pkg/admission/storage/storageobjectinuseprotection).

New claims, volumes and VolumeAttributesClasses (served from 1.34, where the feature is GA)
carry the finalizer their protection controller removes once nothing uses them
(fakekube/controllers/volume/protection.py).
"""

from __future__ import annotations

from fakekube.api.admission.attributes import CREATE, Attributes
from fakekube.api.admission.interfaces import Handler, PluginContext
from fakekube.objects.constants import FINALIZER_PV_PROTECTION, FINALIZER_PVC_PROTECTION, FINALIZER_VAC_PROTECTION
from fakekube.objects.kinds import PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, VOLUME_ATTRIBUTES_CLASSES

FINALIZERS: dict[tuple[str, str], str] = {PERSISTENT_VOLUME_CLAIMS: FINALIZER_PVC_PROTECTION,
                                          PERSISTENT_VOLUMES: FINALIZER_PV_PROTECTION,
                                          VOLUME_ATTRIBUTES_CLASSES: FINALIZER_VAC_PROTECTION}


class StorageObjectInUseProtection(Handler):
    name = "StorageObjectInUseProtection"
    operations = frozenset((CREATE,))
    resources = {"admit": frozenset(FINALIZERS)}

    def admit(self, a: Attributes) -> None:
        finalizer = FINALIZERS.get(a.rt.key)
        if finalizer is None or a.subresource or a.obj is None:
            return
        meta = a.obj.setdefault("metadata", {})
        if finalizer not in (meta.get("finalizers") or []):
            meta["finalizers"] = list(meta.get("finalizers") or []) + [finalizer]


def new(context: PluginContext) -> StorageObjectInUseProtection:
    return StorageObjectInUseProtection()
