"""Adopting and releasing pods (upstream's ``PodControllerRefManager.ClaimPods``,
``pkg/controller/controller_ref_manager.go``, 1.33).

For each active pod of the namespace a ReplicaSet could own:

* controlled by another object: not ours, left alone;
* controlled by us and matching the selector: ours;
* controlled by us but no longer matching: released (the owner reference is removed by a
  strategic merge patch), unless the ReplicaSet is being deleted;
* an orphan that matches, is not being deleted, and the ReplicaSet is not being deleted:
  adopted (a patch adds the controller reference), after one fresh re-read of the
  ReplicaSet checks it is still the same object and not being deleted
  (``RecheckDeletionTimestamp``).

Both patches carry the pod's uid, so a pod deleted and re-created under the same name is
never adopted or released by mistake (the apiserver refuses the patch as invalid).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from fakekube.api.machinery.errors import ApiError
from fakekube.engine import Context
from fakekube.engine.client import STRATEGIC_MERGE_PATCH
from fakekube.objects.kinds import PODS
from fakekube.objects.labels import LabelMatcher
from fakekube.objects.owners import controller_of, owner_reference, owner_references
from fakekube.controllers.replicaset.workload import Workload

Obj = dict[str, Any]


class Claim:
    """One sync's claim of pods for one ReplicaSet (the ref manager with its once-only recheck)."""

    def __init__(self, workload: Workload, rs: Obj, selector: LabelMatcher, ctx: Context) -> None:
        self.workload = workload
        self.rs = rs
        self.selector = selector
        self.ctx = ctx
        self._adopt_error: str | None = None
        self._rechecked = False
        #: Messages of failed adoptions and releases (upstream's aggregated error).
        self.errors: list[str] = []

    def claim(self, pods: Sequence[Obj]) -> list[Obj]:
        """The pods this ReplicaSet owns after adopting and releasing as needed."""
        return [pod for pod in pods if self._claim_one(pod)]

    def _claim_one(self, pod: Obj) -> bool:
        ref = controller_of(pod)
        rs_meta = self.rs["metadata"]
        matches = self.selector.matches((pod.get("metadata") or {}).get("labels"))
        if ref is not None:
            if ref.get("uid") != rs_meta.get("uid"):
                return False
            if matches or rs_meta.get("deletionTimestamp"):
                return matches
            self._release(pod)
            return False
        if rs_meta.get("deletionTimestamp") or not matches or pod["metadata"].get("deletionTimestamp"):
            return False
        if pod["metadata"].get("namespace") != rs_meta.get("namespace"):
            return False
        return self._adopt(pod)

    def _adopt(self, pod: Obj) -> bool:
        meta = pod["metadata"]
        problem = self._can_adopt()
        if problem is not None:
            self.errors.append(f"can't adopt Pod {meta['namespace']}/{meta['name']} ({meta.get('uid')}): {problem}")
            return False
        ref = owner_reference(self.rs, self.workload.api_version, self.workload.kind)
        patch = {"metadata": {"ownerReferences": [ref], "uid": meta.get("uid")}}
        try:
            self.ctx.client.patch(PODS, meta["name"], patch, meta["namespace"], STRATEGIC_MERGE_PATCH)
        except ApiError as error:
            if error.code != 404:
                self.errors.append(error.message)
            return False
        return True

    def _release(self, pod: Obj) -> None:
        meta = pod["metadata"]
        uid = self.rs["metadata"]["uid"]
        refs: Any = [{"$patch": "delete", "uid": uid}]
        if all(ref.get("uid") == uid for ref in owner_references(pod)):
            # The last reference: the field goes, as upstream's typed decoding drops an empty
            # list (our apiserver would keep ``ownerReferences: []``).
            refs = None
        patch = {"metadata": {"ownerReferences": refs, "uid": meta.get("uid")}}
        try:
            self.ctx.client.patch(PODS, meta["name"], patch, meta["namespace"], STRATEGIC_MERGE_PATCH)
        except ApiError as error:
            # Gone, or invalid (no such reference any more, or another pod of that name).
            if error.code not in (404, 422):
                self.errors.append(error.message)

    def _can_adopt(self) -> str | None:
        """Upstream's uncached re-read of the owner, once per sync."""
        if not self._rechecked:
            self._rechecked = True
            self._adopt_error = _recheck(self.workload, self.rs, self.ctx)
        return self._adopt_error


def _recheck(workload: Workload, rs: Mapping[str, Any], ctx: Context) -> str | None:
    meta = rs["metadata"]
    fresh = ctx.get(workload.resource, meta["name"], meta["namespace"])
    if fresh is None:
        return f'{workload.resource} "{meta["name"]}" not found'
    fresh_meta = fresh["metadata"]
    if fresh_meta.get("uid") != meta.get("uid"):
        return (f"original {workload.kind} {meta['namespace']}/{meta['name']} is gone: got uid "
                f"{fresh_meta.get('uid')}, wanted {meta.get('uid')}")
    if fresh_meta.get("deletionTimestamp"):
        return f"{meta['namespace']}/{meta['name']} has just been deleted at {fresh_meta['deletionTimestamp']}"
    return None
