"""The storage object in-use protection controllers (upstream ``pkg/controller/volume/
pvcprotection``, ``pvprotection`` and ``vacprotection``).

The apiserver's StorageObjectInUseProtection admission gives every new claim the
``kubernetes.io/pvc-protection`` finalizer and every new volume ``kubernetes.io/pv-protection``.
These controllers add them to objects that lack them and, once such an object is being
deleted, remove them when nothing uses it any more:

* a claim is in use while a pod scheduled to a node (whatever its phase: the kubelet may
  still have it mounted) names it — or, for a generic ephemeral volume, while the pod
  that owns the claim is not shut down (deleted with grace 0); a pod that is deleted,
  finishes or is not yet scheduled re-checks its claims;
* a volume is in use while its phase is Bound;
* a VolumeAttributesClass is in use while a PV names it, or a claim names it in its spec,
  its status's current class or its pending modification's target.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from fakekube.engine import Context
from fakekube.objects.constants import FINALIZER_PV_PROTECTION, FINALIZER_PVC_PROTECTION, FINALIZER_VAC_PROTECTION
from fakekube.objects.kinds import PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, PODS, VOLUME_ATTRIBUTES_CLASSES
from fakekube.objects.volumes import VOLUME_BOUND, ephemeral_claim_error, pod_claims
from fakekube.store import DELETED, Change

Obj = dict[str, Any]


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _needs_finalizer(obj: Mapping[str, Any], finalizer: str) -> bool:
    """protectionutil.NeedToAddFinalizer."""
    return not _meta(obj).get("deletionTimestamp") and finalizer not in (_meta(obj).get("finalizers") or [])


def _deletion_candidate(obj: Mapping[str, Any], finalizer: str) -> bool:
    """protectionutil.IsDeletionCandidate."""
    return bool(_meta(obj).get("deletionTimestamp")) and finalizer in (_meta(obj).get("finalizers") or [])


def _with_finalizers(obj: Obj, finalizers: list[str]) -> Obj:
    meta = {**_meta(obj), "finalizers": finalizers}
    if not finalizers:
        meta.pop("finalizers")
    return dict(obj, metadata=meta)


def _pod_is_shut_down(pod: Mapping[str, Any]) -> bool:
    """podIsShutDown: done with by the kubelet (deleted with grace 0) or force-deleted."""
    meta = _meta(pod)
    return bool(meta.get("deletionTimestamp")) and meta.get("deletionGracePeriodSeconds") == 0


def pod_uses_claim(pod: Mapping[str, Any], pvc: Mapping[str, Any]) -> bool:
    """podUsesPVC: only scheduled pods count (the kubelet never starts a pod whose claim is
    being deleted)."""
    if not (pod.get("spec") or {}).get("nodeName"):
        return False
    name = _meta(pvc).get("name")
    for claim, ephemeral in pod_claims(pod):
        if claim != name:
            continue
        if not ephemeral or (not _pod_is_shut_down(pod) and not ephemeral_claim_error(pod, pvc)):
            return True
    return False


def _pod_terminated(pod: Mapping[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


class PVCProtectionController:
    """Holds a deleted claim until no scheduled pod uses it."""

    name = "persistentvolumeclaim-protection-controller"
    resources = (PERSISTENT_VOLUME_CLAIMS, PODS)

    def keys_for(self, change: Change) -> Iterable[str]:
        if (change.group, change.resource) == (PERSISTENT_VOLUME_CLAIMS.group, PERSISTENT_VOLUME_CLAIMS.plural):
            pvc = change.obj
            if change.type != DELETED and (_needs_finalizer(pvc, FINALIZER_PVC_PROTECTION)
                                             or _deletion_candidate(pvc, FINALIZER_PVC_PROTECTION)):
                return [f"{change.namespace}/{change.name}"]
            return []
        keys: list[str] = []
        pods = [(change.obj, change.type == DELETED)]
        if change.prev is not None and _meta(change.prev).get("uid") != _meta(change.obj).get("uid"):
            pods.append((change.prev, True))
        for pod, deleted in pods:
            if deleted or _pod_terminated(pod) or not (pod.get("spec") or {}).get("nodeName") or \
                    _meta(pod).get("deletionTimestamp"):
                keys += [f"{change.namespace}/{claim}" for claim, _ in pod_claims(pod)]
        return list(dict.fromkeys(keys))

    def reconcile(self, key: str, ctx: Context) -> None:
        namespace, name = key.split("/", 1)
        pvc = ctx.get(PERSISTENT_VOLUME_CLAIMS, name, namespace)
        if pvc is None:
            return
        finalizers = list(_meta(pvc).get("finalizers") or [])
        if _deletion_candidate(pvc, FINALIZER_PVC_PROTECTION):
            if not any(pod_uses_claim(pod, pvc) for pod in ctx.list(PODS, namespace)):
                ctx.client.update(PERSISTENT_VOLUME_CLAIMS, _with_finalizers(
                    pvc, [f for f in finalizers if f != FINALIZER_PVC_PROTECTION]))
        elif _needs_finalizer(pvc, FINALIZER_PVC_PROTECTION):
            ctx.client.update(PERSISTENT_VOLUME_CLAIMS, _with_finalizers(pvc, finalizers + [FINALIZER_PVC_PROTECTION]))


class PVProtectionController:
    """Holds a deleted volume while it is Bound."""

    name = "persistentvolume-protection-controller"
    resources = (PERSISTENT_VOLUMES,)

    def keys_for(self, change: Change) -> Iterable[str]:
        pv = change.obj
        if change.type != DELETED and (_needs_finalizer(pv, FINALIZER_PV_PROTECTION)
                                         or _deletion_candidate(pv, FINALIZER_PV_PROTECTION)):
            return [change.name]
        return []

    def reconcile(self, key: str, ctx: Context) -> None:
        pv = ctx.get(PERSISTENT_VOLUMES, key)
        if pv is None:
            return
        finalizers = list(_meta(pv).get("finalizers") or [])
        if _deletion_candidate(pv, FINALIZER_PV_PROTECTION):
            if (pv.get("status") or {}).get("phase") != VOLUME_BOUND:
                ctx.client.update(PERSISTENT_VOLUMES, _with_finalizers(
                    pv, [f for f in finalizers if f != FINALIZER_PV_PROTECTION]))
        elif _needs_finalizer(pv, FINALIZER_PV_PROTECTION):
            ctx.client.update(PERSISTENT_VOLUMES, _with_finalizers(pv, finalizers + [FINALIZER_PV_PROTECTION]))


def classes_named(obj: Mapping[str, Any]) -> list[str]:
    """The VolumeAttributesClasses a claim or volume names (the controller's index keys)."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    names = [spec.get("volumeAttributesClassName"), status.get("currentVolumeAttributesClassName"),
             (status.get("modifyVolumeStatus") or {}).get("targetVolumeAttributesClassName")]
    return list(dict.fromkeys(name for name in names if name))


class VACProtectionController:
    """Holds a deleted VolumeAttributesClass while a claim or volume names it."""

    name = "volumeattributesclass-protection-controller"

    def __init__(self, enabled: bool = True) -> None:
        """``enabled``: the release serves VolumeAttributesClasses (from 1.34; upstream runs the
        controller only under its feature gate). Off, it watches nothing."""
        self.resources = (VOLUME_ATTRIBUTES_CLASSES, PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES) if enabled else ()

    def keys_for(self, change: Change) -> Iterable[str]:
        if (change.group, change.resource) == (VOLUME_ATTRIBUTES_CLASSES.group, VOLUME_ATTRIBUTES_CLASSES.plural):
            vac = change.obj
            if change.type != DELETED and (_needs_finalizer(vac, FINALIZER_VAC_PROTECTION)
                                             or _deletion_candidate(vac, FINALIZER_VAC_PROTECTION)):
                return [change.name]
            return []
        # A claim or volume that stops naming a class (or goes) may free it.
        before = classes_named(change.prev) if change.prev is not None else []
        after = [] if change.type == DELETED else classes_named(change.obj)
        return [name for name in before if name not in after]

    def reconcile(self, key: str, ctx: Context) -> None:
        vac = ctx.get(VOLUME_ATTRIBUTES_CLASSES, key)
        if vac is None:
            return
        finalizers = list(_meta(vac).get("finalizers") or [])
        if _deletion_candidate(vac, FINALIZER_VAC_PROTECTION):
            if not self._in_use(key, ctx):
                ctx.client.update(VOLUME_ATTRIBUTES_CLASSES, _with_finalizers(
                    vac, [f for f in finalizers if f != FINALIZER_VAC_PROTECTION]))
        elif _needs_finalizer(vac, FINALIZER_VAC_PROTECTION):
            ctx.client.update(VOLUME_ATTRIBUTES_CLASSES, _with_finalizers(vac, finalizers + [FINALIZER_VAC_PROTECTION]))

    @staticmethod
    def _in_use(name: str, ctx: Context) -> bool:
        """isBeingUsed: volumes first, then claims in every namespace."""
        return any(name in classes_named(obj) for kind in (PERSISTENT_VOLUMES, PERSISTENT_VOLUME_CLAIMS)
                   for obj in ctx.list(kind))
