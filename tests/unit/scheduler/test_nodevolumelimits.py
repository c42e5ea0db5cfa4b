"""NodeVolumeLimits: CSI volumes per driver against the node's attachable-volumes-csi-*
allocatable (csi.go, 1.33; fakekube serves no CSINode, so only those limits exist)."""

from __future__ import annotations

import hashlib
from typing import Any

from fakekube.objects.volumes import csi_attach_limit_key
from fakekube.scheduler.cache import Cache
from fakekube.scheduler.framework import (
    ASSIGNED_POD, CSI_NODE, PVC, UNSCHEDULED_POD, Action, ClusterEvent, Code, CycleState, Hint, PodInfo,
)
from fakekube.scheduler.plugins.nodevolumelimits import (
    ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, NodeVolumeLimits, _after_claim_added, _after_pod_deleted,
)
from tests.unit.scheduler.volume_objects import (
    FakeContext, claim_volume, handle, node, placed, pod, pv, pvc, storage_class,
)

Obj = dict[str, Any]
DRIVER = "ebs.csi.aws.com"
LIMIT = f"attachable-volumes-csi-{DRIVER}"


def csi_pv(name: str, handle_id: str, driver: str = DRIVER) -> Obj:
    return pv(name, phase="Bound", csi={"driver": driver, "volumeHandle": handle_id})


def world() -> FakeContext:
    """Claims a..d: a and b bound to CSI volumes vol-a/vol-b, c and d unbound in a CSI class."""
    return FakeContext(
        pvc("a", volume_name="pv-a", bound=True), csi_pv("pv-a", "vol-a"),
        pvc("b", volume_name="pv-b", bound=True), csi_pv("pv-b", "vol-b"),
        pvc("c", class_name="csi"), pvc("d", class_name="csi"), storage_class("csi", provisioner=DRIVER),
        pvc("intree", class_name="gce"), storage_class("gce", provisioner="kubernetes.io/gce-pd"),
        pvc("hostpath", volume_name="pv-h", bound=True), pv("pv-h", hostPath={"path": "/data"}))


def verdict(incoming: Obj, existing: list[Obj], limit: int | None = 2, ctx: FakeContext | None = None) -> str:
    cache = Cache()
    cache.set_node(node("node-1", allocatable={LIMIT: str(limit)} if limit is not None else None))
    for other in existing:
        placed(cache, "node-1", other)
    plugin = NodeVolumeLimits(handle(ctx or world(), cache), {})
    state, info = CycleState(), PodInfo(incoming)
    _, status = plugin.pre_filter(state, info)
    if status is not None:
        assert status.code == Code.SKIP
        return "skip"
    result = plugin.filter(state, info, cache.nodes["node-1"])
    if result is None:
        return "fits"
    return f"{result.code.name}: {result.message}"


def claims(name: str, *claim_names: str, node_name: str = "") -> Obj:
    return pod(name, *[claim_volume(c) for c in claim_names], node_name=node_name)


def test_worked_example_counts_distinct_volumes_per_driver() -> None:
    # node-1 already attaches vol-a (pod x). Limit 2.
    on_node = [claims("x", "a", node_name="node-1")]
    # a (already attached, free) + c (new, from the class) -> 1 attached + 1 new = 2 <= 2
    assert verdict(claims("p", "a", "c"), on_node) == "fits"
    # b + c -> 1 attached + 2 new = 3 > 2
    assert verdict(claims("p", "b", "c"), on_node) == f"UNSCHEDULABLE: {ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED}"
    # c and d are two unbound claims: each its own made-up handle
    assert verdict(claims("p", "c", "d"), []) == "fits"
    assert verdict(claims("p", "b", "c", "d"), []) == f"UNSCHEDULABLE: {ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED}"


def test_what_does_not_count() -> None:
    many = claims("p", "a", "b", "c", "d")
    assert verdict(many, [], limit=None) == "fits"                      # no limit on the node
    assert verdict(claims("p", "intree", "hostpath"), [], limit=0) == "fits"  # no CSI driver (no migration)
    assert verdict(pod("p", {"name": "tmp", "emptyDir": {}}), [], limit=0) == "skip"


def test_a_missing_claim() -> None:
    assert verdict(claims("p", "nope"), []) == \
        'UNSCHEDULABLE_AND_UNRESOLVABLE: looking up PVC default/nope: persistentvolumeclaim "nope" not found'
    # an existing pod's missing claim is just not counted
    assert verdict(claims("p", "c"), [claims("x", "nope", node_name="node-1")], limit=1) == "fits"


def test_long_driver_names_are_hashed_into_the_limit_key() -> None:
    driver = "a-very-long-csi-driver-name.storage.example.com"
    digest = hashlib.sha1(driver.encode()).hexdigest()[:16]
    assert csi_attach_limit_key(driver) == "attachable-volumes-csi-" + driver[:23] + digest
    assert csi_attach_limit_key(DRIVER) == LIMIT


def test_events_and_hints() -> None:
    events = [h.event for h in NodeVolumeLimits(handle(FakeContext()), {}).events_to_register()]
    assert events == [ClusterEvent(CSI_NODE, Action.ADD), ClusterEvent(ASSIGNED_POD, Action.DELETE),
                      ClusterEvent(UNSCHEDULED_POD, Action.DELETE), ClusterEvent(PVC, Action.ADD)]
    waiting = claims("p", "c")
    assert _after_pod_deleted(waiting, claims("x", "a", node_name="node-1"), None) == Hint.QUEUE
    assert _after_pod_deleted(waiting, claims("x", "a"), None) == Hint.SKIP  # never scheduled
    assert _after_pod_deleted(waiting, pod("x", node_name="node-1"), None) == Hint.SKIP
    assert _after_claim_added(waiting, None, pvc("c")) == Hint.QUEUE
    assert _after_claim_added(waiting, None, pvc("z")) == Hint.SKIP
