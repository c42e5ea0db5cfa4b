"""Custom resource types: what an established CustomResourceDefinition serves.

:func:`custom_resource_types` turns a stored CRD into one :class:`ResourceType` per served
version, named by the CRD's ``status.acceptedNames`` as upstream's crdHandler serves
them. Their :class:`CustomResourceStrategy` runs the version's compiled schema
(``wire.structural``: default, validate, validate_update; pruning happens when the body
is decoded, in the verbs) and upstream's ``customResourceStrategy`` rules: generation 1 at
create, +1 on any change outside metadata (status excluded when the status subresource is
on), status reset on create and kept on update when it is a subresource, scale paths that
must hold integers.
"""

from __future__ import annotations

from typing import Any

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FieldError
from fakekube.api.registry import (
    SCALE,
    STATUS,
    CustomResource,
    ResourceType,
    ScalePaths,
    Strategy,
    WriteContext,
)
from fakekube.api.table.custom import custom_table
from fakekube.api.types.apiextensions import (
    NAMESPACE_SCOPED,
    condition_true,
    storage_version,
    versions_of,
)
from fakekube.api.wire.structural import CompiledSchema, compile_schema

Obj = dict[str, Any]

#: The verbs a custom resource serves, in the order upstream's discovery lists them.
CUSTOM_VERBS = ("delete", "deletecollection", "get", "list", "patch", "create", "update", "watch")
#: What discovery lists while the CRD is terminating (creates are refused then).
TERMINATING_VERBS = ("delete", "deletecollection", "get", "list", "watch")
MAX_INT32 = 2**31 - 1


class CustomResourceStrategy(Strategy):
    """One CRD version's write rules."""

    tracks_generation = True

    def __init__(self, compiled: CompiledSchema, status_enabled: bool, scale: ScalePaths | None,
                 api_version: str = "", kind: str = "") -> None:
        self.compiled = compiled
        #: Objects are validated as upstream sees them: unstructured, with apiVersion and kind.
        self.type_meta = {"apiVersion": api_version, "kind": kind}
        self.status_enabled = status_enabled
        self.scale = scale

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        self.compiled.default(obj)

    def _typed(self, obj: Obj) -> Obj:
        return {**self.type_meta, **obj}

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        if self.status_enabled:
            obj.pop("status", None)

    def validate(self, obj: Obj) -> list[FieldError]:
        return self.compiled.validate(self._typed(obj)) + self._scale_problems(obj)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return self.compiled.validate_update(self._typed(new), self._typed(old)) + self._scale_problems(new)

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return self.compiled.validate_update(self._typed(new), self._typed(old)) + self._scale_problems(new)

    def _scale_problems(self, obj: Obj) -> list[FieldError]:
        """``ValidateScaleSpec``/``ValidateScaleStatus``: replicas are non-negative int32s,
        the label selector a string, wherever the scale paths point."""
        if self.scale is None:
            return []
        problems: list[FieldError] = []
        for path in (self.scale.spec_replicas_path, self.scale.status_replicas_path):
            problems += _replicas_problems(obj, path)
        if self.scale.label_selector_path:
            value, found = nested(obj, self.scale.label_selector_path)
            if found and not isinstance(value, str):
                problems.append(errors.invalid(self.scale.label_selector_path, value,
                                               f"{self.scale.label_selector_path} accessor error: {_go_value(value)} "
                                               f"is of the type {_go_type(value)}, expected string"))
        return problems


def _replicas_problems(obj: Obj, path: str) -> list[FieldError]:
    value, found = nested(obj, path)
    if not found:
        return []
    if not isinstance(value, int) or isinstance(value, bool):
        return [errors.invalid(path, 0, f"{path} accessor error: {_go_value(value)} is of the type "
                                         f"{_go_type(value)}, expected int64")]
    if value < 0:
        return [errors.invalid(path, value, "should be a non-negative integer")]
    if value > MAX_INT32:
        return [errors.invalid(path, value, f"should be less than or equal to {MAX_INT32}")]
    return []


def nested(obj: Any, path: str) -> tuple[Any, bool]:
    """The value at a simple ``.a.b`` path, and whether it is there."""
    value = obj
    for part in path.strip(".").split("."):
        if not isinstance(value, dict) or part not in value:
            return None, False
        value = value[part]
    return value, True


def _go_type(value: Any) -> str:
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
    if isinstance(value, list):
        return "[]interface {}"
    return "<nil>"


def _go_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return errors.go_float(value)
    if value is None:
        return "<nil>"
    return str(value)


def _scale_paths(version: Obj) -> ScalePaths | None:
    scale = (version.get("subresources") or {}).get("scale")
    if not isinstance(scale, dict):
        return None
    return ScalePaths(scale.get("specReplicasPath") or "", scale.get("statusReplicasPath") or "",
                      scale.get("labelSelectorPath") or "")


def served(crd: Obj) -> bool:
    """Upstream's crdHandler serves a CRD once its names are accepted and it is established;
    fakekube waits for Established (set at the same instant as NamesAccepted)."""
    return condition_true(crd, "Established")


def custom_resource_types(crd: Obj) -> tuple[ResourceType, ...]:
    """The types an established CRD serves, one per served version (none otherwise)."""
    if not served(crd):
        return ()
    spec = crd.get("spec") or {}
    accepted = (crd.get("status") or {}).get("acceptedNames") or {}
    kind, plural = accepted.get("kind") or "", accepted.get("plural") or ""
    if not kind or not plural:
        return ()
    terminating = condition_true(crd, "Terminating")
    stored = storage_version(crd)
    types = []
    for version in versions_of(crd):
        if not version.get("served"):
            continue
        schema = ((version.get("schema") or {}).get("openAPIV3Schema")) or {"type": "object"}
        subresources = version.get("subresources") or {}
        status_enabled = isinstance(subresources.get("status"), dict)
        scale = _scale_paths(version)
        custom = CustomResource(
            crd_name=(crd.get("metadata") or {}).get("name") or "",
            singular=accepted.get("singular") or kind.lower(),
            list_kind=accepted.get("listKind") or f"{kind}List",
            storage_version=stored, scale=scale, terminating=terminating)
        types.append(ResourceType(
            spec.get("group") or "", version.get("name") or "", kind, plural,
            namespaced=spec.get("scope") == NAMESPACE_SCOPED,
            short_names=tuple(accepted.get("shortNames") or ()),
            categories=tuple(accepted.get("categories") or ()),
            verbs=CUSTOM_VERBS,
            subresources=tuple(s for s, on in ((STATUS, status_enabled), (SCALE, scale is not None)) if on),
            strategy=CustomResourceStrategy(compile_schema(schema), status_enabled, scale,
                                            f"{spec.get('group') or ''}/{version.get('name') or ''}", kind),
            table=custom_table(version.get("additionalPrinterColumns")),
            schema=schema, custom=custom,
        ))
    return tuple(types)
