"""Recording events.k8s.io/v1 Events the way client-go's ``tools/events`` does, on cluster time.

kube-scheduler (and any component built on ``tools/events``) records through the new
Events API, not through ``tools/record`` (:mod:`fakekube.engine.events`). What users see
differs (``tools/events/event_broadcaster.go`` and ``event_recorder.go``, client-go
v0.33):

* **the event**: named ``<object>.<hex unix nanos>``; ``eventTime`` (a MicroTime) is set,
  and through core/v1 ``firstTimestamp``/``lastTimestamp`` are null, ``count`` absent and
  ``source`` empty; ``reportingController`` (core/v1: ``reportingComponent``) is the
  recorder's name, ``reportingInstance`` ``<controller>-<hostname>`` (on kind
  ``default-scheduler-kind-control-plane``; here :data:`CONTROL_PLANE_HOST`), ``action``
  says what was being done. ``kubectl describe`` shows ``From: default-scheduler``
  (``source.component``, else ``reportingController``) and, for a series,
  ``<last seen> (xN over <age>)``; ``kubectl get events`` shows LAST SEEN from
  ``series.lastObservedTime`` (else ``eventTime``) and COUNT ``series.count`` (else 1).
* **isomorphic events** — equal type, action, reason, reporting controller and instance,
  regarding and related references (the *note is not compared*; the references carry the
  object's resourceVersion) — make a **series** on the first one's Event: the second
  occurrence patches ``series: {count: 2, lastObservedTime}`` at once; later ones only
  count in memory, written by the periodic passes below. The note stays the first one's.
* **the cache** of the last event per key is swept every 6 minutes (``finishTime``) from
  the broadcaster's start: a series not observed in the 6 minutes before the sweep gets
  its final count written and is forgotten; a singleton older than 6 minutes is
  forgotten (its next occurrence is a new Event). Every 30 minutes (``refreshTime``)
  every series is written again (re-created if it was deleted meanwhile).
* no aggregation and no spam filter (those are ``tools/record``'s), no note truncation
  (kube-scheduler truncates its notes itself: :func:`truncate_note`).

Memory bound: at most :data:`MAX_CACHE_ENTRIES` (16,384) keys, least recently used first
out (upstream's map is unbounded, swept every 6 minutes); a series pushed out has its
count written first, so no occurrence is lost, and its next occurrence starts a new
Event, as after the sweep. Expired singletons are dropped lazily, on lookup and from the
old end of the cache on every record.

Determinism and time: ``now`` is passed in; the sweeps run on clock timers at
``started_at + k × 6 min`` (armed only while a series exists), and a sweep due at an
instant runs before the work of that instant. Simplifications: one broadcaster for all
reporters (upstream: one per process, each sweeping from its own start — here all
from the cluster's start); a taken name (two events about one object at one instant)
moves to the next free nanosecond; a refused write is dropped at once (upstream retries
transport errors up to 12 times, never a refusal).
"""

from __future__ import annotations

import functools
import json
import threading
from collections import OrderedDict
from datetime import datetime, timedelta
from typing import Any, Callable, Hashable, NamedTuple

from fakekube.api.machinery.errors import ApiError
from fakekube.api.machinery.validation import name_is_dns_subdomain
from fakekube.api.registry import ResourceType
from fakekube.api.verbs.apiserver import STRATEGIC_MERGE_PATCH, APIServer, WriteOptions
from fakekube.clock import Timer, format_micro_time
from fakekube.engine.events import NORMAL, WARNING, free_event_name, unix_nanos

Obj = dict[str, Any]
Key = tuple[Hashable, ...]

#: Keys remembered (see the module docstring).
MAX_CACHE_ENTRIES = 16_384
#: client-go's ``finishTime`` and ``refreshTime``.
FINISH_PERIOD_S = 360.0
REFRESH_PERIOD_S = 1800.0
#: The hostname the control plane's components report (``reportingInstance`` suffix).
CONTROL_PLANE_HOST = "fakekube-control-plane"
#: ``NoteLengthLimit`` (bytes) and kube-scheduler's ``truncateMessage`` suffix.
NOTE_LENGTH_LIMIT = 1024
TRUNCATED_SUFFIX = " ..."

_EVENTS_V1 = ("events.k8s.io", "v1", "events")
#: Every Event body is built afresh here: no wire checks, no defensive copy.
_INTERNAL = WriteOptions(internal=True, fresh=True)
_PATCH = WriteOptions(internal=True)
_MICROS = timedelta(microseconds=1)


def truncate_note(note: str, limit: int = NOTE_LENGTH_LIMIT) -> str:
    """kube-scheduler's ``truncateMessage``: a note past ``limit`` bytes keeps its first
    ``limit - 4`` bytes and ends with `` ...`` (a character cut in half is dropped whole)."""
    raw = note.encode()
    if len(raw) <= limit:
        return note
    return raw[:limit - len(TRUNCATED_SUFFIX)].decode(errors="ignore") + TRUNCATED_SUFFIX


def default_instance(reporting_controller: str, host: str = CONTROL_PLANE_HOST) -> str:
    """``NewRecorder``'s ``reportingInstance``: the controller's name, a dash, the hostname."""
    return f"{reporting_controller}-{host}"


class EventsApiEvent(NamedTuple):
    """One occurrence to record: what happened to which object, and who reports it."""

    regarding: Obj  # an ObjectReference (engine.events.object_reference with resource_version=True), never edited
    related: Obj | None
    type: str
    reason: str
    action: str
    note: str
    reporting_controller: str
    reporting_instance: str

    def key(self) -> Key:
        """``getKey``: everything but the note."""
        related = tuple(self.related.items()) if self.related else ()
        return (self.type, self.action, self.reason, self.reporting_controller, self.reporting_instance,
                tuple(self.regarding.items()), related)


class _Entry:
    """The cached event of one key: enough to rebuild its body, and its series."""

    __slots__ = ("occurrence", "namespace", "name", "event_time", "count", "last_observed")

    def __init__(self, occurrence: EventsApiEvent, namespace: str, name: str, event_time: datetime,
                 count: int = 1, last_observed: datetime | None = None) -> None:
        self.occurrence = occurrence
        self.namespace = namespace
        self.name = name
        self.event_time = event_time
        self.count = count  # >= 2: a series
        self.last_observed = last_observed

    @property
    def is_series(self) -> bool:
        return self.count >= 2


class EventsApiRecorder:
    """One cluster's ``tools/events`` broadcaster: the isomorphic-event cache and its sweeps."""

    def __init__(self, api: APIServer, call_at: Callable[[datetime, Callable[[], None]], Timer],
                 started_at: datetime, new_uid: Callable[[], str], max_entries: int = MAX_CACHE_ENTRIES) -> None:
        self._api = api
        self._call_at = call_at
        self._started_at = started_at
        self._new_uid = new_uid
        self.max_entries = max_entries
        self._entries: OrderedDict[Key, _Entry] = OrderedDict()
        self._timer: Timer | None = None
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """Keys cached (the bound in the module docstring)."""
        return len(self._entries)

    @property
    def next_sweep(self) -> datetime | None:
        """When the armed sweep runs (None: no series to sweep)."""
        return self._timer.deadline if self._timer is not None else None

    def record(self, now: datetime, occurrence: EventsApiEvent) -> Obj | None:
        """Record one occurrence at ``now``; returns the Event written (events.k8s.io/v1), or
        None when nothing was written (a series counted in memory, a bad type, a refusal)."""
        if occurrence.type not in (NORMAL, WARNING):
            return None  # upstream logs "Unsupported event type" and drops it
        key = occurrence.key()
        with self._api.store.lock, self._lock:  # always in this order, as the other recorder
            entry = self._entries.get(key)
            if entry is not None and not entry.is_series and self._forgotten(entry.event_time, now):
                del self._entries[key]
                entry = None
            if entry is None:
                return self._first(key, occurrence, now)
            self._entries.move_to_end(key)
            entry.count += 1
            entry.last_observed = now
            if entry.count > 2:
                return None  # written by the sweeps
            self._arm(now)
            return self._write_series(entry)

    # -- the cache ----------------------------------------------------------------------
    def _first(self, key: Key, occurrence: EventsApiEvent, now: datetime) -> Obj | None:
        namespace = occurrence.regarding.get("namespace") or "default"
        entry = _Entry(occurrence, namespace, self._event_name(occurrence, now), now)
        self._entries[key] = entry
        self._drop_forgotten(now)
        while len(self._entries) > self.max_entries:
            _, evicted = self._entries.popitem(last=False)
            if evicted.is_series:
                self._write_series(evicted)  # its last count, as the sweep would
        return self._create(entry, series=False)

    def _forgotten(self, event_time: datetime, now: datetime) -> bool:
        """Whether a sweep at or before ``now`` found a singleton from ``event_time`` over
        6 minutes old: the first sweep strictly after ``event_time + 6 min`` is due by now."""
        return self._first_sweep_after(event_time + timedelta(seconds=FINISH_PERIOD_S)) <= now

    def _first_sweep_after(self, moment: datetime) -> datetime:
        period_us = int(FINISH_PERIOD_S * 1_000_000)
        elapsed_us = (moment - self._started_at) // _MICROS
        return self._started_at + timedelta(microseconds=(elapsed_us // period_us + 1) * period_us)

    def _drop_forgotten(self, now: datetime) -> None:
        """Forget the expired singletons at the old end of the cache (its order is by last use)."""
        while self._entries:
            key, entry = next(iter(self._entries.items()))
            if entry.is_series or not self._forgotten(entry.event_time, now):
                return
            del self._entries[key]

    # -- the sweeps ---------------------------------------------------------------------
    def _arm(self, now: datetime) -> None:
        if self._timer is None:
            deadline = self._first_sweep_after(now)
            self._timer = self._call_at(deadline, functools.partial(self.sweep, deadline))  # data, not a closure

    def sweep(self, at: datetime) -> None:
        """The 6-minute ``finishSeries`` pass (and at every 30 minutes ``refreshExistingEventSeries``)
        as due at ``at``; re-arms itself while any series is left."""
        finished_before = at - timedelta(seconds=FINISH_PERIOD_S)
        with self._api.store.lock, self._lock:
            self._timer = None
            for key, entry in list(self._entries.items()):
                if entry.is_series:
                    assert entry.last_observed is not None
                    if entry.last_observed < finished_before:
                        self._write_series(entry)
                        del self._entries[key]
                elif entry.event_time < finished_before:
                    del self._entries[key]
            series = [entry for entry in self._entries.values() if entry.is_series]
            elapsed_us = (at - self._started_at) // _MICROS
            if elapsed_us % int(REFRESH_PERIOD_S * 1_000_000) == 0:
                for entry in series:
                    self._write_series(entry)
            if series:
                self._arm(at)

    # -- writes -------------------------------------------------------------------------
    def _event_name(self, occurrence: EventsApiEvent, now: datetime) -> str:
        """``GenerateEventName``: ``<object>.<hex nanos>``, or a UUID when that is no valid name."""
        name = f"{occurrence.regarding.get('name')}.{unix_nanos(now):x}"
        return name if not name_is_dns_subdomain(name) else self._new_uid()

    def _create(self, entry: _Entry, series: bool) -> Obj | None:
        body = _body(entry, series)
        try:
            body["metadata"] = free_event_name(self._api, entry.namespace, entry.name)
            rt = self._rt()
            written = self._api.create_recorded_event(rt, body)  # the trusted create, when admission is quiet
            if written is None:
                written = self._api.create(rt, entry.namespace, body, _INTERNAL).obj
        except ApiError:
            return None  # upstream: "Server rejected event (will not retry!)"
        entry.name = written["metadata"]["name"]
        return written

    def _write_series(self, entry: _Entry) -> Obj | None:
        """``recordEvent`` of a series: patch its count in, or create it when it is gone."""
        patch = {"series": _series(entry)}
        try:
            return self._api.patch(self._rt(), entry.namespace, entry.name, STRATEGIC_MERGE_PATCH,
                                   json.dumps(patch).encode(), _PATCH).obj
        except ApiError as exc:
            if exc.code != 404:
                return None
        return self._create(entry, series=True)

    def _rt(self) -> ResourceType:
        return self._api.registry.lookup(*_EVENTS_V1)


def _series(entry: _Entry) -> Obj:
    assert entry.last_observed is not None
    return {"count": entry.count, "lastObservedTime": format_micro_time(entry.last_observed)}


def _body(entry: _Entry, series: bool) -> Obj:
    """``makeEvent``'s events.k8s.io/v1 Event (fields in Go's order, empty ones omitted)."""
    occurrence = entry.occurrence
    body: Obj = {"metadata": {"name": entry.name, "namespace": entry.namespace},
                 "eventTime": format_micro_time(entry.event_time)}
    if series:
        body["series"] = _series(entry)
    body.update(reportingController=occurrence.reporting_controller, reportingInstance=occurrence.reporting_instance,
                action=occurrence.action, reason=occurrence.reason, regarding=dict(occurrence.regarding))
    if occurrence.related:
        body["related"] = dict(occurrence.related)
    if occurrence.note:
        body["note"] = occurrence.note
    body["type"] = occurrence.type
    return body
