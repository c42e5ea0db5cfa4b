"""``persistentVolumeClaimRetentionPolicy`` as owner references on the claims (upstream
``stateful_set_utils.go``: ``isClaimOwnerUpToDate``, ``updateClaimOwnerRefForSetAndPod``,
``hasUnexpectedController``, ``hasStaleOwnerRef``; StatefulSetAutoDeletePVC is GA in 1.32).

The garbage collector does the deleting: a claim the set controls goes with the set
(``whenDeleted: Delete``), one a scaled-down pod controls goes with that pod
(``whenScaled: Delete``). Retain/Retain: no reference to the set or pod at all. Pure.
"""

from __future__ import annotations

from typing import Any, Mapping

from fakekube.controllers.statefulset.identity import API_VERSION, KIND, in_ordinal_range
from fakekube.objects.owners import owner_reference, owner_references

Obj = dict[str, Any]

RETAIN = "Retain"
DELETE = "Delete"


def policy(sts: Mapping[str, Any]) -> tuple[str, str]:
    """(whenScaled, whenDeleted), Retain when unset; an unknown value counts as Retain."""
    given = (sts.get("spec") or {}).get("persistentVolumeClaimRetentionPolicy") or {}
    scaled, deleted = given.get("whenScaled") or RETAIN, given.get("whenDeleted") or RETAIN
    if scaled not in (RETAIN, DELETE) or deleted not in (RETAIN, DELETE):
        return RETAIN, RETAIN
    return scaled, deleted


def _uid(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def _matches_ref(ref: Mapping[str, Any], obj: Mapping[str, Any], api_version: str, kind: str) -> bool:
    """``matchesRef``: same apiVersion, kind and name (uid not compared)."""
    return (ref.get("apiVersion") == api_version and ref.get("kind") == kind
            and ref.get("name") == (obj.get("metadata") or {}).get("name"))


def _has_ref(claim: Mapping[str, Any], owner: Mapping[str, Any]) -> bool:
    return any(ref.get("uid") == _uid(owner) for ref in owner_references(claim))


def _stale(claim: Mapping[str, Any], owner: Mapping[str, Any], api_version: str, kind: str) -> bool:
    """``hasStaleOwnerRef``: the first reference naming ``owner`` has another uid."""
    for ref in owner_references(claim):
        if _matches_ref(ref, owner, api_version, kind):
            return ref.get("uid") != _uid(owner)
    return False


def unexpected_controller(claim: Mapping[str, Any], sts: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """``hasUnexpectedController``: under a Delete policy, another controller (or a stale
    reference to the set or pod) manages the claim."""
    if policy(sts) == (RETAIN, RETAIN):
        return False
    for ref in owner_references(claim):
        for owner, api_version, kind in ((sts, API_VERSION, KIND), (pod, "v1", "Pod")):
            if _matches_ref(ref, owner, api_version, kind):
                if ref.get("uid") != _uid(owner):
                    return True
                break
        else:
            if ref.get("controller") is True:
                return True
    return False


def _non_controller_owner(claim: Mapping[str, Any], sts: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    return any(ref.get("uid") in (_uid(sts), _uid(pod)) and ref.get("controller") is not True
               for ref in owner_references(claim))


def up_to_date(claim: Mapping[str, Any], sts: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """``isClaimOwnerUpToDate``: the claim's references already say what the policy wants."""
    if _stale(claim, sts, API_VERSION, KIND) or _stale(claim, pod, "v1", "Pod"):
        return True  # managed by an earlier, presumably deleted, set or pod: left alone
    if unexpected_controller(claim, sts, pod):
        return not (_has_ref(claim, sts) or _has_ref(claim, pod))
    if _non_controller_owner(claim, sts, pod):
        return False
    scaled, deleted = policy(sts)
    scaled_down = not in_ordinal_range(pod, sts)
    want_set = deleted == DELETE and (scaled == RETAIN or not scaled_down)
    want_pod = scaled == DELETE and scaled_down
    return _has_ref(claim, sts) == want_set and _has_ref(claim, pod) == want_pod


def updated_refs(claim: Mapping[str, Any], sts: Mapping[str, Any], pod: Mapping[str, Any]) -> list[Obj]:
    """``updateClaimOwnerRefForSetAndPod``: the claim's references, ours rewritten."""
    unexpected = unexpected_controller(claim, sts, pod)
    refs = [ref for ref in owner_references(claim)
            if not (_matches_ref(ref, sts, API_VERSION, KIND) or _matches_ref(ref, pod, "v1", "Pod"))]
    if unexpected:
        return refs
    scaled, deleted = policy(sts)
    scaled_down = not in_ordinal_range(pod, sts)
    if scaled == DELETE and scaled_down:
        refs = _add_controller(refs, pod, "v1", "Pod")
    if deleted == DELETE and (scaled == RETAIN or not scaled_down):
        refs = _add_controller(refs, sts, API_VERSION, KIND)
    return refs


def _add_controller(refs: list[Obj], owner: Mapping[str, Any], api_version: str, kind: str) -> list[Obj]:
    """``addControllerRef``."""
    if any(ref.get("uid") == _uid(owner) for ref in refs):
        return refs
    return refs + [owner_reference(owner, api_version, kind)]


def is_stale(claim: Mapping[str, Any], sts: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """``PodClaimIsStale`` for one existing claim: under ``whenScaled: Delete`` a claim whose
    reference names another instance of the pod (one not created yet included) blocks the pod."""
    return policy(sts)[0] == DELETE and _stale(claim, pod, "v1", "Pod")
