"""The fields a create's manager owns, in one pass: the hot path of every create.

Upstream compares the new object with the type's empty object and keeps what was added
or changed (``Updater.Update`` from an empty live object), then strips server-owned
metadata and the reset fields. The empty object is Go's zero value: struct values are
``{}`` and non-``omitempty`` pointers, slices and maps are ``null`` (``TypeNode.present``),
everything else is absent. This walk computes the same set directly — a subtree absent
from the empty object is new throughout (each interior node a member), one present in
it is new only below — and writes it in FieldsV1's canonical order, without building
the comparison's three sets. ``tests/unit/wire/test_apply_created.py`` holds it equal to
the general comparison.
"""

from __future__ import annotations

from typing import Any

from fakekube.api.wire.apply.fieldsets import FieldSet, _order
from fakekube.api.wire.apply.typed import TypedError, _with_zero, item_key
from fakekube.api.wire.apply.types import DEDUCED, DEDUCED_NODE, LIST, MAP, TypeNode

_ABSENT: Any = object()
#: ObjectMeta fields the server owns (``stripMetaManager``), never in a manager's set.
_SERVER_META = frozenset({"name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName",
                          "generation", "managedFields", "resourceVersion"})


class Fallback(Exception):
    """An object this walk does not cover (duplicate list keys): use the comparison."""


def created_fields(obj: dict[str, Any], node: TypeNode, ignored_top: frozenset[str]) -> FieldSet:
    """The owned set of a new object. ``ignored_top``: top-level fields never owned
    (``status`` of a type with a status subresource). Raises :class:`Fallback`."""
    out: FieldSet = {}
    obj = _with_zero(obj, node)
    for key in sorted(obj):
        if key in ("apiVersion", "kind") or key in ignored_top:
            continue
        child_node = node.field(key)
        if key == "metadata" and isinstance(obj[key], dict):
            sub = _present_struct(obj[key], child_node, skip=_SERVER_META)
        else:
            sub = _child(obj[key], child_node, node.present.get(key, _ABSENT))
        if sub is not None:
            out["f:" + key] = sub
    return out


def _child(value: Any, node: TypeNode, zero: Any) -> FieldSet | None:
    """A field of a struct, given its value in the empty object (``_ABSENT``: none)."""
    if zero is _ABSENT:
        return _new(value, node)
    if type(zero) is dict:
        return _present_struct(value, node)
    if zero is None:
        return _present_null(value, node)
    return None if value == zero and type(value) is type(zero) else {}  # a zero scalar: changed or not


def _granular_map(node: TypeNode) -> bool:
    kind = node.kind
    return (kind == MAP and not node.atomic) or kind == DEDUCED


def _granular_list(node: TypeNode) -> bool:
    return node.kind == LIST and not node.atomic and node.keys is not None


def _new(value: Any, node: TypeNode) -> FieldSet:
    """A subtree the empty object lacks: every node in it is added (the hot loop: the
    shape tests and field lookups of :mod:`.typed` are inlined)."""
    if type(value) is dict:
        if not value or not _granular_map(node):
            return {}
        fields, elem, present = node.fields, node.elem or DEDUCED_NODE, node.present
        if present:
            value = _with_zero(value, node)
        out: FieldSet = {".": {}}
        for key in sorted(value) if len(value) > 1 else value:
            child = value[key]
            kind = type(child)  # a scalar is a leaf whatever its type: no call for it
            out["f:" + key] = _new(child, fields.get(key) or elem) if kind is dict or kind is list else {}
        return out
    if type(value) is list and value and _granular_list(node):
        return {".": {}, **_items(value, node)}
    return {}


def _items(value: list[Any], node: TypeNode) -> FieldSet:
    elem = node.elem or node
    kids: dict[str, FieldSet] = {}
    for item in value:
        key = item_key(node, item)
        if key in kids:
            raise Fallback
        kids[key] = _new(item, elem)
    if len(kids) < 2:
        return kids
    return {key: kids[key] for key in sorted(kids, key=_order)}


def _present_struct(value: Any, node: TypeNode, skip: frozenset[str] = frozenset()) -> FieldSet | None:
    """A field whose empty value is ``{}`` (a Go struct value)."""
    if type(value) is not dict:
        return {}  # a leaf that differs from {}
    if not value:
        return None
    if not _granular_map(node):  # an atomic struct: one field, changed from {}
        return {}
    fields, elem, present = node.fields, node.elem or DEDUCED_NODE, node.present
    out: FieldSet = {}
    for key in sorted(value) if len(value) > 1 else value:
        if key in skip:
            continue
        child, zero = value[key], present.get(key, _ABSENT)
        if zero is _ABSENT and type(child) is not dict and type(child) is not list:
            out["f:" + key] = {}  # a new scalar: a leaf
            continue
        sub = _child(child, fields.get(key) or elem, zero)
        if sub is not None:
            out["f:" + key] = sub
    return out or None


def _present_null(value: Any, node: TypeNode) -> FieldSet | None:
    """A field whose empty value is null (a pointer, slice or map without omitempty)."""
    if value is None:
        return None
    if type(value) is dict and value and _granular_map(node):
        value = _with_zero(value, node)
        fields, elem = node.fields, node.elem or DEDUCED_NODE
        return {"f:" + key: _new(value[key], fields.get(key) or elem) for key in sorted(value)}
    if type(value) is list and value and _granular_list(node):
        return _items(value, node)
    return {}


__all__ = ["Fallback", "TypedError", "created_fields", "LIST", "MAP"]
