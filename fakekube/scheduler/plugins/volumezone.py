"""VolumeZone: a pod whose claims are bound to zonal PersistentVolumes fits only nodes in
those zones and regions.

Upstream: ``pkg/scheduler/framework/plugins/volumezone/volume_zone.go``. A bound PV's
``topology.kubernetes.io/zone``/``region`` labels (or the deprecated
``failure-domain.beta.kubernetes.io`` ones; a value may list several zones joined by
"__") must match the node's label of the same key, or of its GA key. A node with no
zone or region label at all fits (single-zone clusters). Unbound WaitForFirstConsumer
claims are left to VolumeBinding; other unbound claims are an unresolvable error here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, NamedTuple

from fakekube.objects.constants import (
    LABEL_FAILURE_DOMAIN_BETA_REGION, LABEL_FAILURE_DOMAIN_BETA_ZONE, LABEL_TOPOLOGY_REGION, LABEL_TOPOLOGY_ZONE,
)
from fakekube.objects.kinds import PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, STORAGE_CLASSES
from fakekube.objects.syntax import go_quote
from fakekube.objects.volumes import WAIT_FOR_FIRST_CONSUMER, claim_class, label_zones
from fakekube.scheduler.framework import (
    NODE, PV, PVC, SKIP, STORAGE_CLASS, Action, ClusterEvent, CycleState, EventHint, Hint, NodeInfo, PodInfo,
    Status, unresolvable,
)

if TYPE_CHECKING:
    from fakekube.scheduler.runtime import Handle

Obj = dict[str, Any]

NAME = "VolumeZone"
ERR_REASON_CONFLICT = "node(s) had no available volume zone"

#: The PV labels read, in upstream's order (beta first).
TOPOLOGY_LABELS = (LABEL_FAILURE_DOMAIN_BETA_ZONE, LABEL_FAILURE_DOMAIN_BETA_REGION,
                   LABEL_TOPOLOGY_ZONE, LABEL_TOPOLOGY_REGION)
_GA_LABEL = {LABEL_FAILURE_DOMAIN_BETA_ZONE: LABEL_TOPOLOGY_ZONE,
             LABEL_FAILURE_DOMAIN_BETA_REGION: LABEL_TOPOLOGY_REGION}


class PVTopology(NamedTuple):
    """One topology label of a PV: the key and the zones (or regions) it allows."""

    pv_name: str
    key: str
    values: frozenset[str]


class VolumeZone:
    name = NAME

    def __init__(self, handle: "Handle", args: Mapping[str, Any]) -> None:
        self.handle = handle

    def pre_filter(self, state: CycleState, info: PodInfo) -> tuple[set[str] | None, Status | None]:
        topologies, status = self._pod_topologies(info)
        if status is not None:
            return None, status
        if not topologies:
            return None, SKIP
        state.data[NAME] = topologies
        return None, None

    def _pod_topologies(self, info: PodInfo) -> tuple[list[PVTopology], Status | None]:
        """getPVbyPod: the topology labels of every bound PV the pod's claims use."""
        ctx = self.handle.ctx
        out: list[PVTopology] = []
        for claim_name in _claim_names(info.pod):
            if not claim_name:
                return [], unresolvable(NAME, "PersistentVolumeClaim had no name")
            pvc = ctx.get(PERSISTENT_VOLUME_CLAIMS, claim_name, info.namespace)
            if pvc is None:
                return [], unresolvable(NAME, f"persistentvolumeclaim {go_quote(claim_name)} not found")
            pv_name = (pvc.get("spec") or {}).get("volumeName") or ""
            if not pv_name:
                status = self._unbound_claim_status(pvc)
                if status is not None:
                    return [], status
                continue
            pv = ctx.get(PERSISTENT_VOLUMES, pv_name)
            if pv is None:
                return [], unresolvable(NAME, f"persistentvolume {go_quote(pv_name)} not found")
            out.extend(pv_topologies(pv))
        return out, None

    def _unbound_claim_status(self, pvc: Obj) -> Status | None:
        """None for a WaitForFirstConsumer claim (skipped), else why the pod cannot go on."""
        class_name = claim_class(pvc)
        if not class_name:
            return unresolvable(NAME, "PersistentVolumeClaim had no pv name and storageClass name")
        storage_class = self.handle.ctx.get(STORAGE_CLASSES, class_name)
        if storage_class is None:
            return unresolvable(NAME, f"storageclass.storage.k8s.io {go_quote(class_name)} not found")
        mode = storage_class.get("volumeBindingMode")
        if not mode:
            return unresolvable(NAME, f"VolumeBindingMode not set for StorageClass {go_quote(class_name)}")
        if mode == WAIT_FOR_FIRST_CONSUMER:
            return None
        return unresolvable(NAME, "PersistentVolume had no name")

    def filter(self, state: CycleState, info: PodInfo, node: NodeInfo) -> Status | None:
        labels = node.labels
        if not any(key in labels for key in TOPOLOGY_LABELS):
            return None  # a node with no zone or region fits (single-zone clusters)
        topologies: list[PVTopology] | None = state.data.get(NAME)
        if topologies is None:
            topologies, status = self._pod_topologies(info)
            if status is not None:
                return status
        for topology in topologies:
            value = labels.get(topology.key)
            if value is None:
                value = labels.get(_GA_LABEL.get(topology.key, topology.key))
            if value is None or value not in topology.values:
                return unresolvable(NAME, ERR_REASON_CONFLICT)
        return None

    def events_to_register(self) -> list[EventHint]:
        # Queueing hints are on in 1.33, so Node/UpdateNodeTaint is not registered.
        return [EventHint(ClusterEvent(STORAGE_CLASS, Action.ADD), _after_storage_class_added),
                EventHint(ClusterEvent(NODE, Action.ADD | Action.UPDATE_NODE_LABEL)),
                EventHint(ClusterEvent(PVC, Action.ADD | Action.UPDATE), _after_claim_change),
                EventHint(ClusterEvent(PV, Action.ADD | Action.UPDATE), _after_volume_change)]


def pv_topologies(pv: Mapping[str, Any]) -> list[PVTopology]:
    """getPVTopologies: the PV's zone and region labels that parse (nodeAffinity is NodeAffinity's job)."""
    labels = (pv.get("metadata") or {}).get("labels") or {}
    name = (pv.get("metadata") or {}).get("name") or ""
    out = []
    for key in TOPOLOGY_LABELS:
        if key in labels:
            zones = label_zones(labels[key])
            if zones is not None:
                out.append(PVTopology(name, key, frozenset(zones)))
    return out


def _claim_names(pod: Mapping[str, Any]) -> list[str]:
    return [(v["persistentVolumeClaim"] or {}).get("claimName") or ""
            for v in (pod.get("spec") or {}).get("volumes") or [] if v.get("persistentVolumeClaim") is not None]


def _after_claim_change(pod: Obj, old: Obj | None, new: Obj | None) -> Hint:
    """Queue when a claim the pod uses (same namespace) was created or changed."""
    if new is None:
        return Hint.SKIP
    meta, pod_meta = new.get("metadata") or {}, pod.get("metadata") or {}
    if meta.get("namespace") != pod_meta.get("namespace"):
        return Hint.SKIP
    return Hint.QUEUE if meta.get("name") in _claim_names(pod) else Hint.SKIP


def _after_storage_class_added(pod: Obj, old: Obj | None, new: Obj | None) -> Hint:
    """Only a new WaitForFirstConsumer class can help (the mode cannot change later)."""
    return Hint.QUEUE if new is not None and new.get("volumeBindingMode") == WAIT_FOR_FIRST_CONSUMER else Hint.SKIP


def _after_volume_change(pod: Obj, old: Obj | None, new: Obj | None) -> Hint:
    """Queue for a new PV, or one whose topology labels changed."""
    if old is None:
        return Hint.QUEUE
    if new is None:
        return Hint.SKIP
    return Hint.QUEUE if pv_topologies(old) != pv_topologies(new) else Hint.SKIP
