"""Ages and durations as kubectl prints them: upstream's ``duration.HumanDuration``.

Every age in a Table is ``now - timestamp`` on the cluster's *virtual* clock, so the
caller passes ``now`` in; nothing here reads the wall clock.
"""

from __future__ import annotations

from datetime import datetime

from fakekube.clock import parse_time

UNKNOWN = "<unknown>"


def human_duration(seconds: float) -> str:
    """Upstream's ``duration.HumanDuration``: "5s", "3m10s", "70m", "2d1h", "2y1d"…

    Like Go, whole units are taken by truncation toward zero; up to one second in the
    future still reads "0s" (clock skew), further is "<invalid>".
    """
    whole_s = int(seconds)
    if whole_s < -1:
        return "<invalid>"
    if whole_s < 0:
        return "0s"
    if whole_s < 120:
        return f"{whole_s}s"
    minutes = whole_s // 60
    if minutes < 10:
        rest = whole_s % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = whole_s // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d{rest}h" if rest else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        rest = (hours // 24) % 365
        return f"{hours // 24 // 365}y{rest}d" if rest else f"{hours // 24 // 365}y"
    return f"{hours // 24 // 365}y"


def age(timestamp: str | None, now: datetime) -> str:
    """``translateTimestampSince``: the age of a timestamp, "<unknown>" if unset."""
    parsed = parse_time(timestamp)
    if parsed is None:
        return UNKNOWN
    return human_duration((now - parsed).total_seconds())
