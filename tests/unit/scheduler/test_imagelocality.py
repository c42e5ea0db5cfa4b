"""ImageLocality: upstream's size × spread sum, thresholds and name normalization on
hand-computed examples, and the PreScore Skip when no candidate holds an image."""

from __future__ import annotations

from typing import Any

from fakekube.scheduler.framework import Code, CycleState, PodInfo
from fakekube.scheduler.plugins.imagelocality import ImageLocality, calculate_priority, normalized_image_name
from tests.unit.scheduler.builders import MI, container, handle, node, pod

Obj = dict[str, Any]


def image(size_bytes: int, *names: str) -> Obj:
    return {"names": list(names), "sizeBytes": size_bytes}


def scores(nodes: list[Obj], incoming: Obj) -> dict[str, int] | str:
    """Every node's score (all nodes are candidates), or "skip"."""
    h = handle(*[(n, []) for n in nodes])
    plugin = ImageLocality(h, {})
    infos = h.snapshot.node_infos()
    state, info = CycleState(), PodInfo(incoming)
    status = plugin.pre_score(state, info, infos)
    if status is not None:
        assert status.code == Code.SKIP
        return "skip"
    return {n.name: plugin.score(state, info, n) for n in infos}


NGINX_300 = image(300 * MI, "nginx@sha256:abc", "nginx:latest")


def test_spread_scales_the_image_size() -> None:
    # 4 nodes, 2 hold nginx:latest (300 MiB): each scores int(300 MiB × 2/4) = 150 MiB.
    # 100 × (150 − 23) MiB / (1000 − 23) MiB = 100 × 127 / 977 = 12.99 -> 12.
    nodes = [node("n1", images=[NGINX_300]), node("n2", images=[NGINX_300]), node("n3"), node("n4")]
    assert scores(nodes, pod(containers=[container(image="nginx")])) == {"n1": 12, "n2": 12, "n3": 0, "n4": 0}


def test_one_node_of_one_holding_a_large_image() -> None:
    # Spread 1/1: 800 MiB -> 100 × 777 / 977 = 79.5 -> 79.
    nodes = [node("n1", images=[image(800 * MI, "busybox:1.36")])]
    assert scores(nodes, pod(containers=[container(image="busybox:1.36")])) == {"n1": 79}


def test_threshold_grows_with_the_number_of_containers() -> None:
    # Two containers (one init) both on the node, spread 1: 800 + 800 = 1600 MiB against a
    # maximum of 2000 MiB: 100 × (1600 − 23) / (2000 − 23) = 157700 / 1977 = 79.77 -> 79.
    # One container's image missing: 800 MiB of 2000: 100 × 777 / 1977 = 39.3 -> 39.
    held = [image(800 * MI, "app:v1"), image(800 * MI, "init:v1")]
    both = pod(containers=[container(image="app:v1")], init=[container("i", image="init:v1")])
    one = pod(containers=[container(image="app:v1")], init=[container("i", image="other:v1")])
    assert scores([node("n1", images=held)], both) == {"n1": 79}
    assert scores([node("n1", images=held)], one) == {"n1": 39}


def test_small_images_score_zero_and_large_ones_cap_at_100() -> None:
    assert scores([node("n1", images=[image(20 * MI, "tiny:1")])], pod(containers=[container(image="tiny:1")])) \
        == {"n1": 0}
    assert scores([node("n1", images=[image(5000 * MI, "huge:1")])], pod(containers=[container(image="huge:1")])) \
        == {"n1": 100}


def test_names_match_after_adding_latest_only() -> None:
    # Upstream's normalizedImageName adds ":latest" and nothing else: a pod's "nginx" does
    # not match the fully qualified name containerd reports, a fully qualified pod image does.
    qualified = image(800 * MI, "docker.io/library/nginx@sha256:abc", "docker.io/library/nginx:latest")
    assert scores([node("n1", images=[qualified])], pod(containers=[container(image="nginx")])) == "skip"
    assert scores([node("n1", images=[qualified])],
                  pod(containers=[container(image="docker.io/library/nginx")])) == {"n1": 79}
    assert normalized_image_name("nginx") == "nginx:latest"
    assert normalized_image_name("localhost:5000/app") == "localhost:5000/app:latest"
    assert normalized_image_name("nginx:1.27") == "nginx:1.27"
    assert normalized_image_name("nginx@sha256:abc") == "nginx@sha256:abc"


def test_no_candidate_holding_an_image_skips() -> None:
    assert scores([node("n1"), node("n2")], pod(containers=[container(image="nginx")])) == "skip"


def test_calculate_priority_bounds() -> None:
    assert calculate_priority(0, 1) == 0
    assert calculate_priority(23 * MI, 1) == 0
    assert calculate_priority(1000 * MI, 1) == 100
    assert calculate_priority(10_000 * MI, 3) == 100
