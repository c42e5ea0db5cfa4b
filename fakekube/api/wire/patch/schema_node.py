"""A cached, walkable view of upstream's OpenAPI definitions.

Strategic merge patch and field validation both walk an object alongside its type's
schema, on every write. Resolving ``$ref`` links and parsing patch extensions each time
would dominate their cost, so each definition becomes one :class:`SchemaNode` the first
time it is needed, and the nodes under it are built lazily and kept on their parent.
"""

from __future__ import annotations

import threading
from typing import Any, NamedTuple

from fakekube.api.wire.schema import Schema, SchemaSet, ref_name
from fakekube.api.wire.schema_kinds import ANY, ARRAY, MAP, OBJECT, SCALAR, kind_of

__all__ = ["ANY", "ARRAY", "MAP", "OBJECT", "SCALAR", "FieldInfo", "SchemaNode", "definition_node", "kind_of", "root_node"]


class FieldInfo(NamedTuple):
    """What the schema says about one field of an object: its patch metadata and value node."""

    patch_strategies: tuple[str, ...]
    merge_key: str
    node: "SchemaNode"


class SchemaNode:
    """One position in a type's schema; children are resolved on first use and cached."""

    __slots__ = ("kind", "name", "_schema", "_set", "_fields", "_item", "_lock")

    def __init__(self, schema: Schema, schema_set: SchemaSet, name: str) -> None:
        self._schema = schema
        self._set = schema_set
        self.name = name
        self.kind = kind_of(schema)
        self._fields: dict[str, FieldInfo | None] = {}
        self._item: SchemaNode | None = None
        self._lock = threading.Lock()

    def field(self, key: str) -> FieldInfo | None:
        """The field ``key`` of an object or map node; None if the schema does not know it."""
        if key in self._fields:
            return self._fields[key]
        info = self._build_field(key)
        with self._lock:
            self._fields.setdefault(key, info)
        return info

    def item(self) -> "SchemaNode":
        """The element node of an array node."""
        if self._item is None:
            items = self._schema.get("items")
            self._item = _node_for(items if isinstance(items, dict) else {}, self._set, self.name + "[]")
        return self._item

    def _build_field(self, key: str) -> FieldInfo | None:
        if self.kind == MAP:
            extra = self._schema.get("additionalProperties")
            value = extra if isinstance(extra, dict) else {}
            return FieldInfo((), "", _node_for(value, self._set, self.name + "{}"))
        if self.kind != OBJECT:
            return None
        prop = self._schema.get("properties", {}).get(key)
        if prop is None:
            return None
        strategy = prop.get("x-kubernetes-patch-strategy", "")
        strategies = tuple(strategy.split(",")) if strategy else ()
        return FieldInfo(strategies, prop.get("x-kubernetes-patch-merge-key", ""),
                         _node_for(prop, self._set, f"{self.name}.{key}"))


_def_cache: dict[tuple[int, str], SchemaNode] = {}
_def_lock = threading.Lock()


def _node_for(schema: Schema, schema_set: SchemaSet, name: str) -> SchemaNode:
    """A node for an inline schema, or the shared cached node if it is a ``$ref``."""
    ref = schema.get("$ref")
    if ref is None and len(schema.get("allOf", [])) == 1:
        ref = schema["allOf"][0].get("$ref")
    if ref is not None:
        return definition_node(schema_set, ref_name(ref))
    return SchemaNode(schema, schema_set, name)


def definition_node(schema_set: SchemaSet, definition: str) -> SchemaNode:
    """The cached node of a named definition (``io.k8s.api.core.v1.Pod``)."""
    key = (id(schema_set), definition)
    node = _def_cache.get(key)
    if node is None:
        resolved = schema_set.resolve(schema_set.definition(definition) or {}) or {}
        node = SchemaNode(resolved, schema_set, definition)
        with _def_lock:
            node = _def_cache.setdefault(key, node)
    return node


def root_node(schema_set: Any, group: str, version: str, kind: str) -> SchemaNode | None:
    """The node of a kind's top-level type, or None if the schema set does not know it."""
    if schema_set is None:
        return None
    name = schema_set.name_for_gvk(group, version, kind)
    return definition_node(schema_set, name) if name else None
