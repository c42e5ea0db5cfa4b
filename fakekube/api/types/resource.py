"""resource.k8s.io/v1 (dynamic resource allocation, GA in 1.34): DeviceClasses,
ResourceClaims (with a status subresource), ResourceClaimTemplates and ResourceSlices.

Served from 1.34 (fakekube/objects/versions.py). Stored with upstream's main validation
rules (``pkg/apis/resource/validation``): a claim's and a template's spec is fixed once
created; a slice names its driver, its pool and exactly one way of choosing nodes. Nothing
allocates devices: no DRA driver or scheduler plugin acts on them (docs/api.md).
"""

from __future__ import annotations

from typing import Any

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FieldError
from fakekube.api.registry import STATUS, ResourceType, Strategy, WriteContext
from fakekube.api.table import DEVICE_CLASS_TABLE, RESOURCE_CLAIM_TABLE, RESOURCE_CLAIM_TEMPLATE_TABLE, RESOURCE_SLICE_TABLE
from fakekube.api.types._util import GoLiteral, Obj, dns1123_subdomain_errors, immutable

GROUP = "resource.k8s.io"
#: ``resource.PoolNameMaxLength`` and ``DriverNameMaxLength``.
POOL_NAME_MAX_LENGTH = 253
DRIVER_NAME_MAX_LENGTH = 63
NODE_CHOICES = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"


class DeviceClassStrategy(Strategy):
    """DeviceClasses: selectors and configuration for a class of devices."""

    tracks_generation = True


DEVICE_CLASSES = ResourceType(GROUP, "v1", "DeviceClass", "deviceclasses", returns_deleted_object=True, namespaced=False,
                              strategy=DeviceClassStrategy(), table=DEVICE_CLASS_TABLE)


def default_claim_spec(spec: Any) -> None:
    """``SetDefaults_ExactDeviceRequest`` / ``SetDefaults_DeviceSubRequest``: a request (or
    one of its ``firstAvailable`` alternatives) takes ExactCount devices, 1 unless it says."""
    requests = ((spec or {}).get("devices") or {}).get("requests") if isinstance(spec, dict) else None
    for request in requests if isinstance(requests, list) else []:
        if not isinstance(request, dict):
            continue
        wanted = [request.get("exactly")] + list(request.get("firstAvailable") or [])
        for one in (w for w in wanted if isinstance(w, dict)):
            one.setdefault("allocationMode", "ExactCount")
            if one["allocationMode"] == "ExactCount" and not one.get("count"):
                one["count"] = 1


class ResourceClaimStrategy(Strategy):
    """ResourceClaims: the spec is fixed once created (``ValidateResourceClaimUpdate``); the
    allocation lives in status, written by the scheduler and drivers through /status."""

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        default_claim_spec(obj.get("spec"))

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        obj["status"] = {}

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return immutable(new.get("spec"), old.get("spec"), "spec", GoLiteral("resource.ResourceClaimSpec{...}"))


RESOURCE_CLAIMS = ResourceType(GROUP, "v1", "ResourceClaim", "resourceclaims", returns_deleted_object=True, namespaced=True,
                               subresources=(STATUS,), strategy=ResourceClaimStrategy(), table=RESOURCE_CLAIM_TABLE)


class ResourceClaimTemplateStrategy(Strategy):
    """ResourceClaimTemplates: the claim a pod's ``resourceClaims`` entry would create;
    its spec is fixed once created."""

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        template = obj.get("spec")
        if isinstance(template, dict):
            default_claim_spec(template.get("spec"))

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return immutable(new.get("spec"), old.get("spec"), "spec",
                         GoLiteral("resource.ResourceClaimTemplateSpec{...}"))


RESOURCE_CLAIM_TEMPLATES = ResourceType(GROUP, "v1", "ResourceClaimTemplate", "resourceclaimtemplates",
                                        returns_deleted_object=True, namespaced=True, strategy=ResourceClaimTemplateStrategy(),
                                        table=RESOURCE_CLAIM_TEMPLATE_TABLE)


def _pool_errors(pool: Obj) -> list[FieldError]:
    """``validateResourcePool``: a name (DNS subdomains joined by "/") and a positive slice count."""
    errs: list[FieldError] = []
    name = str(pool.get("name") or "")
    if not name:
        errs.append(errors.required("spec.pool.name"))
    else:
        if len(name) > POOL_NAME_MAX_LENGTH:
            errs.append(errors.too_long("spec.pool.name", "", POOL_NAME_MAX_LENGTH))
        for part in name.split("/"):
            errs += dns1123_subdomain_errors(part, "spec.pool.name")
    count = pool.get("resourceSliceCount") or 0
    if count <= 0:
        errs.append(errors.invalid("spec.pool.resourceSliceCount", count, "must be greater than zero"))
    if (pool.get("generation") or 0) < 0:
        errs.append(errors.invalid("spec.pool.generation", pool["generation"], "must be greater than or equal to zero"))
    return errs


def _node_choice_errors(spec: Obj) -> list[FieldError]:
    """Exactly one of ``nodeName``, ``nodeSelector``, ``allNodes``, ``perDeviceNodeSelection``."""
    errs: list[FieldError] = []
    chosen = []
    if spec.get("nodeName") is not None:
        if spec["nodeName"]:
            chosen.append("`nodeName`")
        else:
            errs.append(errors.invalid("spec.nodeName", "", "must be either unset or set to a non-empty string"))
    if spec.get("nodeSelector") is not None:
        chosen.append("`nodeSelector`")
    for flag in ("allNodes", "perDeviceNodeSelection"):
        if spec.get(flag) is not None:
            if spec[flag]:
                chosen.append(f"`{flag}`")
            else:
                errs.append(errors.invalid(f"spec.{flag}", False, "must be either unset or set to true"))
    if not chosen:
        errs.append(errors.required("spec", NODE_CHOICES))
    elif len(chosen) > 1:
        errs.append(errors.invalid("spec", "{" + ", ".join(chosen) + "}", NODE_CHOICES + ", but multiple fields are set"))
    return errs


class ResourceSliceStrategy(Strategy):
    """ResourceSlices (``validateResourceSliceSpec``): what a driver publishes of one pool."""

    tracks_generation = True

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        pool = (obj.get("spec") or {}).get("pool") if isinstance(obj.get("spec"), dict) else None
        if isinstance(pool, dict):
            pool.setdefault("generation", 0)  # an int64 without omitempty: always written

    def validate(self, obj: Obj) -> list[FieldError]:
        raw = obj.get("spec")
        spec: Obj = raw if isinstance(raw, dict) else {}
        errs: list[FieldError] = []
        driver = str(spec.get("driver") or "")
        if not driver:
            errs.append(errors.required("spec.driver"))
        elif len(driver) > DRIVER_NAME_MAX_LENGTH:
            errs.append(errors.too_long("spec.driver", "", DRIVER_NAME_MAX_LENGTH))
        else:
            errs += dns1123_subdomain_errors(driver, "spec.driver")
        pool = spec.get("pool")
        errs += _pool_errors(pool if isinstance(pool, dict) else {})
        return errs + _node_choice_errors(spec)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        errs = immutable((new_spec.get("pool") or {}).get("name"), (old_spec.get("pool") or {}).get("name"),
                         "spec.pool.name")
        errs += immutable(new_spec.get("driver"), old_spec.get("driver"), "spec.driver")
        errs += immutable(new_spec.get("nodeName"), old_spec.get("nodeName"), "spec.nodeName")
        return errs + self.validate(new)


RESOURCE_SLICES = ResourceType(GROUP, "v1", "ResourceSlice", "resourceslices", returns_deleted_object=True, namespaced=False,
                               strategy=ResourceSliceStrategy(), table=RESOURCE_SLICE_TABLE)
