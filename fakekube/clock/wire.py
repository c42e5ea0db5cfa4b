"""Kubernetes' time formats on the wire: metav1.Time, metav1.MicroTime, Go durations, and reading them.

One home for these so every part writes and reads cluster time the same way.
"""

from __future__ import annotations

import functools
from datetime import datetime, timezone
from typing import Any


@functools.lru_cache(maxsize=64)  # a write stamps the same instant twice, and manual time stands still
def format_rfc3339(moment: datetime) -> str:
    """metav1.Time: second precision, ``Z`` suffix.

    Formatted by hand: ``strftime`` costs several times as much, and every write stamps one.
    """
    if moment.tzinfo is not timezone.utc:
        moment = moment.astimezone(timezone.utc)
    return (f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
            f"T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}Z")


def format_micro_time(moment: datetime) -> str:
    """metav1.MicroTime (e.g. a Lease's renewTime): microseconds, ``Z`` suffix.

    ``isoformat`` (C) rather than ``strftime``, which costs about twice as much (every Lease
    renewal stamps one); a year before 1000 goes through ``strftime``, whose ``%Y`` does not
    pad it."""
    if moment.tzinfo is not timezone.utc:
        moment = moment.astimezone(timezone.utc)
    if moment.year < 1000:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return moment.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def parse_time(value: Any) -> datetime | None:
    """A wire timestamp (or a datetime) as an aware UTC datetime; absent or empty → None.

    Strings go through a bounded cache: controllers read the same few heartbeat and lease
    times for every node on every pass.
    """
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc) if value.tzinfo else value.replace(tzinfo=timezone.utc)
    return _parse_text(str(value))


@functools.lru_cache(maxsize=4096)
def _parse_text(value: str) -> datetime:
    """``2025-01-01T00:00:40Z``, ``…40.123456789Z`` or an offset → UTC.

    By hand because Python 3.10's ``fromisoformat`` takes neither ``Z`` nor fraction
    lengths other than 3 or 6. A time without an offset is taken as UTC.
    """
    text = value.replace("Z", "+00:00").replace("z", "+00:00")
    if "." in text:
        head, _, rest = text.partition(".")
        digits = rest[:len(rest) - len(rest.lstrip("0123456789"))]  # the fraction's digits, not an offset's
        text = f"{head}.{(digits + '000000')[:6]}{rest[len(digits):]}"
    parsed = datetime.fromisoformat(text)
    return parsed.astimezone(timezone.utc) if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def format_go_duration(ns: int) -> str:
    """Go's ``time.Duration.String`` of ``ns`` nanoseconds: ``1h0m0s``, ``1m30s``, ``1.5s``,
    ``300ms``, ``0s`` (metav1.Duration on the wire, and every duration in upstream's messages)."""
    if ns == 0:
        return "0s"
    magnitude = abs(ns)
    if magnitude < 1_000:
        text = f"{magnitude}ns"
    elif magnitude < 1_000_000:
        text = _fraction(magnitude, 1_000) + "µs"
    elif magnitude < 1_000_000_000:
        text = _fraction(magnitude, 1_000_000) + "ms"
    else:
        total_seconds = magnitude // 1_000_000_000
        hours, rest = divmod(total_seconds, 3600)
        minutes = rest // 60
        text = _fraction(magnitude % 60_000_000_000, 1_000_000_000) + "s"
        if hours:
            text = f"{hours}h{minutes}m{text}"
        elif minutes:
            text = f"{minutes}m{text}"
    return "-" + text if ns < 0 else text


def _fraction(value: int, unit: int) -> str:
    whole, frac = divmod(value, unit)
    if not frac:
        return str(whole)
    return f"{whole}." + f"{frac:0{len(str(unit)) - 1}d}".rstrip("0")
