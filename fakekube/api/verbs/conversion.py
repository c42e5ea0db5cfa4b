"""CRD webhook conversion: a ``ConversionReview`` POSTed to the CRD's conversion webhook,
its answer checked as apiextensions-apiserver's ``webhook_converter.go`` checks it.

A custom resource is stored in its CRD's storage version. With ``spec.conversion.strategy:
Webhook`` a request in another served version converts at the API's edge (the type's
``stored_as``: ``Strategy.to_storage``/``from_storage``): a create or update body to the
storage version, a stored object to the requested version for reads, lists and watch
events (a list's items in one call, as upstream converts a list). Calls go over the admission webhooks'
transport (:mod:`fakekube.api.admission.webhook_call`: caBundle trust, ``webhook_addresses``).

Failures are upstream's plain errors: a 500 with no reason whose message is
``conversion webhook for <group>/<version>, Kind=<Kind> failed: <why>`` (or ``returned
invalid object: ...``), the version being the one converted from.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from fakekube.api.machinery import errors
from fakekube.api.machinery.jsonutil import deep_copy
from fakekube.random import SeededRandom
from fakekube.api.admission.webhook_call import CallFailed, WebhookTransport

if TYPE_CHECKING:
    from fakekube.api.types.custom import Converter

Obj = dict[str, Any]

REVIEW_API_VERSION = "apiextensions.k8s.io/v1"
REVIEW_GVK = "apiextensions.k8s.io/v1, Kind=ConversionReview"
#: Upstream's conversion webhook client timeout (it has no timeoutSeconds field): the
#: deadline of the whole call, as every webhook client's ``rest.Config.Timeout``.
CONVERSION_TIMEOUT_S = 30
_CALL_PREFIX = "failed to call webhook: "


class ConversionError(Exception):
    """Why a conversion failed, after upstream's ``conversion webhook for <gvk> ``."""


class WebhookConversion:
    """Makes the converter of each CRD whose conversion strategy is Webhook."""

    def __init__(self, transport: WebhookTransport, rng: SeededRandom) -> None:
        self.transport = transport
        #: The wall-clock deadline of each call (connect, send, read); tests may shorten it.
        self.timeout_s = CONVERSION_TIMEOUT_S
        self._rng = rng
        self._rng_lock = threading.Lock()

    def converter(self, webhook: Obj) -> Converter:
        """The converter a CRD's ``spec.conversion.webhook`` calls."""
        return lambda objects, desired, shown: self.convert(webhook, objects, desired, shown)

    def convert(self, webhook: Obj, objects: list[Obj], desired: str, shown: str) -> list[Obj]:
        """``objects`` (each with apiVersion and kind) in apiVersion ``desired``, in one call;
        ``shown`` is the ``<apiVersion>, Kind=<kind>`` errors name (a list's kind for a list).
        An ApiError (500) when the webhook cannot be called or answers wrongly."""
        todo = [i for i, obj in enumerate(objects) if obj.get("apiVersion") != desired]
        if not todo:
            return objects
        try:
            converted = self._call(webhook, [objects[i] for i in todo], desired)
            return _placed(objects, todo, converted, desired, is_list=shown.endswith("List"))
        except ConversionError as exc:
            raise errors.unknown_error(500, f"conversion webhook for {shown} {exc}") from None

    def _call(self, webhook: Obj, objects: list[Obj], desired: str) -> list[Any]:
        if "v1" not in (webhook.get("conversionReviewVersions") or []):
            raise ConversionError("failed: no supported conversion review versions")
        uid = self._uid()
        review = {"kind": "ConversionReview", "apiVersion": REVIEW_API_VERSION,
                  "request": {"uid": uid, "desiredAPIVersion": desired, "objects": objects}}
        config = webhook.get("clientConfig") or {}
        try:
            endpoint = self.transport.endpoint(config)
            answer = self.transport.post(endpoint, config.get("caBundle"), review, self.timeout_s)
        except CallFailed as exc:
            raise ConversionError(f"failed: {str(exc).removeprefix(_CALL_PREFIX)}") from None
        converted = _converted_objects(answer, uid)
        if len(converted) != len(objects):
            raise ConversionError(f"returned {len(converted)} objects, expected {len(objects)}")
        return converted

    def _uid(self) -> str:
        with self._rng_lock:
            return self._rng.uid()


def _placed(objects: list[Obj], todo: list[int], converted: list[Any], desired: str, is_list: bool) -> list[Obj]:
    """``objects`` with the converted ones checked and in their places. Errors say where as
    upstream does: ``invalid object`` for one object, ``invalid converted object at index
    <n>`` for a list (n counted from 1 there: upstream counts before it reports)."""
    out = list(objects)
    for n, (i, answer) in enumerate(zip(todo, converted), start=1):
        where = (f"invalid converted object at index {n}", f"invalid converted object at index {n}",
                 f"invalid metadata in object at index {n}") if is_list else \
            ("invalid object at index 0", "invalid object", "invalid metadata")
        out[i] = _checked(objects[i], answer, desired, where)
    return out


def _converted_objects(answer: Obj, uid: str) -> list[Any]:
    """``getConvertedObjectsFromResponse``: the right review, for this request, a Success."""
    got = f"{answer.get('apiVersion') or ''}, Kind={answer.get('kind') or ''}"
    if got != REVIEW_GVK:
        raise ConversionError(f"failed: expected webhook response of {REVIEW_GVK}, got {got}")
    response = answer.get("response")
    if not isinstance(response, dict):
        raise ConversionError("failed: no response provided")
    if response.get("uid", "") != uid:
        raise ConversionError(f'failed: expected response.uid="{uid}", got "{response.get("uid", "")}"')
    result = response.get("result") or {}
    if result.get("status") != "Success":
        message = result.get("message") or \
            f"response.result.status was '{result.get('status') or ''}', not 'Success'"
        raise ConversionError(f"failed: {message}")
    objects = response.get("convertedObjects") or []
    return objects if isinstance(objects, list) else []


def _checked(original: Obj, converted: Any, desired: str, where: tuple[str, str, str]) -> Obj:
    """The converted object with the original's metadata but its labels and annotations
    (``validateConvertedObject`` and ``restoreObjectMeta``); ``where`` words the errors of
    the type meta, the identity and the metadata checks."""
    typed, identity, meta = where
    if not isinstance(converted, dict):
        raise ConversionError(f"returned {identity}: the converted object is not a JSON object")
    received = converted.get("apiVersion") or ""
    if received != desired:
        raise ConversionError(f"returned {typed}: invalid groupVersion (expected {desired}, received {received})")
    if converted.get("kind") != original.get("kind"):
        raise ConversionError(f"returned {typed}: invalid kind "
                              f"(expected {original.get('kind')}, received {converted.get('kind') or ''})")
    before, after = original.get("metadata") or {}, converted.get("metadata")
    if isinstance(after, dict):
        for field in ("name", "namespace", "uid"):
            if (before.get(field) or "") != (after.get(field) or ""):
                raise ConversionError(f"returned {identity}: must have the same {field}: "
                                      f"{before.get(field) or ''} != {after.get(field) or ''}")
    try:
        return {**converted, "metadata": _restored_metadata(before, after)}
    except ConversionError as exc:
        raise ConversionError(f"returned {meta}: {exc}") from None


def _restored_metadata(original: Obj, converted: Any) -> Obj:
    """The original metadata, with labels and annotations as the webhook left them."""
    if converted is None:
        raise ConversionError("missing metadata in converted object")
    if not isinstance(converted, dict):
        raise ConversionError(f"invalid metadata of type {_go_type(converted)} in converted object")
    metadata = deep_copy(original)
    for field in ("labels", "annotations"):
        value = converted.get(field)
        if value is None:
            metadata.pop(field, None)
            continue
        if not isinstance(value, dict):
            raise ConversionError(f"invalid metadata.{field} of type {_go_type(value)} in converted object")
        for key in sorted(value):
            if not isinstance(value[key], str):
                raise ConversionError(f"metadata.{field}[{key}] must be a string, "
                                      f"but is {_go_type(value[key])} in converted object")
        metadata[field] = dict(value)
    return metadata


def _go_type(value: Any) -> str:
    """How Go's ``%T`` names a decoded JSON value."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "[]interface {}"
    return "map[string]interface {}"
