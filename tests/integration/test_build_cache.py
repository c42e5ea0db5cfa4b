"""Builds of a configuration seen before are restored from a snapshot of its fresh state
(cluster/buildcache.py): the cluster a test gets is the one a full build gives, and runs on
exactly as it would."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakekube import Cluster
from fakekube.cluster import buildcache
from fakekube.cluster.buildcache import BUILDS, BuildCache
from tests.integration.test_snapshots import dump, story, workload


@pytest.fixture()
def cache(monkeypatch: pytest.MonkeyPatch) -> BuildCache:
    """A cache of this test's own, on (whatever the environment says)."""
    own = BuildCache(enabled=True)
    monkeypatch.setattr(buildcache, "BUILDS", own)
    return own


def full_build_story() -> str:
    """The story on a cluster built in full (the cache off)."""
    BUILDS_OFF = BuildCache(enabled=False)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(buildcache, "BUILDS", BUILDS_OFF)
        cluster = Cluster(nodes=3, seed=7)
    workload(cluster)
    story(cluster)
    return dump(cluster)


def test_a_cached_build_runs_on_byte_for_byte_as_a_full_build(cache: BuildCache) -> None:
    expected = full_build_story()
    first, second, third, fourth = (Cluster(nodes=3, seed=7) for _ in range(4))
    assert (cache.misses, cache.hits) == (2, 2)  # the second build keeps the snapshot, later ones restore it
    workload(third)
    story(third)
    assert dump(third) == expected
    # a later cached build is not touched by what ran on the one before it
    workload(fourth)
    story(fourth)
    assert dump(fourth) == expected
    assert third.store is not fourth.store and third.engine is not fourth.engine


def test_reset_is_a_cached_build_too(cache: BuildCache) -> None:
    cluster = Cluster(nodes=2, seed=4)
    cluster.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "gone", "namespace": "default"}})
    cluster.advance(30)
    cluster.reset()
    cluster.reset()
    assert cache.hits == 1
    assert cluster.list("v1", "ConfigMap", "default") == Cluster(nodes=2, seed=4).list("v1", "ConfigMap", "default")
    assert [cm["metadata"]["name"] for cm in cluster.list("v1", "ConfigMap", "default")] == ["kube-root-ca.crt"]
    assert cluster.now == Cluster(nodes=2, seed=4).now


def test_another_config_or_an_edited_file_is_built_in_full(cache: BuildCache, tmp_path: Path) -> None:
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    pod = manifests / "static.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: one, namespace: kube-system}\n"
                   "spec: {containers: [{name: c, image: nginx:1.27}]}\n")
    for _ in range(3):
        Cluster(nodes=1, static_pod_path=str(manifests))
    assert cache.hits == 1
    Cluster(nodes=1, seed=99, static_pod_path=str(manifests))
    assert cache.hits == 1  # another seed: another config
    pod.write_text(pod.read_text().replace("name: one", "name: two"))
    edited = Cluster(nodes=1, static_pod_path=str(manifests))
    assert cache.hits == 1  # the file changed: not the remembered build
    edited.advance(5)
    assert [p["metadata"]["name"] for p in edited.list("v1", "Pod", "kube-system")] == ["two-node-1"]


def test_at_most_max_configs_are_kept(cache: BuildCache) -> None:
    cache.max_configs = 2
    for seed in (1, 2, 3):
        Cluster(seed=seed)
        Cluster(seed=seed)
    Cluster(seed=1)  # forgotten: the least recently used of three
    Cluster(seed=3)
    assert cache.hits == 1


def test_the_cache_does_not_keep_the_cluster_it_was_taken_from_alive(cache: BuildCache) -> None:
    import gc
    import weakref
    Cluster(nodes=1, seed=8)
    second = Cluster(nodes=1, seed=8)  # its fresh state is kept
    gone = weakref.ref(second)
    del second
    gc.collect()
    assert gone() is None
    third = Cluster(nodes=1, seed=8)
    assert cache.hits == 1 and third.api.pod_logs.__self__ is third
