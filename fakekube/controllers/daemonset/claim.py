"""Adopting and releasing a DaemonSet's pods and ControllerRevisions (upstream's
``ClaimPods`` / ``ClaimControllerRevisions``, ``pkg/controller/controller_ref_manager.go``).

For each candidate (objects the DaemonSet already references, and orphans of its
namespace): controlled by another owner — not ours; controlled by us and selected — ours;
controlled by us but no longer selected — released by a strategic merge patch (unless the
DaemonSet is being deleted); a selected orphan not being deleted — adopted by a patch
adding the controller reference, after one fresh re-read of the DaemonSet
(``RecheckDeletionTimestamp``). Both patches carry the object's uid as a precondition.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from fakekube.api.machinery.errors import ApiError
from fakekube.engine import Context
from fakekube.engine.client import STRATEGIC_MERGE_PATCH
from fakekube.objects.kinds import DAEMON_SETS, Resource
from fakekube.objects.labels import LabelMatcher
from fakekube.objects.owners import controller_of, owner_reference

Obj = dict[str, Any]


class Claim:
    """One sync's claims for one DaemonSet; failed adoptions and releases are collected."""

    def __init__(self, ds: Obj, selector: LabelMatcher, ctx: Context) -> None:
        self.ds = ds
        self.selector = selector
        self.ctx = ctx
        self.errors: list[ApiError] = []
        self._recheck: ApiError | None | bool = False  # False: not re-read yet

    def claim(self, resource: Resource, candidates: Sequence[Obj]) -> list[Obj]:
        """The candidates the DaemonSet owns after adopting and releasing, in the given order."""
        return [obj for obj in candidates if self._claim_one(resource, obj)]

    def _claim_one(self, resource: Resource, obj: Obj) -> bool:
        meta = obj.get("metadata") or {}
        ds_meta = self.ds["metadata"]
        ref = controller_of(obj)
        selected = self.selector.matches(meta.get("labels"))
        if ref is not None:
            if ref.get("uid") != ds_meta.get("uid"):
                return False
            if not selected and not ds_meta.get("deletionTimestamp"):
                self._patch(resource, obj, [{"$patch": "delete", "uid": ds_meta.get("uid")}])
            return selected
        if ds_meta.get("deletionTimestamp") or not selected or meta.get("deletionTimestamp"):
            return False
        if meta.get("namespace") != ds_meta.get("namespace") or not self._can_adopt():
            return False
        return self._patch(resource, obj, [owner_reference(self.ds, "apps/v1", "DaemonSet")])

    def _patch(self, resource: Resource, obj: Obj, refs: list[Obj]) -> bool:
        meta = obj["metadata"]
        patch = {"metadata": {"ownerReferences": refs, "uid": meta.get("uid")}}
        try:
            self.ctx.client.patch(resource, meta["name"], patch, meta["namespace"], STRATEGIC_MERGE_PATCH)
        except ApiError as error:
            if error.code != 404:
                self.errors.append(error)
            return False
        return True

    def _can_adopt(self) -> bool:
        """The fresh re-read, once per sync: still this DaemonSet, and not being deleted."""
        if self._recheck is False:
            self._recheck = _recheck(self.ds, self.ctx)
            if isinstance(self._recheck, ApiError):
                self.errors.append(self._recheck)
        return self._recheck is None


def _recheck(ds: Mapping[str, Any], ctx: Context) -> ApiError | None:
    meta = ds["metadata"]
    fresh = ctx.get(DAEMON_SETS, meta["name"], meta["namespace"])
    if fresh is None:
        return ApiError(404, "NotFound", f'daemonsets.apps "{meta["name"]}" not found')
    fresh_meta = fresh["metadata"]
    if fresh_meta.get("uid") != meta.get("uid"):
        return ApiError(409, "Conflict", f"original DaemonSet {meta['namespace']}/{meta['name']} is gone: "
                                         f"got uid {fresh_meta.get('uid')}, wanted {meta.get('uid')}")
    if fresh_meta.get("deletionTimestamp"):
        return ApiError(409, "Conflict", f"{meta['namespace']}/{meta['name']} has just been deleted at "
                                         f"{fresh_meta['deletionTimestamp']}")
    return None
