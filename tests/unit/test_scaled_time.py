"""Scaled time: cluster time follows an (injected) wall clock, k times faster."""

import pytest

from fakekube import Cluster
from fakekube.engine.scaled import MAX_STEP_S, ScaledTime


class FakeWall:
    def __init__(self) -> None:
        self.now_s = 1000.0

    def __call__(self) -> float:
        return self.now_s


def test_cluster_time_moves_scale_times_faster_than_the_wall() -> None:
    cluster = Cluster(nodes=1)
    wall = FakeWall()
    scaled = ScaledTime(cluster.engine, scale=60, wall=wall)
    wall.now_s += 0.5
    assert scaled.tick() == 30.0
    assert (cluster.now - cluster.config.start_time).total_seconds() == 30.0
    wall.now_s += 0.25
    scaled.tick()
    lease = cluster.get("coordination.k8s.io/v1", "Lease", "node-1", "kube-node-lease")
    assert lease["spec"]["renewTime"] == "2025-01-01T00:00:40.000000Z"  # timers fired on the way


def test_one_tick_never_leaps_more_than_the_cap() -> None:
    cluster = Cluster()
    wall = FakeWall()
    scaled = ScaledTime(cluster.engine, scale=1000, wall=wall)
    wall.now_s += 3600
    assert scaled.tick() == MAX_STEP_S


def test_the_scale_must_be_positive() -> None:
    with pytest.raises(ValueError):
        ScaledTime(Cluster().engine, scale=0)


def test_cluster_config_starts_and_stops_the_ticker() -> None:
    with Cluster(time_scale=1000) as cluster:
        assert cluster.scaled_time is not None and cluster.scaled_time.scale == 1000
    assert cluster.scaled_time is None


def test_a_jump_through_the_control_api_is_kept_and_scaled_time_carries_on_from_it() -> None:
    """``advance`` while scaled time runs (the control API under ``fakekube serve``): the jump
    stays, and the next tick adds only the scaled wall time since the last one."""
    cluster = Cluster(nodes=1)
    wall = FakeWall()
    scaled = ScaledTime(cluster.engine, scale=1, wall=wall)
    wall.now_s += 2
    scaled.tick()
    cluster.advance(300)
    wall.now_s += 0.5
    assert scaled.tick() == 0.5
    assert (cluster.now - cluster.config.start_time).total_seconds() == 302.5
    lease = cluster.get("coordination.k8s.io/v1", "Lease", "node-1", "kube-node-lease")
    assert lease["spec"]["renewTime"] == "2025-01-01T00:05:00.000000Z"  # heartbeats ran through the jump


def test_a_running_cluster_s_scaled_time_and_advance_share_the_engine_thread() -> None:
    with Cluster(nodes=1, time_scale=1) as cluster:
        before = cluster.now
        cluster.advance(3600)
        cluster.settle()
        assert (cluster.now - before).total_seconds() >= 3600
        ready = cluster.get("v1", "Node", "node-1")["status"]["conditions"]
        assert [c["status"] for c in ready if c["type"] == "Ready"] == ["True"]
