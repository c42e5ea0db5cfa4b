"""The store: resourceVersions, key order, snapshots and the bounded history."""

import random

import pytest

from fakekube.store import ADDED, DELETED, MODIFIED, Store, TooOldResourceVersion
from fakekube.store.memory import sort_key

PODS = ("", "pods")


def pod(namespace: str, name: str, **extra: object) -> dict:
    return {"metadata": {"namespace": namespace, "name": name}, **extra}


def names(objects: list[dict]) -> list[str]:
    return [f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in objects]


def test_every_write_gets_the_next_resource_version() -> None:
    store = Store()
    a = store.create(PODS, pod("ns", "a"))
    b = store.replace(PODS, dict(a, spec={"x": 1}))
    gone = store.remove(PODS, ("ns", "a"))
    assert [a["metadata"]["resourceVersion"], b["metadata"]["resourceVersion"],
            gone["metadata"]["resourceVersion"]] == ["1", "2", "3"]
    assert store.resource_version == 3


def test_lists_follow_etcd_key_order_not_insertion_order() -> None:
    store = Store()
    for namespace, name in [("a", "x"), ("a-b", "y"), ("b", "z"), ("a", "c")]:
        store.create(PODS, pod(namespace, name))
    objects, rv = store.list(PODS)
    # etcd sorts "a-b/y" before "a/c" because "-" < "/".
    assert names(objects) == ["a-b/y", "a/c", "a/x", "b/z"]
    assert rv == 4
    assert names(store.list(PODS, "a")[0]) == ["a/c", "a/x"]


def test_list_at_rolls_back_to_an_exact_snapshot() -> None:
    store = Store()
    store.create(PODS, pod("ns", "a"))
    second = store.create(PODS, pod("ns", "b"))
    store.replace(PODS, dict(second, spec={"changed": True}))
    store.remove(PODS, ("ns", "a"))
    store.create(PODS, pod("ns", "c"))
    snapshot = store.list_at(PODS, "", 2)
    assert names(snapshot) == ["ns/a", "ns/b"]
    assert "spec" not in snapshot[1]


def test_history_is_bounded_and_old_versions_become_too_old() -> None:
    store = Store(history_limit=3)
    for i in range(10):
        store.create(PODS, pod("ns", f"p{i}"))
    assert store.changes_since(7)[0].rv == 8
    with pytest.raises(TooOldResourceVersion):
        store.changes_since(6)
    with pytest.raises(TooOldResourceVersion):
        store.list_at(PODS, "", 2)


def test_changes_record_type_and_previous_state() -> None:
    store = Store()
    created = store.create(PODS, pod("ns", "a"))
    store.replace(PODS, dict(created, spec={"v": 2}))
    store.remove(PODS, ("ns", "a"))
    changes = store.changes_since(0)
    assert [c.type for c in changes] == [ADDED, MODIFIED, DELETED]
    assert changes[1].prev == created
    assert changes[2].obj["metadata"]["resourceVersion"] == "3"


def test_stored_objects_are_not_the_callers_dicts() -> None:
    store = Store()
    original = pod("ns", "a")
    stored = store.create(PODS, original)
    assert "resourceVersion" not in original["metadata"]
    assert stored is not original


def bound_pod(name: str, node: str | None, namespace: str = "default") -> dict:
    spec = {"nodeName": node} if node is not None else {}
    return {"metadata": {"name": name, "namespace": namespace}, "spec": spec}


def test_field_index_follows_every_write_and_lists_in_key_order() -> None:
    store = Store()
    store.create(PODS, bound_pod("b", "node-1"))
    store.create(PODS, bound_pod("a", "node-1", namespace="kube-system"))
    store.create(PODS, bound_pod("c", "node-2"))
    store.create(PODS, bound_pod("unbound", None))
    assert names(store.by_field(PODS, ("spec", "nodeName"), "node-1")) == ["default/b", "kube-system/a"]
    store.create(PODS, bound_pod("a", "node-1"))  # after the index exists: kept by the write
    store.replace(PODS, bound_pod("unbound", "node-2"))
    store.remove(PODS, ("default", "c"))
    assert names(store.by_field(PODS, ("spec", "nodeName"), "node-1")) == ["default/a", "default/b", "kube-system/a"]
    assert names(store.by_field(PODS, ("spec", "nodeName"), "node-2")) == ["default/unbound"]
    assert store.field_values(PODS, ("spec", "nodeName")) == ["node-1", "node-2"]
    store.remove(PODS, ("default", "unbound"))
    assert store.field_values(PODS, ("spec", "nodeName")) == ["node-1"]
    assert store.by_field(PODS, ("spec", "nodeName"), "node-9") == []


def test_field_index_ignores_absent_empty_and_non_string_values() -> None:
    store = Store()
    store.create(PODS, {"metadata": {"name": "x", "namespace": "d"}, "spec": {"nodeName": ""}})
    store.create(PODS, {"metadata": {"name": "y", "namespace": "d"}, "spec": {"nodeName": 7}})
    store.create(PODS, {"metadata": {"name": "z", "namespace": "d"}, "spec": "not a map"})
    assert store.field_values(PODS, ("spec", "nodeName")) == []


def test_lists_stay_exact_across_writes_between_them() -> None:
    """Lists are cut from an ordered copy the writes keep: after every write, a list of the
    resource and of each namespace holds exactly the current versions, in key order."""
    import random

    store = Store()
    rng = random.Random(7)
    current: dict[tuple[str, str], dict] = {}
    for step in range(600):
        key = (rng.choice(["a", "a-b", "b", "c"]), f"p{rng.randrange(40)}")
        if key in current and rng.random() < 0.3:
            store.remove(PODS, key)
            del current[key]
        elif key in current:
            current[key] = store.replace(PODS, dict(current[key], spec={"step": step}))
        else:
            current[key] = store.create(PODS, pod(*key))
        if step % 7 == 0:
            objects, _ = store.list(PODS)
            expected = [current[k] for k in sorted(current, key=lambda k: f"{k[0]}/{k[1]}")]
            assert all(a is b for a, b in zip(objects, expected)) and len(objects) == len(expected)
            namespace = rng.choice(["a", "a-b", "b", "c"])
            assert store.list(PODS, namespace)[0] == [o for o in expected if o["metadata"]["namespace"] == namespace]
            objects.clear()  # a caller's list is its own


def test_a_range_at_a_past_version_is_that_snapshot_cut_at_its_start() -> None:
    """Seeded writes (creates, updates, deletes, re-creates in three namespaces and another
    resource); every range read at an earlier version equals the brute-force snapshot taken
    then, cut from its start key, with etcd's count of the keys after it."""
    rng = random.Random(7)
    store = Store()
    snapshots: dict[int, dict[tuple[str, str], dict]] = {0: {}}
    live: dict[tuple[str, str], dict] = {}
    for step in range(600):
        key = (rng.choice(["a", "a-b", "b"]), f"p{rng.randrange(40):02d}")
        if key in live and rng.random() < 0.4:
            store.remove(PODS, key)
            del live[key]
        elif key in live:
            live[key] = store.replace(PODS, dict(live[key], spec={"step": step}))
        else:
            live[key] = store.create(PODS, pod(*key, spec={"step": step}))
        store.create(("", "configmaps"), pod("a", f"cm{step}"))  # another resource's changes interleave
        if step % 50 == 0:
            snapshots[store.resource_version] = dict(live)
    snapshots[store.resource_version] = dict(live)  # now: no roll-back
    for rv, snapshot in snapshots.items():
        for namespace in ("", "a", "b"):
            expected = [snapshot[k] for k in sorted(snapshot, key=sort_key) if not namespace or k[0] == namespace]
            for start in ("", "a/p10", "a/p10\x00", "a-b/p39\x00", "b/p00", "z"):
                first = next((i for i, o in enumerate(expected) if sort_key(key_of(o)) >= start), len(expected))
                for count in (None, 1, 7, 1000):
                    run = store.range_at(PODS, namespace, start, count, rv)
                    end = len(expected) if count is None else min(len(expected), first + count)
                    assert (run.objects, run.resource_version, run.remaining) == (
                        expected[first:end], rv, len(expected) - end), (rv, namespace, start, count)


def key_of(obj: dict) -> tuple[str, str]:
    return obj["metadata"]["namespace"], obj["metadata"]["name"]
