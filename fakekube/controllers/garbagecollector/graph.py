"""What one store change means for the garbage collector: pure rules, no store reads.

Upstream's GraphBuilder keeps a graph of every object's owners and dependents and turns
each informer event into work on two queues (``attemptToDelete``, ``attemptToOrphan``);
fakekube's store answers "who is owned by uid X" through the runtime's owner index, so
only the transitions are left here (pkg/controller/garbagecollector/graph_builder.go,
``processGraphChanges``, ``processTransitions``, ``addUnblockedOwnersToDeleteQueue``):

* an object that appears, or gains owner references, is checked: are its owners there?
  (upstream: a virtual node for an owner it has not seen, verified against the apiserver);
* deletion starting with the ``orphan`` finalizer orphans its dependents;
* deletion starting with ``foregroundDeletion`` deletes its dependents first;
* an object that is gone has its dependents checked, and its owners that wait for their
  dependents (foreground) look again;
* a blocking reference removed or unblocked lets its owner look again.

Work keys are ``<op>/<group>/<plural>/<namespace>/<name>/<uid>``: no part of an object's
coordinates can hold a ``/`` (names are DNS names or path segments).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, NamedTuple

from fakekube.objects import Resource
from fakekube.objects.kinds import APIResource
from fakekube.store import ADDED, DELETED, Change

Obj = dict[str, Any]

ORPHAN_FINALIZER = "orphan"
FOREGROUND_FINALIZER = "foregroundDeletion"

#: attemptToDelete: check an object's owners, delete it if none is left (or, for an object
#: deleting in the foreground, its dependents first).
ITEM = "item"
#: attemptToOrphan: release an owner's dependents, then drop its ``orphan`` finalizer.
ORPHAN = "orphan"
#: Deletion started with ``foregroundDeletion``: every dependent is checked, then the owner.
FOREGROUND = "foreground"
#: An object is gone: its dependents are checked.
GONE = "gone"
#: A dependent went or let go: its owner, if it waits for its dependents, looks again.
WAITER = "waiter"


class ObjectRef(NamedTuple):
    """An object's coordinates in the store, with the uid that tells it from a namesake."""

    resource: Resource
    namespace: str
    name: str
    uid: str

    def key(self, op: str) -> str:
        return f"{op}/{self.resource.group}/{self.resource.plural}/{self.namespace}/{self.name}/{self.uid}"


def parse_key(key: str) -> tuple[str, ObjectRef]:
    """The op and the object of a work key (the inverse of :meth:`ObjectRef.key`)."""
    op, group, plural, namespace, name, uid = key.split("/")
    return op, ObjectRef(Resource(group, plural), namespace, name, uid)


class KindMap:
    """The served kinds, as the GC's RESTMapper: (apiVersion, kind) of an ownerReference to
    the resource and scope of its owner. A version the apiserver does not serve maps to
    nothing (upstream: a RESTMapping error, retried until discovery learns the type)."""

    def __init__(self, served: Iterable[APIResource]) -> None:
        self._by_kind = {(r.api_version, r.kind): r for r in served}

    def get(self, api_version: str, kind: str) -> APIResource | None:
        return self._by_kind.get((api_version, kind))

    def owner_ref(self, ref: Mapping[str, Any], dependent_namespace: str) -> ObjectRef | None:
        """Where the owner named by ``ref`` would be: in the dependent's namespace when its
        kind is namespaced (a namespaced owner must share it), else cluster-wide."""
        served = self.get(str(ref.get("apiVersion", "")), str(ref.get("kind", "")))
        if served is None or not ref.get("uid") or not ref.get("name"):
            return None
        namespace = dependent_namespace if served.namespaced else ""
        return ObjectRef(served.storage, namespace, str(ref["name"]), str(ref["uid"]))


def keys_for(change: Change, kinds: KindMap) -> list[str]:
    """The work one store change makes (see the module docstring). Cheap when nothing the
    GC cares about changed: an idle cluster's Lease renewals all pass through here."""
    meta = change.obj.get("metadata") or {}
    old = (change.prev.get("metadata") or {}) if change.prev is not None and change.type != ADDED else {}
    refs = meta.get("ownerReferences") or []
    if change.type == DELETED:
        this = ObjectRef(Resource(change.group, change.resource), change.namespace, change.name, meta.get("uid", ""))
        return [this.key(GONE)] + _owner_keys(refs, change.namespace, kinds, WAITER)
    old_refs = old.get("ownerReferences") or []
    if refs == old_refs and meta.get("deletionTimestamp") == old.get("deletionTimestamp") \
            and meta.get("finalizers") == old.get("finalizers"):
        return []
    this = ObjectRef(Resource(change.group, change.resource), change.namespace, change.name, meta.get("uid", ""))
    keys = []
    if refs != old_refs:
        keys += _reference_changes(this, refs, old_refs, kinds)
    if _deletion_starts_with(ORPHAN_FINALIZER, meta, old):
        keys.append(this.key(ORPHAN))
    elif _deletion_starts_with(FOREGROUND_FINALIZER, meta, old):
        keys.append(this.key(FOREGROUND))
    return keys


def _reference_changes(this: ObjectRef, refs: list[Obj], old_refs: list[Obj], kinds: KindMap) -> list[str]:
    """New owners get checked (the object itself is the work); owners whose blocking
    reference went or was unblocked look again at what they wait for."""
    old_by_uid = {ref.get("uid"): ref for ref in old_refs}
    new_uids = {ref.get("uid") for ref in refs}
    keys = [this.key(ITEM)] if any(ref.get("uid") not in old_by_uid for ref in refs) else []
    released = [ref for ref in old_refs if ref.get("uid") not in new_uids and blocks(ref)]
    released += [ref for ref in refs if blocks(old_by_uid.get(ref.get("uid")) or {}) and not blocks(ref)]
    return keys + _owner_keys(released, this.namespace, kinds, WAITER)


def _owner_keys(refs: Iterable[Mapping[str, Any]], namespace: str, kinds: KindMap, op: str) -> list[str]:
    owners = (kinds.owner_ref(ref, namespace) for ref in refs)
    return [owner.key(op) for owner in owners if owner is not None]


def _deletion_starts_with(finalizer: str, meta: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
    """``deletionStartsWithFinalizer``: being deleted with ``finalizer`` now, and was not before."""
    if not meta.get("deletionTimestamp") or finalizer not in (meta.get("finalizers") or ()):
        return False
    return not old.get("deletionTimestamp") or finalizer not in (old.get("finalizers") or ())


def blocks(ref: Mapping[str, Any]) -> bool:
    """Does this reference hold its owner's foreground deletion (``blockOwnerDeletion: true``)?"""
    return ref.get("blockOwnerDeletion") is True


def deleting_dependents(obj: Mapping[str, Any]) -> bool:
    """Being deleted in the foreground: waiting for its blocking dependents to go."""
    meta = obj.get("metadata") or {}
    return bool(meta.get("deletionTimestamp")) and FOREGROUND_FINALIZER in (meta.get("finalizers") or ())


def reference_to(dependent: Mapping[str, Any], owner_uid: str) -> Obj | None:
    """The dependent's reference to ``owner_uid`` (the first, if it lists it twice)."""
    refs = (dependent.get("metadata") or {}).get("ownerReferences") or []
    return next((ref for ref in refs if ref.get("uid") == owner_uid), None)
