"""The structural copy behind snapshots (cluster/statecopy.py)."""

from __future__ import annotations

import collections
import random
import threading
from typing import Any, Callable, Iterator

import pytest

from fakekube.cluster.statecopy import StateCopier, copy_state


class Counter:
    def __init__(self) -> None:
        self.count = 0
        self.lock = threading.Lock()

    def bump(self) -> int:
        with self.lock:
            self.count += 1
            return self.count


def test_a_closure_and_a_bound_method_call_into_the_copy_not_the_original() -> None:
    counter = Counter()

    def later() -> int:
        return counter.bump()

    state = {"counter": counter, "timers": [later, counter.bump]}
    copied = copy_state(state)
    copied["timers"][0]()
    copied["timers"][1]()
    assert (counter.count, copied["counter"].count) == (0, 2)
    assert copied["counter"].lock is not counter.lock


def test_shared_objects_are_referred_to_and_everything_else_is_copied_in_order() -> None:
    stored = {"metadata": {"name": "a"}}
    state = {"objects": collections.OrderedDict([("z", stored), ("a", stored)]), "seen": [stored], "n": 1}
    copier = StateCopier()
    copier.share(stored)
    copied = copier.copy(state)
    assert copied["objects"]["z"] is stored and copied["seen"][0] is stored
    assert copied["objects"] is not state["objects"] and list(copied["objects"]) == ["z", "a"]


def test_a_random_stream_continues_where_the_original_was() -> None:
    source = random.Random(42)
    source.random()
    copied = copy_state(source)
    assert [copied.random() for _ in range(3)] == [source.random() for _ in range(3)]


def test_a_closure_over_shared_things_only_is_kept_as_it_is() -> None:
    limit = 5
    check: Callable[[int], bool] = lambda value: value < limit  # noqa: E731
    assert copy_state([check])[0] is check


def test_what_cannot_be_copied_is_refused_naming_where_it_is() -> None:
    def numbers() -> Iterator[int]:
        yield 1

    holder: Any = type("Holder", (), {})()
    holder.pending = numbers()
    with pytest.raises(TypeError, match=r"cannot copy generator at \['parts'\]\.pending: state must be data"):
        copy_state({"parts": holder})


def test_a_condition_keeps_sharing_its_lock_with_whoever_shared_it() -> None:
    lock = threading.RLock()
    holder: Any = type("Holder", (), {})()
    holder.lock, holder.changed = lock, threading.Condition(lock)
    copied = copy_state(holder)
    assert copied.lock is not lock
    assert copied.changed._lock is copied.lock


def test_tuples_and_frozensets_of_shared_things_are_shared_and_the_rest_copied() -> None:
    stored: dict[str, Any] = {"metadata": {"name": "a"}}
    change, keys, mixed = (3, "ADDED", stored), frozenset({("app", "web")}), (1, [2])
    copier = StateCopier([stored])
    copied = copier.copy({"history": [change], "wanted": keys, "mixed": mixed})
    assert copied["history"][0] is change and copied["wanted"] is keys
    assert copied["mixed"] == mixed and copied["mixed"][1] is not mixed[1]


def test_one_frozen_state_thaws_into_independent_copies() -> None:
    state: dict[str, Any] = {"queue": [1, 2], "seen": {"a": 1}}
    frozen = StateCopier().freeze(state)
    first, second = frozen.thaw(), frozen.thaw()
    first["queue"].append(3)
    state["seen"]["b"] = 2
    assert second == {"queue": [1, 2], "seen": {"a": 1}} and first["queue"] == [1, 2, 3]


def test_filesystem_stores_are_copied_packed_and_unpacked_when_used() -> None:
    from fakekube.kubelet.fs import FileSystem, Mount, Stores, new_store
    stores = Stores()
    stores["root/c1"] = new_store()
    FileSystem(stores, (Mount("/", "root/c1"),)).write("/hello", b"hi")
    copied = copy_state(stores)
    assert copied._stores["root/c1"].__class__ is bytes  # packed until used
    view = FileSystem(copied, (Mount("/", "root/c1"),))
    assert view.read("/hello") == b"hi"
    view.write("/hello", b"changed")
    assert FileSystem(stores, (Mount("/", "root/c1"),)).read("/hello") == b"hi"
    assert list(copied) == ["root/c1"] and "root/c1" in copied
