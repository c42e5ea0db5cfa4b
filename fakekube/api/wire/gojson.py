"""Built-in objects as upstream stores and answers them: its Go types' JSON rules, per field.

kube-apiserver decodes every body into the type's Go struct and stores that struct as
protobuf; what a client reads back — the answer to the write, a GET, a watch event —
is that struct decoded from storage and written by ``encoding/json``. So a built-in
object never holds what its Go type cannot say, and the rules of each field's tag apply
(``fields.json``, from kubernetes/api's ``generated.proto`` and ``types.go``):

- an ``omitempty`` field that is ``""``, ``0``, ``false``, an empty list or map, or null
  is not written (``spec.unschedulable: false``, ``spec.taints: []``, ``data: {}``);
- a pointer keeps an explicit zero (``replicas: 0``), and a null pointer is written as
  ``null`` only without ``omitempty``;
- a field without ``omitempty`` is always written, with Go's zero when absent: ``""``,
  ``0``, ``false``, ``null`` for a list, map or pointer; a struct field is always written
  (``omitempty`` does nothing to structs), so a Node has ``status.nodeInfo`` and a pod
  condition ``lastProbeTime: null``;
- ``omitzero`` drops a zero struct: ``metadata.creationTimestamp`` from 1.34 on (a pod
  template's ``creationTimestamp: null`` is gone there, still written by 1.33);
- types with their own JSON form write it canonically: a Quantity as ``String()``
  (``1000m`` → ``1``), a Time in UTC to the second, a MicroTime to the microsecond.

Two forms: :meth:`RoundTrip.stored` is what storage gives back (protobuf has no empty
list apart from a missing one, so a non-``omitempty`` ``rules: []`` reads back as
``null``: the answer to the create already says so); :meth:`RoundTrip.typed` is the
decoded struct before storage, which upstream's field manager reads (``f:rules`` is
still there).

Keys the table does not know (apiVersion, kind, fields of a newer release, types outside
the table) are left as they are; unknown fields are dropped by typed decoding before
this runs. Keys keep the order they came in (JSON key order carries no meaning; added
fields come last). Both forms are pure: a value that needs no change is returned as it
is, and a changed one is a new dict or list, so shared stored levels are never edited.
"""

from __future__ import annotations

import re
import threading
from typing import Any, Callable

from fakekube.api.wire.gostructs import Message, definition_of, message
from fakekube.api.wire.schema import SchemaSet, load
from fakekube.clock import format_micro_time, format_rfc3339, parse_time
from fakekube.objects import canonical_quantity

Obj = dict[str, Any]

_META = "k8s.io.apimachinery.pkg.apis.meta.v1."
_EXTENSIONS = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1."
_SCHEMA_PROPS = _EXTENSIONS + "JSONSchemaProps"

#: Proto packages of API groups not named after the group's first label.
_PACKAGES = {"": "k8s.io.api.core", "rbac.authorization.k8s.io": "k8s.io.api.rbac",
             "apiextensions.k8s.io": "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions",
             "apiregistration.k8s.io": "k8s.io.kube_aggregator.pkg.apis.apiregistration"}

#: The first minor release whose ObjectMeta.creationTimestamp has ``omitzero``.
OMITZERO_SINCE_MINOR = 34

# What a field does. Pointers and ``omitempty`` are folded in, so the walk reads one code.
(SCALAR_OMIT, SCALAR, KEEP, DROP_NULL, STRUCT, STRUCT_PTR_OMIT, STRUCT_PTR, LIST_OMIT, LIST, MAP_OMIT, MAP,
 TIME, TIME_OMIT, MICRO_TIME, MICRO_TIME_OMIT, QUANTITY, QUANTITY_OMIT, INT_OR_STRING, SCHEMA_OR,
 SCHEMA_OR_OMIT, QUANTITY_MILLI) = range(21)

#: Returned for a field that is not written.
_GONE = object()
#: The JSON zero of each scalar proto type (bytes: a nil slice, written as null).
_SCALAR_ZEROS: dict[str, Any] = {"string": "", "bool": False, "double": 0, "float": 0, "bytes": None}
_TIMES = {_META + "Time": (TIME, TIME_OMIT), _META + "MicroTime": (MICRO_TIME, MICRO_TIME_OMIT)}
_QUANTITY_TYPE = "k8s.io.apimachinery.pkg.api.resource.Quantity"
#: The package whose ResourceLists the request decoding's defaulting rounds up to milli-units
#: (apps, batch and storage objects embed its messages; node/v1's own Overhead is not rounded).
_CORE_V1 = "k8s.io.api.core.v1."
_INT_OR_STRING_TYPE = "k8s.io.apimachinery.pkg.util.intstr.IntOrString"
#: Messages whose JSON is their own (kept as sent): embedded documents and durations.
_OPAQUE = frozenset({_META + "FieldsV1", _META + "Duration", "k8s.io.apimachinery.pkg.runtime.RawExtension",
                     _EXTENSIONS + "JSON"})
#: apiextensions' "a schema, or something else" types: their schema parts are walked.
_SCHEMA_OR = frozenset({_EXTENSIONS + "JSONSchemaPropsOrArray", _EXTENSIONS + "JSONSchemaPropsOrBool",
                        _EXTENSIONS + "JSONSchemaPropsOrStringArray"})
_CANONICAL_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\Z")


def message_name(group: str, version: str, kind: str) -> str | None:
    """The proto message of a built-in kind (``apps``, ``v1``, ``Deployment`` →
    ``k8s.io.api.apps.v1.Deployment``), or None when the table has none."""
    package = _PACKAGES.get(group) or "k8s.io.api." + group.split(".")[0]
    name = f"{package}.{version}.{kind}"
    return name if message(name) is not None else None


class Rule:
    """What to do with one field (or one list item / map value): its code, the struct plan
    of a message, and the zero written for it when absent (``None`` for null)."""

    __slots__ = ("code", "plan", "zero")

    def __init__(self, code: int, plan: "Plan | None" = None, zero: Any = None) -> None:
        self.code = code
        self.plan = plan
        self.zero = zero


class Plan:
    """One message compiled: its fields by JSON name (inline members merged in), and the
    fields Go always writes, with a factory of their zero value."""

    __slots__ = ("fields", "always", "zero_template")

    def __init__(self) -> None:
        self.fields: dict[str, Rule] = {}
        self.always: tuple[tuple[str, Callable[[], Any]], ...] = ()
        #: The struct's own zero value as JSON, built once (None until compiled).
        self.zero_template: Obj | None = None

    def zero(self) -> Obj:
        """A fresh copy of the zero struct as Go writes it."""
        return _copy(self.zero_template or {})


class RoundTrip:
    """The Go JSON rules of one Kubernetes release.

    The table is the newest release's; an older one differs in ``omitzero`` and in the
    fields it has: a field its OpenAPI schema does not declare is never added.
    """

    #: Immutable once made: snapshots (cluster/statecopy.py) refer to it rather than copy it.
    SNAPSHOT_SHARED = True

    def __init__(self, minor: int, schemas: SchemaSet | None = None) -> None:
        self.omit_zero_creation = minor >= OMITZERO_SINCE_MINOR
        self._schemas = schemas
        #: Finished plans only: a walk on another thread never meets one half built.
        self._plans: dict[str, Plan] = {}
        #: Plans being built (under the lock), published into ``_plans`` when the root is done.
        self._building: dict[str, Plan] = {}
        self._lock = threading.Lock()

    def stored(self, message_type: str, obj: Obj, like: Obj | None = None) -> Obj:
        """``obj`` as storage gives it back (``obj`` itself when nothing changes).

        ``like``: the version stored before this write (written by these rules already): a
        field whose value equals its value there is known to be written right and is not
        walked — an update walks what it changed (the comparison runs in C)."""
        return self._struct(self.plan(message_type), obj, True, like)

    def typed(self, message_type: str, obj: Obj, like: Obj | None = None) -> Obj:
        """``obj`` as the decoded Go struct writes it, before storage (empty lists stay);
        ``like`` as for :meth:`stored` (a stored value is its own typed form)."""
        return self._struct(self.plan(message_type), obj, False, like)

    def plan(self, message_type: str) -> Plan:
        plan = self._plans.get(message_type)
        if plan is None:
            with self._lock:
                plan = self._compiled(message_type)
                self._plans.update(self._building)
                self._building.clear()
        return plan

    # -- the walk ------------------------------------------------------------------------
    def _struct(self, plan: Plan, obj: Obj, stored: bool, like: Obj | None = None) -> Obj:
        out: Obj | None = None
        fields = plan.fields
        for key, value in obj.items():
            rule = fields.get(key)
            if rule is None:
                continue
            code = rule.code
            # The common cases inline (a call per field is most of the cost): an omitempty
            # scalar, a kept value, a non-omitempty scalar, a nested struct.
            if code == SCALAR_OMIT:
                if value:
                    continue
                new = _GONE
            elif code == KEEP or (code == SCALAR and value is not None):
                continue
            else:
                before = _GONE if like is None else like.get(key, _GONE)
                if before is value or before == value:
                    continue  # as stored before: already written by these rules
                if STRUCT <= code <= STRUCT_PTR and isinstance(value, dict):
                    new = self._struct(rule.plan, value, stored,  # type: ignore[arg-type]
                                       before if isinstance(before, dict) else None)
                else:
                    new = self._value(rule, value, stored)
            if new is not value:
                if out is None:
                    out = dict(obj)
                if new is _GONE:
                    del out[key]
                else:
                    out[key] = new
        for key, make in plan.always:
            if key not in obj:
                if out is None:
                    out = dict(obj)
                out[key] = make()
        return obj if out is None else out

    def _value(self, rule: Rule, value: Any, stored: bool) -> Any:
        code = rule.code
        if code == KEEP:
            return value
        if value is None:
            return _null(rule)
        if STRUCT <= code <= STRUCT_PTR:
            return self._struct(rule.plan, value, stored) if isinstance(value, dict) else value  # type: ignore[arg-type]
        if code == LIST_OMIT or code == LIST:
            if not value and isinstance(value, list):
                return _GONE if code == LIST_OMIT else (None if stored else value)
            return self._items(rule.zero, value, stored) if isinstance(value, list) else value
        if code == MAP_OMIT or code == MAP:
            if not value and isinstance(value, dict):
                return _GONE if code == MAP_OMIT else (None if stored else value)
            return self._entries(rule.zero, value, stored) if isinstance(value, dict) else value
        if code == SCHEMA_OR or code == SCHEMA_OR_OMIT:  # a schema, a list of them, or a bool / strings
            if isinstance(value, dict):
                return self._struct(rule.plan, value, stored)  # type: ignore[arg-type]
            if isinstance(value, list):
                return self._items(Rule(STRUCT, rule.plan), value, stored)
            return value
        return _leaf(code, value)

    def _items(self, item: Rule, values: list[Any], stored: bool) -> list[Any]:
        code = item.code
        if code == KEEP or code == SCALAR:
            if code == SCALAR and None in values:
                return [item.zero if value is None else value for value in values]
            return values
        out: list[Any] | None = None
        plan = item.plan
        for index, value in enumerate(values):
            if code == STRUCT and isinstance(value, dict):
                new = self._struct(plan, value, stored)  # type: ignore[arg-type]
            else:
                new = self._value(item, value, stored)
            if new is not value:
                if out is None:
                    out = list(values)
                out[index] = new
        return values if out is None else out

    def _entries(self, item: Rule, values: Obj, stored: bool) -> Obj:
        code = item.code
        if code == KEEP or (code == SCALAR and None not in values.values()):
            return values
        out: Obj | None = None
        for key, value in values.items():
            new = self._value(item, value, stored)
            if new is not value:
                if out is None:
                    out = dict(values)
                out[key] = item.zero if new is _GONE else new
        return values if out is None else out

    # -- compiling -----------------------------------------------------------------------
    def _compiled(self, message_type: str) -> Plan:
        plan = self._plans.get(message_type) or self._building.get(message_type)
        if plan is not None:
            return plan
        plan = self._building[message_type] = Plan()  # registered first: messages recurse
        spec = message(message_type)
        declared = self._declared(message_type)
        always: list[tuple[str, Callable[[], Any]]] = []
        for field in _flattened(spec):
            rule = self._rule(field, message_type)
            plan.fields[field.name] = rule
            make = _absent_value(rule, field)
            if make is not None and (declared is None or field.name in declared):
                always.append((field.name, make))
        plan.always = tuple(always)
        plan.zero_template = {name: make() for name, make in plan.always}
        return plan

    def _declared(self, message_type: str) -> frozenset[str] | None:
        """The fields the release's schema declares for a message (None: not known)."""
        name = definition_of(message_type)
        if self._schemas is None or name is None:
            return None
        properties = (self._schemas.definition(name) or {}).get("properties")
        return frozenset(properties) if isinstance(properties, dict) else None

    def _rule(self, field: Any, message_type: str) -> Rule:
        """A struct field's rule, from its proto type, cardinality and Go tag flags."""
        omit, pointer = "o" in field.flags, "p" in field.flags
        if field.card in ("rep", "map") or _is_named_list(field.type) or field.type == "bytes":
            item = self._item_rule(field.type) if field.card in ("rep", "map") else Rule(KEEP)
            if "r" in field.flags and message_type.startswith(_CORE_V1):  # defaulted: SetDefaults_ResourceList
                item = Rule(QUANTITY_MILLI, zero="0")
            if field.card == "map":
                return Rule(MAP_OMIT if omit else MAP, zero=item)
            return Rule(LIST_OMIT if omit else LIST, zero=item) if field.type != "bytes" or field.card == "rep" \
                else Rule(SCALAR_OMIT if omit else KEEP)
        if pointer:
            if field.type in _SCALAR_ZEROS or _is_number(field.type) or field.type in _OPAQUE \
                    or field.type == _INT_OR_STRING_TYPE:
                return Rule(DROP_NULL if omit else KEEP)
            if field.type in _TIMES:
                return Rule(_TIMES[field.type][1] if omit else _TIMES[field.type][0])
            if field.type == _QUANTITY_TYPE:
                return Rule(QUANTITY_OMIT if omit else QUANTITY)
            if field.type in _SCHEMA_OR:
                return Rule(SCHEMA_OR_OMIT if omit else SCHEMA_OR, self._compiled(_SCHEMA_PROPS))
            if message(field.type) is None:
                return Rule(DROP_NULL if omit else KEEP)
            return Rule(STRUCT_PTR_OMIT if omit else STRUCT_PTR, self._compiled(field.type))
        if field.type in _SCALAR_ZEROS or _is_number(field.type):
            return Rule(SCALAR_OMIT if omit else SCALAR, zero=_SCALAR_ZEROS.get(field.type, 0))
        return self._struct_rule(field.type, "z" in field.flags)

    def _item_rule(self, type_name: str) -> Rule:
        """The rule of a list item or map value (never omitted, never a pointer)."""
        if type_name in _SCALAR_ZEROS or _is_number(type_name):
            return Rule(SCALAR, zero=_SCALAR_ZEROS.get(type_name, 0))
        return self._struct_rule(type_name, False)

    def _struct_rule(self, type_name: str, omit_zero: bool) -> Rule:
        """A non-pointer message: written always, in its own form for the special types."""
        if type_name in _TIMES:
            omitted = omit_zero and self.omit_zero_creation
            return Rule(_TIMES[type_name][1] if omitted else _TIMES[type_name][0])
        if type_name == _QUANTITY_TYPE:
            return Rule(QUANTITY, zero="0")
        if type_name == _INT_OR_STRING_TYPE:
            return Rule(INT_OR_STRING, zero=0)
        if type_name in _OPAQUE or message(type_name) is None or _is_named_list(type_name):
            return Rule(KEEP)
        if type_name in _SCHEMA_OR:
            return Rule(SCHEMA_OR, self._compiled(_SCHEMA_PROPS))
        return Rule(STRUCT, self._compiled(type_name))


def _flattened(spec: Message | None) -> list[Any]:
    """A message's fields with inline members' fields in their place (Go's embedding)."""
    fields: list[Any] = []
    for field in spec.fields if spec is not None else ():
        if "i" in field.flags:
            fields.extend(_flattened(message(field.type)))
        else:
            fields.append(field)
    return fields


def _absent_value(rule: Rule, field: Any) -> Callable[[], Any] | None:
    """What Go writes for a field the object lacks (None: nothing)."""
    omit, pointer = "o" in field.flags, "p" in field.flags
    if field.card in ("rep", "map") or field.type == "bytes" or _is_named_list(field.type) or pointer:
        return None if omit else _none  # a nil slice, map or pointer
    code = rule.code
    if code == SCALAR or code == QUANTITY or code == INT_OR_STRING:
        zero = rule.zero
        return lambda: zero
    if code == STRUCT:
        plan = rule.plan
        assert plan is not None
        return plan.zero
    if code == TIME or code == MICRO_TIME or (code == KEEP and message(field.type) is not None):
        return _none if field.type != _META + "Duration" else _zero_duration  # Time's MarshalJSON: null
    return None  # omitempty scalars, omitzero times, types outside the table


def _zero_duration() -> str:
    return "0s"


def _none() -> None:
    return None


def _null(rule: Rule) -> Any:
    """A null field as decoding then encoding leaves it."""
    code = rule.code
    if code in (SCALAR_OMIT, DROP_NULL, STRUCT_PTR_OMIT, LIST_OMIT, MAP_OMIT, TIME_OMIT, MICRO_TIME_OMIT,
                QUANTITY_OMIT, SCHEMA_OR_OMIT):
        return _GONE
    if code == STRUCT:
        return rule.plan.zero()  # type: ignore[union-attr]
    if code in (SCALAR, QUANTITY, QUANTITY_MILLI, INT_OR_STRING):
        return rule.zero
    return None


def _leaf(code: int, value: Any) -> Any:
    """A special type's value written canonically (unchanged if it does not parse)."""
    if code == TIME or code == TIME_OMIT:
        return value if isinstance(value, str) and _CANONICAL_TIME.match(value) else _canonical_time(value)
    if code == MICRO_TIME or code == MICRO_TIME_OMIT:
        return _canonical_micro_time(value)
    if code == QUANTITY or code == QUANTITY_OMIT or code == QUANTITY_MILLI:
        try:
            return canonical_quantity(value, code == QUANTITY_MILLI)
        except ValueError:
            return value
    return value


def _canonical_time(value: Any) -> Any:
    try:
        moment = parse_time(value)
    except (TypeError, ValueError):
        return value
    return value if moment is None else format_rfc3339(moment)


def _canonical_micro_time(value: Any) -> Any:
    if not isinstance(value, str) or (len(value) == 27 and value.endswith("Z")):
        return value
    try:
        moment = parse_time(value)
    except (TypeError, ValueError):
        return value
    return value if moment is None else format_micro_time(moment)


def _is_number(type_name: str) -> bool:
    return type_name in ("int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32", "fixed64",
                         "sfixed32", "sfixed64")


def _is_named_list(type_name: str) -> bool:
    spec = message(type_name) if "." in type_name else None
    return spec is not None and spec.is_list


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


_round_trips: dict[int, RoundTrip] = {}
_round_trips_lock = threading.Lock()


def for_version(kubernetes_version: str) -> RoundTrip:
    """The shared :class:`RoundTrip` of a release (``"1.36"``)."""
    minor = int(kubernetes_version.split(".")[1])
    found = _round_trips.get(minor)
    if found is None:
        with _round_trips_lock:
            found = _round_trips.setdefault(minor, RoundTrip(minor, load(kubernetes_version)))
    return found
