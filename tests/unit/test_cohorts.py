"""Cohorts: many members, one engine timer per instant, each member served once."""

from __future__ import annotations

from datetime import timedelta

from fakekube import Cluster
from fakekube.engine.cohorts import Cohorts


class Recorder:
    """A controller that serves cohorts and records (time, members) per batch."""

    name = "recorder"
    resources = ()

    def __init__(self) -> None:
        self.cohorts = Cohorts("beat")
        self.served: list[tuple[int, list[str]]] = []

    def keys_for(self, change):  # pragma: no cover - watches nothing
        return []

    def reconcile(self, key, ctx) -> None:
        at, members = self.cohorts.take(key)
        self.served.append((int((at - START).total_seconds()), members))


START = Cluster().config.start_time


class Armer:
    """Arms the recorder's keys as its reconcile context would."""

    def __init__(self, cluster: Cluster) -> None:
        self.engine = cluster.engine

    def enqueue_at(self, key, when) -> None:
        self.engine.enqueue_at("recorder", key, when)


def make() -> tuple[Cluster, Recorder]:
    cluster = Cluster()
    recorder = Recorder()
    cluster.engine.register(recorder)
    return cluster, recorder


def test_members_due_together_share_one_batch_in_scheduling_order() -> None:
    cluster, recorder = make()
    for member in ("b", "a", "c"):
        recorder.cohorts.schedule(member, START + timedelta(seconds=10), Armer(cluster))
    recorder.cohorts.schedule("d", START + timedelta(seconds=5), Armer(cluster))
    cluster.advance(20)
    assert recorder.served == [(5, ["d"]), (10, ["b", "a", "c"])]


def test_rescheduling_makes_the_older_entry_stale_and_twice_at_one_instant_serves_once() -> None:
    cluster, recorder = make()
    recorder.cohorts.schedule("a", START + timedelta(seconds=10), Armer(cluster))
    recorder.cohorts.schedule("b", START + timedelta(seconds=10), Armer(cluster))
    recorder.cohorts.schedule("a", START + timedelta(seconds=15), Armer(cluster))
    recorder.cohorts.schedule("b", START + timedelta(seconds=10), Armer(cluster))
    cluster.advance(20)
    assert recorder.served == [(10, ["b"]), (15, ["a"])]
    assert recorder.cohorts.due_at("a") is None


def test_a_forgotten_member_is_not_served() -> None:
    cluster, recorder = make()
    recorder.cohorts.schedule("a", START + timedelta(seconds=10), Armer(cluster))
    recorder.cohorts.forget("a")
    cluster.advance(20)
    assert recorder.served == [(10, [])]
