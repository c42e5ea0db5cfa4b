"""The event printer, for both core/v1 Events and events.k8s.io/v1 Events.

Upstream prints both through the core printer; an events.k8s.io object is first viewed
in core/v1 field names (``regarding`` → ``involvedObject``, ``note`` → ``message`` …).
"""

from __future__ import annotations

from datetime import datetime

from fakekube.api.table.cells import meta
from fakekube.api.table.columns import NAME_DOC, Cells, Column, Obj, TableSpec, col
from fakekube.api.table.duration import age


def _event_view(ev: Obj) -> Obj:
    """events.k8s.io/v1 Events in core/v1 field names, as the upstream printer sees them."""
    if "regarding" not in ev and "note" not in ev and "deprecatedSource" not in ev:
        return ev
    return {
        "metadata": ev.get("metadata") or {}, "type": ev.get("type"), "reason": ev.get("reason"),
        "involvedObject": ev.get("regarding") or {}, "message": ev.get("note", ""),
        "source": ev.get("deprecatedSource") or {}, "firstTimestamp": ev.get("deprecatedFirstTimestamp"),
        "lastTimestamp": ev.get("deprecatedLastTimestamp"), "count": ev.get("deprecatedCount", 0),
        "eventTime": ev.get("eventTime"), "series": ev.get("series"),
        "reportingComponent": ev.get("reportingController", ""), "reportingInstance": ev.get("reportingInstance", ""),
    }


def _event_cells(raw: Obj, now: datetime) -> Cells:
    ev = _event_view(raw)
    first = age(ev.get("firstTimestamp"), now) if ev.get("firstTimestamp") else age(ev.get("eventTime"), now)
    last = age(ev.get("lastTimestamp"), now) if ev.get("lastTimestamp") else first
    count = ev.get("count") or 0
    if ev.get("series"):
        last = age(ev["series"].get("lastObservedTime"), now)
        count = ev["series"].get("count", 0)
    elif count == 0:
        count = 1
    involved = ev.get("involvedObject") or {}
    kind = (involved.get("kind") or "").lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    source = ev.get("source") or {}
    component = source.get("component") or ev.get("reportingComponent") or ""
    instance = source.get("host") or ev.get("reportingInstance") or ""
    source_text = f"{component}, {instance}" if instance else component
    return [last, ev.get("type", ""), ev.get("reason", ""), target, involved.get("fieldPath", ""), source_text,
            (ev.get("message") or "").strip(), first, count, meta(raw, "name", "")]


EVENT_TABLE = TableSpec((
    col("Last Seen", description="The time at which the most recent occurrence of this event was recorded."),
    col("Type", description="Type of this event (Normal, Warning), new types could be added in the future"),
    col("Reason", description="This should be a short, machine understandable string that gives the reason for the "
                              "transition into the object's current status."),
    col("Object", description="The object that this event is about."),
    col("Subobject", description="If referring to a piece of an object instead of an entire object, this string "
                                 "should contain a valid JSON/Go field access statement.", priority=1),
    col("Source", description="The component reporting this event. Should be a short machine understandable string.",
        priority=1),
    col("Message", description="A human-readable description of the status of this operation."),
    col("First Seen", description="The time at which the event was first recorded. (Time of server receipt is in "
                                  "TypeMeta.)", priority=1),
    col("Count", description="The number of times this event has occurred.", priority=1),
    Column("Name", "string", NAME_DOC, 1, "name"),
), _event_cells)
