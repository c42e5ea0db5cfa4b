"""The typed view of an object that field management walks: structured-merge-diff's schema.

Upstream converts OpenAPI into SMD atoms (kube-openapi ``schemaconv``): a position is a
scalar, a list or a map. Lists are ``atomic`` (replaced whole, owned as one field) or
associative: a *set* of scalars (items by value) or a *map* keyed by some fields of its
object items (``x-kubernetes-list-type``; for built-ins without one, a ``merge`` patch
strategy with a merge key means keyed, without a key a set, anything else atomic).
Maps (and structs) are granular unless ``x-kubernetes-map-type: atomic``. A free-form
object is *deduced*: a granular map of deduced values whose lists are atomic.

A :class:`TypeNode` is built once per definition (nodes are shared, recursion-safe) and
never changed after its root is published; :func:`builtin_root` and :func:`custom_root`
cache roots per schema set and per CRD schema.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from fakekube.api.wire.gojson import OMITZERO_SINCE_MINOR
from fakekube.api.wire.schema import Schema, SchemaSet, ref_name

SCALAR, LIST, MAP, DEDUCED, UNTYPED = range(5)

_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_RAW_EXTENSION = "io.k8s.apimachinery.pkg.runtime.RawExtension"
_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
#: List-map key fields whose items may omit them: upstream fills them from the schema's
#: ``default`` (the served OpenAPI of 1.33 has these; the schema source we read has none).
KEY_DEFAULTS: dict[str, dict[str, Any]] = {
    "io.k8s.api.core.v1.ContainerPort": {"protocol": "TCP"},
    "io.k8s.api.core.v1.ServicePort": {"protocol": "TCP"},
    "io.k8s.api.core.v1.EndpointPort": {"protocol": "TCP"},
}


class TypeNode:
    """One schema position. ``fields`` (maps) by name, ``elem`` the list item or map value
    type (None: a struct that admits no other keys), ``keys`` the list-map key fields
    (``()`` for a set, None for an atomic list), ``present`` the fields Go's zero value of
    this struct writes and their values (``{}`` for a struct value, null for a nil pointer,
    slice or map without ``omitempty``, ``""``/0/false): a typed object always has them."""

    __slots__ = ("kind", "fields", "elem", "atomic", "keys", "key_defaults", "present", "name", "scalar")

    def __init__(self, kind: int, name: str = "", scalar: str = "") -> None:
        self.kind = kind
        #: A scalar's type as SMD's schema says it: "string", "numeric", "boolean", or ""
        #: (untyped: an int-or-string, a Quantity).
        self.scalar = scalar
        self.fields: dict[str, TypeNode] = {}
        self.elem: TypeNode | None = None
        self.atomic = False
        self.keys: tuple[str, ...] | None = None
        self.key_defaults: dict[str, Any] = {}
        self.present: dict[str, Any] = {}
        self.name = name

    def field(self, key: str) -> "TypeNode":
        """The type of a map key: a declared field, else the element type, else deduced
        (upstream rejects undeclared fields of built-ins at decoding; we never get here
        with one we must refuse, so tolerate it)."""
        node = self.fields.get(key)
        if node is not None:
            return node
        return self.elem if self.elem is not None else DEDUCED_NODE


DEDUCED_NODE = TypeNode(DEDUCED, "__untyped_deduced_")
UNTYPED_NODE = TypeNode(UNTYPED, "__untyped_atomic_")
SCALAR_NODE = TypeNode(SCALAR, "scalar")
#: The typed scalars, shared as :data:`SCALAR_NODE` is.
_SCALAR_NODES = {kind: TypeNode(SCALAR, "scalar", kind) for kind in ("string", "numeric", "boolean")}


def _scalar_type(types: set[str]) -> str:
    """kube-openapi's schemaconv: string, numeric (integer or number), boolean; else untyped."""
    kinds = types - {"null"}
    if kinds == {"string"}:
        return "string"
    if kinds and kinds <= {"integer", "number"}:
        return "numeric"
    if kinds == {"boolean"}:
        return "boolean"
    return ""


def _types(schema: Schema) -> set[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    return set()


def _ref(schema: Schema) -> str | None:
    ref = schema.get("$ref")
    if ref is None and len(schema.get("allOf", [])) == 1:
        ref = schema["allOf"][0].get("$ref")
    return ref_name(ref) if isinstance(ref, str) else None


def list_relationship(schema: Schema) -> tuple[bool, tuple[str, ...] | None]:
    """(atomic, keys) as ``schemaconv.getListElementRelationship`` decides them."""
    list_type = schema.get("x-kubernetes-list-type")
    if list_type is not None:
        if list_type == "map":
            return False, tuple(schema.get("x-kubernetes-list-map-keys") or ())
        if list_type == "set":
            return False, ()
        return True, None
    strategy = schema.get("x-kubernetes-patch-strategy")
    if strategy in ("merge", "merge,retainKeys"):
        key = schema.get("x-kubernetes-patch-merge-key")
        return False, (key,) if isinstance(key, str) else ()
    return True, None


class _Builder:
    """Builds nodes from one schema source; a named definition's node is built once."""

    def __init__(self, schema_set: SchemaSet | None, zero_of: Any = None) -> None:
        self._set = schema_set
        self._defs: dict[str, TypeNode] = {}
        self._zero_of = zero_of

    def definition(self, name: str) -> TypeNode:
        node = self._defs.get(name)
        if node is not None:
            return node
        if name in (_QUANTITY, _INT_OR_STRING):
            return SCALAR_NODE
        if name == _RAW_EXTENSION:
            return UNTYPED_NODE
        schema = (self._set.definition(name) if self._set is not None else None) or {}
        node = self._defs[name] = TypeNode(MAP, name)  # registered first: definitions recurse
        self._fill(node, schema, name)
        return node

    def position(self, schema: Schema, preserve: bool = False) -> TypeNode:
        """The node of a property, item or additionalProperties schema."""
        name = _ref(schema)
        if name is not None:
            node = self.definition(name)
            map_type = schema.get("x-kubernetes-map-type")
            if map_type in ("atomic", "granular") and node.kind == MAP and node.atomic != (map_type == "atomic"):
                node = _copy(node)
                node.atomic = map_type == "atomic"
            return node
        node = TypeNode(MAP)
        self._fill(node, schema, "", preserve)
        if node.kind == SCALAR and not node.name:
            return _SCALAR_NODES.get(node.scalar, SCALAR_NODE)
        return node

    def _fill(self, node: TypeNode, schema: Schema, name: str, preserve: bool = False) -> None:
        preserve = preserve or schema.get("x-kubernetes-preserve-unknown-fields") is True
        types = _types(schema)
        if schema.get("x-kubernetes-int-or-string") or "oneOf" in schema or "anyOf" in schema and not types:
            node.kind = SCALAR
            return
        properties = schema.get("properties")
        if "array" in types or ("items" in schema and not types):
            node.kind = LIST
            items = schema.get("items")
            node.elem = self.position(items, preserve) if isinstance(items, dict) else UNTYPED_NODE
            node.atomic, node.keys = list_relationship(schema)
            if node.keys and node.elem is not None and node.elem.name in KEY_DEFAULTS:
                node.key_defaults = KEY_DEFAULTS[node.elem.name]
            return
        if "object" in types or properties or (not types and "additionalProperties" in schema):
            node.kind = MAP
            node.fields = {key: self.position(prop, preserve) for key, prop in (properties or {}).items()}
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict):
                node.elem = self.position(extra, preserve)
            elif extra is True or preserve or not properties:
                node.elem = DEDUCED_NODE
            node.atomic = schema.get("x-kubernetes-map-type") == "atomic"
            if name and self._zero_of is not None:
                node.present = self._zero_of(name)
            return
        if types:
            node.kind = SCALAR
            node.scalar = _scalar_type(types)
            return
        node.kind = DEDUCED  # no type at all: anything, deduced from the value


def _copy(node: TypeNode) -> TypeNode:
    twin = TypeNode(node.kind, node.name, node.scalar)
    twin.fields, twin.elem, twin.atomic = node.fields, node.elem, node.atomic
    twin.keys, twin.key_defaults, twin.present = node.keys, node.key_defaults, node.present
    return twin


def _zero_fields_of(schema_set: SchemaSet) -> Callable[[str], dict[str, Any]]:
    """:func:`_go_zero_fields` as the schema set's release writes them: from 1.34 an
    ``omitzero`` field (ObjectMeta's ``creationTimestamp``) is left out of a zero struct, so
    a new pod template's metadata owns no ``f:creationTimestamp``."""
    minor = schema_set.minor
    if minor is None or minor < OMITZERO_SINCE_MINOR:
        return _go_zero_fields
    return lambda definition: _go_zero_fields(definition, omit_zero=True)


def _go_zero_fields(definition: str, omit_zero: bool = False) -> dict[str, Any]:
    """The fields Go's zero value of a built-in struct writes (``{}`` or ``null``), read off
    the protobuf field table's Go tags (a non-``omitempty`` field, or a struct value; a nil
    pointer without ``omitempty``, such as a TokenRequest's ``boundObjectRef``, is ``null``,
    as the unstructured converter writes the live object the field manager compares with).
    ``omit_zero``: ``omitzero`` fields are left out (their zero is not written)."""
    from fakekube.api.wire.gostructs import message, message_of
    from fakekube.api.wire.protobuf import decoder

    proto = message_of(definition) or definition
    if decoder.message(proto) is None:
        return {}
    try:
        zero = decoder.decode_message(proto, b"")
    except decoder.ProtobufError:  # a custom-JSON type: no fields
        return {}
    if not isinstance(zero, dict):
        return {}
    fields = {key: {} if isinstance(value, dict) else value for key, value in zero.items()}
    struct = message(proto)
    for field in struct.fields if struct is not None else ():
        if omit_zero and "z" in field.flags:
            fields.pop(field.name, None)
            continue
        if "p" in field.flags and "o" not in field.flags and "z" not in field.flags and "i" not in field.flags:
            fields.setdefault(field.name, None)
    return fields


_lock = threading.RLock()
_builders: dict[int, _Builder] = {}
_roots: dict[tuple[int, str], TypeNode] = {}
_custom: dict[int, tuple[Any, TypeNode]] = {}
_CUSTOM_LIMIT = 1024


def builtin_root(schema_set: SchemaSet, group: str, version: str, kind: str) -> TypeNode:
    """The node of a built-in kind; deduced if the served schemas do not know it."""
    name = schema_set.name_for_gvk(group, version, kind)
    if name is None:
        return DEDUCED_NODE
    key = (id(schema_set), name)
    root = _roots.get(key)
    if root is None:
        with _lock:
            builder = _builders.setdefault(id(schema_set), _Builder(schema_set, _zero_fields_of(schema_set)))
            root = _roots.setdefault(key, builder.definition(name))
    return root


def object_meta(schema_set: SchemaSet) -> TypeNode:
    with _lock:
        builder = _builders.setdefault(id(schema_set), _Builder(schema_set, _zero_fields_of(schema_set)))
        return builder.definition(_OBJECT_META)


def custom_root(schema: Schema | None, schema_set: SchemaSet) -> TypeNode:
    """The node of a custom resource from its version's ``openAPIV3Schema`` (None: deduced,
    as upstream's DeducedTypeConverter). ``apiVersion``, ``kind`` and ``metadata`` are typed
    as for every object (the CRD schema may leave them out)."""
    if not isinstance(schema, dict):
        return DEDUCED_NODE
    cached = _custom.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    with _lock:
        root = _Builder(None).position(schema)
        if root.kind != MAP:
            root = TypeNode(MAP)
            root.elem = DEDUCED_NODE
        root = _copy(root)
        root.fields = dict(root.fields)
        root.fields["apiVersion"] = SCALAR_NODE
        root.fields["kind"] = SCALAR_NODE
        root.fields["metadata"] = object_meta(schema_set)
        if len(_custom) >= _CUSTOM_LIMIT:
            _custom.clear()
        _custom[id(schema)] = (schema, root)
        return root
