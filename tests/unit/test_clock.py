"""The virtual clock: time moves only when told, timers fire in (deadline, sequence) order."""

from datetime import timedelta

import pytest

from fakekube.clock import DEFAULT_EPOCH, VirtualClock


def seconds_since_epoch(clock: VirtualClock) -> float:
    return (clock.now() - DEFAULT_EPOCH).total_seconds()


def test_time_moves_only_when_advanced() -> None:
    clock = VirtualClock()
    assert clock.now() == DEFAULT_EPOCH
    clock.advance(2.5)
    assert seconds_since_epoch(clock) == 2.5


def test_time_never_goes_back() -> None:
    clock = VirtualClock()
    clock.advance(10)
    with pytest.raises(ValueError):
        clock.advance(-1)
    with pytest.raises(ValueError):
        clock.advance_to(DEFAULT_EPOCH)
    with pytest.raises(ValueError):
        VirtualClock(DEFAULT_EPOCH.replace(tzinfo=None))


def test_timers_fire_in_deadline_then_sequence_order_at_their_own_instant() -> None:
    clock = VirtualClock()
    fired: list[tuple[str, float]] = []

    def note(label: str):
        return lambda: fired.append((label, seconds_since_epoch(clock)))

    clock.call_later(5, note("b"))
    clock.call_later(1, note("a"))
    clock.call_later(5, note("c"))  # same deadline as b, set later: fires after b
    clock.advance(4)
    assert fired == [("a", 1.0)]
    clock.advance(10)
    assert fired == [("a", 1.0), ("b", 5.0), ("c", 5.0)]
    assert seconds_since_epoch(clock) == 14.0


def test_timers_set_while_firing_fire_in_the_same_advance_if_due() -> None:
    clock = VirtualClock()
    ticks: list[float] = []

    def tick() -> None:
        ticks.append(seconds_since_epoch(clock))
        if len(ticks) < 5:
            clock.call_later(10, tick)

    clock.call_later(10, tick)
    clock.advance(35)
    assert ticks == [10.0, 20.0, 30.0]
    clock.advance(100)
    assert ticks == [10.0, 20.0, 30.0, 40.0, 50.0]


def test_cancelled_timers_do_not_fire() -> None:
    clock = VirtualClock()
    fired: list[str] = []
    timer = clock.call_later(1, lambda: fired.append("x"))
    clock.call_later(2, lambda: fired.append("y"))
    timer.cancel()
    assert clock.pending() == 1
    assert clock.next_deadline() == DEFAULT_EPOCH + timedelta(seconds=2)
    clock.advance(5)
    assert fired == ["y"]
    assert clock.next_deadline() is None


def test_a_past_deadline_fires_at_the_next_advance_without_moving_time_back() -> None:
    clock = VirtualClock()
    clock.advance(10)
    fired: list[float] = []
    clock.call_at(DEFAULT_EPOCH, lambda: fired.append(seconds_since_epoch(clock)))
    clock.advance(0)
    assert fired == [10.0]


def test_pending_timers_are_bounded() -> None:
    clock = VirtualClock(max_pending=3)
    for _ in range(3):
        clock.call_later(1, lambda: None)
    with pytest.raises(RuntimeError, match="more than 3 timers pending"):
        clock.call_later(1, lambda: None)
    with pytest.raises(ValueError):
        clock.call_later(-1, lambda: None)


def test_cancelled_timers_do_not_count_against_the_bound() -> None:
    clock = VirtualClock(max_pending=3)
    keep = clock.call_later(5, lambda: None)
    for delay_s in range(1, 100):  # set and cancel again and again, a later one each time
        clock.call_later(10 + delay_s, lambda: None).cancel()
    assert clock.pending() == 1 and not keep.cancelled


def test_wire_formats_round_trip() -> None:
    from datetime import datetime, timezone

    from fakekube.clock import format_micro_time, format_rfc3339, parse_time

    moment = datetime(2025, 1, 1, 0, 0, 40, 123456, tzinfo=timezone.utc)
    assert format_rfc3339(moment) == "2025-01-01T00:00:40Z"
    assert format_micro_time(moment) == "2025-01-01T00:00:40.123456Z"
    assert parse_time(format_micro_time(moment)) == moment
    assert parse_time("2025-01-01T00:00:40.123456789Z") == moment  # nanoseconds are cut to micro
    assert parse_time("2025-01-01T01:00:40+01:00") == moment.replace(microsecond=0)
    assert parse_time("2025-01-01T00:00:40") == moment.replace(microsecond=0)  # no offset: UTC
    assert parse_time("2025-01-01T01:00:40.123456+01:00") == moment  # a fraction, then an offset
    assert parse_time("") is None and parse_time(None) is None


def test_micro_times_are_what_strftime_writes() -> None:
    """MicroTime is formatted by hand; it must be strftime's text for any moment: whole
    seconds (six zeros), another offset, a year before 1000 (strftime does not pad it)."""
    from datetime import datetime, timedelta, timezone

    from fakekube.clock import format_micro_time

    east = timezone(timedelta(hours=5, minutes=30))
    for moment in (datetime(2025, 1, 1, tzinfo=timezone.utc), datetime(2025, 3, 9, 23, 59, 59, 999999, tzinfo=east),
                   datetime(999, 12, 31, 23, 0, 0, 7, tzinfo=timezone.utc), datetime(9999, 12, 31, tzinfo=timezone.utc),
                   datetime(2026, 12, 7, 0, 0, 1, 10, tzinfo=timezone(timedelta(hours=-8)))):
        assert format_micro_time(moment) == moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
