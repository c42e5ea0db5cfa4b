"""Small helpers for JSON-shaped objects (the wire form every part passes around)."""

from __future__ import annotations

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
