"""Defaulting: ``default`` values filled in (structuraldefaulting.Default).

A missing field with a default gets a copy of it, and so does a null one whose schema
is not nullable — in object properties, additionalProperties values and array items.
Defaults are applied top down, so a default object is itself defaulted inside.
"""

from __future__ import annotations

import copy
from typing import Any

from fakekube.api.wire.structural.node import NO_DEFAULT, Node


def apply_defaults(value: Any, node: Node | None) -> None:
    """Fill defaults into ``value`` in place."""
    if node is None or not node.has_defaults:
        return
    if isinstance(value, dict):
        for key, prop in node.properties.items():
            if prop.default is NO_DEFAULT:
                continue
            if key not in value or (value[key] is None and not prop.nullable):
                value[key] = copy.deepcopy(prop.default)
        extra = node.additional
        for key, sub in value.items():
            known = node.properties.get(key)
            if known is not None:
                apply_defaults(sub, known)
            elif extra is not None:
                if sub is None and not extra.nullable and extra.default is not NO_DEFAULT:
                    value[key] = sub = copy.deepcopy(extra.default)
                apply_defaults(sub, extra)
    elif isinstance(value, list):
        items = node.items
        if items is None:
            return
        for index, element in enumerate(value):
            if element is None and not items.nullable and items.default is not NO_DEFAULT:
                value[index] = element = copy.deepcopy(items.default)
            apply_defaults(element, items)
