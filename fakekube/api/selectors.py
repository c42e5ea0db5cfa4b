"""Label and field selectors, parsed and matched exactly as apimachinery does.

Clients send ``labelSelector`` and ``fieldSelector`` as strings; kubectl, client-go and
the Python client all rely on the server accepting the same grammar, rejecting the same
strings with the same ``400 BadRequest`` messages, and matching the same objects. So the
label selector parser below mirrors ``k8s.io/apimachinery/pkg/labels/selector.go``
(lexer, parser and requirement validation, including its quirks: ``x in ()`` means
"x is the empty string", requirements are sorted by key, set values are sorted and
de-duplicated) and the field selector parser mirrors ``pkg/fields/selector.go``.

Which fields a type can be selected on, and how an unsupported one is reported, is per
type upstream (each API group's field label conversion function plus the registry's
``ToSelectableFields``); :data:`FIELD_SETS` holds that table for the built-in types.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from fakekube.api.errors import ApiError, bad_request
from fakekube.api.registry import ResourceType
from fakekube.api.validation import go_quote, is_qualified_name, is_valid_label_value

Obj = dict[str, Any]

# Operators, spelled as apimachinery's selection.Operator values.
IN = "in"
NOT_IN = "notin"
EQUALS = "="
DOUBLE_EQUALS = "=="
NOT_EQUALS = "!="
EXISTS = "exists"
DOES_NOT_EXIST = "!"
GREATER_THAN = "gt"
LESS_THAN = "lt"

_BINARY_OPERATORS = (IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN)
_ALL_OPERATORS = _BINARY_OPERATORS + (EXISTS, DOES_NOT_EXIST)

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1
_GO_INT_RE = re.compile(r"[+-]?[0-9]+\Z")


class SelectorError(ValueError):
    """A selector that apimachinery would refuse; ``str()`` is upstream's message."""


def _parse_int64(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``: optional sign, ASCII digits, int64 range."""
    if not _GO_INT_RE.match(text):
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else None


# ---------------------------------------------------------------------------
# Requirements and label selectors


@dataclass(frozen=True)
class Requirement:
    """One ``key op values`` term of a label selector."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op in (IN, EQUALS, DOUBLE_EQUALS):
            return self.key in labels and labels[self.key] in self.values
        if op in (NOT_IN, NOT_EQUALS):
            return self.key not in labels or labels[self.key] not in self.values
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        if op in (GREATER_THAN, LESS_THAN):
            return self._matches_int(labels)
        return False

    def _matches_int(self, labels: Mapping[str, str]) -> bool:
        """Gt/Lt: both the label and the requirement must parse as int64, else no match."""
        if self.key not in labels or len(self.values) != 1:
            return False
        have = _parse_int64(labels[self.key])
        want = _parse_int64(self.values[0])
        if have is None or want is None:
            return False
        return have > want if self.operator == GREATER_THAN else have < want

    def __str__(self) -> str:
        """Rendered as ``Requirement.String()``: multi-values sorted, ``in``-sets parenthesised."""
        prefix = "!" if self.operator == DOES_NOT_EXIST else ""
        if self.operator in (EXISTS, DOES_NOT_EXIST):
            return prefix + self.key
        symbol = {EQUALS: "=", DOUBLE_EQUALS: "==", NOT_EQUALS: "!=", IN: " in ", NOT_IN: " notin ",
                  GREATER_THAN: ">", LESS_THAN: "<"}.get(self.operator, "")
        values = self.values[0] if len(self.values) == 1 else ",".join(sorted(self.values))
        if self.operator in (IN, NOT_IN):
            values = f"({values})"
        return self.key + symbol + values


@dataclass(frozen=True)
class LabelSelector:
    """A conjunction of requirements, kept sorted by key (upstream's ``ByKey``).

    ``nothing=True`` is ``labels.Nothing()``: what a *nil* metav1.LabelSelector means,
    matching no object at all (an empty one matches every object).
    """

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self.nothing:
            return False
        present = labels or {}
        return all(r.matches(present) for r in self.requirements)

    def empty(self) -> bool:
        return not self.nothing and not self.requirements

    def requires_exact_match(self, key: str) -> str | None:
        """The single value ``key`` must have, if the selector pins it (indexing aid)."""
        for r in self.requirements:
            if r.key == key:
                if r.operator in (EQUALS, DOUBLE_EQUALS, IN) and len(r.values) == 1:
                    return r.values[0]
                return None
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


EVERYTHING = LabelSelector()
NOTHING = LabelSelector(nothing=True)


def _sorted_by_key(requirements: Iterable[Requirement]) -> tuple[Requirement, ...]:
    # Stable, so same-key requirements keep their written order on every run.
    return tuple(sorted(requirements, key=lambda r: r.key))


def _go_strings(values: list[str] | None) -> str:
    """A ``[]string`` as Go's ``%#v`` prints it inside field error messages."""
    if values is None:
        return "[]string(nil)"
    return "[]string{" + ", ".join(go_quote(v) for v in values) + "}"


def _field_message(path: str, rendered_value: str, detail: str, phrase: str = "Invalid value") -> str:
    return f"{path}: {phrase}: {rendered_value}: {detail}"


def _join_path(base: str | None, child: str) -> str:
    return f"{base}.{child}" if base else child


def _label_key_error(key: str, path: str) -> str | None:
    errors = is_qualified_name(key)
    return _field_message(path, go_quote(key), "; ".join(errors)) if errors else None


def _aggregate(messages: list[str]) -> str:
    """``utilerrors.NewAggregate(...).Error()``: one message bare, several bracketed, deduped."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def _operator_errors(op: str, values: list[str] | None, path: str | None) -> list[str]:
    values_path = _join_path(path, "values")
    vals = values or []
    rendered = _go_strings(values)
    if op in (IN, NOT_IN) and not vals:
        return [_field_message(values_path, rendered, "for 'in', 'notin' operators, values set can't be empty")]
    if op in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS) and len(vals) != 1:
        return [_field_message(values_path, rendered, "exact-match compatibility requires one single value")]
    if op in (EXISTS, DOES_NOT_EXIST) and vals:
        return [_field_message(values_path, rendered, "values set must be empty for exists and does not exist")]
    if op in (GREATER_THAN, LESS_THAN):
        errors = []
        if len(vals) != 1:
            errors.append(_field_message(values_path, rendered, "for 'Gt', 'Lt' operators, exactly one value is required"))
        for i, v in enumerate(vals):
            if _parse_int64(v) is None:
                errors.append(_field_message(f"{values_path}[{i}]", go_quote(v),
                                             "for 'Gt', 'Lt' operators, the value must be an integer"))
        return errors
    if op not in _ALL_OPERATORS:
        supported = ", ".join(go_quote(o) for o in _ALL_OPERATORS)
        return [_field_message(_join_path(path, "operator"), go_quote(op),
                               f"supported values: {supported}", "Unsupported value")]
    return []


def new_requirement(key: str, operator: str, values: list[str] | None, path: str | None = None) -> Requirement:
    """Build and validate a requirement as ``labels.NewRequirement``; raise :class:`SelectorError`.

    ``values=None`` stands for a Go nil slice (how an empty ``matchExpressions[].values``
    arrives), which upstream prints differently from an empty one in messages.
    """
    errors: list[str] = []
    key_error = _label_key_error(key, _join_path(path, "key"))
    if key_error:
        errors.append(key_error)
    errors += _operator_errors(operator, values, path)
    values_path = _join_path(path, "values")
    for i, v in enumerate(values or []):
        problems = is_valid_label_value(v)
        if problems:
            errors.append(_field_message(f"{values_path}[{i}][{key}]", go_quote(v), "; ".join(problems)))
    if errors:
        raise SelectorError(_aggregate(errors))
    return Requirement(key, operator, tuple(values or ()))


def selector_from_set(labels: Mapping[str, str] | None) -> LabelSelector:
    """``labels.SelectorFromSet``: every pair must match exactly (no validation)."""
    return LabelSelector(_sorted_by_key(Requirement(k, EQUALS, (v,)) for k, v in (labels or {}).items()))


# ---------------------------------------------------------------------------
# Label selector lexer and parser (labels.Parse)

_ERROR, _EOS, _CLOSE, _COMMA, _NOT, _DOUBLE_EQ, _EQ, _GT, _ID, _IN, _LT, _NOT_EQ, _NOT_IN, _OPEN = range(14)
_STRING_TO_TOKEN = {
    ")": _CLOSE, ",": _COMMA, "!": _NOT, "==": _DOUBLE_EQ, "=": _EQ, ">": _GT, "in": _IN,
    "<": _LT, "!=": _NOT_EQ, "notin": _NOT_IN, "(": _OPEN,
}
_WHITESPACE = " \t\r\n"
_SPECIAL = "=!(),><"


def _lex(text: str) -> list[tuple[int, str]]:
    """All tokens of ``text`` up to and including end-of-string, as upstream's Lexer."""
    tokens: list[tuple[int, str]] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos] in _WHITESPACE:
            pos += 1
        # Go reads a 0 byte at the end; a literal NUL in the input ends the string too.
        if pos >= len(text) or text[pos] == "\0":
            tokens.append((_EOS, ""))
            return tokens
        if text[pos] in _SPECIAL:
            tok, lit, pos = _scan_special(text, pos)
        else:
            tok, lit, pos = _scan_identifier(text, pos)
        tokens.append((tok, lit))


def _scan_identifier(text: str, pos: int) -> tuple[int, str, int]:
    start = pos
    while pos < len(text) and text[pos] != "\0" and text[pos] not in _SPECIAL and text[pos] not in _WHITESPACE:
        pos += 1
    literal = text[start:pos]
    return _STRING_TO_TOKEN.get(literal, _ID), literal, pos


def _scan_special(text: str, pos: int) -> tuple[int, str, int]:
    """Longest run of symbols that is still a token (``!=`` over ``!``)."""
    buffer = ""
    best: tuple[int, str, int] | None = None
    while pos < len(text) and text[pos] in _SPECIAL:
        buffer += text[pos]
        pos += 1
        if buffer in _STRING_TO_TOKEN:
            best = (_STRING_TO_TOKEN[buffer], buffer, pos)
        elif best is not None:
            break
    if best is None:
        return _ERROR, f"error expected: keyword found '{buffer}'", pos
    return best


class _Parser:
    """Recursive-descent parser over the pre-scanned tokens, upstream's state machine."""

    def __init__(self, text: str) -> None:
        self.items = _lex(text)
        self.position = 0

    def _token(self, index: int, values_context: bool) -> tuple[int, str]:
        tok, lit = self.items[index]
        # Inside values, the keywords "in"/"notin" are ordinary identifiers.
        if values_context and tok in (_IN, _NOT_IN):
            tok = _ID
        return tok, lit

    def lookahead(self, values_context: bool = True) -> tuple[int, str]:
        return self._token(self.position, values_context)

    def consume(self, values_context: bool = True) -> tuple[int, str]:
        self.position += 1
        return self._token(self.position - 1, values_context)

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            tok, lit = self.lookahead()
            if tok == _EOS:
                return requirements
            if tok not in (_ID, _NOT):
                raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")
            try:
                requirements.append(self.parse_requirement())
            except SelectorError as err:
                raise SelectorError(f"unable to parse requirement: {err}") from None
            tok, lit = self.consume()
            if tok == _EOS:
                return requirements
            if tok != _COMMA:
                raise SelectorError(f"found '{lit}', expected: ',' or 'end of string'")
            next_tok, next_lit = self.lookahead()
            if next_tok not in (_ID, _NOT):
                raise SelectorError(f"found '{next_lit}', expected: identifier after ','")

    def parse_requirement(self) -> Requirement:
        key, operator = self.parse_key_and_infer_operator()
        if operator in (EXISTS, DOES_NOT_EXIST):
            return new_requirement(key, operator, [])
        operator = self.parse_operator()
        values = self.parse_values() if operator in (IN, NOT_IN) else self.parse_exact_value()
        return new_requirement(key, operator, sorted(values))

    def parse_key_and_infer_operator(self) -> tuple[str, str]:
        operator = ""
        tok, literal = self.consume()
        if tok == _NOT:
            operator = DOES_NOT_EXIST
            tok, literal = self.consume()
        if tok != _ID:
            raise SelectorError(f"found '{literal}', expected: identifier")
        key_error = _label_key_error(literal, "<nil>")
        if key_error:
            raise SelectorError(key_error)
        if self.lookahead()[0] in (_EOS, _COMMA) and operator != DOES_NOT_EXIST:
            operator = EXISTS
        return literal, operator

    def parse_operator(self) -> str:
        tok, lit = self.consume(values_context=False)
        operators = {_IN: IN, _EQ: EQUALS, _DOUBLE_EQ: DOUBLE_EQUALS, _GT: GREATER_THAN, _LT: LESS_THAN,
                     _NOT_IN: NOT_IN, _NOT_EQ: NOT_EQUALS}
        if tok not in operators:
            raise SelectorError(f"found '{lit}', expected: {', '.join(_BINARY_OPERATORS)}")
        return operators[tok]

    def parse_values(self) -> set[str]:
        tok, lit = self.consume()
        if tok != _OPEN:
            raise SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self.lookahead()
        if tok in (_ID, _COMMA):
            values = self.parse_identifiers_list()
            if self.consume()[0] != _CLOSE:
                raise SelectorError(f"found '{lit}', expected: ')'")
            return values
        if tok == _CLOSE:
            self.consume()
            return {""}
        raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")

    def parse_identifiers_list(self) -> set[str]:
        values: set[str] = set()
        while True:
            tok, lit = self.consume()
            if tok == _ID:
                values.add(lit)
                next_tok, next_lit = self.lookahead()
                if next_tok == _CLOSE:
                    return values
                if next_tok != _COMMA:
                    raise SelectorError(f"found '{next_lit}', expected: ',' or ')'")
            elif tok == _COMMA:
                if not values:
                    values.add("")  # "(," starts with an empty value
                next_tok, _ = self.lookahead()
                if next_tok == _CLOSE:
                    values.add("")  # ",)" ends with one
                    return values
                if next_tok == _COMMA:
                    self.consume()
                    values.add("")  # ",," holds one
            else:
                raise SelectorError(f"found '{lit}', expected: ',', or identifier")

    def parse_exact_value(self) -> set[str]:
        if self.lookahead()[0] in (_EOS, _COMMA):
            return {""}
        tok, lit = self.consume()
        if tok == _ID:
            return {lit}
        raise SelectorError(f"found '{lit}', expected: identifier")


def parse_label_selector(text: str) -> LabelSelector:
    """Parse a ``labelSelector`` query string; raise ApiError 400 as the apiserver does."""
    try:
        return LabelSelector(_sorted_by_key(_Parser(text).parse()))
    except SelectorError as err:
        raise bad_request(str(err)) from None


# ---------------------------------------------------------------------------
# metav1.LabelSelector objects

_EXPRESSION_OPERATORS = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}


def label_selector_from_object(sel: Mapping[str, Any] | None) -> LabelSelector:
    """``metav1.LabelSelectorAsSelector``: nil matches nothing, empty matches everything.

    Raises :class:`SelectorError` with upstream's message for an invalid selector.
    """
    if sel is None:
        return NOTHING
    match_labels = sel.get("matchLabels") or {}
    expressions = sel.get("matchExpressions") or []
    if not match_labels and not expressions:
        return EVERYTHING
    requirements = [new_requirement(k, EQUALS, [v]) for k, v in match_labels.items()]
    for expr in expressions:
        op_name = expr.get("operator", "")
        if op_name not in _EXPRESSION_OPERATORS:
            raise SelectorError(f"{go_quote(op_name)} is not a valid label selector operator")
        values = list(expr.get("values") or []) or None
        requirements.append(new_requirement(expr.get("key", ""), _EXPRESSION_OPERATORS[op_name], values))
    return LabelSelector(_sorted_by_key(requirements))


def selector_to_string(sel: Mapping[str, Any] | None) -> str:
    """``metav1.FormatLabelSelector``: the string form, ``<none>`` if empty, ``<error>`` if invalid.

    Scale ``status.selector`` uses ``str(label_selector_from_object(sel))`` instead, which
    is ``""`` for an empty selector.
    """
    try:
        text = str(label_selector_from_object(sel))
    except SelectorError:
        return "<error>"
    return text or "<none>"


# ---------------------------------------------------------------------------
# Field selectors (fields.ParseSelector)


@dataclass(frozen=True)
class FieldRequirement:
    """``field=value`` (``==`` is the same) or ``field!=value``; value already unescaped."""

    field: str
    operator: str
    value: str

    def matches(self, fields: Mapping[str, str]) -> bool:
        # A field the object does not expose reads as "" (fields.Set.Get).
        have = fields.get(self.field, "")
        return have != self.value if self.operator == NOT_EQUALS else have == self.value

    def __str__(self) -> str:
        symbol = "!=" if self.operator == NOT_EQUALS else "="
        return f"{self.field}{symbol}{escape_field_value(self.value)}"


@dataclass(frozen=True)
class FieldSelector:
    """A conjunction of field terms, in upstream's order (terms sorted as written)."""

    requirements: tuple[FieldRequirement, ...] = ()

    def matches(self, fields: Mapping[str, str]) -> bool:
        return all(r.matches(fields) for r in self.requirements)

    def fields(self) -> list[str]:
        """Field names used, first-use order, each once: what the REST layer must check."""
        return list(dict.fromkeys(r.field for r in self.requirements))

    def empty(self) -> bool:
        return not self.requirements

    def requires_exact_match(self, field: str) -> str | None:
        for r in self.requirements:
            if r.field == field and r.operator == EQUALS:
                return r.value
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


def escape_field_value(value: str) -> str:
    """``fields.EscapeValue``: backslash-escape ``\\``, ``,`` and ``=``."""
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def unescape_field_value(value: str) -> str:
    """``fields.UnescapeValue``; raises :class:`SelectorError` with upstream's messages."""
    if not any(c in value for c in "\\,="):
        return value
    out: list[str] = []
    in_slash = False
    for c in value:
        if in_slash:
            if c not in "\\,=":
                raise SelectorError(f"invalid field selector: invalid escape sequence: \\{c}")
            out.append(c)
            in_slash = False
        elif c == "\\":
            in_slash = True
        elif c in ",=":
            # Go prints the rune with %v, i.e. as its code point number.
            raise SelectorError(f"invalid field selector: unescaped character in value: {ord(c)}")
        else:
            out.append(c)
    if in_slash:
        raise SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _split_terms(text: str) -> list[str]:
    """Split on commas not escaped by a backslash."""
    if not text:
        return []
    terms: list[str] = []
    start = 0
    in_slash = False
    for i, c in enumerate(text):
        if in_slash:
            in_slash = False
        elif c == "\\":
            in_slash = True
        elif c == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    """The first operator occurrence wins; ``!=`` and ``==`` before ``=`` at the same spot."""
    for i in range(len(term)):
        for op in ("!=", "==", "="):
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op):]
    return None


def _parse_field_terms(text: str) -> list[FieldRequirement]:
    requirements = []
    for part in sorted(_split_terms(text)):
        if not part:
            continue
        split = _split_term(part)
        if split is None:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{part}'")
        lhs, op, rhs = split
        requirements.append(FieldRequirement(lhs, NOT_EQUALS if op == "!=" else EQUALS, unescape_field_value(rhs)))
    return requirements


def parse_field_selector(text: str) -> FieldSelector:
    """Parse a ``fieldSelector`` query string; raise ApiError 400 as the apiserver does."""
    try:
        return FieldSelector(tuple(_parse_field_terms(text)))
    except SelectorError as err:
        raise bad_request(str(err)) from None


# ---------------------------------------------------------------------------
# Selectable fields per type

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


@dataclass(frozen=True)
class FieldSet:
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

#: Per-type selectable fields, keyed by (group, plural), as upstream 1.33 registers them
#: (pkg/apis/*/v*/conversion.go). Types absent here take apimachinery's default:
#: metadata.name and metadata.namespace only.
FIELD_SETS: dict[tuple[str, str], FieldSet] = {
    ("", "pods"): FieldSet(_POD_FIELDS, _not_supported, ("status.podIPs",), {"spec.host": "spec.nodeName"}),
    ("", "nodes"): FieldSet({"spec.unschedulable": _go_bool("spec", "unschedulable")}, _not_supported,
                            namespace_selectable=False),
    ("", "namespaces"): FieldSet({"status.phase": _text("status", "phase")}, _not_supported,
                                 namespace_selectable=False),
    ("", "replicationcontrollers"): FieldSet({"status.replicas": _go_int("status", "replicas")}, _not_supported),
    ("", "events"): FieldSet(_CORE_EVENT_FIELDS, _not_supported),
    ("", "secrets"): FieldSet({"type": _text("type")}, _not_supported),
    ("", "services"): FieldSet({"spec.clusterIP": _text("spec", "clusterIP"), "spec.type": _text("spec", "type")},
                               _not_supported),
    ("events.k8s.io", "events"): FieldSet(_EVENTS_V1_FIELDS, _not_supported),
    ("batch", "jobs"): FieldSet({"status.successful": _go_int("status", "succeeded")}, _job_not_supported),
}

_DEFAULT_FIELD_SET = FieldSet({}, _not_known)


def _field_set(resource: ResourceType) -> FieldSet:
    return FIELD_SETS.get(resource.key, _DEFAULT_FIELD_SET)


def _getters(resource: ResourceType) -> dict[str, FieldGetter]:
    """The table's getters, plus any a strategy declares (``Strategy.field_selectors``)."""
    getters = dict(_field_set(resource).getters)
    for name, getter in resource.strategy.field_selectors().items():
        getters.setdefault(name, getter)
    return getters


def supported_fields(resource: ResourceType) -> list[str]:
    """Every field label the type accepts in a fieldSelector, in a stable order."""
    fs = _field_set(resource)
    meta = ["metadata.name"]
    if fs.namespace_selectable:
        meta.append("metadata.namespace")
    return meta + list(_getters(resource)) + list(fs.accepted_only) + list(fs.aliases or {})


def object_fields(resource: ResourceType, obj: Obj) -> dict[str, str]:
    """The field set a fieldSelector is matched against (upstream's ``GetAttrs``)."""
    meta = obj.get("metadata") or {}
    fields = {"metadata.name": str(meta.get("name") or "")}
    if resource.namespaced:
        fields["metadata.namespace"] = str(meta.get("namespace") or "")
    for name, getter in _getters(resource).items():
        fields[name] = getter(obj)
    return fields


def unsupported_field_error(resource: ResourceType, field: str) -> ApiError:
    """400 BadRequest for a field label the type does not support, worded per type."""
    return bad_request(_field_set(resource).unsupported(field))


def convert_field_selector(resource: ResourceType, selector: FieldSelector) -> FieldSelector:
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
