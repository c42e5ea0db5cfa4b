"""Strategies for the smaller core/v1 types (pods and services have their own modules)."""

from __future__ import annotations

import base64
import copy
import json
import re
from typing import Any

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FieldError
from fakekube.api.machinery.validation import is_qualified_name, name_is_dns_label, name_is_path_segment
from fakekube.api.registry import (
    FINALIZE,
    NO_DELETECOLLECTION,
    PROXY,
    SCALE,
    STATUS,
    TOKEN,
    ResourceType,
    Strategy,
    WriteContext,
)
from fakekube.api.selectors import (
    CORE_EVENT_FIELD_SET,
    NAMESPACE_FIELD_SET,
    NODE_FIELD_SET,
    REPLICATION_CONTROLLER_FIELD_SET,
    SECRET_FIELD_SET,
)
from fakekube.api.table import (
    CONFIG_MAP_TABLE,
    ENDPOINTS_TABLE,
    EVENT_TABLE,
    LIMIT_RANGE_TABLE,
    NAMESPACE_TABLE,
    NODE_TABLE,
    PERSISTENT_VOLUME_CLAIM_TABLE,
    PERSISTENT_VOLUME_TABLE,
    REPLICATION_CONTROLLER_TABLE,
    RESOURCE_QUOTA_TABLE,
    SECRET_TABLE,
    SERVICE_ACCOUNT_TABLE,
)
from fakekube.api.types._util import (
    Obj,
    child,
    ensure_dict,
    immutable,
    key,
    non_negative,
    parse_quantity,
    required_one_of,
    selector_mismatch,
)
from fakekube.api.types.events import legacy_event_problems
from fakekube.clock import format_rfc3339
from fakekube.api.types.core_pods import default_pod_template, template_deadline_errors, validate_replicated_template

MAX_SECRET_SIZE_BYTES = 1024 * 1024
IMMUTABLE_WHEN_SET = "field is immutable when `immutable` is set"
_CONFIG_KEY_RE = re.compile(r"^[-._a-zA-Z0-9]+$")
CONFIG_KEY_MSG = ("a valid config key must consist of alphanumeric characters, '-', '_' or '.' "
                  "(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')")
ACCESS_MODES = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]


#: Finalizer names a namespace's ``spec.finalizers`` may hold without a domain (upstream's
#: ``IsStandardFinalizerName``).
STANDARD_FINALIZERS = ("kubernetes", "orphan", "foregroundDeletion")


class NamespaceStrategy(Strategy):
    """Namespaces: the name label, the ``kubernetes`` finalizer, phase Active.

    ``spec.finalizers`` changes only through ``namespaces/finalize``; a terminating
    namespace stays until that list (and ``metadata.finalizers``) is empty."""

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        name = (obj.get("metadata") or {}).get("name")
        if name:
            ensure_dict(ensure_dict(obj, "metadata"), "labels")["kubernetes.io/metadata.name"] = name

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        obj["status"] = {"phase": "Active"}
        finalizers = ensure_dict(obj, "spec").setdefault("finalizers", [])
        if "kubernetes" not in finalizers:
            finalizers.append("kubernetes")

    def prepare_for_update(self, new: Obj, old: Obj, ctx: WriteContext) -> None:
        """Finalizers change only through the /finalize subresource upstream."""
        old_finalizers = (old.get("spec") or {}).get("finalizers")
        spec = ensure_dict(new, "spec")
        if old_finalizers is None:
            spec.pop("finalizers", None)
        else:
            spec["finalizers"] = copy.deepcopy(old_finalizers)

    def validate(self, obj: Obj) -> list[FieldError]:
        """Each ``spec.finalizers`` name (upstream's ``validateKubeFinalizerName``): a
        qualified name, and one without a domain must be a standard one."""
        problems = []
        for name in (obj.get("spec") or {}).get("finalizers") or []:
            problems += [errors.invalid("spec.finalizers", name, m) for m in is_qualified_name(str(name))]
            if "/" not in str(name) and name not in STANDARD_FINALIZERS:
                problems.append(errors.invalid("spec.finalizers", name,
                                               "name is neither a standard finalizer name nor is it fully qualified"))
        return problems


NAMESPACES = ResourceType(
    "", "v1", "Namespace", "namespaces", namespaced=False, short_names=("ns",), verbs=NO_DELETECOLLECTION,
    subresources=(STATUS, FINALIZE), strategy=NamespaceStrategy(), table=NAMESPACE_TABLE, field_set=NAMESPACE_FIELD_SET,
    name_rule=name_is_dns_label, returns_deleted_object=True,
)


# --- ConfigMap / Secret -----------------------------------------------------------

def _config_key_errors(k: str, path: str) -> list[FieldError]:
    errs = []
    if len(k) > 253:
        errs.append(errors.invalid(path, k, "must be no more than 253 characters"))
    if not _CONFIG_KEY_RE.match(k):
        errs.append(errors.invalid(path, k, CONFIG_KEY_MSG))
    if k in (".", ".."):
        errs.append(errors.invalid(path, k, "must not be '.'" if k == "." else "must not be '..'"))
    elif k.startswith(".."):
        errs.append(errors.invalid(path, k, "must not start with '..'"))
    return errs


def _decoded_size(value: str) -> int:
    try:
        return len(base64.b64decode(value, validate=False))
    except (ValueError, TypeError):
        return len(value)


class ConfigMapStrategy(Strategy):
    """ConfigMaps: key rules, a 1 MiB total, and ``immutable: true``."""

    def validate(self, obj: Obj) -> list[FieldError]:
        errs: list[FieldError] = []
        data = obj.get("data") or {}
        binary = obj.get("binaryData") or {}
        total = 0
        for k in data:
            errs += _config_key_errors(k, key("data", k))
            total += len(k) + len(str(data[k]).encode())
        for k in binary:
            errs += _config_key_errors(k, key("binaryData", k))
            if k in data:
                errs.append(errors.invalid(key("binaryData", k), k, "duplicate of key present in data"))
            total += len(k) + _decoded_size(str(binary[k]))
        if total > MAX_SECRET_SIZE_BYTES:
            errs.append(errors.FieldError(errors.FIELD_TOO_LONG, "", f"may not be more than {MAX_SECRET_SIZE_BYTES} bytes"))
        return errs

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs: list[FieldError] = []
        if old.get("immutable"):
            if not new.get("immutable"):
                errs.append(errors.forbidden("immutable", IMMUTABLE_WHEN_SET))
            for name in ("data", "binaryData"):
                if (new.get(name) or {}) != (old.get(name) or {}):
                    errs.append(errors.forbidden(name, IMMUTABLE_WHEN_SET))
        return errs + self.validate(new)


CONFIG_MAPS = ResourceType(
    "", "v1", "ConfigMap", "configmaps", namespaced=True, short_names=("cm",), strategy=ConfigMapStrategy(),
    table=CONFIG_MAP_TABLE,
)


# Secret types whose data must carry these keys (``ValidateSecret``).
_REQUIRED_SECRET_KEYS = {
    "kubernetes.io/dockercfg": [".dockercfg"],
    "kubernetes.io/dockerconfigjson": [".dockerconfigjson"],
    "kubernetes.io/ssh-auth": ["ssh-privatekey"],
    "kubernetes.io/tls": ["tls.crt", "tls.key"],
}


class SecretStrategy(Strategy):
    """Secrets: stringData folded into data, type Opaque by default, type-specific keys."""

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        if not obj.get("type"):
            obj["type"] = "Opaque"
        string_data = obj.pop("stringData", None)
        if isinstance(string_data, dict) and string_data:
            data = ensure_dict(obj, "data")
            for k, v in string_data.items():
                data[k] = base64.b64encode(str(v).encode()).decode()

    def validate(self, obj: Obj) -> list[FieldError]:
        errs: list[FieldError] = []
        data = obj.get("data") or {}
        total = 0
        for k, v in data.items():
            errs += _config_key_errors(k, key("data", k))
            total += _decoded_size(str(v))
        if total > MAX_SECRET_SIZE_BYTES:
            errs.append(errors.FieldError(errors.FIELD_TOO_LONG, "data", f"may not be more than {MAX_SECRET_SIZE_BYTES} bytes"))
        secret_type = obj.get("type")
        for required_key in _REQUIRED_SECRET_KEYS.get(secret_type or "", []):
            if required_key not in data:
                errs.append(errors.required(key("data", required_key)))
        if secret_type == "kubernetes.io/service-account-token":
            annotations = (obj.get("metadata") or {}).get("annotations") or {}
            if not annotations.get("kubernetes.io/service-account.name"):
                errs.append(errors.required("metadata.annotations[kubernetes.io/service-account.name]"))
        if secret_type == "kubernetes.io/dockerconfigjson" and ".dockerconfigjson" in data:
            errs += _docker_config_json_errors(data[".dockerconfigjson"])
        return errs

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = immutable(new.get("type"), old.get("type"), "type")
        if old.get("immutable"):
            if not new.get("immutable"):
                errs.append(errors.forbidden("immutable", IMMUTABLE_WHEN_SET))
            if (new.get("data") or {}) != (old.get("data") or {}):
                errs.append(errors.forbidden("data", IMMUTABLE_WHEN_SET))
        return errs + self.validate(new)


SECRETS = ResourceType(
    "", "v1", "Secret", "secrets", namespaced=True, strategy=SecretStrategy(), table=SECRET_TABLE,
    field_set=SECRET_FIELD_SET,
)


def _docker_config_json_errors(encoded: str) -> list[FieldError]:
    try:
        json.loads(base64.b64decode(encoded))
    except (ValueError, TypeError) as exc:
        return [errors.invalid("data[.dockerconfigjson]", "<secret contents redacted>", str(exc))]
    return []


# --- Nodes, volumes ---------------------------------------------------------------

class NodeStrategy(Strategy):
    """Nodes: podCIDR/providerID may only go from unset to set; taints are checked."""

    def validate(self, obj: Obj) -> list[FieldError]:
        errs: list[FieldError] = []
        effects = ["NoExecute", "NoSchedule", "PreferNoSchedule"]
        seen: set[tuple] = set()
        for i, taint in enumerate((obj.get("spec") or {}).get("taints") or []):
            path = f"spec.taints[{i}]"
            if not taint.get("key"):
                errs.append(errors.required(child(path, "key")))
            effect = taint.get("effect")
            errs += required_one_of(effect, child(path, "effect"), effects)
            pair = (taint.get("key"), effect)
            if pair in seen:
                errs.append(errors.FieldError(errors.FIELD_DUPLICATE, path, "taints must be unique by key and effect pair"))
            seen.add(pair)
        return errs

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs: list[FieldError] = []
        new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        if old_spec.get("podCIDRs") and new_spec.get("podCIDRs") != old_spec.get("podCIDRs"):
            errs.append(errors.forbidden("spec.podCIDRs", "node updates may not change podCIDR except from \"\" to valid"))
        if old_spec.get("providerID") and new_spec.get("providerID") != old_spec.get("providerID"):
            errs.append(errors.forbidden("spec.providerID", "node updates may not change providerID except from \"\" to valid"))
        return errs + self.validate(new)

    def prepare_for_update(self, new: Obj, old: Obj, ctx: WriteContext) -> None:
        spec = new.get("spec") or {}
        if spec.get("podCIDR") and not spec.get("podCIDRs"):
            spec["podCIDRs"] = [spec["podCIDR"]]


NODES = ResourceType(
    "", "v1", "Node", "nodes", namespaced=False, short_names=("no",), subresources=(STATUS, PROXY), strategy=NodeStrategy(),
    table=NODE_TABLE, field_set=NODE_FIELD_SET,
)


def _access_mode_errors(modes: Any, path: str) -> list[FieldError]:
    if not modes:
        return [errors.required(path, "at least 1 access mode is required")]
    errs = []
    for mode in modes:
        if mode not in ACCESS_MODES:
            errs.append(errors.not_supported(path, mode, ACCESS_MODES))
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        errs.append(errors.forbidden(path, "may not use ReadWriteOncePod with other access modes"))
    return errs


def default_pvc_spec(spec: Obj) -> None:
    spec.setdefault("volumeMode", "Filesystem")


# VolumeAttributesClass is beta but off by default in 1.33, so upstream's message
# omits volumeAttributesClassName.
PVC_SPEC_IMMUTABLE = "spec is immutable after creation except resources.requests for bound claims"


class PersistentVolumeClaimStrategy(Strategy):
    """PVCs: Pending on create; the spec is fixed except a bound claim's storage request."""

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        default_pvc_spec(ensure_dict(obj, "spec"))

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        obj["status"] = {"phase": "Pending"}

    def validate(self, obj: Obj) -> list[FieldError]:
        spec = obj.get("spec") or {}
        errs = _access_mode_errors(spec.get("accessModes"), "spec.accessModes")
        storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
        if storage is None and not spec.get("dataSourceRef"):
            errs.append(errors.required("spec.resources[storage]"))
        elif storage is not None and not parse_quantity(storage):
            errs.append(errors.invalid("spec.resources.requests[storage]", str(storage), "must be greater than zero"))
        return errs

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = self.validate(new)
        new_spec, old_spec = copy.deepcopy(new.get("spec") or {}), old.get("spec") or {}
        bound = (old.get("status") or {}).get("phase") == "Bound"
        if bound:
            new_storage = ((new_spec.get("resources") or {}).get("requests") or {}).get("storage")
            old_storage = ((old_spec.get("resources") or {}).get("requests") or {}).get("storage")
            if new_storage is not None and old_storage is not None:
                if (parse_quantity(new_storage) or 0) < (parse_quantity(old_storage) or 0):
                    errs.append(errors.forbidden("spec.resources.requests.storage", "field can not be less than status.capacity"))
                new_spec["resources"]["requests"]["storage"] = old_storage
            if "volumeAttributesClassName" in old_spec or "volumeAttributesClassName" in new_spec:
                new_spec["volumeAttributesClassName"] = old_spec.get("volumeAttributesClassName")
                if new_spec["volumeAttributesClassName"] is None:
                    new_spec.pop("volumeAttributesClassName")
        if not old_spec.get("volumeName") and "volumeName" in new_spec:
            # Upstream lets spec.volumeName be set once: that is how a claim gets bound.
            old_spec = dict(old_spec, volumeName=new_spec["volumeName"])
        if old_spec.get("storageClassName") is None and new_spec.get("storageClassName") is not None and \
                "volume.beta.kubernetes.io/storage-class" not in ((old.get("metadata") or {}).get("annotations") or {}):
            # RetroactiveDefaultStorageClass (GA): a claim with no class may be given one.
            old_spec = dict(old_spec, storageClassName=new_spec["storageClassName"])
        if new_spec != old_spec:
            errs.append(errors.forbidden("spec", PVC_SPEC_IMMUTABLE))
        return errs


PERSISTENT_VOLUME_CLAIMS = ResourceType(
    "", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", namespaced=True, short_names=("pvc",),
    subresources=(STATUS,), strategy=PersistentVolumeClaimStrategy(), table=PERSISTENT_VOLUME_CLAIM_TABLE,
    returns_deleted_object=True,
)


class PersistentVolumeStrategy(Strategy):
    """PVs: Retain and Filesystem by default, phase Pending on create."""

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        spec = ensure_dict(obj, "spec")
        spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
        spec.setdefault("volumeMode", "Filesystem")
        host_path = spec.get("hostPath")
        if isinstance(host_path, dict):
            host_path.setdefault("type", "")

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        obj["status"] = {"phase": "Pending", "lastPhaseTransitionTime": format_rfc3339(ctx.now)}

    def prepare_subresource(self, subresource: str, new: Obj, old: Obj, ctx: WriteContext) -> Obj:
        """A status write that changes the phase stamps ``lastPhaseTransitionTime`` (unless
        the writer set a new one), as upstream's PV status strategy."""
        new_status, old_status = new.get("status") or {}, old.get("status") or {}
        if subresource == STATUS and new_status.get("phase") != old_status.get("phase") and \
                new_status.get("lastPhaseTransitionTime") in (None, old_status.get("lastPhaseTransitionTime")):
            return dict(new, status=dict(new_status, lastPhaseTransitionTime=format_rfc3339(ctx.now)))
        return new

    def validate(self, obj: Obj) -> list[FieldError]:
        spec = obj.get("spec") or {}
        errs = _access_mode_errors(spec.get("accessModes"), "spec.accessModes")
        if not (spec.get("capacity") or {}).get("storage"):
            errs.append(errors.required("spec.capacity"))
        policy = spec.get("persistentVolumeReclaimPolicy")
        if policy not in ("Delete", "Recycle", "Retain"):
            errs.append(errors.not_supported("spec.persistentVolumeReclaimPolicy", policy, ["Delete", "Recycle", "Retain"]))
        return errs

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = self.validate(new)
        new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        if old_spec.get("volumeMode") != new_spec.get("volumeMode"):
            errs += immutable(new_spec.get("volumeMode"), old_spec.get("volumeMode"), "spec.volumeMode")
        return errs


PERSISTENT_VOLUMES = ResourceType(
    "", "v1", "PersistentVolume", "persistentvolumes", namespaced=False, short_names=("pv",), subresources=(STATUS,),
    strategy=PersistentVolumeStrategy(), table=PERSISTENT_VOLUME_TABLE, returns_deleted_object=True,
)


# --- Endpoints, events, accounts, quota --------------------------------------------

class EndpointsStrategy(Strategy):
    """Endpoints: port protocols default to TCP."""

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        for subset in obj.get("subsets") or []:
            for port in subset.get("ports") or []:
                if not port.get("protocol"):
                    port["protocol"] = "TCP"

    def validate(self, obj: Obj) -> list[FieldError]:
        errs: list[FieldError] = []
        for i, subset in enumerate(obj.get("subsets") or []):
            for j, port in enumerate(subset.get("ports") or []):
                p = f"subsets[{i}].ports[{j}]"
                value = port.get("port")
                if not isinstance(value, int) or not 1 <= value <= 65535:
                    errs.append(errors.invalid(child(p, "port"), value, "must be between 1 and 65535, inclusive"))
            for j, address in enumerate(subset.get("addresses") or []):
                if not address.get("ip"):
                    errs.append(errors.required(f"subsets[{i}].addresses[{j}].ip"))
        return errs


ENDPOINTS = ResourceType(
    "", "v1", "Endpoints", "endpoints", namespaced=True, short_names=("ep",), strategy=EndpointsStrategy(),
    table=ENDPOINTS_TABLE, create_on_update=True, deprecation=("1.33", "discovery.k8s.io/v1 EndpointSlice"),
)


class CoreEventStrategy(Strategy):
    """core/v1 Events: upstream's legacy rules only (see :mod:`.events`, which also serves
    these objects as events.k8s.io/v1)."""

    def validate(self, obj: Obj) -> list[FieldError]:
        return legacy_event_problems(obj)


# core/v1 Events skip ObjectMeta validation (legacyValidateEvent) for old clients; only
# the REST path's segment rule applies to their names.
CORE_EVENTS = ResourceType(
    "", "v1", "Event", "events", namespaced=True, short_names=("ev",), strategy=CoreEventStrategy(),
    table=EVENT_TABLE, field_set=CORE_EVENT_FIELD_SET, name_rule=name_is_path_segment, create_on_update=True,
)


class ResourceQuotaStrategy(Strategy):
    """ResourceQuotas: status starts empty; hard values must parse and not be negative."""

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        obj["status"] = {}

    def validate(self, obj: Obj) -> list[FieldError]:
        errs: list[FieldError] = []
        for name, value in ((obj.get("spec") or {}).get("hard") or {}).items():
            quantity = parse_quantity(value)
            if quantity is None:
                errs.append(errors.invalid(key("spec.hard", name), value, "must be a valid quantity"))
            elif quantity < 0:
                errs.append(errors.invalid(key("spec.hard", name), value, "must be greater than or equal to 0"))
        return errs


RESOURCE_QUOTAS = ResourceType(
    "", "v1", "ResourceQuota", "resourcequotas", namespaced=True, short_names=("quota",), subresources=(STATUS,),
    strategy=ResourceQuotaStrategy(), table=RESOURCE_QUOTA_TABLE, returns_deleted_object=True,
)


class LimitRangeStrategy(Strategy):
    """LimitRanges: container defaults fall back to max, default requests to defaults/min."""

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        for item in (obj.get("spec") or {}).get("limits") or []:
            if item.get("type") != "Container":
                continue
            default = item.setdefault("default", {})
            default_request = item.setdefault("defaultRequest", {})
            for name, value in (item.get("max") or {}).items():
                default.setdefault(name, value)
            for name, value in default.items():
                default_request.setdefault(name, value)
            for name, value in (item.get("min") or {}).items():
                default_request.setdefault(name, value)
            if not default:
                item.pop("default")
            if not default_request:
                item.pop("defaultRequest")

    def validate(self, obj: Obj) -> list[FieldError]:
        errs: list[FieldError] = []
        for i, item in enumerate((obj.get("spec") or {}).get("limits") or []):
            if not item.get("type"):
                errs.append(errors.required(f"spec.limits[{i}].type"))
        return errs


LIMIT_RANGES = ResourceType(
    "", "v1", "LimitRange", "limitranges", namespaced=True, short_names=("limits",), strategy=LimitRangeStrategy(),
    table=LIMIT_RANGE_TABLE, create_on_update=True,
)


# --- ReplicationController --------------------------------------------------------

class ReplicationControllerStrategy(Strategy):
    """RCs: selector and labels default from the template's labels."""

    tracks_generation = True

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        spec = ensure_dict(obj, "spec")
        template = spec.get("template")
        labels = ((template or {}).get("metadata") or {}).get("labels") if isinstance(template, dict) else None
        if labels:
            if not spec.get("selector"):
                spec["selector"] = dict(labels)
            meta = ensure_dict(obj, "metadata")
            if not meta.get("labels"):
                meta["labels"] = dict(labels)
        if spec.get("replicas") is None:
            spec["replicas"] = 1
        default_pod_template(template)

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        obj["status"] = {"replicas": 0}

    def validate(self, obj: Obj) -> list[FieldError]:
        spec = obj.get("spec") or {}
        errs = non_negative(spec.get("minReadySeconds", 0), "spec.minReadySeconds")
        selector = spec.get("selector") or {}
        if not selector:
            errs.append(errors.required("spec.selector"))
        errs += non_negative(spec.get("replicas", 0), "spec.replicas")
        template = spec.get("template")
        if not isinstance(template, dict):
            return errs + [errors.required("spec.template")]
        labels = (template.get("metadata") or {}).get("labels") or {}
        if selector and any(labels.get(k) != v for k, v in selector.items()):
            errs.append(selector_mismatch("spec.template", labels))
        errs += validate_replicated_template(template, "spec.template")
        return errs + template_deadline_errors(spec, "ReplicationController")


REPLICATION_CONTROLLERS = ResourceType(
    "", "v1", "ReplicationController", "replicationcontrollers", namespaced=True, short_names=("rc",),
    categories=("all",), subresources=(STATUS, SCALE), strategy=ReplicationControllerStrategy(),
    table=REPLICATION_CONTROLLER_TABLE, field_set=REPLICATION_CONTROLLER_FIELD_SET,
)


class ServiceAccountStrategy(Strategy):
    """ServiceAccounts: nothing beyond the generic metadata rules in 1.33."""


SERVICE_ACCOUNTS = ResourceType(
    "", "v1", "ServiceAccount", "serviceaccounts", namespaced=True, short_names=("sa",), subresources=(TOKEN,),
    strategy=ServiceAccountStrategy(), table=SERVICE_ACCOUNT_TABLE, returns_deleted_object=True,
)
