"""Events, served twice: core/v1 ``events`` and events.k8s.io/v1 ``events`` are one store.

Upstream keeps both APIs' Events in one etcd resource (the internal ``core.Event``;
events.k8s.io is a cohabiting resource of core's), so an Event written through either
API is read through both. Here the store holds core/v1's shape and the events.k8s.io
type converts at the API's edge (``ResourceType.stored_as``), field for field as
upstream's ``pkg/apis/events/v1/conversion.go``:

==========================  ==========================
core/v1                     events.k8s.io/v1
==========================  ==========================
involvedObject              regarding
message                     note
source                      deprecatedSource
firstTimestamp              deprecatedFirstTimestamp
lastTimestamp               deprecatedLastTimestamp
count                       deprecatedCount
reportingComponent          reportingController
(the others: same names)    eventTime, series, action, reason, related, type, reportingInstance
==========================  ==========================

Each direction builds the object Go's JSON encoder would write for the target type: its
field order, and its zero values where Go writes them (a struct field is never omitted:
``source: {}``, ``firstTimestamp: null``; ``count`` 0 and empty strings tagged
``omitempty`` are). Validation is upstream's ``ValidateEventCreate``/``Update``
(``pkg/apis/core/validation/events.go``): the legacy rules for every Event, and for
writes through events.k8s.io/v1 the strict ones — which, being run on the internal type,
name core/v1's fields (``message``, ``firstTimestamp``) even there.
"""

from __future__ import annotations

from typing import Any

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FieldError
from fakekube.api.machinery.validation import is_qualified_name
from fakekube.api.registry import ResourceType, Strategy
from fakekube.api.selectors import EVENTS_V1_FIELD_SET
from fakekube.api.table import EVENT_TABLE
from fakekube.api.types._util import Obj, immutable

#: ``pkg/apis/core/validation/events.go``'s limits (bytes, as Go's ``len``).
REPORTING_INSTANCE_LENGTH_LIMIT = 128
ACTION_LENGTH_LIMIT = 128
REASON_LENGTH_LIMIT = 128
NOTE_LENGTH_LIMIT = 1024

NORMAL = "Normal"
WARNING = "Warning"


# -- conversion ----------------------------------------------------------------------------

def _put(out: Obj, name: str, value: Any) -> None:
    """Set an ``omitempty`` field only when it is not Go's zero value."""
    if value:
        out[name] = value


def core_to_events_v1(event: Obj) -> Obj:
    """A stored (core/v1) Event as events.k8s.io/v1 shows it."""
    out: Obj = {"metadata": event.get("metadata") or {}, "eventTime": event.get("eventTime")}
    series = event.get("series")
    if series:
        out["series"] = {"count": series.get("count") or 0, "lastObservedTime": series.get("lastObservedTime")}
    _put(out, "reportingController", event.get("reportingComponent"))
    _put(out, "reportingInstance", event.get("reportingInstance"))
    _put(out, "action", event.get("action"))
    _put(out, "reason", event.get("reason"))
    out["regarding"] = event.get("involvedObject") or {}
    _put(out, "related", event.get("related"))
    _put(out, "note", event.get("message"))
    _put(out, "type", event.get("type"))
    out["deprecatedSource"] = event.get("source") or {}
    out["deprecatedFirstTimestamp"] = event.get("firstTimestamp")
    out["deprecatedLastTimestamp"] = event.get("lastTimestamp")
    _put(out, "deprecatedCount", event.get("count"))
    return out


def events_v1_to_core(event: Obj) -> Obj:
    """An events.k8s.io/v1 Event in the stored (core/v1) shape."""
    out: Obj = {"metadata": event.get("metadata") or {}, "involvedObject": event.get("regarding") or {}}
    _put(out, "reason", event.get("reason"))
    _put(out, "message", event.get("note"))
    out["source"] = event.get("deprecatedSource") or {}
    out["firstTimestamp"] = event.get("deprecatedFirstTimestamp")
    out["lastTimestamp"] = event.get("deprecatedLastTimestamp")
    _put(out, "count", event.get("deprecatedCount"))
    _put(out, "type", event.get("type"))
    out["eventTime"] = event.get("eventTime")
    series = event.get("series")
    if series:
        core_series: Obj = {}
        _put(core_series, "count", series.get("count"))
        core_series["lastObservedTime"] = series.get("lastObservedTime")
        out["series"] = core_series
    _put(out, "action", event.get("action"))
    _put(out, "related", event.get("related"))
    out["reportingComponent"] = event.get("reportingController") or ""
    out["reportingInstance"] = event.get("reportingInstance") or ""
    return out


# -- validation (on the stored shape) ------------------------------------------------------

def _byte_length(value: Any) -> int:
    return len(value.encode()) if isinstance(value, str) else 0


def _namespace_problems(event: Obj) -> list[FieldError]:
    """The involved object's namespace against the event's (relaxed for new-style events)."""
    namespace = (event.get("metadata") or {}).get("namespace") or ""
    involved_ns = (event.get("involvedObject") or {}).get("namespace") or ""
    if event.get("eventTime"):
        allowed = involved_ns or namespace in ("default", "kube-system")
    elif involved_ns:
        allowed = namespace == involved_ns
    else:
        allowed = not namespace or namespace == "default"
    return [] if allowed else [errors.invalid("involvedObject.namespace", involved_ns, "does not match event.namespace")]


def _required_and_bounded(event: Obj, name: str, limit: int) -> list[FieldError]:
    value = event.get(name) or ""
    if not value:
        return [errors.required(name)]
    if _byte_length(value) > limit:
        return [errors.invalid(name, "", f"can have at most {limit} characters")]
    return []


def legacy_event_problems(event: Obj) -> list[FieldError]:
    """``legacyValidateEvent``: every Event, through either API. A new-style event (with an
    ``eventTime``) must name its reporter, action and reason and keep its message short."""
    problems = _namespace_problems(event)
    if not event.get("eventTime"):
        return problems
    controller = event.get("reportingComponent") or ""
    if not controller:
        problems.append(errors.required("reportingController"))
    problems += [errors.invalid("reportingController", controller, msg) for msg in is_qualified_name(controller)]
    problems += _required_and_bounded(event, "reportingInstance", REPORTING_INSTANCE_LENGTH_LIMIT)
    problems += _required_and_bounded(event, "action", ACTION_LENGTH_LIMIT)
    problems += _required_and_bounded(event, "reason", REASON_LENGTH_LIMIT)
    if _byte_length(event.get("message")) > NOTE_LENGTH_LIMIT:
        problems.append(errors.invalid("message", "", f"can have at most {NOTE_LENGTH_LIMIT} characters"))
    return problems


def _series_problems(event: Obj) -> list[FieldError]:
    series = event.get("series")
    if not series:
        return []
    problems = []
    if (series.get("count") or 0) < 2:
        problems.append(errors.invalid("series.count", "", "should be at least 2"))
    if not series.get("lastObservedTime"):
        problems.append(errors.required("series.lastObservedTime"))
    return problems


def _strict_create_problems(event: Obj) -> list[FieldError]:
    """What events.k8s.io/v1 adds on create: a new-style event without the old fields."""
    problems = _series_problems(event)
    if not event.get("eventTime"):
        problems.append(errors.required("eventTime"))
    if event.get("type") not in (NORMAL, WARNING):
        problems.append(errors.invalid("type", "", f"has invalid value: {event.get('type') or ''}"))
    for name in ("firstTimestamp", "lastTimestamp", "count"):
        if event.get(name):
            problems.append(errors.invalid(name, "", "needs to be unset"))
    source = event.get("source") or {}
    if source.get("component") or source.get("host"):
        problems.append(errors.invalid("source", "", "needs to be unset"))
    return problems


#: The fields an update through events.k8s.io/v1 may not change, in upstream's order.
_IMMUTABLE = ("involvedObject", "reason", "message", "source", "firstTimestamp", "lastTimestamp", "count",
              "reason", "type", "eventTime", "action", "related", "reportingComponent", "reportingInstance")
#: The path upstream's error names for each (the internal type's field names).
_IMMUTABLE_PATH = {"reportingComponent": "reportingController"}


class EventsV1Strategy(Strategy):
    """events.k8s.io/v1 Events: a view of the core/v1 store with the strict rules."""

    def to_storage(self, obj: Obj) -> Obj:
        return events_v1_to_core(obj)

    def from_storage(self, obj: Obj) -> Obj:
        return core_to_events_v1(obj)

    def validate(self, obj: Obj) -> list[FieldError]:
        return legacy_event_problems(obj) + _strict_create_problems(obj)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        problems = legacy_event_problems(new)
        if new.get("series") != old.get("series"):
            problems += _series_problems(new)
        for name in _IMMUTABLE:  # an absent field and its zero value are the same Go value
            problems += immutable(new.get(name) or None, old.get(name) or None, _IMMUTABLE_PATH.get(name, name))
        return problems


EVENTS_V1 = ResourceType(
    "events.k8s.io", "v1", "Event", "events", namespaced=True, short_names=("ev",), strategy=EventsV1Strategy(),
    table=EVENT_TABLE, field_set=EVENTS_V1_FIELD_SET, create_on_update=True, stored_as=("", "events"),
)
