"""Which fields each type can be selected on, and how an unsupported one is reported.

Upstream spreads this over each API group's field label conversion function and the
registry's ``ToSelectableFields``. Here each built-in type with more than the default
fields names its :class:`FieldSet` (``POD_FIELD_SET``, …) in its declaration
(``ResourceType.field_set``), and a type's ``Strategy.field_selectors`` can add more.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple, Protocol

from fakekube.api.machinery.errors import ApiError, bad_request
from fakekube.api.machinery.validation import go_quote
from fakekube.api.selectors.fields import FieldRequirement, FieldSelector

Obj = dict[str, Any]

FieldGetter = Callable[[Obj], str]


def _get(obj: Mapping[str, Any], *path: str) -> Any:
    cur: Any = obj
    for part in path:
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(part)
    return cur


def _text(*path: str) -> FieldGetter:
    return lambda obj: str(_get(obj, *path) or "")


def _go_bool(*path: str) -> FieldGetter:
    return lambda obj: "true" if _get(obj, *path) else "false"


def _go_int(*path: str) -> FieldGetter:
    return lambda obj: str(int(_get(obj, *path) or 0))


def _pod_ip(pod: Obj) -> str:
    """First of ``status.podIPs`` (upstream selects on the internal PodIPs[0])."""
    ips = _get(pod, "status", "podIPs") or []
    if ips and isinstance(ips[0], Mapping):
        return str(ips[0].get("ip") or "")
    return str(_get(pod, "status", "podIP") or "")


def _core_event_source(event: Obj) -> str:
    return str(_get(event, "source", "component") or event.get("reportingComponent") or "")


def _events_v1_source(event: Obj) -> str:
    return str(_get(event, "deprecatedSource", "component") or event.get("reportingController") or "")


def _reference_fields(prefix: str, ref_key: str) -> dict[str, FieldGetter]:
    names = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
    return {f"{prefix}.{n}": _text(ref_key, n) for n in names}


class FieldSet(NamedTuple):
    """The selectable fields of one type and how an unknown one is reported.

    ``getters`` are the fields the object exposes beyond ``metadata.*``; ``accepted_only``
    are labels upstream accepts but never fills (they read as ""); ``aliases`` are
    legacy names rewritten before matching; ``unsupported`` formats the 400 message.
    """

    getters: Mapping[str, FieldGetter]
    unsupported: Callable[[str], str]
    accepted_only: tuple[str, ...] = ()
    aliases: Mapping[str, str] | None = None
    namespace_selectable: bool = True


def _not_supported(field: str) -> str:
    return f"field label not supported: {field}"


def _not_known(field: str) -> str:
    return f'"{field}" is not a known field selector: only "metadata.name", "metadata.namespace"'


def _job_not_supported(field: str) -> str:
    return f"field label {go_quote(field)} not supported for batchv1.Job"


_POD_FIELDS = {
    "spec.nodeName": _text("spec", "nodeName"),
    "spec.restartPolicy": _text("spec", "restartPolicy"),
    "spec.schedulerName": _text("spec", "schedulerName"),
    "spec.serviceAccountName": _text("spec", "serviceAccountName"),
    "spec.hostNetwork": _go_bool("spec", "hostNetwork"),
    "status.phase": _text("status", "phase"),
    "status.podIP": _pod_ip,
    "status.nominatedNodeName": _text("status", "nominatedNodeName"),
}

_CORE_EVENT_FIELDS = {
    **_reference_fields("involvedObject", "involvedObject"),
    "reason": _text("reason"),
    "reportingComponent": _text("reportingComponent"),
    "source": _core_event_source,
    "type": _text("type"),
}

# events.k8s.io names its fields after the v1 Event shape (regarding, reportingController).
_EVENTS_V1_FIELDS = {
    **_reference_fields("regarding", "regarding"),
    "reason": _text("reason"),
    "reportingController": _text("reportingController"),
    "source": _events_v1_source,
    "type": _text("type"),
}

# Per-type selectable fields as upstream 1.33 registers them (pkg/apis/*/v*/conversion.go);
# each is named by its type's declaration. Types without one take apimachinery's default:
# metadata.name and metadata.namespace only.
POD_FIELD_SET = FieldSet(_POD_FIELDS, _not_supported, ("status.podIPs",), {"spec.host": "spec.nodeName"})
NODE_FIELD_SET = FieldSet({"spec.unschedulable": _go_bool("spec", "unschedulable")}, _not_supported,
                          namespace_selectable=False)
NAMESPACE_FIELD_SET = FieldSet({"status.phase": _text("status", "phase")}, _not_supported,
                               namespace_selectable=False)
REPLICATION_CONTROLLER_FIELD_SET = FieldSet({"status.replicas": _go_int("status", "replicas")}, _not_supported)
CORE_EVENT_FIELD_SET = FieldSet(_CORE_EVENT_FIELDS, _not_supported)
SECRET_FIELD_SET = FieldSet({"type": _text("type")}, _not_supported)
SERVICE_FIELD_SET = FieldSet({"spec.clusterIP": _text("spec", "clusterIP"), "spec.type": _text("spec", "type")},
                             _not_supported)
EVENTS_V1_FIELD_SET = FieldSet(_EVENTS_V1_FIELDS, _not_supported)
JOB_FIELD_SET = FieldSet({"status.successful": _go_int("status", "succeeded")}, _job_not_supported)

DEFAULT_FIELD_SET = FieldSet({}, _not_known)


class _ExtraFields(Protocol):
    def field_selectors(self) -> dict[str, FieldGetter]: ...


class Selectable(Protocol):
    """What field selection needs of a resource type (``registry.ResourceType``, which
    sits above this package and so is not imported here)."""

    @property
    def namespaced(self) -> bool: ...

    @property
    def field_set(self) -> FieldSet | None: ...

    @property
    def strategy(self) -> _ExtraFields: ...


def _field_set(resource: Selectable) -> FieldSet:
    return resource.field_set or DEFAULT_FIELD_SET


def _getters(resource: Selectable) -> dict[str, FieldGetter]:
    """The table's getters, plus any a strategy declares (``Strategy.field_selectors``)."""
    getters = dict(_field_set(resource).getters)
    for name, getter in resource.strategy.field_selectors().items():
        getters.setdefault(name, getter)
    return getters


def supported_fields(resource: Selectable) -> list[str]:
    """Every field label the type accepts in a fieldSelector, in a stable order."""
    fs = _field_set(resource)
    meta = ["metadata.name"]
    if fs.namespace_selectable:
        meta.append("metadata.namespace")
    return meta + list(_getters(resource)) + list(fs.accepted_only) + list(fs.aliases or {})


def object_fields(resource: Selectable, obj: Obj) -> dict[str, str]:
    """The field set a fieldSelector is matched against (upstream's ``GetAttrs``)."""
    meta = obj.get("metadata") or {}
    fields = {"metadata.name": str(meta.get("name") or "")}
    if resource.namespaced:
        fields["metadata.namespace"] = str(meta.get("namespace") or "")
    for name, getter in _getters(resource).items():
        fields[name] = getter(obj)
    return fields


def unsupported_field_error(resource: Selectable, field: str) -> ApiError:
    """400 BadRequest for a field label the type does not support, worded per type."""
    return bad_request(_field_set(resource).unsupported(field))


def convert_field_selector(resource: Selectable, selector: FieldSelector) -> FieldSelector:
    """Check every field against the type and rewrite legacy aliases (``spec.host``).

    Mirrors the list handler's ``FieldSelector.Transform(ConvertFieldLabel)``: the first
    unsupported field, in the selector's sorted order, is the one reported.
    """
    accepted = set(supported_fields(resource))
    aliases = _field_set(resource).aliases or {}
    converted = []
    for r in selector.requirements:
        if r.field not in accepted:
            raise unsupported_field_error(resource, r.field)
        converted.append(FieldRequirement(aliases.get(r.field, r.field), r.operator, r.value))
    return FieldSelector(tuple(converted))
