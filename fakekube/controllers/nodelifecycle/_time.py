"""Reading Kubernetes timestamps (metav1.Time and MicroTime) into aware datetimes."""

from __future__ import annotations

import functools
from datetime import datetime, timezone
from typing import Any


def parse_time(value: Any) -> datetime | None:
    """See :func:`_parse_text`; strings go through a bounded cache (the same few heartbeat
    and lease times are read for every node on every pass)."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc)
    return _parse_text(str(value))


@functools.lru_cache(maxsize=4096)
def _parse_text(value: str) -> datetime:
    """``2025-01-01T00:00:40Z`` or ``…40.123456Z`` → UTC datetime.

    Written by hand because Python 3.10's ``fromisoformat`` takes neither ``Z`` nor
    arbitrary fraction lengths.
    """
    text = value.replace("Z", "+00:00")
    if "." in text:
        head, _, rest = text.partition(".")
        digits = "".join(ch for ch in rest if ch.isdigit())
        offset = rest[len(digits):]
        text = f"{head}.{(digits + '000000')[:6]}{offset}"
    return datetime.fromisoformat(text).astimezone(timezone.utc)
