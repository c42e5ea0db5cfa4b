"""Recording core/v1 Events the way upstream's event recorder names and fills them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fakekube.api.apiserver import APIServer
from fakekube.clock import format_rfc3339
from fakekube.controllers.common import INTERNAL

Obj = dict[str, Any]
EVENTS = ("", "events")


def record_event(api: APIServer, now: datetime, involved: Obj, kind: str, event_type: str, reason: str,
                 message: str, component: str) -> Obj:
    """Create an Event about ``involved`` (an object as stored), named ``<name>.<hex nanos>``.

    Upstream names events after the object and the wall time in nanoseconds; here that is
    cluster time, so names are the same on every run. Two events about one object at one
    instant get a numeric suffix.
    """
    meta = involved.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    nanos = int(now.timestamp()) * 1_000_000_000 + now.microsecond * 1000
    base = f"{meta.get('name')}.{nanos:x}"
    name, suffix = base, 0
    while api.store.get(EVENTS, (namespace, name)) is not None:
        suffix += 1
        name = f"{base}.{suffix}"
    stamp = format_rfc3339(now)
    event = {
        "metadata": {"name": name, "namespace": namespace},
        "involvedObject": {"kind": kind, "namespace": meta.get("namespace") or "", "name": meta.get("name"),
                           "uid": meta.get("uid"), "apiVersion": "v1"},
        "reason": reason, "message": message, "type": event_type,
        "source": {"component": component}, "firstTimestamp": stamp, "lastTimestamp": stamp, "count": 1,
        "reportingComponent": component, "reportingInstance": "",
    }
    if not event["involvedObject"]["namespace"]:
        del event["involvedObject"]["namespace"]
    rt = api.registry.lookup("", "v1", "events")
    return api.create(rt, namespace, event, INTERNAL).obj
