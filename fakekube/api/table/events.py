"""The event printer, for both core/v1 Events and events.k8s.io/v1 Events.

Upstream prints both through the core printer; an events.k8s.io object is first viewed
in core/v1 field names (``regarding`` → ``involvedObject``, ``note`` → ``message`` …).
"""

from __future__ import annotations

from datetime import datetime

from fakekube.api.table.cells import meta
from fakekube.api.table.columns import OBJECT_META, Cells, Column, Obj, TableSpec, doc
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
    doc("Last Seen", "core.v1.Event", "lastTimestamp"),
    doc("Type", "core.v1.Event", "type"),
    doc("Reason", "core.v1.Event", "reason"),
    doc("Object", "core.v1.Event", "involvedObject"),
    doc("Subobject", "core.v1.ObjectReference", "fieldPath", priority=1),
    doc("Source", "core.v1.Event", "source", priority=1),
    doc("Message", "core.v1.Event", "message"),
    doc("First Seen", "core.v1.Event", "firstTimestamp", priority=1),
    doc("Count", "core.v1.Event", "count", priority=1),
    Column("Name", priority=1, format="name", doc=(OBJECT_META, "name")),
), _event_cells)
