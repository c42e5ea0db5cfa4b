"""Printers of the storage types: PersistentVolumeClaims, PersistentVolumes, StorageClasses,
CSIStorageCapacities, VolumeAttachments, CSINodes and CSIDrivers."""

from __future__ import annotations

from datetime import datetime

from fakekube.api.table.cells import UNSET, age_cell, get, meta
from fakekube.api.table.columns import AGE, NAME, Cells, Obj, TableSpec, col
from fakekube.api.table.docs import doc_col

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
    col("Status", description="phase represents the current phase of PersistentVolumeClaim."),
    col("Volume", description="volumeName is the binding reference to the PersistentVolume backing this claim."),
    col("Capacity", description="capacity represents the actual resources of the underlying volume."),
    col("Access Modes", description="accessModes contains the desired access modes the volume should have."),
    col("StorageClass", description="StorageClass of the pvc"),
    col("VolumeAttributesClass", description="VolumeAttributesClass of the pvc"),
    AGE,
    col("VolumeMode", description="volumeMode defines what type of volume is required by the claim.", priority=1),
), _pvc_cells)

PERSISTENT_VOLUME_TABLE = TableSpec((
    NAME,
    col("Capacity", description="capacity is the description of the persistent volume's resources and "
                                "capacity."),
    col("Access Modes", description="accessModes contains all ways the volume can be mounted."),
    col("Reclaim Policy", description="persistentVolumeReclaimPolicy defines what happens to a persistent volume "
                                      "when released from its claim."),
    col("Status", description="phase indicates if a volume is available, bound to a claim, or released by a "
                              "claim."),
    col("Claim", description="claimRef is part of a bi-directional binding between PersistentVolume and "
                             "PersistentVolumeClaim."),
    col("StorageClass", description="StorageClass of the pv"),
    col("VolumeAttributesClass", description="VolumeAttributesClass of the pv"),
    col("Reason", description="reason is a brief CamelCase string that describes any failure and is meant for "
                              "machine parsing and tidy display in the CLI."),
    AGE,
    col("VolumeMode", description="volumeMode defines if a volume is intended to be used with a formatted "
                                  "filesystem or to remain in raw block state.", priority=1),
), _pv_cells)

STORAGE_CLASS_TABLE = TableSpec((
    NAME,
    col("Provisioner", description="provisioner indicates the type of the provisioner."),
    col("ReclaimPolicy", description="reclaimPolicy controls the reclaimPolicy for dynamically provisioned "
                                     "PersistentVolumes of this storage class."),
    col("VolumeBindingMode", description="volumeBindingMode indicates how PersistentVolumeClaims should be "
                                         "provisioned and bound."),
    col("AllowVolumeExpansion", "boolean", "allowVolumeExpansion shows whether the storage class allow volume "
                                           "expand."),
    AGE,
), _storageclass_cells)


CSI_STORAGE_CAPACITY_TABLE = TableSpec((
    NAME,
    col("StorageClassName", description="storageClassName represents the name of the StorageClass that the reported "
                                         "capacity applies to."),
    col("Capacity", description="capacity is the value reported by the CSI driver in its GetCapacityResponse for a "
                                "GetCapacityRequest with topology and parameters that match the previous fields."),
), lambda o, now: [meta(o, "name", ""), o.get("storageClassName", ""), o.get("capacity") or UNSET])


def _volume_attachment_cells(va: Obj, now: datetime) -> Cells:
    spec = va.get("spec") or {}
    return [meta(va, "name", ""), spec.get("attacher", ""), get(spec, "source", "persistentVolumeName", default=""),
            spec.get("nodeName", ""), bool(get(va, "status", "attached")), age_cell(va, now)]


VOLUME_ATTACHMENT_TABLE = TableSpec((
    NAME,
    doc_col("Attacher", "string", "storage.v1.VolumeAttachmentSpec", "attacher", fmt="name"),
    doc_col("PV", "string", "storage.v1.VolumeAttachmentSource", "persistentVolumeName"),
    doc_col("Node", "string", "storage.v1.VolumeAttachmentSpec", "nodeName"),
    doc_col("Attached", "boolean", "storage.v1.VolumeAttachmentStatus", "attached"),
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
    doc_col("AttachRequired", "boolean", _CSI_DRIVER_SPEC, "attachRequired"),
    doc_col("PodInfoOnMount", "boolean", _CSI_DRIVER_SPEC, "podInfoOnMount"),
    doc_col("StorageCapacity", "boolean", _CSI_DRIVER_SPEC, "storageCapacity"),
    doc_col("TokenRequests", "string", _CSI_DRIVER_SPEC, "tokenRequests"),
    doc_col("RequiresRepublish", "boolean", _CSI_DRIVER_SPEC, "requiresRepublish"),
    doc_col("Modes", "string", _CSI_DRIVER_SPEC, "volumeLifecycleModes"),
    AGE,
), _csi_driver_cells)


VOLUME_ATTRIBUTES_CLASS_TABLE = TableSpec((
    NAME,
    doc_col("DriverName", "string", "storage.v1.VolumeAttributesClass", "driverName"),
    AGE,
), lambda vac, now: [meta(vac, "name", ""), vac.get("driverName", ""), age_cell(vac, now)])
