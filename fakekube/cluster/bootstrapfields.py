"""The managedFields of the objects kube-apiserver creates itself at start, written out.

Upstream's apiserver creates its namespaces, the ``kubernetes`` Service, the system
PriorityClasses and the RBAC bootstrap policy through its loopback client, so each carries a
``kube-apiserver`` Update entry. fakekube stores them without the field manager's walk,
which would load the API schemas and the Go struct table at every cold start for a few
fixed shapes; these functions give the same field sets for those shapes
(``tests/unit/test_bootstrap_fields.py`` holds them equal to the field manager's).
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from fakekube.api.verbs.fieldmanager import APISERVER_MANAGER, created_entry

Obj = dict[str, Any]
FieldSet = dict[str, Any]

#: RBAC fields that are atomic as a whole (``rules``, ``subjects``: atomic lists; ``roleRef``:
#: an atomic struct); ``aggregationRule`` is a struct holding one atomic list.
_RBAC_ATOMIC = ("roleRef", "rules", "subjects")


def managed_fields(api_version: str, kind: str, obj: Mapping[str, Any], now: str) -> list[Obj] | None:
    """The managedFields kube-apiserver's create of ``obj`` records (None: it owns nothing)."""
    fields = created_fields(kind, obj)
    return created_entry(APISERVER_MANAGER, api_version, fields, now) if fields else None


def created_fields(kind: str, obj: Mapping[str, Any]) -> FieldSet:
    """What the creator owns of ``obj`` (one of the kinds kube-apiserver creates at start),
    in FieldsV1's key order."""
    out: FieldSet = {}
    if kind == "Service":
        out.update(_service_fields(obj.get("spec") or {}))
    elif kind == "PriorityClass":
        out.update({f"f:{key}": {} for key in ("description", "globalDefault", "preemptionPolicy", "value")
                    if obj.get(key) not in (None, "", False)})
    elif kind in ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"):
        out.update(_rbac_fields(obj))
    meta = _metadata_fields(obj.get("metadata") or {})
    if meta:
        out["f:metadata"] = meta
    return dict(sorted(out.items()))


def _metadata_fields(meta: Mapping[str, Any]) -> FieldSet:
    out: FieldSet = {}
    for name in ("annotations", "labels"):
        values = meta.get(name)
        if values:
            out[f"f:{name}"] = {".": {}, **{f"f:{key}": {} for key in sorted(values)}}
    return out


def _rbac_fields(obj: Mapping[str, Any]) -> FieldSet:
    out: FieldSet = {f"f:{key}": {} for key in _RBAC_ATOMIC if obj.get(key) is not None}
    if obj.get("aggregationRule") is not None:
        out["f:aggregationRule"] = {".": {}, "f:clusterRoleSelectors": {}}
    return out


def _service_fields(spec: Mapping[str, Any]) -> FieldSet:
    """A ClusterIP Service's spec as its creator sent it and defaulting filled it (what the
    REST layer allocates after the field manager — clusterIPs, ipFamilies — is nobody's)."""
    out: FieldSet = {f"f:{key}": {} for key in ("clusterIP", "internalTrafficPolicy", "ipFamilyPolicy",
                                                 "sessionAffinity", "type") if spec.get(key)}
    ports: FieldSet = {".": {}}
    for port in spec.get("ports") or []:
        key = "k:" + json.dumps({"port": port["port"], "protocol": port.get("protocol") or "TCP"},
                                separators=(",", ":"))
        ports[key] = {".": {}, **{f"f:{name}": {} for name in sorted(port) if name in (
            "name", "port", "protocol", "targetPort")}}
    if len(ports) > 1:
        out["f:ports"] = ports
    return {"f:spec": dict(sorted(out.items()))}


__all__ = ["created_fields", "managed_fields"]
