"""Reading Events: pure functions of a core/v1 Event."""

from __future__ import annotations

from typing import Any


def last_seen(event: dict[str, Any]) -> str | None:
    """When an Event was last seen, as kubectl's LAST SEEN reads it: ``lastTimestamp``, else
    ``eventTime`` (an events.k8s.io Event read as core/v1 has only that), else ``firstTimestamp``."""
    return event.get("lastTimestamp") or event.get("eventTime") or event.get("firstTimestamp") or None
