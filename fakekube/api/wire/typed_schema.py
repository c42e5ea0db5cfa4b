"""Each built-in type's schema compiled once into small nodes for the per-write walk.

Every create, update and patch decodes its body against the type's OpenAPI schema the
way Go decodes it into the typed struct (:mod:`fakekube.api.wire.decoding`) and, unless
fieldValidation=Ignore, looks for fields the schema does not declare
(:mod:`fakekube.api.wire.fieldvalidation`). Reading the raw OpenAPI dicts on every write
means resolving ``$ref`` links, reading ``type`` lists and building Go type names again
and again. A :class:`TypedNode` holds those facts precomputed, so the walk costs a few
attribute reads per field, and the unknown-field search can ride along in the same walk
wherever it would visit exactly the same fields (:attr:`TypedNode.agrees`).

Nodes are built under a lock and published only when a whole root is complete; after
that they are never changed, so walks read them without locking.
"""

from __future__ import annotations

import threading
from typing import Any

from fakekube.api.wire.schema import Schema, SchemaSet, ref_name
from fakekube.api.wire.schema_kinds import ARRAY as U_ARRAY
from fakekube.api.wire.schema_kinds import MAP as U_MAP
from fakekube.api.wire.schema_kinds import OBJECT as U_OBJECT
from fakekube.api.wire.schema_kinds import kind_of

# What decoding does at a node. The first three have children; the rest are leaves.
STRUCT, ARRAY, MAP = 0, 1, 2
STRING, BYTES, INTEGER, NUMBER, BOOLEAN, QUANTITY, INT_OR_STRING, TIME, NOTHING = range(3, 12)

#: A null list element or map value of this type stays null (or is dropped from a map).
NO_ZERO = object()
#: The zero value is a fresh empty object (a struct), made anew for each use.
EMPTY_STRUCT = object()

_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_TIMES = (_META + "Time", _META + "MicroTime")
INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1), "int": (-(2**63), 2**63 - 1)}


class TypedNode:
    """One position in a type's schema with what decoding needs there, precomputed.

    ``props`` (structs) maps field names to nodes; ``item`` is the element node of an
    array or map; ``go_type`` is the Go type an error names; ``zero`` is the JSON of the
    type's Go zero value (or NO_ZERO / EMPTY_STRUCT). ``agrees`` says the unknown-field
    walk over this position visits the same children (and only those) that decoding does.
    """

    __slots__ = ("action", "props", "item", "go_type", "struct_name", "zero", "low", "high", "agrees")

    def __init__(self) -> None:
        self.action = NOTHING
        self.props: dict[str, TypedNode] = {}
        self.item: TypedNode | None = None
        self.go_type = "interface {}"
        self.struct_name = ""
        self.zero: Any = NO_ZERO
        self.low = self.high = 0
        self.agrees = True


class _Compiler:
    """Builds the nodes of one schema set; a definition's node is built once and shared."""

    def __init__(self, schema_set: SchemaSet) -> None:
        self._set = schema_set
        self._defs: dict[str, TypedNode] = {}

    def position(self, schema: Schema) -> TypedNode:
        """The node for a property, item or map-value schema (a ``$ref`` or inline)."""
        definition = ref_of(schema)
        if definition is not None:
            return self.definition(definition)
        node = TypedNode()
        self._fill_inline(node, schema)
        return node

    def definition(self, name: str) -> TypedNode:
        node = self._defs.get(name)
        if node is None:
            node = self._defs[name] = TypedNode()  # registered first: definitions recurse
            self._fill_definition(node, name)
        return node

    def root(self, name: str) -> TypedNode:
        """Decoding always treats the top-level type as a struct, even one with no fields."""
        node = self.definition(name)
        if node.action == STRUCT:
            return node
        root = TypedNode()
        root.action, root.struct_name = STRUCT, short_name(name)
        root.go_type = go_type_of_definition(name)
        root.agrees = False
        return root

    def _fill_definition(self, node: TypedNode, name: str) -> None:
        schema = self._set.definition(name) or {}
        properties = schema.get("properties")
        node.zero = EMPTY_STRUCT if properties else NO_ZERO
        node.go_type = go_type_of_definition(name)
        if name == _QUANTITY:
            node.action, node.go_type = QUANTITY, "resource.Quantity"
        elif name == _INT_OR_STRING:
            node.action, node.go_type = INT_OR_STRING, "intstr.IntOrString"
        elif name in _TIMES:
            node.action = TIME
        elif properties:
            node.action, node.struct_name = STRUCT, short_name(name)
            node.props = {key: self.position(prop) for key, prop in properties.items()}
        resolved = self._set.resolve(schema) or {}
        node.agrees = _agrees(node, kind_of(resolved), resolved.get("properties") is properties)

    def _fill_inline(self, node: TypedNode, schema: Schema) -> None:
        types = types_of(schema)
        extra = schema.get("additionalProperties")
        if "array" in types or "items" in schema:
            items = schema.get("items")
            node.action, node.item = ARRAY, self.position(items if isinstance(items, dict) else {})
            node.go_type = "[]" + node.item.go_type
        elif isinstance(extra, dict):
            node.action, node.item = MAP, self.position(extra)
            node.go_type = "map[string]" + node.item.go_type
        elif "string" in types:
            byte = schema.get("format") == "byte"
            node.action, node.go_type, node.zero = (BYTES, "[]uint8", NO_ZERO) if byte else (STRING, "string", "")
        elif "integer" in types:
            node.action, node.go_type, node.zero = INTEGER, schema.get("format") or "int", 0
            node.low, node.high = INT_RANGES.get(node.go_type, INT_RANGES["int64"])
        elif "number" in types:
            node.action, node.go_type, node.zero = NUMBER, "float64", 0
        elif "boolean" in types:
            node.action, node.go_type, node.zero = BOOLEAN, "bool", False
        node.agrees = _agrees(node, kind_of(schema), True)


def _agrees(node: TypedNode, unknown_kind: str, same_properties: bool) -> bool:
    """Does fieldvalidation's walk (by ``unknown_kind``) step into what decoding does?"""
    if node.action == STRUCT:
        return unknown_kind == U_OBJECT and same_properties
    if node.action == ARRAY:
        return unknown_kind == U_ARRAY
    if node.action == MAP:
        return unknown_kind == U_MAP
    return unknown_kind not in (U_OBJECT, U_ARRAY, U_MAP)


class Root:
    """A kind's compiled top-level node, and whether unknown fields can ride along.

    ``collects_unknown`` holds when every node under the root agrees with the
    unknown-field walk and the root declares apiVersion and kind (which the server adds
    or strips between decoding and field validation).
    """

    __slots__ = ("node", "collects_unknown")

    def __init__(self, node: TypedNode) -> None:
        self.node = node
        self.collects_unknown = "apiVersion" in node.props and "kind" in node.props and _all_agree(node)


def _all_agree(root: TypedNode) -> bool:
    seen: set[int] = set()
    pending = [root]
    while pending:
        node = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if not node.agrees:
            return False
        pending.extend(node.props.values())
        if node.item is not None:
            pending.append(node.item)
    return True


_compilers: dict[SchemaSet, _Compiler] = {}
_roots: dict[tuple[SchemaSet, str], Root] = {}
_lock = threading.RLock()


def root_for(schema_set: SchemaSet, group: str, version: str, kind: str) -> Root | None:
    """The compiled root of a kind, or None if the schema set does not know it."""
    definition = schema_set.name_for_gvk(group, version, kind)
    if definition is None:
        return None
    root = _roots.get((schema_set, definition))
    if root is None:
        with _lock:
            compiler = _compilers.setdefault(schema_set, _Compiler(schema_set))
            root = _roots.setdefault((schema_set, definition), Root(compiler.root(definition)))
    return root


def ref_of(schema: Schema) -> str | None:
    """The definition a schema points to (``$ref``, or a single-element ``allOf``)."""
    ref = schema.get("$ref")
    if ref is None and len(schema.get("allOf", [])) == 1:
        ref = schema["allOf"][0].get("$ref")
    return ref_name(ref) if isinstance(ref, str) else None


def types_of(schema: Schema) -> frozenset[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return frozenset((kind,))
    if isinstance(kind, list):
        return frozenset(k for k in kind if isinstance(k, str))
    return frozenset()


def short_name(definition: str) -> str:
    """``io.k8s.api.apps.v1.DeploymentSpec`` → ``DeploymentSpec`` (reflect's ``Type.Name()``)."""
    return definition.rsplit(".", 1)[-1]


def go_type_of_definition(definition: str) -> str:
    """``io.k8s.api.apps.v1.DeploymentSpec`` → ``v1.DeploymentSpec`` (``Type.String()``)."""
    parts = definition.rsplit(".", 2)
    return ".".join(parts[-2:]) if len(parts) >= 2 else definition
