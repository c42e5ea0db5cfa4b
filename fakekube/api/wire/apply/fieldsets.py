"""Field sets in their wire form: ``FieldsV1`` dicts, operated on directly.

structured-merge-diff keeps a manager's fields as a ``fieldpath.Set`` (members plus
children, keyed by path elements) and serializes it as ``FieldsV1`` JSON. We keep the
JSON form itself as the set: a node is a dict from encoded path elements to child nodes,
and a node is a *member* when it is a leaf (``{}``) or carries the ``"."`` key. Keeping
one form means the managedFields of a stored object are used as they are, and a write
encodes nothing.

Path elements, encoded as upstream's ``FieldsV1`` keys:

- ``f:<name>`` a struct field or map key;
- ``k:{"name":"x"}`` an item of a list keyed by fields (the JSON of the key fields, by name);
- ``v:<json>`` an item of a set list, by value;
- ``i:<n>`` an item of a list by index (only in ``Removed``/``Added`` of duplicates).

Sets are never mutated once built into a result; every operation returns new dicts
(leaves may be shared, they are never written).
"""

from __future__ import annotations

import json
from typing import Any, Iterator

FieldSet = dict[str, Any]

SELF = "."


def field_key(name: str) -> str:
    return "f:" + name


def keys_key(fields: list[tuple[str, Any]]) -> str:
    """``k:{...}``: the key fields' JSON, names sorted, no spaces (Go's encoder)."""
    body = ",".join(json.dumps(name) + ":" + _json(value) for name, value in sorted(fields, key=lambda f: f[0]))
    return "k:{" + body + "}"


def value_key(value: Any) -> str:
    return "v:" + _json(value)


def index_key(index: int) -> str:
    return "i:" + str(index)


def _json(value: Any) -> str:
    """A key's value as SMD's encoder writes it (Go's: no spaces, ``<>&`` escaped)."""
    if type(value) is str and value.isprintable() and not _NEEDS_ESCAPE.intersection(value):
        return '"' + value + '"'  # the common case, without the encoder
    if type(value) is int:
        return str(value)
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                          ("\u2029", "\\u2029")):
        text = text.replace(char, escaped)
    return text


_NEEDS_ESCAPE = frozenset('"\\<>&\u2028\u2029')


def is_member(node: FieldSet) -> bool:
    """A node stands for its own path: a leaf, or an interior node marked ``.``."""
    return not node or SELF in node


def children(node: FieldSet) -> Iterator[tuple[str, FieldSet]]:
    for key, child in node.items():
        if key != SELF:
            yield key, child


def _node(member: bool, kids: dict[str, FieldSet]) -> FieldSet | None:
    """A node from its membership and children; None when it would hold nothing."""
    if not kids:
        return {} if member else None
    if member:
        return {SELF: {}, **kids}
    return kids


def union(a: FieldSet, b: FieldSet) -> FieldSet:
    """Members of either set."""
    return _union(a, b, top=True) or {}


def _union(a: FieldSet, b: FieldSet, top: bool = False) -> FieldSet | None:
    kids: dict[str, FieldSet] = {}
    for key, child in children(a):
        other = b.get(key)
        kids[key] = child if other is None else (_union(child, other) or {})
    for key, child in children(b):
        if key not in kids:
            kids[key] = child
    return _node((not top) and (is_member(a) or is_member(b)), kids)


def difference(a: FieldSet, b: FieldSet) -> FieldSet:
    """Members of ``a`` that are not members of ``b`` (``Set.Difference``: not recursive —
    a member of ``b`` does not remove ``a``'s members below it)."""
    result = _difference(a, b, top=True)
    return result or {}


def _difference(a: FieldSet, b: FieldSet, top: bool = False) -> FieldSet | None:
    if not b:
        if top:
            return a
        # b is a leaf member: it removes a's membership only.
        return _node(False, dict(children(a)))
    kids: dict[str, FieldSet] = {}
    for key, child in children(a):
        other = b.get(key)
        if other is None:
            kids[key] = child
            continue
        rest = _difference(child, other)
        if rest is not None:
            kids[key] = rest
    member = (not top) and is_member(a) and not is_member(b)
    return _node(member, kids)


def intersection(a: FieldSet, b: FieldSet) -> FieldSet:
    return _intersection(a, b, top=True) or {}


def _intersection(a: FieldSet, b: FieldSet, top: bool = False) -> FieldSet | None:
    kids: dict[str, FieldSet] = {}
    for key, child in children(a):
        other = b.get(key)
        if other is not None:
            both = _intersection(child, other)
            if both is not None:
                kids[key] = both
    member = (not top) and is_member(a) and is_member(b)
    return _node(member, kids)


def recursive_difference(a: FieldSet, b: FieldSet) -> FieldSet:
    """``a`` without every path of ``b`` and everything under ``b``'s members."""
    return _recursive_difference(a, b, top=True) or {}


def _recursive_difference(a: FieldSet, b: FieldSet, top: bool = False) -> FieldSet | None:
    kids: dict[str, FieldSet] = {}
    for key, child in children(a):
        other = b.get(key)
        if other is None:
            kids[key] = child
        elif is_member(other):
            continue
        else:
            rest = _recursive_difference(child, other)
            if rest is not None:
                kids[key] = rest
    return _node((not top) and is_member(a), kids)


def insert(root: FieldSet, path: tuple[str, ...]) -> None:
    """Add ``path`` as a member of ``root`` (a set being built, owned by the caller)."""
    node = root
    for key in path[:-1]:
        child = node.get(key)
        if child is None:
            child = node[key] = {}
        elif not child:
            child[SELF] = {}  # a leaf member gaining children stays a member
        node = child
    last = path[-1]
    child = node.get(last)
    if child is None:
        node[last] = {}
    elif child:
        child[SELF] = {}


def has(root: FieldSet, path: tuple[str, ...]) -> bool:
    node = root
    for key in path:
        node = node.get(key)  # type: ignore[assignment]
        if node is None:
            return False
    return is_member(node)


def canonical(root: FieldSet) -> FieldSet:
    """The set with ``.`` first and children in upstream's element order (fields, keyed
    items, values, indexes), as ``SetToFields`` writes it."""
    out: FieldSet = {}
    if SELF in root:
        out[SELF] = {}
    for key in sorted((k for k in root if k != SELF), key=_order):
        out[key] = canonical(root[key])
    return out


_RANK = {"f": 0, "k": 1, "v": 2, "i": 3}


def _order(key: str) -> tuple[int, Any]:
    rank = _RANK.get(key[:1], 4)
    if rank == 3:
        try:
            return rank, int(key[2:])
        except ValueError:
            return rank, key
    return rank, key[2:]


def path_string(path: tuple[str, ...]) -> str:
    """A path as ``fieldpath.Path.String()`` prints it: ``.spec.containers[name="app"].image``."""
    return "".join(_element_string(key) for key in path)


def _element_string(key: str) -> str:
    kind, body = key[:2], key[2:]
    if kind == "f:":
        return "." + body
    if kind == "i:":
        return f"[{body}]"
    try:
        decoded = json.loads(body)
    except ValueError:
        return "{{invalid path element}}"
    if kind == "k:" and isinstance(decoded, dict):
        return "[" + ",".join(f"{name}={go_string(decoded[name])}" for name in sorted(decoded)) + "]"
    if kind == "v:":
        return f"[={go_string(decoded)}]"
    return "{{invalid path element}}"


def go_string(value: Any) -> str:
    """``value.ToString``: strings quoted, numbers and booleans bare, null as ``null``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (int, float)):
        return repr(value) if isinstance(value, float) else str(value)
    if isinstance(value, list):
        return "[" + ",".join(go_string(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}={go_string(v)}" for k, v in sorted(value.items())) + "}"
    return str(value)


def validate(fields: Any, depth: int = 0) -> bool:
    """Is ``fields`` a well-formed FieldsV1 value (``FieldsToSet`` would accept it)?"""
    if not isinstance(fields, dict) or depth > 100:
        return False
    for key, child in fields.items():
        if key == SELF:
            if child != {}:
                return False
            continue
        if not isinstance(key, str) or key[:2] not in ("f:", "k:", "v:", "i:"):
            return False
        if key[:2] in ("k:", "v:"):
            try:
                json.loads(key[2:])
            except ValueError:
                return False
        if not validate(child, depth + 1):
            return False
    return True
