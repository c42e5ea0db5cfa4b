"""An OpenAPI v3 document's bytes as kube-apiserver writes them, so its hash is upstream's.

kube-openapi marshals its Go types: a struct's members in the struct's field order (the
tables below, from ``k8s.io/kube-openapi/pkg/spec3`` and ``validation/spec``), a map's keys
sorted, extensions (``x-*``) after a struct's own fields, and Go's HTML-safe escaping
(``<``, ``>``, ``&`` as ``\\u003c``…). The ``/openapi/v3`` index publishes each document's
sha512, so a client's cache and the index's hashes only match upstream's when the bytes do.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

_DOCUMENT = ("openapi", "info", "servers", "security", "paths", "components", "externalDocs")
_INFO = ("description", "title", "termsOfService", "contact", "license", "version")
_PATH_ITEM = ("$ref", "summary", "description", "get", "put", "post", "delete", "options", "head", "patch", "trace",
              "servers", "parameters")
_OPERATION = ("tags", "summary", "description", "externalDocs", "operationId", "parameters", "requestBody",
              "responses", "deprecated", "security", "servers")
_PARAMETER = ("$ref", "name", "in", "description", "required", "deprecated", "allowEmptyValue", "style", "explode",
              "allowReserved", "schema", "example", "examples", "content")
_REQUEST_BODY = ("$ref", "description", "content", "required")
_RESPONSE = ("$ref", "description", "headers", "content", "links")
_MEDIA_TYPE = ("schema", "example", "examples", "encoding")
_COMPONENTS = ("schemas", "responses", "parameters", "examples", "requestBodies", "headers", "securitySchemes",
               "links", "callbacks")
_SECURITY_SCHEME = ("type", "description", "name", "in", "scheme", "bearerFormat", "flows", "openIdConnectUrl")
#: SchemaProps, then SwaggerSchemaProps, then ``$schema`` and ``$ref``.
_SCHEMA = ("id", "description", "type", "nullable", "format", "title", "default", "maximum", "exclusiveMaximum",
           "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems",
           "multipleOf", "enum", "maxProperties", "minProperties", "required", "items", "allOf", "oneOf", "anyOf",
           "not", "properties", "additionalProperties", "patternProperties", "dependencies", "additionalItems",
           "definitions", "discriminator", "readOnly", "externalDocs", "example", "$schema", "$ref")
#: An operation's group-version-kind is apimachinery's GroupVersionKind struct.
_GVK = ("group", "version", "kind")

_Writer = Callable[[Any], str]


def encode_document(document: dict[str, Any]) -> bytes:
    """The document's JSON bytes, byte for byte as kube-apiserver serves it."""
    return _struct(document, _DOCUMENT, {"info": _value_struct(_INFO), "paths": _map(_path_item),
                                         "components": _components}).encode()


_ENCODE_STRING: Callable[[str], str] = json.encoder.encode_basestring
_GO_ESCAPED = re.compile("[<>&\u2028\u2029]")
_GO_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _string(text: str) -> str:
    """Go's JSON string: HTML-safe escapes, U+2028/2029 escaped, other characters as UTF-8."""
    out = _ENCODE_STRING(text)
    return _GO_ESCAPED.sub(lambda m: _GO_ESCAPES[m.group()], out) if _GO_ESCAPED.search(out) else out


def _plain(value: Any) -> str:
    """A JSON value with no struct in it (defaults, enums, extensions): maps sorted."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{_string(k)}:{_plain(value[k])}" for k in sorted(value)) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_plain(item) for item in value) + "]"
    if isinstance(value, str):
        return _string(value)
    return json.dumps(value)


def _struct(value: dict[str, Any], order: tuple[str, ...], members: dict[str, _Writer]) -> str:
    """A struct's members in ``order``, then any other key (extensions), sorted."""
    rank = {key: i for i, key in enumerate(order)}
    keys = sorted(value, key=lambda k: (rank.get(k, len(order)), k))
    return "{" + ",".join(f"{_string(k)}:{members.get(k, _plain)(value[k])}" for k in keys) + "}"


def _value_struct(order: tuple[str, ...], members: dict[str, _Writer] | None = None) -> _Writer:
    return lambda value: _struct(value, order, members or {}) if isinstance(value, dict) else _plain(value)


def _map(item: _Writer) -> _Writer:
    return lambda value: "{" + ",".join(f"{_string(k)}:{item(value[k])}" for k in sorted(value)) + "}"


def _list(item: _Writer) -> _Writer:
    return lambda value: "[" + ",".join(item(x) for x in value) + "]"


def _schema(value: Any) -> str:
    if not isinstance(value, dict):
        return _plain(value)  # additionalProperties: true
    return _struct(value, _SCHEMA, _SCHEMA_MEMBERS)


_SCHEMA_MEMBERS: dict[str, _Writer] = {
    "items": _schema, "not": _schema, "additionalProperties": _schema, "additionalItems": _schema,
    "allOf": _list(_schema), "oneOf": _list(_schema), "anyOf": _list(_schema),
    "properties": _map(_schema), "patternProperties": _map(_schema), "definitions": _map(_schema),
}
_MEDIA = _value_struct(_MEDIA_TYPE, {"schema": _schema})
_PARAM = _value_struct(_PARAMETER, {"schema": _schema, "content": _map(_MEDIA)})
_OPERATION_MEMBERS: dict[str, _Writer] = {
    "parameters": _list(_PARAM),
    "requestBody": _value_struct(_REQUEST_BODY, {"content": _map(_MEDIA)}),
    "responses": _map(_value_struct(_RESPONSE, {"content": _map(_MEDIA)})),
    "x-kubernetes-group-version-kind": _value_struct(_GVK),
}


def _path_item(value: Any) -> str:
    operation = _value_struct(_OPERATION, _OPERATION_MEMBERS)
    members = {method: operation for method in ("get", "put", "post", "delete", "options", "head", "patch", "trace")}
    return _struct(value, _PATH_ITEM, {**members, "parameters": _list(_PARAM)})


def _components(value: Any) -> str:
    return _struct(value, _COMPONENTS, {"schemas": _map(_schema), "securitySchemes": _map(_value_struct(_SECURITY_SCHEME))})
