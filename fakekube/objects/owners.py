"""Owner references: who controls an object, and the patches that adopt or release it.

Controllers find their pods (and ReplicaSets, Jobs, …) through the controller owner
reference, adopt matching orphans and release children that no longer match; the
garbage collector walks the same references. Sources: apimachinery
``pkg/apis/meta/v1/controller_ref.go`` (``GetControllerOf``, ``IsControlledBy``,
``NewControllerRef``) and ``pkg/controller/controller_ref_manager.go`` (the adopt and
release patches). Every function returns new objects.
"""

from __future__ import annotations

from typing import Any, Mapping

from fakekube.objects._json import deep_copy

Obj = dict[str, Any]


def owner_references(obj: Mapping[str, Any]) -> list[Obj]:
    """``metadata.ownerReferences``, an empty list when there are none."""
    return list((obj.get("metadata") or {}).get("ownerReferences") or [])


def controller_of(obj: Mapping[str, Any]) -> Obj | None:
    """``GetControllerOf``: the owner reference with ``controller: true``, or None.

    Validation allows at most one; the first wins if there were more.
    """
    return next((ref for ref in owner_references(obj) if ref.get("controller") is True), None)


def is_controlled_by(obj: Mapping[str, Any], owner: Mapping[str, Any]) -> bool:
    """``IsControlledBy``: is ``owner`` (by uid) the controller of ``obj``?"""
    ref = controller_of(obj)
    return ref is not None and ref.get("uid") == (owner.get("metadata") or {}).get("uid")


def owner_reference(
    owner: Mapping[str, Any], api_version: str, kind: str, controller: bool = True, block_owner_deletion: bool = True
) -> Obj:
    """``NewControllerRef``: a reference to ``owner`` (``api_version`` like ``apps/v1``).

    Keys in the order Go serialises them; both flags are always written, as upstream's
    pointers to true are.
    """
    meta = owner.get("metadata") or {}
    return {"apiVersion": api_version, "kind": kind, "name": meta.get("name", ""), "uid": meta.get("uid", ""),
            "controller": controller, "blockOwnerDeletion": block_owner_deletion}


def adopted(obj: Mapping[str, Any], owner_ref: Mapping[str, Any]) -> Obj:
    """A copy of ``obj`` after the ref manager's adopt patch (strategic merge, keyed by uid).

    A reference with the same uid is replaced in place; otherwise ``owner_ref`` goes last.
    Upstream sends this patch only for an object without a controller (``ClaimObject``).
    """
    updated: Obj = deep_copy(dict(obj))
    refs = owner_references(updated)
    new_ref = deep_copy(dict(owner_ref))
    index = next((i for i, ref in enumerate(refs) if ref.get("uid") == new_ref.get("uid")), None)
    if index is None:
        refs.append(new_ref)
    else:
        refs[index] = {**refs[index], **new_ref}
    updated.setdefault("metadata", {})["ownerReferences"] = refs
    return updated


def orphaned(obj: Mapping[str, Any], owner_uid: str) -> Obj:
    """A copy of ``obj`` after the release patch: the reference to ``owner_uid`` deleted.

    When no reference is left the field goes away: the server decodes the patched object
    into its typed form, which omits an empty ``ownerReferences``.
    """
    updated: Obj = deep_copy(dict(obj))
    refs = [ref for ref in owner_references(updated) if ref.get("uid") != owner_uid]
    meta = updated.setdefault("metadata", {})
    if refs:
        meta["ownerReferences"] = refs
    else:
        meta.pop("ownerReferences", None)
    return updated


def owner_uids(obj: Mapping[str, Any]) -> list[str]:
    """The uids of every owner of ``obj``, in reference order (the owner-uid index's keys)."""
    return [ref["uid"] for ref in owner_references(obj) if ref.get("uid")]
