"""The ``default`` of each built-in property in the OpenAPI v3 documents.

kube-openapi's generator gives a property a default in two cases, and kubectl explain,
client generators and server-side apply's typed schemas all read it:

* the Go field is a value its JSON can never leave out: a non-pointer struct (``{}``; a
  type with its own ``UnmarshalJSON`` — Time, Quantity, IntOrString, RawExtension,
  FieldsV1 — is a value, not a struct, and gets none), or a non-pointer scalar without
  ``omitempty`` (its zero: ``""``, ``0``, ``false``);
* the field carries a ``+default=`` marker in ``k8s.io/api``'s types.go
  (:data:`MARKED`).

The Go facts come from :mod:`fakekube.api.wire.gostructs` (field order, pointer and
omitempty flags); the schema source (kubernetes-validate) has no defaults. Upstream's
``/openapi/v2`` publishes none, so only v3 adds them.
"""

from __future__ import annotations

from typing import Any

from fakekube.api.wire import gostructs

__all__ = ["MARKED", "property_default"]

#: Go types with their own UnmarshalJSON: a JSON ``null`` is their zero, so no default.
_CUSTOM_UNMARSHAL = frozenset({
    "k8s.io.apimachinery.pkg.apis.meta.v1.Time", "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime",
    "k8s.io.apimachinery.pkg.apis.meta.v1.Duration", "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1",
    "k8s.io.apimachinery.pkg.api.resource.Quantity", "k8s.io.apimachinery.pkg.util.intstr.IntOrString",
    "k8s.io.apimachinery.pkg.runtime.RawExtension",
})
_ZERO: dict[str, Any] = {"string": "", "bool": False, "int32": 0, "int64": 0, "uint32": 0, "uint64": 0,
                         "double": 0, "float": 0}
_CORE = "io.k8s.api.core.v1."
#: The ``+default=`` markers of the served built-in types, by (definition, property).
MARKED: dict[tuple[str, str], Any] = {
    ("io.k8s.api.autoscaling.v1.ScaleSpec", "replicas"): 0,
    (_CORE + "AzureDiskVolumeSource", "cachingMode"): "ReadWrite",
    (_CORE + "AzureDiskVolumeSource", "fsType"): "ext4",
    (_CORE + "AzureDiskVolumeSource", "kind"): "Shared",
    (_CORE + "AzureDiskVolumeSource", "readOnly"): False,
    (_CORE + "ContainerPort", "protocol"): "TCP",
    (_CORE + "ServicePort", "protocol"): "TCP",
    (_CORE + "FileKeySelector", "optional"): False,
    (_CORE + "GRPCAction", "service"): "",
    (_CORE + "ISCSIPersistentVolumeSource", "iscsiInterface"): "default",
    (_CORE + "ISCSIVolumeSource", "iscsiInterface"): "default",
    (_CORE + "LocalObjectReference", "name"): "",
    (_CORE + "RBDPersistentVolumeSource", "keyring"): "/etc/ceph/keyring",
    (_CORE + "RBDPersistentVolumeSource", "pool"): "rbd",
    (_CORE + "RBDPersistentVolumeSource", "user"): "admin",
    (_CORE + "RBDVolumeSource", "keyring"): "/etc/ceph/keyring",
    (_CORE + "RBDVolumeSource", "pool"): "rbd",
    (_CORE + "RBDVolumeSource", "user"): "admin",
    (_CORE + "ReplicationControllerSpec", "minReadySeconds"): 0,
    (_CORE + "ReplicationControllerSpec", "replicas"): 1,
    (_CORE + "ScaleIOPersistentVolumeSource", "fsType"): "xfs",
    (_CORE + "ScaleIOPersistentVolumeSource", "storageMode"): "ThinProvisioned",
    (_CORE + "ScaleIOVolumeSource", "fsType"): "xfs",
    (_CORE + "ScaleIOVolumeSource", "storageMode"): "ThinProvisioned",
    ("io.k8s.api.resource.v1.DeviceToleration", "operator"): "Equal",
    ("io.k8s.api.resource.v1beta1.DeviceToleration", "operator"): "Equal",
    ("io.k8s.api.resource.v1beta2.DeviceToleration", "operator"): "Equal",
}
#: Types with no protobuf message (so none in gostructs), by their non-omitempty string
#: fields: version.Info, which ``GET /version`` answers (the ``version`` document).
_WITHOUT_MESSAGE: dict[str, frozenset[str]] = {
    "io.k8s.apimachinery.pkg.version.Info": frozenset({
        "major", "minor", "gitVersion", "gitCommit", "gitTreeState", "buildDate", "goVersion", "compiler", "platform"}),
}
_NONE = object()


def property_default(definition: str, prop: str) -> Any:
    """The default upstream's v3 document gives ``prop`` of ``definition``, or None when it
    gives none (no generated default is JSON null)."""
    if definition in _WITHOUT_MESSAGE:
        return "" if prop in _WITHOUT_MESSAGE[definition] else None
    message_name = gostructs.message_of(definition)
    return _field_default(message_name, prop, depth=0) if message_name else None


def _field_default(message_name: str, prop: str, depth: int) -> Any:
    """Looks through inline (embedded) structs, whose fields are the outer type's, as the
    generator does; a marker belongs to the struct that declares the field."""
    definition = gostructs.definition_of(message_name) or ""
    marked = MARKED.get((definition, prop), _NONE)
    if marked is not _NONE:
        return marked
    message = gostructs.message(message_name)
    if message is None or depth > 4:
        return None
    for inline in message.fields:
        if "i" in inline.flags:
            found = _field_default(inline.type, prop, depth + 1)
            if found is not None:
                return found
    field = next((f for f in message.fields if f.name == prop and "i" not in f.flags), None)
    if field is None or field.card != "opt" or "p" in field.flags:
        return None
    if field.type in _ZERO:
        return None if "o" in field.flags else _ZERO[field.type]
    if field.type in _CUSTOM_UNMARSHAL or "." not in field.type:
        return None
    nested = gostructs.message(field.type)
    if nested is None or nested.is_list:  # a named slice (Verbs) is a slice
        return None
    return {}
