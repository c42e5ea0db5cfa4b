"""Walks of an object alongside its :class:`~.types.TypeNode`: structured-merge-diff's
``typed`` package (ToFieldSet, Compare, Merge, RemoveItems) over JSON dicts.

``MISSING`` stands for an absent value (Go's nil ``value.Value``), distinct from JSON
null. Lists and maps are walked granularly unless atomic; everything else is a leaf,
compared by value. A list item is addressed by its key fields (``k:``), by its value in
a set (``v:``); an item whose key fields are missing raises :class:`TypedError`, as
upstream fails to convert such an object.
"""

from __future__ import annotations

from typing import Any

from fakekube.api.wire.apply.fieldsets import (FieldSet, children, field_key, insert, is_member, keys_key,
                                               value_key)
from fakekube.api.wire.apply.types import DEDUCED, LIST, MAP, SCALAR, UNTYPED, TypeNode
from fakekube.objects.syntax import go_quote

MISSING: Any = object()

_LEAF, _MAP, _LIST = 0, 1, 2


class TypedError(ValueError):
    """The object does not fit its type (upstream: "failed to create typed ... object")."""


def _shape(node: TypeNode, value: Any) -> int:
    kind = node.kind
    if kind == MAP:
        if node.atomic:
            return _LEAF
        return _MAP if value is None or isinstance(value, dict) else _LEAF
    if kind == LIST:
        if node.atomic or node.keys is None:
            return _LEAF
        return _LIST if value is None or isinstance(value, list) else _LEAF
    if kind == DEDUCED:
        return _MAP if isinstance(value, dict) else _LEAF
    return _LEAF


def _pair_shape(node: TypeNode, lhs: Any, rhs: Any) -> int:
    if lhs is MISSING:
        return _shape(node, rhs)
    if rhs is MISSING:
        return _shape(node, lhs)
    left, right = _shape(node, lhs), _shape(node, rhs)
    return left if left == right else _LEAF


def item_key(node: TypeNode, item: Any) -> str:
    """The path element of a list item (``listItemToPathElement``)."""
    keys = node.keys
    if keys:
        if not isinstance(item, dict):
            raise TypedError("associative list with keys may not have non-map elements")
        fields = []
        for name in keys:
            if name in item:
                fields.append((name, item[name]))
            elif name in node.key_defaults:
                fields.append((name, node.key_defaults[name]))
            else:
                raise TypedError(f"associative list with keys has an element that omits key field {name!r} "
                                 "(and doesn't have default value)".replace("'", '"'))
        return keys_key(fields)
    if isinstance(item, (dict, list)):
        raise TypedError("associative list without keys has an element that's a map type"
                         if isinstance(item, dict) else "associative list without keys has an element that's a list type")
    return value_key(item)


def _map_items(value: Any, node: TypeNode) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _with_zero(value: Any, node: TypeNode) -> Any:
    """A struct as Go holds it: the fields its zero value writes are there (``{}``/null)."""
    if not node.present or not isinstance(value, dict):
        return value
    missing = [key for key in node.present if key not in value]
    if not missing:
        return value
    filled = dict(value)
    for key in missing:
        zero = node.present[key]
        filled[key] = {} if isinstance(zero, dict) else zero
    return filled


# -- ToFieldSet ---------------------------------------------------------------
def field_set(obj: Any, node: TypeNode) -> FieldSet:
    """Every field the object sets, as upstream's ``ToFieldSet`` (struct fields holding a
    non-empty map are implied by their children, not members themselves)."""
    out: FieldSet = {}
    _fs_children(out, obj, node)
    return out


def _fs_children(out: FieldSet, value: Any, node: TypeNode) -> None:
    shape = _shape(node, value)
    if shape == _MAP:
        for key, child in _map_items(value, node).items():
            child_node = node.field(key)
            sub: FieldSet = {}
            _fs_children(sub, child, child_node)
            declared = node.kind == MAP and key in node.fields
            member = child is None or (isinstance(child, dict) and not child) or not declared
            if _shape(child_node, child) == _LEAF:
                member = True
            if member or sub:
                out[field_key(key)] = _join(member, sub)
    elif shape == _LIST and isinstance(value, list):
        seen: dict[str, int] = {}
        keys = [item_key(node, item) for item in value]
        for key in keys:
            seen[key] = seen.get(key, 0) + 1
        elem = node.elem or TypeNode(SCALAR)
        for key, item in zip(keys, value):
            if seen[key] > 1:
                out[key] = {}
                continue
            sub = {}
            _fs_children(sub, item, elem)
            out[key] = _join(True, sub)


def _join(member: bool, sub: FieldSet) -> FieldSet:
    if not sub:
        return {}
    if member:
        return {".": {}, **sub}
    return sub


# -- Compare ------------------------------------------------------------------
class Comparison:
    """Fields ``rhs`` added, changed and removed relative to ``lhs``."""

    __slots__ = ("added", "modified", "removed")

    def __init__(self) -> None:
        self.added: FieldSet = {}
        self.modified: FieldSet = {}
        self.removed: FieldSet = {}

    def is_same(self) -> bool:
        return not (self.added or self.modified or self.removed)


def compare(lhs: Any, rhs: Any, node: TypeNode) -> Comparison:
    """``TypedValue.Compare``: the root is compared as a map of its fields."""
    result = Comparison()
    _compare_children(result, (), _with_zero(lhs, node), _with_zero(rhs, node), node)
    return result


def _compare(result: Comparison, path: tuple[str, ...], lhs: Any, rhs: Any, node: TypeNode) -> None:
    shape = _pair_shape(node, lhs, rhs)
    if shape != _LEAF:
        l_value = lhs if lhs is not MISSING else None
        r_value = rhs if rhs is not MISSING else None
        if _is_empty(l_value) and _is_empty(r_value):
            shape = _LEAF  # emptyPromoteToLeaf
    if shape == _LEAF:
        if lhs is MISSING:
            insert(result.added, path)
        elif rhs is MISSING:
            insert(result.removed, path)
        elif not _equal(lhs, rhs):
            insert(result.modified, path)
        return
    if shape == _MAP:
        _compare_children(result, path, _with_zero(lhs, node), _with_zero(rhs, node), node)
    else:
        _compare_items(result, path, lhs, rhs, node)
    if lhs is MISSING:
        insert(result.added, path)
    elif rhs is MISSING:
        insert(result.removed, path)


def _is_empty(value: Any) -> bool:
    return value is None or (isinstance(value, (dict, list)) and not value)


def _compare_children(result: Comparison, path: tuple[str, ...], lhs: Any, rhs: Any, node: TypeNode) -> None:
    left = lhs if isinstance(lhs, dict) else {}
    right = rhs if isinstance(rhs, dict) else {}
    for key, l_child in left.items():
        _compare(result, path + (field_key(key),), l_child, right.get(key, MISSING), node.field(key))
    for key, r_child in right.items():
        if key not in left:
            _compare(result, path + (field_key(key),), MISSING, r_child, node.field(key))


def _index(node: TypeNode, items: Any) -> tuple[list[str], dict[str, list[Any]]]:
    order: list[str] = []
    grouped: dict[str, list[Any]] = {}
    for item in items if isinstance(items, list) else ():
        key = item_key(node, item)
        if key in grouped:
            grouped[key].append(item)
        else:
            grouped[key] = [item]
            order.append(key)
    return order, grouped


def _compare_items(result: Comparison, path: tuple[str, ...], lhs: Any, rhs: Any, node: TypeNode) -> None:
    l_order, l_items = _index(node, lhs if lhs is not MISSING else None)
    r_order, r_items = _index(node, rhs if rhs is not MISSING else None)
    elem = node.elem or TypeNode(SCALAR)
    for key in l_order + [k for k in r_order if k not in l_items]:
        l_list, r_list = l_items.get(key, []), r_items.get(key, [])
        item_path = path + (key,)
        if len(l_list) <= 1 and len(r_list) <= 1:
            _compare(result, item_path, l_list[0] if l_list else MISSING, r_list[0] if r_list else MISSING, elem)
        elif len(l_list) >= 2 and len(r_list) >= 2:
            if not _equal(l_list, r_list):
                insert(result.modified, item_path)
        elif len(l_list) >= 2:
            if r_list:
                _compare(result, item_path, MISSING, r_list[0], elem)
            insert(result.removed, item_path)
        else:
            if l_list:
                _compare(result, item_path, l_list[0], MISSING, elem)
            insert(result.added, item_path)


def _equal(a: Any, b: Any) -> bool:
    """Values equal as upstream compares them (an int and the same float are equal)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b if isinstance(a, bool) and isinstance(b, bool) else False
    return a == b


# -- Merge --------------------------------------------------------------------
def merge(lhs: Any, rhs: Any, node: TypeNode) -> Any:
    """``TypedValue.Merge``: the applied configuration ``rhs`` over the live ``lhs``."""
    return _merge(lhs, rhs, node)


def _merge(lhs: Any, rhs: Any, node: TypeNode) -> Any:
    if rhs is MISSING:
        return lhs
    if lhs is MISSING:
        return rhs
    shape = _pair_shape(node, lhs, rhs)
    if shape == _LEAF:
        return rhs
    if shape == _MAP:
        left = lhs if isinstance(lhs, dict) else {}
        right = rhs if isinstance(rhs, dict) else {}
        if not left and not right:
            return rhs
        out = {}
        for key, l_child in left.items():
            out[key] = _merge(l_child, right.get(key, MISSING), node.field(key))
        for key, r_child in right.items():
            if key not in left:
                out[key] = r_child
        return out
    return _merge_items(lhs, rhs, node)


def _merge_items(lhs: Any, rhs: Any, node: TypeNode) -> Any:
    left = lhs if isinstance(lhs, list) else []
    right = rhs if isinstance(rhs, list) else []
    if not left and not right:
        return rhs
    elem = node.elem or TypeNode(SCALAR)
    r_keys = [item_key(node, item) for item in right]
    r_items: dict[str, Any] = {}
    for key, item in zip(r_keys, right):
        if key in r_items:
            raise TypedError(f"duplicate entries for key {_key_text(key)}")
        r_items[key] = item
    l_keys = [item_key(node, item) for item in left]
    l_items: dict[str, Any] = {}
    for key, item in zip(l_keys, left):
        l_items[key] = None if key in l_items else item
    shared = [key for key in r_keys if key in l_items]
    out: list[Any] = []
    merged: set[str] = set()
    next_shared = shared.pop(0) if shared else None
    li = ri = 0
    while li < len(l_keys) or ri < len(r_keys):
        if li < len(l_keys) and ri < len(r_keys):
            key = l_keys[li]
            if key == r_keys[ri]:
                merged.add(key)
                out.append(_merge(l_items[key], r_items[key], elem))
                li += 1
                ri += 1
                next_shared = shared.pop(0) if shared else None
                continue
            if key in r_items and next_shared is not None and next_shared != key:
                li += 1
                continue
        if li < len(l_keys):
            key = l_keys[li]
            if key not in r_items:
                out.append(left[li])
                li += 1
                continue
            if key in merged:
                li += 1
        if ri < len(r_keys):
            key = r_keys[ri]
            merged.add(key)
            out.append(_merge(l_items.get(key, MISSING), r_items[key], elem))
            ri += 1
            if next_shared is not None and next_shared == key:
                next_shared = shared.pop(0) if shared else None
    return out


def _key_text(key: str) -> str:
    from fakekube.api.wire.apply.fieldsets import path_string

    return path_string((key,))


# -- RemoveItems --------------------------------------------------------------
def remove_items(obj: Any, to_remove: FieldSet, node: TypeNode) -> Any:
    """The object without the members of ``to_remove`` (and what is under them). A map or
    list emptied by the removal is dropped, as Go's nil value is omitted."""
    if not to_remove:
        return obj
    result = _remove(obj, to_remove, node)
    return result if result is not MISSING else {}


def _remove(value: Any, to_remove: FieldSet, node: TypeNode) -> Any:
    shape = _shape(node, value)
    if shape == _MAP and isinstance(value, dict) and value:
        out = {}
        for key, child in value.items():
            sub = to_remove.get(field_key(key))
            if sub is not None and is_member(sub):
                continue
            if sub:
                child = _remove(child, sub, node.field(key))
                if child is MISSING:
                    continue
            out[key] = child
        return out if out else MISSING
    if shape == _LIST and isinstance(value, list) and value:
        elem = node.elem or TypeNode(SCALAR)
        items = []
        for item in value:
            sub = to_remove.get(item_key(node, item))
            if sub is not None and is_member(sub):
                continue
            if sub:
                item = _remove(item, sub, elem)
                if item is MISSING:
                    item = None
            items.append(item)
        return items if items else MISSING
    return value


def ensure_named_fields_are_members(fields: FieldSet, node: TypeNode) -> FieldSet:
    """Every declared struct field with children in the set becomes a member itself
    (``Set.EnsureNamedFieldsAreMembers``)."""
    out: FieldSet = {}
    if "." in fields:
        out["."] = {}
    for key, child in children(fields):
        child_node = _child_node(node, key)
        sub = ensure_named_fields_are_members(child, child_node) if child else {}
        named = key.startswith("f:") and node.kind == MAP and key[2:] in node.fields
        if sub and named and "." not in sub:
            sub = {".": {}, **sub}
        out[key] = sub
    return out


def _child_node(node: TypeNode, key: str) -> TypeNode:
    if key.startswith("f:"):
        return node.field(key[2:]) if node.kind in (MAP, DEDUCED) else TypeNode(UNTYPED)
    return node.elem if node.kind == LIST and node.elem is not None else TypeNode(UNTYPED)


# -- Validation ---------------------------------------------------------------
def undeclared(obj: Any, node: TypeNode, limit: int = 100) -> list[str]:
    """Fields the type does not declare and scalars of the wrong type, as upstream's typed
    conversion reports them (``.spec.foo: field not declared in schema``, ``.data.x:
    expected string, got &value.valueUnstructured{Value:true}``); at most ``limit``."""
    found: list[str] = []
    _undeclared(obj, node, "", found, limit)
    return found


_EXPECTED = {"string": "string", "numeric": "numeric (int or float)", "boolean": "boolean"}


def _scalar_problem(value: Any, scalar: str) -> str | None:
    """SMD's ``validateScalar``: the value's JSON type must be the scalar's (null passes)."""
    fits = {"string": isinstance(value, str), "boolean": isinstance(value, bool),
            "numeric": isinstance(value, (int, float)) and not isinstance(value, bool)}[scalar]
    if fits:
        return None
    return f"expected {_EXPECTED[scalar]}, got &value.valueUnstructured{{Value:{_go_sharp(value)}}}"


def _go_sharp(value: Any) -> str:
    """Go's ``%#v`` of a value decoded from JSON into ``interface{}``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, float):
        return repr(value) if value != int(value) or abs(value) >= 1e21 else f"{value:.1f}"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(_go_sharp(item) for item in value) + "}"
    if isinstance(value, dict):
        return "map[string]interface {}{" + ", ".join(f"{go_quote(str(k))}:{_go_sharp(v)}"
                                                   for k, v in sorted(value.items())) + "}"
    return "<nil>"


def _undeclared(value: Any, node: TypeNode, path: str, found: list[str], limit: int) -> None:
    if len(found) >= limit:
        return
    if node.kind == MAP and isinstance(value, dict):
        for key, child in value.items():
            if key not in node.fields and node.elem is None:
                found.append(f"{path}.{key}: field not declared in schema")
                continue
            _undeclared(child, node.field(key), f"{path}.{key}", found, limit)
    elif node.kind == SCALAR and node.scalar and value is not None:
        problem = _scalar_problem(value, node.scalar)
        if problem:
            found.append(f"{path}: {problem}")
    elif node.kind == LIST and isinstance(value, list) and node.elem is not None:
        for index, item in enumerate(value):
            if node.keys is not None and not node.atomic:
                try:
                    label = _key_text(item_key(node, item))
                except TypedError as exc:
                    found.append(f"{path}: element {index}: {exc}")
                    continue
            else:
                label = f"[{index}]"
            _undeclared(item, node.elem, path + label, found, limit)
