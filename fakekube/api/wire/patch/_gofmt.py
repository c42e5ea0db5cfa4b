"""Render JSON values the way Go's ``fmt`` prints decoded ``interface{}`` values.

Upstream's patch errors embed values with ``%v`` (``map: map[image:nginx] does not
contain declared merge key: name``); users and tests match on that text.
"""

from __future__ import annotations

from typing import Any

from fakekube.api.machinery.errors import go_float


def go_value(value: Any) -> str:
    """``%v`` of a value decoded by encoding/json (maps print with sorted keys)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_value(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_value(v) for v in value) + "]"
    return str(value)


def go_type(value: Any) -> str:
    """The ``reflect.TypeOf`` name of a decoded JSON value, for ErrBadArgType messages."""
    if value is None:
        return "%!s(<nil>)"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "map[string]interface {}"
    return "[]interface {}"
