"""Controller references, adoption and release."""

from fakekube.objects import (
    adopted,
    controller_of,
    is_controlled_by,
    orphaned,
    owner_reference,
    owner_uids,
)

RS = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web-1", "uid": "rs-uid"}}


def _pod(*refs):
    meta = {"name": "p", "uid": "pod-uid"}
    if refs:
        meta["ownerReferences"] = list(refs)
    return {"metadata": meta}


def test_owner_reference_is_new_controller_ref():
    assert owner_reference(RS, "apps/v1", "ReplicaSet") == {
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "uid": "rs-uid",
        "controller": True, "blockOwnerDeletion": True}
    ref = owner_reference(RS, "apps/v1", "ReplicaSet", controller=False, block_owner_deletion=False)
    assert ref["controller"] is False and ref["blockOwnerDeletion"] is False


def test_controller_of_needs_controller_true():
    plain = {"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "cm-uid"}
    not_controller = {**plain, "uid": "x", "controller": False}
    ctrl = owner_reference(RS, "apps/v1", "ReplicaSet")
    assert controller_of(_pod()) is None
    assert controller_of(_pod(plain, not_controller)) is None
    assert controller_of(_pod(plain, ctrl)) == ctrl
    assert is_controlled_by(_pod(plain, ctrl), RS)
    assert not is_controlled_by(_pod(plain), RS)
    assert not is_controlled_by(_pod(ctrl), {"metadata": {"uid": "other"}})


def test_adopt_appends_or_replaces_by_uid_without_touching_the_input():
    plain = {"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "cm-uid"}
    pod = _pod(plain)
    ref = owner_reference(RS, "apps/v1", "ReplicaSet")
    result = adopted(pod, ref)
    assert result["metadata"]["ownerReferences"] == [plain, ref]
    assert pod["metadata"]["ownerReferences"] == [plain]
    assert is_controlled_by(result, RS)
    stale = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "uid": "rs-uid"}
    again = adopted(_pod(stale, plain), ref)
    assert again["metadata"]["ownerReferences"] == [ref, plain]
    assert adopted({}, ref)["metadata"]["ownerReferences"] == [ref]


def test_orphan_removes_only_that_owner():
    plain = {"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "cm-uid"}
    ref = owner_reference(RS, "apps/v1", "ReplicaSet")
    pod = _pod(plain, ref)
    released = orphaned(pod, "rs-uid")
    assert released["metadata"]["ownerReferences"] == [plain]
    assert controller_of(released) is None
    assert pod["metadata"]["ownerReferences"] == [plain, ref]
    assert "ownerReferences" not in orphaned(_pod(ref), "rs-uid")["metadata"]
    assert orphaned(_pod(plain), "nobody")["metadata"]["ownerReferences"] == [plain]


def test_owner_uids():
    plain = {"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "cm-uid"}
    assert owner_uids(_pod(plain, owner_reference(RS, "apps/v1", "ReplicaSet"))) == ["cm-uid", "rs-uid"]
    assert owner_uids(_pod()) == []
    assert owner_uids({}) == []
