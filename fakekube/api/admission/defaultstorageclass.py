"""DefaultStorageClass (plugin/pkg/admission/storage/storageclass/setdefault).

A new claim that names no class (neither ``storageClassName``, even "", nor the beta
annotation) gets the default StorageClass, if there is one (the newest of several).
"""

from __future__ import annotations

from fakekube.api.admission.attributes import CREATE, Attributes
from fakekube.api.admission.interfaces import Handler, PluginContext
from fakekube.objects.kinds import PERSISTENT_VOLUME_CLAIMS, STORAGE_CLASSES
from fakekube.objects.volumes import claim_has_class, default_class
from fakekube.store import Store


class DefaultStorageClass(Handler):
    name = "DefaultStorageClass"
    operations = frozenset((CREATE,))
    resources = {"admit": frozenset((PERSISTENT_VOLUME_CLAIMS,))}

    def __init__(self, store: Store) -> None:
        self.store = store

    def admit(self, a: Attributes) -> None:
        if a.rt.key != PERSISTENT_VOLUME_CLAIMS or a.subresource or a.obj is None or claim_has_class(a.obj):
            return
        chosen = default_class(self.store.list(STORAGE_CLASSES, "")[0])
        if chosen is not None:
            a.obj.setdefault("spec", {})["storageClassName"] = chosen["metadata"]["name"]


def new(context: PluginContext) -> DefaultStorageClass:
    return DefaultStorageClass(context.store)
