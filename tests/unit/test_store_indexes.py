"""Store indexes (client-go's Indexer): named functions, kept by every write."""

import pytest

from fakekube.store import Store

PODS = ("", "pods")
NODES = ("", "nodes")


def pod(namespace: str, name: str, labels: dict | None = None, owners: tuple[str, ...] = ()) -> dict:
    return {"metadata": {"namespace": namespace, "name": name, "labels": labels or {},
                         "ownerReferences": [{"uid": uid} for uid in owners]}}


def names(objects: list[dict]) -> list[str]:
    return [f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in objects]


def by_label(obj: dict) -> list[str]:
    return [f"{k}={v}" for k, v in obj["metadata"].get("labels", {}).items()]


def by_owner(obj: dict) -> list[str]:
    return [ref["uid"] for ref in obj["metadata"].get("ownerReferences", [])]


def test_a_multi_valued_index_files_an_object_under_every_value() -> None:
    store = Store()
    store.add_index(PODS, "labels", by_label)
    store.create(PODS, pod("ns", "a", {"app": "web", "tier": "front"}))
    store.create(PODS, pod("ns", "b", {"app": "web"}))
    store.create(PODS, pod("ns", "c", {"app": "db"}))
    assert names(store.by_index(PODS, "labels", "app=web")) == ["ns/a", "ns/b"]
    assert names(store.by_index(PODS, "labels", "tier=front")) == ["ns/a"]
    assert store.index_values(PODS, "labels") == ["app=db", "app=web", "tier=front"]
    assert store.by_index(PODS, "labels", "app=none") == []


def test_an_update_moves_an_object_between_values() -> None:
    store = Store()
    store.add_index(PODS, "owners", by_owner)
    created = store.create(PODS, pod("ns", "a", owners=("rs-1", "rs-2")))
    store.replace(PODS, dict(created, metadata=dict(created["metadata"], ownerReferences=[{"uid": "rs-2"},
                                                                                            {"uid": "rs-3"}])))
    assert store.by_index(PODS, "owners", "rs-1") == []
    assert names(store.by_index(PODS, "owners", "rs-2")) == ["ns/a"]
    assert names(store.by_index(PODS, "owners", "rs-3")) == ["ns/a"]
    assert store.index_values(PODS, "owners") == ["rs-2", "rs-3"]


def test_a_delete_drops_the_object_and_its_empty_values() -> None:
    store = Store()
    store.add_index(PODS, "labels", by_label)
    store.create(PODS, pod("ns", "a", {"app": "web"}))
    store.create(PODS, pod("ns", "b", {"app": "web", "only": "b"}))
    store.remove(PODS, ("ns", "b"))
    assert names(store.by_index(PODS, "labels", "app=web")) == ["ns/a"]
    assert store.index_values(PODS, "labels") == ["app=web"]


def test_an_index_registered_late_covers_the_objects_already_stored() -> None:
    store = Store()
    store.create(PODS, pod("ns", "a", {"app": "web"}))
    store.create(PODS, pod("ns", "b", {"app": "db"}))
    store.add_index(PODS, "labels", by_label)
    assert names(store.by_index(PODS, "labels", "app=web")) == ["ns/a"]
    store.create(PODS, pod("ns", "c", {"app": "web"}))
    assert names(store.by_index(PODS, "labels", "app=web")) == ["ns/a", "ns/c"]


def test_results_follow_list_order() -> None:
    store = Store()
    store.add_index(PODS, "labels", by_label)
    for namespace, name in [("b", "z"), ("a", "x"), ("a-b", "y"), ("a", "c")]:
        store.create(PODS, pod(namespace, name, {"app": "web"}))
    assert names(store.by_index(PODS, "labels", "app=web")) == names(store.list(PODS)[0])
    assert names(store.by_index(PODS, "labels", "app=web")) == ["a-b/y", "a/c", "a/x", "b/z"]


def test_registering_is_idempotent_but_a_name_keeps_its_function() -> None:
    store = Store()
    store.add_index(PODS, "labels", by_label)
    store.add_index(PODS, "labels", by_label)
    with pytest.raises(ValueError, match="labels"):
        store.add_index(PODS, "labels", by_owner)
    with pytest.raises(KeyError):
        store.by_index(PODS, "nope", "x")


def test_indexes_belong_to_one_resource() -> None:
    store = Store()
    calls: list[str] = []

    def counting(obj: dict) -> list[str]:
        calls.append(obj["metadata"]["name"])
        return by_label(obj)

    store.add_index(PODS, "labels", counting)
    store.create(NODES, {"metadata": {"name": "node-1", "labels": {"app": "web"}}})
    assert calls == []
    with pytest.raises(KeyError):
        store.by_index(NODES, "labels", "app=web")
    assert store.by_index(PODS, "labels", "app=web") == []


def test_empty_values_are_not_filed() -> None:
    store = Store()
    store.add_index(PODS, "owners", by_owner)
    store.create(PODS, pod("ns", "a", owners=("",)))
    assert store.index_values(PODS, "owners") == []


def test_a_failing_index_function_leaves_the_store_unchanged() -> None:
    store = Store()

    def picky(obj: dict) -> list[str]:
        if obj["metadata"]["name"] == "bad":
            raise RuntimeError("picky")
        return by_label(obj)

    store.add_index(PODS, "labels", picky)
    store.create(PODS, pod("ns", "good", {"app": "web"}))
    with pytest.raises(RuntimeError):
        store.create(PODS, pod("ns", "bad", {"app": "web"}))
    assert store.resource_version == 1
    assert names(store.list(PODS)[0]) == ["ns/good"]
    assert len(store.changes_since(0)) == 1
    assert store.create(PODS, pod("ns", "next"))["metadata"]["resourceVersion"] == "2"


def test_by_field_is_one_kind_of_index() -> None:
    store = Store()
    store.create(PODS, {"metadata": {"namespace": "ns", "name": "a"}, "spec": {"nodeName": "node-1"}})
    assert names(store.by_field(PODS, ("spec", "nodeName"), "node-1")) == ["ns/a"]
    assert store.index_values(PODS, "field:spec.nodeName") == ["node-1"]
    assert store.field_values(PODS, ("spec", "nodeName")) == ["node-1"]  # registered once, reused


def test_a_write_sharing_the_part_an_index_reads_skips_its_function() -> None:
    calls: list[str] = []

    def counting(obj: dict) -> list[str]:
        calls.append(obj["metadata"]["name"])
        return by_owner(obj)

    store = Store()
    store.add_index(PODS, "owner", counting, reads=lambda o: o["metadata"].get("ownerReferences"))
    stored = store.create(PODS, pod("ns", "a", owners=("u1",)))
    calls.clear()
    store.replace(PODS, dict(stored, spec={"renewed": True}))  # same ownerReferences list: skipped
    assert calls == []
    store.replace(PODS, dict(stored, metadata=dict(stored["metadata"], ownerReferences=[{"uid": "u2"}])))
    assert calls == ["a", "a"]
    assert names(store.by_index(PODS, "owner", "u2")) == ["ns/a"] and store.by_index(PODS, "owner", "u1") == []
