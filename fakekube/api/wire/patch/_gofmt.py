"""Render JSON values the way Go's ``fmt`` prints decoded ``interface{}`` values.

Upstream's patch errors embed values with ``%v`` (``map: map[image:nginx] does not
contain declared merge key: name``); users and tests match on that text.
"""

from __future__ import annotations

from typing import Any


def go_value(value: Any) -> str:
    """``%v`` of a value decoded by encoding/json (maps print with sorted keys)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _go_float(value)
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_value(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_value(v) for v in value) + "]"
    return str(value)


def _go_float(value: float) -> str:
    """Go's ``%v`` of a float64: shortest round-trip digits, %e form when exp < -4 or >= 6."""
    if value != value or value in (float("inf"), float("-inf")):
        return {"nan": "NaN", "inf": "+Inf", "-inf": "-Inf"}[repr(value)]
    sci = "%.*e" % (_shortest_precision(abs(value)), abs(value))
    head, _, exp_part = sci.partition("e")
    exponent = int(exp_part)
    sign = "-" if value < 0 else ""
    if exponent < -4 or exponent >= 6:
        return f"{sign}{head}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    return sign + repr(abs(value)).removesuffix(".0")


def _shortest_precision(value: float) -> int:
    """Digits after the point needed in %e form to round-trip ``value``."""
    for precision in range(17):
        if float("%.*e" % (precision, value)) == value:
            return precision
    return 17


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
