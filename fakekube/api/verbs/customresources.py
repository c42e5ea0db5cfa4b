"""Serving custom resources: the registry kept in step with stored CRDs, and the wire
rules a custom resource's body meets that a built-in's does not.

:class:`CustomTypes` is a store listener: every write of a CustomResourceDefinition
recomputes the types it serves (``types.custom``) and swaps them into the registry
(copy-on-write), under the store lock and before the write returns. Serving therefore
follows the CRD's ``Established`` condition exactly as its controller writes it, for
HTTP and in-process callers alike, and a reset (a new store) starts from built-ins alone.

Bodies: a custom resource is decoded as unstructured JSON, so ``kind`` is required
(``the object provided is unrecognized (must be of type Foo): Object 'Kind' is missing in
'...'``, upstream's transformDecodeError), a body in another served version of the same
CRD is accepted (``None`` conversion: only apiVersion changes), and a wrong kind or
apiVersion is a 422 from ``ValidateTypeMeta``. Unknown fields are pruned by the
version's schema, and the pruned paths feed fieldValidation.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Callable

from fakekube.api.machinery import errors
from fakekube.api.machinery.jsonutil import deep_copy
from fakekube.api.registry import Registry, ResourceType
from fakekube.api.types.apiextensions import CUSTOM_RESOURCE_DEFINITIONS, condition_true
from fakekube.store import DELETED, Change

if TYPE_CHECKING:
    from fakekube.api.types.custom import ConverterFactory

Obj = dict[str, Any]

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
#: The patch types a custom resource takes (no strategic merge: it has no Go struct tags).
CUSTOM_PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, APPLY_PATCH)
_CRD_KEY = CUSTOM_RESOURCE_DEFINITIONS.key


class CustomTypes:
    """Keeps a registry's custom types equal to what the stored CRDs serve."""

    def __init__(self, registry: Registry, converters: ConverterFactory | None = None) -> None:
        self.registry = registry
        #: Makes a Webhook-converted CRD's converter (``verbs.conversion``); None: never converts.
        self.converters = converters
        registry.clear_custom()
        #: Called (under the store lock) after the served types changed: the engine re-routes.
        self.listeners: list[Callable[[], None]] = []
        self._signatures: dict[str, str] = {}

    @staticmethod
    def quiet_for(resource: tuple[str, str]) -> bool:
        """A write of anything but a CRD changes nothing served (:meth:`on_change`)."""
        return (resource[0], resource[1]) != _CRD_KEY

    def on_change(self, change: Change) -> None:
        """Store listener: a CRD write may change what is served."""
        if (change.group, change.resource) != _CRD_KEY:
            return
        crd = None if change.type == DELETED else change.obj
        signature = _signature(crd)
        if self._signatures.get(change.name, _signature(None)) == signature:
            return
        try:
            # Schemas, CEL rules and printer columns load with the first CRD (cold start).
            from fakekube.api.types.custom import custom_resource_types
            changed = self.registry.set_custom(change.name, custom_resource_types(crd, self.converters) if crd is not None else ())
        except ValueError:  # its URLs are another type's: not served (upstream would conflict on names)
            changed = self.registry.set_custom(change.name, ())
        if signature == _signature(None):
            self._signatures.pop(change.name, None)
        else:
            self._signatures[change.name] = signature
        if changed:
            for listener in self.listeners:
                listener()


def _signature(crd: Obj | None) -> str:
    """What of a CRD decides its types: spec, accepted names, Established, Terminating."""
    if crd is None:
        return ""
    status = crd.get("status") or {}
    return json.dumps([crd.get("spec"), status.get("acceptedNames"), condition_true(crd, "Established"),
                       condition_true(crd, "Terminating")], sort_keys=True, default=str)


def is_custom(rt: ResourceType) -> bool:
    return rt.custom is not None


def check_type_meta(rt: ResourceType, body: Obj, raw: bytes | None, registry: Registry) -> None:
    """Unstructured decoding's and ``ValidateTypeMeta``'s checks of a body's kind and apiVersion."""
    kind = body.get("kind")
    if not kind:
        data = raw.strip() if raw else json.dumps(body, separators=(",", ":")).encode()
        text = data.decode("utf-8", "replace")
        raise errors.bad_request(f"the object provided is unrecognized (must be of type {rt.kind}): "
                                 f"Object 'Kind' is missing in '{text}' ({_summary(data)})")
    api_version = body.get("apiVersion") or ""
    other = registry.by_kind(api_version, kind) if api_version != rt.api_version else rt
    same_crd = other is not None and other.custom is not None and rt.custom is not None \
        and other.custom.crd_name == rt.custom.crd_name
    problems = []
    if kind != rt.kind:
        problems.append(errors.invalid("kind", kind, f"must be {rt.kind}"))
    if api_version != rt.api_version and not same_crd:
        problems.append(errors.invalid("apiVersion", api_version, f"must be {rt.api_version}"))
    if problems:
        name = (body.get("metadata") or {}).get("name") or "" if isinstance(body.get("metadata"), dict) else ""
        raise errors.invalid_object(rt.group, rt.kind, name, problems)


def _summary(data: bytes, max_length: int = 30) -> str:
    """``summarizeData``: a JSON body's first 30 bytes, anything else in hex."""
    if not data:
        return "<empty>"
    cut = data[:max_length]
    shown = cut.decode("utf-8", "replace") if data[:1] == b"{" else cut.hex()
    return shown + " ..." if len(data) > max_length else shown


def prune(rt: ResourceType, obj: Obj, copy: bool) -> tuple[Obj, list[str]]:
    """``obj`` without the fields its version's schema does not know (a deep copy first
    when ``copy``: the caller's body shares levels with stored objects), and their paths."""
    if rt.custom is None:  # a built-in (and types.custom, loaded with the first CRD, may not be)
        return obj, []
    from fakekube.api.types.custom import CustomResourceStrategy
    strategy = rt.strategy
    if not isinstance(strategy, CustomResourceStrategy):
        return obj, []
    if copy:
        obj = deep_copy(obj)
    return obj, strategy.decoding.prune(obj)


def check_patch_type(rt: ResourceType, patch_type: str) -> None:
    """A custom resource takes no strategic merge patch: 415, as upstream's crdHandler."""
    if patch_type not in CUSTOM_PATCH_TYPES:
        raise errors.unsupported_media_type(patch_type, CUSTOM_PATCH_TYPES)


def check_create_allowed(rt: ResourceType, body: Any) -> None:
    """No creates while the CRD is being deleted: upstream's crdHandler answers
    ``NewMethodNotSupported`` (405) with its message replaced (``create not allowed while
    custom resource definition is terminating``) before the create handler runs."""
    if rt.custom is not None and rt.custom.terminating:
        refused = errors.method_not_supported(rt.group, rt.plural, "create")
        refused.message = "create not allowed while custom resource definition is terminating"
        raise refused
