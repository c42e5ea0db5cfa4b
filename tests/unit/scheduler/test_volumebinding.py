"""VolumeBinding: PreFilter's claim checks, Filter's bound/static/dynamic verdicts, Reserve's
assumptions and PreBind's writes (volume_binding.go and binder.go, 1.33)."""

from __future__ import annotations

from typing import Any

import pytest

from fakekube.objects.kinds import PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES
from fakekube.objects.volumes import ANN_SELECTED_NODE
from fakekube.scheduler.cache import Cache
from fakekube.scheduler.framework import (
    CSI_DRIVER, CSI_NODE, CSI_STORAGE_CAPACITY, NODE, PV, PVC, STORAGE_CLASS, Action, ClusterEvent, Code,
    CycleState, Hint, PodInfo,
)
from fakekube.scheduler.plugins.volumebinding import (
    ERR_REASON_BIND_CONFLICT, ERR_REASON_NODE_CONFLICT, ERR_REASON_PV_NOT_EXIST, NAME, UNBOUND_IMMEDIATE_CLAIMS,
    WAITING_FOR_BINDING, VolumeBinding, _after_capacity_change, _after_claim_change, _after_storage_class_change,
)
from tests.unit.scheduler.volume_objects import (
    HOSTNAME, FakeContext, claim_volume, handle, in_zone, node, pod, pv, pvc, storage_class,
)

Obj = dict[str, Any]
NODES = {"node-1": node("node-1", zone="a"), "node-2": node("node-2", zone="b")}


def setup(ctx: FakeContext) -> tuple[VolumeBinding, Cache]:
    cache = Cache()
    for obj in NODES.values():
        cache.set_node(obj)
    return VolumeBinding(handle(ctx, cache), {}), cache


def verdicts(ctx: FakeContext, incoming: Obj | None = None) -> dict[str, str] | str:
    """PreFilter's message (or "skip"), else each node's Filter verdict ("fits" or reasons)."""
    plugin, cache = setup(ctx)
    state, info = CycleState(), PodInfo(incoming or pod("p", claim_volume("data")))
    result, status = plugin.pre_filter(state, info)
    assert result is None
    if status is not None:
        return "skip" if status.code == Code.SKIP else f"{status.code.name}: {status.message}"
    out = {}
    for name in NODES:
        verdict = plugin.filter(state, info, cache.nodes[name])
        if verdict is not None:
            assert verdict.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and verdict.plugin == NAME
        out[name] = "fits" if verdict is None else verdict.message
    return out


# -- PreFilter -------------------------------------------------------------------------------
def test_pods_without_claims_skip() -> None:
    assert verdicts(FakeContext(), pod("p", {"name": "tmp", "emptyDir": {}})) == "skip"


@pytest.mark.parametrize("objects, expected", [
    ((), 'persistentvolumeclaim "data" not found'),
    ((pvc("data", class_name="fast"), storage_class("fast", mode="Immediate")), UNBOUND_IMMEDIATE_CLAIMS),
    ((pvc("data"),), UNBOUND_IMMEDIATE_CLAIMS),                             # no class: immediate
    ((pvc("data", class_name="gone"),), UNBOUND_IMMEDIATE_CLAIMS),          # unknown class: immediate
    ((pvc("data", class_name="late", volume_name="pv-1"), storage_class("late")), UNBOUND_IMMEDIATE_CLAIMS),
])
def test_prefilter_refusals(objects: tuple[Obj, ...], expected: str) -> None:
    assert verdicts(FakeContext(*objects)) == f"UNSCHEDULABLE_AND_UNRESOLVABLE: {expected}"


def test_lost_deleted_and_ephemeral_claims() -> None:
    lost = pvc("data", volume_name="pv-1")
    lost["status"]["phase"] = "Lost"
    assert verdicts(FakeContext(lost)) == \
        'UNSCHEDULABLE_AND_UNRESOLVABLE: persistentvolumeclaim "data" bound to non-existent persistentvolume "pv-1"'
    going = pvc("data", bound=True, volume_name="pv-1")
    going["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    assert verdicts(FakeContext(going)) == 'UNSCHEDULABLE_AND_UNRESOLVABLE: persistentvolumeclaim "data" is being deleted'
    ephemeral = pod("p", {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}})
    assert verdicts(FakeContext(), ephemeral) == ("UNSCHEDULABLE_AND_UNRESOLVABLE: waiting for ephemeral volume "
                                                  'controller to create the persistentvolumeclaim "p-scratch"')
    assert verdicts(FakeContext(pvc("p-scratch")), ephemeral) == \
        "UNSCHEDULABLE_AND_UNRESOLVABLE: PVC default/p-scratch was not created for pod default/p (pod is not owner)"


# -- Filter: bound claims ----------------------------------------------------------------------
def test_bound_claims_follow_their_volume_node_affinity() -> None:
    ctx = FakeContext(pvc("data", volume_name="pv-1", bound=True), pv("pv-1", phase="Bound", affinity=in_zone("a")))
    assert verdicts(ctx) == {"node-1": "fits", "node-2": ERR_REASON_NODE_CONFLICT}
    ctx = FakeContext(pvc("data", volume_name="pv-1", bound=True))
    assert verdicts(ctx) == {"node-1": ERR_REASON_PV_NOT_EXIST, "node-2": ERR_REASON_PV_NOT_EXIST}


# -- Filter: WaitForFirstConsumer claims ------------------------------------------------------
def static_world(*volumes: Obj, claim: Obj | None = None) -> FakeContext:
    return FakeContext(claim or pvc("data", storage="1Gi", class_name="local"),
                       storage_class("local", provisioner="kubernetes.io/no-provisioner"), *volumes)


def chosen(ctx: FakeContext, node_name: str) -> list[str]:
    plugin, cache = setup(ctx)
    state, info = CycleState(), PodInfo(pod("p", claim_volume("data")))
    plugin.pre_filter(state, info)
    assert plugin.filter(state, info, cache.nodes[node_name]) is None
    return [b[0]["metadata"]["name"] for b in state.data[NAME].by_node[node_name].static_bindings]


def test_the_smallest_fitting_available_volume_is_chosen_per_node() -> None:
    pinned = pv("pv-small", "1Gi", "local", affinity=[{"matchExpressions": [
        {"key": HOSTNAME, "operator": "In", "values": ["node-1"]}]}])
    ctx = static_world(pinned, pv("pv-big", "5Gi", "local"), pv("pv-mid", "2Gi", "local"),
                       pv("pv-tiny", "500Mi", "local"),                       # too small
                       pv("pv-other-class", "1Gi", "slow"),
                       pv("pv-released", "1Gi", "local", phase="Released"))
    assert chosen(ctx, "node-1") == ["pv-small"]
    assert chosen(ctx, "node-2") == ["pv-mid"]


@pytest.mark.parametrize("volume", [
    pv("pv-1", "1Gi", "local", modes=("ReadOnlyMany",)),           # access modes not offered
    pv("pv-1", "1Gi", "local", volumeMode="Block"),                # volume mode differs
    pv("pv-1", "1Gi", "local", claimRef={"namespace": "default", "name": "someone-else"}),
    pv("pv-1", "1Gi", "local", affinity=in_zone("c")),
    pv("pv-1", "1Gi", "local", volumeAttributesClassName="gold"),  # VolumeAttributesClass is off in 1.33
])
def test_volumes_that_do_not_match(volume: Obj) -> None:
    assert verdicts(static_world(volume)) == {"node-1": ERR_REASON_BIND_CONFLICT, "node-2": ERR_REASON_BIND_CONFLICT}


def test_claim_selector_and_prebound_volume() -> None:
    labelled = pv("pv-1", "1Gi", "local", labels={"tier": "gold"})
    selecting = pvc("data", class_name="local", selector={"matchLabels": {"tier": "silver"}})
    assert verdicts(static_world(labelled, claim=selecting))["node-1"] == ERR_REASON_BIND_CONFLICT
    # A PV pre-bound to the claim wins even when not Available, but only where it fits.
    prebound = pv("pv-9", "1Gi", "local", phase="Pending", affinity=in_zone("b"),
                  claimRef={"namespace": "default", "name": "data"})
    assert verdicts(static_world(prebound)) == {"node-1": ERR_REASON_BIND_CONFLICT, "node-2": "fits"}


def test_dynamic_provisioning_and_allowed_topologies() -> None:
    zone_a = [{"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": ["a"]}]}]
    ctx = FakeContext(pvc("data", class_name="fast"), storage_class("fast", allowed=zone_a))
    assert verdicts(ctx) == {"node-1": "fits", "node-2": ERR_REASON_BIND_CONFLICT}
    ctx = FakeContext(pvc("data", class_name="fast"), storage_class("fast"))
    assert verdicts(ctx) == {"node-1": "fits", "node-2": "fits"}


def test_a_claim_with_a_selected_node_fits_only_that_node() -> None:
    ctx = FakeContext(pvc("data", class_name="fast", annotations={ANN_SELECTED_NODE: "node-2"}),
                      storage_class("fast"))
    assert verdicts(ctx) == {"node-1": ERR_REASON_BIND_CONFLICT, "node-2": "fits"}


def test_bound_and_unbound_reasons_together() -> None:
    ctx = FakeContext(pvc("data", volume_name="pv-1", bound=True), pv("pv-1", phase="Bound", affinity=in_zone("b")),
                      pvc("more", class_name="local"), storage_class("local", provisioner="kubernetes.io/no-provisioner"))
    both = pod("p", claim_volume("data"), claim_volume("more"))
    assert verdicts(ctx, both) == {"node-1": f"{ERR_REASON_NODE_CONFLICT}, {ERR_REASON_BIND_CONFLICT}",
                                   "node-2": ERR_REASON_BIND_CONFLICT}


# -- Reserve and PreBind -----------------------------------------------------------------------
def cycle(plugin: VolumeBinding, cache: Cache, incoming: Obj, node_name: str) -> tuple[CycleState, PodInfo]:
    state, info = CycleState(), PodInfo(incoming)
    assert plugin.pre_filter(state, info) == (None, None)
    assert plugin.filter(state, info, cache.nodes[node_name]) is None
    assert plugin.reserve(state, info, node_name) is None
    return state, info


def test_static_binding_writes_the_claim_ref_and_waits() -> None:
    ctx = static_world(pv("pv-1", "1Gi", "local"), pv("pv-2", "2Gi", "local"))
    plugin, cache = setup(ctx)
    state, info = cycle(plugin, cache, pod("p", claim_volume("data")), "node-1")
    # Before PreBind, the next pod does not get the volume Reserve assumed.
    ctx.add(pvc("other", class_name="local"))
    other_state, other = cycle(plugin, cache, pod("q", claim_volume("other")), "node-1")
    assert [b[0]["metadata"]["name"] for b in other_state.data[NAME].by_node["node-1"].static_bindings] == ["pv-2"]
    plugin.unreserve(other_state, other, "node-1")

    status = plugin.pre_bind(state, info, "node-1")
    assert status is not None and status.code == Code.PENDING and status.message == WAITING_FOR_BINDING
    [(resource, written)] = ctx.client.writes
    assert resource == PERSISTENT_VOLUMES and written["metadata"]["name"] == "pv-1"
    assert written["spec"]["claimRef"] == {"kind": "PersistentVolumeClaim", "namespace": "default", "name": "data",
                                           "uid": "uid-data", "apiVersion": "v1", "resourceVersion": "7"}
    assert written["metadata"]["annotations"] == {"pv.kubernetes.io/bound-by-controller": "yes"}


def test_provisioning_annotates_the_claim_with_the_node() -> None:
    ctx = FakeContext(pvc("data", class_name="fast"), storage_class("fast"))
    plugin, cache = setup(ctx)
    state, info = cycle(plugin, cache, pod("p", claim_volume("data")), "node-2")
    status = plugin.pre_bind(state, info, "node-2")
    assert status is not None and status.code == Code.PENDING
    [(resource, written)] = ctx.client.writes
    assert resource == PERSISTENT_VOLUME_CLAIMS
    assert written["metadata"]["annotations"] == {ANN_SELECTED_NODE: "node-2"}
    # Retried before anyone provisions: only node-2 fits now.
    assert verdicts(ctx) == {"node-1": ERR_REASON_BIND_CONFLICT, "node-2": "fits"}
    # Someone provisions and binds it (a PV pinned to node-2's zone): the pod can bind.
    ctx.add(pv("pv-new", phase="Bound", affinity=in_zone("b")))
    bound = pvc("data", class_name="fast", volume_name="pv-new", bound=True, annotations={ANN_SELECTED_NODE: "node-2"})
    ctx.add(bound)
    state, info = cycle(plugin, cache, pod("p", claim_volume("data")), "node-2")
    assert plugin.pre_bind(state, info, "node-2") is None
    assert len(ctx.client.writes) == 1


def test_provisioning_that_was_given_up_is_an_error() -> None:
    ctx = FakeContext(pvc("data", class_name="fast"), storage_class("fast"))
    plugin, cache = setup(ctx)
    state, info = cycle(plugin, cache, pod("p", claim_volume("data")), "node-1")
    original_update = ctx.client.update

    def provisioner_gives_up(resource: Any, obj: Obj) -> Obj:
        written = original_update(resource, obj)
        undone = dict(written, metadata=dict(written["metadata"], annotations={}))
        ctx.put(resource, undone)
        return written

    ctx.client.update = provisioner_gives_up  # type: ignore[method-assign]
    status = plugin.pre_bind(state, info, "node-1")
    assert status is not None and status.code == Code.ERROR
    assert status.message == 'binding volumes: provisioning failed for PVC "data"'


def test_bound_claims_need_no_prebind() -> None:
    ctx = FakeContext(pvc("data", volume_name="pv-1", bound=True), pv("pv-1", phase="Bound"))
    plugin, cache = setup(ctx)
    state, info = cycle(plugin, cache, pod("p", claim_volume("data")), "node-1")
    assert plugin.pre_bind(state, info, "node-1") is None and ctx.client.writes == []


# -- args, events, hints ----------------------------------------------------------------------
def test_args() -> None:
    plugin = VolumeBinding(handle(FakeContext()), {"bindTimeoutSeconds": 30})
    assert plugin.bind_timeout_s == 30
    with pytest.raises(ValueError, match="should not be a negative value"):
        VolumeBinding(handle(FakeContext()), {"bindTimeoutSeconds": -1})
    with pytest.raises(ValueError, match="shape"):
        VolumeBinding(handle(FakeContext()), {"shape": [{"utilization": 0, "score": 0}]})


def test_events_and_hints() -> None:
    events = [h.event for h in VolumeBinding(handle(FakeContext()), {}).events_to_register()]
    assert events == [ClusterEvent(STORAGE_CLASS, Action.ADD | Action.UPDATE),
                      ClusterEvent(PVC, Action.ADD | Action.UPDATE), ClusterEvent(PV, Action.ADD | Action.UPDATE),
                      ClusterEvent(NODE, Action.ADD | Action.UPDATE_NODE_LABEL),
                      ClusterEvent(CSI_NODE, Action.ADD | Action.UPDATE), ClusterEvent(CSI_DRIVER, Action.UPDATE),
                      ClusterEvent(CSI_STORAGE_CAPACITY, Action.ADD | Action.UPDATE)]
    waiting = pod("p", claim_volume("data"), {"name": "e", "ephemeral": {}})
    assert _after_claim_change(waiting, pvc("data"), pvc("data", volume_name="pv-1", bound=True)) == Hint.QUEUE
    assert _after_claim_change(waiting, None, pvc("p-e")) == Hint.QUEUE
    assert _after_claim_change(waiting, None, pvc("data", namespace="other")) == Hint.SKIP
    assert _after_claim_change(waiting, None, pvc("unrelated")) == Hint.SKIP
    zone_a = [{"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": ["a"]}]}]
    assert _after_storage_class_change(waiting, None, storage_class("x")) == Hint.QUEUE
    assert _after_storage_class_change(waiting, storage_class("x"), storage_class("x", allowed=zone_a)) == Hint.QUEUE
    assert _after_storage_class_change(waiting, storage_class("x"), storage_class("x")) == Hint.SKIP
    assert _after_capacity_change(waiting, {"capacity": "1Gi"}, {"capacity": "2Gi"}) == Hint.QUEUE
    assert _after_capacity_change(waiting, {"capacity": "1Gi", "maximumVolumeSize": "1Gi"},
                                  {"capacity": "5Gi", "maximumVolumeSize": "1Gi"}) == Hint.SKIP
