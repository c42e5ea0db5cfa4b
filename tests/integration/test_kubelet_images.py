"""Node status.images: what a simulated kubelet pulled, reported as a containerd kubelet does.

The pod is created at t=0 and pulls at once (no pull time by default); the kubelet's status
check runs every 10 s from the node's registration at t=0, so the image shows at t=10.
"""

from __future__ import annotations

from typing import Any

from fakekube import Cluster
from fakekube.api.verbs.apiserver import WriteOptions
from fakekube.kubelet.containers import image_id
from fakekube.kubelet.events import image_size_bytes
from tests.integration.support import pod
from tests.integration.timeline import at

Obj = dict[str, Any]


def images(cluster: Cluster, node: str) -> list[Obj]:
    return cluster.get("v1", "Node", node, "")["status"].get("images") or []


def test_a_pulled_image_shows_in_the_nodes_status_at_the_next_status_check() -> None:
    cluster = Cluster(nodes=2)
    cluster.create(pod("web", node="node-1", containers=[{"name": "c", "image": "nginx:1.27"}]))
    at(cluster, 9)
    assert images(cluster, "node-1") == []
    at(cluster, 10)
    assert images(cluster, "node-1") == [{
        "names": [image_id("docker.io/library/nginx:1.27"), "docker.io/library/nginx:1.27"],
        "sizeBytes": image_size_bytes("nginx:1.27")}]
    assert images(cluster, "node-2") == []


def test_images_are_listed_largest_first_and_once() -> None:
    cluster = Cluster(nodes=1)
    names = ["nginx:1.27", "busybox:1.36", "redis:7", "nginx:1.27"]
    containers = [{"name": f"c{i}", "image": image} for i, image in enumerate(names)]
    cluster.create(pod("many", node="node-1", containers=containers))
    at(cluster, 10)
    reported = images(cluster, "node-1")
    assert [image["names"][1] for image in reported] == sorted(
        {f"docker.io/library/{name}" for name in names}, key=lambda n: -image_size_bytes(n))
    sizes = [image["sizeBytes"] for image in reported]
    assert sizes == sorted(sizes, reverse=True)


def test_images_already_on_the_node_stay_listed() -> None:
    cluster = Cluster(nodes=1)
    preset = {"names": ["registry.example/app@sha256:00", "registry.example/app:v1"], "sizeBytes": 10 ** 10}
    node = cluster.get("v1", "Node", "node-1", "")
    node["status"]["images"] = [preset]
    cluster.api.update(cluster.resource("v1", "Node"), "", "node-1", node, WriteOptions(), subresource="status")
    cluster.create(pod("web", node="node-1"))
    at(cluster, 10)
    assert images(cluster, "node-1")[0] == preset
    assert images(cluster, "node-1")[1]["names"][1] == "docker.io/library/nginx:1.27"
