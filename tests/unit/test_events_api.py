"""events.k8s.io/v1 recording follows client-go's tools/events (event_broadcaster.go, v0.33):
isomorphic events make a series, written at the second occurrence and by the 6- and
30-minute sweeps from the broadcaster's start; one stored Event is seen through both APIs."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from fakekube.api.machinery.errors import ApiError
from fakekube.api.types import builtin_registry
from fakekube.api.verbs.apiserver import APIServer
from fakekube.api.verbs.deletion import DeleteOptions
from fakekube.api.verbs.listing import ListOptions
from fakekube.clock import DEFAULT_EPOCH, VirtualClock
from fakekube.engine.events import object_reference, unix_nanos
from fakekube.engine.eventsapi import EventsApiEvent, EventsApiRecorder, truncate_note
from fakekube.random import SeededRandom
from fakekube.store import Store

POD = {"metadata": {"name": "web", "namespace": "default", "uid": "u-1", "resourceVersion": "7"}}
PREEMPTOR = {"metadata": {"name": "big", "namespace": "default", "uid": "u-2", "resourceVersion": "9"}}
START = DEFAULT_EPOCH


class Rig:
    """A bare apiserver on a manual clock with one recorder, swept from the clock's start."""

    def __init__(self, max_entries: int = 16) -> None:
        self.clock = VirtualClock()
        self.api = APIServer(builtin_registry(), Store(), self.clock, SeededRandom(0))
        self.api.create(self.api.registry.lookup("", "v1", "namespaces"), "", {"metadata": {"name": "default"}})
        self.recorder = EventsApiRecorder(self.api, self.clock.call_at, self.clock.now(), SeededRandom(1).uid,
                                          max_entries=max_entries)
        self.core = self.api.registry.lookup("", "v1", "events")
        self.v1 = self.api.registry.lookup("events.k8s.io", "v1", "events")

    def at(self, seconds: float) -> datetime:
        """Move the clock to START + ``seconds`` (firing the sweeps due on the way)."""
        self.clock.advance_to(START + timedelta(seconds=seconds))
        return self.clock.now()

    def record(self, seconds: float, occurrence: EventsApiEvent | None = None) -> dict | None:
        return self.recorder.record(self.at(seconds), occurrence or failed())

    def stored(self, name: str) -> dict:
        """The Event as core/v1 shows it."""
        return self.api.get(self.core, "default", name)

    def names(self) -> list[str]:
        return [e["metadata"]["name"] for e in self.api.store.list(("", "events"), "default")[0]]


def failed(note: str = "0/3 nodes are available: 3 Insufficient cpu.", pod: dict = POD,
           related: dict | None = None, reason: str = "FailedScheduling", event_type: str = "Warning") -> EventsApiEvent:
    return EventsApiEvent(object_reference(pod, "Pod", resource_version=True),
                          object_reference(related, "Pod", resource_version=True) if related else None,
                          event_type, reason, "Scheduling", note, "default-scheduler",
                          "default-scheduler-fakekube-control-plane")


def name_at(seconds: float) -> str:
    return f"web.{unix_nanos(START + timedelta(seconds=seconds)):x}"


def series(count: int, seconds: float) -> dict:
    micro = (START + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return {"count": count, "lastObservedTime": micro}


REGARDING = {"kind": "Pod", "namespace": "default", "name": "web", "uid": "u-1", "apiVersion": "v1",
             "resourceVersion": "7"}


def test_a_first_event_is_one_object_seen_through_both_apis_with_upstream_field_mapping() -> None:
    rig = Rig()
    written = rig.record(10)
    name = name_at(10)
    meta = {"name": name, "namespace": "default", "uid": written["metadata"]["uid"],
            "creationTimestamp": "2025-01-01T00:00:10Z", "resourceVersion": written["metadata"]["resourceVersion"]}
    assert written == {
        "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": meta,
        "eventTime": "2025-01-01T00:00:10.000000Z", "reportingController": "default-scheduler",
        "reportingInstance": "default-scheduler-fakekube-control-plane", "action": "Scheduling",
        "reason": "FailedScheduling", "regarding": REGARDING, "note": "0/3 nodes are available: 3 Insufficient cpu.",
        "type": "Warning", "deprecatedSource": {}, "deprecatedFirstTimestamp": None, "deprecatedLastTimestamp": None,
    }
    assert rig.stored(name) == {
        "apiVersion": "v1", "kind": "Event", "metadata": meta, "involvedObject": REGARDING,
        "reason": "FailedScheduling", "message": "0/3 nodes are available: 3 Insufficient cpu.", "source": {},
        "firstTimestamp": None, "lastTimestamp": None, "type": "Warning", "eventTime": "2025-01-01T00:00:10.000000Z",
        "action": "Scheduling", "reportingComponent": "default-scheduler",
        "reportingInstance": "default-scheduler-fakekube-control-plane",
    }
    assert rig.api.get(rig.v1, "default", name) == written
    assert rig.names() == [name]


def test_the_second_isomorphic_event_patches_a_series_and_later_ones_wait_for_the_sweep() -> None:
    rig = Rig()
    rig.record(10)
    name = name_at(10)
    second = rig.record(70, failed(note="another message: the note is not part of the key"))
    assert second is not None and second["metadata"]["name"] == name
    assert second["series"] == series(2, 70)
    assert second["note"] == "0/3 nodes are available: 3 Insufficient cpu."  # the first one's
    rv = second["metadata"]["resourceVersion"]
    assert rig.record(130) is None and rig.record(190) is None
    assert rig.stored(name)["metadata"]["resourceVersion"] == rv  # counted in memory only
    assert rig.recorder.next_sweep == START + timedelta(seconds=360)
    rig.at(360)  # the sweep at 6 min: last observed at 3:10, not 6 minutes ago yet
    assert rig.stored(name)["series"] == series(2, 70)
    rig.at(719.999999)
    assert rig.stored(name)["series"] == series(2, 70)
    rig.at(720)  # 3:10 < 12:00 - 6:00: the series is finished, its final count written
    assert rig.stored(name)["series"] == series(4, 190)
    assert rig.recorder.next_sweep is None and len(rig.recorder) == 0
    assert rig.names() == [name]


def test_a_series_observed_every_five_minutes_is_rewritten_every_thirty_minutes() -> None:
    rig = Rig()
    for minute in range(0, 26, 5):
        rig.record(minute * 60 + 1)
    name = name_at(1)
    # Written at the 2nd occurrence (5:01), then at the refresh at 30:00 (0:01..25:01: 6 of them).
    rig.at(1799)
    assert rig.stored(name)["series"] == series(2, 301)
    rig.at(1800)
    assert rig.stored(name)["series"] == series(6, 1501)
    for minute in range(30, 41, 5):
        rig.record(minute * 60 + 1)
    # Last seen at 40:01: finished by the first sweep more than 6 minutes later (48:00).
    rig.at(48 * 60 - 1)
    assert rig.stored(name)["series"] == series(6, 1501)
    rig.at(48 * 60)
    assert rig.stored(name)["series"] == series(9, 2401)
    assert rig.recorder.next_sweep is None


def test_a_singleton_is_forgotten_by_the_first_sweep_more_than_six_minutes_after_it() -> None:
    rig = Rig()
    rig.record(10)
    assert rig.record(719)["series"] == series(2, 719)  # the 6:00 sweep kept it (0:10 is not before 0:00)

    fresh = Rig()
    fresh.record(10)
    again = fresh.record(720)  # the 12:00 sweep ran first and forgot it: a new Event, no series
    assert again is not None and "series" not in again
    assert fresh.names() == sorted([name_at(10), name_at(720)])


def test_the_key_is_type_action_reason_reporter_and_both_references_with_resource_versions() -> None:
    rig = Rig()
    rig.record(1)
    newer_pod = {"metadata": dict(POD["metadata"], resourceVersion="8")}
    assert "series" not in rig.record(2, failed(pod=newer_pod))
    assert "series" not in rig.record(3, failed(reason="Preempted", event_type="Normal"))
    preempted = rig.record(4, failed(reason="Preempted", event_type="Normal", related=PREEMPTOR))
    assert preempted["related"] == {"kind": "Pod", "namespace": "default", "name": "big", "uid": "u-2",
                                    "apiVersion": "v1", "resourceVersion": "9"}
    assert rig.stored(preempted["metadata"]["name"])["related"] == preempted["related"]
    assert len(rig.names()) == 4


def test_the_cache_is_bounded_and_a_series_pushed_out_has_its_count_written_first() -> None:
    rig = Rig(max_entries=2)
    rig.record(1)
    rig.record(2)
    rig.record(3)  # series of 3, count 3 only in memory
    name = name_at(1)
    assert rig.stored(name)["series"] == series(2, 2)
    other = [{"metadata": dict(POD["metadata"], name=f"p{i}", uid=f"u-p{i}")} for i in range(2)]
    rig.record(4, failed(pod=other[0]))
    assert len(rig.recorder) == 2
    rig.record(5, failed(pod=other[1]))  # pushes the oldest (the series) out
    assert len(rig.recorder) == 2
    assert rig.stored(name)["series"] == series(3, 3)
    assert "series" not in rig.record(6)  # forgotten: a new Event


def test_a_deleted_series_event_is_created_again_by_its_next_write() -> None:
    rig = Rig()
    rig.record(1)
    rig.record(2)
    name = name_at(1)
    rig.record(3)
    rig.api.delete(rig.core, "default", name, DeleteOptions())
    rig.at(720)  # the finishing write: patch answers 404, so it is created with its series
    recreated = rig.api.get(rig.v1, "default", name)
    assert recreated["series"] == series(3, 3) and recreated["eventTime"] == "2025-01-01T00:00:01.000000Z"


def test_two_events_about_one_object_at_one_instant_take_the_next_free_nanosecond() -> None:
    rig = Rig()
    rig.record(1)
    rig.record(1, failed(reason="Other"))
    nanos = unix_nanos(START + timedelta(seconds=1))
    assert rig.names() == [f"web.{nanos:x}", f"web.{nanos + 1:x}"]


def test_an_unsupported_type_is_dropped_and_a_refused_event_returns_none() -> None:
    rig = Rig()
    assert rig.record(1, failed(event_type="Fatal")) is None
    assert rig.record(2, failed(note="x" * 1025)) is None  # the apiserver refuses it (422)
    assert rig.names() == []


def test_truncate_note_is_kube_schedulers_truncate_message() -> None:
    assert truncate_note("short") == "short"
    assert truncate_note("x" * 1024) == "x" * 1024
    cut = truncate_note("x" * 1100)
    assert len(cut) == 1024 and cut.endswith("x ...")
    wide = truncate_note("x" * 1019 + "é" * 10)  # é is 2 bytes: the one cut in half is dropped
    assert wide == "x" * 1019 + " ..." and len(wide.encode()) <= 1024


# -- the two APIs over one store ----------------------------------------------------------

def legacy_event(name: str = "old") -> dict:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": "default"},
            "involvedObject": {"kind": "Node", "name": "node-1", "uid": "node-1"}, "reason": "NodeReady",
            "message": "Node node-1 status is now: NodeReady", "source": {"component": "kubelet", "host": "node-1"},
            "firstTimestamp": "2025-01-01T00:00:00Z", "lastTimestamp": "2025-01-01T00:01:00Z", "count": 2,
            "type": "Normal", "eventTime": None, "reportingComponent": "kubelet", "reportingInstance": "node-1"}


def test_a_core_event_reads_through_events_k8s_io_with_the_deprecated_fields() -> None:
    rig = Rig()
    rig.api.create(rig.core, "default", legacy_event())
    seen = rig.api.get(rig.v1, "default", "old")
    assert {k: v for k, v in seen.items() if k != "metadata"} == {
        "apiVersion": "events.k8s.io/v1", "kind": "Event", "eventTime": None, "reportingController": "kubelet",
        "reportingInstance": "node-1", "reason": "NodeReady",
        "regarding": {"kind": "Node", "name": "node-1", "uid": "node-1"},
        "note": "Node node-1 status is now: NodeReady", "type": "Normal",
        "deprecatedSource": {"component": "kubelet", "host": "node-1"},
        "deprecatedFirstTimestamp": "2025-01-01T00:00:00Z", "deprecatedLastTimestamp": "2025-01-01T00:01:00Z",
        "deprecatedCount": 2,
    }
    # A write through events.k8s.io of what it read changes nothing in the store.
    rv = seen["metadata"]["resourceVersion"]
    assert rig.api.update(rig.v1, "default", "old", seen).obj["metadata"]["resourceVersion"] == rv


def test_field_selectors_name_each_apis_own_fields() -> None:
    rig = Rig()
    rig.record(1)
    rig.api.create(rig.core, "default", legacy_event())

    def names(rt, selector: str) -> list[str]:
        return [e["metadata"]["name"] for e in rig.api.list(rt, "default", ListOptions(field_selector=selector))["items"]]

    assert names(rig.v1, "regarding.name=web") == [name_at(1)]
    assert names(rig.core, "involvedObject.name=web") == [name_at(1)]
    assert names(rig.v1, "reportingController=default-scheduler") == [name_at(1)]
    assert names(rig.core, "source=default-scheduler") == [name_at(1)]  # source.component, else the controller
    assert names(rig.v1, "regarding.kind=Node") == ["old"]


def test_events_k8s_io_writes_get_the_strict_rules_named_after_core_fields() -> None:
    rig = Rig()
    body = {"metadata": {"name": "bad", "namespace": "default"}, "regarding": {"kind": "Pod", "name": "web"},
            "reason": "R", "note": "n" * 1025, "type": "Odd", "deprecatedCount": 3,
            "deprecatedSource": {"component": "me"}}
    with pytest.raises(ApiError) as info:
        rig.api.create(rig.v1, "default", body)
    assert info.value.code == 422
    assert info.value.message == (
        # A core Event underneath (the shared storage's strategy names the kind): no group (kube-apiserver 1.36).
        'Event "bad" is invalid: [eventTime: Required value, type: Invalid value: "": has invalid value: '
        'Odd, count: Invalid value: "": needs to be unset, source: Invalid value: "": needs to be unset]')
    written = rig.record(1)
    changed = dict(written, note="rewritten", series={"count": 1, "lastObservedTime": "2025-01-01T00:00:02.000000Z"})
    with pytest.raises(ApiError) as info:
        rig.api.update(rig.v1, "default", written["metadata"]["name"], changed)
    assert [(c["field"], c["message"]) for c in info.value.details["causes"]] == [
        ("series.count", 'Invalid value: "": should be at least 2'),
        ("message", 'Invalid value: "rewritten": field is immutable'),
    ]
