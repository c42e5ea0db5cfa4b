"""Reading Kubernetes timestamps (metav1.Time and MicroTime) into aware datetimes."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any


def parse_time(value: Any) -> datetime | None:
    """``2025-01-01T00:00:40Z`` or ``…40.123456Z`` → UTC datetime; absent or empty → None.

    Written by hand because Python 3.10's ``fromisoformat`` takes neither ``Z`` nor
    arbitrary fraction lengths. A datetime passes through (tests and callers may use them).
    """
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc)
    text = str(value).replace("Z", "+00:00")
    if "." in text:
        head, _, rest = text.partition(".")
        digits = "".join(ch for ch in rest if ch.isdigit())
        offset = rest[len(digits):]
        text = f"{head}.{(digits + '000000')[:6]}{offset}"
    return datetime.fromisoformat(text).astimezone(timezone.utc)
