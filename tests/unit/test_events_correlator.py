"""Event recording follows client-go's recorder and EventCorrelator (tools/record/events_cache.go)."""

from __future__ import annotations

import weakref
from datetime import datetime, timedelta

import pytest

from fakekube.api.verbs.apiserver import APIServer
from fakekube.engine.events import (
    COMBINED_PREFIX,
    LRU,
    EventRecorder,
    EventSource,
    list_events,
    object_reference,
)
from fakekube.api.types import builtin_registry
from fakekube.clock import DEFAULT_EPOCH, VirtualClock
from fakekube.random import SeededRandom
from fakekube.store import Store

KUBELET = EventSource("kubelet", "node-1")
POD = {"metadata": {"name": "web", "namespace": "default", "uid": "u-1", "resourceVersion": "7"}}


def make_api() -> APIServer:
    """A bare apiserver with the namespaces the events go to."""
    api = APIServer(builtin_registry(), Store(), VirtualClock(), SeededRandom(0))
    namespaces = api.registry.lookup("", "v1", "namespaces")
    for name in ("default", "other"):
        api.create(namespaces, "", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return api


_RECORDERS: "weakref.WeakKeyDictionary[APIServer, EventRecorder]" = weakref.WeakKeyDictionary()


def recorder_for(api: APIServer) -> EventRecorder:
    """One recorder per test apiserver (in a cluster, the engine owns it). Weakly keyed: an
    id() could be reused by the next apiserver and hand it a dead one's correlators."""
    return _RECORDERS.setdefault(api, EventRecorder())


def record(api: APIServer, now: datetime, involved: dict, event_type: str, reason: str, message: str,
           source: EventSource) -> dict | None:
    return recorder_for(api).record(api, now, involved, event_type, reason, message, source)


def at(seconds: float) -> datetime:
    return DEFAULT_EPOCH + timedelta(seconds=seconds)


def ref(field_path: str = "spec.containers{c}") -> dict:
    return object_reference(POD, "Pod", field_path=field_path, resource_version=True)


def events(api: APIServer) -> list[dict]:
    return list_events(api)


def test_a_new_event_is_filled_as_make_event_fills_it() -> None:
    api = make_api()
    stored = record(api, at(1.5), ref(), "Normal", "Pulling", 'Pulling image "nginx"', KUBELET)
    assert stored is not None
    assert stored["metadata"]["name"] == f"web.{(int(at(1.5).timestamp()) * 10**9 + 500_000_000):x}"
    assert stored["involvedObject"] == {"kind": "Pod", "namespace": "default", "name": "web", "uid": "u-1",
                                        "apiVersion": "v1", "resourceVersion": "7", "fieldPath": "spec.containers{c}"}
    assert stored["source"] == {"component": "kubelet", "host": "node-1"}
    assert (stored["reportingComponent"], stored["reportingInstance"]) == ("kubelet", "node-1")
    assert (stored["count"], stored["firstTimestamp"], stored["lastTimestamp"]) == (1, "2025-01-01T00:00:01Z",
                                                                                   "2025-01-01T00:00:01Z")
    assert stored["eventTime"] is None and stored["type"] == "Normal"


def test_a_repeat_updates_the_first_event_with_no_time_window() -> None:
    api = make_api()
    first = record(api, at(0), ref(), "Warning", "BackOff", "Back-off", KUBELET)
    record(api, at(3600), ref(), "Warning", "BackOff", "Back-off", KUBELET)
    again = record(api, at(7200), ref(), "Warning", "BackOff", "Back-off", KUBELET)
    assert again is not None and first is not None
    assert again["metadata"]["name"] == first["metadata"]["name"]
    assert (again["count"], again["firstTimestamp"], again["lastTimestamp"]) == (3, "2025-01-01T00:00:00Z",
                                                                                "2025-01-01T02:00:00Z")
    assert len(events(api)) == 1


def test_anything_in_the_key_that_differs_makes_a_new_event() -> None:
    api = make_api()
    record(api, at(0), ref(), "Normal", "Created", "Created container: c", KUBELET)
    record(api, at(0), ref("spec.containers{d}"), "Normal", "Created", "Created container: c", KUBELET)
    record(api, at(0), ref(), "Normal", "Created", "Created container: c", EventSource("kubelet", "node-2"))
    record(api, at(0), ref(), "Warning", "Created", "Created container: c", KUBELET)
    assert [e["count"] for e in events(api)] == [1, 1, 1, 1]


def test_names_taken_at_one_instant_use_the_next_nanoseconds() -> None:
    api = make_api()
    names = [record(api, at(1), ref(), "Normal", reason, reason, KUBELET)["metadata"]["name"]  # type: ignore[index]
             for reason in ("Pulling", "Pulled", "Created")]
    base = int(at(1).timestamp()) * 10**9
    assert names == [f"web.{base:x}", f"web.{base + 1:x}", f"web.{base + 2:x}"]


def test_ten_messages_of_one_reason_within_ten_minutes_are_combined() -> None:
    api = make_api()
    for index in range(9):
        record(api, at(index), ref(), "Warning", "Unhealthy", f"probe failed: {index}", KUBELET)
    combined = record(api, at(9), ref(), "Warning", "Unhealthy", "probe failed: 9", KUBELET)
    assert combined is not None
    assert combined["message"] == COMBINED_PREFIX + "probe failed: 9"
    assert (combined["count"], combined["reportingComponent"], combined["reportingInstance"]) == (1, "", "")
    later = record(api, at(10), ref(), "Warning", "Unhealthy", "probe failed: 10", KUBELET)
    assert later is not None and later["metadata"]["name"] == combined["metadata"]["name"]
    assert (later["count"], later["message"]) == (2, COMBINED_PREFIX + "probe failed: 10")
    assert len(events(api)) == 10


def test_aggregation_starts_over_after_ten_quiet_minutes() -> None:
    api = make_api()
    for index in range(9):
        record(api, at(index), ref(), "Warning", "Unhealthy", f"m{index}", KUBELET)
    fresh = record(api, at(8 + 601), ref(), "Warning", "Unhealthy", "m9", KUBELET)
    assert fresh is not None and fresh["message"] == "m9"


def test_the_spam_filter_drops_past_25_but_keeps_counting() -> None:
    api = make_api()
    for index in range(30):
        record(api, at(index), ref(), "Warning", "BackOff", "Back-off", KUBELET)
    stored = events(api)
    assert [(e["count"], e["lastTimestamp"]) for e in stored] == [(25, "2025-01-01T00:00:24Z")]
    # 25 tokens spent by t=24, refilled at 1 per 300 s: 0.08 left then, 1 again at t≈300.
    assert record(api, at(299), ref(), "Warning", "BackOff", "Back-off", KUBELET) is None
    refilled = record(api, at(301), ref(), "Warning", "BackOff", "Back-off", KUBELET)
    assert refilled is not None and (refilled["count"], refilled["lastTimestamp"]) == (32, "2025-01-01T00:05:01Z")


def test_a_repeat_of_a_deleted_event_creates_it_again_with_its_count() -> None:
    api = make_api()
    first = record(api, at(0), ref(), "Normal", "Killing", "Stopping container c", KUBELET)
    assert first is not None
    api.store.remove(("", "events"), ("default", first["metadata"]["name"]))
    again = record(api, at(5), ref(), "Normal", "Killing", "Stopping container c", KUBELET)
    assert again is not None and (again["metadata"]["name"], again["count"]) == (first["metadata"]["name"], 2)


def test_caches_are_bounded_lrus() -> None:
    cache: LRU[str, int] = LRU(2)
    cache.add("a", 1)
    cache.add("b", 2)
    assert cache.get("a") == 1  # "a" is now the most recently used
    cache.add("c", 3)
    assert (cache.get("a"), cache.get("b"), cache.get("c"), len(cache)) == (1, None, 3, 2)


def test_the_least_recently_used_source_is_forgotten_past_the_bound() -> None:
    api = make_api()
    recorder = EventRecorder(max_sources=2)
    for host in ("node-1", "node-2", "node-3"):
        recorder.record(api, at(0), ref(), "Normal", "Started", "Started container c", EventSource("kubelet", host))
    assert len(recorder) == 2
    again = recorder.record(api, at(1), ref(), "Normal", "Started", "Started container c", KUBELET)
    assert again is not None and again["count"] == 1  # node-1's memory was dropped: a new Event


def test_each_apiserver_has_its_own_recorder() -> None:
    first, second = make_api(), make_api()
    assert recorder_for(first) is recorder_for(first)
    assert recorder_for(first) is not recorder_for(second)


@pytest.mark.parametrize("namespace,name,reason,expected", [
    (None, None, None, ["a1", "b1", "a2"]),
    ("other", None, None, ["b1"]),
    (None, "a", None, ["a1", "a2"]),
    (None, None, "R2", ["a2"]),
])
def test_list_events_filters_and_keeps_write_order(namespace: str | None, name: str | None, reason: str | None,
                                                   expected: list[str]) -> None:
    api = make_api()
    for pod, ns, why, message in (("a", "default", "R1", "a1"), ("b", "other", "R1", "b1"),
                                  ("a", "default", "R2", "a2")):
        obj = {"metadata": {"name": pod, "namespace": ns, "uid": pod}}
        record(api, at(0), object_reference(obj, "Pod"), "Normal", why, message, KUBELET)
    assert [e["message"] for e in list_events(api, namespace, name, reason)] == expected
