"""When a CronJob runs next, and which scheduled time it missed (upstream ``utils.go``, 1.33).

Pure: the schedule, the CronJob and ``now`` in, times out. Upstream's rough count of missed
times (the gap between two activations divided into the time since the first) is kept as
is: it decides the "too many missed start times" warning (more than 100) and where the
search for the most recent time starts, so long outages cost a bounded number of steps.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import Enum
from typing import Any, Mapping

from fakekube.clock import parse_time
from fakekube.objects.cronschedule import Schedule

#: ``nextScheduleDelta``: upstream wakes 100 ms after a scheduled time (against clock skew).
NEXT_SCHEDULE_DELTA = timedelta(milliseconds=100)
#: More missed start times than this gives the TooManyMissedTimes warning.
MANY_MISSED = 100

Obj = dict[str, Any]


class Missed(Enum):
    """``missedSchedulesType``."""

    NONE = "none"
    FEW = "few"
    MANY = "many"


class InvalidSchedule(ValueError):
    """A schedule that parses but whose activations are not at least a second apart
    (an impossible date such as ``0 0 30 2 *``)."""


def most_recent_schedule_time(cron_job: Mapping[str, Any], now: datetime, schedule: Schedule,
                              include_starting_deadline: bool) -> tuple[datetime, datetime | None, Missed]:
    """``mostRecentScheduleTime``: (the time counted from — last schedule time, creation
    time, or now - startingDeadlineSeconds —, the latest activation after it and not after
    ``now`` or None, how many were missed). Raises :class:`InvalidSchedule`."""
    meta, spec = cron_job.get("metadata") or {}, cron_job.get("spec") or {}
    status = cron_job.get("status") or {}
    earliest = parse_time(status.get("lastScheduleTime")) or parse_time(meta.get("creationTimestamp")) or now
    deadline_s = spec.get("startingDeadlineSeconds")
    if include_starting_deadline and deadline_s is not None:
        earliest = max(earliest, now - timedelta(seconds=int(deadline_s)))
    first = schedule.next(earliest)
    if first is not None and now < first:
        return earliest, None, Missed.NONE
    second = schedule.next(first) if first is not None else None
    if first is not None and second is not None and now < second:
        return earliest, first, Missed.NONE
    between_s = round((second - first).total_seconds()) if first is not None and second is not None else 0
    if first is None or between_s < 1:
        raise InvalidSchedule("time difference between two schedules is less than 1 second")
    missed = int((now - first).total_seconds()) // between_s + 1
    most_recent = None
    moment = schedule.next(first + timedelta(seconds=(missed - 2) * between_s))
    while moment is not None and moment <= now:
        most_recent, moment = moment, schedule.next(moment)
    return earliest, most_recent, Missed.MANY if missed > MANY_MISSED else Missed.FEW


def next_wake(cron_job: Mapping[str, Any], now: datetime, schedule: Schedule) -> datetime:
    """``nextScheduleTimeDuration`` as an instant: 100 ms after the next activation that
    follows the most recent one (or ``now``, after misses). A schedule that never runs
    again wakes at once, as upstream's negative delay does (its sync then reports it)."""
    try:
        earliest, most_recent, missed = most_recent_schedule_time(cron_job, now, schedule, False)
    except InvalidSchedule:
        most_recent, earliest, missed = now, now, Missed.NONE
    if most_recent is None:
        most_recent = earliest if missed is Missed.NONE else now
    following = schedule.next(most_recent)
    return now if following is None else following + NEXT_SCHEDULE_DELTA
