"""Printers of the storage types: PersistentVolumeClaims, PersistentVolumes, StorageClasses,
CSIStorageCapacities, VolumeAttachments, CSINodes and CSIDrivers."""

from __future__ import annotations

from datetime import datetime

from fakekube.api.table.cells import UNSET, age_cell, get, meta
from fakekube.api.table.columns import AGE, NAME, Cells, Obj, TableSpec, col, doc

_ACCESS_MODES = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"),
                 ("ReadWriteOncePod", "RWOP"))
_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"


def access_modes(modes: list[str] | None) -> str:
    """ACCESS MODES abbreviated (RWO, ROX, RWX, RWOP) in upstream's fixed order."""
    present = set(modes or [])
    return ",".join(short for full, short in _ACCESS_MODES if full in present)


def _storage_class(obj: Obj, spec: Obj) -> str:
    """STORAGECLASS: the legacy beta annotation wins over ``spec.storageClassName``."""
    annotations: dict[str, str] = meta(obj, "annotations") or {}
    return annotations.get(_BETA_STORAGE_CLASS, spec.get("storageClassName") or "")


def _phase(obj: Obj, status: Obj) -> str:
    """STATUS of a claim or volume: Terminating once deleted, else its phase."""
    return "Terminating" if meta(obj, "deletionTimestamp") else status.get("phase", "")


def _pvc_cells(pvc: Obj, now: datetime) -> Cells:
    spec, st = pvc.get("spec") or {}, pvc.get("status") or {}
    capacity, modes = "", ""
    if spec.get("volumeName"):
        modes = access_modes(st.get("accessModes"))
        capacity = get(st, "capacity", "storage", default="0")
    return [meta(pvc, "name", ""), _phase(pvc, st), spec.get("volumeName", ""), capacity, modes,
            _storage_class(pvc, spec), spec.get("volumeAttributesClassName") or UNSET, age_cell(pvc, now),
            spec.get("volumeMode") or UNSET]


def _pv_cells(pv: Obj, now: datetime) -> Cells:
    spec, st = pv.get("spec") or {}, pv.get("status") or {}
    claim = spec.get("claimRef")
    claim_text = f"{claim.get('namespace', '')}/{claim.get('name', '')}" if claim else ""
    return [meta(pv, "name", ""), get(spec, "capacity", "storage", default="0"), access_modes(spec.get("accessModes")),
            spec.get("persistentVolumeReclaimPolicy", ""), _phase(pv, st), claim_text, _storage_class(pv, spec),
            spec.get("volumeAttributesClassName") or UNSET, st.get("reason", ""), age_cell(pv, now),
            spec.get("volumeMode") or UNSET]


def _storageclass_cells(sc: Obj, now: datetime) -> Cells:
    annotations = meta(sc, "annotations") or {}
    is_default = "true" in (annotations.get("storageclass.kubernetes.io/is-default-class"),
                            annotations.get("storageclass.beta.kubernetes.io/is-default-class"))
    name = meta(sc, "name", "") + (" (default)" if is_default else "")
    return [name, sc.get("provisioner", ""), sc.get("reclaimPolicy") or "Delete",
            sc.get("volumeBindingMode") or "Immediate", bool(sc.get("allowVolumeExpansion")), age_cell(sc, now)]


PERSISTENT_VOLUME_CLAIM_TABLE = TableSpec((
    NAME,
    doc("Status", "core.v1.PersistentVolumeClaimStatus", "phase"),
    doc("Volume", "core.v1.PersistentVolumeClaimSpec", "volumeName"),
    doc("Capacity", "core.v1.PersistentVolumeClaimStatus", "capacity"),
    doc("Access Modes", "core.v1.PersistentVolumeClaimStatus", "accessModes"),
    col("StorageClass", description="StorageClass of the pvc"),
    col("VolumeAttributesClass", description="VolumeAttributesClass of the pvc"),
    AGE,
    doc("VolumeMode", "core.v1.PersistentVolumeClaimSpec", "volumeMode", priority=1),
), _pvc_cells)

PERSISTENT_VOLUME_TABLE = TableSpec((
    NAME,
    doc("Capacity", "core.v1.PersistentVolumeSpec", "capacity"),
    doc("Access Modes", "core.v1.PersistentVolumeSpec", "accessModes"),
    doc("Reclaim Policy", "core.v1.PersistentVolumeSpec", "persistentVolumeReclaimPolicy"),
    doc("Status", "core.v1.PersistentVolumeStatus", "phase"),
    doc("Claim", "core.v1.PersistentVolumeSpec", "claimRef"),
    col("StorageClass", description="StorageClass of the pv"),
    col("VolumeAttributesClass", description="VolumeAttributesClass of the pv"),
    doc("Reason", "core.v1.PersistentVolumeStatus", "reason"),
    AGE,
    doc("VolumeMode", "core.v1.PersistentVolumeSpec", "volumeMode", priority=1),
), _pv_cells)

STORAGE_CLASS_TABLE = TableSpec((
    NAME,
    doc("Provisioner", "storage.v1.StorageClass", "provisioner"),
    doc("ReclaimPolicy", "storage.v1.StorageClass", "reclaimPolicy"),
    doc("VolumeBindingMode", "storage.v1.StorageClass", "volumeBindingMode"),
    doc("AllowVolumeExpansion", "storage.v1.StorageClass", "allowVolumeExpansion"),
    AGE,
), _storageclass_cells)


def _volume_attachment_cells(va: Obj, now: datetime) -> Cells:
    spec = va.get("spec") or {}
    return [meta(va, "name", ""), spec.get("attacher", ""), get(spec, "source", "persistentVolumeName", default=""),
            spec.get("nodeName", ""), bool(get(va, "status", "attached")), age_cell(va, now)]


VOLUME_ATTACHMENT_TABLE = TableSpec((
    NAME,
    doc("Attacher", "storage.v1.VolumeAttachmentSpec", "attacher", fmt="name"),
    doc("PV", "storage.v1.VolumeAttachmentSource", "persistentVolumeName"),
    doc("Node", "storage.v1.VolumeAttachmentSpec", "nodeName"),
    doc("Attached", "storage.v1.VolumeAttachmentStatus", "attached", "boolean"),
    AGE,
), _volume_attachment_cells)

CSI_NODE_TABLE = TableSpec((
    NAME,
    col("Drivers", "integer", "Drivers indicates the number of CSI drivers registered on the node"),
    AGE,
), lambda o, now: [meta(o, "name", ""), len(get(o, "spec", "drivers", default=[]) or []), age_cell(o, now)])


def _csi_driver_cells(driver: Obj, now: datetime) -> Cells:
    spec = driver.get("spec") or {}
    attach = spec.get("attachRequired")
    tokens = spec.get("tokenRequests")
    return [meta(driver, "name", ""), True if attach is None else bool(attach), bool(spec.get("podInfoOnMount")),
            bool(spec.get("storageCapacity")),
            UNSET if tokens is None else ",".join(t.get("audience", "") for t in tokens),
            bool(spec.get("requiresRepublish")), ",".join(spec.get("volumeLifecycleModes") or []) or "<none>",
            age_cell(driver, now)]


_CSI_DRIVER_SPEC = "storage.v1.CSIDriverSpec"
CSI_DRIVER_TABLE = TableSpec((
    NAME,
    doc("AttachRequired", _CSI_DRIVER_SPEC, "attachRequired", "boolean"),
    doc("PodInfoOnMount", _CSI_DRIVER_SPEC, "podInfoOnMount", "boolean"),
    doc("StorageCapacity", _CSI_DRIVER_SPEC, "storageCapacity", "boolean"),
    doc("TokenRequests", _CSI_DRIVER_SPEC, "tokenRequests"),
    doc("RequiresRepublish", _CSI_DRIVER_SPEC, "requiresRepublish", "boolean"),
    doc("Modes", _CSI_DRIVER_SPEC, "volumeLifecycleModes"),
    AGE,
), _csi_driver_cells)


VOLUME_ATTRIBUTES_CLASS_TABLE = TableSpec((
    NAME,
    doc("DriverName", "storage.v1.VolumeAttributesClass", "driverName"),
    AGE,
), lambda vac, now: [meta(vac, "name", ""), vac.get("driverName", ""), age_cell(vac, now)])
