"""VolumeRestrictions: inline disk conflicts (GCE PD, EBS, iSCSI, RBD) on a node,
ReadWriteOncePod claims already used by a scheduled pod, PreFilter Skip, the what-if
extensions preemption uses, and the queueing hints (volume_restrictions.go, 1.33)."""

from __future__ import annotations

from typing import Any

import pytest

from fakekube.scheduler.cache import Cache
from fakekube.scheduler.framework import (
    ASSIGNED_POD, NODE, PVC, UNSCHEDULED_POD, Action, ClusterEvent, Code, CycleState, Hint, PodInfo,
)
from fakekube.scheduler.plugins.volumerestrictions import (
    ERR_REASON_DISK_CONFLICT, ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT, NAME, VolumeRestrictions,
    _after_claim_added, _after_pod_deleted,
)
from tests.unit.scheduler.volume_objects import FakeContext, claim_volume, handle, node, placed, pod, pvc

Obj = dict[str, Any]


def gce(pd: str, read_only: bool = False) -> Obj:
    return {"name": f"gce-{pd}", "gcePersistentDisk": {"pdName": pd, "readOnly": read_only}}


def ebs(volume_id: str) -> Obj:
    return {"name": f"ebs-{volume_id}", "awsElasticBlockStore": {"volumeID": volume_id}}


def iscsi(iqn: str, read_only: bool = False) -> Obj:
    return {"name": "iscsi", "iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": iqn, "lun": 0, "readOnly": read_only}}


def rbd(monitors: list[str], image: str, pool: str | None = None, read_only: bool = False) -> Obj:
    source: Obj = {"monitors": monitors, "image": image, "readOnly": read_only}
    if pool is not None:
        source["pool"] = pool
    return {"name": "rbd", "rbd": source}


def run(incoming: Obj, existing: list[Obj], ctx: FakeContext | None = None) -> str:
    """"skip", "fits", or the Filter's (or PreFilter's) reason on node-1 holding ``existing``."""
    cache = Cache()
    cache.set_node(node("node-1"))
    for index, other in enumerate(existing):
        placed(cache, "node-1", dict(other, metadata={"name": f"old-{index}", "namespace": "default"}))
    plugin = VolumeRestrictions(handle(ctx or FakeContext(), cache), {})
    state, info = CycleState(), PodInfo(incoming)
    _, status = plugin.pre_filter(state, info)
    if status is not None:
        return "skip" if status.code == Code.SKIP else status.message
    verdict = plugin.filter(state, info, cache.nodes["node-1"])
    if verdict is None:
        return "fits"
    assert verdict.code == Code.UNSCHEDULABLE and verdict.plugin == NAME
    return verdict.message


@pytest.mark.parametrize("mine, theirs, expected", [
    (gce("disk"), gce("disk"), ERR_REASON_DISK_CONFLICT),
    (gce("disk", True), gce("disk", True), "fits"),            # all read-only: shared
    (gce("disk", True), gce("disk"), ERR_REASON_DISK_CONFLICT),
    (gce("disk"), gce("other"), "fits"),
    (ebs("vol-1"), ebs("vol-1"), ERR_REASON_DISK_CONFLICT),     # EBS never shares
    (ebs("vol-1"), ebs("vol-2"), "fits"),
    (iscsi("iqn.a"), iscsi("iqn.a"), ERR_REASON_DISK_CONFLICT),
    (iscsi("iqn.a", True), iscsi("iqn.a", True), "fits"),
    (rbd(["m1", "m2"], "img"), rbd(["m2", "m3"], "img", pool="rbd"), ERR_REASON_DISK_CONFLICT),  # default pool
    (rbd(["m1"], "img"), rbd(["m2"], "img"), "fits"),         # no monitor in common
    (rbd(["m1"], "img"), rbd(["m1"], "img", pool="other"), "fits"),
    (rbd(["m1"], "img", read_only=True), rbd(["m1"], "img", read_only=True), "fits"),
    (gce("disk"), ebs("disk"), "fits"),                         # different kinds never conflict
])
def test_inline_disk_conflicts(mine: Obj, theirs: Obj, expected: str) -> None:
    assert run(pod("p", mine), [pod("x", theirs)]) == expected


def test_prefilter_skips_pods_without_relevant_volumes() -> None:
    empty_dir = {"name": "scratch", "emptyDir": {}}
    ctx = FakeContext(pvc("data"))
    assert run(pod("p", empty_dir, claim_volume("data")), [pod("x", gce("disk"))], ctx) == "skip"


def test_a_missing_claim_is_unresolvable_in_prefilter() -> None:
    plugin = VolumeRestrictions(handle(FakeContext()), {})
    _, status = plugin.pre_filter(CycleState(), PodInfo(pod("p", claim_volume("data"))))
    assert status is not None and status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.message == 'persistentvolumeclaim "data" not found'


def test_read_write_once_pod_claim_in_use_fails_every_node_until_its_user_goes() -> None:
    cache = Cache()
    for name in ("node-1", "node-2"):
        cache.set_node(node(name))
    user = placed(cache, "node-2", pod("user", claim_volume("solo")))
    ctx = FakeContext(pvc("solo", modes=("ReadWriteOncePod",)))
    plugin = VolumeRestrictions(handle(ctx, cache), {})
    state, info = CycleState(), PodInfo(pod("p", claim_volume("solo")))
    assert plugin.pre_filter(state, info) == (None, None)
    status = plugin.filter(state, info, cache.nodes["node-1"])
    assert status is not None and status.code == Code.UNSCHEDULABLE
    assert status.message == ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT
    # Preemption's what-if: without its user the claim is free, on a cloned state only.
    what_if = state.clone()
    assert plugin.remove_pod(what_if, info, user, cache.nodes["node-2"]) is None
    assert plugin.filter(what_if, info, cache.nodes["node-1"]) is None
    assert plugin.filter(state, info, cache.nodes["node-1"]) is not None
    assert plugin.add_pod(what_if, info, user, cache.nodes["node-2"]) is None
    assert plugin.filter(what_if, info, cache.nodes["node-1"]) is not None


def test_an_unused_read_write_once_pod_claim_skips() -> None:
    ctx = FakeContext(pvc("solo", modes=("ReadWriteOncePod",)))
    assert run(pod("p", claim_volume("solo")), [], ctx) == "skip"


def test_events_and_hints() -> None:
    events = [(h.event, h.hint) for h in VolumeRestrictions(handle(FakeContext()), {}).events_to_register()]
    assert [e for e, _ in events] == [ClusterEvent(ASSIGNED_POD, Action.DELETE),
                                      ClusterEvent(UNSCHEDULED_POD, Action.DELETE),
                                      ClusterEvent(NODE, Action.ADD), ClusterEvent(PVC, Action.ADD)]
    waiting = pod("p", gce("disk"), claim_volume("solo"))
    assert _after_pod_deleted(waiting, pod("x", gce("disk")), None) == Hint.QUEUE
    assert _after_pod_deleted(waiting, pod("x", gce("disk"), namespace="other"), None) == Hint.SKIP
    assert _after_pod_deleted(waiting, pod("x", claim_volume("solo")), None) == Hint.QUEUE
    assert _after_pod_deleted(waiting, pod("x", gce("elsewhere")), None) == Hint.SKIP
    assert _after_claim_added(waiting, None, pvc("solo")) == Hint.QUEUE
    assert _after_claim_added(waiting, None, pvc("other")) == Hint.SKIP
    assert _after_claim_added(waiting, None, pvc("solo", namespace="other")) == Hint.SKIP
