"""kube-scheduler's events (events.k8s.io/v1, client-go tools/events) as HTTP clients see
them: one Event through both APIs, a series on repeats, its final count at the sweep.

Events are recorded the way the scheduler records them, through the controller runtime's
``ctx.record_eventf``, at exact virtual times (seconds since the cluster's epoch).
"""

from __future__ import annotations

from datetime import datetime

import pytest
from kubernetes import client, watch

from fakekube import Cluster
from fakekube.engine.controller import Context
from fakekube.random import SeededRandom

from tests.integration.support import pod

pytestmark = pytest.mark.fakekube(nodes=1)

NOTE = "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
SCHEDULER_EVENTS = "reportingController=default-scheduler,regarding.name=p"


def record(cluster: Cluster, regarding: dict, note: str = NOTE) -> dict | None:
    """One FailedScheduling at the cluster's current time, as the scheduler's reconcile would."""
    def work() -> dict | None:
        ctx = Context(cluster.engine, "test-scheduler", "default/p", cluster.engine.clock.now(), SeededRandom(0))
        return ctx.record_eventf(regarding, "Pod", "Warning", "FailedScheduling", "Scheduling", note,
                                 "default-scheduler")
    return cluster.engine.run(work)


def at(seconds: int) -> datetime:
    return datetime.fromisoformat(f"2025-01-01T00:{seconds // 60:02d}:{seconds % 60:02d}+00:00")


def test_one_event_through_both_apis_and_a_series_on_repeats(fakekube: Cluster) -> None:
    core = client.CoreV1Api(fakekube.client())
    events = client.EventsV1Api(fakekube.client())
    target = fakekube.create(pod("p"))
    fakekube.advance(10)
    record(fakekube, target)

    [new] = events.list_namespaced_event("default", field_selector=SCHEDULER_EVENTS).items
    assert (new.event_time, new.series, new.action, new.reason, new.type) == \
        (at(10), None, "Scheduling", "FailedScheduling", "Warning")
    assert (new.reporting_controller, new.reporting_instance) == \
        ("default-scheduler", "default-scheduler-fakekube-control-plane")
    assert (new.regarding.kind, new.regarding.name, new.regarding.uid, new.regarding.resource_version) == \
        ("Pod", "p", target["metadata"]["uid"], target["metadata"]["resourceVersion"])
    assert new.note == NOTE and new.deprecated_count is None and new.deprecated_first_timestamp is None

    [old] = core.list_namespaced_event("default", field_selector="reason=FailedScheduling").items
    assert old.metadata.name == new.metadata.name
    assert (old.involved_object.name, old.message, old.event_time, old.first_timestamp, old.last_timestamp,
            old.count) == ("p", NOTE, at(10), None, None, None)
    assert (old.source.component, old.reporting_component, old.reporting_instance) == \
        (None, "default-scheduler", "default-scheduler-fakekube-control-plane")

    # (Listed with the selector: the client cannot read the kubelet's events, whose eventTime is null.)
    listed_rv = events.list_namespaced_event("default", field_selector=SCHEDULER_EVENTS).metadata.resource_version
    fakekube.advance(60)
    record(fakekube, target, note="another note: not part of the key")
    fakekube.advance(60)
    record(fakekube, target)
    [seen] = core.list_namespaced_event("default", field_selector="involvedObject.name=p,reason=FailedScheduling").items
    assert (seen.series.count, seen.series.last_observed_time, seen.message) == (2, at(70), NOTE)

    stream = watch.Watch().stream(events.list_namespaced_event, "default", field_selector=SCHEDULER_EVENTS,
                                  resource_version=listed_rv, timeout_seconds=1)
    changes = [(change["type"], change["object"].series.count) for change in stream]
    assert changes == [("MODIFIED", 2)]

    fakekube.advance(720 - 130 - 1)  # to 11:59: the 6:00 sweep left the series alone
    assert events.read_namespaced_event(new.metadata.name, "default").series.count == 2
    fakekube.advance(1)  # 12:00: last seen at 2:10, over 6 minutes before: the final count
    final = events.read_namespaced_event(new.metadata.name, "default")
    assert (final.series.count, final.series.last_observed_time) == (3, at(130))

    record(fakekube, target)  # forgotten by that sweep: a new Event
    names = [e.metadata.name for e in events.list_namespaced_event("default", field_selector=SCHEDULER_EVENTS).items]
    assert len(names) == 2 and new.metadata.name in names


def test_a_long_note_is_cut_as_kube_scheduler_cuts_it(fakekube: Cluster) -> None:
    target = fakekube.create(pod("p"))
    written = record(fakekube, target, note="x" * 2000)
    assert written is not None and written["note"] == "x" * 1020 + " ..."
    [stored] = fakekube.list("v1", "Event", field_selector="reason=FailedScheduling")
    assert stored["message"] == written["note"]


def test_a_scheduled_event_read_as_core_v1_has_only_its_event_time(fakekube: Cluster) -> None:
    """The scheduler writes through events.k8s.io/v1, so the core/v1 view of its ``Scheduled``
    Event has ``eventTime`` and no first/last timestamps, count or source — what a real 1.36
    apiserver returns for an events.k8s.io Event written with only ``eventTime`` (checked
    against one: ``firstTimestamp``/``lastTimestamp`` null, no ``count``, ``source`` empty).
    ``kubectl get events`` then shows its age from ``eventTime``."""
    fakekube.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
                     "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}})  # no nodeName: scheduled
    fakekube.advance(1)
    core = client.CoreV1Api(fakekube.client())
    [scheduled] = [e for e in core.list_namespaced_event("default", _preload_content=False).json()["items"]
                   if e["reason"] == "Scheduled"]
    assert (scheduled["firstTimestamp"], scheduled["lastTimestamp"], "count" in scheduled, scheduled["source"]) \
        == (None, None, False, {})
    assert scheduled["eventTime"] == "2025-01-01T00:00:00.000000Z"
    assert (scheduled["reportingComponent"], scheduled["message"]) == (
        "default-scheduler", "Successfully assigned default/web to node-1")
