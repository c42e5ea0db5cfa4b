"""Pod CIDRs come from the node IPAM controller, as kube-controller-manager's range allocator."""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest

from fakekube import Cluster
from fakekube.controllers.nodeipam import DEFAULT_CLUSTER_CIDR, DEFAULT_SERVICE_CIDR, node_capacity
from tests.integration.timeline import at

Obj = dict[str, Any]


def pod_cidr(cluster: Cluster, node: str) -> str | None:
    return cluster.get("v1", "Node", node, "")["spec"].get("podCIDR")


def new_node(name: str, pod_cidr: str | None = None) -> Obj:
    spec = {"podCIDR": pod_cidr} if pod_cidr else {}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": spec}


def pod(name: str, node: str, host_network: bool = False) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": node, "hostNetwork": host_network,
                     "containers": [{"name": "c", "image": "nginx"}]}}


def cidr_events(cluster: Cluster) -> list[Obj]:
    return [e for e in cluster.list("v1", "Event") if e["reason"] == "CIDRNotAvailable"]


def test_nodes_get_consecutive_blocks_from_the_cluster_cidr() -> None:
    cluster = Cluster(nodes=3)
    for index, name in enumerate(["node-1", "node-2", "node-3"]):
        spec = cluster.get("v1", "Node", name, "")["spec"]
        assert spec == {"podCIDR": f"10.224.{index}.0/24", "podCIDRs": [f"10.224.{index}.0/24"]}


def test_a_registered_node_gets_the_next_block_and_a_preset_one_is_kept() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(new_node("preset", "10.224.1.0/24"))
    cluster.create(new_node("late"))
    assert pod_cidr(cluster, "preset") == "10.224.1.0/24"
    assert pod_cidr(cluster, "late") == "10.224.2.0/24"  # 10.224.1.0/24 was occupied


def test_a_deleted_node_s_block_is_reused_only_when_the_search_wraps() -> None:
    cluster = Cluster(nodes=3, cluster_cidr="10.244.0.0/22")  # four /24 blocks
    cluster.delete("v1", "Node", "node-1", "")
    cluster.create(new_node("node-4"))
    cluster.create(new_node("node-5"))
    assert pod_cidr(cluster, "node-4") == "10.244.3.0/24"
    assert pod_cidr(cluster, "node-5") == "10.244.0.0/24"  # wrapped round to node-1's released block


def test_the_mask_size_sets_the_block_size() -> None:
    cluster = Cluster(nodes=2, cluster_cidr="10.8.0.0/16", node_cidr_mask_size=26)
    assert [pod_cidr(cluster, n) for n in ("node-1", "node-2")] == ["10.8.0.0/26", "10.8.0.64/26"]


def test_an_exhausted_range_leaves_the_node_waiting_with_a_counted_warning() -> None:
    cluster = Cluster(nodes=2, cluster_cidr="10.244.0.0/23")  # room for two nodes
    cluster.create(new_node("node-3"))  # a node that registers later: a third at creation is refused
    assert pod_cidr(cluster, "node-3") is None
    [event] = cidr_events(cluster)
    assert (event["type"], event["message"], event["source"]) == (
        "Warning", "Node node-3 status is now: CIDRNotAvailable", {"component": "cidrAllocator"})
    assert (event["involvedObject"]["kind"], event["involvedObject"]["name"]) == ("Node", "node-3")
    # Retries back off 5 ms, 10 ms, 20 ms, ...: attempts at 0, .005, .015, .035, .075, .155, .315, .635.
    at(cluster, 1)
    [event] = cidr_events(cluster)
    assert event["count"] == 8 and event["firstTimestamp"] == "2025-01-01T00:00:00Z"


def test_pods_wait_for_their_node_s_block_and_start_once_it_comes() -> None:
    cluster = Cluster(nodes=2, cluster_cidr="10.244.0.0/23")
    cluster.create(new_node("node-3"))
    cluster.create(pod("web", "node-3"))
    cluster.create(pod("agent", "node-3", host_network=True))
    at(cluster, 1)
    assert cluster.get("v1", "Pod", "web")["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    assert cluster.get("v1", "Pod", "agent")["status"]["phase"] == "Running"  # host network needs no pod CIDR

    cluster.delete("v1", "Node", "node-1", "")  # frees 10.244.0.0/24 ...
    assert pod_cidr(cluster, "node-3") is None  # ... which node-3 takes at its next retry, at t=1.275
    at(cluster, 1.275)
    assert pod_cidr(cluster, "node-3") == "10.244.0.0/24"
    at(cluster, 2.275)
    status = cluster.get("v1", "Pod", "web")["status"]
    assert (status["phase"], status["podIP"]) == ("Running", "10.244.0.2")
    assert len(cidr_events(cluster)) == 1


def test_a_cluster_cidr_that_cannot_fit_the_nodes_is_refused_at_creation() -> None:
    with pytest.raises(ValueError) as refused:
        Cluster(nodes=300, cluster_cidr="10.244.0.0/16")
    assert str(refused.value) == (
        "clusterCIDR 10.244.0.0/16 with nodeCIDRMaskSize 24 has room for 256 nodes; the config asks for 300 "
        "(widen clusterCIDR, e.g. the default 10.224.0.0/11, or lengthen nodeCIDRMaskSize)")
    with pytest.raises(ValueError, match="has room for 240 nodes outside the service CIDR; the config asks for 241"):
        Cluster(nodes=240, system_pods=True, cluster_cidr="10.96.0.0/16", service_cidr="10.96.0.0/20")
    assert pod_cidr(Cluster(nodes=2, cluster_cidr="10.244.0.0/23"), "node-2") == "10.244.1.0/24"  # just fits
    Cluster(nodes=3, cluster_cidr="10.244.0.0/23", controllers=("*", "-nodeipam"))  # no allocator: no limit


def test_the_default_cluster_cidr_fits_the_5000_node_envelope() -> None:
    assert (DEFAULT_CLUSTER_CIDR, node_capacity(DEFAULT_CLUSTER_CIDR, 24)) == ("10.224.0.0/11", 8192)
    assert not ipaddress.ip_network(DEFAULT_CLUSTER_CIDR).overlaps(ipaddress.ip_network(DEFAULT_SERVICE_CIDR))
