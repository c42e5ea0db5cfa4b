"""Recording core/v1 Events the way client-go's event recorder does, on cluster time.

Every component that records events upstream (kubelets, controllers) goes through
client-go's ``tools/record`` package: ``makeEvent`` names the event ``<object>.<hex unix
nanos>`` and fills ``source``/``reportingComponent``/``reportingInstance``; then the
``EventCorrelator`` (``tools/record/events_cache.go``) decides whether it becomes a new
Event, an update of an existing one, or nothing:

1. **aggregate** (``EventAggregator``): events that differ only in their message, from
   one source about one object with one type and reason, are grouped; once 10 distinct
   messages were seen with less than 10 minutes between them, the event is replaced by
   one named afresh whose message is ``(combined from similar events): <message>``,
   counted under the group's key from then on;
2. **count** (``eventLogger``): a repeat of an event with the same key (source,
   involved object with its fieldPath, type, reason, message) updates the Event recorded
   first: ``count + 1``, ``lastTimestamp`` now, the message — there is no time window,
   only the cache (upstream keeps no other memory either);
3. **spam filter** (``EventSourceObjectSpamFilter``): per source and object a token
   bucket of 25 events refilled at one per 5 minutes; an event past it is not written,
   but step 2 has already counted it, so the next one that passes carries the full count.

A correlator belongs to one source (component and host), as each upstream process
(kubelet, controller-manager) has its own broadcaster. Here they live in the engine's
:class:`EventRecorder` (reached through the controller runtime's ``ctx.record_event``),
so a cluster reset forgets them with the rest of its state.

Memory bound: each correlator keeps three LRU caches of :data:`MAX_LRU_ENTRIES` (4096,
upstream's ``maxLruCacheEntries``) entries; an aggregation record holds at most 10
messages. At most :data:`MAX_SOURCES` correlators are kept; when one more source
records, the least recently used correlator is dropped — its next repeat creates a new
Event instead of counting, exactly as after that process restarted upstream.

Determinism: nothing reads a clock (``now`` is passed in) and every cache is ordered by
use; where upstream pops an arbitrary member of a Go set (the aggregator's key set at
its limit) we pop the oldest. Simplifications: an event whose name is taken (two events
about one object at one instant; upstream's wall-clock nanoseconds never collide) is
named after the next free nanosecond; a failed write (e.g. the namespace is terminating)
drops the event, as upstream's recorder does after its retries.

Stored Events expire ``--event-ttl`` (1 h) after their last write
(:mod:`fakekube.controllers.eventttl`); a repeat of an expired one finds no Event to
update and creates it again with its count carried on, as upstream's recorder does when
its update meets NotFound. The caches above hold keys and counts, never Events.
"""

from __future__ import annotations

import threading
from datetime import datetime
from typing import Any, Generic, Hashable, NamedTuple, TypeVar

from fakekube.api.verbs.apiserver import APIServer, WriteOptions
from fakekube.api.machinery.errors import ApiError
from fakekube.api.machinery.jsonutil import deep_copy
from fakekube.clock import format_rfc3339

Obj = dict[str, Any]
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

EVENTS = ("", "events")
NORMAL = "Normal"
WARNING = "Warning"

#: client-go's defaults (events_cache.go).
MAX_LRU_ENTRIES = 4096
AGGREGATE_MAX_EVENTS = 10
AGGREGATE_INTERVAL_S = 600.0
SPAM_BURST = 25
SPAM_QPS = 1.0 / 300.0
COMBINED_PREFIX = "(combined from similar events): "
#: Correlators (one per event source) kept per cluster; see the module docstring.
MAX_SOURCES = 8192

#: Events are written as the server's own clients write: no wire checks.
#: Every Event written is built afresh here (make_event, or a deep copy of the stored one).
_INTERNAL = WriteOptions(internal=True, fresh=True)


class EventText(NamedTuple):
    """One event to record: its type, reason and message (the object it is about is the caller's)."""

    type: str
    reason: str
    message: str


class EventSource(NamedTuple):
    """Who records: upstream's ``v1.EventSource`` (``host`` is the node name for kubelets)."""

    component: str
    host: str = ""


class LRU(Generic[K, V]):
    """groupcache's ``lru.Cache``: bounded, the least recently used entry goes first.

    A plain dict in use order (a use re-inserts its key at the end): every kubelet is an
    event source with three of these, and an ``OrderedDict``'s linked list cost about a
    third more per entry."""

    __slots__ = ("max_entries", "_items")

    def __init__(self, max_entries: int = MAX_LRU_ENTRIES) -> None:
        self.max_entries = max_entries
        self._items: dict[K, V] = {}

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: K) -> V | None:
        items = self._items
        value = items.pop(key, None)
        if value is not None:
            items[key] = value
        return value

    def add(self, key: K, value: V) -> None:
        items = self._items
        items.pop(key, None)
        items[key] = value
        while len(items) > self.max_entries:
            del items[next(iter(items))]


# -- the keys upstream groups events by ------------------------------------------------

def _involved_key(event: Obj, with_field_path: bool) -> tuple[str, ...]:
    ref = event.get("involvedObject") or {}
    parts = [ref.get("kind") or "", ref.get("namespace") or "", ref.get("name") or ""]
    if with_field_path:
        parts.append(ref.get("fieldPath") or "")
    return (*parts, ref.get("uid") or "", ref.get("apiVersion") or "")


def _source_key(event: Obj) -> tuple[str, str]:
    source = event.get("source") or {}
    return source.get("component") or "", source.get("host") or ""


def spam_key(event: Obj) -> tuple[str, ...]:
    """``getSpamKey``: source and involved object (no fieldPath) — the *subject* the other
    two keys start with, nested in them as one tuple (equal keys either way), so a
    correlator's caches can hold one subject for all their entries about one object."""
    return (*_source_key(event), *_involved_key(event, False))


def event_key(event: Obj, subject: tuple[str, ...]) -> tuple[Any, ...]:
    """``getEventKey``: source, involved object (with fieldPath), type, reason, message.
    ``subject``: the event's :func:`spam_key`."""
    return (subject, (event.get("involvedObject") or {}).get("fieldPath") or "",
            event.get("type") or "", event.get("reason") or "", event.get("message") or "")


def aggregate_key(event: Obj, subject: tuple[str, ...]) -> tuple[tuple[Any, ...], str]:
    """``EventAggregatorByReasonFunc``: (the group, the member) — members differ by message.
    ``subject``: the event's :func:`spam_key`."""
    group = (subject, event.get("type") or "", event.get("reason") or "",
             event.get("reportingComponent") or "", event.get("reportingInstance") or "")
    return group, event.get("message") or ""


def unix_nanos(moment: datetime) -> int:
    """Go's ``UnixNano`` of a cluster instant (microsecond precision, like every cluster time)."""
    return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000


# -- the three stages --------------------------------------------------------------------

class _AggregateRecord(NamedTuple):
    """One group's recent distinct events (``aggregateRecord``, in the order first seen) and
    when it was last seen. Immutable, as are the other caches' records: an update stores a
    new one, so a snapshot shares them rather than copying (cluster/statecopy.py)."""

    local_keys: tuple[str, ...] = ()
    last_s: float = float("-inf")


class EventAggregator:
    """Step 1 of the correlator (see the module docstring)."""

    __slots__ = ("_cache", "max_events", "interval_s")

    def __init__(self, max_entries: int = MAX_LRU_ENTRIES, max_events: int = AGGREGATE_MAX_EVENTS,
                 interval_s: float = AGGREGATE_INTERVAL_S) -> None:
        self._cache: LRU[tuple[str, ...], _AggregateRecord] = LRU(max_entries)
        self.max_events = max_events
        self.interval_s = interval_s

    def aggregate(self, event: Obj, now: datetime, subject: tuple[str, ...], now_s: float) -> tuple[Obj, Hashable]:
        """(the event to record, its cache key): the event itself, or a combined one.
        ``subject`` and ``now_s``: the event's :func:`spam_key` and ``now.timestamp()``, shared."""
        group, member = aggregate_key(event, subject)
        record = self._cache.get(group)
        if record is None or now_s - record.last_s > self.interval_s:
            record = _AggregateRecord()
        keys = record.local_keys if member in record.local_keys else (*record.local_keys, member)
        if len(keys) < self.max_events:
            self._cache.add(group, _AggregateRecord(keys, now_s))
            return event, event_key(event, group[0])
        self._cache.add(group, _AggregateRecord(keys[1:], now_s))  # upstream: PopAny
        return _combined(event, now), ("aggregate", group)


def _combined(event: Obj, now: datetime) -> Obj:
    """The aggregate event upstream builds: a fresh name, count 1, no reporting fields."""
    stamp = format_rfc3339(now)
    ref = event["involvedObject"]
    return {"metadata": {"name": f"{ref.get('name')}.{unix_nanos(now):x}",
                         "namespace": event["metadata"]["namespace"]},
            "involvedObject": dict(ref), "reason": event.get("reason"),
            "message": COMBINED_PREFIX + (event.get("message") or ""), "source": dict(event.get("source") or {}),
            "firstTimestamp": stamp, "lastTimestamp": stamp, "count": 1, "type": event.get("type"),
            "eventTime": None, "reportingComponent": "", "reportingInstance": ""}


class _Observation(NamedTuple):
    """What the logger last wrote for one event key (``eventLog``): a repeat continues it."""

    times: int
    first_timestamp: str
    name: str


class EventLogger:
    """Step 2: counts repeats; a repeat takes the first occurrence's name and firstTimestamp."""

    __slots__ = ("_cache",)

    def __init__(self, max_entries: int = MAX_LRU_ENTRIES) -> None:
        self._cache: LRU[Hashable, _Observation] = LRU(max_entries)

    def observe(self, event: Obj, key: Hashable) -> Obj:
        """The event as it should be written (``count > 1``: an update of ``metadata.name``)."""
        last = self._cache.get(key)
        if last is not None and last.times > 0:
            event = dict(event, metadata=dict(event["metadata"], name=last.name),
                         firstTimestamp=last.first_timestamp, count=last.times + 1)
        self._cache.add(key, _Observation(event["count"], event["firstTimestamp"], event["metadata"]["name"]))
        return event

    def renamed(self, key: Hashable, name: str) -> None:
        """The server stored the event under ``name`` (a taken name got a suffix)."""
        observation = self._cache.get(key)
        if observation is not None:
            self._cache.add(key, observation._replace(name=name))


class _Bucket(NamedTuple):
    """One source-and-object's token bucket: tokens left and when they were last counted."""

    tokens: float
    last_s: float


class SpamFilter:
    """Step 3: a token bucket per source and object (golang.org/x/time/rate, full at first)."""

    __slots__ = ("_cache", "burst", "qps")

    def __init__(self, max_entries: int = MAX_LRU_ENTRIES, burst: int = SPAM_BURST, qps: float = SPAM_QPS) -> None:
        self._cache: LRU[tuple[str, ...], _Bucket] = LRU(max_entries)
        self.burst = burst
        self.qps = qps

    def allows(self, subject: tuple[str, ...], now_s: float) -> bool:
        """Whether an event about ``subject`` (its :func:`spam_key`) may be written at ``now_s``."""
        bucket = self._cache.get(subject) or _Bucket(float(self.burst), now_s)
        tokens = min(float(self.burst), bucket.tokens + max(0.0, now_s - bucket.last_s) * self.qps)
        allowed = tokens >= 1.0
        self._cache.add(subject, _Bucket(tokens - 1.0 if allowed else tokens, max(bucket.last_s, now_s)))
        return allowed


class EventCorrelator:
    """client-go's ``EventCorrelator`` for one source: aggregate, count, filter (slotted, as
    are its parts: one per kubelet).

    ``refs`` is not upstream's: the ``source`` and the last ``involvedObject`` its Events
    carry, shared by every Event that carries the same (stored objects are immutable, so
    they may share parts): a kubelet's seven start events about its node hold one of each
    instead of seven; and their subject (:func:`spam_key`), which every cache key about that
    object then holds as one tuple."""

    __slots__ = ("aggregator", "logger", "spam", "refs")

    def __init__(self, max_entries: int = MAX_LRU_ENTRIES) -> None:
        self.aggregator = EventAggregator(max_entries)
        self.logger = EventLogger(max_entries)
        self.spam = SpamFilter(max_entries)
        self.refs: tuple[Obj, Obj, tuple[str, ...]] | None = None

    def shared_refs(self, involved: Obj, source: EventSource) -> tuple[Obj, Obj, tuple[str, ...]]:
        """(the involvedObject, the source, their subject) a new Event about ``involved``
        carries: the ones the previous Event carried when equal, else new ones (kept)."""
        refs = self.refs
        if refs is not None and refs[0] == involved:
            return refs
        involved_obj, source_obj = dict(involved), refs[1] if refs is not None else _source_object(source)
        self.refs = (involved_obj, source_obj, spam_key({"involvedObject": involved_obj, "source": source_obj}))
        return self.refs

    def correlate(self, event: Obj, now: datetime, subject: tuple[str, ...], now_s: float
                  ) -> tuple[Obj | None, Hashable]:
        """(the event to write, or None when the spam filter drops it; its logger key).
        ``subject`` and ``now_s``: the event's :func:`spam_key` and ``now.timestamp()``."""
        aggregated, key = self.aggregator.aggregate(event, now, subject, now_s)
        observed = self.logger.observe(aggregated, key)
        return (observed if self.spam.allows(subject, now_s) else None), key


# -- the recorder --------------------------------------------------------------------------

class EventRecorder:
    """One cluster's event recording: a correlator per source, and the writes to the store."""

    def __init__(self, max_sources: int = MAX_SOURCES) -> None:
        self._correlators: LRU[EventSource, EventCorrelator] = LRU(max_sources)
        self._lock = threading.Lock()
        #: The last instant recorded at and its ``timestamp()``: the caches' records of one
        #: instant share one float.
        self._now_s: tuple[datetime, float] | None = None

    def __len__(self) -> int:
        """Correlators kept (the bound in the module docstring)."""
        return len(self._correlators)

    def record(self, api: APIServer, now: datetime, involved: Obj, event_type: str, reason: str,
               message: str, source: EventSource) -> Obj | None:
        """Record one event about ``involved`` (an ObjectReference); returns what was stored, if anything."""
        with api.store.lock, self._lock:  # always in this order: a caller may already hold the store's
            correlator = self._correlators.get(source)
            if correlator is None:
                correlator = EventCorrelator()
                self._correlators.add(source, correlator)
            refs = correlator.shared_refs(involved, source)
            event = make_event(now, involved, event_type, reason, message, source, (refs[0], refs[1]))
            if self._now_s is None or self._now_s[0] != now:
                self._now_s = (now, now.timestamp())
            result, key = correlator.correlate(event, now, refs[2], self._now_s[1])
            if result is None:
                return None
            written = _write(api, result)
            if written is not None and written["metadata"]["name"] != result["metadata"]["name"]:
                correlator.logger.renamed(key, written["metadata"]["name"])
            return written


def make_event(now: datetime, involved: Obj, event_type: str, reason: str, message: str,
               source: EventSource, refs: tuple[Obj, Obj] | None = None) -> Obj:
    """client-go's ``makeEvent``: a core/v1 Event, fields in upstream's order. ``refs``: the
    involvedObject and source dicts to carry (shared with other Events), else new ones."""
    stamp = format_rfc3339(now)
    involved_obj, source_obj = refs if refs is not None else (dict(involved), _source_object(source))
    return {"metadata": {"name": f"{involved.get('name')}.{unix_nanos(now):x}",
                         "namespace": involved.get("namespace") or "default"},
            "involvedObject": involved_obj, "reason": reason, "message": message, "source": source_obj,
            "firstTimestamp": stamp, "lastTimestamp": stamp, "count": 1, "type": event_type,
            "eventTime": None, "reportingComponent": source.component, "reportingInstance": source.host}


def _source_object(source: EventSource) -> Obj:
    """An Event's ``source``: the component, and the host when there is one."""
    source_obj = {"component": source.component}
    if source.host:
        source_obj["host"] = source.host
    return source_obj


def object_reference(obj: Obj, kind: str, api_version: str = "v1", field_path: str = "",
                     resource_version: bool = False) -> Obj:
    """An ObjectReference to a stored object, fields in upstream's order (empty ones omitted).

    ``resource_version``: include the object's resourceVersion, as ``ref.GetReference`` does
    (kubelets); controllers that build their references by hand leave it out.
    """
    meta = obj.get("metadata") or {}
    ref: Obj = {"kind": kind}
    if meta.get("namespace"):
        ref["namespace"] = meta["namespace"]
    ref.update(name=meta.get("name"), uid=meta.get("uid"), apiVersion=api_version)
    if resource_version and meta.get("resourceVersion"):
        ref["resourceVersion"] = meta["resourceVersion"]
    if field_path:
        ref["fieldPath"] = field_path
    return ref


def _write(api: APIServer, event: Obj) -> Obj | None:
    """Create the event, or update the one it repeats (re-created if it was deleted meanwhile)."""
    rt = api.registry.lookup("", "v1", "events")
    namespace, name = event["metadata"]["namespace"], event["metadata"]["name"]
    with api.store.lock:
        try:
            if event["count"] > 1:
                existing = api.store.get(EVENTS, (namespace, name))
                if existing is not None:
                    updated = deep_copy(existing)
                    updated.update(count=event["count"], lastTimestamp=event["lastTimestamp"], message=event["message"])
                    return api.update(rt, namespace, name, updated, _INTERNAL).obj
            body = dict(event, metadata=free_event_name(api, namespace, name))
            written = api.create_recorded_event(rt, body)  # the trusted create, when admission is quiet
            return written if written is not None else api.create(rt, namespace, body, _INTERNAL).obj
        except ApiError:
            return None  # upstream's recorder gives up on an event the server refuses


def free_event_name(api: APIServer, namespace: str, name: str) -> Obj:
    """``name`` (``<object>.<hex nanos>``), or the next free nanosecond after it when it is taken."""
    candidate = name
    prefix, _, hex_nanos = name.rpartition(".")
    nanos = int(hex_nanos, 16) if prefix and _is_hex(hex_nanos) else None
    while api.store.get(EVENTS, (namespace, candidate)) is not None:
        if nanos is None:
            raise ApiError(409, "AlreadyExists", f'events "{candidate}" already exists')
        nanos += 1
        candidate = f"{prefix}.{nanos:x}"
    return {"name": candidate, "namespace": namespace}


def _is_hex(text: str) -> bool:
    return bool(text) and all(ch in "0123456789abcdef" for ch in text)


def list_events(api: APIServer, namespace: str | None = None, involved_name: str | None = None,
                reason: str | None = None) -> list[Obj]:
    """The cluster's core/v1 Events in the order they were last written (resourceVersion order:
    a repeat that bumps ``count`` moves its Event to the end), optionally filtered. Copies."""
    events, _ = api.store.list(EVENTS, namespace or "")
    chosen = [e for e in events
              if (involved_name is None or (e.get("involvedObject") or {}).get("name") == involved_name)
              and (reason is None or e.get("reason") == reason)]
    chosen.sort(key=lambda e: int(e["metadata"]["resourceVersion"]))
    return [deep_copy({"apiVersion": "v1", "kind": "Event", **e}) for e in chosen]
