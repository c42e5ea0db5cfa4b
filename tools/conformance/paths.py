"""A small path language over JSON values, for captures, polls and body selections.

``metadata.name``, ``items[0].metadata.name``, ``status.conditions[type=Established].status``,
``definitions["io.k8s.api.core.v1.ConfigMap"]`` (a key holding dots), ``.`` (the whole value).
A filter ``[k=v]`` picks the first list item whose ``k`` is the string ``v``.
"""

from __future__ import annotations

import re
from typing import Any

_TOKEN = re.compile(r'\.?([A-Za-z0-9_$@\-/]+)|\["((?:[^"\\]|\\.)*)"\]|\[(\d+)\]|\[([^=\]]+)=([^\]]*)\]')

#: What :func:`get` answers for a path that leads nowhere (distinct from a JSON null).
MISSING = object()

Segment = tuple[str, Any]


def parse(path: str) -> list[Segment]:
    """The path's segments: ("key", name), ("index", n) or ("filter", (key, value))."""
    if path in ("", "."):
        return []
    segments: list[Segment] = []
    pos = 0
    while pos < len(path):
        match = _TOKEN.match(path, pos)
        if match is None:
            raise ValueError(f"bad path {path!r} at {path[pos:]!r}")
        key, quoted, index, fkey, fvalue = match.groups()
        if key is not None:
            segments.append(("key", key))
        elif quoted is not None:
            segments.append(("key", quoted.replace('\\"', '"')))
        elif index is not None:
            segments.append(("index", int(index)))
        else:
            segments.append(("filter", (fkey, fvalue)))
        pos = match.end()
    return segments


def get(value: Any, path: str) -> Any:
    """The value at ``path``, or :data:`MISSING`."""
    for kind, arg in parse(path):
        value = _step(value, kind, arg)
        if value is MISSING:
            return MISSING
    return value


def _step(value: Any, kind: str, arg: Any) -> Any:
    if kind == "key":
        return value.get(arg, MISSING) if isinstance(value, dict) else MISSING
    if kind == "index":
        return value[arg] if isinstance(value, list) and -len(value) <= arg < len(value) else MISSING
    key, wanted = arg
    if not isinstance(value, list):
        return MISSING
    for item in value:
        if isinstance(item, dict) and str(item.get(key)) == wanted:
            return item
    return MISSING


def select(value: Any, paths: list[str]) -> dict[str, Any]:
    """``{path: value at path}`` for each path (absent ones as ``"<missing>"``): how a step
    keeps samples of a large body (an OpenAPI document) instead of all of it."""
    out: dict[str, Any] = {}
    for path in paths:
        found = get(value, path)
        out[path] = "<missing>" if found is MISSING else found
    return out
