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
