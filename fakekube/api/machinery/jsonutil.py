"""Small helpers for JSON-shaped objects (the wire form every part passes around)."""

from __future__ import annotations

import re
from typing import Any


def deep_copy(value: Any) -> Any:
    """Copy a JSON value (dicts, lists, scalars) — several times faster than copy.deepcopy.

    The copy is plain and mutable at every level, also of a stored object under the
    immutability guard (its frozen dicts and lists are subclasses: ``isinstance`` holds).
    """
    if isinstance(value, dict):
        return {k: deep_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [deep_copy(v) for v in value]
    return value


def get_path(obj: Any, *path: str, default: Any = None) -> Any:
    """``get_path(pod, "spec", "nodeName")`` without KeyErrors on missing levels."""
    current = obj
    for part in path:
        if not isinstance(current, dict) or part not in current:
            return default
        current = current[part]
    return current


#: How deeply JSON values may nest (objects and arrays). Upstream's decoders stop at
#: 10,000 (Go's encoding/json ``maxNestingDepth``, go-yaml's ``max_flow_level``); this
#: process walks objects recursively (copies, patches, YAML output) within Python's
#: default 1,000-frame stack, so it stops at 100 — far deeper than any Kubernetes
#: object nests (a Deployment's deepest field is about 15 levels down). At the limit a
#: body is a 400 syntax error and a patch result a 422, worded as upstream's.
MAX_NESTING_DEPTH = 100


def nests_deeper_than(value: Any, limit: int = MAX_NESTING_DEPTH) -> bool:
    """True when ``value`` has objects or arrays nested more than ``limit`` deep.

    Iterative, so it is safe on any depth; it costs one step per container.
    """
    if not isinstance(value, (dict, list)):
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        if depth > limit:
            return True
        children = current.values() if isinstance(current, dict) else current
        for child in children:
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1))
    return False


def go_marshal(value: Any, sort_keys: bool = True) -> str:
    """``json.Marshal`` of an unstructured value as Go writes it: map keys sorted, no
    spaces, UTF-8 kept, ``<``, ``>``, ``&``, U+2028 and U+2029 escaped. ``sort_keys``
    False: keys in their order, as Go compacts a ``RawExtension``'s own bytes."""
    import json
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=sort_keys)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                          ("\u2029", "\\u2029")):
        text = text.replace(char, escaped)
    return text


class _Token(str):
    """Literal JSON text queued by :func:`compact_json` between the values it encodes."""


def compact_json(value: Any) -> str:
    """``json.dumps(value, separators=(",", ":"))`` walked without recursion: the text of
    a value nested past what the C encoder's recursion allows (a patch result being
    refused for its depth shows it)."""
    import json
    out: list[str] = []
    pending: list[Any] = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, _Token):
            out.append(item)
        elif isinstance(item, dict):
            parts: list[Any] = []
            for index, (key, child) in enumerate(item.items()):
                parts += [_Token(("," if index else "") + json.dumps(key) + ":"), child]
            pending += [_Token("}"), *reversed(parts), _Token("{")]
        elif isinstance(item, list):
            parts = []
            for index, child in enumerate(item):
                parts += [_Token(",")] if index else []
                parts.append(child)
            pending += [_Token("]"), *reversed(parts), _Token("[")]
        else:
            out.append(json.dumps(item))
    return "".join(out)


def replace_lone_surrogates(value: Any) -> Any:
    """``value`` with every unpaired UTF-16 surrogate (in keys and strings) made U+FFFD.

    Go's encoding/json decodes an invalid ``\\uD800`` escape to the replacement
    character instead of failing; Python keeps the surrogate, which no encoder can write
    as UTF-8 later. Iterative, and it rebuilds only what changes.
    """
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if not isinstance(value, (dict, list)):
        return value
    root: list[Any] = [value]
    stack: list[Any] = [root]
    while stack:
        container = stack.pop()
        if isinstance(container, dict):
            for key in list(container):
                item = container[key]
                clean = _LONE_SURROGATE.sub("\ufffd", key)
                if clean != key:
                    del container[key]
                    container[clean] = item
                if isinstance(item, str):
                    container[clean] = _LONE_SURROGATE.sub("\ufffd", item)
                elif isinstance(item, (dict, list)):
                    stack.append(item)
        else:
            for index, item in enumerate(container):
                if isinstance(item, str):
                    container[index] = _LONE_SURROGATE.sub("\ufffd", item)
                elif isinstance(item, (dict, list)):
                    stack.append(item)
    return root[0]


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
