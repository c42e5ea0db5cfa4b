"""Node specs: names, topology labels, taints and resources as a kubelet registers them."""

from __future__ import annotations

import pytest

from fakekube.cluster.bootstrap import node_object
from fakekube.cluster.nodespec import NodeSpec, expand_nodes
from fakekube.random import SeededRandom

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"


def names(nodes: object) -> list[str]:
    return [name for name, _ in expand_nodes(nodes)]  # type: ignore[arg-type]


def test_a_count_names_nodes_node_1_to_n() -> None:
    assert names(3) == ["node-1", "node-2", "node-3"]


def test_specs_name_nodes_in_order() -> None:
    specs = (NodeSpec(name="cp"), NodeSpec(count=2), NodeSpec(name="big", count=2), NodeSpec())
    assert names(specs) == ["cp", "node-1", "node-2", "big-1", "big-2", "node-3"]


def test_a_duplicate_name_is_refused() -> None:
    with pytest.raises(ValueError, match="two nodes are named 'node-1'"):
        expand_nodes((NodeSpec(), NodeSpec(name="node-1")))


def test_a_count_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="count"):
        NodeSpec(count=0)


def node(spec: NodeSpec) -> dict:
    return node_object("n", 1, SeededRandom(0), "v1.33.0", "2025-01-01T00:00:00Z", spec)


def test_zone_and_region_become_topology_labels() -> None:
    labels = node(NodeSpec(zone="a", region="r"))["metadata"]["labels"]
    assert (labels[ZONE], labels[REGION]) == ("a", "r")


def test_no_zone_or_region_means_no_topology_labels() -> None:
    labels = node(NodeSpec())["metadata"]["labels"]
    assert ZONE not in labels and REGION not in labels
    assert labels["kubernetes.io/hostname"] == "n"


def test_nodes_register_without_a_pod_cidr_but_with_their_taints() -> None:
    taint = {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}
    assert node(NodeSpec())["spec"] == {}
    assert node(NodeSpec(taints=(taint,)))["spec"] == {"taints": [taint]}


def test_capacity_overrides_also_set_allocatable_unless_given() -> None:
    status = node(NodeSpec(capacity={"cpu": "8", "memory": "32Gi"}, allocatable={"memory": "31Gi"}))["status"]
    assert (status["capacity"]["cpu"], status["allocatable"]["cpu"]) == ("8", "8")
    assert (status["capacity"]["memory"], status["allocatable"]["memory"]) == ("32Gi", "31Gi")
    assert status["capacity"]["pods"] == "110"


def test_node_ips_stay_valid_past_254_nodes() -> None:
    address = node_object("n", 300, SeededRandom(0), "v1.33.0", "2025-01-01T00:00:00Z")["status"]["addresses"][0]
    assert address == {"type": "InternalIP", "address": "172.18.1.45"}
