"""The bytes of a RawExtension field as upstream's decoder keeps them, and the side table
that holds them for one stored version (fakekube/api/verbs/rawextension.py)."""

from __future__ import annotations

import pytest

from fakekube.api.verbs import rawextension


@pytest.mark.parametrize(("body", "expected"), [
    (b'{"data": {"a": 1}, "revision": 1}', '{"a": 1}'),
    (b'{ "revision":1 ,"data"  :  [1, {"x":"}"}]\n}', '[1, {"x":"}"}]'),
    (b'{"data": {"a": 1}, "data": {"b":2}}', '{"b":2}'),  # the last duplicate, as Go's decoder
    (b'{"data": null}', None),  # Raw stays nil
    (b'{"Data": {"a": 1}}', None),  # case-sensitive, as sigs.k8s.io/json
    (b'{"metadata": {"data": 1}}', None),  # top level only
])
def test_field_text_is_the_value_as_sent(body: bytes, expected: str | None) -> None:
    assert rawextension.field_text(body, "data") == expected


def test_kept_bytes_count_only_for_the_version_they_were_written_with() -> None:
    texts = rawextension.SentTexts(limit=1)
    first = {"metadata": {"namespace": "ns", "name": "a", "resourceVersion": "5"}, "data": {"a": 1}}
    texts.remember("cr", first, {"data": '{"a": 1}'})
    assert texts.texts("cr", first, ("data",)) == {"data": '{"a": 1}'}
    rewritten = {**first, "metadata": {**first["metadata"], "resourceVersion": "6"}}
    assert texts.texts("cr", rewritten, ("data",)) == {"data": '{"a":1}'}
    other = {"metadata": {"namespace": "ns", "name": "b", "resourceVersion": "7"}, "data": {"b": 1}}
    texts.remember("cr", other, {"data": '{ "b":1}'})  # past the limit: the oldest entry goes
    assert texts.texts("cr", first, ("data",)) == {"data": '{"a":1}'}
