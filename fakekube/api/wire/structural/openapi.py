"""OpenAPI v3 value validation of custom resources, with kube-openapi's messages.

Each failure is what ``kubeOpenAPIResultToFieldErrors`` makes of kube-openapi's
``errors.Validation``: its path is the field path (``spec.replicas``) below ``prefix``,
its text names the path as kube-openapi does (``spec.replicas in body must be of type
integer: "string"``). Validators run in kube-openapi's order at each position: type,
allOf/anyOf/oneOf/not, string, format, number, array, enum, object. Properties are
visited in sorted order (Go visits them in map order, which is random).
"""

from __future__ import annotations

import json
from typing import Any

from fakekube.api.machinery.errors import (FIELD_INVALID, FIELD_NOT_SUPPORTED, FIELD_REQUIRED, FIELD_TOO_LONG,
                                           FIELD_TOO_MANY, FIELD_TYPE_INVALID, FieldError, go_float)
from fakekube.objects.syntax import go_quote
from fakekube.api.wire.structural.formats import format_ok
from fakekube.api.wire.structural.node import Node, canonical

#: No old value to compare with (a create, or an uncorrelatable position).
ABSENT: Any = object()

_JSON_TYPES = ((bool, "boolean"), (str, "string"), (int, "integer"), (float, "number"), (list, "array"),
               (dict, "object"))


def json_type(value: Any) -> str:
    """The OpenAPI type name of a decoded JSON value."""
    for python_type, name in _JSON_TYPES:
        if isinstance(value, python_type):
            return name
    return "null"


#: Errors one validation collects; past it validation stops (fakekube's bound: a 400-item
#: list of invalid values of a 100,000-value enum would otherwise answer with gigabytes).
MAX_FIELD_ERRORS = 1_000
#: Checks one validation makes (a value against a schema position: allOf, anyOf and oneOf
#: check a value once per alternative, so schema size times data size); past it validation stops.
MAX_CHECKS = 3_000_000
#: The ``supported values`` of an enum error are cut after this many bytes.
MAX_ENUM_TEXT_BYTES = 16 * 1024


class _Work:
    """What one validation (its trials of alternatives included) has done so far."""

    __slots__ = ("checks", "stopped")

    def __init__(self) -> None:
        self.checks = 0
        self.stopped = False


class OpenAPIValidator:
    """Validates values against nodes, collecting errors under a field path ``prefix``.

    Bounded: at most ``MAX_FIELD_ERRORS`` errors and ``MAX_CHECKS`` checks, after which it
    stops with one more error saying so.
    """

    __slots__ = ("prefix", "errors", "_work")

    def __init__(self, prefix: str = "", work: _Work | None = None) -> None:
        self.prefix = prefix
        self.errors: list[FieldError] = []
        self._work = work if work is not None else _Work()

    def path(self, name: str) -> str:
        """``fldPath.Child(name)``: the field path of an error kube-openapi raised at ``name``."""
        name = name.removeprefix(".")
        if self.prefix:
            return f"{self.prefix}.{name}" if name else self.prefix
        return name or "<nil>"

    def add(self, kind: str, name: str, detail: str, value: Any = None, show: bool = True) -> None:
        if show:
            self.errors.append(FieldError(kind, self.path(name), detail, value))
        else:
            self.errors.append(FieldError(kind, self.path(name), detail))

    def validate(self, value: Any, node: Node, name: str = "", old: Any = ABSENT) -> None:
        """Check ``value``; on update ``old`` is the correlated old value, and a value equal
        to it is not checked at all (ratcheting, as CRDValidationRatcheting does)."""
        work = self._work
        work.checks += 1
        if work.stopped or (old is not ABSENT and value == old):
            return
        if work.checks > MAX_CHECKS or len(self.errors) >= MAX_FIELD_ERRORS:
            self._stop(MAX_CHECKS if work.checks > MAX_CHECKS else 0)
            return
        self._type(value, node, name)  # a wrong type does not stop the other validators
        if value is None:  # kube-openapi checks a null's type and enum only
            self._enum(value, node, name)
            return
        if node.all_of or node.any_of or node.one_of or node.not_ is not None:
            self._composition(value, node, name)
        if isinstance(value, str):
            self._string(value, node, name)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            self._number(value, node, name)
        elif isinstance(value, list):
            self._array(value, node, name, old)
        self._enum(value, node, name)
        if isinstance(value, dict):
            self._object(value, node, name, old)

    def _stop(self, checks: int) -> None:
        """Stop validating, saying why (once; trials of alternatives stop with their caller)."""
        self._work.stopped = True
        why = f"{checks} checks" if checks else f"{MAX_FIELD_ERRORS} errors"
        self.errors.append(FieldError(FIELD_TOO_MANY, self.prefix or "<nil>",
                                      f"validation stopped after {why} (fakekube's bound)"))

    def _enum(self, value: Any, node: Node, name: str) -> None:
        if node.enum is not None and not node.enum_allows(value):
            self.errors.append(FieldError(FIELD_NOT_SUPPORTED, self.path(name), node.enum_text(supported_values),
                                          value))

    def _type(self, value: Any, node: Node, name: str) -> bool:
        types = ("integer", "string") if node.int_or_string else ((node.type,) if node.type else ())
        if value is None:
            if types and not node.nullable:
                self.add(FIELD_TYPE_INVALID, name, _in_body(name, f"must be of type {','.join(types)}: \"null\""), "null")
                return False
            return True
        if not types:
            return True
        actual = json_type(value)
        if actual in types or (actual == "number" and "integer" in types and float(value).is_integer()) or (
                actual == "integer" and "number" in types):
            return True
        self.add(FIELD_TYPE_INVALID, name, _in_body(name, f"must be of type {','.join(types)}: {go_quote(actual)}"), actual)
        return False

    def _string(self, value: str, node: Node, name: str) -> None:
        if node.max_length is not None and len(value) > node.max_length:
            unit = "byte" if node.max_length == 1 else "bytes"
            self.add(FIELD_TOO_LONG, name, f"may not be more than {node.max_length} {unit}", show=False)
        elif node.min_length is not None and len(value) < node.min_length:
            self.add(FIELD_INVALID, name, _in_body(name, f"should be at least {node.min_length} chars long"), value)
        elif node.pattern is not None and not node.pattern.search(value):
            self.add(FIELD_INVALID, name, _in_body(name, f"should match '{node.pattern_text}'"), value)
        if node.format and not format_ok(node.format, value):
            self.add(FIELD_TYPE_INVALID, name, _in_body(name, f"must be of type {node.format}: {go_quote(value)}"), value)

    def _number(self, value: float, node: Node, name: str) -> None:
        if isinstance(node.multiple_of, (int, float)) and node.multiple_of > 0:
            quotient = value / node.multiple_of
            if not float(quotient).is_integer():
                self.add(FIELD_INVALID, name, _in_body(name, f"should be a multiple of {_go_number(node.multiple_of)}"), value)
        if isinstance(node.maximum, (int, float)):
            if value > node.maximum or (node.exclusive_maximum and value == node.maximum):
                relation = "less than" if node.exclusive_maximum else "less than or equal to"
                self.add(FIELD_INVALID, name, _in_body(name, f"should be {relation} {_go_number(node.maximum)}"), value)
        if isinstance(node.minimum, (int, float)):
            if value < node.minimum or (node.exclusive_minimum and value == node.minimum):
                relation = "greater than" if node.exclusive_minimum else "greater than or equal to"
                self.add(FIELD_INVALID, name, _in_body(name, f"should be {relation} {_go_number(node.minimum)}"), value)

    def _array(self, value: list[Any], node: Node, name: str, old: Any) -> None:
        if node.items is not None:  # items first, then the size limits (kube-openapi's order)
            olds = correlate_items(value, old, node)
            for index, element in enumerate(value):
                self.validate(element, node.items, f"{name}[{index}]", olds[index])
        size = len(value)
        if isinstance(node.min_items, int) and size < node.min_items:
            self.add(FIELD_INVALID, name, _in_body(name, f"should have at least {node.min_items} items"), size)
        if isinstance(node.max_items, int) and size > node.max_items:
            self.add(FIELD_TOO_MANY, name, f"must have at most {node.max_items} items", size)

    def _object(self, value: dict[str, Any], node: Node, name: str, old: Any) -> None:
        count = len(value)
        if isinstance(node.min_properties, int) and count < node.min_properties:
            self.add(FIELD_INVALID, name, _in_body(name, f"should have at least {node.min_properties} properties"), count)
            return
        if isinstance(node.max_properties, int) and count > node.max_properties:
            self.add(FIELD_TOO_MANY, name, f"must have at most {node.max_properties} items", count)
            return
        if node.additional_allows is False:
            for key in value:
                if key not in node.properties:
                    self.add(FIELD_INVALID, name, _in_body(f"{name}.{key}", "is a forbidden property"), key)
        olds = old if isinstance(old, dict) else {}
        if node.additional is not None:
            for key, sub in value.items():
                if key not in node.properties:
                    self.validate(sub, node.additional, f"{name}.{key}", olds.get(key, ABSENT))
        for key, prop in node.properties.items():
            if key in value:
                self.validate(value[key], prop, f"{name}.{key}" if name else key, olds.get(key, ABSENT))
        for key in node.required:
            if key not in value:
                self.add(FIELD_REQUIRED, f"{name}.{key}", "", show=False)

    def _composition(self, value: Any, node: Node, name: str) -> None:
        for sub in node.all_of:
            self.validate(value, sub, name)
        if node.any_of:
            failures = [self._trial(value, sub, name) for sub in node.any_of]
            if all(failures):
                self._composite(f"{go_quote(name)} must validate at least one schema (anyOf)")
                self.errors.extend(_fewest(failures))
        if node.one_of:
            failures = [self._trial(value, sub, name) for sub in node.one_of]
            passed = sum(1 for f in failures if not f)
            if passed != 1:
                self._composite(f"{go_quote(name)} must validate one and only one schema (oneOf). "
                                + ("Found none valid" if passed == 0 else f"Found {passed} valid alternatives"))
                if passed == 0:
                    self.errors.extend(_fewest(failures))
        if node.not_ is not None and not self._trial(value, node.not_, name):
            self._composite(f"{go_quote(name)} must not validate the schema (not)")

    def _trial(self, value: Any, node: Node, name: str) -> list[FieldError]:
        trial = OpenAPIValidator(self.prefix, self._work)
        trial.validate(value, node, name)
        if self._work.stopped and trial.errors and trial.errors[-1].type == FIELD_TOO_MANY:
            self.errors.append(trial.errors.pop())  # the stop is this validation's, not the alternative's
        return trial.errors

    def _composite(self, text: str) -> None:
        """A composite error is not an ``errors.Validation``: upstream files it at the
        prefix itself, with an empty value."""
        self.errors.append(FieldError(FIELD_INVALID, self.prefix or "<nil>", text, ""))


def correlate_items(value: list[Any], old: Any, node: Node) -> list[Any]:
    """The old item each new item is compared with on update: the one with the same keys
    in a ``map`` list, an equal one in a ``set``; none in an atomic list."""
    if not isinstance(old, list) or node.list_type not in ("map", "set"):
        return [ABSENT] * len(value)
    if node.list_type == "set":  # by canonical value: one hash lookup per item, not a scan of the old list
        olds = {canonical(item) for item in old}
        return [element if canonical(element) in olds else ABSENT for element in value]
    by_key: dict[str, Any] = {}
    for item in old:
        if isinstance(item, dict):
            by_key.setdefault(repr([item.get(k) for k in node.map_keys]), item)
    return [by_key.get(repr([item.get(k) for k in node.map_keys]), ABSENT) if isinstance(item, dict) else ABSENT
            for item in value]


def _in_body(name: str, text: str) -> str:
    return f"{name.removeprefix('.')} in body {text}"


def supported_values(values: list[Any]) -> str:
    """``field.NotSupported``'s detail: each value quoted, cut after MAX_ENUM_TEXT_BYTES."""
    parts: list[str] = []
    size = 0
    for value in values:
        part = go_quote(value if isinstance(value, str) else json.dumps(value, separators=(",", ":")))
        size += len(part) + 2
        if size > MAX_ENUM_TEXT_BYTES:
            return "supported values: " + ", ".join(parts) + f", ... ({len(values)} values in all, truncated)"
        parts.append(part)
    return "supported values: " + ", ".join(parts)


def _go_number(value: float) -> str:
    return go_float(float(value))


def _fewest(failures: list[list[FieldError]]) -> list[FieldError]:
    """The failing alternative with the fewest errors (kube-openapi keeps the best match)."""
    return sorted(failures, key=len)[0]
