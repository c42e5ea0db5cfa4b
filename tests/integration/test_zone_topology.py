"""Zones from the YAML config: topology labels make the node lifecycle controller's rules per zone.

Two zones of four nodes. Three nodes fail in zone a and one in zone b. Per zone, zone a
has 3 of 4 not ready (more than 2 and >= 0.55): PartialDisruption in a zone of at most
50 nodes, so tainting stops there; zone b (1 of 4) is Normal and its node is tainted as
usual. Without topology labels the same eight nodes are one zone with 4 of 8 not ready
(0.5 < 0.55): Normal, and every failed node is tainted, one every 10 s.
"""

from __future__ import annotations

from pathlib import Path

from fakekube import Cluster
from tests.integration.timeline import noexecute_added

TWO_ZONES = """
nodes:
  - {zone: zone-a, region: region-1, count: 4}
  - {zone: zone-b, region: region-1, count: 4}
"""
ONE_ZONE = "nodes: 8\n"
FAILED = ("node-1", "node-2", "node-3", "node-5")


def run(config: str, tmp_path: Path) -> Cluster:
    path = tmp_path / "cluster.yaml"
    path.write_text(config)
    cluster = Cluster.from_config_file(path)
    for name in FAILED:
        cluster.fail_node(name)
    cluster.advance(300)
    return cluster


def test_configured_zones_get_topology_labels(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(TWO_ZONES)
    labels = {n["metadata"]["name"]: n["metadata"]["labels"] for n in Cluster.from_config_file(path).list("v1", "Node")}
    assert labels["node-4"]["topology.kubernetes.io/zone"] == "zone-a"
    assert labels["node-5"]["topology.kubernetes.io/zone"] == "zone-b"
    assert all(node["topology.kubernetes.io/region"] == "region-1" for node in labels.values())


def test_a_partially_disrupted_zone_stops_tainting_while_the_other_zone_carries_on(tmp_path: Path) -> None:
    tainted = noexecute_added(run(TWO_ZONES, tmp_path))
    assert list(tainted) == ["node-5"]  # zone a: none of its three failed nodes, even after 300 s
    assert tainted["node-5"] == "00:01:00"  # Unknown at 55, tainted at the next pass


def test_without_zones_the_same_failures_are_one_normal_zone(tmp_path: Path) -> None:
    assert noexecute_added(run(ONE_ZONE, tmp_path)) == {
        "node-1": "00:01:00", "node-2": "00:01:10", "node-3": "00:01:20", "node-5": "00:01:30"}
