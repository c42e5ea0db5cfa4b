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

from typing import Any, Callable

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
    WEBHOOK_CONVERTER,
    condition_true,
    storage_version,
    versions_of,
)
from fakekube.api.wire.patch._gofmt import go_type, go_value
from fakekube.api.wire.structural import CompiledSchema, compile_schema

Obj = dict[str, Any]
#: A CRD's conversion webhook: (objects with apiVersion and kind, the desired apiVersion,
#: ``<apiVersion>, Kind=<kind>`` as errors name the input) -> the objects in that version;
#: raises an ApiError when conversion fails.
Converter = Callable[[list[Obj], str, str], list[Obj]]
#: Makes the converter of a CRD's ``spec.conversion.webhook`` (the verbs own the transport).
ConverterFactory = Callable[[Obj], Converter]

#: The verbs a custom resource serves, in the order upstream's discovery lists them.
CUSTOM_VERBS = ("delete", "deletecollection", "get", "list", "patch", "create", "update", "watch")
#: What discovery lists while the CRD is terminating (creates are refused then).
TERMINATING_VERBS = ("delete", "deletecollection", "get", "list", "watch")
MAX_INT32 = 2**31 - 1


class CustomResourceStrategy(Strategy):
    """One CRD version's write rules."""

    allow_unconditional_update = False  # AllowUnconditionalUpdate: a PUT needs a resourceVersion
    tracks_generation = True

    def __init__(self, compiled: CompiledSchema, status_enabled: bool, scale: ScalePaths | None,
                 api_version: str = "", kind: str = "") -> None:
        self.compiled = compiled
        #: Objects are validated as upstream sees them: unstructured, with apiVersion and kind.
        self.type_meta = {"apiVersion": api_version, "kind": kind}
        self.status_enabled = status_enabled
        self.scale = scale

    @property
    def decoding(self) -> CompiledSchema:
        """The schema a request body is pruned by: its own version's."""
        return self.compiled

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        self.compiled.default(obj)

    def _typed(self, obj: Obj) -> Obj:
        return {**self.type_meta, **obj}

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        if self.status_enabled:
            obj.pop("status", None)

    def validate(self, obj: Obj) -> list[FieldError]:
        return self.compiled.validate(self._typed(obj), self._scale_problems(obj))

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return self.compiled.validate_update(self._typed(new), self._typed(old), self._scale_problems(new))

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return self.compiled.validate_status_update(self._typed(new), self._typed(old),
                                                    self._scale_problems(new, spec=False))

    def _scale_problems(self, obj: Obj, spec: bool = True) -> list[FieldError]:
        """``ValidateScaleSpec`` (unless ``spec`` is False: a status write checks only the
        status) and ``ValidateScaleStatus``: replicas are non-negative int32s, the label
        selector a string, wherever the scale paths point."""
        if self.scale is None:
            return []
        problems: list[FieldError] = []
        paths = (self.scale.spec_replicas_path, self.scale.status_replicas_path)
        for path in paths if spec else paths[1:]:
            problems += _replicas_problems(obj, path)
        if self.scale.label_selector_path:
            path = self.scale.label_selector_path
            value, found, error = nested_field(obj, path)
            if found and error is None and not isinstance(value, str):
                error = f"{path} accessor error: {go_value(value)} is of the type {_go_type(value)}, expected string"
            if error is not None:  # upstream shows the string it did not get: ""
                problems.append(errors.invalid(path, "", error))
        return problems


class ConvertingStrategy(CustomResourceStrategy):
    """A served version other than the storage version of a CRD converted by webhook: its
    type is ``stored_as`` the storage version, whose write rules (this strategy's) apply to
    the converted object; bodies and stored objects cross the webhook at the API's edge."""

    def __init__(self, own: CompiledSchema, storage: CustomResourceStrategy, converter: Converter,
                 api_version: str, storage_api_version: str, kind: str, list_kind: str) -> None:
        super().__init__(storage.compiled, storage.status_enabled, storage.scale, storage_api_version, kind)
        self.own = own
        self.list_kind = list_kind
        self.converter = converter
        self.api_version = api_version
        self.storage_api_version = storage_api_version
        self.kind = kind

    @property
    def decoding(self) -> CompiledSchema:
        return self.own

    def to_storage(self, obj: Obj) -> Obj:
        return self._convert(obj, self.api_version, self.storage_api_version)

    def from_storage(self, obj: Obj) -> Obj:
        return self._convert(obj, self.storage_api_version, self.api_version)

    def from_storage_all(self, objs: list[Obj]) -> list[Obj]:
        """A list's items in one webhook call (none when the list is empty)."""
        if not objs:
            return []
        typed = [{"apiVersion": self.storage_api_version, "kind": self.kind, **obj} for obj in objs]
        converted = self.converter(typed, self.api_version, f"{self.storage_api_version}, Kind={self.list_kind}")
        return [_untyped(obj) for obj in converted]

    def _convert(self, obj: Obj, source: str, target: str) -> Obj:
        converted = self.converter([{"apiVersion": source, "kind": self.kind, **obj}], target,
                                   f"{source}, Kind={self.kind}")
        return _untyped(converted[0])


def _untyped(obj: Obj) -> Obj:
    """A converted object as stored or viewed: without apiVersion and kind."""
    return {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}


def _replicas_problems(obj: Obj, path: str) -> list[FieldError]:
    value, found, error = nested_field(obj, path)
    if error is not None:
        return [errors.invalid(path, 0, error)]
    if not found:
        return []
    if not isinstance(value, int) or isinstance(value, bool):
        return [errors.invalid(path, 0, f"{path} accessor error: {go_value(value)} is of the type "
                                         f"{_go_type(value)}, expected int64")]
    if value < 0:
        return [errors.invalid(path, value, "should be a non-negative integer")]
    if value > MAX_INT32:
        return [errors.invalid(path, value, f"should be less than or equal to {MAX_INT32}")]
    return []


def nested_field(obj: Any, path: str) -> tuple[Any, bool, str | None]:
    """The value at a simple ``.a.b`` path, whether it is there, and unstructured's accessor
    error when the walk meets something that is not an object (``.spec.replicas accessor
    error: text is of the type string, expected map[string]interface{}``: the path up to
    the field it could not look up); a null on the way is simply not there."""
    value = obj
    parts = path.strip(".").split(".")
    for index, part in enumerate(parts):
        if value is None:
            return None, False, None
        if not isinstance(value, dict):
            walked = "." + ".".join(parts[:index + 1])
            return None, False, (f"{walked} accessor error: {go_value(value)} is of the type {_go_type(value)}, "
                                 "expected map[string]interface{}")
        if part not in value:
            return None, False, None
        value = value[part]
    return value, True, None


def _go_type(value: Any) -> str:
    """``%T`` of a decoded JSON value (a nil interface prints ``<nil>``)."""
    return "<nil>" if value is None else go_type(value)


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


def custom_resource_types(crd: Obj, converters: ConverterFactory | None = None) -> tuple[ResourceType, ...]:
    """The types an established CRD serves, one per served version (none otherwise).
    With ``converters`` and a Webhook conversion strategy, versions other than the storage
    version are stored as it and convert through the webhook (:class:`ConvertingStrategy`)."""
    if not served(crd):
        return ()
    spec = crd.get("spec") or {}
    accepted = (crd.get("status") or {}).get("acceptedNames") or {}
    kind, plural = accepted.get("kind") or "", accepted.get("plural") or ""
    if not kind or not plural:
        return ()
    terminating = condition_true(crd, "Terminating")
    stored = storage_version(crd)
    conversion = spec.get("conversion") or {}
    converter = converters(conversion.get("webhook") or {}) \
        if converters is not None and conversion.get("strategy") == WEBHOOK_CONVERTER else None
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
        group = spec.get("group") or ""
        strategy = CustomResourceStrategy(compile_schema(schema), status_enabled, scale,
                                          f"{group}/{version.get('name') or ''}", kind)
        stored_as = None
        if converter is not None and version.get("name") != stored:
            storage_strategy = _storage_strategy(crd, stored, kind)
            strategy = ConvertingStrategy(strategy.compiled, storage_strategy, converter,
                                          f"{group}/{version.get('name') or ''}", f"{group}/{stored}", kind,
                                          custom.list_kind)
            stored_as = (group, plural)
        types.append(ResourceType(
            spec.get("group") or "", version.get("name") or "", kind, plural,
            namespaced=spec.get("scope") == NAMESPACE_SCOPED,
            short_names=tuple(accepted.get("shortNames") or ()),
            categories=tuple(accepted.get("categories") or ()),
            verbs=CUSTOM_VERBS,
            subresources=tuple(s for s, on in ((STATUS, status_enabled), (SCALE, scale is not None)) if on),
            strategy=strategy,
            table=custom_table(version.get("additionalPrinterColumns")),
            schema=schema, custom=custom, stored_as=stored_as,
        ))
    return tuple(types)


def _storage_strategy(crd: Obj, stored: str, kind: str) -> CustomResourceStrategy:
    """The write rules of the CRD's storage version (which converted objects are in)."""
    group = (crd.get("spec") or {}).get("group") or ""
    for version in versions_of(crd):
        if version.get("name") == stored:
            schema = ((version.get("schema") or {}).get("openAPIV3Schema")) or {"type": "object"}
            status_enabled = isinstance((version.get("subresources") or {}).get("status"), dict)
            return CustomResourceStrategy(compile_schema(schema), status_enabled, _scale_paths(version),
                                          f"{group}/{stored}", kind)
    return CustomResourceStrategy(compile_schema({"type": "object"}), False, None, f"{group}/{stored}", kind)
