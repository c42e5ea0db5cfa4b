"""NodeImages: what a simulated kubelet lists in status.images (largest first, at most 50
images and 5 names each, containerd's fully qualified names)."""

from __future__ import annotations

from fakekube.kubelet.containers import image_id
from fakekube.kubelet.events import image_size_bytes
from fakekube.kubelet.images import NODE_STATUS_MAX_IMAGES, NodeImages


def node(name: str, *images: dict[str, object]) -> dict[str, object]:
    return {"metadata": {"name": name}, "status": {"images": list(images)}}


def test_a_node_holding_nothing_reports_nothing() -> None:
    assert NodeImages().reported("node-1") is None


def test_a_pulled_image_is_reported_by_digest_then_tag() -> None:
    images = NodeImages()
    assert images.pulled("node-1", "nginx") is True
    assert images.pulled("node-1", "docker.io/library/nginx:latest") is False  # the same image
    assert images.reported("node-1") == [{
        "names": [image_id("docker.io/library/nginx:latest"), "docker.io/library/nginx:latest"],
        "sizeBytes": image_size_bytes("nginx")}]
    assert images.reported("node-2") is None


def test_largest_first_and_at_most_50() -> None:
    images = NodeImages()
    for index in range(60):
        images.pulled("node-1", f"app{index}:v1")
    reported = images.reported("node-1")
    assert reported is not None and len(reported) == NODE_STATUS_MAX_IMAGES
    sizes = [image["sizeBytes"] for image in reported]
    assert sizes == sorted((image_size_bytes(f"app{i}:v1") for i in range(60)), reverse=True)[:50]


def test_images_listed_on_the_node_are_held_with_at_most_five_names() -> None:
    images = NodeImages()
    names = [f"registry.example/app@sha256:{i}" for i in range(4)] + ["registry.example/app:v1", "app:v1"]
    images.adopt(node("node-1", {"names": names, "sizeBytes": 10 ** 10}))
    images.pulled("node-1", "nginx")
    reported = images.reported("node-1")
    assert reported is not None
    assert reported[0] == {"names": names[:5], "sizeBytes": 10 ** 10}
    assert reported[1]["names"][1] == "docker.io/library/nginx:latest"
    images.forget("node-1")
    assert images.reported("node-1") is None
