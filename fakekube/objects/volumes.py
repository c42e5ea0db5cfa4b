"""PersistentVolume and PersistentVolumeClaim rules shared by the scheduler and any volume controller.

Upstream: ``k8s.io/component-helpers/storage/volume`` (``pv_helpers.go``, ``helpers.go``),
``component-helpers/storage/ephemeral`` and ``cloud-provider/volume/helpers``. Pure
functions over object dicts; "binding" helpers return new objects and never edit their inputs.
"""

from __future__ import annotations

import copy
import hashlib
from fractions import Fraction
from typing import Any, Callable, Iterable, Mapping, Sequence

from fakekube.objects.labels import compile_selector
from fakekube.objects.nodeselectors import NodeSelector
from fakekube.objects.quantity import parse_quantity
from fakekube.objects.syntax import go_quote

Obj = dict[str, Any]

#: Set on a PVC by the scheduler to ask for provisioning on that node (WaitForFirstConsumer).
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
#: Set on a PVC once its binding is complete; with spec.volumeName it means "fully bound".
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
#: Set on a PV or PVC whose binding a controller (not the user) made.
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
#: The storage class annotation that predates spec.storageClassName; it wins when present.
ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
#: A StorageClass provisioner meaning "no dynamic provisioning" (local volumes, say).
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
#: Set on a claim by the PV controller: the external provisioner asked to provision it.
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
#: Set on a PV by whoever provisioned it (its value names the provisioner).
ANN_DYNAMICALLY_PROVISIONED = "pv.kubernetes.io/provisioned-by"
#: A StorageClass whose annotation is "true" is the default class (the beta one counts too).
ANN_DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
ANN_BETA_DEFAULT_CLASS = "storageclass.beta.kubernetes.io/is-default-class"

WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
READ_WRITE_ONCE_POD = "ReadWriteOncePod"
FILESYSTEM = "Filesystem"
VOLUME_PENDING = "Pending"
VOLUME_AVAILABLE = "Available"
VOLUME_BOUND = "Bound"
VOLUME_RELEASED = "Released"
VOLUME_FAILED = "Failed"
CLAIM_PENDING = "Pending"
CLAIM_BOUND = "Bound"
CLAIM_LOST = "Lost"
RECLAIM_RETAIN = "Retain"
RECLAIM_DELETE = "Delete"
RECLAIM_RECYCLE = "Recycle"
#: Access modes in the order upstream spells an access-mode index key (GetAccessModesAsString).
_ACCESS_MODE_ORDER = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")


def _annotations(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return (obj.get("metadata") or {}).get("annotations") or {}


def claim_class(pvc: Mapping[str, Any]) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation, else spec.storageClassName, else ""."""
    annotations = _annotations(pvc)
    if ANN_BETA_STORAGE_CLASS in annotations:
        return annotations[ANN_BETA_STORAGE_CLASS]
    return (pvc.get("spec") or {}).get("storageClassName") or ""


def volume_class(pv: Mapping[str, Any]) -> str:
    """GetPersistentVolumeClass: the beta annotation, else spec.storageClassName."""
    annotations = _annotations(pv)
    if ANN_BETA_STORAGE_CLASS in annotations:
        return annotations[ANN_BETA_STORAGE_CLASS]
    return (pv.get("spec") or {}).get("storageClassName") or ""


def is_claim_fully_bound(pvc: Mapping[str, Any]) -> bool:
    """The scheduler's isPVCFullyBound: a volume name and the bind-completed annotation."""
    return bool((pvc.get("spec") or {}).get("volumeName")) and ANN_BIND_COMPLETED in _annotations(pvc)


def has_access_mode(pvc: Mapping[str, Any], mode: str) -> bool:
    return mode in ((pvc.get("spec") or {}).get("accessModes") or [])


def storage_quantity(resources: Mapping[str, Any] | None) -> Fraction:
    """The ``storage`` entry of a ResourceList (0 when missing or unparseable)."""
    value = (resources or {}).get("storage")
    if value is None:
        return Fraction(0)
    try:
        return parse_quantity(value)
    except ValueError:
        return Fraction(0)


def claim_request(pvc: Mapping[str, Any]) -> Fraction:
    return storage_quantity(((pvc.get("spec") or {}).get("resources") or {}).get("requests"))


def volume_capacity(pv: Mapping[str, Any]) -> Fraction:
    return storage_quantity((pv.get("spec") or {}).get("capacity"))


def volume_node_affinity_matches(pv: Mapping[str, Any], node_labels: Mapping[str, str] | None) -> bool:
    """CheckNodeAffinity: no ``spec.nodeAffinity.required`` fits every node. Upstream
    matches a node built from the labels alone, so a matchFields term on metadata.name
    compares against the empty name."""
    required = ((pv.get("spec") or {}).get("nodeAffinity") or {}).get("required")
    if required is None:
        return True
    return NodeSelector(required.get("nodeSelectorTerms")).matches(node_labels, "")


def volume_mode_mismatch(pvc: Mapping[str, Any], pv: Mapping[str, Any]) -> bool:
    """CheckVolumeModeMismatches (a missing mode is Filesystem on both sides)."""
    return ((pvc.get("spec") or {}).get("volumeMode") or FILESYSTEM) != \
        ((pv.get("spec") or {}).get("volumeMode") or FILESYSTEM)


def access_modes_satisfied(pvc: Mapping[str, Any], pv: Mapping[str, Any]) -> bool:
    """CheckAccessModes: the PV offers every mode the claim asks for."""
    offered = set((pv.get("spec") or {}).get("accessModes") or [])
    return all(mode in offered for mode in (pvc.get("spec") or {}).get("accessModes") or [])


def is_volume_bound_to_claim(pv: Mapping[str, Any], pvc: Mapping[str, Any]) -> bool:
    """IsVolumeBoundToClaim: claimRef names the claim (and its uid, when the ref has one)."""
    ref = (pv.get("spec") or {}).get("claimRef")
    if not ref:
        return False
    meta = pvc.get("metadata") or {}
    if ref.get("name") != meta.get("name") or ref.get("namespace") != meta.get("namespace"):
        return False
    return not ref.get("uid") or ref.get("uid") == meta.get("uid")


class UnsupportedVolumeAttributesClass(ValueError):
    """A claim names a VolumeAttributesClass while that (beta, off by default) feature is off."""


def find_matching_volume(pvc: Mapping[str, Any], volumes: Iterable[Mapping[str, Any]],
                         fits_node: Callable[[Mapping[str, Any]], bool] | None, excluded: Iterable[str] = (),
                         delay_binding: bool = False) -> Mapping[str, Any] | None:
    """FindMatchingVolume (VolumeAttributesClass off, as 1.33's default): a PV pre-bound to
    the claim if there is one (None when it does not fit the node), else the smallest
    Available PV of the claim's class, size, volume mode, selector, access modes and node
    affinity. ``fits_node`` is the scheduler's path: it tells whether a PV's node affinity
    admits the node (see :func:`volume_node_affinity_matches`), and access modes are then
    checked too; the PV controller passes None. Ties keep the first in ``volumes`` order.
    Raises :class:`UnsupportedVolumeAttributesClass` or ValueError (a bad claim selector)
    with upstream's message."""
    key = f"{(pvc.get('metadata') or {}).get('namespace', '')}/{(pvc.get('metadata') or {}).get('name', '')}"
    spec = pvc.get("spec") or {}
    if spec.get("volumeAttributesClassName"):
        raise UnsupportedVolumeAttributesClass(
            f"unsupported volumeAttributesClassName is set on claim {key} when the feature-gate "
            "VolumeAttributesClass is disabled")
    selector = None
    if spec.get("selector") is not None:
        try:
            selector = compile_selector(spec["selector"])
        except ValueError as err:
            raise ValueError(f"error creating internal label selector for claim: {key}: {err}") from None
    requested, wanted_class, skip = claim_request(pvc), claim_class(pvc), set(excluded)
    best: Mapping[str, Any] | None = None
    best_size = Fraction(0)
    for pv in volumes:
        meta, pv_spec = pv.get("metadata") or {}, pv.get("spec") or {}
        if meta.get("name") in skip or (pv_spec.get("claimRef") and not is_volume_bound_to_claim(pv, pvc)):
            continue
        size = volume_capacity(pv)
        if size < requested or volume_mode_mismatch(pvc, pv) or pv_spec.get("volumeAttributesClassName"):
            continue
        if meta.get("deletionTimestamp"):
            continue
        affinity_ok = fits_node is None or fits_node(pv)
        if is_volume_bound_to_claim(pv, pvc):
            return pv if affinity_ok else None
        if fits_node is None and delay_binding:
            continue
        if (pv.get("status") or {}).get("phase") != VOLUME_AVAILABLE:
            continue
        if selector is not None and not selector.matches(meta.get("labels") or {}):
            continue
        if volume_class(pv) != wanted_class or not affinity_ok:
            continue
        if fits_node is not None and not access_modes_satisfied(pvc, pv):
            continue
        if best is None or best_size > size:
            best, best_size = pv, size
    return best


def claim_has_class(pvc: Mapping[str, Any]) -> bool:
    """PersistentVolumeClaimHasClass: the beta annotation or ``spec.storageClassName`` is set
    (even to ""); a claim without either may still get the default class."""
    return ANN_BETA_STORAGE_CLASS in _annotations(pvc) or \
        (pvc.get("spec") or {}).get("storageClassName") is not None


def is_default_class(storage_class: Mapping[str, Any]) -> bool:
    annotations = _annotations(storage_class)
    return annotations.get(ANN_DEFAULT_CLASS) == "true" or annotations.get(ANN_BETA_DEFAULT_CLASS) == "true"


def default_class(classes: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """GetDefaultClass: of the classes marked default, the newest (ties: by name); None if none."""
    marked = [c for c in classes if is_default_class(c)]
    if not marked:
        return None
    marked.sort(key=lambda c: (c.get("metadata") or {}).get("name") or "")
    return max(marked, key=lambda c: (c.get("metadata") or {}).get("creationTimestamp") or "")


def access_modes_key(modes: Iterable[str]) -> tuple[str, ...]:
    """The PV controller's access-mode index key: the distinct modes in upstream's order."""
    present = set(modes)
    return tuple(mode for mode in _ACCESS_MODE_ORDER if mode in present)


def best_match_for_claim(pvc: Mapping[str, Any], volumes: Sequence[Mapping[str, Any]],
                         delay_binding: bool) -> Mapping[str, Any] | None:
    """The PV controller's findBestMatchForClaim (index.go): the volumes are grouped by their
    access modes; groups offering every mode the claim asks for are tried fewest modes first
    (ties by key), and the first group with a match (:func:`find_matching_volume`, no node)
    wins — so an exact-mode PV beats a smaller one that offers more modes. Raises as
    :func:`find_matching_volume`."""
    groups: dict[tuple[str, ...], list[Mapping[str, Any]]] = {}
    for pv in volumes:
        groups.setdefault(access_modes_key((pv.get("spec") or {}).get("accessModes") or []), []).append(pv)
    wanted = set((pvc.get("spec") or {}).get("accessModes") or [])
    for key in sorted((k for k in groups if wanted <= set(k)), key=lambda k: (len(k), k)):
        found = find_matching_volume(pvc, groups[key], None, (), delay_binding)
        if found is not None:
            return found
    return None


def volume_claim_mismatch(pv: Mapping[str, Any], pvc: Mapping[str, Any]) -> str:
    """checkVolumeSatisfyClaim: why ``pv`` cannot serve ``pvc`` when the claim names it, or ""."""
    if (pv.get("metadata") or {}).get("deletionTimestamp"):
        return f"the volume is marked for deletion {go_quote((pv.get('metadata') or {}).get('name') or '')}"
    if volume_capacity(pv) < claim_request(pvc):
        return "requested PV is too small"
    if volume_class(pv) != claim_class(pvc):
        return "storageClassName does not match"
    if volume_mode_mismatch(pvc, pv):
        return "incompatible volumeMode"
    if not access_modes_satisfied(pvc, pv):
        return "incompatible accessMode"
    return ""


def claim_reference(pvc: Mapping[str, Any]) -> Obj:
    """reference.GetReference for a claim: the ObjectReference a PV's claimRef holds."""
    meta = pvc.get("metadata") or {}
    ref: Obj = {"kind": "PersistentVolumeClaim", "namespace": meta.get("namespace", ""),
                "name": meta.get("name", ""), "uid": meta.get("uid", ""), "apiVersion": "v1",
                "resourceVersion": meta.get("resourceVersion", "")}
    return {k: v for k, v in ref.items() if v}


def bind_volume_to_claim(pv: Mapping[str, Any], pvc: Mapping[str, Any]) -> tuple[Obj, bool]:
    """GetBindVolumeToClaim: a copy of ``pv`` whose claimRef names ``pvc`` and, unless the
    user pre-bound it, annotated bound-by-controller; and whether anything changed."""
    out: Obj = copy.deepcopy(dict(pv))
    pre_bound = is_volume_bound_to_claim(pv, pvc)
    ref = (pv.get("spec") or {}).get("claimRef") or {}
    meta = pvc.get("metadata") or {}
    dirty = False
    if (ref.get("name") != meta.get("name") or ref.get("namespace") != meta.get("namespace")
            or ref.get("uid", "") != meta.get("uid", "")):
        out.setdefault("spec", {})["claimRef"] = claim_reference(pvc)
        dirty = True
    annotations = out.setdefault("metadata", {}).setdefault("annotations", {})
    if not pre_bound and ANN_BOUND_BY_CONTROLLER not in annotations:
        annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
        dirty = True
    if not annotations:
        del out["metadata"]["annotations"]
    return out, dirty


def with_selected_node(pvc: Mapping[str, Any], node_name: str) -> Obj:
    """A copy of ``pvc`` annotated with the node chosen for provisioning."""
    out: Obj = copy.deepcopy(dict(pvc))
    out.setdefault("metadata", {}).setdefault("annotations", {})[ANN_SELECTED_NODE] = node_name
    return out


# -- pods' claims ------------------------------------------------------------------------
def ephemeral_claim_name(pod: Mapping[str, Any], volume: Mapping[str, Any]) -> str:
    """ephemeral.VolumeClaimName: the PVC of a generic ephemeral volume is ``<pod>-<volume>``."""
    return f"{(pod.get('metadata') or {}).get('name', '')}-{volume.get('name', '')}"


def pod_claims(pod: Mapping[str, Any]) -> list[tuple[str, bool]]:
    """(claim name, is ephemeral) for every volume of ``pod`` backed by a PVC, in spec order."""
    out: list[tuple[str, bool]] = []
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        if volume.get("persistentVolumeClaim") is not None:
            out.append(((volume["persistentVolumeClaim"] or {}).get("claimName") or "", False))
        elif volume.get("ephemeral") is not None:
            out.append((ephemeral_claim_name(pod, volume), True))
    return out


def pod_uses_claim(pod: Mapping[str, Any], pvc: Mapping[str, Any]) -> bool:
    """Does ``pod`` use the claim ``pvc`` (same namespace; ephemeral claims included)?"""
    meta = pvc.get("metadata") or {}
    if meta.get("namespace") != (pod.get("metadata") or {}).get("namespace"):
        return False
    return any(name == meta.get("name") for name, _ in pod_claims(pod))


def ephemeral_claim_error(pod: Mapping[str, Any], pvc: Mapping[str, Any]) -> str:
    """ephemeral.VolumeIsForPod: "" when the pod controls the claim, else upstream's error."""
    pod_meta, pvc_meta = pod.get("metadata") or {}, pvc.get("metadata") or {}
    for ref in pvc_meta.get("ownerReferences") or []:
        if ref.get("controller") and ref.get("uid") == pod_meta.get("uid"):
            return ""
    return (f"PVC {pvc_meta.get('namespace', '')}/{pvc_meta.get('name', '')} was not created for pod "
            f"{pod_meta.get('namespace', '')}/{pod_meta.get('name', '')} (pod is not owner)")


def label_zones(value: str) -> set[str] | None:
    """LabelZonesToSet: a zone label value may list several zones joined by "__"; None when
    one of them is empty (upstream then ignores the label)."""
    zones = [zone.strip() for zone in value.split("__")]
    if any(not zone for zone in zones):
        return None
    return set(zones)


def sorted_by_request(claims: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Claims by increasing storage request (stable), as the binder matches them."""
    return sorted(claims, key=claim_request)


#: Node allocatable names of attach limits start with this (IsAttachableVolumeResourceName).
ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"
_CSI_ATTACH_LIMIT_PREFIX = "attachable-volumes-csi-"
_RESOURCE_NAME_LENGTH_LIMIT = 63


def csi_attach_limit_key(driver: str) -> str:
    """GetCSIAttachLimitKey: the resource name of a CSI driver's attach limit; a long driver
    name is cut to 23 characters plus 16 hex digits of its SHA-1, to stay a valid name."""
    if len(_CSI_ATTACH_LIMIT_PREFIX) + len(driver) >= _RESOURCE_NAME_LENGTH_LIMIT:
        digest = hashlib.sha1(driver.encode()).hexdigest()[:16]
        return _CSI_ATTACH_LIMIT_PREFIX + driver[:23] + digest
    return _CSI_ATTACH_LIMIT_PREFIX + driver
