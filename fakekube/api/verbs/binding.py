"""Assigning a pod to a node: the ``pods/binding`` subresource's rule, shared by the REST
layer (a client POSTing a Binding) and the scheduler's DefaultBinder (through the
controller runtime's client), so both bind the same way.

As upstream's ``BindingREST`` (pkg/registry/core/pod/storage): the Binding names the
pod and its ``target`` node; optional ``metadata.uid``/``resourceVersion`` are
preconditions; the pod must not be deleting, already bound or gated; its
``spec.nodeName`` is set, the Binding's annotations are copied onto it and the
PodScheduled condition becomes True.
"""

from __future__ import annotations

from typing import Any, Mapping

from fakekube.api.machinery import errors
from fakekube.api.machinery.jsonutil import deep_copy
from fakekube.api.verbs.apiserver import APIServer, WriteOptions

Obj = dict[str, Any]
PODS = ("", "pods")


def bind_pod(api: APIServer, namespace: str, name: str, binding: Any, options: WriteOptions) -> Obj:
    """Bind the pod ``namespace/name`` as ``binding`` says; returns the pod as stored (or
    as it would be, for a dry run). ApiError 422/404/409 as upstream."""
    meta = (binding.get("metadata") or {}) if isinstance(binding, dict) else {}
    target = binding.get("target") if isinstance(binding, dict) else None
    node = target.get("name") if isinstance(target, dict) else None
    if not node:
        raise errors.invalid_object("", "Binding", name, [errors.required("target.name")])
    rt = api.registry.lookup("", "v1", "pods")
    with api.store.lock:
        stored = api.get(rt, namespace, name)
        _check_preconditions(stored, meta, name)
        spec = stored.get("spec") or {}
        if (stored.get("metadata") or {}).get("deletionTimestamp"):
            raise errors.conflict("", "pods/binding", name, "pod is being deleted, cannot be assigned to a host")
        if spec.get("nodeName"):
            raise errors.conflict("", "pods/binding", name, f"pod {name} is already assigned to node \"{spec['nodeName']}\"")
        if spec.get("schedulingGates"):
            raise errors.conflict("", "pods/binding", name, f"pod {name} has non-empty .spec.schedulingGates")
        # The new version shares every level it does not change with the stored one
        # (stored objects are never edited): a binding is a hot path at 30,000 pods.
        pod = dict(stored, spec=dict(spec, nodeName=node), metadata=dict(stored.get("metadata") or {}))
        annotations: Mapping[str, str] = meta.get("annotations") or {}
        if annotations:
            pod["metadata"]["annotations"] = {**(pod["metadata"].get("annotations") or {}), **annotations}
        pod["status"] = _scheduled(stored.get("status") or {}, api.now_rfc3339())
        if options.dry_run:
            return deep_copy(pod)
        return api.write_internal(rt, pod)


def _check_preconditions(pod: Obj, meta: Mapping[str, Any], name: str) -> None:
    uid, rv = meta.get("uid"), meta.get("resourceVersion")
    if uid and uid != pod["metadata"].get("uid"):
        raise errors.conflict("", "pods", name, "Precondition failed: UID in precondition: "
                              f"{uid}, UID in object meta: {pod['metadata'].get('uid')}")
    if rv and rv != pod["metadata"].get("resourceVersion"):
        raise errors.conflict("", "pods", name, errors.STALE_OBJECT)


def _scheduled(status: Mapping[str, Any], now: str) -> Obj:
    """The status with PodScheduled=True (a transition time only when the status changes,
    as UpdatePodCondition); a new dict, the stored one untouched."""
    conditions = list(status.get("conditions") or [])
    old = next((c for c in conditions if c.get("type") == "PodScheduled"), None)
    if old is not None and old.get("status") == "True":
        return dict(status)
    new = {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": now}
    return dict(status, conditions=[new if c is old else c for c in conditions] if old is not None else conditions + [new])
