"""Pruning: what a custom resource loses before it is stored (structuralpruning).

Fields the schema does not specify are dropped unless an enclosing schema says
``x-kubernetes-preserve-unknown-fields``; at the resource root and in every
``x-kubernetes-embedded-resource`` object, ``apiVersion``, ``kind`` and ``metadata``
are kept, and ``metadata`` keeps exactly ObjectMeta's fields (upstream round-trips it
through the typed ObjectMeta). Nulls of non-nullable fields without a default go too
(``PruneNonNullableNullsWithoutDefaults``). The dropped paths come back for
fieldValidation in upstream's order: the root's metadata first, then the pruned paths
sorted, then unknown fields of embedded resources' metadata.
"""

from __future__ import annotations

from typing import Any

from fakekube.api.wire.structural.node import NO_DEFAULT, Node

META_FIELDS = frozenset(("apiVersion", "kind", "metadata"))

#: metav1.ObjectMeta's JSON fields (what a typed round trip keeps).
OBJECT_META_FIELDS = frozenset((
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
    "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
    "ownerReferences", "finalizers", "managedFields",
))


def prune_object(obj: dict[str, Any], root: Node) -> list[str]:
    """Prune a whole custom resource in place; the dropped fields' paths."""
    meta_unknown = prune_metadata(obj.get("metadata"), "metadata")
    pruned: list[str] = []
    _prune(obj, root, "", pruned, resource_root=True)
    embedded: list[str] = []
    if root.has_embedded:
        _embedded_metadata(obj, root, "", embedded, resource_root=True)
    return meta_unknown + sorted(pruned) + embedded


def prune_metadata(meta: Any, path: str) -> list[str]:
    """Drop the keys of ``meta`` that ObjectMeta lacks; their paths."""
    if not isinstance(meta, dict):
        return []
    unknown = [key for key in meta if key not in OBJECT_META_FIELDS]
    for key in unknown:
        del meta[key]
    return [f"{path}.{key}" for key in unknown]


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _prune(value: Any, node: Node | None, path: str, found: list[str], resource_root: bool = False) -> None:
    if node is not None and node.preserve_unknown:
        _skip_prune(value, node, path, found, resource_root)
        return
    embedded = resource_root or (node is not None and node.embedded)
    if isinstance(value, dict):
        if node is None:
            for key in list(value):
                found.append(_join(path, key))
                del value[key]
            return
        _prune_fields(value, node, path, found, embedded, drop_unknown=True)
    elif isinstance(value, list):
        items = node.items if node is not None else None
        for index, element in enumerate(value):
            _prune(element, items, f"{path}[{index}]", found)


def _skip_prune(value: Any, node: Node, path: str, found: list[str], resource_root: bool) -> None:
    """Under x-kubernetes-preserve-unknown-fields: unknown fields stay, known ones are pruned."""
    embedded = resource_root or node.embedded
    if isinstance(value, dict):
        _prune_fields(value, node, path, found, embedded, drop_unknown=False)
    elif isinstance(value, list) and node.items is not None:
        for index, element in enumerate(value):
            _skip_prune(element, node.items, f"{path}[{index}]", found, False)


def _prune_fields(value: dict[str, Any], node: Node, path: str, found: list[str], embedded: bool,
                  drop_unknown: bool) -> None:
    """Prune the fields of ``value`` the schema knows (a property, or additionalProperties);
    drop (and report, in key order) the ones it does not know when ``drop_unknown``, else
    keep them (x-kubernetes-preserve-unknown-fields). The metadata fields of an embedded
    resource are neither."""
    for key in list(value):
        if embedded and key in META_FIELDS:
            continue
        child = node.properties.get(key)
        if child is not None or node.additional_allows is not None:
            sub = child if child is not None else node.additional
            if not _drop_null(value, key, sub):
                _prune(value[key], sub, _join(path, key), found)
        elif drop_unknown:
            if key not in META_FIELDS or path:
                found.append(_join(path, key))
            del value[key]


def _drop_null(obj: dict[str, Any], key: str, node: Node | None) -> bool:
    """PruneNonNullableNullsWithoutDefaults for one field: drop a null the schema does not
    allow and cannot default. True if it went."""
    if obj[key] is None and node is not None and not node.nullable and node.default is NO_DEFAULT:
        del obj[key]
        return True
    return False


def _embedded_metadata(value: Any, node: Node | None, path: str, found: list[str], resource_root: bool = False) -> None:
    """Prune ObjectMeta's unknown fields in nested embedded resources (schemaobjectmeta.Coerce)."""
    if node is None:
        return
    if isinstance(value, dict):
        if node.embedded and not resource_root:
            found.extend(prune_metadata(value.get("metadata"), _join(path, "metadata")))
        for key, sub in value.items():
            child = node.properties.get(key)
            if child is not None:
                _embedded_metadata(sub, child, _join(path, key), found)
            elif node.additional is not None:
                _embedded_metadata(sub, node.additional, _join(path, key), found)
    elif isinstance(value, list):
        for index, element in enumerate(value):
            _embedded_metadata(element, node.items, f"{path}[{index}]", found)
