"""The checks a custom resource gets besides OpenAPI validation: x-kubernetes-list-type
``set``/``map`` uniqueness (structurallisttype) and the apiVersion/kind of embedded
resources (schemaobjectmeta.Validate)."""

from __future__ import annotations

import json
import re
from typing import Any

from fakekube.api.machinery.errors import FieldError, duplicate, invalid, required
from fakekube.api.machinery.validation import name_is_path_segment, validate_object_meta
from fakekube.api.wire.structural.node import Node

_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def list_sets_and_maps(value: Any, node: Node | None, path: str = "") -> list[FieldError]:
    """``Duplicate value`` for each repeated item of a set or repeated key of a map list."""
    if node is None or not node.has_list_types:
        return []
    errs: list[FieldError] = []
    if isinstance(value, dict):
        if node.additional is not None:
            for key, sub in value.items():
                errs += list_sets_and_maps(sub, node.additional, f"{path}[{key}]")
        for key, sub in value.items():
            prop = node.properties.get(key)
            if prop is not None:
                errs += list_sets_and_maps(sub, prop, _child(path, key))
    elif isinstance(value, list):
        if node.list_type == "set":
            errs += [duplicate(f"{path}[{i}]", value[i]) for i in _repeats(value)]
        elif node.list_type == "map":
            errs += _list_map(value, node, path)
        for index, element in enumerate(value):
            errs += list_sets_and_maps(element, node.items, f"{path}[{index}]")
    return errs


def _repeats(values: list[Any]) -> list[int]:
    """Indexes of each value's second occurrence (upstream reports only that one)."""
    seen: dict[str, int] = {}
    repeats = []
    for index, value in enumerate(values):
        key = json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else repr((type(value).__name__, value))
        seen[key] = seen.get(key, 0) + 1
        if seen[key] == 2:
            repeats.append(index)
    return repeats


def _list_map(items: list[Any], node: Node, path: str) -> list[FieldError]:
    for index, item in enumerate(items):
        if item is not None and not isinstance(item, dict):
            return [invalid(f"{path}[{index}]", item, "must be an object for an array of list-type map")]
    if len(items) <= 1:
        return []
    keys = [{k: item[k] for k in node.map_keys if k in item} if isinstance(item, dict) else {} for item in items]
    return [duplicate(f"{path}[{i}]", keys[i]) for i in _repeats(keys)]


def embedded_resources(value: Any, node: Node | None, path: str = "", resource_root: bool = True) -> list[FieldError]:
    """apiVersion and kind of the root and of each x-kubernetes-embedded-resource object."""
    if node is None or not (resource_root or node.has_embedded):
        return []
    errs: list[FieldError] = []
    if isinstance(value, dict):
        if resource_root or node.embedded:
            errs += _type_meta(value, path, embedded=not resource_root)
        for key, sub in value.items():
            prop = node.properties.get(key)
            if prop is not None:
                errs += embedded_resources(sub, prop, _child(path, key), False)
            elif node.additional is not None:
                errs += embedded_resources(sub, node.additional, f"{path}[{key}]", False)
    elif isinstance(value, list):
        for index, element in enumerate(value):
            errs += embedded_resources(element, node.items, f"{path}[{index}]", False)
    return errs


def _type_meta(obj: dict[str, Any], path: str, embedded: bool) -> list[FieldError]:
    errs = []
    if "apiVersion" not in obj:
        errs.append(required(_child(path, "apiVersion"), "must not be empty"))
    if "kind" not in obj:
        errs.append(required(_child(path, "kind"), "must not be empty"))
    for key in obj:
        if key == "apiVersion":
            errs += _api_version(obj[key], _child(path, key))
        elif key == "kind":
            errs += _kind(obj[key], _child(path, key))
        elif key == "metadata" and embedded and isinstance(obj[key], dict):
            errs += _object_meta(obj[key], path)
    return errs


def _object_meta(meta: dict[str, Any], path: str) -> list[FieldError]:
    """An embedded resource's metadata as ObjectMeta (a missing name is not an error:
    upstream validates with a stand-in name); paths moved under the resource."""
    meta = dict(meta, name=meta.get("name") or "fakename")
    problems = validate_object_meta(meta, bool(meta.get("namespace")), name_is_path_segment)
    return [e._replace(path=_child(path, e.path)) for e in problems]


def _api_version(value: Any, path: str) -> list[FieldError]:
    if not isinstance(value, str):
        return [invalid(path, value, "must be a string")]
    if not value:
        return [invalid(path, value, "must not be empty")]
    if value.count("/") > 1:
        return [invalid(path, value, f"unexpected GroupVersion string: {value}")]
    return []


def _kind(value: Any, path: str) -> list[FieldError]:
    if not isinstance(value, str):
        return [invalid(path, value, "must be a string")]
    if not value:
        return [invalid(path, value, "must not be empty")]
    lower = value.lower()
    problems = []
    if len(lower) > 63:
        problems.append("must be no more than 63 characters")
    if not _DNS1035.match(lower):
        problems.append("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                        "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
                        "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")
    if problems:
        return [invalid(path, value, "may have mixed case, but should otherwise match: " + ",".join(problems))]
    return []
