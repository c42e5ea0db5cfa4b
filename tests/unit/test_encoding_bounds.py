"""The cache of encoded object versions is bounded in bytes as well as in entries.

Past its byte budget the least recently used encodings drop (and are encoded again,
byte for byte the same, when next needed).
"""

from __future__ import annotations

from fakekube.api.verbs.encoding import DEFAULT_MAX_BYTES, EncodedObjects


class _Rt:
    group, version, plural, api_version, kind = "", "v1", "configmaps", "v1", "ConfigMap"


def version(rv: int, payload: str) -> dict:
    return {"metadata": {"name": "big", "namespace": "default", "resourceVersion": str(rv)}, "data": {"a": payload}}


def test_the_default_byte_budget_is_documented() -> None:
    assert DEFAULT_MAX_BYTES == 64 * 1024 * 1024
    assert EncodedObjects().max_bytes == DEFAULT_MAX_BYTES


def test_past_the_byte_budget_the_least_recently_used_drop() -> None:
    cache = EncodedObjects(limit=1_000, max_bytes=50_000)
    rt = _Rt()
    for rv in range(1, 101):
        cache.bare(rt, version(rv, "x" * 10_000))  # type: ignore[arg-type]
    assert len(cache) <= 5 and cache.held_bytes <= 50_000
    again = cache.bare(rt, version(100, "x" * 10_000))  # type: ignore[arg-type]
    assert again == cache.bare(rt, version(100, "x" * 10_000))  # type: ignore[arg-type]


def test_an_encoding_bigger_than_the_budget_is_served_but_not_kept_alone() -> None:
    cache = EncodedObjects(limit=1_000, max_bytes=1_000)
    rt = _Rt()
    body = cache.bare(rt, version(1, "x" * 5_000))  # type: ignore[arg-type]
    assert len(body) > 5_000
    assert cache.held_bytes <= 1_000
