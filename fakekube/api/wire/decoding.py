"""Request bodies decoded the way upstream's serializer decodes them, with its error texts.

The apiserver parses a body with Go's ``encoding/json`` (via ``sigs.k8s.io/json``) into
the resource's typed Go struct. Three things can fail, and clients see each with its
own wording, so we reproduce them:

- a syntax error, or a body that is not an object: 400 ``the object provided is
  unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error:
  unexpected end of JSON input (<first 30 bytes>)``;
- a value of the wrong JSON type for its field: 400 ``Deployment in version "v1" cannot
  be handled as a Deployment: json: cannot unmarshal string into Go struct field
  DeploymentSpec.spec.replicas of type int32`` (for a patch, a 422 on ``patch``);
- a value a custom decoder refuses (a quantity, an int-or-string, base64 bytes).

Limits, stated plainly: Go type names come from the OpenAPI schema, so a named string
type (``v1.RestartPolicy``) prints as ``string``; timestamps and durations are checked
for their JSON type only; YAML errors carry PyYAML's wording after go-yaml's
``yaml: line N:`` prefix.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any

from fakekube.api.machinery import errors, jsonutil
from fakekube.api.machinery.jsonutil import MAX_NESTING_DEPTH
from fakekube.api.machinery.validation import go_quote
from fakekube.api.wire.schema import SchemaSet
from fakekube.api.wire.typed_schema import (ARRAY, BOOLEAN, BYTES, EMPTY_STRUCT, INT_OR_STRING, INT_RANGES, INTEGER, MAP,
                                       NO_ZERO, NUMBER, QUANTITY, STRING, STRUCT, TIME, TypedNode, root_for)

#: The most JSON a YAML body's aliases may expand to: the request body limit (the
#: apiserver's default ``MaxRequestBodyBytes``, 3 MiB); past it, 413.
MAX_EXPANDED_BYTES = 3 * 1024 * 1024

#: How much of a body ``transformDecodeError`` quotes back (``summarizeData(body, 30)``).
SUMMARY_BYTES = 30

_INTERPRET_STRUCT = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }'
_QUANTITY_RE = re.compile(r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$")
_QUANTITY_SUFFIX_RE = re.compile(r"^(|[numkMGTPE]|[KMGTPE]i|[eE][-+]?[0-9]+)$")
ERR_QUANTITY_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
ERR_QUANTITY_SUFFIX = "unable to parse quantity's suffix"
_BASE64_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


class SyntaxFailure(ValueError):
    """A body that is not valid JSON or YAML; the text is Go's (or go-yaml's) message."""


# --- parsing -----------------------------------------------------------------------------

def parse_json(raw: bytes) -> Any:
    """``json.Unmarshal`` into ``interface{}``: SyntaxFailure with Go's wording on bad input.

    Nesting past :data:`MAX_NESTING_DEPTH` is Go's ``exceeded max depth`` syntax error
    (checked only when the body has that many brackets at all: one C-speed count); an
    unpaired UTF-16 surrogate escape decodes to U+FFFD, as in Go.
    """
    text = raw.decode("utf-8", errors="replace")  # Go keeps going on invalid UTF-8
    try:
        value = _DECODER.decode(text)
    except _ConstantFailure as exc:
        raise SyntaxFailure(str(exc)) from None
    except json.JSONDecodeError as exc:
        raise SyntaxFailure(go_syntax_error(text, exc)) from None
    except RecursionError:  # nested far past the limit: the C scanner ran out of stack
        raise SyntaxFailure(too_deep_error(text)) from None
    if raw.count(b"[") + raw.count(b"{") > MAX_NESTING_DEPTH and jsonutil.nests_deeper_than(value):
        raise SyntaxFailure(too_deep_error(text))
    if "\\u" in text and _SURROGATE_ESCAPE.search(text):
        value = jsonutil.replace_lone_surrogates(value)
    return value


def too_deep_error(text: str) -> str:
    """Go's scanner error for the first ``{`` or ``[`` that nests past the limit."""
    depth = 0
    for token in _BRACKETS_OUTSIDE_STRINGS.finditer(text):
        char = token.group()
        if char in "[{":
            depth += 1
            if depth > MAX_NESTING_DEPTH:
                return f"invalid character {_quote_char(char)} exceeded max depth"
        elif char in "]}":
            depth -= 1
    return "invalid character '[' exceeded max depth"


def too_deep_value_error(value: Any) -> str:
    """:func:`too_deep_error` for a parsed value, walked without recursion (any depth): Go's
    scanner error for the first object or array, in document order, past the limit."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        if depth > MAX_NESTING_DEPTH:
            return f"invalid character {_quote_char('[' if isinstance(current, list) else '{')} exceeded max depth"
        children = current.values() if isinstance(current, dict) else current
        stack.extend((child, depth + 1) for child in reversed(list(children)) if isinstance(child, (dict, list)))
    return "invalid character '[' exceeded max depth"


_BRACKETS_OUTSIDE_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class _ConstantFailure(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    """Python accepts NaN and Infinity; Go's scanner does not."""
    if name.startswith("-"):
        raise _ConstantFailure(f"invalid character {_quote_char(name[1])} in numeric literal")
    raise _ConstantFailure(f"invalid character {_quote_char(name[0])} looking for beginning of value")


#: One decoder for every body (``json.loads`` with options builds one per call); threads share it.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def parse_untyped(raw: bytes, body_format: str) -> Any:
    """A body whose kind the route does not fix (a subresource's, DeleteOptions) in any of
    the three formats; malformed input is a SyntaxFailure. A protobuf body names its own
    kind in its typeMeta."""
    if body_format != "protobuf":
        return parse_yaml(raw) if body_format == "yaml" else parse_json(raw)
    from fakekube.api.wire import protobuf

    try:
        return protobuf.decode_body(raw)
    except protobuf.ProtobufError as exc:
        raise SyntaxFailure(str(exc)) from None


def parse_yaml(raw: bytes, max_expanded_bytes: int = MAX_EXPANDED_BYTES) -> Any:
    """``yaml.YAMLToJSON`` then JSON (:func:`fakekube.api.wire.yamlbody.parse_yaml`)."""
    from fakekube.api.wire import yamlbody  # PyYAML loads with the first YAML body, not with the package (cold start)
    return yamlbody.parse_yaml(raw, max_expanded_bytes)


def summarize(raw: bytes) -> str:
    """``summarizeData``: the first bytes of a body, as text if it starts with ``{``, else hex."""
    if not raw:
        return "<empty>"
    cut = raw[:SUMMARY_BYTES]
    more = " ..." if len(raw) > SUMMARY_BYTES else ""
    if raw[:1] == b"{":
        return cut.decode("utf-8", errors="replace") + more
    return cut.hex() + more


def decode_body(raw: bytes, body_format: str, kind: str, api_version: str = "") -> dict[str, Any]:
    """A create/update body as a JSON object, or 400 worded as upstream's decoder.

    ``kind`` is the resource's kind (``must be of type ConfigMap``). A ``null`` body
    decodes to an empty object, as Go's decoder leaves the struct untouched. A protobuf
    body becomes the dict its JSON form would be; ``api_version`` fills a missing
    typeMeta version as upstream's defaulting does.
    """
    unrecognized = f"the object provided is unrecognized (must be of type {kind})"
    if body_format == "protobuf":
        return _decode_protobuf(raw, kind, api_version, unrecognized)
    try:
        value = parse_yaml(raw) if body_format == "yaml" else parse_json(raw)
    except SyntaxFailure as exc:
        prefix = "" if body_format == "yaml" else "couldn't get version/kind; json parse error: "
        raise errors.bad_request(f"{unrecognized}: {prefix}{exc} ({summarize(raw)})") from None
    if value is None:
        return {}
    why = interpret_problem(value)
    if why is not None:
        raise errors.bad_request(f"{unrecognized}: couldn't get version/kind; json parse error: {why} ({summarize(raw)})")
    return value


def interpret_problem(value: Any) -> str | None:
    """Why the serializer's first step — reading a document's apiVersion and kind into a
    small struct (``SimpleMetaFactory.Interpret``) — refuses a parsed JSON value, in Go's
    words; None for an object whose apiVersion and kind, where present, are strings."""
    if not isinstance(value, dict):
        return f"json: cannot unmarshal {json_kind(value)} into Go value of type {_INTERPRET_STRUCT}"
    for field_name in ("apiVersion", "kind"):
        field_value = value.get(field_name)
        if field_value is not None and not isinstance(field_value, str):
            return f"json: cannot unmarshal {json_kind(field_value)} into Go struct field .{field_name} of type string"
    return None


def _decode_protobuf(raw: bytes, kind: str, api_version: str, unrecognized: str) -> dict[str, Any]:
    """``transformDecodeError`` wording: with a decoded kind, ``X in version "v" cannot be
    handled as a Kind``; without one, "unrecognized" plus the body's first bytes.
    Imported here: only kubectl >= 1.32 sends protobuf, and the decoder costs 10 ms to import."""
    from fakekube.api.wire import protobuf

    try:
        return protobuf.decode_body(raw, api_version, kind)
    except protobuf.ProtobufError as exc:
        if exc.kind:
            version = exc.api_version.rpartition("/")[2]
            raise errors.bad_request(f'{exc.kind} in version "{version}" cannot be handled as a {kind}: {exc}') from None
        raise errors.bad_request(f"{unrecognized}: {exc} ({summarize(raw)})") from None


def json_kind(value: Any) -> str:
    """The JSON kind Go names in ``cannot unmarshal X``."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


# --- Go's syntax error texts ---------------------------------------------------------------

def go_syntax_error(doc: str, exc: json.JSONDecodeError) -> str:
    """Go's ``encoding/json`` message for the error Python found at ``exc.pos``."""
    pos, msg = exc.pos, exc.msg
    if pos >= len(doc) or not doc[pos:].strip() or msg.startswith("Unterminated string"):
        return "unexpected end of JSON input"
    char = doc[pos]
    if msg == "Expecting value":
        return _bad_value_start(doc, pos)
    if msg.startswith("Expecting property name"):
        return f"invalid character {_quote_char(char)} looking for beginning of object key string"
    if msg == "Expecting ':' delimiter":
        return f"invalid character {_quote_char(char)} after object key"
    if msg == "Expecting ',' delimiter":
        where = "object key:value pair" if _container_at(doc, pos) == "{" else "array element"
        return f"invalid character {_quote_char(char)} after {where}"
    if msg == "Extra data":
        return f"invalid character {_quote_char(char)} after top-level value"
    if msg.startswith("Invalid control character"):
        return f"invalid character {_quote_char(char)} in string literal"
    if msg.startswith("Invalid \\u"):
        return f"invalid character {_quote_char(_first_bad_hex(doc, pos))} in \\u hexadecimal character escape"
    if msg.startswith("Invalid \\escape"):
        following = doc[pos + 1] if pos + 1 < len(doc) else ""
        if not following:
            return "unexpected end of JSON input"
        return f"invalid character {_quote_char(following)} in string escape code"
    return f"invalid character {_quote_char(char)} looking for beginning of value"


def _bad_value_start(doc: str, pos: int) -> str:
    """A value that does not start right, or a literal (true/false/null) that breaks off."""
    char = doc[pos]
    for literal in ("true", "false", "null"):
        if char == literal[0]:
            for i, expected in enumerate(literal):
                if pos + i >= len(doc):
                    return "unexpected end of JSON input"
                if doc[pos + i] != expected:
                    return (f"invalid character {_quote_char(doc[pos + i])} in literal {literal} "
                            f"(expecting {_quote_char(expected)})")
    if char == "-":
        following = doc[pos + 1] if pos + 1 < len(doc) else ""
        if not following:
            return "unexpected end of JSON input"
        return f"invalid character {_quote_char(following)} in numeric literal"
    return f"invalid character {_quote_char(char)} looking for beginning of value"


def _first_bad_hex(doc: str, pos: int) -> str:
    for ch in doc[pos + 2:pos + 6]:
        if ch not in "0123456789abcdefABCDEF":
            return ch
    return doc[pos + 2:pos + 3] or " "


def _container_at(doc: str, pos: int) -> str:
    """``{`` or ``[``: the innermost container open at ``pos``."""
    stack: list[str] = []
    i, in_string = 0, False
    while i < pos:
        ch = doc[i]
        if in_string:
            if ch == "\\":
                i += 1
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append(ch)
        elif ch in "}]" and stack:
            stack.pop()
        i += 1
    return stack[-1] if stack else ""


def _quote_char(char: str) -> str:
    """Go's ``quoteChar`` of the offending byte (the first UTF-8 byte of ``char``)."""
    byte = char.encode("utf-8")[0] if char else 0
    if byte == ord("'"):
        return "'\\''"
    if byte == ord('"'):
        return "'\"'"
    return "'" + go_quote(chr(byte))[1:-1] + "'"


# --- typed decoding ---------------------------------------------------------------------------

class _Fatal(Exception):
    """An error a custom UnmarshalJSON returned: it ends decoding and wins over saved ones."""


class _Walk:
    """Walks a JSON value alongside its compiled schema the way Go decodes it into a struct.

    Go saves the first type mismatch and keeps going (so the first one in document order
    is reported); errors from custom decoders (Quantity, IntOrString) end decoding at once.
    With ``found`` a list, it also collects fieldvalidation's unknown-field paths and
    removes those fields, as decoding into the typed struct loses them (whatever
    fieldValidation says: Ignore drops them silently, Warn with a warning).

    ``trail`` holds the keys and indexes from the root down to the container being
    walked; paths and Go's error context are rebuilt from it only when needed, since
    nearly every write has neither a type error nor an unknown field.
    """

    __slots__ = ("root", "zero_nulls", "found", "saved", "trail")

    def __init__(self, root: TypedNode, zero_nulls: bool, found: list[str] | None) -> None:
        self.root = root
        self.zero_nulls = zero_nulls
        self.found = found
        self.saved: str | None = None
        self.trail: list[Any] = []

    def struct(self, value: Any, node: TypedNode) -> None:
        if not isinstance(value, dict):
            self._save(value, node.go_type)
            return
        props, trail, gone = node.props, self.trail, None
        for key, sub in value.items():
            child = props.get(key)
            if child is None:
                if self.found is not None:  # typed decoding has no field for it: it goes
                    self._unknown(key)
                    gone = [key] if gone is None else gone + [key]
            elif sub is None:
                if self.zero_nulls:  # a null field keeps its zero value, which encodes as absent
                    gone = [key] if gone is None else gone + [key]
            elif child.action == STRING:  # the commonest field, checked without a call
                if not isinstance(sub, str):
                    self._save(sub, "string", key)
            elif child.action <= MAP:
                trail.append(key)
                _CONTAINER_WALKS[child.action](self, sub, child)
                trail.pop()
            else:
                self.leaf(sub, child, key)
        for key in gone or ():
            del value[key]

    def array(self, value: Any, node: TypedNode) -> None:
        if not isinstance(value, list):
            self._save(value, node.go_type)
            return
        item, trail = node.item, self.trail
        assert item is not None
        for index, element in enumerate(value):
            if element is None:
                if self.zero_nulls and item.zero is not NO_ZERO:
                    value[index] = _zero(item)  # a zero value decodes without complaint
            elif item.action <= MAP:
                trail.append(index)
                _CONTAINER_WALKS[item.action](self, element, item)
                trail.pop()
            else:
                self.leaf(element, item, None)

    def map(self, value: Any, node: TypedNode) -> None:
        if not isinstance(value, dict):
            self._save(value, node.go_type)
            return
        item, trail, doomed = node.item, self.trail, None
        assert item is not None
        for key, sub in value.items():
            if sub is None:
                if not self.zero_nulls:
                    continue
                if item.zero is NO_ZERO:
                    doomed = [key] if doomed is None else doomed + [key]
                else:
                    value[key] = _zero(item)
            elif item.action <= MAP:
                trail.append(key)
                _CONTAINER_WALKS[item.action](self, sub, item)
                trail.pop()
            else:
                self.leaf(sub, item, None)
        for key in doomed or ():
            del value[key]

    def leaf(self, value: Any, node: TypedNode, key: str | None) -> None:
        """Check a scalar; ``key`` is its struct field name, None for a list or map element."""
        action = node.action
        if action == STRING:
            if not isinstance(value, str):
                self._save(value, "string", key)
        elif action == INTEGER:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                self._save(value, node.go_type, key)
            elif isinstance(value, float) or not node.low <= value <= node.high:
                self._save(value, node.go_type, key, literal=f"number {value!r}")
        elif action == QUANTITY:
            _check_quantity(value)
        elif action == INT_OR_STRING:
            _check_int_or_string(value)
        elif action == BOOLEAN:
            if not isinstance(value, bool):
                self._save(value, "bool", key)
        elif action == NUMBER:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                self._save(value, "float64", key)
        elif action == BYTES:
            self._bytes(value, key)
        elif action == TIME:
            if not isinstance(value, str):
                raise _Fatal(f"json: cannot unmarshal {json_kind(value)} into Go value of type string")
        # NOTHING: RawExtension, FieldsV1, JSON, ... decode any value.

    def _bytes(self, value: Any, key: str | None) -> None:
        if isinstance(value, str):
            problem = base64_problem(value)
            if problem and self.saved is None:
                self.saved = problem
        elif not isinstance(value, list):
            self._save(value, "[]uint8", key)

    def _save(self, value: Any, go_type: str, key: str | None = None, literal: str = "") -> None:
        if self.saved is not None:
            return
        shown = literal or json_kind(value)
        struct, fields = self._go_context(key)
        if fields:
            self.saved = (f"json: cannot unmarshal {shown} into Go struct field "
                          f"{struct}.{'.'.join(fields)} of type {go_type}")
        else:
            self.saved = f"json: cannot unmarshal {shown} into Go value of type {go_type}"

    def _go_context(self, key: str | None) -> tuple[str, list[str]]:
        """Go's error context here: the innermost struct and the struct field names to here
        (list indexes and map keys are not fields)."""
        node, struct, fields = self.root, "", []
        for segment in self._segments(key):
            if node.action == STRUCT:
                struct = node.struct_name
                fields.append(segment)
                node = node.props[segment]
            else:
                node = node.item  # type: ignore[assignment]
        return struct, fields

    def _unknown(self, key: str) -> None:
        found = self.found
        assert found is not None
        if len(found) >= MAX_UNKNOWN:
            return
        path, node = "", self.root
        for segment in self._segments(key):
            if node.action == ARRAY:
                path = f"{path}[{segment}]"
            else:
                path = f"{path}.{segment}" if path else segment
            node = node.props.get(segment) if node.action == STRUCT else node.item  # type: ignore[assignment]
        if path not in found:
            found.append(path)

    def _segments(self, key: str | None) -> list[Any]:
        return self.trail if key is None else self.trail + [key]


#: The walk for each container action (STRUCT, ARRAY, MAP), indexed by it.
_CONTAINER_WALKS = (_Walk.struct, _Walk.array, _Walk.map)

#: fieldvalidation reports at most this many unknown fields (upstream's strict decoder).
MAX_UNKNOWN = 100


def _zero(node: TypedNode) -> Any:
    return {} if node.zero is EMPTY_STRUCT else node.zero


def type_error(obj: dict[str, Any], schemas: SchemaSet, group: str, version: str, kind: str) -> str | None:
    """The error Go reports decoding ``obj`` into the kind's struct, or None if it decodes.

    A kind the schema set does not know (a custom resource) decodes anything.
    """
    return _decode(obj, schemas, group, version, kind, zero_nulls=False, collect=False)[0]


def decode_into(obj: dict[str, Any], schemas: SchemaSet, group: str, version: str, kind: str) -> str | None:
    """:func:`type_error`, giving ``obj``'s nulls Go's zero values in place as it goes.

    A null struct field is left unset, and a null list element or map value becomes its
    type's zero (``{}``, ``""``, ``0``, ``false``) — what the typed object upstream
    stores would hold, and what later validation then reports on. When it returns an
    error, ``obj`` is half-normalized: callers discard it.
    """
    return _decode(obj, schemas, group, version, kind, zero_nulls=True, collect=False)[0]


def decode_and_find_unknown(obj: dict[str, Any], schemas: SchemaSet, group: str, version: str,
                            kind: str) -> tuple[str | None, list[str] | None]:
    """:func:`decode_into`, also giving what ``fieldvalidation.unknown_fields`` would find
    (on ``obj`` with any apiVersion/kind), from the same walk, and dropping those fields
    from ``obj`` as upstream's typed decoding does.

    The unknown paths are None when this kind's schema cannot share the walk (decoding
    and field validation would step into different fields somewhere): call
    ``unknown_fields`` then. One walk instead of two is most of the per-write schema cost.
    """
    return _decode(obj, schemas, group, version, kind, zero_nulls=True, collect=True)


def _decode(obj: dict[str, Any], schemas: SchemaSet, group: str, version: str, kind: str,
            zero_nulls: bool, collect: bool) -> tuple[str | None, list[str] | None]:
    root = root_for(schemas, group, version, kind)
    if root is None:
        return None, [] if collect else None
    found: list[str] | None = [] if collect and root.collects_unknown else None
    walk = _Walk(root.node, zero_nulls, found)
    try:
        if obj is not None:
            walk.struct(obj, root.node)
    except _Fatal as exc:
        return str(exc), found
    return walk.saved, found


def converter_error(obj: dict[str, Any], schemas: SchemaSet, group: str, version: str, kind: str) -> str | None:
    """The error ``DefaultUnstructuredConverter.FromUnstructured`` gives for ``obj``, or None.

    Upstream turns a strategic merge patch's result into the typed object with the
    unstructured converter, not with ``encoding/json``, so a mistyped value is worded its
    way: ``cannot restore map from string``, ``cannot restore slice from map``, ``cannot
    restore struct from: string``, ``cannot convert int64 to string``, ``unrecognized type:
    int32`` (a whole float is a fine integer there). Types with their own JSON form
    (Quantity, IntOrString, Time) fail as their decoders do. The first error ends it.
    """
    root = root_for(schemas, group, version, kind)
    if root is None:
        return None
    try:
        _convert(obj, root.node)
    except _Fatal as exc:
        return str(exc)
    return None


def _convert(value: Any, node: TypedNode) -> None:
    if value is None:
        return
    action = node.action
    if action == STRUCT:
        if not isinstance(value, dict):
            raise _Fatal(f"cannot restore struct from: {_go_kind(value)}")
        for key, sub in value.items():
            child = node.props.get(key)
            if child is not None:
                _convert(sub, child)
    elif action == ARRAY or action == MAP:
        items: Any = value if action == ARRAY and isinstance(value, list) else \
            value.values() if action == MAP and isinstance(value, dict) else None
        if items is None:
            raise _Fatal(f"cannot restore {'slice' if action == ARRAY else 'map'} from {_go_kind(value)}")
        assert node.item is not None
        for item in items:
            _convert(item, node.item)
    elif action == BYTES:
        if isinstance(value, str):
            problem = base64_problem(value)
            if problem:
                raise _Fatal(f"error decoding from json: {problem}")
        elif not isinstance(value, list):
            raise _Fatal(f"cannot restore slice from {_go_kind(value)}")
    elif action in (STRING, INTEGER, NUMBER, BOOLEAN):
        _convert_scalar(value, node)
    elif action == QUANTITY:
        _check_quantity(value)
    elif action == INT_OR_STRING:
        _check_int_or_string(value)
    elif action == TIME and not isinstance(value, str):
        raise _Fatal(f"json: cannot unmarshal {json_kind(value)} into Go value of type string")


def _convert_scalar(value: Any, node: TypedNode) -> None:
    """``fromUnstructured`` into a string, integer, float or bool (Go's conversion rules:
    an integer converts to a string type but the converter refuses it by name)."""
    kind = _go_kind(value)
    action = node.action
    if action == STRING:
        if kind == "string":
            return
        if kind == "int64":
            raise _Fatal(f"cannot convert int64 to {node.go_type}")
        raise _Fatal("unrecognized type: string")
    if action == BOOLEAN:
        if kind != "bool":
            raise _Fatal("unrecognized type: bool")
        return
    if kind == "int64" or (kind == "float64" and action == NUMBER):
        return
    if kind == "float64":
        if value != int(value):
            raise _Fatal(f"cannot convert float64 to {node.go_type}")
        return
    raise _Fatal(f"unrecognized type: {node.go_type}")


def _go_kind(value: Any) -> str:
    """The ``reflect.Kind`` of an unstructured value (JSON numbers are int64 when whole)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    return "slice" if isinstance(value, list) else "map"


def _check_quantity(value: Any) -> None:
    """``Quantity.UnmarshalJSON``: a string or number that parses as a quantity."""
    if isinstance(value, (bool, dict, list)):
        raise _Fatal(ERR_QUANTITY_FORMAT)
    text = value.strip() if isinstance(value, str) else json.dumps(value)
    match = _QUANTITY_RE.match(text)
    if not match:
        raise _Fatal(ERR_QUANTITY_FORMAT)
    if not _QUANTITY_SUFFIX_RE.match(match.group(2)):
        raise _Fatal(ERR_QUANTITY_SUFFIX)


def _check_int_or_string(value: Any) -> None:
    """``IntOrString.UnmarshalJSON``: a string, or else whatever decodes as an int32."""
    if isinstance(value, str):
        return
    low, high = INT_RANGES["int32"]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Fatal(f"json: cannot unmarshal {json_kind(value)} into Go value of type int32")
    if isinstance(value, float) or not low <= value <= high:
        raise _Fatal(f"json: cannot unmarshal number {value!r} into Go value of type int32")


def base64_problem(text: str) -> str | None:
    """``base64.StdEncoding.Decode``'s CorruptInputError text, or None if ``text`` decodes."""
    cleaned = text.replace("\r", "").replace("\n", "")
    try:
        base64.b64decode(cleaned, validate=True)
        return None
    except (binascii.Error, ValueError):
        pass
    for offset, ch in enumerate(cleaned):
        if ch not in _BASE64_ALPHABET and ch != "=":
            return f"illegal base64 data at input byte {offset}"
    padding = cleaned.find("=")
    offset = padding if padding >= 0 and len(cleaned) % 4 == 0 else len(cleaned) - len(cleaned) % 4
    return f"illegal base64 data at input byte {max(offset, 0)}"
