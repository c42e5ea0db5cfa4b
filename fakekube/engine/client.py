"""The controllers' typed write client: every write a controller or kubelet makes.

Like client-go's typed clientsets, it takes a resource and an object and goes through the
apiserver's verbs (admission, validation, defaulting, resourceVersions, watch events) —
never around them — as the server's own trusted client (no wire checks: the objects are
built well-typed). Resource types are resolved once per resource; a resource the
apiserver does not serve is a programming error and raises ``LookupError`` at once.

``obj`` may share levels with stored objects (``dict(node, spec=...)``): the apiserver
copies an internal write before it fills in metadata and defaults, as a client that
serialises its request would. Every write returns the object as the store now holds it (the shared stored object,
never to be edited — identity tells a controller "unchanged since"), or, when the write
removed it (the last finalizer went), the object as the apiserver answered.
Errors are the apiserver's ``ApiError`` (409 Conflict on a stale resourceVersion or a
failed uid precondition, 404, 422, 403, 429…); the runtime retries them with back-off.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from fakekube.api.verbs.apiserver import APIServer, WriteOptions
from fakekube.api.verbs.binding import bind_pod
from fakekube.api.verbs.deletion import DeleteOptions
from fakekube.api.verbs.subresources import scale_of, write_scale
from fakekube.api.registry import STATUS, ResourceType
from fakekube.objects import Resource
from fakekube.objects.kinds import APIResource

Obj = dict[str, Any]

#: Controllers write as the server's own clients: their objects skip the wire checks.
INTERNAL = WriteOptions(internal=True)
DRY_RUN = WriteOptions(internal=True, dry_run=True)

MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"


class Client:
    """Writes through one apiserver, with resource types resolved once. ``field_manager``:
    the manager its writes record in managedFields (``kube-apiserver`` for the apiserver's
    own controllers); empty: they record none and keep the objects' managedFields."""

    def __init__(self, api: APIServer, field_manager: str = "") -> None:
        self.api = api
        self.field_manager = field_manager
        self._options = WriteOptions(internal=True, field_manager=field_manager) if field_manager else INTERNAL
        self._types: dict[tuple[str, str], ResourceType] = {}
        self._lock = threading.Lock()
        #: The last ``served_resources``, by type (identity): at most one entry per served type.
        self._served: dict[ResourceType, APIResource] = {}

    def resource_type(self, resource: Resource | tuple[str, str]) -> ResourceType:
        """The served type of ``resource`` (its preferred version); LookupError if not served."""
        rt = self._types.get(resource)
        if rt is None:
            found = self.api.registry.by_group_resource(*resource)
            if found is None:
                raise LookupError(f"the apiserver does not serve {Resource(*resource)}")
            if found.custom is not None:  # served while its CRD says so: never cached
                return found
            with self._lock:
                rt = self._types[tuple(resource)] = found  # type: ignore[index]
        return rt

    def served_resources(self) -> tuple[APIResource, ...]:
        """Every stored resource served now, in discovery order (custom ones included, one entry
        per served version): what the controllers that walk every type (garbage collector,
        namespace) work over. A type unchanged since the last call (registry snapshots share
        them) keeps its entry, the very same object, so a CRD change costs a lookup per type."""
        known = self._served
        served = {rt: known.get(rt) or _api_resource(rt) for rt in self.api.registry if rt.persisted}
        self._served = served
        return tuple(served.values())

    def resource_for_kind(self, api_version: str, kind: str) -> ResourceType | None:
        """The served type of ``kind`` in ``api_version`` (a RESTMapper's mapping, e.g. for an
        ownerReference), or None when nothing serves it."""
        return self.api.registry.by_kind(api_version, kind)

    def create(self, resource: Resource, obj: Obj, dry_run: bool = False) -> Obj:
        """Create ``obj`` in ``metadata.namespace`` (generateName works as for any client);
        ``dry_run``: every check, nothing stored (the apiserver's answer is returned)."""
        namespace = (obj.get("metadata") or {}).get("namespace") or ""
        if dry_run:
            return self.api.create(self.resource_type(resource), namespace, obj, DRY_RUN).obj
        answer = self.api.create(self.resource_type(resource), namespace, obj, self._options).obj
        return self._stored(resource, answer)

    def update(self, resource: Resource, obj: Obj, subresource: str = "") -> Obj:
        """Replace the object (or its ``subresource``, e.g. a namespace's ``finalize``); with
        ``metadata.resourceVersion`` set, only if it is still current."""
        namespace, name = _place(obj)
        answer = self.api.update(self.resource_type(resource), namespace, name, obj, self._options, subresource).obj
        return self._stored(resource, answer)

    def update_status(self, resource: Resource, obj: Obj) -> Obj:
        """Replace the status subresource (the rest of ``obj`` is ignored, as upstream; the
        apiserver builds the new object from the stored one, so ``obj`` is not copied)."""
        namespace, name = _place(obj)
        answer = self.api.update(self.resource_type(resource), namespace, name, obj, self._options, STATUS).obj
        return self._stored(resource, answer)

    def patch(self, resource: Resource, name: str, patch: Any, namespace: str = "",
              patch_type: str = MERGE_PATCH, subresource: str = "") -> Obj:
        """Patch one object (merge patch by default; ``patch`` is the JSON document)."""
        body = json.dumps(patch).encode()
        answer = self.api.patch(self.resource_type(resource), namespace, name, patch_type, body, self._options,
                                subresource).obj
        return self._stored(resource, answer)

    def delete(self, resource: Resource, name: str, namespace: str = "", *, uid: str | None = None,
               resource_version: str | None = None, grace_period_s: int | None = None,
               propagation_policy: str | None = None) -> Obj:
        """Delete (gracefully where the type waits for grace); ``uid``/``resource_version``
        are preconditions (409 when the object is not that one any more)."""
        options = DeleteOptions(grace_period_s=grace_period_s, propagation_policy=propagation_policy,
                                precondition_uid=uid, precondition_rv=resource_version)
        obj, _ = self.api.delete(self.resource_type(resource), namespace, name, options)
        return obj

    def bind(self, namespace: str, name: str, node_name: str, uid: str = "") -> Obj:
        """POST pods/binding: assign the pod to ``node_name`` (``uid`` a precondition, as
        the scheduler's DefaultBinder sends it); returns the bound pod as stored."""
        binding = {"metadata": {"name": name, "namespace": namespace, "uid": uid or None},
                   "target": {"kind": "Node", "name": node_name}}
        return bind_pod(self.api, namespace, name, binding, self._options)

    def get_scale(self, rt: ResourceType, name: str, namespace: str) -> Obj:
        """GET ``<resource>/scale``: the autoscaling/v1 Scale of a workload (spec.replicas,
        status.replicas and the selector as a string), as the HPA's scale client reads it."""
        return scale_of(rt, self.api.get(rt, namespace, name))

    def update_scale(self, rt: ResourceType, name: str, namespace: str, replicas: int) -> Obj:
        """PUT ``<resource>/scale`` with ``replicas``; returns the new Scale."""
        return write_scale(self.api, rt, namespace, name, {"spec": {"replicas": replicas}}, self._options)

    def replace_internal(self, resource: Resource, obj: Obj) -> Obj:
        """Store ``obj`` as the new version with no update checks (a Lease renewal: the hot
        path of an idle cluster). Only for a change the caller built from the current object
        while holding ``ctx.atomically()``."""
        return self.api.write_internal(self.resource_type(resource), obj)

    def post_heartbeat_status(self, resource: Resource, obj: Obj) -> Obj | None:
        """Store ``obj``, whose status differs from the stored one's only in heartbeat times
        (built from the current object while holding ``ctx.atomically()``), as a status
        update would, without its checks; None when admission in the cluster could act on it
        (then write it with :meth:`update_status`)."""
        return self.api.write_heartbeat_status(self.resource_type(resource), obj)

    def expire(self, resource: Resource, name: str, namespace: str = "", *, resource_version: str) -> Obj | None:
        """Remove an object whose storage lease ran out, as etcd deletes an expired key (an
        Event past ``--event-ttl``): no admission, finalizers or grace period, and only while
        it is still at ``resource_version``. Returns the removed object, or None."""
        return self.api.expire(self.resource_type(resource), namespace, name, resource_version)

    def _stored(self, resource: Resource, answer: Obj) -> Obj:
        namespace, name = _place(answer)
        return self.api.store.get(resource, (namespace, name)) or answer


def _place(obj: Obj) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return meta.get("namespace") or "", meta["name"]


def _api_resource(rt: ResourceType) -> APIResource:
    return APIResource(Resource(rt.group, rt.plural), rt.api_version, rt.kind, rt.namespaced, rt.verbs,
                       Resource(*rt.key))
