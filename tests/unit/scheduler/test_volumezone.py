"""VolumeZone: a bound PV's zone and region labels against the node's (volume_zone.go, 1.33)."""

from __future__ import annotations

from typing import Any

import pytest

from fakekube.scheduler.framework import NODE, PV, PVC, STORAGE_CLASS, Action, ClusterEvent, Code, CycleState, Hint
from fakekube.scheduler.framework import NodeInfo, PodInfo
from fakekube.scheduler.plugins.volumezone import (
    ERR_REASON_CONFLICT, NAME, VolumeZone, _after_claim_change, _after_storage_class_added, _after_volume_change,
)
from tests.unit.scheduler.volume_objects import (
    FakeContext, claim_volume, handle, node, pod, pv, pvc, storage_class,
)

Obj = dict[str, Any]
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"


def verdict(ctx: FakeContext, target: Obj, incoming: Obj | None = None) -> str:
    plugin = VolumeZone(handle(ctx), {})
    state, info = CycleState(), PodInfo(incoming or pod("p", claim_volume("data")))
    _, status = plugin.pre_filter(state, info)
    if status is not None:
        assert status.code in (Code.SKIP, Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
        return "skip" if status.code == Code.SKIP else status.message
    result = plugin.filter(state, info, NodeInfo(target))
    if result is None:
        return "fits"
    assert result.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and result.plugin == NAME
    return result.message


def bound_to(labels: dict[str, str]) -> FakeContext:
    return FakeContext(pvc("data", volume_name="pv-1", bound=True), pv("pv-1", labels=labels))


@pytest.mark.parametrize("pv_labels, node_labels, expected", [
    ({"topology.kubernetes.io/zone": "a"}, {"topology.kubernetes.io/zone": "a"}, "fits"),
    ({"topology.kubernetes.io/zone": "a"}, {"topology.kubernetes.io/zone": "b"}, ERR_REASON_CONFLICT),
    ({"topology.kubernetes.io/zone": "a"}, {}, "fits"),                        # node without zone labels
    ({"topology.kubernetes.io/zone": "a"}, {REGION: "r"}, ERR_REASON_CONFLICT),  # has a region, no zone
    ({"topology.kubernetes.io/zone": "a__b"}, {"topology.kubernetes.io/zone": "b"}, "fits"),
    ({BETA_ZONE: "a"}, {"topology.kubernetes.io/zone": "a"}, "fits"),          # beta PV label, GA node label
    ({BETA_ZONE: "a"}, {BETA_ZONE: "b", "topology.kubernetes.io/zone": "a"}, ERR_REASON_CONFLICT),
    ({"topology.kubernetes.io/zone": "a", REGION: "r1"}, {"topology.kubernetes.io/zone": "a", REGION: "r2"},
     ERR_REASON_CONFLICT),
    ({"topology.kubernetes.io/zone": "a____b"}, {"topology.kubernetes.io/zone": "c"}, "skip"),  # unparsable label
])
def test_bound_volume_zone(pv_labels: dict[str, str], node_labels: dict[str, str], expected: str) -> None:
    target = {"metadata": {"name": "n", "labels": node_labels}, "spec": {}, "status": {}}
    assert verdict(bound_to(pv_labels), target) == expected


def test_unbound_claims() -> None:
    target = node("n", zone="a")
    wffc = FakeContext(pvc("data", class_name="late"), storage_class("late"))
    assert verdict(wffc, target) == "skip"
    immediate = FakeContext(pvc("data", class_name="now"), storage_class("now", mode="Immediate"))
    assert verdict(immediate, target) == "PersistentVolume had no name"
    assert verdict(FakeContext(pvc("data")), target) == "PersistentVolumeClaim had no pv name and storageClass name"
    assert verdict(FakeContext(pvc("data", class_name="gone")), target) == \
        'storageclass.storage.k8s.io "gone" not found'


def test_missing_objects() -> None:
    target = node("n", zone="a")
    assert verdict(FakeContext(), target) == 'persistentvolumeclaim "data" not found'
    assert verdict(FakeContext(pvc("data", volume_name="pv-9", bound=True)), target) == \
        'persistentvolume "pv-9" not found'
    assert verdict(FakeContext(), target, pod("p", claim_volume(""))) == "PersistentVolumeClaim had no name"
    assert verdict(FakeContext(), target, pod("p", {"name": "tmp", "emptyDir": {}})) == "skip"


def test_events_and_hints() -> None:
    events = [h.event for h in VolumeZone(handle(FakeContext()), {}).events_to_register()]
    assert events == [ClusterEvent(STORAGE_CLASS, Action.ADD),
                      ClusterEvent(NODE, Action.ADD | Action.UPDATE_NODE_LABEL),
                      ClusterEvent(PVC, Action.ADD | Action.UPDATE), ClusterEvent(PV, Action.ADD | Action.UPDATE)]
    waiting = pod("p", claim_volume("data"))
    assert _after_claim_change(waiting, None, pvc("data")) == Hint.QUEUE
    assert _after_claim_change(waiting, None, pvc("other")) == Hint.SKIP
    assert _after_storage_class_added(waiting, None, storage_class("late")) == Hint.QUEUE
    assert _after_storage_class_added(waiting, None, storage_class("now", mode="Immediate")) == Hint.SKIP
    zoned = pv("pv-1", labels={"topology.kubernetes.io/zone": "a"})
    assert _after_volume_change(waiting, None, zoned) == Hint.QUEUE
    assert _after_volume_change(waiting, zoned, pv("pv-1", labels={"topology.kubernetes.io/zone": "b"})) == Hint.QUEUE
    assert _after_volume_change(waiting, zoned, pv("pv-1", labels={"topology.kubernetes.io/zone": "a",
                                                                    "team": "x"})) == Hint.SKIP
