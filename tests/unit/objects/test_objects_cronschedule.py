"""objects/cronschedule.py: robfig/cron v3's ParseStandard — what it accepts, its error texts,
and the instants ``Next`` gives, time zones and DST changes included."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from fakekube.objects.cronschedule import ScheduleError, parse_go_duration_ns, parse_standard


def next_after(spec: str, after: str) -> str | None:
    found = parse_standard(spec).next(datetime.fromisoformat(after).astimezone(timezone.utc))
    return None if found is None else found.isoformat()


@pytest.mark.parametrize(("spec", "after", "expected"), [
    ("* * * * *", "2025-01-01T00:00:00+00:00", "2025-01-01T00:01:00+00:00"),
    ("* * * * *", "2025-01-01T00:00:59.999+00:00", "2025-01-01T00:01:00+00:00"),
    ("*/15 * * * *", "2025-01-01T00:00:30+00:00", "2025-01-01T00:15:00+00:00"),
    ("5/20 * * * *", "2025-01-01T00:30:00+00:00", "2025-01-01T00:45:00+00:00"),  # N/step is N-59/step
    ("0 9 * * 1-5", "2025-01-03T10:00:00+00:00", "2025-01-06T09:00:00+00:00"),  # Friday → Monday
    ("0 0 * * MON", "2025-01-01T00:00:00+00:00", "2025-01-06T00:00:00+00:00"),
    ("0 0 1 jan,Jul ?", "2025-01-01T00:00:00+00:00", "2025-07-01T00:00:00+00:00"),
    ("0 0 13 * 5", "2025-01-01T00:00:00+00:00", "2025-01-03T00:00:00+00:00"),  # both days restricted: OR
    ("0 0 13 * *", "2025-01-01T00:00:00+00:00", "2025-01-13T00:00:00+00:00"),  # one is *: AND
    ("0 0 29 2 *", "2025-01-01T00:00:00+00:00", "2028-02-29T00:00:00+00:00"),
    ("0 0 30 2 *", "2025-01-01T00:00:00+00:00", None),  # never, within robfig's five years
    ("@hourly", "2025-01-01T00:00:00+00:00", "2025-01-01T01:00:00+00:00"),
    ("@daily", "2025-01-01T00:00:00+00:00", "2025-01-02T00:00:00+00:00"),
    ("@midnight", "2025-01-01T12:00:00+00:00", "2025-01-02T00:00:00+00:00"),
    ("@weekly", "2025-01-01T00:00:00+00:00", "2025-01-05T00:00:00+00:00"),  # Sunday
    ("@monthly", "2025-01-01T00:00:00+00:00", "2025-02-01T00:00:00+00:00"),
    ("@yearly", "2025-01-01T00:00:00+00:00", "2026-01-01T00:00:00+00:00"),
    ("@annually", "2025-06-01T00:00:00+00:00", "2026-01-01T00:00:00+00:00"),
    ("@every 1h30m", "2025-01-01T00:00:00.5+00:00", "2025-01-01T01:30:00+00:00"),
    ("@every 100ms", "2025-01-01T00:00:00+00:00", "2025-01-01T00:00:01+00:00"),  # at least a second
])
def test_next_activation(spec: str, after: str, expected: str | None) -> None:
    assert next_after(spec, after) == expected


def test_a_time_zone_prefix_runs_in_that_zones_wall_clock() -> None:
    assert next_after("TZ=Asia/Tokyo 0 9 * * *", "2025-01-01T00:00:00+00:00") == "2025-01-02T00:00:00+00:00"
    assert next_after("CRON_TZ=Europe/Paris @daily", "2025-01-01T00:00:00+00:00") == "2025-01-01T23:00:00+00:00"


def test_daylight_saving_changes_skip_the_missing_hour_and_repeat_the_doubled_one() -> None:
    new_york = "TZ=America/New_York 30 2 * * *"
    # 2025-03-09 has no 02:30 in New York: robfig runs next on the 10th.
    assert next_after(new_york, "2025-03-08T08:00:00+00:00") == "2025-03-10T06:30:00+00:00"
    doubled = "TZ=America/New_York 30 1 * * *"
    assert next_after(doubled, "2025-11-02T04:00:00+00:00") == "2025-11-02T05:30:00+00:00"  # 01:30 EDT
    assert next_after(doubled, "2025-11-02T05:30:00+00:00") == "2025-11-02T06:30:00+00:00"  # 01:30 EST
    assert next_after("TZ=America/New_York 0 12 * * *", "2025-03-08T18:00:00+00:00") == "2025-03-09T16:00:00+00:00"


@pytest.mark.parametrize(("spec", "message"), [
    ("", "empty spec string"),
    ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
    ("0 * * * * *", "expected exactly 5 fields, found 6: [0 * * * * *]"),
    ("60 * * * *", "end of range (60) above maximum (59): 60"),
    ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
    ("* * * * 7", "end of range (7) above maximum (6): 7"),
    ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
    ("*/0 * * * *", "step of range should be a positive number: */0"),
    ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
    ("1/2/3 * * * *", "too many slashes: 1/2/3"),
    ("a * * * *", 'failed to parse int from a: strconv.Atoi: parsing "a": invalid syntax'),
    ("1_0 * * * *", 'failed to parse int from 1_0: strconv.Atoi: parsing "1_0": invalid syntax'),
    ("* * * foo *", 'failed to parse int from foo: strconv.Atoi: parsing "foo": invalid syntax'),
    ("@fortnightly", "unrecognized descriptor: @fortnightly"),
    ("@every", "unrecognized descriptor: @every"),
    ("@every 1x", 'failed to parse duration @every 1x: time: unknown unit "x" in duration "1x"'),
    ("@every 5", 'failed to parse duration @every 5: time: missing unit in duration "5"'),
    ("TZ=Mars/Olympus * * * * *", "provided bad location Mars/Olympus: unknown time zone Mars/Olympus"),
])
def test_refused_schedules_carry_robfigs_messages(spec: str, message: str) -> None:
    with pytest.raises(ScheduleError) as refused:
        parse_standard(spec)
    assert str(refused.value) == message


def test_go_durations() -> None:
    assert parse_go_duration_ns("1h30m") == 5400 * 10**9
    assert parse_go_duration_ns("1.5h") == 5400 * 10**9
    assert parse_go_duration_ns("300ms") == 300 * 10**6
    assert parse_go_duration_ns("0") == 0
    assert parse_go_duration_ns("-2s") == -2 * 10**9
    for bad in ("", ".s", "1..2s", "h"):
        with pytest.raises(ScheduleError):
            parse_go_duration_ns(bad)
