"""Kubernetes protobuf request bodies (``application/vnd.kubernetes.protobuf``), decoded to JSON dicts.

kubectl >= 1.32 sends built-in objects on create (and reviews, TokenRequests) as
protobuf. We decode those bodies into the dict the same object's JSON body would have
been, so everything past the HTTP layer stays JSON-only; responses are still JSON
(clients list it as the fallback in Accept).

Body layout (``runtime/serializer/protobuf``): the magic ``k8s\\x00`` then a
``runtime.Unknown`` — 1 typeMeta {1 apiVersion, 2 kind}, 2 raw (the object's own
message), 3 contentEncoding, 4 contentType.
"""

from __future__ import annotations

from typing import Any

from fakekube.api.wire.protobuf.decoder import META, MAX_DEPTH, decode_message, message
from fakekube.api.wire.protobuf.wire import BYTES, ProtobufError, iter_fields

__all__ = ["MAGIC", "MAX_DEPTH", "ProtobufError", "UnregisteredKind", "decode_body"]

MAGIC = b"k8s\x00"

#: Kinds registered in every group version (``metav1.AddToGroupVersion``).
_META_KINDS = frozenset({"DeleteOptions", "CreateOptions", "UpdateOptions", "PatchOptions", "ListOptions",
                         "GetOptions", "Status", "WatchEvent"})
#: API groups whose proto package is not named after the group's first label.
_PACKAGE_OF_GROUP = {"": "core", "rbac.authorization.k8s.io": "rbac"}


class UnregisteredKind(ProtobufError):
    """A kind/version fakekube has no message for (upstream's "not registered" error)."""


def decode_body(raw: bytes, default_api_version: str = "", default_kind: str = "") -> dict[str, Any]:
    """A protobuf body as the dict its JSON form would be, ``apiVersion``/``kind`` from typeMeta.

    The defaults fill a missing kind or version as upstream's ``copyKindDefaults`` does
    (the resource being written). Raises :class:`ProtobufError` for malformed input;
    its ``api_version``/``kind`` attributes say how far decoding got, for the error text.
    """
    api_version, kind, body = _unknown(raw)
    api_version, kind = _with_defaults(api_version, kind, default_api_version, default_kind)
    try:
        type_name = _message_name(api_version, kind)
        decoded = decode_message(type_name, body)
    except ProtobufError as exc:
        exc.api_version, exc.kind = api_version, kind
        raise
    if not isinstance(decoded, dict):
        raise ProtobufError(f"{kind} is not an object")
    return {"kind": kind, "apiVersion": api_version, **decoded}


def _unknown(raw: bytes) -> tuple[str, str, bytes]:
    """The envelope: (apiVersion, kind, raw object bytes), with upstream's texts for bad input."""
    if not raw:
        raise ProtobufError("empty data")
    if not raw.startswith(MAGIC):
        prefix = " ".join(str(b) for b in MAGIC)  # Go's %v of a []byte
        raise ProtobufError(f"provided data does not appear to be a protobuf message, expected prefix [{prefix}]")
    if len(raw) == len(MAGIC):
        raise ProtobufError("empty body")
    api_version = kind = ""
    body = b""
    for number, wire_type, value in iter_fields(raw[len(MAGIC):]):
        if number in (1, 2) and wire_type != BYTES:
            raise ProtobufError(f"proto: wrong wireType = {wire_type} for field {'TypeMeta' if number == 1 else 'Raw'}")
        if number == 1:
            api_version, kind = _type_meta(value)  # type: ignore[arg-type]
        elif number == 2:
            body = value  # type: ignore[assignment]
    return api_version, kind, body


def _type_meta(data: bytes) -> tuple[str, str]:
    values = {1: "", 2: ""}
    for number, wire_type, value in iter_fields(data):
        if number in values:
            if wire_type != BYTES:
                raise ProtobufError(f"proto: wrong wireType = {wire_type} for field TypeMeta")
            values[number] = value.decode("utf-8", errors="replace")  # type: ignore[union-attr]
    return values[1], values[2]


def _split(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


def _with_defaults(api_version: str, kind: str, default_api_version: str, default_kind: str) -> tuple[str, str]:
    """``copyKindDefaults``: a missing kind, or a missing version of the same group, from the defaults."""
    group, version = _split(api_version)
    default_group, default_version = _split(default_api_version)
    kind = kind or default_kind
    if not version and (not group or group == default_group):
        group, version = default_group, default_version
    if not kind:
        raise ProtobufError(f"Object 'Kind' is missing in '{{\"apiVersion\":\"{api_version}\"}}'")
    if not version:
        raise ProtobufError(f"Object 'apiVersion' is missing in '{{\"kind\":\"{kind}\"}}'")
    return (f"{group}/{version}" if group else version), kind


def _message_name(api_version: str, kind: str) -> str:
    """The proto message for a top-level kind (one with ObjectMeta, or a metav1 options kind)."""
    group, version = _split(api_version)
    package = _PACKAGE_OF_GROUP.get(group, group.split(".")[0])
    name = f"k8s.io.api.{package}.{version}.{kind}"
    spec = message(name)
    if spec is not None and spec.fields and spec.fields[0].name == "metadata":
        return name
    if kind in _META_KINDS and message(META + kind) is not None:
        return META + kind
    raise UnregisteredKind(f'no kind "{kind}" is registered for version "{api_version}" in scheme '
                           '"pkg/api/legacyscheme/scheme.go:30"')
