"""The PV controller's matching rules in fakekube/objects/volumes.py (index.go,
checkVolumeSatisfyClaim, GetDefaultClass)."""

from __future__ import annotations

from typing import Any

from fakekube.objects.volumes import best_match_for_claim, default_class, volume_claim_mismatch

Obj = dict[str, Any]


def claim(storage: str = "1Gi", modes: tuple[str, ...] = ("ReadWriteOnce",), **spec: Any) -> Obj:
    return {"metadata": {"name": "c", "namespace": "default", "uid": "u1"},
            "spec": {"accessModes": list(modes), "resources": {"requests": {"storage": storage}}, **spec}}


def volume(name: str, storage: str, modes: tuple[str, ...] = ("ReadWriteOnce",), **spec: Any) -> Obj:
    return {"metadata": {"name": name}, "status": {"phase": "Available"},
            "spec": {"capacity": {"storage": storage}, "accessModes": list(modes), **spec}}


def names(found: Any) -> str | None:
    return None if found is None else found["metadata"]["name"]


def test_the_fewest_modes_group_wins_before_size() -> None:
    volumes = [volume("rwx-small", "1Gi", ("ReadWriteOnce", "ReadWriteMany")), volume("rwo-big", "5Gi"),
               volume("rwo-tight", "2Gi"), volume("rox", "1Gi", ("ReadOnlyMany",))]
    assert names(best_match_for_claim(claim("2Gi"), volumes, False)) == "rwo-tight"
    assert names(best_match_for_claim(claim("1Gi", ("ReadWriteMany",)), volumes, False)) == "rwx-small"
    assert names(best_match_for_claim(claim("9Gi"), volumes, False)) is None


def test_delayed_binding_takes_only_a_volume_pre_bound_to_the_claim() -> None:
    free = volume("free", "1Gi")
    mine = volume("mine", "1Gi", claimRef={"namespace": "default", "name": "c", "uid": "u1"})
    assert best_match_for_claim(claim(), [free], True) is None
    assert names(best_match_for_claim(claim(), [free, mine], True)) == "mine"


def test_a_named_volume_must_satisfy_the_claim() -> None:
    assert volume_claim_mismatch(volume("v", "1Gi"), claim("2Gi")) == "requested PV is too small"
    assert volume_claim_mismatch(volume("v", "2Gi", storageClassName="x"), claim("2Gi")) == \
        "storageClassName does not match"
    assert volume_claim_mismatch(volume("v", "2Gi", volumeMode="Block"), claim("2Gi")) == "incompatible volumeMode"
    assert volume_claim_mismatch(volume("v", "2Gi", ("ReadOnlyMany",)), claim("2Gi")) == "incompatible accessMode"
    assert volume_claim_mismatch(volume("v", "2Gi"), claim("2Gi")) == ""


def test_the_newest_default_class_wins() -> None:
    def sc(name: str, created: str, default: str | None = "true") -> Obj:
        annotations = {} if default is None else {"storageclass.kubernetes.io/is-default-class": default}
        return {"metadata": {"name": name, "creationTimestamp": created, "annotations": annotations}}

    assert default_class([sc("a", "2025-01-01T00:00:00Z", None), sc("b", "2025-01-01T00:00:00Z", "false")]) is None
    classes = [sc("old", "2025-01-01T00:00:00Z"), sc("new-b", "2025-01-02T00:00:00Z"), sc("new-a", "2025-01-02T00:00:00Z")]
    assert names(default_class(classes)) == "new-a"
