"""NodeVolumeLimits: a node takes no more CSI volumes of a driver than its attach limit.

Upstream: ``pkg/scheduler/framework/plugins/nodevolumelimits/csi.go`` (CSILimits). A
pod's claims are counted per CSI driver — a bound claim by its PV's ``spec.csi`` driver
and volume handle, an unbound one by its StorageClass's provisioner — together with the
distinct volumes the node's pods already use; a driver whose count would pass the
node's limit rejects the node ("node(s) exceed max volume count").

Limits come from the node's ``status.allocatable["attachable-volumes-csi-<driver>"]``
(1.33 still reads them there) and from CSINode ``spec.drivers[].allocatable.count``.
fakekube serves no CSINode, so only the allocatable entries count; a node without them
has no limit, exactly as upstream treats a node without a CSINode. In-tree volumes
(GCE PD, EBS, …) would count only once CSI migration is recorded on the CSINode, so
here they never do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from fakekube.objects.kinds import PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, STORAGE_CLASSES
from fakekube.objects.syntax import go_quote
from fakekube.objects.volumes import (
    ATTACHABLE_VOLUMES_PREFIX, claim_class, csi_attach_limit_key, ephemeral_claim_error, pod_claims, pod_uses_claim,
)
from fakekube.scheduler.framework import (
    ASSIGNED_POD, CSI_NODE, PVC, SKIP, UNSCHEDULED_POD, Action, ClusterEvent, CycleState, EventHint, Hint,
    NodeInfo, PodInfo, Status, error, unresolvable, unschedulable,
)

if TYPE_CHECKING:
    from fakekube.scheduler.runtime import Handle

Obj = dict[str, Any]

NAME = "NodeVolumeLimits"
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"

#: Inline volume sources csi-translation-lib can migrate (IsInlineMigratable): they keep
#: PreFilter from skipping, as upstream, though without a CSINode they never count.
_MIGRATABLE_INLINE = ("gcePersistentDisk", "awsElasticBlockStore", "cinder", "azureDisk", "azureFile",
                      "vsphereVolume", "portworxVolume")
#: In-tree provisioners whose claims count only once migrated (never, without a CSINode).
_MIGRATABLE_PROVISIONERS = frozenset({
    "kubernetes.io/gce-pd", "kubernetes.io/aws-ebs", "kubernetes.io/cinder", "kubernetes.io/azure-disk",
    "kubernetes.io/azure-file", "kubernetes.io/vsphere-volume", "kubernetes.io/portworx-volume"})
#: Stands in for upstream's random per-scheduler prefix of an unbound claim's made-up volume handle.
_UNBOUND_HANDLE_PREFIX = "fakekube-unbound"


class _LookupError(Exception):
    """A new pod's claim could not be read: the status the Filter returns."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


class NodeVolumeLimits:
    name = NAME

    def __init__(self, handle: "Handle", args: Mapping[str, Any]) -> None:
        self.handle = handle

    def pre_filter(self, state: CycleState, info: PodInfo) -> tuple[set[str] | None, Status | None]:
        """Skip pods without claims; otherwise work out the pod's own CSI volumes once (upstream
        does it per node, but without a CSINode the answer is the same on every node)."""
        if not any(_may_count(volume) for volume in (info.pod.get("spec") or {}).get("volumes") or []):
            return None, SKIP
        try:
            state.data[NAME] = self._attachable_volumes(info.pod, new_pod=True)
        except _LookupError as failed:
            state.data[NAME] = failed.status
        return None, None

    def filter(self, state: CycleState, info: PodInfo, node: NodeInfo) -> Status | None:
        mine: dict[str, str] | Status = state.data[NAME]
        if isinstance(mine, Status):
            return mine
        if not mine:
            return None
        limits = {name: count for name, count in node.allocatable.scalar.items()
                  if name.startswith(ATTACHABLE_VOLUMES_PREFIX)}
        if not limits:
            return None
        attached: dict[str, str] = {}
        try:
            for other in node.pods.values():
                attached.update(self._attachable_volumes(other.pod, new_pod=False))
        except _LookupError as failed:
            return failed.status
        return _over_limit(dict(mine), attached, limits)

    def _attachable_volumes(self, pod: Obj, new_pod: bool) -> dict[str, str]:
        """filterAttachableVolumes: "driver/handle" -> limit key for the pod's CSI claims."""
        ctx = self.handle.ctx
        namespace = (pod.get("metadata") or {}).get("namespace") or ""
        out: dict[str, str] = {}
        for claim_name, ephemeral in pod_claims(pod):
            if not claim_name:
                raise _LookupError(error(NAME, "PersistentVolumeClaim had no name"))
            pvc = ctx.get(PERSISTENT_VOLUME_CLAIMS, claim_name, namespace)
            if pvc is None:
                if new_pod:
                    raise _LookupError(unresolvable(
                        NAME, f"looking up PVC {namespace}/{claim_name}: "
                              f"persistentvolumeclaim {go_quote(claim_name)} not found"))
                continue
            if ephemeral:
                problem = ephemeral_claim_error(pod, pvc)
                if problem:
                    raise _LookupError(error(NAME, problem))
            driver, handle = self._driver_and_handle(pvc)
            if driver and handle:
                out[f"{driver}/{handle}"] = csi_attach_limit_key(driver)
        return out

    def _driver_and_handle(self, pvc: Obj) -> tuple[str, str]:
        """getCSIDriverInfo: from the bound PV's CSI source, else from the StorageClass."""
        pv_name = (pvc.get("spec") or {}).get("volumeName") or ""
        pv = self.handle.ctx.get(PERSISTENT_VOLUMES, pv_name) if pv_name else None
        if pv is None:
            return self._driver_from_class(pvc)
        csi = (pv.get("spec") or {}).get("csi")
        if not csi:
            return "", ""  # in-tree: counted only once migrated, which needs a CSINode
        return csi.get("driver") or "", csi.get("volumeHandle") or ""

    def _driver_from_class(self, pvc: Obj) -> tuple[str, str]:
        meta = pvc.get("metadata") or {}
        class_name = claim_class(pvc)
        storage_class = self.handle.ctx.get(STORAGE_CLASSES, class_name) if class_name else None
        if storage_class is None:
            return "", ""
        provisioner = storage_class.get("provisioner") or ""
        if provisioner in _MIGRATABLE_PROVISIONERS:
            return "", ""
        return provisioner, f"{_UNBOUND_HANDLE_PREFIX}-{meta.get('namespace', '')}/{meta.get('name', '')}"

    def events_to_register(self) -> list[EventHint]:
        # Upstream's Pod/Delete matches assigned and unscheduled pods alike.
        return [EventHint(ClusterEvent(CSI_NODE, Action.ADD)),
                EventHint(ClusterEvent(ASSIGNED_POD, Action.DELETE), _after_pod_deleted),
                EventHint(ClusterEvent(UNSCHEDULED_POD, Action.DELETE), _after_pod_deleted),
                EventHint(ClusterEvent(PVC, Action.ADD), _after_claim_added)]


def _may_count(volume: Mapping[str, Any]) -> bool:
    """A claim, an ephemeral claim or a migratable inline volume (upstream's PreFilter test)."""
    if volume.get("persistentVolumeClaim") is not None or volume.get("ephemeral") is not None:
        return True
    return any(volume.get(source) is not None for source in _MIGRATABLE_INLINE)


def _over_limit(new_volumes: dict[str, str], attached: Mapping[str, str], limits: Mapping[str, int]) -> Status | None:
    """Count the pod's volumes not already on the node, per limit key, against the limits."""
    attached_count: dict[str, int] = {}
    for unique_name, limit_key in attached.items():
        new_volumes.pop(unique_name, None)  # a volume already attached costs nothing more
        attached_count[limit_key] = attached_count.get(limit_key, 0) + 1
    new_count: dict[str, int] = {}
    for limit_key in new_volumes.values():
        new_count[limit_key] = new_count.get(limit_key, 0) + 1
    for limit_key, count in sorted(new_count.items()):
        if limit_key in limits and attached_count.get(limit_key, 0) + count > limits[limit_key]:
            return unschedulable(NAME, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
    return None


def _after_pod_deleted(pod: Obj, old: Obj | None, new: Obj | None) -> Hint:
    """Queue when a scheduled pod with claims (or migratable inline volumes) went away."""
    deleted = old or new
    if deleted is None or not (deleted.get("spec") or {}).get("nodeName"):
        return Hint.SKIP
    volumes = (deleted.get("spec") or {}).get("volumes") or []
    return Hint.QUEUE if any(_may_count(volume) for volume in volumes) else Hint.SKIP


def _after_claim_added(pod: Obj, old: Obj | None, new: Obj | None) -> Hint:
    """Queue when a claim the pod uses (same namespace, ephemeral ones included) was created."""
    return Hint.QUEUE if new is not None and pod_uses_claim(pod, new) else Hint.SKIP
