"""Strategies for the smaller core/v1 types (pods and services have their own modules)."""

from __future__ import annotations

import base64
import copy
import difflib
import json
import re
from typing import Any

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FieldError
from fakekube.api.machinery.validation import (
    is_qualified_name,
    is_valid_label_value,
    name_is_dns_label,
    name_is_path_segment,
    validate_label_name,
)
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
from fakekube.api.types._net import endpoint_ip_errors, legacy_cidr_errors, legacy_ip_errors
from fakekube.api.types._pem import x509_key_pair_problem
from fakekube.api.types._resources import (
    container_resource_name_errors,
    nonnegative_quantity,
    quota_resource_name_errors,
    resource_name_errors,
)
from fakekube.api.types._util import (
    GoLiteral,
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
from fakekube.api.wire.decoding import go_syntax_error, json_kind
from fakekube.clock import format_rfc3339
from fakekube.objects.resourcelist import canonical
from fakekube.objects.syntax import go_quote
from fakekube.api.types.core_pods import default_pod_template, template_deadline_errors, validate_replicated_template

MAX_SECRET_SIZE_BYTES = 1024 * 1024
IMMUTABLE_WHEN_SET = "field is immutable when `immutable` is set"
_CONFIG_KEY_RE = re.compile(r"^[-._a-zA-Z0-9]+$")
CONFIG_KEY_MSG = ("a valid config key must consist of alphanumeric characters, '-', '_' or '.' "
                  "(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')")
ACCESS_MODES = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
VOLUME_MODES = ["Block", "Filesystem"]
#: A PersistentVolume's sources, in the order ``ValidatePersistentVolumeSpec`` counts them
#: (JSON field, the name its "more than 1 volume type" error uses).
PV_SOURCES = (("hostPath", "hostPath"), ("gcePersistentDisk", "gcePersistentDisk"),
              ("awsElasticBlockStore", "awsElasticBlockStore"), ("glusterfs", "glusterfs"), ("flocker", "flocker"),
              ("nfs", "nfs"), ("rbd", "rbd"), ("quobyte", "quobyte"), ("cephfs", "cephFS"), ("iscsi", "iscsi"),
              ("cinder", "cinder"), ("fc", "fc"), ("flexVolume", "flexVolume"), ("azureFile", "azureFile"),
              ("vsphereVolume", "vsphereVolume"), ("photonPersistentDisk", "photonPersistentDisk"),
              ("portworxVolume", "portworxVolume"), ("azureDisk", "azureDisk"), ("scaleIO", "scaleIO"),
              ("local", "local"), ("storageos", "storageos"), ("csi", "csi"))


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
        """Also the name label again: a generated name is known only now (upstream's
        Canonicalize sets it after generateName resolved)."""
        self.default(obj, ctx)
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
        return _spec_finalizer_problems(obj, indexed=False)

    def validate_subresource(self, subresource: str, new: Obj, old: Obj) -> list[FieldError]:
        """``ValidateNamespaceFinalizeUpdate``: the names as on create, each by its index."""
        return _spec_finalizer_problems(new, indexed=True) if subresource == FINALIZE else []


def _spec_finalizer_problems(obj: Obj, indexed: bool) -> list[FieldError]:
    """Each ``spec.finalizers`` name (upstream's ``validateFinalizerName``): a qualified name,
    and one without a domain must be a standard one. A create reports them at
    ``spec.finalizers``, a finalize at ``spec.finalizers[i]``."""
    problems = []
    for i, name in enumerate((obj.get("spec") or {}).get("finalizers") or []):
        path = f"spec.finalizers[{i}]" if indexed else "spec.finalizers"
        problems += [errors.invalid(path, name, m) for m in is_qualified_name(str(name))]
        if "/" not in str(name) and name not in STANDARD_FINALIZERS:
            problems.append(errors.invalid(path, name, "name is neither a standard finalizer name nor is it fully qualified"))
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
            if k in binary:
                errs.append(errors.invalid(key("data", k), k, "duplicate of key present in binaryData"))
            total += len(k) + len(str(data[k]).encode())
        for k in binary:
            errs += _config_key_errors(k, key("binaryData", k))
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
        if secret_type == "kubernetes.io/basic-auth" and "username" not in data and "password" not in data:
            # either key may be empty, but one must be there
            errs += [errors.required("data[username]"), errors.required("data[password]")]
        if secret_type == "kubernetes.io/service-account-token":
            annotations = (obj.get("metadata") or {}).get("annotations") or {}
            if not annotations.get("kubernetes.io/service-account.name"):
                errs.append(errors.required("metadata.annotations[kubernetes.io/service-account.name]"))
        if secret_type == "kubernetes.io/dockerconfigjson" and ".dockerconfigjson" in data:
            errs += _docker_config_json_errors(data[".dockerconfigjson"])
        return errs

    def warnings_on_create(self, obj: Obj) -> list[str]:
        return _secret_warnings(obj)

    def warnings_on_update(self, new: Obj, old: Obj) -> list[str]:
        return _secret_warnings(new)

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


def _secret_warnings(obj: Obj) -> list[str]:
    """upstream's warningsForSecret: a ``kubernetes.io/tls`` Secret whose certificate and key
    are not a pair is stored, with ``tls.X509KeyPair``'s complaint as a warning."""
    if obj.get("type") != "kubernetes.io/tls":
        return []
    data = obj.get("data") or {}
    problem = x509_key_pair_problem(base64.b64decode(data.get("tls.crt") or ""),
                                    base64.b64decode(data.get("tls.key") or ""))
    return [] if problem is None else [problem]


def _docker_config_json_errors(encoded: str) -> list[FieldError]:
    """The content must decode (Go's ``json.Unmarshal`` into a map, with its words) as an object."""
    text = base64.b64decode(encoded).decode("utf-8", errors="replace")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        problem = go_syntax_error(text, exc)
    else:
        if value is None or isinstance(value, dict):
            return []
        problem = f"json: cannot unmarshal {json_kind(value)} into Go value of type map[string]interface {{}}"
    return [errors.invalid("data[.dockerconfigjson]", "<secret contents redacted>", problem)]


# --- Nodes, volumes ---------------------------------------------------------------

class NodeStrategy(Strategy):
    """Nodes: podCIDR/providerID may only go from unset to set; taints, pod CIDRs and
    resource quantities are checked (``ValidateNode``)."""

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        _convert_pod_cidrs(obj.get("spec"))
        status = obj.get("status")
        if isinstance(status, dict) and status.get("capacity") is not None and status.get("allocatable") is None:
            status["allocatable"] = dict(status["capacity"])  # SetDefaults_NodeStatus

    def validate(self, obj: Obj) -> list[FieldError]:
        spec = obj.get("spec") or {}
        errs = _taint_errors(spec.get("taints") or [], "metadata.taints") + _node_resource_errors(obj)
        for i, cidr in enumerate(spec.get("podCIDRs") or []):
            errs += legacy_cidr_errors(cidr, f"spec.podCIDRs[{i}]")
        return errs

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        """Upstream's node strategy runs ``ValidateNode`` and then ``ValidateNodeUpdate``, which
        checks the resources and the taints again: those errors come twice (causes keep both)."""
        errs = self.validate(new) + _node_resource_errors(new)
        new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        if old_spec.get("podCIDRs") and new_spec.get("podCIDRs") != old_spec.get("podCIDRs"):
            errs.append(errors.forbidden("spec.podCIDRs", "node updates may not change podCIDR except from \"\" to valid"))
        if old_spec.get("providerID") and new_spec.get("providerID") != old_spec.get("providerID"):
            errs.append(errors.forbidden("spec.providerID", "node updates may not change providerID except from \"\" to valid"))
        return errs + _taint_errors(new_spec.get("taints") or [], "metadata.taints")


def _convert_pod_cidrs(spec: Any) -> None:
    """v1 → internal conversion of the two CIDR fields: ``podCIDR`` wins over a
    ``podCIDRs`` whose first entry differs, and fills an empty ``podCIDRs``."""
    if not isinstance(spec, dict) or not spec.get("podCIDR"):
        return
    cidrs = spec.get("podCIDRs") or []
    if not cidrs or cidrs[0] != spec["podCIDR"]:
        spec["podCIDRs"] = [spec["podCIDR"]]


_TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]


def _taint_errors(taints: list[Any], path: str) -> list[FieldError]:
    """``validateNodeTaints`` (upstream reports them under ``metadata.taints``)."""
    errs: list[FieldError] = []
    seen: set[tuple[Any, Any]] = set()
    for i, taint in enumerate(taints):
        at = f"{path}[{i}]"
        errs += validate_label_name(taint.get("key") or "", child(at, "key"))
        value = taint.get("value") or ""
        if problems := is_valid_label_value(value):
            errs.append(errors.invalid(child(at, "value"), value, ";".join(problems)))
        errs += required_one_of(taint.get("effect"), child(at, "effect"), _TAINT_EFFECTS)
        pair = (taint.get("effect"), taint.get("key"))
        if pair in seen:
            errs.append(errors.FieldError(errors.FIELD_DUPLICATE, at, "taints must be unique by key and effect pair",
                                          _shown_taint(taint)))
            continue
        seen.add(pair)
    return errs


def _shown_taint(taint: Obj) -> GoLiteral:
    """A ``core.Taint`` as a field error shows it (%#v up to 1.33, JSON after)."""
    key_, value, effect, added = (taint.get("key") or "", taint.get("value") or "", taint.get("effect") or "",
                                  taint.get("timeAdded"))
    go = (f"core.Taint{{Key:{go_quote(key_)}, Value:{go_quote(value)}, Effect:{go_quote(effect)}, "
          f"TimeAdded:{'<nil>' if added is None else '(*v1.Time)(...)'}}}")
    return GoLiteral(go, errors.go_json_struct([("Key", key_), ("Value", value), ("Effect", effect),
                                                ("TimeAdded", added)]))


def _node_resource_errors(node: Obj) -> list[FieldError]:
    """``ValidateNodeResources``: capacity and allocatable quantities are not negative."""
    status = node.get("status") or {}
    errs: list[FieldError] = []
    for field_name in ("capacity", "allocatable"):
        for name, value in (status.get(field_name) or {}).items():
            errs += nonnegative_quantity(value, f"status.{field_name}.{name}")
    return errs


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


def pvc_spec_errors(spec: Obj, path: str) -> list[FieldError]:
    """``ValidatePersistentVolumeClaimSpec`` (what fakekube checks of it), for a claim and for a
    StatefulSet's claim templates: access modes, a storage request, the volume mode."""
    errs = _access_mode_errors(spec.get("accessModes"), f"{path}.accessModes")
    storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    if storage is None and not spec.get("dataSourceRef"):
        errs.append(errors.required(f"{path}.resources[storage]"))
    elif storage is not None and not parse_quantity(storage):
        errs.append(errors.invalid(f"{path}.resources[storage]", str(storage), "must be greater than zero"))
    mode = spec.get("volumeMode")
    if mode is not None and mode not in VOLUME_MODES:
        errs.append(errors.not_supported(f"{path}.volumeMode", mode, VOLUME_MODES))
    return errs


def default_pvc_spec(spec: Obj) -> None:
    spec.setdefault("volumeMode", "Filesystem")


# The reference (1.36, also emulating 1.33) names volumeAttributesClassName whatever the gate.
PVC_SPEC_IMMUTABLE = ("spec is immutable after creation except resources.requests and volumeAttributesClassName "
                      "for bound claims")


def _go_pvc_spec(spec: Obj) -> Obj:
    """A claim's spec as the internal ``core.PersistentVolumeClaimSpec`` marshals (Go field
    names, nil pointers and slices as null, quantities canonical): what upstream diffs."""
    def ref(value: Any, *names: str) -> Obj | None:
        if not isinstance(value, dict):
            return None
        return {name[0].upper() + name[1:] if name != "apiGroup" else "APIGroup": value.get(name, None if name in (
            "apiGroup", "namespace") else "") for name in names}

    def quantities(value: Any) -> Obj | None:
        return None if value is None else {key: canonical(value[key]) for key in sorted(value)}

    resources = spec.get("resources") or {}
    return {
        "AccessModes": spec.get("accessModes"), "Selector": spec.get("selector"),
        "Resources": {"Limits": quantities(resources.get("limits")), "Requests": quantities(resources.get("requests"))},
        "VolumeName": spec.get("volumeName") or "", "StorageClassName": spec.get("storageClassName"),
        "VolumeMode": spec.get("volumeMode"), "DataSource": ref(spec.get("dataSource"), "apiGroup", "kind", "name"),
        "DataSourceRef": ref(spec.get("dataSourceRef"), "apiGroup", "kind", "name", "namespace"),
        "VolumeAttributesClassName": spec.get("volumeAttributesClassName"),
    }


def pvc_spec_diff(old_spec: Obj, new_spec: Obj) -> str:
    """apimachinery's ``diff.Diff``: a unified diff (3 lines of context, no file header) of
    the two specs as ``json.MarshalIndent(v, "", " ")`` prints them."""
    def lines(spec: Obj) -> list[str]:
        return [line + "\n" for line in json.dumps(_go_pvc_spec(spec), indent=1, ensure_ascii=False).split("\n")]

    return "".join(list(difflib.unified_diff(lines(old_spec), lines(new_spec), n=3))[2:])


class PersistentVolumeClaimStrategy(Strategy):
    """PVCs: Pending on create; the spec is fixed except a bound claim's storage request."""

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        default_pvc_spec(ensure_dict(obj, "spec"))

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        obj["status"] = {"phase": "Pending"}

    def validate(self, obj: Obj) -> list[FieldError]:
        return pvc_spec_errors(obj.get("spec") or {}, "spec")

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
            errs.append(errors.forbidden("spec", f"{PVC_SPEC_IMMUTABLE}\n{pvc_spec_diff(old_spec, new_spec)}"))
        return errs


PERSISTENT_VOLUME_CLAIMS = ResourceType(
    "", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", returns_deleted_object=True, namespaced=True, short_names=("pvc",),
    subresources=(STATUS,), strategy=PersistentVolumeClaimStrategy(), table=PERSISTENT_VOLUME_CLAIM_TABLE,
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
        capacity = spec.get("capacity") or {}
        if not capacity:
            errs.append(errors.required("spec.capacity"))
        if "storage" not in capacity or len(capacity) > 1:
            errs.append(errors.not_supported("spec.capacity", _shown_resource_list(capacity), ["storage"]))
        policy = spec.get("persistentVolumeReclaimPolicy")
        if policy not in ("Delete", "Recycle", "Retain"):
            errs.append(errors.not_supported("spec.persistentVolumeReclaimPolicy", policy, ["Delete", "Recycle", "Retain"]))
        return errs + _pv_source_errors(spec)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = self.validate(new)
        new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        if old_spec.get("volumeMode") != new_spec.get("volumeMode"):
            errs += immutable(new_spec.get("volumeMode"), old_spec.get("volumeMode"), "spec.volumeMode")
        return errs


def _shown_resource_list(values: Obj) -> GoLiteral:
    """A ``core.ResourceList`` in a field error (its quantities as their text)."""
    if not values:
        return GoLiteral("core.ResourceList(nil)", "null")
    return GoLiteral("core.ResourceList{...}", errors.go_json({k: canonical(v) for k, v in values.items()}))


def _pv_source_errors(spec: Obj) -> list[FieldError]:
    """Exactly one volume source: Forbidden on each after the first, Required with none."""
    given = [name for field_name, name in PV_SOURCES if spec.get(field_name) is not None]
    if not given:
        return [errors.required("spec", "must specify a volume type")]
    return [errors.forbidden(f"spec.{name}", "may not specify more than 1 volume type") for name in given[1:]]


PERSISTENT_VOLUMES = ResourceType(
    "", "v1", "PersistentVolume", "persistentvolumes", returns_deleted_object=True, namespaced=False, short_names=("pv",), subresources=(STATUS,),
    strategy=PersistentVolumeStrategy(), table=PERSISTENT_VOLUME_TABLE,
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
        """``validateEndpointSubsets``: each subset's addresses, then its ports."""
        errs: list[FieldError] = []
        for i, subset in enumerate(obj.get("subsets") or []):
            if not subset.get("addresses") and not subset.get("notReadyAddresses"):
                errs.append(errors.required(f"subsets[{i}]", "must specify `addresses` or `notReadyAddresses`"))
            for field_name in ("addresses", "notReadyAddresses"):
                for j, address in enumerate(subset.get(field_name) or []):
                    errs += _endpoint_address_errors(address, f"subsets[{i}].{field_name}[{j}]")
            for j, port in enumerate(subset.get("ports") or []):
                p = f"subsets[{i}].ports[{j}]"
                value = port.get("port")
                if not isinstance(value, int) or not 1 <= value <= 65535:
                    errs.append(errors.invalid(child(p, "port"), value, "must be between 1 and 65535, inclusive"))
        return errs


def _endpoint_address_errors(address: Obj, path: str) -> list[FieldError]:
    """``validateEndpointAddress``: a parseable IP, then the routable-address rules."""
    ip = address.get("ip") or ""
    return legacy_ip_errors(ip, child(path, "ip")) + endpoint_ip_errors(ip, child(path, "ip"))


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
            errs += quota_resource_name_errors(name, key("spec.hard", name))
            quantity = parse_quantity(value)
            if quantity is None:
                errs.append(errors.invalid(key("spec.hard", name), value, "must be a valid quantity"))
            else:
                errs += nonnegative_quantity(value, key("spec.hard", name))
        return errs


RESOURCE_QUOTAS = ResourceType(
    "", "v1", "ResourceQuota", "resourcequotas", returns_deleted_object=True, namespaced=True, short_names=("quota",), subresources=(STATUS,),
    strategy=ResourceQuotaStrategy(), table=RESOURCE_QUOTA_TABLE,
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
        """``ValidateLimitRange``: known types once each, resource names, and the bounds in order
        (min ≤ default request ≤ default ≤ max)."""
        errs: list[FieldError] = []
        seen_types: set[str] = set()
        for i, item in enumerate((obj.get("spec") or {}).get("limits") or []):
            path = f"spec.limits[{i}]"
            limit_type = item.get("type") or ""
            errs += _limit_type_errors(limit_type, child(path, "type"))
            if limit_type in seen_types:
                errs.append(errors.duplicate(child(path, "type"), limit_type))
            seen_types.add(limit_type)
            errs += _limit_item_errors(item, limit_type, path)
        return errs


_LIMIT_TYPES = ("Pod", "Container", "PersistentVolumeClaim")


def _limit_type_errors(limit_type: str, path: str) -> list[FieldError]:
    """``validateLimitRangeTypeName``."""
    problems = [errors.invalid(path, limit_type, m) for m in is_qualified_name(limit_type)]
    if not problems and "/" not in limit_type and limit_type not in _LIMIT_TYPES:
        problems.append(errors.invalid(path, limit_type, "must be a standard limit type or fully qualified"))
    return problems


def _limit_item_errors(item: Obj, limit_type: str, path: str) -> list[FieldError]:
    """One ``spec.limits`` entry: its resource names, what a Pod limit may not have, then
    every resource's bounds (upstream walks a set; here in the order the names appear)."""
    names = container_resource_name_errors if limit_type in ("Pod", "Container") else resource_name_errors
    errs: list[FieldError] = []
    amounts: dict[str, dict[str, Any]] = {}
    fields = ["max", "min"] + ([] if limit_type == "Pod" else ["default", "defaultRequest"])
    if limit_type == "Pod":
        errs += [errors.forbidden(child(path, f), "may not be specified when `type` is 'Pod'")
                 for f in ("default", "defaultRequest") if item.get(f)]
    if limit_type == "PersistentVolumeClaim" and "storage" not in (item.get("min") or {}) \
            and "storage" not in (item.get("max") or {}):
        errs.append(errors.required(child(path, "limits"),
                                    "either minimum or maximum storage value is required, but neither was provided"))
    for field_name in fields + ["maxLimitRequestRatio"]:
        for name, value in (item.get(field_name) or {}).items():
            errs += names(name, key(child(path, field_name), name))
            amounts.setdefault(name, {})[field_name] = value
    for name, found in amounts.items():
        errs += _limit_bound_errors(found, name, path)
    return errs


def _limit_bound_errors(found: dict[str, Any], name: str, path: str) -> list[FieldError]:
    """The pairwise comparisons of one resource's min, max, default and default request."""
    value = {f: parse_quantity(v) for f, v in found.items()}
    text = {f: canonical(v) for f, v in found.items()}
    errs: list[FieldError] = []

    def over(low: str, high: str, at: str, shown: str, what: str) -> None:
        if value.get(low) is not None and value.get(high) is not None and value[low] > value[high]:  # type: ignore[operator]
            errs.append(errors.invalid(key(child(path, at), name), text[shown], what.format(low=text[low], high=text[high])))

    over("min", "max", "min", "min", "min value {low} is greater than max value {high}")
    over("min", "defaultRequest", "defaultRequest", "defaultRequest", "min value {low} is greater than default request value {high}")
    over("defaultRequest", "max", "defaultRequest", "defaultRequest", "default request value {low} is greater than max value {high}")
    over("defaultRequest", "default", "defaultRequest", "defaultRequest",
         "default request value {low} is greater than default limit value {high}")
    over("min", "default", "default", "min", "min value {low} is greater than default value {high}")
    over("default", "max", "default", "max", "default value {low} is greater than max value {high}")
    ratio = value.get("maxLimitRequestRatio")
    if ratio is not None and ratio < 1:
        errs.append(errors.invalid(key(child(path, "maxLimitRequestRatio"), name), text["maxLimitRequestRatio"],
                                   f"ratio {text['maxLimitRequestRatio']} is less than 1"))
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
        default_pod_template(template, ctx.release)

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
    """ServiceAccounts: the generic metadata rules, and ``cleanSecretReferences`` on create and
    update: a secret reference keeps only its name (the Secret is always the account's
    namespace's, so a namespace, kind or uid given there is dropped)."""

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        _clean_secret_references(obj)

    def prepare_for_update(self, new: Obj, old: Obj, ctx: WriteContext) -> None:
        _clean_secret_references(new)


def _clean_secret_references(account: Obj) -> None:
    secrets = account.get("secrets")
    if isinstance(secrets, list):
        account["secrets"] = [{"name": ref["name"]} if isinstance(ref, dict) and ref.get("name") else {}
                              for ref in secrets]


SERVICE_ACCOUNTS = ResourceType(
    "", "v1", "ServiceAccount", "serviceaccounts", returns_deleted_object=True, namespaced=True, short_names=("sa",), subresources=(TOKEN,),
    strategy=ServiceAccountStrategy(), table=SERVICE_ACCOUNT_TABLE,
)
