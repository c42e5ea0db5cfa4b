"""A StatefulSet's ControllerRevisions and claim retention owners: upstream's rules (pure)."""

from __future__ import annotations

from fakekube.controllers.statefulset import history, retention
from fakekube.objects.templatehash import fnv32, safe_encode_string

STS = {"metadata": {"name": "web", "namespace": "default", "uid": "u1", "annotations": {"note": "x"}},
       "spec": {"template": {"metadata": {"labels": {"app": "web"}},
                             "spec": {"containers": [{"name": "c", "image": "nginx<1>"}]}}}}


def test_the_revision_holds_the_replace_patch_and_is_named_by_its_hash() -> None:
    revision = history.new_revision(STS, 3, 0)
    assert revision["data"] == {"spec": {"template": {"$patch": "replace", "metadata": {"labels": {"app": "web"}},
                                                      "spec": {"containers": [{"image": "nginx<1>", "name": "c"}]}}}}
    # HashControllerRevision: FNV-1 over Go's JSON (sorted keys, HTML escaped), then the count.
    raw = (b'{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"app":"web"}},'
           b'"spec":{"containers":[{"image":"nginx\\u003c1\\u003e","name":"c"}]}}}}')
    hash_ = safe_encode_string(str(fnv32(b"0", fnv32(raw))))
    assert revision["metadata"]["name"] == f"web-{hash_}"
    assert revision["metadata"]["labels"] == {"app": "web", "controller-revision-hash": hash_}
    assert revision["metadata"]["annotations"] == {"note": "x"} and revision["revision"] == 3
    assert revision["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"
    assert history.revision_hash(revision["data"], 1) != hash_
    assert history.template_of(revision) == STS["spec"]["template"]


def test_history_is_cut_oldest_first_sparing_live_revisions() -> None:
    revisions = [{"metadata": {"name": f"r{n}"}, "revision": n} for n in (1, 2, 3, 4)]
    assert [r["metadata"]["name"] for r in history.to_truncate(revisions, {"r1", "r4"}, 1)] == ["r2"]
    assert history.to_truncate(revisions, set(), 4) == []
    assert history.next_number(revisions) == 5 and history.next_number([]) == 1


def _set(scaled: str, deleted: str) -> dict:
    return {"metadata": {"name": "web", "namespace": "default", "uid": "set-uid"},
            "spec": {"replicas": 2, "persistentVolumeClaimRetentionPolicy": {"whenScaled": scaled,
                                                                             "whenDeleted": deleted}}}


POD_0 = {"metadata": {"name": "web-0", "uid": "pod-0"}}
POD_5 = {"metadata": {"name": "web-5", "uid": "pod-5"}}  # scaled down (ordinals 0-1)


def _owners(sts: dict, pod: dict) -> list[str]:
    return [ref["uid"] for ref in retention.updated_refs({"metadata": {}}, sts, pod)]


def test_the_retention_policy_as_owner_references() -> None:
    assert _owners(_set("Retain", "Retain"), POD_5) == []
    assert _owners(_set("Retain", "Delete"), POD_5) == ["set-uid"]
    assert _owners(_set("Delete", "Retain"), POD_0) == [] and _owners(_set("Delete", "Retain"), POD_5) == ["pod-5"]
    assert _owners(_set("Delete", "Delete"), POD_0) == ["set-uid"]
    assert _owners(_set("Delete", "Delete"), POD_5) == ["pod-5"]
    sts = _set("Delete", "Delete")
    claim = {"metadata": {"ownerReferences": retention.updated_refs({"metadata": {}}, sts, POD_5)}}
    assert retention.up_to_date(claim, sts, POD_5) and not retention.up_to_date({"metadata": {}}, sts, POD_5)


def test_a_claim_of_an_earlier_pod_of_that_name_is_stale_and_left_alone() -> None:
    sts = _set("Delete", "Retain")
    claim = {"metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "web-5",
                                               "uid": "old", "controller": True}]}}
    assert retention.is_stale(claim, sts, POD_5) and retention.up_to_date(claim, sts, POD_5)
    assert not retention.is_stale(claim, _set("Retain", "Delete"), POD_5)
