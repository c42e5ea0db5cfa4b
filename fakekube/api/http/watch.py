"""Watch streams: newline-delimited JSON events over a chunked HTTP response.

A watch reads the store's shared change history from its own cursor, so any number of
watchers cost writers nothing and a slow one never holds anybody up. If a watcher falls
so far behind that the history no longer holds its next change, it gets a 410 Expired
ERROR event and the stream ends — the client relists, exactly as against a real
apiserver. Waiting between events, ``timeoutSeconds`` and bookmarks run on the wall
clock: they belong to the connection (DESIGN.md, "two kinds of time").
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any, Callable, Iterator

from fakekube.api import table
from fakekube.api.http.negotiation import JSON, Representation, TableOptions
from fakekube.api.machinery import errors
from fakekube.api.registry import ResourceType
from fakekube.api.verbs import objectmeta
from fakekube.api.verbs.apiserver import APIServer
from fakekube.api.machinery.validation import go_quote
from fakekube.api.verbs.deletion import parse_int64
from fakekube.api.machinery.params import query_bool
from fakekube.api.verbs.listing import NOT_OLDER_THAN, ListOptions, Matcher, parse_resource_version
from fakekube.store import ADDED, DELETED, MODIFIED, Change, TooOldResourceVersion

Obj = dict[str, Any]

BOOKMARK = "BOOKMARK"
ERROR = "ERROR"
INITIAL_EVENTS_END = "k8s.io/initial-events-end"

#: How often a waiting watch wakes to notice shutdown, deadlines and a client that has
#: gone (wall seconds, transport time): an abandoned watch frees its slot within this.
POLL_INTERVAL_S = 0.5
#: ``environ`` key of the server's zero-argument callable: True once the client closed its side.
DISCONNECTED = "fakekube.disconnected"
#: Without timeoutSeconds upstream picks 30–60 min; we hold the stream for at most this.
DEFAULT_TIMEOUT_S = 1800.0


class WatchRequest:
    """A watch's parameters, parsed and validated before its stream starts; read on every
    store change while the watch lasts (a ``__slots__`` class: its reads are the cheapest)."""

    __slots__ = ("rt", "namespace", "matcher", "resource_version", "allow_bookmarks", "send_initial_events",
                 "timeout_s", "bookmark_interval_s", "as_kind", "table_options")

    def __init__(self, rt: ResourceType, namespace: str, matcher: Matcher, resource_version: str,
                 allow_bookmarks: bool, send_initial_events: bool, timeout_s: float,
                 bookmark_interval_s: float = 10.0, as_kind: str = "",
                 table_options: TableOptions = TableOptions()) -> None:
        self.rt = rt
        self.namespace = namespace
        self.matcher = matcher
        self.resource_version = resource_version
        self.allow_bookmarks = allow_bookmarks
        self.send_initial_events = send_initial_events
        self.timeout_s = timeout_s
        self.bookmark_interval_s = bookmark_interval_s
        #: "" for plain objects, else the ``as=`` kind each event's object is converted to.
        self.as_kind = as_kind
        self.table_options = table_options

    @classmethod
    def from_query(cls, rt: ResourceType, namespace: str, query: dict[str, str], name: str = "",
                   representation: Representation = Representation(JSON), watch_list: bool = True) -> "WatchRequest":
        """Every parameter parsed and validated, in upstream's order (``ListResource``: the
        parameter codec's 400s, then ``ValidateListOptions``' 422, then the storage's check of
        the resourceVersion), so that a bad one is answered before the stream starts.
        ``watch_list``: the WatchList feature gate (off in 1.33: no ``sendInitialEvents``)."""
        ListOptions.from_query({k: v for k, v in query.items() if k != "resourceVersionMatch"})  # ints, selectors
        timeout_s = _timeout(query)
        field_selector = query.get("fieldSelector", "")
        if name:
            field_selector = ",".join(filter(None, [field_selector, f"metadata.name={name}"]))
        send_initial = query_bool(query.get("sendInitialEvents"))
        allow_bookmarks = query_bool(query.get("allowWatchBookmarks"))
        _check_watch_options(query, watch_list)
        rv = query.get("resourceVersion", "")
        _check_resource_version(rv)
        as_kind = representation.as_kind
        table_options = TableOptions.from_query(query) if as_kind == "Table" else TableOptions()
        return cls(rt, namespace, Matcher(rt, query.get("labelSelector", ""), field_selector), rv,
                   allow_bookmarks, send_initial, timeout_s, as_kind=as_kind, table_options=table_options)


def _timeout(query: dict[str, str]) -> float:
    text = query.get("timeoutSeconds", "")
    if not text:
        return DEFAULT_TIMEOUT_S
    return max(0.0, float(parse_int64(text)))


def _check_resource_version(text: str) -> None:
    """The cacher's ``ParseResourceVersion``. Its storage.InvalidError passes every layer
    unconverted, so upstream 1.33 answers 500 without a reason (kubernetes/kubernetes#139485),
    before the stream starts."""
    if text in ("", "0"):
        return
    quoted = go_quote(text)
    why = "invalid syntax" if not (text.isascii() and text.isdigit()) else None
    if why is None and int(text) >= 2 ** 64:
        why = "value out of range"
    if why is not None:
        raise errors.unknown_error(
            500, f"resourceVersion: Invalid value: {quoted}: strconv.ParseUint: parsing {quoted}: {why}")


def _check_watch_options(query: dict[str, str], watch_list: bool) -> None:
    """``validateWatchOptions``: every problem at once, a 422 on ``ListOptions.meta.k8s.io``.
    Without bookmarks a watch-list is served (its initial events end with no bookmark)."""
    problems = []
    match = query.get("resourceVersionMatch", "")
    has_initial = "sendInitialEvents" in query
    if has_initial and match != NOT_OLDER_THAN:
        problems.append(errors.forbidden("resourceVersionMatch",
                                         "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
    if has_initial and not watch_list:
        problems.append(errors.forbidden("sendInitialEvents",
                                         "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"))
    if match:
        if not has_initial:
            problems.append(errors.forbidden(
                "resourceVersionMatch", "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
        if match != NOT_OLDER_THAN:
            problems.append(errors.not_supported("resourceVersionMatch", match, [NOT_OLDER_THAN]))
        if query.get("continue"):
            problems.append(errors.forbidden("resourceVersionMatch",
                                             "resourceVersionMatch is forbidden when continue is provided"))
    if problems:
        raise errors.invalid_object("meta.k8s.io", "ListOptions", "", problems)


class Watch:
    """One watch stream; iterate it to get encoded event lines."""

    def __init__(self, apiserver: APIServer, request: WatchRequest, stopping: threading.Event,
                 disconnected: Callable[[], bool] | None = None, check_interval_s: float = POLL_INTERVAL_S) -> None:
        self._api = apiserver
        self._req = request
        self._stopping = stopping
        #: Polled between waits; without it a gone client is noticed only when a write fails.
        self._disconnected = disconnected
        self._check_interval_s = check_interval_s
        self._store = apiserver.store
        # Upstream sends a Table's column definitions with the first event only.
        self._table_headers_sent = request.table_options.no_headers
        self._plain = request.as_kind not in ("Table", "PartialObjectMetadata")

    def __iter__(self) -> Iterator[bytes]:
        # An empty first chunk makes the server send status and headers now, as upstream
        # does: clients wait for the response headers before they consider a watch open.
        yield b""
        deadline = time.monotonic() + self._req.timeout_s
        try:
            cursor, initial = self._start()
            for line in initial:
                yield line
            if cursor < 0:
                return
            yield from self._follow(cursor, deadline)
        except errors.ApiError:  # an object that cannot be shown (a failed conversion webhook):
            return  # upstream's watch handler logs the encode error and ends the stream

    def _start(self) -> tuple[int, list[bytes]]:
        """The starting cursor and the initial events (synthetic ADDEDs, or a 410)."""
        rv_text = self._req.resource_version
        if rv_text and rv_text != "0" and not self._req.send_initial_events:
            rv = parse_resource_version(rv_text)
            if not self._store.history.covers(rv):
                return -1, [self._expired(rv)]
            return rv, []
        with self._store.lock:
            objects, cursor = self._store.list(self._req.rt.key, self._req.namespace)
            lines = [self._encode(ADDED, obj) for obj in objects if self._req.matcher(obj)]
        if self._req.send_initial_events and self._req.allow_bookmarks:  # the cacher's end-of-initial bookmark
            lines.append(self._bookmark(cursor, initial_end=True))
        return cursor, lines

    def _follow(self, cursor: int, deadline: float) -> Iterator[bytes]:
        last_bookmark = time.monotonic()
        while not self._stopping.is_set() and not self._store.closed:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            changed = self._store.wait_for_change(cursor, min(remaining, self._check_interval_s))
            if self._disconnected is not None and self._disconnected():
                return
            if not changed:
                if self._req.allow_bookmarks and time.monotonic() - last_bookmark >= self._req.bookmark_interval_s:
                    last_bookmark = time.monotonic()
                    yield self._bookmark(cursor)
                continue
            try:
                changes = self._store.changes_since(cursor)
            except TooOldResourceVersion:
                yield self._expired(cursor)
                return
            for change in changes:
                line = self._translate(change)
                if line is not None:
                    yield line
            if changes:
                cursor = changes[-1].rv
        if self._store.expired:  # a snapshot was restored: as after etcd compaction
            yield self._expired(cursor)

    def _translate(self, change: Change) -> bytes | None:
        """The event this watcher sees for a change, if any (selectors make transitions)."""
        if (change.group, change.resource) != self._req.rt.key:
            return None
        if self._req.namespace and change.namespace != self._req.namespace:
            return None
        now_matches = change.type != DELETED and self._req.matcher(change.obj)
        before_matches = change.prev is not None and self._req.matcher(change.prev)
        if change.type == DELETED:
            return self._encode(DELETED, change.obj) if before_matches else None
        if now_matches and before_matches:
            return self._encode(MODIFIED, change.obj)
        if now_matches:
            return self._encode(ADDED, change.obj)
        if before_matches and change.prev is not None:
            # Leaving the selection: the cacher's DELETED carries the object as it was when
            # it last matched, at the change's resourceVersion.
            meta = {**change.prev.get("metadata", {}),
                    "resourceVersion": change.obj.get("metadata", {}).get("resourceVersion")}
            return self._encode(DELETED, {**change.prev, "metadata": meta}, shared=False)
        return None

    def _encode(self, event_type: str, stored: Obj, shared: bool = True) -> bytes:
        """``shared``: the stored version itself, whose bytes are cached by resourceVersion
        (not an object made for this event)."""
        obj = self._req.rt.view(stored)
        if self._plain and shared:  # the common case: every watcher shares the object's cached bytes
            encoded = self._api.encoded.typed(self._req.rt, obj)
            return b'{"type":"' + event_type.encode() + b'","object":' + encoded + b"}\n"
        event = {"type": event_type, "object": self._shape(objectmeta.with_type_meta(self._req.rt, obj))}
        return json.dumps(event, separators=(",", ":")).encode() + b"\n"

    def _shape(self, obj: Obj) -> Obj:
        """The event's object in the representation the client asked for (``as=`` in Accept).

        A Table event holds a one-row Table (``kubectl get -w``); only the first carries
        column definitions. ``as=PartialObjectMetadataList`` cannot describe one object, so
        upstream sends the object unchanged, and so do we.
        """
        if self._req.as_kind == "Table":
            options = self._req.table_options
            shaped = table.to_table(self._req.rt, [obj], self._api.clock.now(), options.include_object,
                                    no_headers=self._table_headers_sent,
                                    kubernetes_version=self._api.kubernetes_version)
            self._table_headers_sent = True
            return shaped
        if self._req.as_kind == "PartialObjectMetadata":
            hidden = table.table_spec(self._req.rt, self._api.kubernetes_version).internal_annotations
            return table.partial_object_metadata(obj, hidden)
        return obj

    def _bookmark(self, rv: int, initial_end: bool = False) -> bytes:
        metadata: Obj = {"resourceVersion": str(rv)}
        if initial_end:
            metadata["annotations"] = {INITIAL_EVENTS_END: "true"}
        obj = {"kind": self._req.rt.kind, "apiVersion": self._req.rt.api_version, "metadata": metadata}
        return json.dumps({"type": BOOKMARK, "object": obj}, separators=(",", ":")).encode() + b"\n"

    def _expired(self, rv: int) -> bytes:
        oldest = self._store.history.horizon_rv() + 1
        status = errors.gone(f"too old resource version: {rv} ({oldest})").status()
        return json.dumps({"type": ERROR, "object": status}, separators=(",", ":")).encode() + b"\n"
