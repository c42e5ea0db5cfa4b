"""The JSON bytes of stored object versions, encoded once and reused.

A stored object is never mutated (a write replaces it), so the bytes of one version —
identified by (group, version, resource, namespace, name, resourceVersion) — never change. Encoding is
most of the cost of a large list (about 20 ms of ``json.dumps`` for 1,000 pods) and of
every watch event, once per watcher; caching the bytes makes a list a join and lets
every watcher share one encoding. The cache is bounded: past ``limit`` versions
(50,000) or ``max_bytes`` of encodings (64 MiB) the least recently used are dropped and
re-encoded when next needed, with identical bytes; an encoding bigger than the whole
budget is served but not kept.

A list's items are also kept joined: the same objects listed again (the same stored
versions, in the same order, checked by identity) reuse one joined ``bytes``, so a
repeated LIST of an unchanged collection costs one identity check in C and no
per-item work; a LIST's Table rows likewise (``kubectl get``), while cluster time stands
still (``list_limit`` joins, 64, within ``max_list_bytes``, 64 MiB; the least
recently used drop first). A list answer is handed out as parts (head, items, tail) so
the transport writes them without copying the items again.
"""

from __future__ import annotations

import functools
import json
import operator
import threading
from collections import OrderedDict
from datetime import datetime
from typing import Any, Callable

from fakekube.api import table
from fakekube.api.registry import ResourceType

Obj = dict[str, Any]

#: Encoded versions kept (about 1 KB each for a typical pod).
DEFAULT_LIMIT = 50_000
#: Bytes of encodings kept (the versions of one 900 KB object filled 1.3 GB when only
#: entries were counted).
DEFAULT_MAX_BYTES = 64 * 1024 * 1024

#: Joined item lists kept (each holds its items, so old versions live while it is kept).
DEFAULT_LIST_LIMIT = 64
#: Bytes of joined item lists kept.
DEFAULT_MAX_LIST_BYTES = 64 * 1024 * 1024
#: Lists shorter than this are joined afresh (a lookup would cost about as much).
MIN_LIST_CACHED = 8

_TYPE_META = ("apiVersion", "kind")
#: Where a joined list is filed: what it joins ("items" or "rows"), the type (group,
#: plural, version), for rows includeObject and the cluster time, then the id of its first
#: and last item and the count; its items are then compared one by one by identity.
_ListKey = tuple[Any, ...]


#: One encoder for every call (``json.dumps`` with options builds one per call): encoding
#: keeps no state between calls, so threads share it.
_COMPACT = json.JSONEncoder(separators=(",", ":"))


def dumps(value: Any) -> bytes:
    """The one compact JSON form every response uses."""
    return _COMPACT.encode(value).encode()


class EncodedObjects:
    """A bounded LRU map from object version to its compact JSON (without apiVersion/kind)."""

    def __init__(self, limit: int = DEFAULT_LIMIT, max_bytes: int = DEFAULT_MAX_BYTES,
                 list_limit: int = DEFAULT_LIST_LIMIT, max_list_bytes: int = DEFAULT_MAX_LIST_BYTES) -> None:
        self.limit = limit
        self.max_bytes = max_bytes
        self.list_limit = list_limit
        self.max_list_bytes = max_list_bytes
        #: Bytes of the encodings held.
        self.held_bytes = 0
        #: Bytes of the joined lists held.
        self.list_held_bytes = 0
        self._bytes: OrderedDict[tuple[str, str, str, str, str, str], bytes] = OrderedDict()
        self._lists: OrderedDict[_ListKey, tuple[list[Obj], object, bytes]] = OrderedDict()
        self._lock = threading.Lock()

    def bare(self, rt: ResourceType, obj: Obj) -> bytes:
        """``obj`` as a list item shows it: no apiVersion/kind."""
        meta = obj.get("metadata") or {}
        rv = meta.get("resourceVersion")
        if not rv:  # not a stored version (e.g. a dry-run result): nothing to reuse
            return _encode_bare(obj)
        # The version is part of the key: one stored object may be served in two versions'
        # shapes (autoscaling/v1 and v2 HorizontalPodAutoscalers share their storage).
        key = (rt.group, rt.version, rt.plural, meta.get("namespace") or "", meta.get("name") or "", rv)
        with self._lock:
            cached = self._bytes.get(key)
            if cached is not None:
                self._bytes.move_to_end(key)
                return cached
        encoded = _encode_bare(obj)
        if len(encoded) > self.max_bytes:
            return encoded
        with self._lock:
            previous = self._bytes.get(key)
            if previous is not None:
                self.held_bytes -= len(previous)
            self._bytes[key] = encoded
            self.held_bytes += len(encoded)
            while len(self._bytes) > self.limit or self.held_bytes > self.max_bytes:
                self.held_bytes -= len(self._bytes.popitem(last=False)[1])
        return encoded

    def typed(self, rt: ResourceType, obj: Obj) -> bytes:
        """``obj`` as a GET or watch event shows it: apiVersion and kind first."""
        body = self.bare(rt, obj)
        prefix = _type_meta_prefix(rt.api_version, rt.kind)
        return prefix + (b"}" if body == b"{}" else b"," + body[1:])

    def listing(self, rt: ResourceType, result: Obj) -> bytes:
        """A ``<Kind>List`` response: its header once, then the cached items joined."""
        return b"".join(self.listing_parts(rt, result))

    def listing_parts(self, rt: ResourceType, result: Obj) -> list[bytes]:
        """:meth:`listing` as parts to write one after another (the items are not copied)."""
        head = {k: v for k, v in result.items() if k != "items"}
        return [dumps(head)[:-1] + b',"items":[', self.joined_items(rt, result["items"]), b"]}"]

    def joined_items(self, rt: ResourceType, items: list[Obj]) -> bytes:
        """The items' bare encodings joined by commas; reused while the same versions are listed."""
        # A custom resource list is unstructured: each item keeps its apiVersion and kind.
        encode = self.typed if rt.custom is not None else self.bare
        if len(items) < MIN_LIST_CACHED or rt.stored_as is not None:  # a view's items are new dicts each time
            return b",".join([encode(rt, item) for item in items])
        key: _ListKey = ("items", rt.group, rt.plural, rt.version, id(items[0]), id(items[-1]), len(items))
        return self._joined(key, items, None, lambda: b",".join([encode(rt, item) for item in items]))

    def table_parts(self, rt: ResourceType, items: list[Obj], list_meta: Obj, now: datetime,
                    include_object: str, no_headers: bool, kubernetes_version: str) -> list[bytes]:
        """A LIST's Table as parts: its head, the rows joined, the tail. The joined rows are
        reused while the same versions are listed at the same cluster time (an Age cell
        moves with it) with the same ``includeObject`` and the same printer."""
        head = dumps(table.table_head(rt, items, list_meta, no_headers, kubernetes_version))[:-1] + b',"rows":['
        spec = table.table_spec(rt, kubernetes_version)

        def rows() -> bytes:
            return b",".join([dumps(row) for row in table.table_rows(rt, items, now, include_object,
                                                                      kubernetes_version)])
        if len(items) < MIN_LIST_CACHED or include_object == "Object" or rt.stored_as is not None:
            # Object rows carry objects made per request, as a view's items are: nothing to reuse.
            return [head, rows(), b"]}"]
        key: _ListKey = ("rows", rt.group, rt.plural, rt.version, include_object, now,
                         id(items[0]), id(items[-1]), len(items))
        return [head, self._joined(key, items, spec, rows), b"]}"]

    def _joined(self, key: _ListKey, items: list[Obj], printer: object, build: Callable[[], bytes]) -> bytes:
        """``build()``, kept under ``key`` while the same ``items`` (by identity) and ``printer`` ask again."""
        with self._lock:
            cached = self._lists.get(key)
            if cached is not None and cached[1] is printer and _same_objects(cached[0], items):
                self._lists.move_to_end(key)
                return cached[2]
        joined = build()
        if not all(_stored_version(item) for item in items) or len(joined) > self.max_list_bytes:
            return joined  # a version that is not stored (no resourceVersion) is never reused
        with self._lock:
            previous = self._lists.pop(key, None)
            if previous is not None:
                self.list_held_bytes -= len(previous[2])
            self._lists[key] = (list(items), printer, joined)
            self.list_held_bytes += len(joined)
            while len(self._lists) > self.list_limit or self.list_held_bytes > self.max_list_bytes:
                self.list_held_bytes -= len(self._lists.popitem(last=False)[1][2])
        return joined

    def __len__(self) -> int:
        return len(self._bytes)


def _same_objects(kept: list[Obj], items: list[Obj]) -> bool:
    """The same dicts in the same order (identity, compared in C: stored objects are never
    mutated, so the same dict is the same version)."""
    return len(kept) == len(items) and all(map(operator.is_, kept, items))


def _stored_version(obj: Obj) -> bool:
    return bool((obj.get("metadata") or {}).get("resourceVersion"))


@functools.lru_cache(maxsize=256)
def _type_meta_prefix(api_version: str, kind: str) -> bytes:
    return f'{{"apiVersion":{json.dumps(api_version)},"kind":{json.dumps(kind)}'.encode()


def _encode_bare(obj: Obj) -> bytes:
    if "apiVersion" in obj or "kind" in obj:
        obj = {k: v for k, v in obj.items() if k not in _TYPE_META}
    return dumps(obj)
