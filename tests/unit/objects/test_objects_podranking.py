"""Upstream's deletion ranking (ActivePodsWithRanks, 1.33) and slow-start batches."""

from datetime import datetime, timedelta, timezone

import pytest

from fakekube.objects.podranking import (
    colocation_ranks,
    compare_for_deletion,
    max_container_restarts,
    pod_deletion_cost,
    rank_for_deletion,
)
from fakekube.objects.slowstart import slow_start_batch

NOW = datetime(2025, 1, 1, 1, 0, 0, tzinfo=timezone.utc)


def stamp(seconds_ago: float) -> str:
    return (NOW - timedelta(seconds=seconds_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def pod(name, node="node-1", phase="Running", ready_for=None, restarts=0, created_ago=3000.0, cost=None, uid=None):
    meta = {"name": name, "uid": uid or f"uid-{name}", "creationTimestamp": stamp(created_ago)}
    if cost is not None:
        meta["annotations"] = {"controller.kubernetes.io/pod-deletion-cost": cost}
    conditions = [{"type": "Ready", "status": "True" if ready_for is not None else "False",
                   "lastTransitionTime": stamp(ready_for if ready_for is not None else created_ago)}]
    return {"metadata": meta, "spec": {"nodeName": node} if node else {},
            "status": {"phase": phase, "conditions": conditions,
                       "containerStatuses": [{"name": "c", "restartCount": restarts}]}}


def order(*pods, ranks=None, now=NOW):
    return [p["metadata"]["name"] for p in rank_for_deletion(list(pods), ranks, now)]


def test_each_rule_in_turn():
    ready = dict(ready_for=1000)
    assert order(pod("bound"), pod("unbound", node="")) == ["unbound", "bound"]
    assert order(pod("running"), pod("unknown", phase="Unknown"), pod("pending", phase="Pending")) == \
        ["pending", "unknown", "running"]
    assert order(pod("ready", **ready), pod("unready")) == ["unready", "ready"]
    assert order(pod("dear", cost="5", **ready), pod("cheap", cost="-5", **ready), pod("plain", **ready)) == \
        ["cheap", "plain", "dear"]
    assert order(pod("alone", **ready), pod("doubled", **ready), ranks=[1, 2]) == ["doubled", "alone"]
    assert order(pod("long", ready_for=1000), pod("short", ready_for=100)) == ["short", "long"]
    assert order(pod("calm"), pod("crashy", restarts=3)) == ["crashy", "calm"]
    assert order(pod("old", created_ago=3000), pod("new", created_ago=100)) == ["new", "old"]


def test_times_compare_on_a_log2_scale_then_by_uid():
    # 1000 s and 1050 s ago share floor(log2(ns)) = 39: the uid decides, not the time.
    a, b = pod("a", ready_for=1050, uid="uid-1"), pod("b", ready_for=1000, uid="uid-2")
    assert order(a, b) == ["a", "b"] and order(b, a) == ["a", "b"]
    # Without a reference time, plain recency decides.
    assert order(a, b, now=None) == ["b", "a"]
    # Creation times the same way (two unready pods with equal restarts).
    x, y = pod("x", created_ago=1050, uid="uid-9"), pod("y", created_ago=1000, uid="uid-0")
    assert order(x, y) == ["y", "x"]


def test_restarts_count_only_when_ready_times_tie():
    same = pod("same-a", ready_for=500, restarts=0), pod("same-b", ready_for=500, restarts=2)
    assert order(*same) == ["same-b", "same-a"]


def test_pod_deletion_cost_parsing():
    assert [pod_deletion_cost(pod("p", cost=value)) for value in
            ("10", "-3", "0", "+1", "007", "1.5", "x", "", "-", str(2 ** 31), str(-(2 ** 31)))] == \
        [10, -3, 0, 0, 0, 0, 0, 0, 0, 0, -(2 ** 31)]


def test_colocation_counts_active_related_pods_per_node():
    mine = [pod("a", node="n1"), pod("b", node="n2")]
    related = mine + [pod("c", node="n2"), pod("gone", node="n1", phase="Succeeded")]
    assert colocation_ranks(mine, related) == [1, 2]


def test_compare_is_symmetric_and_max_restarts():
    a, b = pod("a", node=""), pod("b")
    assert compare_for_deletion(a, b, 0, 0, NOW) == -1 and compare_for_deletion(b, a, 0, 0, NOW) == 1
    assert compare_for_deletion(b, dict(b), 0, 0, NOW) == 0
    assert max_container_restarts({"status": {}}) == 0


@pytest.mark.parametrize("fail_from, calls, successes", [
    (None, 10, 10),  # 1 + 2 + 4 + 3
    (1, 1, 0),       # the first batch of one fails: nothing more is tried
    (2, 3, 1),       # the batch of two is made whole
    (4, 7, 3),       # the batch of four is made whole
])
def test_slow_start_batches(fail_from, calls, successes):
    made = []

    def call():
        made.append(len(made) + 1)
        return "refused" if fail_from is not None and len(made) >= fail_from else None

    done, error = slow_start_batch(10, 1, call)
    assert (len(made), done) == (calls, successes)
    assert error == (None if fail_from is None else "refused")
