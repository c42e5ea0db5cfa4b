"""An OpenAPI v2 (Swagger 2.0) document in gnostic's protobuf encoding: the
``openapi.v2.Document`` message of google/gnostic-models' ``OpenAPIv2.proto``, which
``/openapi/v2`` serves as ``application/com.github.proto-openapi.spec.v2@v1.0+protobuf``.

kubectl 1.27 and 1.28 read OpenAPI v2 only in this form (``apply`` validation, ``explain``).
Only the parts of the message schema a Kubernetes document uses are written: info,
paths with their operations, inline parameters (query, path, header and body), responses,
definitions (schemas with refs, types, properties, items, additionalProperties, allOf,
enum, required and ``x-*`` extensions), security definitions and requirements.
``Any`` values (extensions, enums, defaults) carry their YAML text, as gnostic's compiler
stores them. proto3 rules: empty strings, false and zero are not written.

Why hand-written: a few dozen field numbers, and no protobuf runtime or generated code to
depend on (the decoder in this package is hand-written for the same reason).
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Iterable, Mapping
from typing import Any, Callable


Doc = dict[str, Any]

_VARINT, _FIXED64, _BYTES = 0, 1, 2


# ------------------------------------------------------------------------ wire primitives

#: The one-byte varints (0 to 127): most keys and lengths.
_ONE_BYTE = tuple(bytes((i,)) for i in range(0x80))


def _varint(value: int) -> bytes:
    if 0 <= value < 0x80:
        return _ONE_BYTE[value]
    value &= 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


@functools.lru_cache(maxsize=256)  # the message schema has a few dozen (number, type) pairs
def _key(number: int, wire_type: int) -> bytes:
    return _varint((number << 3) | wire_type)


class _Message:
    """The fields of one message, appended in field order as the Go marshaller writes them."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def string(self, number: int, value: Any) -> None:
        if value:
            data = str(value).encode()
            self._parts += [_key(number, _BYTES), _varint(len(data)), data]

    def strings(self, number: int, values: Iterable[Any]) -> None:
        for value in values or ():
            data = str(value).encode()
            self._parts += [_key(number, _BYTES), _varint(len(data)), data]

    def boolean(self, number: int, value: Any) -> None:
        if value:
            self._parts += [_key(number, _VARINT), b"\x01"]

    def int64(self, number: int, value: Any) -> None:
        if isinstance(value, (int, float)) and not isinstance(value, bool) and int(value):
            self._parts += [_key(number, _VARINT), _varint(int(value))]

    def double(self, number: int, value: Any) -> None:
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value:
            self._parts += [_key(number, _FIXED64), struct.pack("<d", float(value))]

    def message(self, number: int, data: bytes | None) -> None:
        """An embedded message; None leaves it unset (an empty one is still written)."""
        if data is not None:
            self._parts += [_key(number, _BYTES), _varint(len(data)), data]

    def messages(self, number: int, items: Iterable[bytes]) -> None:
        for data in items:
            self.message(number, data)

    def bytes(self) -> bytes:
        return b"".join(self._parts)


# ------------------------------------------------------------------------------ values

def _yaml_text(value: Any) -> str:
    """A value as gnostic keeps it in an ``Any``: its YAML text, as go-yaml writes it (an
    empty string is ``""``, where PyYAML would write ``''``)."""
    import yaml  # PyYAML loads on first use, not with the package (cold start)
    text = yaml.dump(value, Dumper=_go_yaml_dumper(), default_flow_style=False, sort_keys=False, allow_unicode=True)
    return text[:-4] if text.endswith("\n...\n") else text


_DUMPER: list[Any] = []


def _go_yaml_dumper() -> Any:
    """PyYAML's safe dumper writing the empty string double-quoted, as go-yaml does (the
    group ``""`` of every core x-kubernetes-group-version-kind); made once, on first use."""
    if not _DUMPER:
        import yaml

        class GoYamlDumper(yaml.SafeDumper):
            pass

        def represent_str(dumper: yaml.SafeDumper, data: str) -> Any:
            if data == "":
                return dumper.represent_scalar("tag:yaml.org,2002:str", "", style='"')
            return dumper.represent_str(data)

        GoYamlDumper.add_representer(str, represent_str)
        _DUMPER.append(GoYamlDumper)
    return _DUMPER[0]


#: Encodings already made, by the ``repr`` of what they encode (which tells apart every
#: JSON value, key order included): the same values (an operation's x-kubernetes-action,
#: a kind's group-version-kind, the list parameters) recur across thousands of operations,
#: and PyYAML takes a millisecond a value. Values whose repr is longer than
#: _MEMO_MAX_KEY are not kept; a table reaching _MEMO_MAX_ENTRIES is emptied.
_ANY_MEMO: dict[str, bytes] = {}
_PARAMETER_MEMO: dict[str, bytes] = {}
_MEMO_MAX_ENTRIES = 4096
_MEMO_MAX_KEY = 2048


def _memoized(table: dict[str, bytes], value: Any, encode: Callable[[Any], bytes]) -> bytes:
    key = repr(value)
    found = table.get(key)
    if found is None:
        found = encode(value)
        if len(key) <= _MEMO_MAX_KEY:
            if len(table) >= _MEMO_MAX_ENTRIES:
                table.clear()
            table[key] = found
    return found


def _any(value: Any) -> bytes:
    return _memoized(_ANY_MEMO, value, _encode_any)


def _encode_any(value: Any) -> bytes:
    message = _Message()
    message.string(2, _yaml_text(value))
    return message.bytes()


def _named(name: str, value: bytes) -> bytes:
    message = _Message()
    message.string(1, name)
    message.message(2, value)
    return message.bytes()


#: kube-aggregator's own routes (apiregistration.k8s.io) carry an operation's group-version-
#: kind as a Go struct, written in its field order, where kube-apiserver's carry a map (sorted
#: keys); only the protobuf form, whose YAML keeps the order, shows it.
_STRUCT_GVK_GROUPS = frozenset({"apiregistration.k8s.io"})


def _struct_gvk(op: Mapping[str, Any]) -> Mapping[str, Any]:
    gvk = op.get("x-kubernetes-group-version-kind")
    if not isinstance(gvk, dict) or gvk.get("group") not in _STRUCT_GVK_GROUPS:
        return op
    ordered = {key: gvk[key] for key in ("group", "version", "kind") if key in gvk}
    return {**op, "x-kubernetes-group-version-kind": ordered}


def _extensions(obj: Mapping[str, Any]) -> list[bytes]:
    """``x-*`` keys as ``NamedAny`` messages, in the document's (sorted) order."""
    return [_named(key, _any(value)) for key, value in obj.items() if key.startswith("x-")]


def _named_map(items: Mapping[str, Any], encode: Callable[[Any], bytes]) -> list[bytes]:
    return [_named(name, encode(value)) for name, value in items.items()]


# ----------------------------------------------------------------------------- schemas

def schema(s: Mapping[str, Any]) -> bytes:
    """``openapi.v2.Schema``."""
    m = _Message()
    m.string(1, s.get("$ref"))
    m.string(2, s.get("format"))
    m.string(3, s.get("title"))
    m.string(4, s.get("description"))
    if "default" in s:
        m.message(5, _any(s["default"]))
    for number, name in ((6, "multipleOf"), (7, "maximum")):
        m.double(number, s.get(name))
    m.boolean(8, s.get("exclusiveMaximum"))
    m.double(9, s.get("minimum"))
    m.boolean(10, s.get("exclusiveMinimum"))
    for number, name in ((11, "maxLength"), (12, "minLength")):
        m.int64(number, s.get(name))
    m.string(13, s.get("pattern"))
    for number, name in ((14, "maxItems"), (15, "minItems")):
        m.int64(number, s.get(name))
    m.boolean(16, s.get("uniqueItems"))
    for number, name in ((17, "maxProperties"), (18, "minProperties")):
        m.int64(number, s.get(name))
    m.strings(19, s.get("required") or ())
    m.messages(20, (_any(value) for value in s.get("enum") or ()))
    if "additionalProperties" in s:
        m.message(21, _additional_properties(s["additionalProperties"]))
    if s.get("type"):
        types = s["type"] if isinstance(s["type"], list) else [s["type"]]
        type_item = _Message()
        type_item.strings(1, types)
        m.message(22, type_item.bytes())
    if "items" in s:
        items = s["items"] if isinstance(s["items"], list) else [s["items"]]
        items_item = _Message()
        items_item.messages(1, (schema(item) for item in items))
        m.message(23, items_item.bytes())
    m.messages(24, (schema(part) for part in s.get("allOf") or ()))
    if "properties" in s:
        properties = _Message()
        properties.messages(1, _named_map(s["properties"], schema))
        m.message(25, properties.bytes())
    m.string(26, s.get("discriminator"))
    m.boolean(27, s.get("readOnly"))
    if "example" in s:
        m.message(30, _any(s["example"]))
    m.messages(31, _extensions(s))
    return m.bytes()


def _additional_properties(value: Any) -> bytes:
    m = _Message()
    if isinstance(value, bool):  # a oneof member: written even when false
        m._parts += [_key(2, _VARINT), _varint(int(value))]
    else:
        m.message(1, schema(value))
    return m.bytes()


# -------------------------------------------------------------------------- parameters

#: Field numbers of the non-body parameter sub-schemas: (required, in, description, name,
#: allowEmptyValue or None, type, format, uniqueItems) — query and form data have
#: allowEmptyValue, which shifts their later fields by one.
_NON_BODY = {
    "query": (3, {"required": 1, "in": 2, "description": 3, "name": 4, "allowEmptyValue": 5, "type": 6,
                  "format": 7, "uniqueItems": 20}),
    "path": (4, {"required": 1, "in": 2, "description": 3, "name": 4, "type": 5, "format": 6, "uniqueItems": 19}),
    "header": (1, {"required": 1, "in": 2, "description": 3, "name": 4, "type": 5, "format": 6, "uniqueItems": 19}),
    "formData": (2, {"required": 1, "in": 2, "description": 3, "name": 4, "allowEmptyValue": 5, "type": 6,
                     "format": 7, "uniqueItems": 20}),
}


def parameter(p: Mapping[str, Any]) -> bytes:
    """``openapi.v2.ParametersItem``: an inline parameter, or a ``$ref`` to a shared one."""
    return _memoized(_PARAMETER_MEMO, p, _encode_parameter)


def _encode_parameter(p: Mapping[str, Any]) -> bytes:
    item = _Message()
    if "$ref" in p:
        reference = _Message()
        reference.string(1, p["$ref"])
        reference.string(2, p.get("description"))
        item.message(2, reference.bytes())
        return item.bytes()
    item.message(1, _parameter_message(p))
    return item.bytes()


def _parameter_message(p: Mapping[str, Any]) -> bytes:
    """``openapi.v2.Parameter``: a body or a non-body parameter."""
    outer = _Message()
    if p.get("in") == "body":
        body = _Message()
        body.string(1, p.get("description"))
        body.string(2, p.get("name"))
        body.string(3, "body")
        body.boolean(4, p.get("required"))
        body.message(5, schema(p.get("schema") or {}))
        body.messages(6, _extensions(p))
        outer.message(1, body.bytes())
    else:
        oneof_number, numbers = _NON_BODY[p.get("in", "query")]
        sub = _Message()
        for name in ("required", "in", "description", "name", "allowEmptyValue", "type", "format", "uniqueItems"):
            if name not in numbers:
                continue
            if name in ("required", "allowEmptyValue", "uniqueItems"):
                sub.boolean(numbers[name], p.get(name))
            else:
                sub.string(numbers[name], p.get(name))
        non_body = _Message()
        non_body.message(oneof_number, sub.bytes())
        outer.message(2, non_body.bytes())
    return outer.bytes()


def _parameter_definitions(parameters: Mapping[str, Any]) -> bytes:
    """``openapi.v2.ParameterDefinitions``: the document's shared parameters by name."""
    m = _Message()
    m.messages(1, (_named(name, _parameter_message(p)) for name, p in parameters.items()))
    return m.bytes()


# -------------------------------------------------------------------- paths, operations

def _responses(responses: Mapping[str, Any]) -> bytes:
    m = _Message()
    for code, response in responses.items():
        r = _Message()
        r.string(1, response.get("description"))
        if "schema" in response:
            schema_item = _Message()
            schema_item.message(1, schema(response["schema"]))
            r.message(2, schema_item.bytes())
        r.messages(5, _extensions(response))
        value = _Message()
        value.message(1, r.bytes())
        m.message(1, _named(code, value.bytes()))
    return m.bytes()


def operation(op: Mapping[str, Any]) -> bytes:
    m = _Message()
    m.strings(1, op.get("tags") or ())
    m.string(2, op.get("summary"))
    m.string(3, op.get("description"))
    m.string(5, op.get("operationId"))
    m.strings(6, op.get("produces") or ())
    m.strings(7, op.get("consumes") or ())
    m.messages(8, (parameter(p) for p in op.get("parameters") or ()))
    if "responses" in op:
        m.message(9, _responses(op["responses"]))
    m.strings(10, op.get("schemes") or ())
    m.boolean(11, op.get("deprecated"))
    m.messages(13, _extensions(_struct_gvk(op)))
    return m.bytes()


_METHODS = {"get": 2, "put": 3, "post": 4, "delete": 5, "options": 6, "head": 7, "patch": 8}


def path_item(item: Mapping[str, Any]) -> bytes:
    m = _Message()
    m.string(1, item.get("$ref"))
    for method, number in _METHODS.items():
        if method in item:
            m.message(number, operation(item[method]))
    m.messages(9, (parameter(p) for p in item.get("parameters") or ()))
    m.messages(10, _extensions(item))
    return m.bytes()


# ----------------------------------------------------------------------------- document

def _info(info: Mapping[str, Any]) -> bytes:
    m = _Message()
    m.string(1, info.get("title"))
    m.string(2, info.get("version"))
    m.string(3, info.get("description"))
    m.messages(7, _extensions(info))
    return m.bytes()


def _security_definitions(definitions: Mapping[str, Any]) -> bytes:
    """Only API-key schemes (the apiserver's ``BearerToken``) are written."""
    m = _Message()
    for name, definition in definitions.items():
        api_key = _Message()
        for number, field in ((1, "type"), (2, "name"), (3, "in"), (4, "description")):
            api_key.string(number, definition.get(field))
        item = _Message()
        item.message(2, api_key.bytes())
        m.message(1, _named(name, item.bytes()))
    return m.bytes()


def _security_requirement(requirement: Mapping[str, Any]) -> bytes:
    m = _Message()
    for name, scopes in requirement.items():
        array = _Message()
        array.strings(1, scopes)
        m.message(1, _named(name, array.bytes()))
    return m.bytes()


def path_entry(path: str, item: Mapping[str, Any]) -> bytes:
    """One path as it sits in the document's ``Paths`` message (a field-2 entry): that
    message is these entries, in the document's order."""
    return _entry(2, _named(path, path_item(item)))


def definition_entry(name: str, s: Mapping[str, Any]) -> bytes:
    """One definition as it sits in the ``Definitions`` message (a field-1 entry)."""
    return _entry(1, _named(name, schema(s)))


def _entry(number: int, data: bytes) -> bytes:
    return _key(number, _BYTES) + _varint(len(data)) + data


def encode_document(doc: Mapping[str, Any]) -> bytes:
    """``doc`` (a Swagger 2.0 document as JSON) as an ``openapi.v2.Document`` message."""
    paths = [path_entry(path, item) for path, item in doc["paths"].items()] if "paths" in doc else None
    definitions = ([definition_entry(name, s) for name, s in doc["definitions"].items()]
                   if "definitions" in doc else None)
    return b"".join(document_parts(doc, paths, definitions))


def document_parts(doc: Mapping[str, Any], paths: list[bytes] | None,
                   definitions: list[bytes] | None) -> list[bytes]:
    """The ``Document`` message as parts to join, its paths and definitions given as their
    entries (:func:`path_entry`, :func:`definition_entry`; None: the field is absent), so a
    document assembled from cached entries is spliced, never encoded again. The other
    fields come from ``doc``."""
    head = _Message()
    head.string(1, doc.get("swagger"))
    if "info" in doc:
        head.message(2, _info(doc["info"]))
    head.string(3, doc.get("host"))
    head.string(4, doc.get("basePath"))
    for number, name in ((5, "schemes"), (6, "consumes"), (7, "produces")):
        head.strings(number, doc.get(name) or ())
    parts = [head.bytes()]
    for number, entries in ((8, paths), (9, definitions)):
        if entries is not None:
            parts.append(_key(number, _BYTES) + _varint(sum(len(entry) for entry in entries)))
            parts += entries
    tail = _Message()
    if doc.get("parameters"):
        tail.message(10, _parameter_definitions(doc["parameters"]))
    tail.messages(12, (_security_requirement(r) for r in doc.get("security") or ()))
    if "securityDefinitions" in doc:
        tail.message(13, _security_definitions(doc["securityDefinitions"]))
    tail.messages(16, _extensions(doc))
    parts.append(tail.bytes())
    return parts
