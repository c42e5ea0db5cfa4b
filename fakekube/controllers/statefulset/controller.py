"""The StatefulSet controller on the engine: which changes wake which set, and the claims.

Upstream's informer handlers (``pkg/controller/statefulset/stateful_set.go``, 1.33), as pure
``keys_for``:

* a StatefulSet change syncs it;
* a pod change syncs the set that controls it (and the previous controller when the
  reference changed); an orphan pod that appears, or whose labels changed, wakes the sets
  of its namespace whose selector matches it (``orphan-pod:`` keys);
* ControllerRevisions and claims wake nobody (upstream has no handlers for them).

A sync claims its pods (``getPodsForStatefulSet``: a pod is the set's when the selector
matches and its name is ``<set>-<ordinal>``; orphans are adopted, mismatches released) and
its revisions (orphans matching the selector adopted), then runs
:class:`~fakekube.controllers.statefulset.sync.StatefulSetSync`. Nothing is kept between
syncs.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from fakekube.api.machinery.errors import ApiError
from fakekube.controllers.statefulset import identity
from fakekube.controllers.statefulset.sync import StatefulSetSync
from fakekube.engine import Context
from fakekube.engine.client import STRATEGIC_MERGE_PATCH
from fakekube.objects.indexes import ORPHANS_BY_NAMESPACE, orphan_namespace
from fakekube.objects.kinds import CONTROLLER_REVISIONS, PODS, STATEFUL_SETS, Resource
from fakekube.objects.labels import LabelMatcher, compile_selector
from fakekube.objects.owners import controller_of, owner_reference, owner_references
from fakekube.store import ADDED, DELETED, MODIFIED, Change

Obj = dict[str, Any]

ORPHAN_POD = "orphan-pod:"


class StatefulSetController:
    """kube-controller-manager's statefulset controller."""

    name = "statefulset-controller"
    resources = (STATEFUL_SETS, PODS, CONTROLLER_REVISIONS)
    indexes = ((PODS, ORPHANS_BY_NAMESPACE, orphan_namespace),
               (CONTROLLER_REVISIONS, ORPHANS_BY_NAMESPACE, orphan_namespace))

    # -- routing (pure) -----------------------------------------------------------
    def keys_for(self, change: Change) -> Iterable[str]:
        resource = (change.group, change.resource)
        if resource == STATEFUL_SETS:
            return [f"{change.namespace}/{change.name}"]
        if resource == PODS:
            return _pod_keys(change)
        return []

    # -- work ---------------------------------------------------------------------
    def reconcile(self, key: str, ctx: Context) -> None:
        if key.startswith(ORPHAN_POD):
            self._wake_selecting(key[len(ORPHAN_POD):], ctx)
            return
        namespace, _, name = key.partition("/")
        sts = ctx.get(STATEFUL_SETS, name, namespace)
        if sts is None:
            return
        try:
            selector = compile_selector((sts.get("spec") or {}).get("selector"))
        except ValueError:
            return  # upstream reports the bad selector and drops the set
        claim = _Claim(sts, selector, ctx)
        revisions = claim.revisions()
        pods = claim.pods()
        if claim.failed:
            ctx.requeue_rate_limited()
            return
        StatefulSetSync(sts, pods, revisions, ctx).run()

    def _wake_selecting(self, ref: str, ctx: Context) -> None:
        """``getPodStatefulSets``: an orphan wakes the sets of its namespace that select it."""
        namespace, _, name = ref.partition("/")
        pod = ctx.get(PODS, name, namespace)
        if pod is None or controller_of(pod) is not None:
            return
        labels = (pod.get("metadata") or {}).get("labels")
        for sts in ctx.list(STATEFUL_SETS, namespace):
            try:
                selector = compile_selector((sts.get("spec") or {}).get("selector"))
            except ValueError:
                continue
            if not selector.everything and selector.matches(labels):
                ctx.enqueue(f"{namespace}/{sts['metadata']['name']}")


class _Claim:
    """``ClaimPods`` / ``adoptOrphanRevisions`` for one sync (one recheck of the set)."""

    def __init__(self, sts: Obj, selector: LabelMatcher, ctx: Context) -> None:
        self.sts, self.selector, self.ctx = sts, selector, ctx
        self.meta: Obj = sts["metadata"]
        self.failed = False
        self._can_adopt: bool | None = None

    def candidates(self, resource: Resource) -> list[Obj]:
        found = {obj["metadata"]["name"]: obj for obj in self.ctx.owned_by(resource, self.meta["uid"])
                 if obj["metadata"].get("namespace") == self.meta["namespace"]}
        for obj in self.ctx.by_index(resource, ORPHANS_BY_NAMESPACE, self.meta["namespace"]):
            found.setdefault(obj["metadata"]["name"], obj)
        return [found[name] for name in sorted(found)]

    def pods(self) -> list[Obj]:
        """The pods the set owns after adopting and releasing."""
        owned = []
        for pod in self.candidates(PODS):
            matches = self.selector.matches(pod["metadata"].get("labels")) and identity.is_member_of(self.sts, pod)
            ref = controller_of(pod)
            if ref is not None:
                if ref.get("uid") != self.meta["uid"]:
                    continue
                if matches or self.meta.get("deletionTimestamp"):
                    owned += [pod] if matches else []
                else:
                    self._release(PODS, pod)
            elif (matches and not self.meta.get("deletionTimestamp") and not pod["metadata"].get("deletionTimestamp")
                  and self._adopt(PODS, pod)):
                owned.append(self.ctx.get(PODS, pod["metadata"]["name"], self.meta["namespace"]) or pod)
        return owned

    def revisions(self) -> list[Obj]:
        """``ListRevisions`` after ``adoptOrphanRevisions``: the selected revisions it controls."""
        result = []
        for revision in self.candidates(CONTROLLER_REVISIONS):
            if not self.selector.matches(revision["metadata"].get("labels")):
                continue
            ref = controller_of(revision)
            if ref is None:
                if not self._adopt(CONTROLLER_REVISIONS, revision):
                    continue
                revision = self.ctx.get(CONTROLLER_REVISIONS, revision["metadata"]["name"],
                                        self.meta["namespace"]) or revision
            elif ref.get("uid") != self.meta["uid"]:
                continue
            result.append(revision)
        return result

    def _adopt(self, resource: Resource, obj: Obj) -> bool:
        if self._can_adopt is None:
            fresh = self.ctx.get(STATEFUL_SETS, self.meta["name"], self.meta["namespace"])
            self._can_adopt = (fresh is not None and fresh["metadata"].get("uid") == self.meta["uid"]
                               and not fresh["metadata"].get("deletionTimestamp"))
        if not self._can_adopt:
            self.failed = True
            return False
        ref = owner_reference(self.sts, identity.API_VERSION, identity.KIND)
        return self._patch(resource, obj, [ref])

    def _release(self, resource: Resource, obj: Obj) -> None:
        uid = self.meta["uid"]
        refs: Any = [{"$patch": "delete", "uid": uid}]
        if all(ref.get("uid") == uid for ref in owner_references(obj)):
            refs = None  # the last reference: the field goes, as upstream's typed decoding drops []
        self._patch(resource, obj, refs, ignore=(404, 422))

    def _patch(self, resource: Resource, obj: Obj, refs: Any, ignore: tuple[int, ...] = (404,)) -> bool:
        meta = obj["metadata"]
        patch = {"metadata": {"ownerReferences": refs, "uid": meta.get("uid")}}
        try:
            self.ctx.client.patch(resource, meta["name"], patch, meta["namespace"], STRATEGIC_MERGE_PATCH)
        except ApiError as error:
            if error.code not in ignore:
                self.failed = True
            return False
        return True


def _set_key(namespace: str, obj: Mapping[str, Any] | None) -> str | None:
    ref = controller_of(obj) if obj is not None else None
    if ref is None or ref.get("kind") != identity.KIND or not ref.get("name"):
        return None
    return f"{namespace}/{ref['name']}"


def _pod_keys(change: Change) -> list[str]:
    """``addPod`` / ``updatePod`` / ``deletePod``: the controlling set, else the orphan."""
    obj, prev = change.obj, change.prev
    keys = []
    if change.type == MODIFIED and prev is not None and controller_of(obj) != controller_of(prev):
        keys.append(_set_key(change.namespace, prev))
    key = _set_key(change.namespace, obj)
    if key is not None:
        keys.append(key)
    elif controller_of(obj) is None and change.type != DELETED and not obj["metadata"].get("deletionTimestamp"):
        labels = (obj.get("metadata") or {}).get("labels")
        prev_labels = ((prev or {}).get("metadata") or {}).get("labels")
        if change.type == ADDED or labels != prev_labels or controller_of(prev or {}) is not None:
            keys.append(f"{ORPHAN_POD}{change.namespace}/{change.name}")
    return [k for k in dict.fromkeys(keys) if k is not None]
