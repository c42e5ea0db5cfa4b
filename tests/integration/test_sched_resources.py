"""Resources, host ports and images in scheduling: NodeResourcesFit, NodePorts,
NodeResourcesBalancedAllocation and ImageLocality on a whole cluster.

Default nodes allocate 3900m cpu, 15872Mi memory and 110 pods.
"""

from __future__ import annotations

from typing import Any

import pytest

from fakekube import Cluster
from fakekube.api.verbs.apiserver import WriteOptions
from fakekube.cluster.nodespec import NodeSpec
from fakekube.scheduler import SchedulerConfig

Obj = dict[str, Any]
MIB = 1024 * 1024


def pod(name: str, node: str = "", image: str = "nginx:1.27", host_port: int = 0, **requests: str) -> Obj:
    container: Obj = {"name": "c", "image": image}
    if requests:
        container["resources"] = {"requests": requests}
    if host_port:
        container["ports"] = [{"containerPort": 80, "hostPort": host_port}]
    spec: Obj = {"containers": [container]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def node_of(cluster: Cluster, name: str) -> str | None:
    return cluster.get("v1", "Pod", name)["spec"].get("nodeName")


def failure(cluster: Cluster, name: str) -> str:
    """The pod's latest FailedScheduling message ("" if none)."""
    events = [e for e in cluster.events("default", involved_name=name) if e["reason"] == "FailedScheduling"]
    return events[-1]["message"] if events else ""


def test_every_insufficient_resource_is_counted_per_node() -> None:
    cluster = Cluster(nodes=2)
    cluster.create(pod("huge", cpu="5", memory="20Gi"))
    cluster.settle()
    assert node_of(cluster, "huge") is None
    assert failure(cluster, "huge").startswith("0/2 nodes are available: 2 Insufficient cpu, 2 Insufficient memory.")


def test_a_full_node_takes_the_pending_pod_once_a_pod_there_is_deleted() -> None:
    cluster = Cluster(nodes=[NodeSpec(allocatable={"pods": "1"})])
    cluster.create(pod("first"))
    cluster.create(pod("second"))
    cluster.settle()
    assert node_of(cluster, "first") == "node-1"
    assert failure(cluster, "second").startswith("0/1 nodes are available: 1 Too many pods.")
    cluster.delete("v1", "Pod", "first")
    cluster.advance(5)
    assert node_of(cluster, "second") == "node-1"


def test_least_allocated_spreads_and_most_allocated_packs() -> None:
    """node-1 holds 2 cpu / 8Gi; the new pod asks 100m / 100Mi. LeastAllocated: node-1
    scores (46 + 47) / 2 = 46, node-2 (97 + 99) / 2 = 98. MostAllocated: node-1
    (53 + 52) / 2 = 52, node-2 (2 + 0) / 2 = 1. BalancedAllocation gives both 99."""
    def placed(config: SchedulerConfig | None) -> str | None:
        cluster = Cluster(nodes=2) if config is None else Cluster(nodes=2, scheduler=config)
        cluster.create(pod("big", node="node-1", cpu="2", memory="8Gi"))
        cluster.create(pod("small", cpu="100m", memory="100Mi"))
        cluster.settle()
        return node_of(cluster, "small")

    most = SchedulerConfig.from_dict({"profiles": [{"pluginConfig": [
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}]})
    assert placed(None) == "node-2"
    assert placed(most) == "node-1"


def test_bad_fit_args_refuse_the_profile() -> None:
    bad = SchedulerConfig.from_dict({"profiles": [{"pluginConfig": [
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Fancy"}}}]}]})
    with pytest.raises(ValueError, match='scoringStrategy.type: Unsupported value: "Fancy"'):
        Cluster(nodes=1, scheduler=bad)


def test_a_taken_host_port_keeps_the_pod_out_until_freed() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(pod("a", host_port=8080))
    cluster.create(pod("b", host_port=8080))
    cluster.create(pod("c", host_port=9090))
    cluster.settle()
    assert (node_of(cluster, "a"), node_of(cluster, "b"), node_of(cluster, "c")) == ("node-1", None, "node-1")
    assert failure(cluster, "b").startswith(
        "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports.")
    cluster.delete("v1", "Pod", "a")
    cluster.advance(5)
    assert node_of(cluster, "b") == "node-1"


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_image_locality_prefers_the_node_holding_a_large_image(seed: int) -> None:
    """node-2 holds a 2000 MiB image, one node of two: int(2000 MiB × 1/2) = 1000 MiB, the
    maximum for one container: ImageLocality gives node-2 100 and node-1 0."""
    cluster = Cluster(nodes=2, seed=seed)
    node = cluster.get("v1", "Node", "node-2", "")
    node["status"]["images"] = [{"names": ["registry.example/big@sha256:0", "registry.example/big:v1"],
                                 "sizeBytes": 2000 * MIB}]
    cluster.api.update(cluster.resource("v1", "Node"), "", "node-2", node, WriteOptions(), subresource="status")
    cluster.create(pod("web", image="registry.example/big:v1"))
    cluster.settle()
    assert node_of(cluster, "web") == "node-2"
