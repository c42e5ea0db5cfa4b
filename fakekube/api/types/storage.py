"""storage.k8s.io/v1 CSIDrivers, CSINodes, VolumeAttachments and (from 1.34) VolumeAttributesClasses.

(StorageClasses and CSIStorageCapacities are declared in :mod:`.other`.) Nothing in fakekube
acts on them — there is no CSI driver or attach/detach controller — so they are what a CSI
driver's installer, the kubelet's plugin registration and the external-attacher would write,
stored with upstream's defaults and validation.
"""

from __future__ import annotations

from typing import Any

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FieldError
from fakekube.api.registry import STATUS, ResourceType, Strategy, WriteContext
from fakekube.api.machinery.validation import is_qualified_name
from fakekube.api.table import CSI_DRIVER_TABLE, CSI_NODE_TABLE, VOLUME_ATTACHMENT_TABLE, VOLUME_ATTRIBUTES_CLASS_TABLE
from fakekube.api.types._util import GoLiteral, Obj, ensure_dict, immutable

LIFECYCLE_MODES = ["Persistent", "Ephemeral"]
FS_GROUP_POLICIES = ["File", "None", "ReadWriteOnceWithFSType"]
#: Token audiences a driver may ask for at most, and the shortest token lifetime (10 min).
MIN_TOKEN_SECONDS = 600


class CSIDriverStrategy(Strategy):
    """CSIDrivers (v1 defaults; ``ValidateCSIDriver``): attach required unless said otherwise,
    persistent volumes, and the attach and lifecycle fields fixed once created."""

    allow_unconditional_update = False  # AllowUnconditionalUpdate: a PUT needs a resourceVersion
    tracks_generation = True
    starts_generation = False  # upstream's strategy bumps it on a spec change, never sets it

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        spec = ensure_dict(obj, "spec")
        for name, value in (("attachRequired", True), ("podInfoOnMount", False), ("storageCapacity", False),
                            ("fsGroupPolicy", "ReadWriteOnceWithFSType"), ("requiresRepublish", False),
                            ("seLinuxMount", False)):
            if spec.get(name) is None:
                spec[name] = value
        if not spec.get("volumeLifecycleModes"):
            spec["volumeLifecycleModes"] = ["Persistent"]

    def validate(self, obj: Obj) -> list[FieldError]:
        spec = obj.get("spec") or {}
        problems: list[FieldError] = []
        for mode in spec.get("volumeLifecycleModes") or []:
            if mode not in LIFECYCLE_MODES:
                problems.append(errors.not_supported("spec.volumeLifecycleModes", mode, LIFECYCLE_MODES))
        policy = spec.get("fsGroupPolicy")
        if policy is not None and policy not in FS_GROUP_POLICIES:
            problems.append(errors.not_supported("spec.fsGroupPolicy", policy, FS_GROUP_POLICIES))
        audiences = set()
        for i, request in enumerate(spec.get("tokenRequests") or []):
            audience = request.get("audience", "")
            if audience in audiences:
                problems.append(errors.duplicate(f"spec.tokenRequests[{i}].audience", audience))
            audiences.add(audience)
            seconds = request.get("expirationSeconds")
            if seconds is not None and seconds < MIN_TOKEN_SECONDS:
                problems.append(errors.invalid(f"spec.tokenRequests[{i}].expirationSeconds", seconds,
                                               "may not specify a duration less than 10 minutes"))
        return problems

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        problems: list[FieldError] = []
        for name in ("attachRequired", "fsGroupPolicy", "volumeLifecycleModes"):
            problems += immutable(new_spec.get(name), old_spec.get(name), f"spec.{name}")
        return problems + self.validate(new)


CSI_DRIVERS = ResourceType(
    "storage.k8s.io", "v1", "CSIDriver", "csidrivers", returns_deleted_object=True, namespaced=False, strategy=CSIDriverStrategy(),
    table=CSI_DRIVER_TABLE,
)


class CSINodeStrategy(Strategy):
    """CSINodes (``ValidateCSINode``): each driver named once, with a node ID."""

    allow_unconditional_update = False  # AllowUnconditionalUpdate: a PUT needs a resourceVersion

    def validate(self, obj: Obj) -> list[FieldError]:
        problems: list[FieldError] = []
        names: set[str] = set()
        for i, driver in enumerate((obj.get("spec") or {}).get("drivers") or []):
            path = f"spec.drivers[{i}]"
            name = driver.get("name") or ""
            if not name:
                problems.append(errors.required(f"{path}.name"))
            elif name in names:
                problems.append(errors.duplicate(f"{path}.name", name))
            names.add(name)
            if not driver.get("nodeID"):
                problems.append(errors.required(f"{path}.nodeID"))
        return problems


CSI_NODES = ResourceType(
    "storage.k8s.io", "v1", "CSINode", "csinodes", returns_deleted_object=True, namespaced=False, strategy=CSINodeStrategy(), table=CSI_NODE_TABLE,
)


def _source_problems(source: Any) -> list[FieldError]:
    source = source or {}
    given = [name for name in ("persistentVolumeName", "inlineVolumeSpec") if source.get(name)]
    if len(given) != 1:
        return [errors.required("spec.source", "must specify exactly one of inlineVolumeSpec and persistentVolumeName")]
    return []


class VolumeAttachmentStrategy(Strategy):
    """VolumeAttachments: an attacher, a node and one source; the spec never changes; the
    external-attacher writes status."""

    allow_unconditional_update = False  # AllowUnconditionalUpdate: a PUT needs a resourceVersion

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        obj.pop("status", None)

    def validate(self, obj: Obj) -> list[FieldError]:
        spec = obj.get("spec") or {}
        problems = [errors.required(f"spec.{name}") for name in ("attacher",) if not spec.get(name)]
        problems += _source_problems(spec.get("source"))
        if not spec.get("nodeName"):
            problems.append(errors.required("spec.nodeName"))
        return problems

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        if new.get("spec") != old.get("spec"):
            return [errors.invalid("spec", GoLiteral("storage.VolumeAttachmentSpec{...}"), "field is immutable")]
        return self.validate(new)


VOLUME_ATTACHMENTS = ResourceType(
    "storage.k8s.io", "v1", "VolumeAttachment", "volumeattachments", returns_deleted_object=True, namespaced=False, subresources=(STATUS,),
    strategy=VolumeAttachmentStrategy(), table=VOLUME_ATTACHMENT_TABLE,
)


#: ``maxProvisionerParameterSize`` / ``maxProvisionerParameterLen``.
MAX_PARAMETERS_BYTES = 256 * 1024
MAX_PARAMETERS = 512


class VolumeAttributesClassStrategy(Strategy):
    """VolumeAttributesClasses (GA in 1.34; ``ValidateVolumeAttributesClass``): a driver name
    (a qualified name) and at least one parameter, both fixed once created. Stored and
    validated: no CSI driver acts on them."""

    def validate(self, obj: Obj) -> list[FieldError]:
        problems: list[FieldError] = []
        driver = str(obj.get("driverName") or "")
        if not driver:
            problems.append(errors.required("driverName"))
        else:
            problems += [errors.invalid("driverName", driver.lower(), m) for m in is_qualified_name(driver.lower())]
        params = obj.get("parameters") or {}
        if len(params) > MAX_PARAMETERS:
            return problems + [errors.too_long("parameters", "", MAX_PARAMETERS)]
        problems += [errors.invalid("parameters", key, "field can not be empty.") for key in params if not key]
        if sum(len(k) + len(str(v)) for k, v in params.items()) > MAX_PARAMETERS_BYTES:
            problems.append(errors.too_long("parameters", "", MAX_PARAMETERS_BYTES))
        if not params:
            problems.append(errors.required("parameters", "must contain at least one key/value pair"))
        return problems

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        problems: list[FieldError] = []
        if new.get("driverName") != old.get("driverName"):
            problems.append(errors.forbidden("driverName", "updates to driverName are forbidden."))
        if (new.get("parameters") or {}) != (old.get("parameters") or {}):
            problems.append(errors.forbidden("parameters", "updates to parameters are forbidden."))
        return problems + self.validate(new)


VOLUME_ATTRIBUTES_CLASSES = ResourceType(
    "storage.k8s.io", "v1", "VolumeAttributesClass", "volumeattributesclasses", returns_deleted_object=True, namespaced=False,
    short_names=("vac",), strategy=VolumeAttributesClassStrategy(), table=VOLUME_ATTRIBUTES_CLASS_TABLE,
)
