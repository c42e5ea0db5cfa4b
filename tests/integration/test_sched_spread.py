"""PodTopologySpread on a whole cluster: hard constraints spread pods evenly and leave one
pending with upstream's FailedScheduling message until a pod or node change lets it fit;
the system default constraints steer ReplicaSet pods apart."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from fakekube import Cluster
from fakekube.cluster.nodespec import NodeSpec
from fakekube.scheduler.registry import IN_TREE

Obj = dict[str, Any]
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def spread(key: str = ZONE, max_skew: int = 1, action: str = "DoNotSchedule", **extra: Any) -> Obj:
    return {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": action,
            "labelSelector": {"matchLabels": {"app": "web"}}, **extra}


def pod(name: str, constraints: list[Obj] | None = None, cpu: str = "", node: str = "",
        labels: dict[str, str] | None = None) -> Obj:
    container: Obj = {"name": "c", "image": "nginx:1.27"}
    if cpu:
        container["resources"] = {"requests": {"cpu": cpu}}
    spec: Obj = {"containers": [container]}
    if constraints:
        spec["topologySpreadConstraints"] = constraints
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": labels or {"app": "web"}}, "spec": spec}


def node_of(cluster: Cluster, name: str) -> str | None:
    return cluster.get("v1", "Pod", name)["spec"].get("nodeName")


def zone_of(cluster: Cluster, node: str) -> str:
    return cluster.get("v1", "Node", node, namespace="")["metadata"]["labels"].get(ZONE, "")


def failure(cluster: Cluster, name: str) -> str:
    events = [e for e in cluster.events("default", involved_name=name) if e["reason"] == "FailedScheduling"]
    return events[-1]["message"] if events else ""


def patch_node(cluster: Cluster, name: str, patch: Obj) -> None:
    cluster.api.patch(cluster.resource("v1", "Node"), "", name, "application/merge-patch+json",
                      json.dumps(patch).encode())
    cluster.settle()


def three_zones(small_zone_c: bool = False) -> Cluster:
    """node-1 in zone a, node-2 in b, node-3 in c (with room for one 600m pod if small)."""
    small = {"cpu": "1"} if small_zone_c else {}
    return Cluster(nodes=[NodeSpec(zone="a"), NodeSpec(zone="b"), NodeSpec(zone="c", allocatable=small)])


def test_registered() -> None:
    assert "PodTopologySpread" in IN_TREE


def test_six_pods_with_max_skew_one_land_two_per_zone() -> None:
    cluster = three_zones()
    for index in range(1, 7):
        cluster.create(pod(f"web-{index}", [spread()]))
    cluster.settle()
    zones = Counter(zone_of(cluster, node_of(cluster, f"web-{index}") or "") for index in range(1, 7))
    assert zones == {"a": 2, "b": 2, "c": 2}


def test_a_pod_waits_while_the_emptiest_zone_is_full_and_lands_when_room_appears() -> None:
    # Zone c holds one 600m pod: five pods spread 2/2/1. The sixth would make a or b
    # 3 against c's 1 (skew 2 > 1) and does not fit c's cpu.
    cluster = three_zones(small_zone_c=True)
    for index in range(1, 7):
        cluster.create(pod(f"web-{index}", [spread()], cpu="600m"))
        cluster.settle()
    zones = Counter(zone_of(cluster, node_of(cluster, f"web-{index}") or "") for index in range(1, 6))
    assert zones == {"a": 2, "b": 2, "c": 1}
    assert node_of(cluster, "web-6") is None
    assert failure(cluster, "web-6") == (
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match pod topology spread constraints. "
        "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.")
    # The pod in zone c goes: c now has room and the fewest pods (0), so web-6 takes it.
    in_c = next(f"web-{index}" for index in range(1, 6) if node_of(cluster, f"web-{index}") == "node-3")
    cluster.delete("v1", "Pod", in_c)
    cluster.advance(40)
    assert node_of(cluster, "web-6") == "node-3"


def test_a_node_without_the_topology_key_is_unresolvable_until_labelled() -> None:
    cluster = Cluster(nodes=[NodeSpec(zone="a", allocatable={"cpu": "1"}), NodeSpec()])
    cluster.create(pod("first", [spread()], cpu="600m"))
    cluster.settle()
    assert node_of(cluster, "first") == "node-1"
    cluster.create(pod("second", [spread()], cpu="600m"))
    cluster.settle()
    assert node_of(cluster, "second") is None
    assert failure(cluster, "second") == (
        "0/2 nodes are available: 1 Insufficient cpu, "
        "1 node(s) didn't match pod topology spread constraints (missing required label). "
        "preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, "
        "1 Preemption is not helpful for scheduling.")
    patch_node(cluster, "node-2", {"metadata": {"labels": {ZONE: "b"}}})
    cluster.advance(15)
    assert node_of(cluster, "second") == "node-2"


def test_min_domains_keeps_pods_off_until_enough_zones_exist() -> None:
    # Two zones, minDomains 3: the global minimum counts as 0, so each zone takes one
    # pod (maxSkew 1) and a third waits for a third zone.
    cluster = Cluster(nodes=[NodeSpec(zone="a"), NodeSpec(zone="b"), NodeSpec()])
    constraint = spread(minDomains=3)
    for index in range(1, 4):
        cluster.create(pod(f"web-{index}", [constraint, spread(HOST, 5)]))
    cluster.settle()
    placed = sorted(node_of(cluster, f"web-{index}") or "" for index in range(1, 4))
    assert placed == ["", "node-1", "node-2"]
    patch_node(cluster, "node-3", {"metadata": {"labels": {ZONE: "c"}}})
    cluster.advance(15)
    assert sorted(node_of(cluster, f"web-{index}") or "" for index in range(1, 4)) == ["node-1", "node-2", "node-3"]


def test_schedule_anyway_prefers_the_emptier_zone() -> None:
    cluster = Cluster(nodes=[NodeSpec(zone="a", count=2), NodeSpec(zone="b")])
    for index, node in enumerate(("node-1", "node-2"), start=1):
        cluster.create(pod(f"old-{index}", node=node))
    cluster.settle()
    report = cluster.explain_scheduling(pod("new", [spread(action="ScheduleAnyway")]))
    scores = {entry["name"]: entry["scores"]["PodTopologySpread"] for entry in report["nodes"]}
    # Zone a has 2 matching pods, b none: raw round(2 × log(2+2)) = 3 vs 0 -> 0 vs 100, weight 2.
    assert scores["node-3"] == {"score": 100, "weight": 2, "weighted": 200}
    assert scores["node-1"]["score"] == scores["node-2"]["score"] == 0


def test_system_default_constraints_spread_a_replica_sets_pods_by_hostname() -> None:
    # Only the owner object matters here: its controller would delete the hand-made pods.
    cluster = Cluster(nodes=3, controllers=("*", "-replicaset"))
    cluster.create({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                    "metadata": {"name": "web", "namespace": "default"},
                    "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
                             "template": {"metadata": {"labels": {"app": "web"}},
                                          "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}})
    cluster.settle()
    owner = cluster.get("apps/v1", "ReplicaSet", "web")
    reference = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                 "uid": owner["metadata"]["uid"], "controller": True}
    placed = pod("placed", node="node-1")
    placed["metadata"]["ownerReferences"] = [reference]
    cluster.create(placed)
    cluster.settle()
    incoming = pod("incoming")
    incoming["metadata"]["ownerReferences"] = [reference]
    report = cluster.explain_scheduling(incoming)
    scores = {entry["name"]: entry["scores"]["PodTopologySpread"]["score"] for entry in report["nodes"]}
    # Hostname maxSkew 3 over 3 nodes (weight log 5 = 1.609); no zone labels, so the zone
    # constraint adds nothing. Raw: node-1 round(1.609 + 2) = 4, others 2; normalized
    # 100 × (4 + 2 - s) / 4: 50 and 100.
    assert scores == {"node-1": 50, "node-2": 100, "node-3": 100}
    # A bare pod nothing selects gets no default constraints: the plugin is skipped.
    bare = cluster.explain_scheduling(pod("bare", labels={"app": "other"}))
    assert all("PodTopologySpread" not in entry["scores"] for entry in bare["nodes"])
