"""PodLabelIndex: lookups follow the cache through pod adds, relabels, deletes and node
removal, and InterPodAffinity's indexed counts equal a brute-force scan."""

from __future__ import annotations

import random

from fakekube.objects.labels import compile_selector
from fakekube.scheduler.cache import Cache
from fakekube.scheduler.framework import CycleState, PodInfo
from fakekube.scheduler.plugins.interpodaffinity import _FilterState
from fakekube.scheduler.plugins.labelindex import PodLabelIndex
from tests.unit.scheduler.test_interpodaffinity import FOUR_NODES, HOST, ZONE, World, node, pod, term


def names(index: PodLabelIndex, selector: dict[str, object] | None) -> set[str] | None:
    found = index.candidates(compile_selector(selector))  # type: ignore[arg-type]
    return None if found is None else {f"{n.name}/{info.name}" for info, n in found}


def test_lookups_follow_the_cache() -> None:
    cache = Cache()
    for n in FOUR_NODES[:2]:
        cache.set_node(n)
    cache.add_pod("n1", PodInfo(pod("a", "n1", labels={"app": "web"})))
    cache.add_pod("n2", PodInfo(pod("b", "n2", labels={"app": "web", "tier": "front"})))
    index = PodLabelIndex()
    index.refresh(cache.ordered())
    assert names(index, {"matchLabels": {"app": "web"}}) == {"n1/a", "n2/b"}
    # the most selective requirement is the one looked up
    assert names(index, {"matchLabels": {"app": "web", "tier": "front"}}) == {"n2/b"}
    assert names(index, {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "db", "web"]}]}) \
        == {"n1/a", "n2/b"}
    assert names(index, {"matchExpressions": [{"key": "app", "operator": "Exists"}]}) is None  # caller scans
    assert names(index, None) == set()  # a nil selector matches nothing
    cache.add_pod("n1", PodInfo(pod("a", "n1", labels={"app": "db"})))  # relabelled
    cache.remove_pod("default/b")
    index.refresh(cache.ordered())
    assert names(index, {"matchLabels": {"app": "web"}}) == set()
    assert names(index, {"matchLabels": {"app": "db"}}) == {"n1/a"}
    cache.remove_node("n1")
    index.refresh(cache.ordered())
    assert names(index, {"matchLabels": {"app": "db"}}) == set()
    cache.set_node(node("n1", "a"))  # back, with its pod waiting for it
    index.refresh(cache.ordered())
    assert names(index, {"matchLabels": {"app": "db"}}) == {"n1/a"}


def test_indexed_counts_equal_a_full_scan() -> None:
    rng = random.Random(7)
    nodes = [node(f"n{i}", rng.choice(["a", "b", "c", None])) for i in range(12)]
    apps = ["web", "db", "cache"]
    pods = [pod(f"p{i}", f"n{rng.randrange(12)}", namespace=rng.choice(["default", "other"]),
                labels={"app": rng.choice(apps), "rev": rng.choice(["1", "2"])}) for i in range(60)]
    world = World(nodes, pods, namespaces={"default": {}, "other": {}})
    non_empty = 0
    for trial in range(40):
        key = rng.choice([HOST, ZONE])
        wanted = {"app": rng.choice(apps)} if trial % 3 else {}
        incoming = pod("x", labels={"app": "web", "rev": "1"},
                       affinity=[term(key, **wanted)] if trial % 2 else None,
                       anti=[term(rng.choice([HOST, ZONE]), namespaces=["default", "other"], app=rng.choice(apps))])
        state, info = CycleState(), PodInfo(incoming)
        world.plugin.pre_filter(state, info)
        indexed: _FilterState = state.data["InterPodAffinity"]
        scanned = indexed.clone()
        scanned.affinity.by_key.clear()
        scanned.anti.by_key.clear()
        for n in world.cache.ordered():
            for other in n.pods.values():
                scanned.count_incoming(other, n.labels, 1)
        assert scanned.affinity.by_key == indexed.affinity.by_key
        assert scanned.anti.by_key == indexed.anti.by_key
        non_empty += bool(indexed.affinity) + bool(indexed.anti)
    assert non_empty > 40  # the comparisons were not all of empty counts
