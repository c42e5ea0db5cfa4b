"""``fieldValidation=Strict|Warn``: unknown and duplicate fields in a request body.

Upstream decodes built-in types with sigs.k8s.io/json's strict mode, which reports
``unknown field "spec.foo"`` and ``duplicate field "metadata.name"`` with paths joined
by dots and ``[i]`` indexes and no leading dot, at most 100 errors, each once. Strict
turns them into a 400 (create/update) or 422 (patch); Warn turns each into a
``Warning: 299 - "..."`` header. We check the same things against upstream's OpenAPI
schema: a map (additionalProperties) takes any key, and free-form types
(RawExtension, JSON, x-kubernetes-preserve-unknown-fields) take anything.
"""

from __future__ import annotations

import json
import re
from typing import Any

from fakekube.api.machinery.errors import ApiError, bad_request, invalid, invalid_object
from fakekube.api.wire.patch.schema_node import ARRAY, MAP, OBJECT, SchemaNode, root_node

MAX_STRICT_ERRORS = 100


def unknown_fields(obj: dict, schema_set: Any, group: str, version: str, kind: str) -> list[str]:
    """Paths of fields in ``obj`` that its type's schema does not declare, in document order.

    A type the schema set does not know (a custom resource) has no unknown fields here.
    """
    node = root_node(schema_set, group, version, kind)
    found: list[str] = []
    if node is not None:
        _walk(obj, node, "", found)
    return found[:MAX_STRICT_ERRORS]


def _walk(value: Any, node: SchemaNode, path: str, found: list[str]) -> None:
    if node.kind == OBJECT and isinstance(value, dict):
        for key, sub in value.items():
            info = node.field(key)
            child = f"{path}.{key}" if path else key
            if info is None:
                _add(found, child)
            else:
                _walk(sub, info.node, child, found)
    elif node.kind == MAP and isinstance(value, dict):
        for key, sub in value.items():
            info = node.field(key)
            if info is not None:
                _walk(sub, info.node, f"{path}.{key}" if path else key, found)
    elif node.kind == ARRAY and isinstance(value, list):
        item = node.item()
        for index, sub in enumerate(value):
            _walk(sub, item, f"{path}[{index}]", found)


def _add(found: list[str], path: str) -> None:
    if path not in found and len(found) < MAX_STRICT_ERRORS:
        found.append(path)


def duplicate_fields(raw_json: bytes, parsed_keys: int | None = None) -> list[str]:
    """Paths of keys that appear twice in the same JSON object of ``raw_json``, in order.

    Not JSON at all → [] (the decoder reports that error on its own). ``parsed_keys``:
    how many object keys ``json.loads(raw_json)`` kept (:func:`key_count` of the request's
    fresh parse, before anything edits it), which lets most bodies skip a second parse.
    """
    found: list[str] = []
    if parsed_keys is not None and _key_marks(raw_json) == parsed_keys:
        return []
    try:
        if not _has_duplicate_keys(raw_json):
            return []
        document = json.loads(raw_json, object_pairs_hook=_Pairs)
    except (ValueError, UnicodeDecodeError):
        return []
    _find_duplicates(document, "", found)
    return found[:MAX_STRICT_ERRORS]


def key_count(value: Any) -> int:
    """How many object keys a parsed JSON value holds, at every depth."""
    if type(value) is dict:
        count = len(value)
        for sub in value.values():
            if type(sub) is dict or type(sub) is list:
                count += key_count(sub)
        return count
    if type(value) is list:
        count = 0
        for sub in value:
            if type(sub) is dict or type(sub) is list:
                count += key_count(sub)
        return count
    return 0


def _key_marks(raw_json: bytes) -> int:
    """An upper bound of the keys written in ``raw_json``: quotes followed by a colon.

    Every key ends in such a mark (and no two keys share one); marks inside string values
    only raise the count. So when it equals the keys the parse kept, none was dropped as a
    repeat — exact, and a byte count instead of a second parse. When it does not (a
    repeat, or ``":`` inside a value), the full check runs.
    """
    marks = raw_json.count(b'":')
    if _SPACED_KEY_END.search(raw_json) is not None:  # ``"key" : v``: rare, count exactly
        marks = len(_KEY_END.findall(raw_json))
    return marks


_KEY_END = re.compile(rb'"[ \t\r\n]*:')
_SPACED_KEY_END = re.compile(rb'"[ \t\r\n]+:')


def _has_duplicate_keys(raw_json: bytes) -> bool:
    """The cheap check run on every write: does any object repeat a key? (Rarely.)"""
    try:
        json.loads(raw_json, object_pairs_hook=_refuse_repeats)
    except _Repeated:
        return True
    return False


class _Repeated(Exception):
    """An object repeats a key: no need to parse further."""


def _refuse_repeats(pairs: list[tuple[str, Any]]) -> None:
    """Builds nothing (the check needs no values), so each object costs one small call."""
    if len(pairs) > 1 and len(dict(pairs)) != len(pairs):
        raise _Repeated


class _Pairs(list):
    """An object kept as its (key, value) pairs, so repeated keys survive parsing."""


def _find_duplicates(value: Any, path: str, found: list[str]) -> None:
    if isinstance(value, _Pairs):
        seen: set[str] = set()
        for key, sub in value:
            child = f"{path}.{key}" if path else key
            if key in seen:
                _add(found, child)
            seen.add(key)
            _find_duplicates(sub, child, found)
    elif isinstance(value, list):
        for index, sub in enumerate(value):
            _find_duplicates(sub, f"{path}[{index}]", found)


def strict_messages(paths: list[str], dups: list[str]) -> list[str]:
    """One message per problem, worded as upstream: ``unknown field "spec.foo"``."""
    return [f"unknown field {_go_quote(p)}" for p in paths] + [f"duplicate field {_go_quote(p)}" for p in dups]


def strict_decoding_message(paths: list[str], dups: list[str]) -> str:
    """runtime.NewStrictDecodingError's text: ``strict decoding error: a, b``."""
    return "strict decoding error: " + ", ".join(strict_messages(paths, dups))


def strict_error(paths: list[str], dups: list[str], *, kind: str = "", version: str = "",
                 body_kind: str = "") -> ApiError:
    """The 400 a create or update with fieldValidation=Strict gets.

    Upstream wraps the decoding error as ``Deployment in version "v1" cannot be handled
    as a Deployment: strict decoding error: unknown field "spec.foo"``; ``body_kind``
    is the kind the body names (defaults to ``kind``). Without a kind, the bare text.
    """
    text = strict_decoding_message(paths, dups)
    if kind:
        text = f"{body_kind or kind} in version {_go_quote(version)} cannot be handled as a {kind}: {text}"
    return bad_request(text)


def patch_strict_error(paths: list[str], dups: list[str], patch_text: str) -> ApiError:
    """The 422 a patch with fieldValidation=Strict gets: an Invalid ``patch`` field error.

    ``patch_text`` is what upstream shows as the value: the patched object's JSON for
    JSON and merge patches, Go's ``%+v`` of the patch map for strategic merge patches.
    """
    return invalid_object("", "", "", [invalid("patch", patch_text, strict_decoding_message(paths, dups))])


def warnings(paths: list[str], dups: list[str]) -> list[str]:
    """The warning texts Warn adds, one per problem (the HTTP layer's recorder,
    :mod:`fakekube.api.machinery.warning`, makes them headers)."""
    return strict_messages(paths, dups)


def _go_quote(text: str) -> str:
    """strconv.Quote for the printable text field paths hold."""
    return json.dumps(text, ensure_ascii=False)
