"""A CRD version's ``openAPIV3Schema`` compiled once into :class:`Node` s.

Every custom resource write prunes, defaults and validates against its version's schema;
reading the raw schema dicts each time would mean re-parsing patterns, formats and CEL
rules per write. A Node holds each position's facts parsed: the structural spine
(``properties``, ``items``, ``additionalProperties``), the value validations, the
``x-kubernetes-*`` extensions and the compiled ``x-kubernetes-validations`` rules.
Nodes are never changed after compilation, so concurrent writes share them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from fakekube.api.wire import cel, regexp

Obj = dict[str, Any]

#: A schema position without a ``default``.
NO_DEFAULT: Any = object()

#: The CEL variables a CRD rule may use.
RULE_VARIABLES = ("self", "oldSelf")

_FIELD_OF = {name: re.compile(rf"\b{name}\b(?:\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)(\s*\()?)?") for name in RULE_VARIABLES}


#: CEL's reserved words: a property of that name is ``__word__`` in a rule.
CEL_RESERVED = frozenset(("true", "false", "null", "in", "as", "break", "const", "continue", "else", "for",
                          "function", "if", "import", "let", "loop", "package", "namespace", "return", "var",
                          "void", "while"))
_CEL_NAME = re.compile(r"^[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*$")
_CEL_ESCAPES = re.compile(r"__|[./-]")
_CEL_ESCAPED = {"__": "__underscores__", ".": "__dot__", "-": "__dash__", "/": "__slash__"}


def cel_name(name: str) -> str | None:
    """A property's name in CEL (apiserver's cel.Escape), or None when CEL cannot name it."""
    if name in CEL_RESERVED:
        return f"__{name}__"
    if not _CEL_NAME.match(name):
        return None
    return _CEL_ESCAPES.sub(lambda m: _CEL_ESCAPED[m.group(0)], name)


def fields_read(sources: list[str], variable: str) -> frozenset[str] | None:
    """The top-level fields of ``variable`` the expressions read (``self.a`` → ``a``), or
    None when one of them uses the value otherwise (``size(self)``, ``self.all(...)``):
    binding only those fields spares converting the rest for the CEL engine."""
    fields: set[str] = set()
    for source in sources:
        for match in _FIELD_OF[variable].finditer(source):
            if match.group(1) is None or match.group(2) is not None:
                return None
            fields.add(match.group(1))
    return frozenset(fields)


class Rule:
    """One ``x-kubernetes-validations`` entry, with its programs (None if it failed to compile)."""

    __slots__ = ("raw", "rule", "message", "message_expression", "reason", "field_path",
                 "optional_old_self", "program", "message_program", "error", "uses_old_self", "fixed_costs")

    def __init__(self, raw: Obj) -> None:
        self.raw = raw
        self.rule = str(raw.get("rule") or "")
        self.message = str(raw.get("message") or "")
        self.message_expression = str(raw.get("messageExpression") or "")
        self.reason = raw.get("reason")
        self.field_path = str(raw.get("fieldPath") or "")
        self.optional_old_self = raw.get("optionalOldSelf")
        self.program: cel.Program | None = None
        self.message_program: cel.Program | None = None
        self.error = ""
        try:
            self.program = cel.compile(self.rule, RULE_VARIABLES)
        except cel.CelError as exc:
            self.error = f"compilation failed: {exc}"
        if self.message_expression.strip():
            try:
                self.message_program = cel.compile(self.message_expression, RULE_VARIABLES)
            except cel.CelError:
                self.message_program = None
        self.uses_old_self = self.program is not None and self.program.references("oldSelf")
        #: What a run of the rule and of its messageExpression costs whatever the values'
        #: sizes (cel.prices.UNBOUNDED when it depends on them); set with the schema's kinds.
        self.fixed_costs: tuple[int, int] | None = None


class Node:
    """One position of a structural schema."""

    __slots__ = ("raw", "type", "nullable", "default", "properties", "items", "additional",
                 "additional_allows", "preserve_unknown", "embedded", "int_or_string", "list_type",
                 "map_keys", "map_type", "format", "enum", "maximum", "exclusive_maximum", "minimum",
                 "exclusive_minimum", "multiple_of", "max_length", "min_length", "pattern", "pattern_text",
                 "max_items", "min_items", "max_properties", "min_properties", "required",
                 "all_of", "any_of", "one_of", "not_", "rules", "has_rules", "has_defaults", "has_list_types",
                 "has_embedded", "self_fields", "old_fields", "programs", "cel_names", "cel_convert", "_enum_keys",
                 "_enum_text")

    def __init__(self, raw: Obj) -> None:
        self.raw = raw
        self.type: str = raw["type"] if isinstance(raw.get("type"), str) else ""
        self.nullable = raw.get("nullable") is True
        self.default = raw["default"] if "default" in raw else NO_DEFAULT
        properties: dict[str, Any] = raw["properties"] if isinstance(raw.get("properties"), dict) else {}
        self.properties = {k: Node(v) for k, v in sorted(properties.items()) if isinstance(v, dict)}
        items = raw.get("items")
        self.items = Node(items) if isinstance(items, dict) else None
        extra = raw.get("additionalProperties")
        self.additional = Node(extra) if isinstance(extra, dict) else None
        self.additional_allows = extra if isinstance(extra, bool) else (True if isinstance(extra, dict) else None)
        self.preserve_unknown = raw.get("x-kubernetes-preserve-unknown-fields") is True
        self.embedded = raw.get("x-kubernetes-embedded-resource") is True
        self.int_or_string = raw.get("x-kubernetes-int-or-string") is True
        self.list_type = _text(raw.get("x-kubernetes-list-type"))
        self.map_keys = [k for k in _list(raw.get("x-kubernetes-list-map-keys")) if isinstance(k, str)]
        self.map_type = _text(raw.get("x-kubernetes-map-type"))
        self.format = _text(raw.get("format"))
        self.enum = raw.get("enum") if isinstance(raw.get("enum"), list) else None
        self._enum_keys: frozenset[Any] | None = None  # built on first use (enum_allows)
        self._enum_text: str | None = None
        self.maximum = _number(raw.get("maximum"))
        self.exclusive_maximum = raw.get("exclusiveMaximum") is True
        self.minimum = _number(raw.get("minimum"))
        self.exclusive_minimum = raw.get("exclusiveMinimum") is True
        self.multiple_of = _number(raw.get("multipleOf"))
        self.max_length = _count(raw.get("maxLength"))
        self.min_length = _count(raw.get("minLength"))
        self.pattern_text: str = raw["pattern"] if isinstance(raw.get("pattern"), str) else ""
        self.pattern = _compile_pattern(self.pattern_text)
        self.max_items = _count(raw.get("maxItems"))
        self.min_items = _count(raw.get("minItems"))
        self.max_properties = _count(raw.get("maxProperties"))
        self.min_properties = _count(raw.get("minProperties"))
        self.required = [r for r in _list(raw.get("required")) if isinstance(r, str)]
        self.all_of = [Node(s) for s in _list(raw.get("allOf")) if isinstance(s, dict)]
        self.any_of = [Node(s) for s in _list(raw.get("anyOf")) if isinstance(s, dict)]
        self.one_of = [Node(s) for s in _list(raw.get("oneOf")) if isinstance(s, dict)]
        self.not_ = Node(raw["not"]) if isinstance(raw.get("not"), dict) else None
        self.rules = [Rule(r) for r in _list(raw.get("x-kubernetes-validations")) if isinstance(r, dict)]
        sources = [text for r in self.rules for text in (r.rule, r.message_expression) if text]
        #: What the rules here read of self/oldSelf (None: all of it), and their programs.
        self.self_fields = fields_read(sources, "self")
        self.old_fields = fields_read(sources, "oldSelf")
        self.programs = [p for r in self.rules for p in (r.program, r.message_program) if p is not None]
        children: list[Node] = list(self.properties.values()) + [n for n in (self.items, self.additional) if n is not None]
        self.has_rules: bool = bool(self.rules) or any(c.has_rules for c in children) or any(
            n.has_rules for n in self.all_of)
        #: Whether a walk for defaults, list-type or embedded-resource checks must enter here.
        self.has_defaults: bool = any(c.default is not NO_DEFAULT or c.has_defaults for c in children)
        self.has_list_types: bool = self.list_type in ("set", "map") or any(c.has_list_types for c in children)
        self.has_embedded: bool = self.embedded or any(c.has_embedded for c in children)
        #: Each property's name in CEL (``foo-bar`` is ``foo__dash__bar``, ``namespace`` is
        #: ``__namespace__``; None: CEL cannot name it).
        self.cel_names = {k: cel_name(k) for k in self.properties}
        #: Whether a value here must be changed before CEL sees it: a property renamed, or a
        #: number typed by the schema (CEL keeps int and double apart: ``1`` in a ``number``
        #: field is the double 1.0 upstream).
        self.cel_convert: bool = (self.type in ("number", "integer") or any(k != n for k, n in self.cel_names.items())
                                  or any(c.cel_convert for c in children))

    def enum_allows(self, value: Any) -> bool:
        """Is ``value`` one of ``enum``? One hash lookup: the values are kept as a set of
        canonical keys, built on first use (a 100,000-value enum checked per list item was
        100,000 comparisons each)."""
        keys = self._enum_keys
        if keys is None:
            keys = self._enum_keys = frozenset(canonical(e) for e in self.enum or ())
        return canonical(value) in keys

    def enum_text(self, render: Callable[[list[Any]], str]) -> str:
        """``render(enum)`` (the ``supported values`` of an error), made once per node."""
        text = self._enum_text
        if text is None:
            text = self._enum_text = render(self.enum or [])
        return text

    def child(self, key: str) -> Node | None:
        """The schema of field ``key`` of an object here (a property, else additionalProperties)."""
        found = self.properties.get(key)
        return found if found is not None else self.additional


def canonical(value: Any) -> Any:
    """A hashable stand-in for a JSON value, equal exactly when the values are: numbers by
    value (``1`` is ``1.0``), booleans apart from numbers (``true`` is not ``1``, at any
    depth), objects whatever their key order."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, list):
        return ("list", tuple(canonical(v) for v in value))
    if isinstance(value, dict):
        return ("object", tuple(sorted((str(k), canonical(v)) for k, v in value.items())))
    return value


# The schema reached us through typed decoding (JSONSchemaProps), so its keywords have
# their types; these keep a hand-built schema from crashing a write all the same.
def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _number(value: Any) -> int | float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _compile_pattern(text: str) -> regexp.Regexp | None:
    """A ``pattern`` as kube-openapi compiles it: Go's regexp, RE2, linear in the text
    (None if it does not compile: CRD validation reports that)."""
    if not text:
        return None
    try:
        return regexp.compile(text)
    except regexp.RegexpError:
        return None
