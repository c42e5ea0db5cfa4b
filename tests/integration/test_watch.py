"""Watch semantics as a client sees them on the wire."""

from __future__ import annotations

import json
import threading

import pytest

from tests.integration.watchclient import WatchStream, summary

CM_PATH = "/api/v1/namespaces/default/configmaps"


def cm(name: str, labels: dict | None = None) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels or {}}}


def test_watch_without_version_lists_existing_objects_first(fakekube) -> None:
    fakekube.create(cm("before"))
    with WatchStream(fakekube.url, f"{CM_PATH}?watch=true&timeoutSeconds=5") as stream:
        first, root_ca = stream.next_event(), stream.next_event()  # the namespace's kube-root-ca.crt is there too
        fakekube.create(cm("after"))
        second = stream.next_event()
    assert summary([first, root_ca, second]) == [("ADDED", "before"), ("ADDED", "kube-root-ca.crt"),
                                                 ("ADDED", "after")]
    assert first["object"]["kind"] == "ConfigMap" and first["object"]["apiVersion"] == "v1"


def test_watch_resumes_after_a_resource_version(fakekube) -> None:
    a = fakekube.create(cm("a"))
    fakekube.create(cm("b"))
    rv = a["metadata"]["resourceVersion"]
    with WatchStream(fakekube.url, f"{CM_PATH}?watch=true&resourceVersion={rv}&timeoutSeconds=5") as stream:
        assert summary(stream.events(1)) == [("ADDED", "b")]


def test_selector_transitions_arrive_as_added_and_deleted(fakekube) -> None:
    fakekube.create(cm("x", {"team": "a"}))
    start = fakekube.store.resource_version
    api = fakekube.api
    rt = fakekube.resource("v1", "ConfigMap")
    with WatchStream(fakekube.url, f"{CM_PATH}?watch=true&labelSelector=team%3Db&resourceVersion={start}"
                                   f"&timeoutSeconds=5") as stream:
        api.patch(rt, "default", "x", "application/merge-patch+json", b'{"metadata":{"labels":{"team":"b"}}}')
        api.patch(rt, "default", "x", "application/merge-patch+json", b'{"data":{"k":"v"}}')
        left = api.patch(rt, "default", "x", "application/merge-patch+json", b'{"metadata":{"labels":{"team":"c"}}}')
        events = stream.events(3)
    assert summary(events) == [("ADDED", "x"), ("MODIFIED", "x"), ("DELETED", "x")]
    # the cacher's DELETED for an object leaving the selection: as it last matched, at the new version
    assert events[2]["object"]["metadata"]["labels"] == {"team": "b"}
    assert events[2]["object"]["data"] == {"k": "v"}
    assert events[2]["object"]["metadata"]["resourceVersion"] == left.obj["metadata"]["resourceVersion"]


TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


def test_table_watch_sends_one_row_tables_and_headers_once(fakekube) -> None:
    """What ``kubectl get -w`` asks for: each event's object is a one-row Table."""
    fakekube.create(cm("a"))
    with WatchStream(fakekube.url, f"{CM_PATH}?watch=true&timeoutSeconds=5", accept=TABLE) as stream:
        first, root_ca = stream.next_event(), stream.next_event()  # the namespace's kube-root-ca.crt is there too
        fakekube.create(cm("b"))
        second = stream.next_event()
    tables = [first["object"], root_ca["object"], second["object"]]
    assert [(t["kind"], t["apiVersion"]) for t in tables] == [("Table", "meta.k8s.io/v1")] * 3
    assert [c["name"] for c in tables[0]["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert tables[1]["columnDefinitions"] is None and tables[2]["columnDefinitions"] is None
    assert [t["rows"][0]["cells"][0] for t in tables] == ["a", "kube-root-ca.crt", "b"]
    assert tables[2]["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    assert tables[2]["metadata"]["resourceVersion"] == fakekube.get("v1", "ConfigMap", "b")["metadata"]["resourceVersion"]


def test_metadata_watch_sends_partial_object_metadata(fakekube) -> None:
    fakekube.create(cm("a", {"team": "x"}))
    accept = "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io,application/json"
    with WatchStream(fakekube.url, f"{CM_PATH}?watch=true&timeoutSeconds=5", accept=accept) as stream:
        event = stream.next_event()
    assert event["object"]["kind"] == "PartialObjectMetadata"
    assert event["object"]["metadata"]["labels"] == {"team": "x"} and "data" not in event["object"]


def test_watch_ends_at_timeout_seconds(fakekube) -> None:
    with WatchStream(fakekube.url, f"{CM_PATH}?watch=true&resourceVersion={fakekube.store.resource_version}"
                                   f"&timeoutSeconds=1") as stream:
        assert stream.next_event() is None  # the server closed the stream cleanly


@pytest.mark.fakekube(history_limit=5)
def test_watch_from_before_the_history_gets_410_expired(fakekube) -> None:
    for i in range(12):
        fakekube.create(cm(f"n{i}"))
    with WatchStream(fakekube.url, f"{CM_PATH}?watch=true&resourceVersion=2") as stream:
        assert stream.status == 200
        event = stream.next_event()
        assert stream.next_event() is None
    assert event["type"] == "ERROR"
    assert event["object"]["code"] == 410 and event["object"]["reason"] == "Expired"
    assert event["object"]["message"].startswith("too old resource version: 2 (")


def test_send_initial_events_ends_with_a_bookmark(fakekube) -> None:
    fakekube.create(cm("one"))
    fakekube.create(cm("two"))
    path = (f"{CM_PATH}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true"
            f"&resourceVersionMatch=NotOlderThan&timeoutSeconds=5")
    with WatchStream(fakekube.url, path) as stream:
        events = stream.events(4)  # one, two and the namespace's kube-root-ca.crt
    assert [e["type"] for e in events] == ["ADDED", "ADDED", "ADDED", "BOOKMARK"]
    bookmark = events[3]["object"]
    assert bookmark["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert bookmark["metadata"]["resourceVersion"] == str(fakekube.store.resource_version)


def test_send_initial_events_without_bookmarks_sends_no_end_bookmark(fakekube) -> None:
    """1.34+ (WatchList on): a watch-list without bookmarks is served; its initial events
    end with no bookmark (the cacher sends that one only to a client that allows bookmarks)."""
    fakekube.create(cm("one"))
    path = f"{CM_PATH}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1"
    with WatchStream(fakekube.url, path) as stream:
        assert stream.status == 200
        events = stream.events(2)
        fakekube.create(cm("two"))
        events += stream.events(1)
    assert sorted(summary(events[:2])) == [("ADDED", "kube-root-ca.crt"), ("ADDED", "one")]
    assert summary(events[2:]) == [("ADDED", "two")]  # no BOOKMARK before it


@pytest.mark.fakekube(kubernetes_version="1.33")
def test_send_initial_events_is_refused_in_1_33(fakekube) -> None:
    """1.33 turned the WatchList gate off: sendInitialEvents is a 422 on its own field."""
    path = f"{CM_PATH}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
    with WatchStream(fakekube.url, path) as stream:
        assert stream.status == 422
        body = json.loads(stream.response.read())
    assert body["details"]["causes"] == [{"reason": "FieldValueForbidden", "field": "sendInitialEvents", "message":
                                          "Forbidden: sendInitialEvents is forbidden for watch unless the WatchList "
                                          "feature gate is enabled"}]


def test_send_initial_events_requires_not_older_than(fakekube) -> None:
    with WatchStream(fakekube.url, f"{CM_PATH}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true") as stream:
        assert stream.status == 422


def test_field_selector_on_a_single_object(fakekube) -> None:
    start = fakekube.store.resource_version
    with WatchStream(fakekube.url, f"{CM_PATH}?watch=true&fieldSelector=metadata.name%3Dme"
                                   f"&resourceVersion={start}&timeoutSeconds=5") as stream:
        fakekube.create(cm("other"))
        fakekube.create(cm("me"))
        assert summary(stream.events(1)) == [("ADDED", "me")]


def test_many_watchers_see_the_same_ordered_events(fakekube) -> None:
    start = fakekube.store.resource_version
    streams = [WatchStream(fakekube.url, f"{CM_PATH}?watch=true&resourceVersion={start}&timeoutSeconds=10")
               for _ in range(8)]
    for i in range(20):
        fakekube.create(cm(f"c{i:02d}"))
    results = [summary(s.events(20)) for s in streams]
    for s in streams:
        s.close()
    expected = [("ADDED", f"c{i:02d}") for i in range(20)]
    assert all(r == expected for r in results)


def test_a_stalled_watcher_does_not_block_writers(fakekube) -> None:
    start = fakekube.store.resource_version
    stalled = WatchStream(fakekube.url, f"{CM_PATH}?watch=true&resourceVersion={start}&timeoutSeconds=10")
    done = threading.Event()

    def write() -> None:
        for i in range(300):
            fakekube.create({**cm(f"big{i}"), "data": {"blob": "x" * 2000}})
        done.set()

    writer = threading.Thread(target=write)
    writer.start()
    writer.join(timeout=30)
    try:
        assert done.is_set(), "writes stalled behind a watcher that is not reading"
        assert len(stalled.events(300)) == 300  # and the stalled watcher still gets everything
    finally:
        stalled.close()


def test_reset_ends_open_watches(fakekube) -> None:
    with WatchStream(fakekube.url, f"{CM_PATH}?watch=true&resourceVersion={fakekube.store.resource_version}"
                                   f"&timeoutSeconds=10") as stream:
        fakekube.reset()
        assert stream.next_event() is None
