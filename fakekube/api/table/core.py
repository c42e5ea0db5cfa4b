"""Assembling a ``meta.k8s.io/v1`` Table: rows and the Table itself.

Each printer module declares its ``*_TABLE`` specs; a type's declaration names its own
(``ResourceType.table``). Types without one get upstream's default table convertor
(Name + "Created At").
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from fakekube.api.table.cells import created_at_cell, meta, name_cell, simple
from fakekube.api.table.columns import CREATED_AT, NAME, Obj, TableSpec
from fakekube.api.wire.schema import DEFAULT_KUBERNETES_VERSION

DEFAULT_TABLE = TableSpec((NAME, CREATED_AT), simple(name_cell, created_at_cell))

_INCLUDE_OBJECT = ("None", "Metadata", "Object")


class Printable(Protocol):
    """What a Table needs of a resource type (``registry.ResourceType``, which sits above
    this package and so is not imported here)."""

    @property
    def table(self) -> TableSpec | None: ...


def table_spec(resource: Printable, kubernetes_version: str = DEFAULT_KUBERNETES_VERSION) -> TableSpec:
    """The printer of a resource type in ``kubernetes_version``, or upstream's default
    convertor's Name/Created At."""
    return (resource.table or DEFAULT_TABLE).for_version(kubernetes_version)


def partial_object_metadata(obj: Obj, hidden_annotations: tuple[str, ...] = ()) -> Obj:
    """The ``PartialObjectMetadata`` a row (or a metadata-only answer) carries, without the
    type's ``hidden_annotations`` (:attr:`TableSpec.internal_annotations`)."""
    meta = obj.get("metadata") or {}
    annotations = meta.get("annotations")
    if hidden_annotations and annotations and any(key in annotations for key in hidden_annotations):
        kept = {key: value for key, value in annotations.items() if key not in hidden_annotations}
        meta = {key: value for key, value in meta.items() if key != "annotations"}
        if kept:
            meta["annotations"] = kept
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": meta}


def _row(spec: TableSpec, obj: Obj, now: datetime, include_object: str) -> Obj:
    row: Obj = {"cells": spec.cells(obj, now)}
    conditions = spec.row_conditions(obj) if spec.row_conditions else None
    if conditions:
        row["conditions"] = conditions
    if include_object == "Object":
        row["object"] = obj
    elif include_object == "Metadata":
        row["object"] = partial_object_metadata(obj, spec.internal_annotations)
    else:  # None: an empty RawExtension, which Go writes as null (omitempty skips no struct)
        row["object"] = None
    return row


def _table_metadata(objects: list[Obj], list_meta: Obj | None) -> Obj:
    """The list's metadata; for a single object, its resourceVersion, as upstream does. A
    typed ListMeta: an empty ``continue`` (a custom resource list's) is not written."""
    if list_meta is not None:
        return {key: value for key, value in list_meta.items() if value != "" or key != "continue"}
    if len(objects) == 1 and meta(objects[0], "resourceVersion"):
        return {"resourceVersion": meta(objects[0], "resourceVersion")}
    return {}


def to_table(resource: Printable, objects: list[Obj], now: datetime, include_object: str = "Metadata",
             list_meta: Obj | None = None, no_headers: bool = False,
             kubernetes_version: str = DEFAULT_KUBERNETES_VERSION) -> Obj:
    """A ``meta.k8s.io/v1`` Table of ``objects`` (one object for a GET, many for a LIST).

    ``include_object`` is the request's ``includeObject``: ``Metadata`` (default) puts a
    PartialObjectMetadata in each row, ``Object`` the full object, ``None`` nothing.
    ``list_meta`` is the list's metadata; for a single object the table carries its
    resourceVersion, as upstream does. ``no_headers`` (``TableOptions.noHeaders``, which a
    watch sets after its first event) leaves out the column definitions (JSON null). The
    printer and the columns' descriptions are ``kubernetes_version``'s.
    """
    if include_object not in _INCLUDE_OBJECT:
        raise ValueError(f"includeObject must be None, Metadata or Object, not {include_object!r}")
    spec = table_spec(resource, kubernetes_version)
    table = table_head(resource, objects, list_meta, no_headers, kubernetes_version)
    table["rows"] = [_row(spec, obj, now, include_object) for obj in objects]
    return table


def table_head(resource: Printable, objects: list[Obj], list_meta: Obj | None = None,
               no_headers: bool = False, kubernetes_version: str = DEFAULT_KUBERNETES_VERSION) -> Obj:
    """A Table without its rows (the key ``rows`` comes last, and is left to the caller)."""
    spec = table_spec(resource, kubernetes_version)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": _table_metadata(objects, list_meta),
        "columnDefinitions": None if no_headers else [c.to_dict(kubernetes_version) for c in spec.columns],
    }


def table_rows(resource: Printable, objects: list[Obj], now: datetime, include_object: str = "Metadata",
               kubernetes_version: str = DEFAULT_KUBERNETES_VERSION) -> list[Obj]:
    """The rows of ``objects``' Table: what :func:`to_table` puts under ``rows``."""
    spec = table_spec(resource, kubernetes_version)
    return [_row(spec, obj, now, include_object) for obj in objects]
