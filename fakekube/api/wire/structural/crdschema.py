"""The checks a CRD version's ``openAPIV3Schema`` gets at CRD create and update.

apiextensions' ``validateCustomResourceDefinitionValidation`` is the spec: ``nullable``
at the root; then the structural-schema rules (every position typed, no
``additionalProperties`` at the root, metadata restrictions, value validations that
stay off the structural spine; sorted by message as upstream sorts them) — and only if
those pass, the defaults (valid for their schema, pruned); then the per-position
OpenAPI checks (unsupported keywords, list and map types, ``x-kubernetes-validations``
entries), and last the CEL rules, compiled (only where no other error was found).
"""

from __future__ import annotations

import copy
import re
from typing import Any, NamedTuple

from fakekube.api.machinery.errors import (FIELD_DUPLICATE, FIELD_FORBIDDEN, FIELD_INVALID, FIELD_REQUIRED,
                                           FieldError, forbidden, go_json_struct, invalid, not_supported, required)
from fakekube.api.machinery.validation import GoText, go_strings
from fakekube.api.wire import cel, regexp
from fakekube.api.wire.cel.types import BOOL_T, STRING_T
from fakekube.api.wire.schema import DEFAULT_KUBERNETES_VERSION
from fakekube.api.wire.structural.celcost import (STATIC_COST_LIMIT, Declarations, TotalCost, child_cardinality,
                                                  cost_message, rule_cost)
from fakekube.api.wire.structural.celrules import RuleValidator
from fakekube.api.wire.structural.celtypes import check_rule
from fakekube.api.wire.structural.node import Node, Rule
from fakekube.api.wire.structural.openapi import OpenAPIValidator
from fakekube.api.wire.structural.pruning import _prune
from fakekube.objects.syntax import go_quote

Obj = dict[str, Any]

OPENAPI_V3_TYPES = ["array", "boolean", "integer", "number", "object", "string"]
REASONS = [FIELD_DUPLICATE, FIELD_FORBIDDEN, FIELD_INVALID, FIELD_REQUIRED]
META_FIELDS = ("apiVersion", "kind", "metadata")
_SPINE = ("type", "nullable", "default", "description", "title", "properties", "items", "additionalProperties",
          "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource", "x-kubernetes-int-or-string",
          "x-kubernetes-list-map-keys", "x-kubernetes-list-type", "x-kubernetes-map-type")
_UNSUPPORTED_STRUCTURAL = (("id", "id"), ("$schema", "schema"), ("$ref", "$ref"), ("patternProperties", "patternProperties"),
                           ("dependencies", "dependencies"), ("additionalItems", "additionalItems"),
                           ("definitions", "definitions"))
_INT_OR_STRING_ANY_OF = [{"type": "integer"}, {"type": "string"}]
#: The CEL environment of stored expressions: every library.
STORED_EXPRESSIONS_MINOR = 99


def _props(schema: Obj) -> Obj:
    """``properties`` as a map of schemas (typed decoding of the CRD guarantees the type;
    a hand-built schema still must not crash the check)."""
    found = schema.get("properties")
    return {k: v for k, v in found.items() if isinstance(v, dict)} if isinstance(found, dict) else {}


def _seq(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _key(path: str, key: str) -> str:
    return f"{path}[{key}]"


def validate_crd_schema(schema: Obj, path: str, unchanged: bool = False,
                        kubernetes_version: str = DEFAULT_KUBERNETES_VERSION) -> list[FieldError]:
    """Upstream's errors for one version's ``openAPIV3Schema`` at ``path``; ``unchanged``
    (an update that keeps this schema as it was) spares each rule its own cost limit, as
    upstream does, but not the schema's total. Rules are type-checked in the CEL
    environment of ``kubernetes_version``'s compatibility version (the minor before it),
    as new expressions are; an unchanged schema's in every library's (stored expressions)."""
    if not isinstance(schema, dict):
        return [invalid(path, GoText("nil", "null"), "must be an object")]
    errs: list[FieldError] = []
    if schema.get("nullable") is True:
        errs.append(forbidden(f"{path}.nullable", "nullable cannot be true at the root"))
    init_error = _structural_init_error(schema)
    structural_ok = False
    if init_error is None:
        problems = sorted(_invariants(schema, "root", path) + _completeness(schema, path), key=lambda e: e.message())
        if problems:
            errs += problems
        else:
            defaults = _defaults(schema, path, resource_root=True)
            errs += defaults
            structural_ok = not defaults
    minor = int(kubernetes_version.split(".")[1])
    checks = _OpenAPIChecks(structural_ok, unchanged, STORED_EXPRESSIONS_MINOR if unchanged else minor - 1)
    checks.walk(schema, path, root=True, inside_meta=None, uncorrelatable=None, where=_Where(1, True, True))
    errs += checks.schema_errors + checks.cel_errors
    if structural_ok:
        errs += checks.total.errors(path)
    if not errs and init_error is not None:
        errs.append(invalid(path, "", init_error))
    return errs


# -- conversion to a structural schema ----------------------------------------------------------

def _structural_init_error(schema: Any) -> str | None:
    """NewStructural's error, if the schema cannot be represented at all."""
    if not isinstance(schema, dict):
        return None
    for keyword, name in _UNSUPPORTED_STRUCTURAL:
        if keyword in schema:
            return f"OpenAPIV3Schema '{name}' is not supported"
    if isinstance(schema.get("items"), list):
        return "OpenAPIV3Schema 'items' must be a schema, but is an array"
    children = list(_props(schema).values()) + [schema.get(k) for k in ("items", "additionalProperties", "not")]
    children += [s for k in ("allOf", "anyOf", "oneOf") for s in _seq(schema.get(k))]
    for child in children:
        found = _structural_init_error(child)
        if found:
            return found
    return None


# -- structural invariants ---------------------------------------------------------------------

def _invariants(s: Obj, level: str, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    kind = s.get("type") or ""
    items = s.get("items")
    if kind == "array" and not isinstance(items, dict):
        errs.append(required(f"{path}.items", "must be specified"))
    if isinstance(items, dict):
        errs += _invariants(items, "item", f"{path}.items")
    properties = _props(s)
    for key in sorted(properties):
        errs += _invariants(properties[key], "field", _key(f"{path}.properties", key))
    extra = s.get("additionalProperties")
    if extra is not None:
        if level == "root":
            errs.append(forbidden(f"{path}.additionalProperties", "must not be used at the root"))
        if isinstance(extra, dict):
            errs += _invariants(extra, "field", f"{path}.additionalProperties")
    int_or_string = s.get("x-kubernetes-int-or-string") is True
    preserve = s.get("x-kubernetes-preserve-unknown-fields") is True
    embedded = s.get("x-kubernetes-embedded-resource") is True
    if int_or_string and preserve:
        errs.append(invalid(f"{path}.x-kubernetes-preserve-unknown-fields", True, "must be false if x-kubernetes-int-or-string is true"))
    if int_or_string and embedded:
        errs.append(invalid(f"{path}.x-kubernetes-embedded-resource", True, "must be false if x-kubernetes-int-or-string is true"))
    errs += _value_validation(s, level, path, skip_any_of=s.get("anyOf") == _INT_OR_STRING_ANY_OF,
                              skip_first_all_of=_int_or_string_all_of(s), cel_allowed=True)
    check_metadata = level == "root" or embedded
    if embedded and kind != "object":
        if not kind:
            errs.append(required(f"{path}.type", "must be object if x-kubernetes-embedded-resource is true"))
        else:
            errs.append(invalid(f"{path}.type", kind, "must be object if x-kubernetes-embedded-resource is true"))
    elif not kind and not int_or_string and not preserve:
        where = {"root": "at the root", "item": "for specified array items", "field": "for specified object fields"}[level]
        errs.append(required(f"{path}.type", f"must not be empty {where}"))
    if embedded and extra is not None:
        errs.append(forbidden(f"{path}.additionalProperties", "must not be used if x-kubernetes-embedded-resource is set"))
    if level == "root" and kind and kind != "object":
        errs.append(invalid(f"{path}.type", kind, "must be object at the root"))
    for name in ("kind", "apiVersion"):
        prop = properties.get(name)
        if isinstance(prop, dict) and check_metadata and prop.get("type", "") != "string":
            errs.append(invalid(f"{_key(path + '.properties', name)}.type", prop.get("type", ""), "must be string"))
    metadata = properties.get("metadata")
    if isinstance(metadata, dict):
        errs += _metadata_invariants(metadata, check_metadata, level, _key(f"{path}.properties", "metadata"))
    if embedded and not preserve and not properties:
        errs.append(required(f"{path}.properties",
                             "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"))
    return errs


def _int_or_string_all_of(s: Obj) -> bool:
    all_of = _seq(s.get("allOf"))
    return bool(all_of) and isinstance(all_of[0], dict) and all_of[0].get("anyOf") == _INT_OR_STRING_ANY_OF


def _metadata_invariants(s: Obj, check_metadata: bool, level: str, path: str) -> list[FieldError]:
    errs = []
    if check_metadata and s.get("type", "") != "object":
        errs.append(invalid(f"{path}.type", s.get("type", ""), "must be object"))
    if level == "root":
        rest = {k: v for k, v in s.items() if k not in ("type", "default")}
        properties = rest.get("properties")
        if isinstance(properties, dict) and properties and set(properties) <= {"name", "generateName"}:
            rest.pop("properties")
        if rest:
            errs.append(forbidden(path, "must not specify anything other than name and generateName, but metadata is implicitly specified"))
    return errs


def _value_validation(s: Obj, level: str, path: str, skip_any_of: bool, skip_first_all_of: bool,
                      cel_allowed: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    if not skip_any_of:
        for i, sub in enumerate(_seq(s.get("anyOf"))):
            errs += _nested(sub, level, f"{path}.anyOf[{i}]", False, False)
    for i, sub in enumerate(_seq(s.get("allOf"))):
        errs += _nested(sub, level, f"{path}.allOf[{i}]", skip_first_all_of and i == 0, cel_allowed)
    for i, sub in enumerate(_seq(s.get("oneOf"))):
        errs += _nested(sub, level, f"{path}.oneOf[{i}]", False, False)
    if isinstance(s.get("not"), dict):
        errs += _nested(s["not"], level, f"{path}.not", False, False)
    pattern = s.get("pattern")
    if isinstance(pattern, str) and pattern:
        try:
            regexp.compile(pattern)
        except regexp.RegexpError as exc:
            errs.append(invalid(f"{path}.pattern", pattern, f"must be a valid regular expression, but isn't: {exc}"))
    return errs


def _nested(v: Any, level: str, path: str, skip_any_of: bool, cel_allowed: bool) -> list[FieldError]:
    """A value validation inside allOf/anyOf/oneOf/not: nothing of the structural spine."""
    if not isinstance(v, dict):
        return []
    errs = _value_validation(v, level, path, skip_any_of, False, cel_allowed)
    if isinstance(v.get("items"), dict):
        errs += _nested(v["items"], level, f"{path}.items", False, cel_allowed)
    properties = _props(v)
    for key in sorted(properties):
        errs += _nested(properties[key], "field", _key(f"{path}.properties", key), False, cel_allowed)
    if v.get("type"):
        errs.append(forbidden(f"{path}.type", "must be empty to be structural"))
    if "additionalProperties" in v:
        errs.append(forbidden(f"{path}.additionalProperties", "must be undefined to be structural"))
    checks = (("default", "default" in v, "must be undefined to be structural"),
              ("title", bool(v.get("title")), "must be empty to be structural"),
              ("description", bool(v.get("description")), "must be empty to be structural"),
              ("nullable", v.get("nullable") is True, "must be false to be structural"),
              ("x-kubernetes-preserve-unknown-fields", v.get("x-kubernetes-preserve-unknown-fields") is True, "must be false to be structural"),
              ("x-kubernetes-embedded-resource", v.get("x-kubernetes-embedded-resource") is True, "must be false to be structural"),
              ("x-kubernetes-int-or-string", v.get("x-kubernetes-int-or-string") is True, "must be false to be structural"),
              ("x-kubernetes-list-map-keys", bool(v.get("x-kubernetes-list-map-keys")), "must be empty to be structural"),
              ("x-kubernetes-list-type", "x-kubernetes-list-type" in v, "must be undefined to be structural"),
              ("x-kubernetes-map-type", "x-kubernetes-map-type" in v, "must be undefined to be structural"),
              ("x-kubernetes-validations", bool(v.get("x-kubernetes-validations")) and not cel_allowed, "must be empty to be structural"))
    errs += [forbidden(f"{path}.{name}", detail) for name, bad, detail in checks if bad]
    if "metadata" in properties:
        errs.append(forbidden(_key(f"{path}.properties", "metadata"), "must not be specified in a nested context"))
    return errs


def _completeness(s: Obj, path: str) -> list[FieldError]:
    """Every property a value validation names must exist in the structural spine."""
    return _value_completeness(s, s, path, path)


def _value_completeness(v: Obj, s: Obj | None, s_path: str, v_path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if isinstance(v.get("not"), dict):
        errs += _nested_completeness(v["not"], s, s_path, f"{v_path}.not")
    for keyword in ("allOf", "anyOf", "oneOf"):
        for i, sub in enumerate(_seq(v.get(keyword))):
            if isinstance(sub, dict):
                errs += _nested_completeness(sub, s, s_path, f"{v_path}.{keyword}[{i}]")
    return errs


def _nested_completeness(v: Obj, s: Obj | None, s_path: str, v_path: str) -> list[FieldError]:
    if s is None:
        return [required(s_path, f"because it is defined in {v_path}")]
    errs = _value_completeness(v, s, s_path, v_path)
    if isinstance(v.get("items"), dict):
        items = s.get("items") if isinstance(s.get("items"), dict) else None
        errs += _nested_completeness(v["items"], items, f"{s_path}.items", f"{v_path}.items")
    s_properties = _props(s)
    for key, sub in sorted(_props(v).items()):
        if not isinstance(sub, dict):
            continue
        if key not in s_properties:
            errs.append(required(_key(f"{s_path}.properties", key), f"because it is defined in {_key(v_path + '.properties', key)}"))
        else:
            errs += _nested_completeness(sub, s_properties[key], _key(f"{s_path}.properties", key),
                                         _key(f"{v_path}.properties", key))
    return errs


# -- defaults ----------------------------------------------------------------------------------

def _defaults(s: Obj, path: str, resource_root: bool = False, inside_meta: bool = False) -> list[FieldError]:
    """structuraldefaulting.ValidateDefaults: each default valid for its schema and pruned."""
    errs: list[FieldError] = []
    if not isinstance(s, dict):
        return errs
    embedded = resource_root or s.get("x-kubernetes-embedded-resource") is True
    if embedded:
        inside_meta = False
    if "default" in s and not inside_meta:
        errs += _default_problems(s, path, embedded)
    if isinstance(s.get("items"), dict):
        errs += _defaults(s["items"], f"{path}.items", inside_meta=inside_meta)
    for key, sub in sorted((_props(s)).items()):
        errs += _defaults(sub, _key(f"{path}.properties", key),
                          inside_meta=inside_meta or (embedded and key in META_FIELDS))
    return errs


def _default_problems(s: Obj, path: str, embedded: bool) -> list[FieldError]:
    value = s["default"]
    node = Node(s)
    errs: list[FieldError] = []
    pruned = copy.deepcopy(value)
    _prune(pruned, node, "", [], resource_root=embedded)
    if pruned != value:
        errs.append(invalid(f"{path}.default", value, "must not have unknown fields"))
    checker = OpenAPIValidator(f"{path}.default")
    checker.validate(value, node)
    if checker.errors:
        return errs + checker.errors
    rules = RuleValidator(update=False)
    rules.validate(value, value, node, f"{path}.default", embedded, False)
    return errs + rules.errors


# -- per-position OpenAPI checks ------------------------------------------------------------------

class _Where(NamedTuple):
    """What the cost of rules at a position depends on: how many times the position can
    occur in one object (None: unbounded), whether it is on the structural spine (rules
    under allOf/anyOf/oneOf/not are not costed upstream), and whether it is the root of
    a resource (the root, or an embedded resource)."""

    cardinality: int | None
    costed: bool
    resource_root: bool

    def child(self, parent: Obj, schema: Any, costed: bool = True) -> "_Where":
        embedded = isinstance(schema, dict) and schema.get("x-kubernetes-embedded-resource") is True
        return _Where(child_cardinality(parent, self.cardinality), self.costed and costed, embedded)


class _OpenAPIChecks:
    """ValidateCustomResourceDefinitionOpenAPISchema: schema errors, then CEL errors, and
    the rules' estimated cost (:mod:`.celcost`)."""

    def __init__(self, compile_rules: bool, unchanged: bool = False, cel_minor: int = 0) -> None:
        self.compile_rules = compile_rules
        self.unchanged = unchanged
        #: The CEL environment's version: new rules get the compatibility version's
        #: (one minor before the server's), unchanged ones every library (stored expressions).
        self.cel_minor = cel_minor
        self.schema_errors: list[FieldError] = []
        self.cel_errors: list[FieldError] = []
        self.declarations = Declarations()
        self.total = TotalCost()

    def walk(self, s: Any, path: str, root: bool, inside_meta: str | None, uncorrelatable: str | None,
             where: _Where) -> None:
        if not isinstance(s, dict):
            return
        before = len(self.schema_errors)
        self._standard(s, path, inside_meta)
        if s.get("uniqueItems") is True:
            self.schema_errors.append(forbidden(f"{path}.uniqueItems", "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"))
        extra = s.get("additionalProperties")
        properties = _props(s)
        if extra is not None:
            if properties and (extra is False or isinstance(extra, dict)):
                self.schema_errors.append(forbidden(f"{path}.additionalProperties", "additionalProperties and properties are mutual exclusive"))
            self.walk(extra, f"{path}.additionalProperties", False, inside_meta, uncorrelatable, where.child(s, extra))
        atomic_map = s.get("x-kubernetes-map-type") == "atomic"
        for key in sorted(properties):
            sub_meta = inside_meta
            if (root or s.get("x-kubernetes-embedded-resource") is True) and key in META_FIELDS:
                sub_meta = f"in top-level {key}" if root else (inside_meta or "")
            self.walk(properties[key], _key(f"{path}.properties", key), False, sub_meta,
                      path if atomic_map and uncorrelatable is None else uncorrelatable,
                      where.child(s, properties[key]))
        self.walk(s.get("not"), f"{path}.not", False, inside_meta, uncorrelatable, where.child(s, None, False))
        for keyword in ("allOf", "oneOf", "anyOf"):
            for i, sub in enumerate(_seq(s.get(keyword))):
                self.walk(sub, f"{path}.{keyword}[{i}]", False, inside_meta, uncorrelatable, where.child(s, None, False))
        if isinstance(s.get("items"), dict):
            not_map = s.get("x-kubernetes-list-type") != "map"
            self.walk(s["items"], f"{path}.items", False, inside_meta,
                      path if not_map and uncorrelatable is None else uncorrelatable, where.child(s, s["items"]))
        self._extensions(s, path)
        self._rules(s, path, before, uncorrelatable, where)

    def _standard(self, s: Obj, path: str, inside_meta: str | None) -> None:
        errs = self.schema_errors
        kind = s.get("type")
        if isinstance(kind, str) and kind and kind not in OPENAPI_V3_TYPES:
            errs.append(not_supported(f"{path}.type", kind, OPENAPI_V3_TYPES))
        if "default" in s and inside_meta and inside_meta.startswith("in top-level"):
            errs.append(forbidden(f"{path}.default", f"must not be set {inside_meta}"))
        for keyword, text in (("id", "id is not supported"), ("additionalItems", "additionalItems is not supported"),
                              ("patternProperties", "patternProperties is not supported"),
                              ("definitions", "definitions is not supported"), ("dependencies", "dependencies is not supported"),
                              ("$ref", "$ref is not supported")):
            if s.get(keyword) not in (None, "", {}) or (keyword == "$ref" and "$ref" in s):
                errs.append(forbidden(f"{path}.{keyword}", text))
        if kind == "null":
            errs.append(forbidden(f"{path}.type", "type cannot be set to null, use nullable as an alternative"))
        if isinstance(s.get("items"), list) and s["items"]:
            errs.append(forbidden(f"{path}.items", "items must be a schema object and not an array"))
        if inside_meta is not None and s.get("x-kubernetes-embedded-resource") is True:
            errs.append(forbidden(f"{path}.x-kubernetes-embedded-resource", "must not be used inside of resource meta"))

    def _extensions(self, s: Obj, path: str) -> None:
        errs = self.schema_errors
        kind = s.get("type") or ""
        if s.get("x-kubernetes-preserve-unknown-fields") is False:
            errs.append(invalid(f"{path}.x-kubernetes-preserve-unknown-fields", False, "must be true or undefined"))
        map_type = s.get("x-kubernetes-map-type")
        if map_type is not None and kind != "object":
            if not kind:
                errs.append(required(f"{path}.type", "must be object if x-kubernetes-map-type is specified"))
            else:
                errs.append(invalid(f"{path}.type", kind, "must be object if x-kubernetes-map-type is specified"))
        if map_type is not None and map_type not in ("atomic", "granular"):
            errs.append(not_supported(f"{path}.x-kubernetes-map-type", map_type, ["atomic", "granular"]))
        list_type = s.get("x-kubernetes-list-type")
        items = s.get("items") if isinstance(s.get("items"), dict) else None
        if list_type is not None and kind != "array":
            if not kind:
                errs.append(required(f"{path}.type", "must be array if x-kubernetes-list-type is specified"))
            else:
                errs.append(invalid(f"{path}.type", kind, "must be array if x-kubernetes-list-type is specified"))
        elif list_type == "set" and items is not None:
            if items.get("type") == "array" and items.get("x-kubernetes-list-type") not in (None, "atomic"):
                errs.append(invalid(f"{path}.items.x-kubernetes-list-type", items.get("x-kubernetes-list-type"),
                                    "must be atomic as item of a list with x-kubernetes-list-type=set"))
            if items.get("type") == "object" and items.get("x-kubernetes-map-type") != "atomic":
                errs.append(invalid(f"{path}.items.x-kubernetes-map-type", items.get("x-kubernetes-list-type") or GoText("nil", "null"),
                                    "must be atomic as item of a list with x-kubernetes-list-type=set"))
        if list_type is not None and list_type not in ("atomic", "set", "map"):
            errs.append(not_supported(f"{path}.x-kubernetes-list-type", list_type, ["atomic", "set", "map"]))
        keys = [k for k in _seq(s.get("x-kubernetes-list-map-keys")) if isinstance(k, str)]
        if keys:
            if list_type is None:
                errs.append(required(f"{path}.x-kubernetes-list-type", "must be map if x-kubernetes-list-map-keys is non-empty"))
            elif list_type != "map":
                errs.append(invalid(f"{path}.x-kubernetes-list-type", list_type, "must be map if x-kubernetes-list-map-keys is non-empty"))
        if list_type == "map":
            self._map_list(s, path, keys, items)
        if list_type in ("set", "map") and items is not None:
            self._map_set_items(path, list_type, keys, items)

    def _map_set_items(self, path: str, list_type: str, keys: list[str], items: Obj) -> None:
        """validateMapListKeysMapSet: set and map items are not nullable, a map key is
        required or defaulted, and not nullable."""
        errs = self.schema_errors
        if items.get("nullable") is True:
            errs.append(forbidden(f"{path}.items.nullable", f"cannot be nullable when x-kubernetes-list-type is {list_type}"))
        if list_type != "map":
            return
        required_keys = set(k for k in _seq(items.get("required")) if isinstance(k, str))
        item_properties = _props(items)
        for key in keys:
            prop = item_properties.get(key)
            if prop is None:
                continue
            where = _key(f"{path}.items.properties", key)
            if key not in required_keys and "default" not in prop:
                errs.append(required(f"{where}.default", "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"))
            if prop.get("nullable") is True:
                errs.append(forbidden(f"{where}.nullable", "this property is in x-kubernetes-list-map-keys, so it cannot be nullable"))

    def _map_list(self, s: Obj, path: str, keys: list[str], items: Obj | None) -> None:
        errs = self.schema_errors
        if not keys:
            errs.append(required(f"{path}.x-kubernetes-list-map-keys", "must not be empty if x-kubernetes-list-type is map"))
        if "items" not in s:
            errs.append(required(f"{path}.items", "must have a schema if x-kubernetes-list-type is map"))
        if items is None:
            return
        if items.get("type") != "object":
            errs.append(invalid(f"{path}.items.type", items.get("type", ""), "must be object if parent array's x-kubernetes-list-type is map"))
            return
        seen: set[str] = set()
        item_properties = _props(items)
        for key in keys:
            prop = item_properties.get(key)
            if isinstance(prop, dict):
                if prop.get("type") in ("array", "object"):
                    errs.append(invalid(f"{_key(path + '.items.properties', key)}.type", "object",
                                        "must be a scalar type if parent array's x-kubernetes-list-type is map"))
            else:
                errs.append(invalid(f"{path}.x-kubernetes-list-map-keys", go_strings(keys), "entries must all be names of item properties"))
            if key in seen:
                errs.append(invalid(f"{path}.x-kubernetes-list-map-keys", go_strings(keys), "must not contain duplicate entries"))
            seen.add(key)

    def _rules(self, s: Obj, path: str, errors_before: int, uncorrelatable: str | None, where: _Where) -> None:
        raw_rules = _seq(s.get("x-kubernetes-validations"))
        if not raw_rules:
            return
        errs = self.schema_errors
        for i, raw in enumerate(raw_rules):
            here = f"{path}.x-kubernetes-validations[{i}]"
            raw = raw if isinstance(raw, dict) else {}
            rule, message = str(raw.get("rule") or ""), str(raw.get("message") or "")
            if not rule.strip():
                errs.append(required(f"{here}.rule", "rule is not specified"))
            elif message and not message.strip():
                errs.append(invalid(f"{here}.message", message, "message must be non-empty if specified"))
            elif "\n" in message.strip():
                errs.append(invalid(f"{here}.message", message, "message must not contain line breaks"))
            elif "\n" in rule.strip() and not message.strip():
                errs.append(required(f"{here}.message", "message must be specified if rule contains line breaks"))
            expression = str(raw.get("messageExpression") or "")
            if expression and not expression.strip():
                errs.append(required(f"{here}.messageExpression", "messageExpression must be non-empty if specified"))
            reason = raw.get("reason")
            if reason is not None and reason not in REASONS:
                errs.append(not_supported(f"{here}.reason", reason, REASONS))
            field_path = str(raw.get("fieldPath") or "")
            if field_path and not field_path.strip():
                errs.append(invalid(f"{here}.fieldPath", field_path, "fieldPath must be non-empty if specified"))
            if "\n" in field_path:
                errs.append(invalid(f"{here}.fieldPath", field_path, "fieldPath must not contain line breaks"))
            if field_path.strip() and not _field_path_valid(s, field_path):
                errs.append(invalid(f"{here}.fieldPath", field_path, "fieldPath must be a valid path"))
        if len(errs) == errors_before and self.compile_rules:
            decl = self.declarations.of(s, where.resource_root) if where.costed else None
            self._compile(raw_rules, path, uncorrelatable, decl, where.cardinality)

    def _compile(self, raw_rules: list[Any], path: str, uncorrelatable: str | None, decl: cel.Decl | None,
                 cardinality: int | None) -> None:
        for i, raw in enumerate(raw_rules):
            here = f"{path}.x-kubernetes-validations[{i}]"
            rule = Rule(raw if isinstance(raw, dict) else {})
            problem = self._rule_problem(rule, decl)
            if problem:
                self.cel_errors.append(invalid(f"{here}.rule", _rule_struct(raw), problem))
            else:
                if rule.program is not None and decl is not None:
                    self._cost(f"{here}.rule", "estimated rule cost", rule_cost(rule.program, decl, cardinality))
                self._message_expression(rule, raw, here, decl)
            if rule.uses_old_self and not problem:
                if uncorrelatable is not None:
                    self.cel_errors.append(invalid(f"{here}.rule", rule.rule,
                                                   f"oldSelf cannot be used on the uncorrelatable portion of the schema within {uncorrelatable}"))
            elif rule.optional_old_self is not None:
                self.cel_errors.append(invalid(f"{here}.optionalOldSelf", rule.optional_old_self,
                                               "may not be set if oldSelf is not used in rule"))

    def _rule_problem(self, rule: Rule, decl: cel.Decl | None) -> str:
        """Why the rule does not compile (compileRule's detail), "" if it does: it parses,
        names only what is declared, type-checks against the schema and is a bool."""
        if rule.program is None:
            return rule.error
        if decl is None:
            return ""
        why = check_rule(rule.program, decl, rule.optional_old_self is True, self.cel_minor, BOOL_T)
        if why == "type":
            return "cel expression must evaluate to a bool"
        return f"compilation failed: {why}" if why else ""

    def _message_expression(self, rule: Rule, raw: Any, here: str, decl: cel.Decl | None) -> None:
        """A compiled rule's messageExpression: compiles, type-checks to a string, and its cost."""
        problem = ""
        if rule.message_expression.strip() and rule.message_program is None:
            problem = "messageExpression compilation failed: " + _compile_text(rule.message_expression)
        elif rule.message_program is not None and decl is not None:
            why = check_rule(rule.message_program, decl, rule.optional_old_self is True, self.cel_minor, STRING_T)
            if why == "type":
                problem = "messageExpression must evaluate to a string"
            elif why:
                problem = f"messageExpression compilation failed: {why}"
        if problem:
            self.cel_errors.append(invalid(f"{here}.messageExpression", _rule_struct(raw), problem))
        elif rule.message_program is not None and decl is not None:
            self._cost(f"{here}.messageExpression", "estimated messageExpression cost",
                       rule.message_program.estimated_cost(cel.DeclSizes(decl)))

    def _cost(self, path: str, what: str, cost: int) -> None:
        """A rule's (or messageExpression's) estimated cost: Forbidden past the limit
        (unless the schema is unchanged), and counted in the schema's total."""
        if cost > STATIC_COST_LIMIT and not self.unchanged:
            self.cel_errors.append(forbidden(path, cost_message(what, cost, STATIC_COST_LIMIT)))
        self.total.observe(path, cost)


def _compile_text(source: str) -> str:
    try:
        cel.compile(source, ("self", "oldSelf"))
    except cel.CelError as exc:
        return str(exc)
    return ""


def _rule_struct(raw: Any) -> GoText:
    """An apiextensions.ValidationRule as a field error shows it: Go's ``%#v`` up to 1.33
    (pointers print as addresses upstream; a set one prints as a fixed fake address here),
    from 1.34 its ``json.Marshal`` (the internal type has no JSON tags: Go's field names)."""
    raw = raw if isinstance(raw, dict) else {}
    reason = "(*apiextensions.FieldValueErrorReason)(nil)" if raw.get("reason") is None else \
        "(*apiextensions.FieldValueErrorReason)(0xc000000000)"
    optional = "(*bool)(nil)" if raw.get("optionalOldSelf") is None else "(*bool)(0xc000000000)"
    texts = {key: str(raw.get(key) or "") for key in ("rule", "message", "messageExpression", "fieldPath")}
    as_json = go_json_struct([("Rule", texts["rule"]), ("Message", texts["message"]),
                              ("MessageExpression", texts["messageExpression"]), ("Reason", raw.get("reason")),
                              ("FieldPath", texts["fieldPath"]), ("OptionalOldSelf", raw.get("optionalOldSelf"))])
    return GoText(f"apiextensions.ValidationRule{{Rule:{go_quote(texts['rule'])}, "
                  f"Message:{go_quote(texts['message'])}, "
                  f"MessageExpression:{go_quote(texts['messageExpression'])}, Reason:{reason}, "
                  f"FieldPath:{go_quote(texts['fieldPath'])}, OptionalOldSelf:{optional}}}", as_json)


_PATH_TOKEN = re.compile(r"\.([^.\[\]]+)|\['((?:[^'\\]|\\.)*)'\]")


def _field_path_valid(s: Obj, field_path: str) -> bool:
    """cel.ValidFieldPath: ``.a.b`` or ``['a.b']`` steps, each naming a property or a map key."""
    position = 0
    node: Any = s
    while position < len(field_path):
        match = _PATH_TOKEN.match(field_path, position)
        if match is None or not isinstance(node, dict):
            return False
        name = match.group(1) if match.group(1) is not None else match.group(2)
        properties = node.get("properties")
        if properties:
            if name not in properties:
                return False
            node = properties[name]
        elif isinstance(node.get("additionalProperties"), dict):
            node = node["additionalProperties"]
        else:
            return False
        position = match.end()
    return True
