"""The garbage collector: dependents follow their owners (kube-controller-manager 1.33's
``garbage-collector-controller``, pkg/controller/garbagecollector/garbagecollector.go).

It watches every served resource that supports delete, list and watch, except Events (as
upstream's default ignored resources), and works on keys made by
:mod:`fakekube.controllers.garbagecollector.graph`:

* ``item`` — ``attemptToDeleteItem``: an object whose owners are all gone (missing, or a
  namesake with another uid, or a namespaced owner outside its namespace) is deleted,
  honouring its own ``orphan``/``foregroundDeletion`` finalizer, with uid and
  resourceVersion preconditions; one with a live owner loses its references to the owners
  that are gone or deleting in the foreground; one whose only owners are deleting in the
  foreground is deleted in the foreground itself if it has dependents (a chain), else in
  the background. A cluster-scoped object owned by a namespaced kind is never collected.
* ``foreground`` / ``waiter`` — an owner deleting in the foreground drops its
  ``foregroundDeletion`` finalizer once no dependent with ``blockOwnerDeletion: true`` is
  left (its other dependents are deleted but not waited for).
* ``orphan`` — an owner deleting with ``orphan`` is removed from its dependents'
  ``ownerReferences``, then its finalizer goes.
* ``gone`` — a deleted object's dependents are checked.

Upstream's graph is the runtime's owner index here (``ctx.owned_by``): reads are fresh, so
there are no virtual nodes, absent-owner cache or resyncs. An ownerReference whose
apiVersion/kind nothing serves is left alone (upstream retries it with back-off until
discovery knows the type; fakekube re-reads the served types when a CRD changes them). All work happens at the instant
of the change: the GC has no timers of its own.
"""

from __future__ import annotations

import builtins
from typing import Any, Iterable, Sequence

from fakekube.api.machinery.errors import ApiError
from fakekube.controllers.garbagecollector.graph import (
    FOREGROUND,
    FOREGROUND_FINALIZER,
    GONE,
    ITEM,
    ORPHAN,
    ORPHAN_FINALIZER,
    WAITER,
    KindMap,
    ObjectRef,
    blocks,
    deleting_dependents,
    keys_for,
    parse_key,
    reference_to,
)
from fakekube.engine import Context
from fakekube.engine.client import MERGE_PATCH, STRATEGIC_MERGE_PATCH
from fakekube.objects import Resource
from fakekube.objects.kinds import NAMESPACES, APIResource
from fakekube.store import MODIFIED, Change

Obj = dict[str, Any]

NAME = "garbage-collector-controller"
#: Upstream's ``DefaultIgnoredResources``: core and events.k8s.io Events (one store here).
IGNORED = (Resource("", "events"), Resource("events.k8s.io", "events"))

#: The event upstream's GraphBuilder records on a dependent whose namespaced owner lives in
#: another namespace (or is referenced from a cluster-scoped object).
OWNER_REF_INVALID_NAMESPACE = "OwnerRefInvalidNamespace"

BACKGROUND = "Background"
FOREGROUND_POLICY = "Foreground"
ORPHAN_POLICY = "Orphan"


class Unresolvable(Exception):
    """An owner reference the GC cannot decide on (a namespaced owner of a cluster-scoped
    object, or a kind nothing serves): the dependent is left alone."""


class GarbageCollectorController:
    """Deletes objects whose owners are gone; carries out foreground and orphan deletion."""

    name = NAME
    #: A change that keeps an object's owner references, finalizers and deletionTimestamp
    #: gives no key (:meth:`keys_for`), so writes of one field outside metadata (a Lease
    #: renewal) may be deferred (engine ``_keyless_field_writes``).
    keyless_field_writes = True
    #: The same for a heartbeat of any watched resource (engine/routing.py).
    keyless_heartbeats = True

    def __init__(self, served: Sequence[APIResource]) -> None:
        """``served``: every stored resource the apiserver serves (its discovery)."""
        self.served_changed(served)

    def served_changed(self, served: Sequence[APIResource]) -> None:
        """The served resources changed (a CRD was established or removed): monitor the new
        set, as upstream's GC does after a discovery resync. The engine re-routes changes."""
        monitored: dict[Resource, APIResource] = {}
        for r in served:
            if r.supports("delete", "list", "watch") and r.resource not in IGNORED and r.storage == r.resource:
                monitored.setdefault(r.resource, r)  # one version per resource: the preferred one
        self._monitored = tuple(monitored.values())
        self.resources = tuple(monitored)
        self._kinds = KindMap(served)
        self._kind_of = {r.storage: r for r in self._monitored}

    def keys_for(self, change: Change) -> Iterable[str]:
        if change.type == MODIFIED:  # the hot path (Lease renewals, status writes): nothing for the GC
            meta, old = change.obj["metadata"], change.prev["metadata"]  # type: ignore[index]
            refs, finalizers = meta.get("ownerReferences"), meta.get("finalizers")
            if (refs is old.get("ownerReferences") or refs == old.get("ownerReferences")) \
                    and (finalizers is old.get("finalizers") or finalizers == old.get("finalizers")) \
                    and meta.get("deletionTimestamp") == old.get("deletionTimestamp"):
                return ()
        return keys_for(change, self._kinds)

    def reconcile(self, key: str, ctx: Context) -> None:
        op, ref = parse_key(key)
        if op == ITEM:
            self._attempt_to_delete(ref, ctx)
        elif op == FOREGROUND:
            self._start_foreground(ref, ctx)
        elif op == WAITER:
            owner = self._live(ref, ctx)
            if owner is not None and deleting_dependents(owner):
                self._process_deleting_dependents(ref, ctx)
        elif op == ORPHAN:
            self._orphan_dependents(ref, ctx)
        elif op == GONE:
            for dependent, _ in self._dependents(ref.uid, ctx):
                ctx.enqueue(dependent.key(ITEM))

    # -- attemptToDeleteItem -------------------------------------------------------------
    def _attempt_to_delete(self, ref: ObjectRef, ctx: Context) -> None:
        obj = self._live(ref, ctx)
        if obj is None:
            return
        meta = obj["metadata"]
        if meta.get("deletionTimestamp"):  # a one-way trip: only a foreground owner has work left
            if deleting_dependents(obj):
                self._process_deleting_dependents(ref, ctx)
            return
        owner_refs = meta.get("ownerReferences") or []
        if not owner_refs:
            return
        try:
            solid, dangling, waiting = self._classify(obj, ref, owner_refs, ctx)
        except Unresolvable:
            return
        if solid:
            if dangling or waiting:
                self._remove_references(ref, [r["uid"] for r in dangling + waiting], ctx)
            return
        if waiting and self._dependents(ref.uid, ctx):
            self._unblock_if_cycle(obj, ref, ctx)
            self._delete(obj, ref, FOREGROUND_POLICY, ctx)
            return
        self._delete(obj, ref, _own_policy(meta.get("finalizers") or []), ctx)

    def _classify(self, obj: Obj, ref: ObjectRef, owner_refs: list[Obj],
                  ctx: Context) -> tuple[list[Obj], list[Obj], list[Obj]]:
        """(solid, dangling, waitingForDependentsDeletion) owners, as ``classifyReferences``."""
        solid: list[Obj] = []
        dangling: list[Obj] = []
        waiting: list[Obj] = []
        for owner_ref in owner_refs:
            owner = self._owner(obj, ref, owner_ref, ctx)
            if owner is None:
                dangling.append(owner_ref)
            elif deleting_dependents(owner):
                waiting.append(owner_ref)
            else:
                solid.append(owner_ref)
        return solid, dangling, waiting

    def _owner(self, obj: Obj, ref: ObjectRef, owner_ref: Obj, ctx: Context) -> Obj | None:
        """The live owner ``owner_ref`` names, or None when it is absent (``isDangling``)."""
        served = self._kinds.get(str(owner_ref.get("apiVersion", "")), str(owner_ref.get("kind", "")))
        if served is None:
            raise Unresolvable(f"no served kind {owner_ref.get('kind')} in {owner_ref.get('apiVersion')}")
        name, uid = str(owner_ref.get("name", "")), owner_ref.get("uid")
        if served.namespaced and not ref.namespace:
            self._report_invalid_namespace(obj, ref, owner_ref, served, ctx)
            raise Unresolvable("cluster-scoped objects cannot refer to namespaced owners")
        owner = ctx.get(served.storage, name, ref.namespace if served.namespaced else "")
        if owner is not None and owner["metadata"].get("uid") == uid:
            return owner
        if served.namespaced:
            self._report_invalid_namespace(obj, ref, owner_ref, served, ctx)
        return None

    def _report_invalid_namespace(self, obj: Obj, ref: ObjectRef, owner_ref: Obj, served: APIResource,
                                  ctx: Context) -> None:
        """The GraphBuilder's warning when the owner it has observed lives in another
        namespace than its dependent (``reportInvalidNamespaceOwnerRef``)."""
        uid, name = owner_ref.get("uid"), str(owner_ref.get("name", ""))
        namespaces = [ns["metadata"]["name"] for ns in ctx.list(NAMESPACES)]
        if not any((o := ctx.get(served.storage, name, ns)) is not None and o["metadata"].get("uid") == uid
                   for ns in namespaces if ns != ref.namespace):
            return  # never observed: nothing to report, the owner is simply absent
        identity = (f"[{owner_ref.get('apiVersion', '')}/{owner_ref.get('kind', '')}, namespace: {ref.namespace}, "
                    f"name: {name}, uid: {uid}]")
        kind = self._kind_of[ref.resource]
        ctx.record_event(obj, kind.kind, "Warning", OWNER_REF_INVALID_NAMESPACE,
                         f'ownerRef {identity} does not exist in namespace "{ref.namespace}"', NAME,
                         api_version=kind.api_version)

    def _unblock_if_cycle(self, obj: Obj, ref: ObjectRef, ctx: Context) -> None:
        """A dependent of ours also deleting in the foreground may wait for us while we wait
        for it: make our references non-blocking first (upstream's cycle guard)."""
        if not any(deleting_dependents(dep) for _, dep in self._dependents(ref.uid, ctx)):
            return
        refs = obj["metadata"].get("ownerReferences") or []
        unblocked = [{"uid": r.get("uid"), "blockOwnerDeletion": False} for r in refs if blocks(r)]
        if unblocked:
            self._patch(ref, {"metadata": {"ownerReferences": unblocked, "uid": ref.uid}}, STRATEGIC_MERGE_PATCH, ctx)

    # -- foreground --------------------------------------------------------------------
    def _start_foreground(self, ref: ObjectRef, ctx: Context) -> None:
        """Deletion began with ``foregroundDeletion``: every dependent is checked (they see
        their owner waiting), then the owner itself."""
        for dependent, _ in self._dependents(ref.uid, ctx):
            ctx.enqueue(dependent.key(ITEM))
        ctx.enqueue(ref.key(ITEM))

    def _process_deleting_dependents(self, ref: ObjectRef, ctx: Context) -> None:
        """``processDeletingDependentsItem``: done when no blocking dependent is left."""
        blocking = [(dep_ref, dep) for dep_ref, dep in self._dependents(ref.uid, ctx)
                    if blocks(reference_to(dep, ref.uid) or {})]
        if not blocking:
            self._remove_finalizer(ref, FOREGROUND_FINALIZER, ctx)
            return
        for dep_ref, dep in blocking:
            if not deleting_dependents(dep):
                ctx.enqueue(dep_ref.key(ITEM))

    # -- orphan ------------------------------------------------------------------------
    def _orphan_dependents(self, ref: ObjectRef, ctx: Context) -> None:
        """``attemptToOrphanWorker``: every dependent lets go of the owner, then the owner's
        ``orphan`` finalizer is removed."""
        for dep_ref, _ in self._dependents(ref.uid, ctx):
            self._remove_references(dep_ref, [ref.uid], ctx)
        self._remove_finalizer(ref, ORPHAN_FINALIZER, ctx)

    # -- reads and writes --------------------------------------------------------------
    def _live(self, ref: ObjectRef, ctx: Context) -> Obj | None:
        """The object ``ref`` names, if it is still that one (same uid)."""
        obj = ctx.get(ref.resource, ref.name, ref.namespace)
        return obj if obj is not None and obj["metadata"].get("uid") == ref.uid else None

    def _dependents(self, owner_uid: str, ctx: Context) -> builtins.list[tuple[ObjectRef, Obj]]:
        """Every object with a reference to ``owner_uid``, type by type in registration order."""
        found = []
        for served in self._monitored:
            for dep in ctx.owned_by(served.storage, owner_uid):
                meta = dep["metadata"]
                found.append((ObjectRef(served.storage, meta.get("namespace") or "", meta["name"], meta["uid"]), dep))
        return found

    def _remove_references(self, ref: ObjectRef, owner_uids: list[str], ctx: Context) -> None:
        """The GC's strategic merge patch deleting references by uid (the dependent's uid in
        the patch stops it from touching a namesake)."""
        patch = {"metadata": {"ownerReferences": [{"$patch": "delete", "uid": uid} for uid in owner_uids],
                              "uid": ref.uid}}
        self._patch(ref, patch, STRATEGIC_MERGE_PATCH, ctx)

    def _remove_finalizer(self, ref: ObjectRef, finalizer: str, ctx: Context) -> None:
        """A merge patch of ``metadata.finalizers`` at the resourceVersion just read."""
        obj = self._live(ref, ctx)
        if obj is None or finalizer not in (obj["metadata"].get("finalizers") or []):
            return
        rest = [f for f in obj["metadata"]["finalizers"] if f != finalizer] or None
        patch = {"metadata": {"resourceVersion": obj["metadata"]["resourceVersion"], "finalizers": rest}}
        self._patch(ref, patch, MERGE_PATCH, ctx)

    def _patch(self, ref: ObjectRef, patch: Obj, patch_type: str, ctx: Context) -> None:
        try:
            ctx.client.patch(ref.resource, ref.name, patch, ref.namespace, patch_type)
        except ApiError as err:
            if err.code != 404:  # gone meanwhile: nothing left to change
                raise

    def _delete(self, obj: Obj, ref: ObjectRef, policy: str, ctx: Context) -> None:
        try:
            ctx.client.delete(ref.resource, ref.name, ref.namespace, uid=ref.uid,
                              resource_version=obj["metadata"].get("resourceVersion"), propagation_policy=policy)
        except ApiError as err:
            if err.code != 404:
                raise


def _own_policy(finalizers: list[str]) -> str:
    """Collecting an object honours its own GC finalizer (else deletes in the background)."""
    if ORPHAN_FINALIZER in finalizers:
        return ORPHAN_POLICY
    if FOREGROUND_FINALIZER in finalizers:
        return FOREGROUND_POLICY
    return BACKGROUND
