"""apiextensions.k8s.io/v1 CustomResourceDefinition: its defaults, its validation, its status.

Upstream's spec: apiextensions-apiserver 1.33, ``pkg/apis/apiextensions/v1/defaults.go``
(SetDefaults), ``pkg/registry/customresourcedefinition/strategy.go`` (status reset on
create, ``storedVersions`` kept, generation) and ``pkg/apis/apiextensions/validation``
(messages). Each version's ``openAPIV3Schema`` is checked by
:func:`fakekube.api.wire.structural.validate_crd_schema`. The conditions
(NamesAccepted, Established, Terminating) are written by the apiextensions controllers
(``fakekube/controllers/apiextensions/``), as upstream's are.
"""

from __future__ import annotations

from typing import Any, NamedTuple
from urllib.parse import urlparse

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FieldError, Shown, go_json_struct
from fakekube.api.machinery.jsonutil import deep_copy
from fakekube.api.machinery.validation import go_strings, is_dns1035_label, is_dns1123_subdomain
from fakekube.api.registry import STATUS, ResourceType, Strategy, WriteContext
from fakekube.api.types._util import GoLiteral, immutable
from fakekube.clock import format_rfc3339

Obj = dict[str, Any]

GROUP = "apiextensions.k8s.io"
NONE_CONVERTER = "None"
WEBHOOK_CONVERTER = "Webhook"
CLUSTER_SCOPED = "Cluster"
NAMESPACE_SCOPED = "Namespaced"
#: The finalizer every CRD gets at create: its objects are deleted before it goes.
CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
APPROVAL_ANNOTATION = "api-approved.kubernetes.io"
PRINTER_COLUMN_TYPES = ("boolean", "date", "integer", "number", "string")
PRINTER_COLUMN_FORMATS = ("byte", "date", "date-time", "double", "float", "int32", "int64", "password")
_APPROVAL_REASON = (f'protected groups must have approval annotation "{APPROVAL_ANNOTATION}", '
                    "see https://github.com/kubernetes/enhancements/pull/1111")


def versions_of(crd: Obj) -> list[Obj]:
    return [v for v in ((crd.get("spec") or {}).get("versions") or []) if isinstance(v, dict)]


def storage_version(crd: Obj) -> str:
    """The version marked ``storage: true`` ("" when none is)."""
    return next((v.get("name") or "" for v in versions_of(crd) if v.get("storage")), "")


def condition(crd: Obj, kind: str) -> Obj | None:
    """The status condition of ``kind`` (``Established``, ``NamesAccepted``, ``Terminating``)."""
    for cond in (crd.get("status") or {}).get("conditions") or []:
        if isinstance(cond, dict) and cond.get("type") == kind:
            return cond
    return None


def set_condition(crd: Obj, kind: str, status: str, reason: str, message: str, now: str) -> Obj:
    """A copy of ``crd`` with its ``kind`` condition set (``SetCRDCondition``: the transition
    time moves only when the status does). ``now`` is RFC 3339 cluster time."""
    old = condition(crd, kind)
    changed = old is None or old.get("status") != status
    new_cond = {"type": kind, "status": status,
                "lastTransitionTime": now if changed else (old or {}).get("lastTransitionTime", now),
                "reason": reason, "message": message}
    conditions = [c for c in (crd.get("status") or {}).get("conditions") or [] if c.get("type") != kind]
    if old is None:
        conditions.append(new_cond)
    else:
        at = [c.get("type") for c in (crd.get("status") or {}).get("conditions") or []].index(kind)
        conditions.insert(at, new_cond)
    return dict(crd, status=ordered_status(dict(crd.get("status") or {}, conditions=conditions)))


def ordered_status(status: Obj) -> Obj:
    """CustomResourceDefinitionStatus in its JSON field order."""
    order = ("conditions", "acceptedNames", "storedVersions")
    return {**{k: status[k] for k in order if k in status}, **{k: v for k, v in status.items() if k not in order}}


def condition_true(crd: Obj, kind: str) -> bool:
    cond = condition(crd, kind)
    return cond is not None and cond.get("status") == "True"


class CustomResourceDefinitionStrategy(Strategy):
    """Defaults, status reset and validation of a CRD (the main resource)."""

    allow_unconditional_update = False  # AllowUnconditionalUpdate: a PUT needs a resourceVersion
    tracks_generation = True
    status_writes_metadata = True

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        names = spec.get("names")
        if isinstance(names, dict):
            kind = names.get("kind") or ""
            if not names.get("singular") and isinstance(kind, str):
                names["singular"] = kind.lower()
            if not names.get("listKind") and kind:
                names["listKind"] = f"{kind}List"
        if spec.get("conversion") is None:
            spec["conversion"] = {"strategy": NONE_CONVERTER}
        webhook = (spec.get("conversion") or {}).get("webhook") if isinstance(spec.get("conversion"), dict) else None
        service = ((webhook or {}).get("clientConfig") or {}).get("service") if isinstance(webhook, dict) else None
        if isinstance(service, dict) and service.get("port") is None:
            service["port"] = 443

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        """Upstream resets status: empty accepted names, the storage version stored."""
        obj["status"] = {"acceptedNames": {"plural": "", "kind": ""}, "storedVersions": []}
        _add_stored_version(obj)

    def prepare_for_update(self, new: Obj, old: Obj, ctx: WriteContext) -> None:
        """Status is kept (the REST layer does it); a new storage version joins storedVersions."""
        new["status"] = deep_copy(old.get("status") or {})
        _add_stored_version(new)

    def validate(self, obj: Obj) -> list[FieldError]:
        problems = _name_matches(obj)
        problems += validate_spec(obj.get("spec") or {})
        problems += _status_problems(obj)
        problems += _approval(obj)
        return problems

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        problems = validate_spec(spec, old_spec)
        if condition_true(old, "Established"):
            problems += immutable(spec.get("scope"), old_spec.get("scope"), "spec.scope")
            problems += immutable(_names(spec).get("kind"), _names(old_spec).get("kind"), "spec.names.kind")
        problems += immutable(spec.get("group"), old_spec.get("group"), "spec.group")
        problems += immutable(_names(spec).get("plural"), _names(old_spec).get("plural"), "spec.names.plural")
        problems += _status_problems(new)
        problems += _approval(new)
        return problems

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        """``ValidateUpdateCustomResourceDefinitionStatus``: only the accepted names; stored
        versions are checked against spec.versions when the spec is written, not here."""
        return validate_names((new.get("status") or {}).get("acceptedNames") or {}, "status.acceptedNames")

    def prepare_for_delete(self, obj: Obj, ctx: WriteContext) -> Obj:
        """The first delete of a CRD adds the cleanup finalizer and marks it Terminating
        (upstream's REST.Delete), so its objects go before it does."""
        meta = obj.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            return obj
        marked = dict(obj, metadata=dict(meta, finalizers=[*[f for f in meta.get("finalizers") or []
                                                            if f != CLEANUP_FINALIZER], CLEANUP_FINALIZER]))
        return set_condition(marked, "Terminating", "True", "InstanceDeletionPending",
                             "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
                             format_rfc3339(ctx.now))


def _names(spec: Obj) -> Obj:
    names = spec.get("names")
    return names if isinstance(names, dict) else {}


def _add_stored_version(obj: Obj) -> None:
    status = obj.setdefault("status", {})
    stored = list(status.get("storedVersions") or [])
    version = storage_version(obj)
    if version and version not in stored:
        stored.append(version)
    status["storedVersions"] = stored


def _name_matches(obj: Obj) -> list[FieldError]:
    """The CRD's name rule beyond a DNS subdomain: ``<plural>.<group>``."""
    spec = obj.get("spec") or {}
    name = (obj.get("metadata") or {}).get("name") or ""
    if not name or name == f"{_names(spec).get('plural') or ''}.{spec.get('group') or ''}":
        return []
    return [errors.invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group')]


def validate_spec(spec: Obj, old_spec: Obj | None = None) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionSpec`` (v1), in upstream's order; on update,
    ``old_spec`` tells which versions keep their schema unchanged (their rules' cost is
    not held against them one by one, as upstream's suppressPerExpressionCost)."""
    problems = _group_problems(spec.get("group") or "")
    scope = spec.get("scope") or ""
    if not scope:
        problems.append(errors.required("spec.scope"))
    elif scope not in (CLUSTER_SCOPED, NAMESPACE_SCOPED):
        problems.append(errors.not_supported("spec.scope", scope, [CLUSTER_SCOPED, NAMESPACE_SCOPED]))
    old_schemas = {str(v.get("name")): v.get("schema") for v in versions_of({"spec": old_spec})} if old_spec else {}
    versions = versions_of({"spec": spec})
    shared = SharedParts.of(versions)
    problems += _versions_problems(versions, old_schemas, shared)
    names = _names(spec)
    for field in ("plural", "singular", "kind", "listKind"):
        if not names.get(field):
            problems.append(errors.required(f"spec.names.{field}"))
    problems += validate_names(names, "spec.names")
    problems += _shared_problems(shared, SharedParts.of(versions_of({"spec": old_spec})) if old_spec else None)
    problems += _conversion_problems(spec.get("conversion"))
    if spec.get("preserveUnknownFields") is True:
        problems.append(errors.invalid("spec.preserveUnknownFields", True, "cannot set to true, set "
                                       "x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"))
    return problems


def _group_problems(group: str) -> list[FieldError]:
    if not group:
        return [errors.required("spec.group")]
    why = is_dns1123_subdomain(group)
    if why:
        return [errors.invalid("spec.group", group, ",".join(why))]
    if len(group.split(".")) < 2:
        return [errors.invalid("spec.group", group, "should be a domain with at least one dot")]
    return []


class SharedParts(NamedTuple):
    """What every version sets identically: v1's conversion to the internal version moves
    it to the top (``spec.validation``, ``spec.subresources``, ``spec.additionalPrinterColumns``),
    so upstream validates it once there and its errors carry those paths."""

    schema: Obj | None
    subresources: Obj | None
    columns: list[Any] | None

    @classmethod
    def of(cls, versions: list[Obj]) -> "SharedParts":
        def shared(key: str) -> Any:
            values = [version.get(key) for version in versions]
            return values[0] if values and values[0] and all(v == values[0] for v in values) else None
        schema, subresources, columns = shared("schema"), shared("subresources"), shared("additionalPrinterColumns")
        return cls(schema if isinstance(schema, dict) and isinstance(schema.get("openAPIV3Schema"), dict) else None,
                   subresources if isinstance(subresources, dict) else None,
                   columns if isinstance(columns, list) else None)


def _shared_problems(shared: SharedParts, old: SharedParts | None) -> list[FieldError]:
    """The top-level schema, subresources and columns (after the names, in upstream's order)."""
    problems: list[FieldError] = []
    if shared.schema is not None:
        from fakekube.api.wire import structural  # schema machinery loads with the first CRD (cold start)
        unchanged = old is not None and old.schema == shared.schema
        problems += structural.validate_crd_schema(shared.schema["openAPIV3Schema"], "spec.validation.openAPIV3Schema",
                                                   unchanged)
    problems += _subresources_problems(shared.subresources, "spec.subresources")
    for j, column in enumerate(shared.columns or []):
        problems += _column_problems(column if isinstance(column, dict) else {}, f"spec.additionalPrinterColumns[{j}]")
    return problems


def _versions_problems(versions: list[Obj], old_schemas: dict[str, Any], shared: SharedParts) -> list[FieldError]:
    problems: list[FieldError] = []
    seen: set[str] = set()
    unique = True
    for i, version in enumerate(versions):
        path = f"spec.versions[{i}]"
        name = version.get("name") or ""
        unique = unique and name not in seen
        seen.add(name)
        why = is_dns1035_label(name)
        if why:
            problems.append(errors.invalid(f"{path}.name", name, ",".join(why)))
        unchanged = name in old_schemas and old_schemas[name] == version.get("schema")
        problems += _version_problems(version, path, unchanged, shared)
    shown = _shown_versions(versions)
    if not unique:
        problems.append(errors.invalid("spec.versions", shown, "must contain unique version names"))
    if sum(1 for v in versions if v.get("storage")) != 1:
        problems.append(errors.invalid("spec.versions", shown, "must have exactly one version marked as storage version"))
    return problems


def _go_version(version: Obj) -> str:
    """A short stand-in for Go's ``%#v`` of a version (upstream prints every field)."""
    return (f'apiextensions.CustomResourceDefinitionVersion{{Name:"{version.get("name") or ""}", '
            f'Served:{str(bool(version.get("served"))).lower()}, Storage:{str(bool(version.get("storage"))).lower()}}}')


def _go_versions(versions: list[Obj]) -> str:
    return "[]apiextensions.CustomResourceDefinitionVersion{" + ", ".join(map(_go_version, versions)) + "}"


def _json_version(version: Obj, shared: frozenset[str] = frozenset()) -> str:
    """The internal version as ``json.Marshal`` writes it (Go field names). A schema,
    subresources or columns all versions share are hoisted to the internal spec (null here);
    others show as ``{...}``: fakekube does not rebuild their internal form."""
    def given(name: str) -> Any:
        return None if version.get(name) is None or name in shared else Shown("{...}")
    return go_json_struct([
        ("Name", version.get("name") or ""), ("Served", bool(version.get("served"))),
        ("Storage", bool(version.get("storage"))), ("Deprecated", bool(version.get("deprecated"))),
        ("DeprecationWarning", version.get("deprecationWarning")), ("Schema", given("schema")),
        ("Subresources", given("subresources")), ("AdditionalPrinterColumns", given("additionalPrinterColumns")),
        ("SelectableFields", given("selectableFields"))])


def _shown_versions(versions: list[Obj]) -> GoLiteral:
    """The versions as upstream shows them: its v1 → internal conversion moves a schema,
    subresources or printer columns that every version has alike up to the spec."""
    shared = frozenset(name for name in ("schema", "subresources", "additionalPrinterColumns")
                       if len({repr(v.get(name)) for v in versions}) == 1)
    return GoLiteral(_go_versions(versions), "[" + ",".join(_json_version(v, shared) for v in versions) + "]")


def _version_problems(version: Obj, path: str, unchanged: bool, shared: SharedParts) -> list[FieldError]:
    """One version's own parts (what all versions share is checked at the top instead)."""
    problems: list[FieldError] = []
    schema = (version.get("schema") or {}).get("openAPIV3Schema") if isinstance(version.get("schema"), dict) else None
    if not isinstance(schema, dict):
        problems.append(errors.required(f"{path}.schema.openAPIV3Schema"))
    elif shared.schema is None:
        from fakekube.api.wire import structural  # schema machinery loads with the first CRD (cold start)
        problems += structural.validate_crd_schema(schema, f"{path}.schema.openAPIV3Schema", unchanged)
    if shared.subresources is None:
        problems += _subresources_problems(version.get("subresources"), f"{path}.subresources")
    own_columns = version.get("additionalPrinterColumns") if shared.columns is None else None
    for j, column in enumerate(own_columns or []):
        problems += _column_problems(column if isinstance(column, dict) else {}, f"{path}.additionalPrinterColumns[{j}]")
    return problems


def _subresources_problems(subresources: Any, path: str) -> list[FieldError]:
    scale = (subresources or {}).get("scale") if isinstance(subresources, dict) else None
    if not isinstance(scale, dict):
        return []
    problems: list[FieldError] = []
    for field, prefixes, where in (("specReplicasPath", (".spec.",), ".spec"),
                                   ("statusReplicasPath", (".status.",), ".status")):
        value = scale.get(field) or ""
        if not value:
            problems.append(errors.required(f"{path}.scale.{field}"))
            continue
        simple = simple_json_path_problems(value, f"{path}.scale.{field}")
        problems += simple or ([] if value.startswith(prefixes) else
                               [errors.invalid(f"{path}.scale.{field}", value, f"should be a json path under {where}")])
    selector = scale.get("labelSelectorPath") or ""
    if selector:
        simple = simple_json_path_problems(selector, f"{path}.scale.labelSelectorPath")
        problems += simple or ([] if selector.startswith((".spec.", ".status.")) else [errors.invalid(
            f"{path}.scale.labelSelectorPath", selector, "should be a json path under either .spec or .status")])
    return problems


def simple_json_path_problems(value: str, path: str) -> list[FieldError]:
    """``validateSimpleJSONPath``: a path in the dot notation, starting with ``.``."""
    if not value:
        return [errors.invalid(path, value, "must not be empty")]
    if not value.startswith("."):
        return [errors.invalid(path, value, "must be a simple json path starting with .")]
    return []


def _column_problems(column: Obj, path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    if not column.get("name"):
        problems.append(errors.required(f"{path}.name"))
    kinds = ",".join(PRINTER_COLUMN_TYPES)
    if not column.get("type"):
        problems.append(errors.required(f"{path}.type", f"must be one of {kinds}"))
    elif column["type"] not in PRINTER_COLUMN_TYPES:
        problems.append(errors.invalid(f"{path}.type", column["type"], f"must be one of {kinds}"))
    if column.get("format") and column["format"] not in PRINTER_COLUMN_FORMATS:
        problems.append(errors.invalid(f"{path}.format", column["format"],
                                       f"must be one of {','.join(PRINTER_COLUMN_FORMATS)}"))
    json_path = column.get("jsonPath") or ""
    if not json_path:
        problems.append(errors.required(f"{path}.JSONPath"))
    else:
        problems += simple_json_path_problems(json_path, f"{path}.JSONPath")
    return problems


def validate_names(names: Obj, path: str) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionNames``: DNS-1035 labels (kinds in any case)."""
    problems: list[FieldError] = []
    for field in ("plural", "singular"):
        value = names.get(field) or ""
        why = is_dns1035_label(value) if value else []
        if why:
            problems.append(errors.invalid(f"{path}.{field}", value, ",".join(why)))
    for field in ("kind", "listKind"):
        value = names.get(field) or ""
        why = is_dns1035_label(value.lower()) if value else []
        if why:
            problems.append(errors.invalid(f"{path}.{field}", value,
                                           "may have mixed case, but should otherwise match: " + ",".join(why)))
    for i, short in enumerate(names.get("shortNames") or []):
        why = is_dns1035_label(short)
        if why:
            problems.append(errors.invalid(f"{path}.shortNames[{i}]", short, ",".join(why)))
    if names.get("kind") and names.get("kind") == names.get("listKind"):
        problems.append(errors.invalid(f"{path}.listKind", names["listKind"], "kind and listKind may not be the same"))
    for i, category in enumerate(names.get("categories") or []):
        why = is_dns1035_label(category)
        if why:
            problems.append(errors.invalid(f"{path}.categories[{i}]", category, ",".join(why)))
    return problems


def _conversion_problems(conversion: Any) -> list[FieldError]:
    if not isinstance(conversion, dict):
        return []
    strategy = conversion.get("strategy") or ""
    if strategy not in (NONE_CONVERTER, WEBHOOK_CONVERTER):
        return [errors.not_supported("spec.conversion.strategy", strategy, [NONE_CONVERTER, WEBHOOK_CONVERTER])]
    webhook = conversion.get("webhook")
    if strategy == NONE_CONVERTER and webhook is not None:
        return [errors.forbidden("spec.conversion.webhook", "should not be set when strategy is not set to Webhook")]
    if strategy == WEBHOOK_CONVERTER and not isinstance(webhook, dict):
        return [errors.required("spec.conversion.webhook", "required when strategy is set to Webhook")]
    return []


def _status_problems(obj: Obj) -> list[FieldError]:
    status = obj.get("status") or {}
    problems = validate_names(status.get("acceptedNames") or {}, "status.acceptedNames")
    return problems + stored_versions_problems(status.get("storedVersions"), versions_of(obj))


def stored_versions_problems(stored: list[str] | None, versions: list[Obj]) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionStoredVersions``: every stored version is still
    listed, and the storage version is stored."""
    path = "status.storedVersions"
    if not stored:
        return [errors.invalid(path, GoLiteral("[]string{}", "null"), "must have at least one stored version")]
    problems: list[FieldError] = []
    remaining = {name: i for i, name in enumerate(stored)}
    for version in versions:
        name = version.get("name") or ""
        if version.get("storage") and name not in remaining:
            problems.append(errors.invalid(path, go_strings(list(stored)), f"must have the storage version {name}"))
        remaining.pop(name, None)
    for name, i in sorted(remaining.items(), key=lambda item: item[1]):
        problems.append(errors.invalid(f"{path}[{i}]", name, "must appear in spec.versions"))
    return problems


def _approval(obj: Obj) -> list[FieldError]:
    """Groups under ``k8s.io``/``kubernetes.io`` need the API approval annotation."""
    group = (obj.get("spec") or {}).get("group") or ""
    if not isinstance(group, str) or not _protected(group):
        return []
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    path = f"metadata.annotations[{APPROVAL_ANNOTATION}]"
    value = annotations.get(APPROVAL_ANNOTATION)
    if value is None:
        return [errors.required(path, _APPROVAL_REASON)]
    if value.startswith("unapproved"):
        return []
    parsed = urlparse(value)
    if parsed.scheme and parsed.netloc:
        return []
    return [errors.invalid(path, value, _APPROVAL_REASON)]


def _protected(group: str) -> bool:
    return group in ("k8s.io", "kubernetes.io") or group.endswith((".k8s.io", ".kubernetes.io"))


CUSTOM_RESOURCE_DEFINITIONS = ResourceType(
    GROUP, "v1", "CustomResourceDefinition", "customresourcedefinitions", namespaced=False,
    short_names=("crd", "crds"), categories=("api-extensions",), subresources=(STATUS,),
    strategy=CustomResourceDefinitionStrategy(),
)
