"""VolumeRestrictions: a pod may not share certain disks with the pods already on a node,
nor a ReadWriteOncePod claim with any scheduled pod.

Upstream: ``pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions.go``.
Inline GCE PD, AWS EBS, iSCSI and Ceph RBD volumes conflict as the cloud disks do (a GCE
PD or an iSCSI/RBD image may be shared only when every mount is read-only; an EBS volume
never). A claim with the ReadWriteOncePod access mode that a scheduled pod already uses
makes every node unschedulable (preemption may free it). PreFilter skips the plugin when
the pod has neither kind of volume, so most pods cost nothing here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from fakekube.objects.kinds import PERSISTENT_VOLUME_CLAIMS
from fakekube.objects.syntax import go_quote
from fakekube.objects.volumes import READ_WRITE_ONCE_POD, has_access_mode
from fakekube.scheduler.framework import (
    ASSIGNED_POD, NODE, PVC, SKIP, UNSCHEDULED_POD, Action, ClusterEvent, CycleState, EventHint, Hint, NodeInfo,
    PodInfo, Status, error, unresolvable, unschedulable,
)

if TYPE_CHECKING:
    from fakekube.scheduler.runtime import Handle

Obj = dict[str, Any]

NAME = "VolumeRestrictions"
ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT = (
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode")

_CONFLICT_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi")
#: The pool an RBD volume uses when it names none (the API's default).
_DEFAULT_RBD_POOL = "rbd"


class _State:
    """The pod's ReadWriteOncePod claim names and how many scheduled pods use them."""

    __slots__ = ("rwop_claims", "conflicting_refs")

    def __init__(self, rwop_claims: frozenset[str], conflicting_refs: int) -> None:
        self.rwop_claims = rwop_claims
        self.conflicting_refs = conflicting_refs

    def clone(self) -> "_State":
        return _State(self.rwop_claims, self.conflicting_refs)

    def refs_of(self, pod: Mapping[str, Any]) -> int:
        return sum(1 for name in _claim_names(pod) if name in self.rwop_claims)


class VolumeRestrictions:
    name = NAME

    def __init__(self, handle: "Handle", args: Mapping[str, Any]) -> None:
        self.handle = handle

    def pre_filter(self, state: CycleState, info: PodInfo) -> tuple[set[str] | None, Status | None]:
        needs_check = any(_needs_conflict_check(v) for v in _volumes(info.pod))
        rwop: set[str] = set()
        for claim_name in _claim_names(info.pod):
            pvc = self.handle.ctx.get(PERSISTENT_VOLUME_CLAIMS, claim_name, info.namespace)
            if pvc is None:
                return None, unresolvable(NAME, f"persistentvolumeclaim {go_quote(claim_name)} not found")
            if has_access_mode(pvc, READ_WRITE_ONCE_POD):
                rwop.add(claim_name)
        used = self._used_claims(info.namespace, rwop) if rwop else set()
        if not needs_check and not used:
            return None, SKIP
        state.data[NAME] = _State(frozenset(rwop), len(used))
        return None, None

    def _used_claims(self, namespace: str, names: set[str]) -> set[str]:
        """Which of ``names`` a scheduled pod uses (upstream's StorageInfos().IsPVCUsedByPods).

        Walks every placed pod: only pods with ReadWriteOncePod claims pay for it."""
        used: set[str] = set()
        for node in self.handle.snapshot.node_infos():
            for other in node.pods.values():
                if other.namespace == namespace:
                    used.update(n for n in _claim_names(other.pod) if n in names)
        return used

    def filter(self, state: CycleState, info: PodInfo, node: NodeInfo) -> Status | None:
        if node.pods and not _satisfies_volume_conflicts(info.pod, node):
            return unschedulable(NAME, ERR_REASON_DISK_CONFLICT)
        data = state.data.get(NAME)
        if data is None:
            return error(NAME, f'cannot read "PreFilter{NAME}" from cycleState')
        if data.conflicting_refs > 0:
            return unschedulable(NAME, ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)
        return None

    def add_pod(self, state: CycleState, info: PodInfo, other: PodInfo, node: NodeInfo) -> Status | None:
        data = state.data[NAME]
        data.conflicting_refs += data.refs_of(other.pod)
        return None

    def remove_pod(self, state: CycleState, info: PodInfo, other: PodInfo, node: NodeInfo) -> Status | None:
        data = state.data[NAME]
        data.conflicting_refs -= data.refs_of(other.pod)
        return None

    def events_to_register(self) -> list[EventHint]:
        # Upstream registers Pod/Delete, which matches assigned and unscheduled pods alike;
        # Node/Add only, since queueing hints are on in 1.33.
        return [EventHint(ClusterEvent(ASSIGNED_POD, Action.DELETE), _after_pod_deleted),
                EventHint(ClusterEvent(UNSCHEDULED_POD, Action.DELETE), _after_pod_deleted),
                EventHint(ClusterEvent(NODE, Action.ADD)),
                EventHint(ClusterEvent(PVC, Action.ADD), _after_claim_added)]


# -- pure rules --------------------------------------------------------------------------
def _volumes(pod: Mapping[str, Any]) -> list[Obj]:
    return (pod.get("spec") or {}).get("volumes") or []


def _claim_names(pod: Mapping[str, Any]) -> list[str]:
    """Names of the pod's persistentVolumeClaim volumes (ephemeral ones do not count here)."""
    return [(v["persistentVolumeClaim"] or {}).get("claimName") or "" for v in _volumes(pod)
            if v.get("persistentVolumeClaim") is not None]


def _needs_conflict_check(volume: Mapping[str, Any]) -> bool:
    return any(volume.get(source) is not None for source in _CONFLICT_SOURCES)


def _satisfies_volume_conflicts(pod: Mapping[str, Any], node: NodeInfo) -> bool:
    for volume in _volumes(pod):
        if not _needs_conflict_check(volume):
            continue
        for other in node.pods.values():
            if any(_conflict(volume, existing) for existing in _volumes(other.pod)):
                return False
    return True


def _conflict(volume: Mapping[str, Any], existing: Mapping[str, Any]) -> bool:
    """isVolumeConflict for one pair of volumes."""
    gce, other_gce = volume.get("gcePersistentDisk"), existing.get("gcePersistentDisk")
    if gce is not None and other_gce is not None:
        if gce.get("pdName") == other_gce.get("pdName") and not (gce.get("readOnly") and other_gce.get("readOnly")):
            return True
    ebs, other_ebs = volume.get("awsElasticBlockStore"), existing.get("awsElasticBlockStore")
    if ebs is not None and other_ebs is not None and ebs.get("volumeID") == other_ebs.get("volumeID"):
        return True
    iscsi, other_iscsi = volume.get("iscsi"), existing.get("iscsi")
    if iscsi is not None and other_iscsi is not None:
        if iscsi.get("iqn") == other_iscsi.get("iqn") and not (iscsi.get("readOnly") and other_iscsi.get("readOnly")):
            return True
    rbd, other_rbd = volume.get("rbd"), existing.get("rbd")
    if rbd is not None and other_rbd is not None:
        same_image = (bool(set(rbd.get("monitors") or ()) & set(other_rbd.get("monitors") or ()))
                      and (rbd.get("pool") or _DEFAULT_RBD_POOL) == (other_rbd.get("pool") or _DEFAULT_RBD_POOL)
                      and rbd.get("image") == other_rbd.get("image"))
        if same_image and not (rbd.get("readOnly") and other_rbd.get("readOnly")):
            return True
    return False


# -- queueing hints ----------------------------------------------------------------------
def _namespace(obj: Mapping[str, Any]) -> str:
    return (obj.get("metadata") or {}).get("namespace") or ""


def _after_pod_deleted(pod: Obj, old: Obj | None, new: Obj | None) -> Hint:
    """Queue when the deleted pod (same namespace) held a conflicting disk or one of the pod's claims."""
    deleted = old or new
    if deleted is None or _namespace(deleted) != _namespace(pod):
        return Hint.SKIP
    for volume in _volumes(pod):
        if _needs_conflict_check(volume) and any(_conflict(volume, v) for v in _volumes(deleted)):
            return Hint.QUEUE
    claims = set(_claim_names(pod))
    return Hint.QUEUE if any(name in claims for name in _claim_names(deleted)) else Hint.SKIP


def _after_claim_added(pod: Obj, old: Obj | None, new: Obj | None) -> Hint:
    """Queue when a claim the pod names (same namespace) was created."""
    if new is None or _namespace(new) != _namespace(pod):
        return Hint.SKIP
    return Hint.QUEUE if (new.get("metadata") or {}).get("name") in _claim_names(pod) else Hint.SKIP
