"""The change log is bounded in bytes as well as in entries.

Past its byte budget the oldest changes drop, exactly as past its entry limit: a watch
or an exact-version list from before them gets TooOldResourceVersion (410 Expired at
the REST layer). Sizes are the objects' serialized sizes.
"""

from __future__ import annotations

import pytest

from fakekube.store import Store
from fakekube.store.history import ADDED, DEFAULT_HISTORY_BYTES, MODIFIED, Change, History, change_bytes
from fakekube.store.memory import TooOldResourceVersion

CM = ("", "configmaps")


def configmap(name: str, payload: str) -> dict:
    return {"metadata": {"name": name, "namespace": "default"}, "data": {"a": payload}}


def change(rv: int, payload: str) -> Change:
    obj = configmap("big", payload)
    return Change(rv, MODIFIED if rv > 1 else ADDED, "", "configmaps", "default", "big", obj, None)


def test_the_default_byte_budget_is_documented() -> None:
    assert DEFAULT_HISTORY_BYTES == 128 * 1024 * 1024
    assert History().max_bytes == DEFAULT_HISTORY_BYTES


def test_change_bytes_is_about_the_serialized_size() -> None:
    size = change_bytes(change(1, "x" * 10_000))
    assert 10_000 <= size <= 10_200


def test_past_the_byte_budget_the_oldest_changes_drop() -> None:
    history = History(limit=1_000, max_bytes=50_000)
    for rv in range(1, 101):
        history.append(change(rv, "x" * 10_000))
    assert len(history) <= 5
    assert history.held_bytes <= 50_000
    assert history.covers(99) and not history.covers(90)
    assert [c.rv for c in history.since(history.horizon_rv())][-1] == 100


def test_a_change_bigger_than_the_whole_budget_is_still_kept() -> None:
    """The newest change always stays, so a watch from just before it can resume."""
    history = History(limit=1_000, max_bytes=1_000)
    history.append(change(1, "small"))
    history.append(change(2, "x" * 5_000))
    assert history.covers(1) and not history.covers(0)
    assert [c.rv for c in history.since(1)] == [2]


def test_the_entry_limit_still_applies() -> None:
    history = History(limit=10, max_bytes=10**9)
    for rv in range(1, 101):
        history.append(change(rv, "x"))
    assert len(history) == 10 and history.covers(90) and not history.covers(89)


def test_a_watch_from_before_the_byte_budget_is_too_old() -> None:
    store = Store(history_limit=10_000, history_max_bytes=200_000)
    first = store.create(CM, configmap("big", "x" * 100_000))
    old_rv = int(first["metadata"]["resourceVersion"])
    for i in range(10):
        store.replace(CM, configmap("big", str(i) * 100_000))
    with pytest.raises(TooOldResourceVersion):
        store.changes_since(old_rv)
    assert store.changes_since(store.resource_version - 1)[0].obj["data"]["a"].startswith("9")
    assert store.history.held_bytes <= 200_000


def test_frozen_objects_are_measured_too() -> None:
    """Under the immutability guard stored objects are frozen subclasses; they still count."""
    store = Store(history_limit=10_000, history_max_bytes=200_000, guard=True)
    store.create(CM, configmap("big", "x" * 100_000))
    for i in range(10):
        store.replace(CM, configmap("big", str(i) * 100_000))
    assert 0 < store.history.held_bytes <= 200_000


def test_a_same_size_write_is_counted_at_the_previous_versions_size_and_deletion_forgets_it() -> None:
    from fakekube.store import Store

    store = Store(100)
    small = {"metadata": {"name": "a", "namespace": "n"}, "data": {"k": "v"}}
    store.create(("", "configmaps"), small)
    first = store.history._sizes[-1]
    store.replace(("", "configmaps"), dict(small, data={"k": "w"}), same_size=True)
    assert store.history._sizes[-1] == first  # reused, not measured
    store.replace(("", "configmaps"), dict(small, data={"k": "x" * 10_000}))
    assert store.history._sizes[-1] > first + 9_000  # measured
    store.remove(("", "configmaps"), ("n", "a"))
    assert ("n", "a") not in store.history.object_sizes(("", "configmaps"))
