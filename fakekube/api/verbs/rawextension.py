"""Immutable ``RawExtension`` fields, compared as upstream compares them: as bytes.

Upstream keeps a ``runtime.RawExtension`` field (a ControllerRevision's ``data``) as the
exact bytes of that field in the request body (``RawExtension.UnmarshalJSON`` copies
them), stores those bytes as they are (protobuf) and, where the field is immutable,
compares bytes (``ValidateImmutableField`` on ``Raw``). So ``{"a": 1}`` created by a
client that writes spaces (Python's ``json.dumps``) can never be patched: every patch
re-encodes the current object with ``json.Marshal``, which compacts the field to
``{"a":1}`` (merge and JSON patches and apply keep its key order; a strategic merge
patch goes through a Go map and sorts it), and that is not what is stored — a 422
``field is immutable`` though the value is the same. A PUT passes only when it sends
the very bytes stored (spacing around the value does not count).

fakekube keeps objects as parsed JSON, which has no spacing, so the bytes live beside
the store (:class:`SentTexts`), and only where they are not what ``json.Marshal``
writes of the value in its key order (:func:`encoded`) — what Go clients and fakekube's
controllers send, so nearly every object needs no entry. An entry counts only for the
stored version it was written with (its resourceVersion): a write by any other path can
never pair an object with another version's bytes.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FieldError
from fakekube.api.machinery.jsonutil import go_marshal
from fakekube.api.types._util import FIELD_IMMUTABLE, GoLiteral

Obj = dict[str, Any]
Texts = dict[str, "str | None"]

#: How the new bytes of a field reach an update's validation (upstream's handlers):
#: a PUT or POST body's own bytes (a YAML body: ``YAMLToJSON``'s, compact with keys sorted);
AS_SENT = "as-sent"
#: merge and JSON patches and apply: the current object re-encoded (compact, in order);
REENCODED = "re-encoded"
#: a strategic merge patch: through ``map[string]interface{}`` (compact, keys sorted);
SORTED = "sorted"
#: a write from inside the cluster: upstream's controllers send the bytes they read.
INTERNAL = "internal"

#: The most objects whose bytes are kept (:class:`SentTexts`). Past it the oldest entry
#: goes: that object's field then counts as compact, so a patch of it passes where
#: upstream refuses it (docs/reliability.md).
MAX_KEPT_OBJECTS = 1000

_PROTOBUF_MAGIC = b"k8s\x00"


def encoded(value: Any, sort_keys: bool = False) -> str | None:
    """``json.Marshal``'s text of a field's value (None: absent or null, a nil ``Raw``)."""
    if value is None:
        return None
    return go_marshal(value, sort_keys=sort_keys)


def field_text(body: bytes, field: str) -> str | None:
    """The bytes of top-level ``field``'s value in a JSON object body, as Go's decoder hands
    them to ``UnmarshalJSON`` (no surrounding spaces; the last of duplicate keys), or None
    when it is absent or ``null`` (``Raw`` stays nil). ValueError: not a JSON object."""
    doc = body.decode("utf-8")
    decoder = json.JSONDecoder()
    pos = _skip(doc, 0)
    if doc[pos:pos + 1] != "{":
        raise ValueError("not a JSON object")
    found: str | None = None
    pos = _skip(doc, pos + 1)
    while doc[pos:pos + 1] == '"':
        key, pos = json.decoder.scanstring(doc, pos + 1)  # type: ignore[attr-defined]
        pos = _skip(doc, _skip(doc, pos) + 1)  # past the colon
        _, end = decoder.raw_decode(doc, pos)
        if key == field:
            found = None if doc[pos:end] == "null" else doc[pos:end]
        pos = _skip(doc, end)
        pos = _skip(doc, pos + 1) if doc[pos:pos + 1] == "," else pos
    return found


def _skip(doc: str, pos: int) -> int:
    """The first position at or after ``pos`` that is not JSON whitespace."""
    while pos < len(doc) and doc[pos] in " \t\r\n":
        pos += 1
    return pos


def sent_texts(fields: tuple[str, ...], new: Obj, old: Obj, old_texts: Texts, how: str, body: bytes | None,
               json_body: bool) -> Texts:
    """The bytes each field of ``new`` holds once decoded, by how the write came (``how``):
    ``body`` is a PUT's or POST's raw body and ``json_body`` whether it was JSON."""
    if how == INTERNAL:
        return {f: old_texts.get(f) if new.get(f) == old.get(f) else encoded(new.get(f)) for f in fields}
    if how == AS_SENT and body is not None and json_body and not body.startswith(_PROTOBUF_MAGIC):
        try:
            return {f: field_text(body, f) for f in fields}
        except ValueError:  # decoded already, so never; fall back to the value
            pass
    sort_keys = how == SORTED or (how == AS_SENT and not json_body and not (body or b"").startswith(_PROTOBUF_MAGIC))
    return {f: encoded(new.get(f), sort_keys) for f in fields}


def immutable(fields: tuple[str, ...], new_texts: Texts, old_texts: Texts) -> list[FieldError]:
    """``ValidateImmutableField`` of each field's bytes: the new value is shown as
    ``json.Marshal`` writes a ``RawExtension`` (its bytes, compacted)."""
    problems = []
    for field in fields:
        new, old = new_texts.get(field), old_texts.get(field)
        if new != old:
            shown = "null" if new is None else go_marshal(json.loads(new), sort_keys=False)
            problems.append(errors.invalid(field, GoLiteral(shown), FIELD_IMMUTABLE))
    return problems


class SentTexts:
    """The bytes of the immutable ``RawExtension`` fields of stored objects, where they are
    not :func:`encoded` of the value: (resource, namespace, name) → (resourceVersion, texts).
    At most :data:`MAX_KEPT_OBJECTS` entries, the oldest dropped first."""

    def __init__(self, limit: int = MAX_KEPT_OBJECTS) -> None:
        self.limit = limit
        self._entries: dict[tuple[Any, str, str], tuple[str, Texts]] = {}

    def texts(self, resource: Any, stored: Obj, fields: tuple[str, ...]) -> Texts:
        """The bytes of ``stored``'s fields: kept ones if written with this version."""
        entry = self._entries.get(_key(resource, stored))
        if entry is not None and entry[0] == stored["metadata"].get("resourceVersion"):
            return dict(entry[1])
        return {f: encoded(stored.get(f)) for f in fields}

    def remember(self, resource: Any, stored: Obj, texts: Mapping[str, str | None]) -> None:
        """Keep ``texts`` for the version ``stored`` (just written), or forget the object's
        entry when they are what :func:`encoded` gives anyway."""
        key = _key(resource, stored)
        self._entries.pop(key, None)
        if all(text == encoded(stored.get(f)) for f, text in texts.items()):
            return
        self._entries[key] = (stored["metadata"].get("resourceVersion") or "", dict(texts))
        while len(self._entries) > self.limit:
            del self._entries[next(iter(self._entries))]


def _key(resource: Any, obj: Obj) -> tuple[Any, str, str]:
    meta = obj.get("metadata") or {}
    return resource, meta.get("namespace") or "", meta.get("name") or ""
