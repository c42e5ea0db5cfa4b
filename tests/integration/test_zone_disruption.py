"""Eviction rate limiting and zone states, on the virtual clock, against upstream's rules.

One zone (nodes carry no topology labels), 10 nodes, default config: node-eviction-rate
0.1/s (one node tainted every 10 s, the first at once), unhealthy-zone-threshold 0.55,
large-cluster-size-threshold 50 (a smaller zone in partial disruption stops tainting).
"""

from __future__ import annotations

from fakekube import Cluster
from tests.integration.timeline import at, noexecute_added


def fail(cluster: Cluster, count: int) -> None:
    for index in range(1, count + 1):
        cluster.fail_node(f"node-{index}")


def test_a_normal_zone_taints_one_node_every_ten_seconds() -> None:
    cluster = Cluster(nodes=10)
    fail(cluster, 3)  # 3 of 10 not ready: 0.3 < 0.55, so the zone stays Normal
    at(cluster, 59)
    assert noexecute_added(cluster) == {}
    at(cluster, 90)
    assert noexecute_added(cluster) == {"node-1": "00:01:00", "node-2": "00:01:10", "node-3": "00:01:20"}


def test_partial_disruption_in_a_small_zone_stops_tainting() -> None:
    cluster = Cluster(nodes=10)
    fail(cluster, 6)  # 6 of 10 not ready: more than 2 and at least 0.55 → PartialDisruption, zone ≤ 50 → rate 0
    at(cluster, 600)
    assert noexecute_added(cluster) == {}
    unknown = [n["metadata"]["name"] for n in cluster.list("v1", "Node")
               if any(c["type"] == "Ready" and c["status"] == "Unknown" for c in n["status"]["conditions"])]
    assert sorted(unknown) == sorted(f"node-{i}" for i in range(1, 7))


def test_full_disruption_everywhere_stops_evictions() -> None:
    cluster = Cluster(nodes=3)
    cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                    "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx"}]}})
    fail(cluster, 3)
    at(cluster, 1000)
    assert noexecute_added(cluster) == {}
    assert cluster.get("v1", "Pod", "p")["metadata"].get("deletionTimestamp") is None
