"""The estimated cost of a CRD's ``x-kubernetes-validations``, checked at CRD create/update.

apiextensions refuses a rule whose worst case is too dear before any object exists: each
rule's cost is estimated (cel-go's estimator, :mod:`fakekube.api.wire.cel.cost`) with the
sizes the schema allows — ``maxLength`` (×4: bytes per character), ``maxItems``,
``maxProperties``, else as many as a 3 MiB request could hold — and multiplied by how
many times the rule can run in one object (the product of the ``maxItems`` and
``maxProperties`` above it, else what 3 MiB could hold). Past ``STATIC_COST_LIMIT`` the
rule is ``Forbidden``; past ``STATIC_CRD_COST_LIMIT`` for all rules together, the four
dearest (from 1 % of that) and the schema are. Messages are upstream's
(apiextensions validation.go, 1.33).
"""

from __future__ import annotations

from typing import Any

from fakekube.api.machinery.errors import FieldError, forbidden
from fakekube.api.wire import cel
from fakekube.api.wire.structural.node import cel_name

Obj = dict[str, Any]

#: validation.StaticEstimatedCostLimit: one rule (times how often it can run).
STATIC_COST_LIMIT = 10_000_000
#: validation.StaticEstimatedCRDCostLimit: every rule of one version's schema.
STATIC_CRD_COST_LIMIT = 100_000_000
#: celconfig.MaxRequestSizeBytes: what sizes are estimated from when no bound is declared.
MAX_REQUEST_BYTES = 3 * 1024 * 1024
_UINT64_MAX = 2**64 - 1
_META = {"type": "object", "properties": {"name": {"type": "string"}, "generateName": {"type": "string"}}}


def cost_message(what: str, cost: int, limit: int) -> str:
    """getCostErrorMessage: how far over, as Go formats the factor."""
    times = cost / limit
    if times > 100.0:
        factor = "more than 100x"
    elif times < 1.5:
        factor = f"{times:f}x"
    else:
        factor = f"{times:.1f}x"
    return (f"{what} exceeds budget by factor of {factor} (try simplifying the rule, or adding maxItems, "
            "maxProperties, and maxLength where arrays, maps, and strings are declared)")


def times(cost: int, count: int) -> int:
    """multiplyWithOverflowGuard."""
    return 0 if cost == 0 else min(_UINT64_MAX, cost * count)


def child_cardinality(parent: Obj, cardinality: int | None) -> int | None:
    """CELSchemaContext.childContext: how many times a child position can occur, given how
    many times its parent can (None: unbounded)."""
    if cardinality is None:
        return None
    kind = parent.get("type")
    if kind == "object" and "additionalProperties" in parent:
        bound = parent.get("maxProperties")
    elif kind == "array":
        bound = parent.get("maxItems")
    else:
        return cardinality
    if not isinstance(bound, int) or isinstance(bound, bool):
        return None
    return min(_UINT64_MAX, cardinality * max(bound, 0))


def rule_cost(program: cel.Program, decl: cel.Decl, cardinality: int | None) -> int:
    """getExpressionCost: the rule's estimate times how often it can run (unbounded: as
    often as values of its minimum size fit in a request)."""
    estimate = program.estimated_cost(cel.DeclSizes(decl))
    count = cardinality if cardinality is not None else MAX_REQUEST_BYTES // (decl.min_size + 1)
    return times(estimate, count)


class TotalCost:
    """The rules of one schema, summed (TotalCost), with the dearest kept for the message."""

    def __init__(self) -> None:
        self.total = 0
        self.dearest: list[tuple[int, str]] = []

    def observe(self, path: str, cost: int) -> None:
        self.total = min(_UINT64_MAX, self.total + cost)
        if cost < STATIC_CRD_COST_LIMIT // 100:
            return
        self.dearest.append((cost, path))
        self.dearest.sort(key=lambda entry: -entry[0])
        del self.dearest[4:]

    def errors(self, schema_path: str) -> list[FieldError]:
        if self.total <= STATIC_CRD_COST_LIMIT:
            return []
        errs = [forbidden(path, "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema")
                for _, path in self.dearest]
        what = "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema"
        return errs + [forbidden(schema_path, cost_message(what, self.total, STATIC_CRD_COST_LIMIT))]


class Declarations:
    """SchemaDeclType: the CEL type of each schema position, built once per CRD check."""

    def __init__(self) -> None:
        self._memo: dict[tuple[int, bool], cel.Decl | None] = {}
        self._held: list[Obj] = []  # keeps the schemas (and so their ids) alive while memoized

    def of(self, schema: Any, resource_root: bool) -> cel.Decl | None:
        if not isinstance(schema, dict):
            return None
        key = (id(schema), resource_root)
        if key not in self._memo:
            self._held.append(schema)
            self._memo[key] = self._build(schema, resource_root)
        return self._memo[key]

    def _build(self, s: Obj, resource_root: bool) -> cel.Decl | None:
        if s.get("x-kubernetes-int-or-string") is True:
            return cel.Decl("dyn", MAX_REQUEST_BYTES - 2, 1)
        if resource_root:
            s = _with_type_and_object_meta(s)
        kind = s.get("type")
        if kind == "array":
            return self._list(s)
        if kind == "object":
            return self._map(s) if isinstance(s.get("additionalProperties"), dict) else self._object(s)
        if kind == "string":
            return _string(s)
        return {"boolean": cel.Decl("bool", 0, 4), "number": cel.Decl("double", 0, 1),
                "integer": cel.Decl("int", 0, 1)}.get(kind if isinstance(kind, str) else "")

    def _list(self, s: Obj) -> cel.Decl | None:
        items = s.get("items")
        elem = self.of(items, isinstance(items, dict) and items.get("x-kubernetes-embedded-resource") is True)
        if elem is None:
            return None
        bound = _count(s.get("maxItems"))
        return cel.Decl("list", bound if bound is not None else (MAX_REQUEST_BYTES - 2) // (elem.min_size + 1), 2,
                        elem=elem)

    def _map(self, s: Obj) -> cel.Decl | None:
        extra = s["additionalProperties"]
        elem = self.of(extra, extra.get("x-kubernetes-embedded-resource") is True)
        if elem is None:
            return None
        bound = _count(s.get("maxProperties"))
        return cel.Decl("map", bound if bound is not None else (MAX_REQUEST_BYTES - 2) // (elem.min_size + 6), 2,
                        elem=elem, key=cel.Decl("string", 0, 2))

    def _object(self, s: Obj) -> cel.Decl:
        properties: Obj = s["properties"] if isinstance(s.get("properties"), dict) else {}
        required = {r for r in s.get("required") or [] if isinstance(r, str)} if isinstance(s.get("required"), list) else set()
        fields: dict[str, cel.Decl] = {}
        min_size = 2
        for name, prop in properties.items():
            field = self.of(prop, isinstance(prop, dict) and prop.get("x-kubernetes-embedded-resource") is True)
            if field is None:
                continue
            escaped = cel_name(name)
            if escaped is not None:
                fields[escaped] = field
            if name in required and "default" not in prop:
                min_size += len(name) + field.min_size + 4
        return cel.Decl("struct", 0, min_size, fields)


def _count(value: Any) -> int | None:
    return max(value, 0) if isinstance(value, int) and not isinstance(value, bool) else None


def _string(s: Obj) -> cel.Decl:
    bound = _count(s.get("maxLength"))
    fmt = s.get("format")
    if fmt == "byte":
        return cel.Decl("bytes", bound if bound is not None else MAX_REQUEST_BYTES - 2, 2)
    if fmt == "duration":
        return cel.Decl("duration", 32, 3)
    if fmt == "date":
        return cel.Decl("timestamp", 12, 12)
    if fmt == "date-time":
        return cel.Decl("timestamp", 32, 21)
    if bound is not None:
        return cel.Decl("string", bound * 4, 2)
    enum = s.get("enum")
    if isinstance(enum, list) and enum:
        return cel.Decl("string", max((len(v.encode("utf-8", errors="replace")) for v in enum if isinstance(v, str)),
                                      default=0), 2)
    return cel.Decl("string", MAX_REQUEST_BYTES - 2, 2)


def _with_type_and_object_meta(s: Obj) -> Obj:
    """WithTypeAndObjectMeta: ``kind``, ``apiVersion`` and ``metadata.name``/``generateName``
    always readable at a resource root."""
    properties: Obj = s["properties"] if isinstance(s.get("properties"), dict) else {}

    def typed(schema: Any, kind: str) -> bool:
        return isinstance(schema, dict) and schema.get("type") == kind

    meta = properties.get("metadata")
    meta_props: Obj = meta["properties"] if isinstance(meta, dict) and isinstance(meta.get("properties"), dict) else {}
    if typed(properties.get("kind"), "string") and typed(properties.get("apiVersion"), "string") and \
            typed(meta, "object") and typed(meta_props.get("name"), "string") and \
            typed(meta_props.get("generateName"), "string"):
        return s
    return dict(s, properties=dict(properties, kind={"type": "string"}, apiVersion={"type": "string"}, metadata=_META))
