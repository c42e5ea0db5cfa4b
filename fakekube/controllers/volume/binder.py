"""The PersistentVolume binder: binds claims to volumes and releases volumes whose claims
went (upstream ``pkg/controller/volume/persistentvolume``: ``pv_controller.go``,
``pv_controller_base.go``, ``index.go``; 1.33).

``syncClaim``: a claim without ``pv.kubernetes.io/bind-completed`` is unbound —

* naming no volume: the best Available PV is bound to it (index.go: access-mode groups
  fewest modes first, then the smallest PV of its class, selector and volume mode; a
  WaitForFirstConsumer claim only takes a PV the scheduler pre-bound to it). With none, a
  claim without a class gets the default class (RetroactiveDefaultStorageClass, GA); a
  WaitForFirstConsumer claim with no selected node waits (``WaitForFirstConsumer`` /
  ``WaitForPodScheduled`` events); a claim with a class asks its external provisioner
  (``volume.kubernetes.io/storage-provisioner`` and the beta annotation, the
  ``ExternalProvisioning`` event); a claim without a class gets ``FailedBinding``;
* naming a volume (pre-bound by the user): bound once the volume is free and fits
  (``VolumeMismatch`` when it does not, ``FailedBinding`` when it is taken).

A bound claim whose volume went or was bound elsewhere is ``Lost`` (``ClaimLost``,
``ClaimMisbound``). ``syncVolume``: a volume without a claim is Available; one whose claim is
gone is Released and then reclaimed by its policy — Retain keeps it, Delete leaves a
dynamically provisioned volume to its external provisioner (and fails the others as
upstream's in-tree deleters do), Recycle fails (no recycler). A bind writes the PV's
``claimRef`` and phase, then the claim's ``volumeName``, annotations and status (phase,
access modes, capacity).

Every claim and volume is synced again every 15 s (``--pvclaimbinder-sync-period``), as
upstream's resync: an unbound claim's events repeat at that pace. A cluster with neither
skips the pass, which would queue nothing (:meth:`PersistentVolumeBinder.quiet`).

Work keys: ``claim:<namespace>/<name>``, ``volume:<name>`` and the periodic ``resync``.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

from fakekube.api.machinery.errors import ApiError
from fakekube.engine import Context
from fakekube.objects.kinds import PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, PODS, STORAGE_CLASSES
from fakekube.objects.syntax import go_quote
from fakekube.objects.volumes import (
    ANN_BETA_STORAGE_PROVISIONER, ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, ANN_DYNAMICALLY_PROVISIONED,
    ANN_SELECTED_NODE, ANN_STORAGE_PROVISIONER, CLAIM_BOUND, CLAIM_LOST, CLAIM_PENDING, RECLAIM_DELETE,
    RECLAIM_RECYCLE, RECLAIM_RETAIN, VOLUME_AVAILABLE, VOLUME_BOUND, VOLUME_FAILED, VOLUME_RELEASED,
    WAIT_FOR_FIRST_CONSUMER, best_match_for_claim, bind_volume_to_claim, claim_class, claim_has_class,
    default_class, is_volume_bound_to_claim, pod_uses_claim, volume_claim_mismatch, volume_mode_mismatch,
)
from fakekube.store import DELETED, Change

Obj = dict[str, Any]

COMPONENT = "persistentvolume-controller"
CLAIM_PREFIX = "claim:"
VOLUME_PREFIX = "volume:"
RESYNC = "resync"
#: kube-controller-manager's ``--pvclaimbinder-sync-period``.
RESYNC_PERIOD_S = 15.0
#: The in-tree hostPath deleter only removes directories under /tmp.
_HOST_PATH_DELETABLE = re.compile(r"/tmp/.+")



def enqueue_every_claim_and_volume(ctx: Context) -> None:
    """A resync: every claim (``claim:<ns>/<name>``) and volume (``volume:<name>``) again."""
    for pvc in ctx.list(PERSISTENT_VOLUME_CLAIMS):
        ctx.enqueue(f"{CLAIM_PREFIX}{pvc['metadata'].get('namespace', '')}/{pvc['metadata']['name']}")
    for pv in ctx.list(PERSISTENT_VOLUMES):
        ctx.enqueue(f"{VOLUME_PREFIX}{pv['metadata']['name']}")

class PersistentVolumeBinder:
    """Binds claims and volumes and reclaims released volumes (see the module docstring)."""

    name = "persistentvolume-binder-controller"
    resources = (PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES)
    periodic = ((RESYNC, RESYNC_PERIOD_S),)

    # -- routing (pure) ------------------------------------------------------------------
    def keys_for(self, change: Change) -> Iterable[str]:
        """As upstream's informer handlers: a claim change syncs the claim (a deleted one
        also its volume, which is then released); a volume change syncs the volume (a
        deleted one also its claim, which is then lost). The volume's sync enqueues its
        claim when the claim has yet to finish the binding."""
        keys: list[str] = []
        deleted = change.type == DELETED
        if (change.group, change.resource) == (PERSISTENT_VOLUME_CLAIMS.group, PERSISTENT_VOLUME_CLAIMS.plural):
            keys.append(f"{CLAIM_PREFIX}{change.namespace}/{change.name}")
            volume = (change.obj.get("spec") or {}).get("volumeName")
            if deleted and volume:
                keys.append(f"{VOLUME_PREFIX}{volume}")
        elif (change.group, change.resource) == (PERSISTENT_VOLUMES.group, PERSISTENT_VOLUMES.plural):
            keys.append(f"{VOLUME_PREFIX}{change.name}")
            ref = (change.obj.get("spec") or {}).get("claimRef") or {}
            if deleted and ref.get("name"):
                keys.append(f"{CLAIM_PREFIX}{ref.get('namespace') or ''}/{ref['name']}")
        return keys

    # -- work ----------------------------------------------------------------------------
    def quiet(self, key: str, ctx: Context) -> bool:
        """A resync with no claim and no volume to sync queues nothing (engine.QuietPeriodic)."""
        return not ctx.count(PERSISTENT_VOLUME_CLAIMS) and not ctx.count(PERSISTENT_VOLUMES)

    def reconcile(self, key: str, ctx: Context) -> None:
        if key == RESYNC:
            enqueue_every_claim_and_volume(ctx)
        elif key.startswith(CLAIM_PREFIX):
            namespace, name = key[len(CLAIM_PREFIX):].split("/", 1)
            claim = ctx.get(PERSISTENT_VOLUME_CLAIMS, name, namespace)
            if claim is not None:
                _Sync(ctx).claim(claim)
        elif key.startswith(VOLUME_PREFIX):
            volume = ctx.get(PERSISTENT_VOLUMES, key[len(VOLUME_PREFIX):])
            if volume is not None:
                _Sync(ctx).volume(volume)


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _annotations(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return _meta(obj).get("annotations") or {}


def _key(pvc: Mapping[str, Any]) -> str:
    return f"{_meta(pvc).get('namespace', '')}/{_meta(pvc).get('name', '')}"


class _Sync:
    """One sync of a claim or a volume, with the writes upstream's helpers make."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def event(self, obj: Obj, kind: str, event_type: str, reason: str, message: str) -> None:
        self.ctx.record_event(obj, kind, event_type, reason, message, COMPONENT)

    # -- claims --------------------------------------------------------------------------
    def claim(self, pvc: Obj) -> None:
        """syncClaim."""
        if ANN_BIND_COMPLETED not in _annotations(pvc):
            self._unbound_claim(pvc)
        else:
            self._bound_claim(pvc)

    def _unbound_claim(self, pvc: Obj) -> None:
        volume_name = (pvc.get("spec") or {}).get("volumeName") or ""
        if not volume_name:
            self._unbound_claim_any_volume(pvc)
            return
        pv = self.ctx.get(PERSISTENT_VOLUMES, volume_name)
        if pv is None:
            self._claim_status(pvc, CLAIM_PENDING, None)
        elif not (pv.get("spec") or {}).get("claimRef"):
            problem = volume_claim_mismatch(pv, pvc)
            if problem:
                self.event(pvc, "PersistentVolumeClaim", "Warning", "VolumeMismatch",
                           f"Cannot bind to requested volume {go_quote(volume_name)}: {problem}")
                self._claim_status(pvc, CLAIM_PENDING, None)
            else:
                self._bind(pv, pvc)
        elif is_volume_bound_to_claim(pv, pvc):
            self._bind(pv, pvc)
        else:
            self.event(pvc, "PersistentVolumeClaim", "Warning", "FailedBinding",
                       f"volume {go_quote(volume_name)} already bound to a different claim.")
            if ANN_BOUND_BY_CONTROLLER not in _annotations(pvc):
                self._claim_status(pvc, CLAIM_PENDING, None)

    def _unbound_claim_any_volume(self, pvc: Obj) -> None:
        delay = self._delay_binding(pvc)
        if delay is None:
            return
        try:
            pv = best_match_for_claim(pvc, self.ctx.list(PERSISTENT_VOLUMES), delay)
        except ValueError:
            return  # a bad selector or an unsupported attributes class: upstream logs and waits
        if pv is not None:
            self._bind(dict(pv), pvc)
            return
        if self._assign_default_class(pvc):
            return
        if delay and ANN_SELECTED_NODE not in _annotations(pvc):
            self._waiting_for_consumer(pvc)
        elif claim_class(pvc):
            self._provision(pvc)
            return
        else:
            self.event(pvc, "PersistentVolumeClaim", "Normal", "FailedBinding",
                       "no persistent volumes available for this claim and no storage class is set")
        self._claim_status(pvc, CLAIM_PENDING, None)

    def _delay_binding(self, pvc: Obj) -> bool | None:
        """IsDelayBindingMode; None when the class has no binding mode (upstream's error)."""
        name = claim_class(pvc)
        storage_class = self.ctx.get(STORAGE_CLASSES, name) if name else None
        if storage_class is None:
            return False
        mode = storage_class.get("volumeBindingMode")
        return None if not mode else mode == WAIT_FOR_FIRST_CONSUMER

    def _assign_default_class(self, pvc: Obj) -> bool:
        """assignDefaultStorageClass: a claim created with no class (before any default
        existed) gets the default class now; True when it was written."""
        if claim_has_class(pvc):
            return False
        chosen = default_class(self.ctx.list(STORAGE_CLASSES))
        if chosen is None:
            return False
        self.ctx.client.update(PERSISTENT_VOLUME_CLAIMS, dict(
            pvc, spec={**(pvc.get("spec") or {}), "storageClassName": _meta(chosen)["name"]}))
        return True

    def _waiting_for_consumer(self, pvc: Obj) -> None:
        """emitEventForUnboundDelayBindingClaim: which unscheduled pods it waits for, if any."""
        namespace = _meta(pvc).get("namespace") or ""
        waiting = [_meta(pod)["name"] for pod in self.ctx.list(PODS, namespace)
                   if pod_uses_claim(pod, pvc) and not (pod.get("spec") or {}).get("nodeName")
                   and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
        if not waiting:
            self.event(pvc, "PersistentVolumeClaim", "Normal", "WaitForFirstConsumer",
                       "waiting for first consumer to be created before binding")
        elif len(waiting) == 1:
            self.event(pvc, "PersistentVolumeClaim", "Normal", "WaitForPodScheduled",
                       f"waiting for pod {waiting[0]} to be scheduled")
        else:
            self.event(pvc, "PersistentVolumeClaim", "Normal", "WaitForPodScheduled",
                       f"waiting for pods {','.join(waiting)} to be scheduled")

    def _provision(self, pvc: Obj) -> None:
        """provisionClaim for an external provisioner: annotate the claim, then say so."""
        name = claim_class(pvc)
        storage_class = self.ctx.get(STORAGE_CLASSES, name)
        if storage_class is None:
            self.event(pvc, "PersistentVolumeClaim", "Warning", "ProvisioningFailed",
                       f'storageclass.storage.k8s.io {go_quote(name)} not found')
            return
        provisioner = storage_class.get("provisioner") or ""
        if provisioner.startswith("kubernetes.io/"):
            # No in-tree provisioner is left in 1.33's controller-manager.
            self.event(pvc, "PersistentVolumeClaim", "Warning", "ProvisioningFailed",
                       f"no volume plugin matched name: {provisioner}")
            return
        annotations = _annotations(pvc)
        if annotations.get(ANN_STORAGE_PROVISIONER) != provisioner or \
                annotations.get(ANN_BETA_STORAGE_PROVISIONER) != provisioner:
            pvc = self.ctx.client.update(PERSISTENT_VOLUME_CLAIMS, dict(pvc, metadata={
                **_meta(pvc), "annotations": {**annotations, ANN_STORAGE_PROVISIONER: provisioner,
                                              ANN_BETA_STORAGE_PROVISIONER: provisioner}}))
        self.event(pvc, "PersistentVolumeClaim", "Normal", "ExternalProvisioning",
                   f"Waiting for a volume to be created either by the external provisioner '{provisioner}' or "
                   "manually by the system administrator. If volume creation is delayed, please verify that the "
                   "provisioner is running and correctly registered.")

    def _bound_claim(self, pvc: Obj) -> None:
        volume_name = (pvc.get("spec") or {}).get("volumeName") or ""
        if not volume_name:
            self._lose(pvc, "ClaimLost", "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!")
            return
        pv = self.ctx.get(PERSISTENT_VOLUMES, volume_name)
        if pv is None:
            self._lose(pvc, "ClaimLost", "Bound claim has lost its PersistentVolume. Data on the volume is lost!")
        elif not (pv.get("spec") or {}).get("claimRef") or is_volume_bound_to_claim(pv, pvc):
            self._bind(pv, pvc)
        else:
            self._lose(pvc, "ClaimMisbound", "Two claims are bound to the same volume, this one is bound incorrectly")

    def _lose(self, pvc: Obj, reason: str, message: str) -> None:
        """updateClaimStatusWithEvent(Lost): the event only when the phase changes."""
        if (pvc.get("status") or {}).get("phase") == CLAIM_LOST:
            return
        self._claim_status(pvc, CLAIM_LOST, None)
        self.event(pvc, "PersistentVolumeClaim", "Warning", reason, message)

    # -- binding -------------------------------------------------------------------------
    def _bind(self, pv: Obj, pvc: Obj) -> None:
        """bind: the volume's claimRef and phase, then the claim's volumeName and status."""
        bound_pv, dirty = bind_volume_to_claim(pv, pvc)
        if dirty:
            pv = self.ctx.client.update(PERSISTENT_VOLUMES, bound_pv)
        pv = self._volume_phase(pv, VOLUME_BOUND)
        pvc = self._bind_claim(pvc, pv)
        self._claim_status(pvc, CLAIM_BOUND, pv)

    def _bind_claim(self, pvc: Obj, pv: Obj) -> Obj:
        """bindClaimToVolume: volumeName (bound-by-controller when we set it), bind-completed."""
        name = _meta(pv)["name"]
        spec, annotations = dict(pvc.get("spec") or {}), dict(_annotations(pvc))
        dirty = False
        if spec.get("volumeName") != name:
            spec["volumeName"] = name
            annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
            dirty = True
        if ANN_BIND_COMPLETED not in annotations:
            annotations[ANN_BIND_COMPLETED] = "yes"
            dirty = True
        if not dirty:
            return pvc
        return self.ctx.client.update(PERSISTENT_VOLUME_CLAIMS,
                                      dict(pvc, spec=spec, metadata={**_meta(pvc), "annotations": annotations}))

    def _claim_status(self, pvc: Obj, phase: str, pv: Obj | None) -> Obj:
        """updateClaimStatus: the phase, and the volume's access modes and capacity (the
        capacity only as the claim becomes Bound; both cleared without a volume)."""
        old = pvc.get("status") or {}
        status = dict(old, phase=phase)
        if pv is None:
            status.pop("accessModes", None)
            status.pop("capacity", None)
        else:
            pv_spec = pv.get("spec") or {}
            status["accessModes"] = list(pv_spec.get("accessModes") or [])
            if old.get("phase") != phase and "storage" in (pv_spec.get("capacity") or {}):
                status["capacity"] = dict(pv_spec.get("capacity") or {})
        if status == old:
            return pvc
        return self.ctx.client.update_status(PERSISTENT_VOLUME_CLAIMS, dict(pvc, status=status))

    # -- volumes -------------------------------------------------------------------------
    def volume(self, pv: Obj) -> None:
        """syncVolume."""
        ref = (pv.get("spec") or {}).get("claimRef") or {}
        if not ref or not ref.get("uid"):
            self._volume_phase(pv, VOLUME_AVAILABLE)  # free, or pre-bound by the user
            return
        pvc = self.ctx.get(PERSISTENT_VOLUME_CLAIMS, ref.get("name") or "", ref.get("namespace") or "")
        if pvc is not None and _meta(pvc).get("uid") != ref.get("uid"):
            pvc = None  # a namesake: the claim the volume was bound to is gone
        if pvc is None:
            self._release(pv)
            return
        claimed = (pvc.get("spec") or {}).get("volumeName") or ""
        if not claimed:
            if volume_mode_mismatch(pvc, pv):
                self._mode_mismatch(pv, pvc)
            else:
                self.ctx.enqueue(f"{CLAIM_PREFIX}{_key(pvc)}")
        elif claimed == _meta(pv)["name"]:
            self._volume_phase(pv, VOLUME_BOUND)
        elif ANN_DYNAMICALLY_PROVISIONED in _annotations(pv) and \
                (pv.get("spec") or {}).get("persistentVolumeReclaimPolicy") == RECLAIM_DELETE:
            self._release(pv)  # provisioned for a claim that got another volume
        else:
            self._unbind(pv)

    def _mode_mismatch(self, pv: Obj, pvc: Obj) -> None:
        self.event(pv, "PersistentVolume", "Warning", "VolumeMismatch",
                   f"Cannot bind PersistentVolume to requested PersistentVolumeClaim "
                   f"{go_quote(_meta(pvc)['name'])} due to incompatible volumeMode.")
        self.event(pvc, "PersistentVolumeClaim", "Warning", "VolumeMismatch",
                   f"Cannot bind PersistentVolume {go_quote(_meta(pv)['name'])} to requested "
                   "PersistentVolumeClaim due to incompatible volumeMode.")

    def _release(self, pv: Obj) -> None:
        """The claim is gone: Released (Failed stays Failed), then the reclaim policy."""
        if (pv.get("status") or {}).get("phase") not in (VOLUME_RELEASED, VOLUME_FAILED):
            pv = self._volume_phase(pv, VOLUME_RELEASED)
        policy = (pv.get("spec") or {}).get("persistentVolumeReclaimPolicy") or RECLAIM_RETAIN
        if policy == RECLAIM_RECYCLE:
            self._fail(pv, "VolumeFailedRecycle", "No recycler plugin found for the volume!")
        elif policy == RECLAIM_DELETE:
            self._delete(pv)

    def _delete(self, pv: Obj) -> None:
        """deleteVolumeOperation: an external provisioner's volume is left to it; an in-tree
        one is deleted by its plugin (hostPath under /tmp) or fails as upstream's do."""
        if (pv.get("status") or {}).get("phase") == VOLUME_FAILED or _meta(pv).get("deletionTimestamp"):
            return
        provisioner = _annotations(pv).get(ANN_DYNAMICALLY_PROVISIONED) or ""
        if provisioner and not provisioner.startswith("kubernetes.io/"):
            return  # the external provisioner deletes it
        host_path = (pv.get("spec") or {}).get("hostPath")
        if host_path is None:
            self._fail(pv, "VolumeFailedDelete", f"error getting deleter volume plugin for volume "
                       f"{go_quote(_meta(pv)['name'])}: no deletable volume plugin matched")
        elif not _HOST_PATH_DELETABLE.fullmatch(host_path.get("path") or ""):
            self._fail(pv, "VolumeFailedDelete",
                       f"host_path deleter only supports /tmp/.+ but received provided {host_path.get('path') or ''}")
        else:
            try:
                self.ctx.client.delete(PERSISTENT_VOLUMES, _meta(pv)["name"], uid=_meta(pv).get("uid"))
            except ApiError as err:
                if err.code != 404:
                    raise

    def _fail(self, pv: Obj, reason: str, message: str) -> None:
        """updateVolumePhaseWithEvent(Failed)."""
        if (pv.get("status") or {}).get("phase") == VOLUME_FAILED:
            return
        pv = self._volume_phase(pv, VOLUME_FAILED, message)
        self.event(pv, "PersistentVolume", "Warning", reason, message)

    def _unbind(self, pv: Obj) -> None:
        """unbindVolume: the controller's binding is undone; a user's pre-binding keeps its
        claimRef without the uid. Then Available."""
        spec, annotations = dict(pv.get("spec") or {}), dict(_annotations(pv))
        if ANN_BOUND_BY_CONTROLLER in annotations:
            spec.pop("claimRef", None)
            annotations.pop(ANN_BOUND_BY_CONTROLLER)
        else:
            spec["claimRef"] = {k: v for k, v in (spec.get("claimRef") or {}).items() if k != "uid"}
        meta = {**_meta(pv), "annotations": annotations}
        if not annotations:
            meta.pop("annotations")
        pv = self.ctx.client.update(PERSISTENT_VOLUMES, dict(pv, spec=spec, metadata=meta))
        self._volume_phase(pv, VOLUME_AVAILABLE)

    def _volume_phase(self, pv: Obj, phase: str, message: str = "") -> Obj:
        """updateVolumePhase: written only when the phase or message changes."""
        old = pv.get("status") or {}
        if old.get("phase") == phase and (old.get("message") or "") == message:
            return pv
        status = {k: v for k, v in old.items() if k != "message"}
        status["phase"] = phase
        if message:
            status["message"] = message
        return self.ctx.client.update_status(PERSISTENT_VOLUMES, dict(pv, status=status))
