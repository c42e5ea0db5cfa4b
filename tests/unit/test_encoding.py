"""Cached encodings are byte-identical to encoding afresh, and the cache is bounded."""

import json

from fakekube.api.verbs.encoding import EncodedObjects
from fakekube.api.types import builtin_registry

PODS = builtin_registry().lookup("", "v1", "pods")


def pod(name: str, rv: str) -> dict:
    return {"metadata": {"name": name, "namespace": "ns", "resourceVersion": rv},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}, "status": {"phase": "Pending"}}


def compact(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def test_typed_and_bare_match_fresh_encodings() -> None:
    cache = EncodedObjects()
    obj = pod("a", "5")
    assert cache.bare(PODS, obj) == compact(obj)
    assert cache.typed(PODS, obj) == compact({"apiVersion": "v1", "kind": "Pod", **obj})
    typed_input = {"apiVersion": "v1", "kind": "Pod", **obj}
    assert cache.typed(PODS, typed_input) == compact(typed_input)


def test_listing_matches_a_fresh_encoding() -> None:
    cache = EncodedObjects()
    listing = {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "9"},
               "items": [pod("a", "5"), pod("b", "6")]}
    assert cache.listing(PODS, listing) == compact(listing)
    empty = dict(listing, items=[])
    assert cache.listing(PODS, empty) == compact(empty)


def test_a_new_version_is_encoded_anew() -> None:
    cache = EncodedObjects()
    cache.bare(PODS, pod("a", "5"))
    changed = pod("a", "6")
    changed["status"]["phase"] = "Running"
    assert b"Running" in cache.bare(PODS, changed)


def test_the_cache_is_bounded() -> None:
    cache = EncodedObjects(limit=3)
    for i in range(10):
        cache.bare(PODS, pod(f"p{i}", str(i + 1)))
    assert len(cache) == 3
    assert cache.bare(PODS, pod("p0", "1")) == compact(pod("p0", "1"))


def test_a_listed_collection_is_joined_once_and_rejoined_when_an_item_changes() -> None:
    cache = EncodedObjects()
    items = [pod(f"p{i}", str(i + 1)) for i in range(20)]
    first = cache.joined_items(PODS, items)
    assert first == b",".join(compact(item) for item in items)
    assert cache.joined_items(PODS, list(items)) is first  # same versions, same order: the same bytes
    changed = list(items)
    changed[7] = pod("p7", "99")
    changed[7]["status"]["phase"] = "Running"
    rejoined = cache.joined_items(PODS, changed)
    assert rejoined == b",".join(compact(item) for item in changed) and b"Running" in rejoined
    assert cache.joined_items(PODS, items) == first


def test_listing_parts_join_to_the_listing() -> None:
    cache = EncodedObjects()
    listing = {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "30"},
               "items": [pod(f"p{i}", str(i + 1)) for i in range(12)]}
    assert b"".join(cache.listing_parts(PODS, listing)) == compact(listing)


def test_joined_lists_are_bounded_in_count_and_bytes() -> None:
    cache = EncodedObjects(list_limit=2)
    for start in range(5):
        cache.joined_items(PODS, [pod(f"p{start}-{i}", str(100 * start + i + 1)) for i in range(10)])
    assert len(cache._lists) == 2
    small = EncodedObjects(max_list_bytes=500)
    for start in range(5):
        small.joined_items(PODS, [pod(f"p{start}-{i}", str(100 * start + i + 1)) for i in range(10)])
    assert small.list_held_bytes == 0  # each join is bigger than the whole budget: served, not kept


def test_items_without_a_resource_version_are_never_reused() -> None:
    cache = EncodedObjects()
    items = [pod(f"p{i}", str(i + 1)) for i in range(10)]
    del items[3]["metadata"]["resourceVersion"]
    cache.joined_items(PODS, items)
    assert cache.list_held_bytes == 0
