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
from fakekube.api.wire.apply.typed import TypedError, _shape, _with_zero, item_key
from fakekube.api.wire.apply.types import LIST, MAP, TypeNode

_LEAF, _MAP, _LIST = 0, 1, 2
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
    if isinstance(zero, dict):
        return _present_struct(value, node)
    if zero is None:
        return _present_null(value, node)
    return None if value == zero and type(value) is type(zero) else {}  # a zero scalar: changed or not


def _new(value: Any, node: TypeNode) -> FieldSet:
    """A subtree the empty object lacks: every node in it is added."""
    shape = _shape(node, value)
    if shape == _MAP and isinstance(value, dict) and value:
        value = _with_zero(value, node)
        out: FieldSet = {".": {}}
        for key in sorted(value):
            out["f:" + key] = _new(value[key], node.field(key))
        return out
    if shape == _LIST and isinstance(value, list) and value:
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
    if not isinstance(value, dict):
        return {}  # a leaf that differs from {}
    if not value:
        return None
    if _shape(node, value) == _LEAF:  # an atomic struct: one field, changed from {}
        return {}
    out: FieldSet = {}
    for key in sorted(value):
        if key in skip:
            continue
        sub = _child(value[key], node.field(key), node.present.get(key, _ABSENT))
        if sub is not None:
            out["f:" + key] = sub
    return out or None


def _present_null(value: Any, node: TypeNode) -> FieldSet | None:
    """A field whose empty value is null (a pointer, slice or map without omitempty)."""
    if value is None:
        return None
    shape = _shape(node, value)
    if shape == _MAP and isinstance(value, dict) and value:
        value = _with_zero(value, node)
        return {"f:" + key: _new(value[key], node.field(key)) for key in sorted(value)}
    if shape == _LIST and isinstance(value, list) and value:
        return _items(value, node)
    return {}


__all__ = ["Fallback", "TypedError", "created_fields", "LIST", "MAP"]
