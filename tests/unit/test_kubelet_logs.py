"""pods/log selection follows the kubelet's CRI log reader: tail, then since, then the byte limit."""

from datetime import datetime, timedelta, timezone

import pytest

from fakekube.kubelet import ContainerLog, LogLine, PodLogOptions, format_timestamp, read_logs
from fakekube.kubelet.logs import open_cursor

START = datetime(2025, 1, 1, 0, 0, 10, tzinfo=timezone.utc)
LINES = (LogLine(0, "one"), LogLine(1.5, "two"), LogLine(3, "three"), LogLine(20, "late"))
LOG = ContainerLog(LINES, started_at=START)


def at(seconds: float) -> datetime:
    return START + timedelta(seconds=seconds)


def test_only_lines_written_by_now() -> None:
    assert read_logs(LOG, PodLogOptions(), at(3)) == b"one\ntwo\nthree\n"
    assert read_logs(LOG, PodLogOptions(), at(2.9)) == b"one\ntwo\n"


def test_timestamps_are_rfc3339_nano_fixed() -> None:
    assert format_timestamp(at(1.5)) == "2025-01-01T00:00:11.500000000Z"
    assert read_logs(LOG, PodLogOptions(timestamps=True), at(1.5)) == (
        b"2025-01-01T00:00:10.000000000Z one\n2025-01-01T00:00:11.500000000Z two\n")


def test_tail_lines() -> None:
    assert read_logs(LOG, PodLogOptions(tail_lines=2), at(10)) == b"two\nthree\n"
    assert read_logs(LOG, PodLogOptions(tail_lines=0), at(10)) == b""
    assert read_logs(LOG, PodLogOptions(tail_lines=99), at(10)) == b"one\ntwo\nthree\n"


def test_since_seconds_keeps_lines_at_or_after_now_minus_since() -> None:
    # now = start+21, since = start+3: "three" (at 3) stays, since drops only strictly earlier lines.
    assert read_logs(LOG, PodLogOptions(since_seconds=18), at(21)) == b"three\nlate\n"
    since_time = at(1.5)
    assert read_logs(LOG, PodLogOptions(since_time=since_time), at(21)) == b"two\nthree\nlate\n"


def test_tail_applies_before_since() -> None:
    assert read_logs(LOG, PodLogOptions(tail_lines=3, since_seconds=10), at(21)) == b"late\n"


def test_limit_bytes_cuts_mid_line() -> None:
    assert read_logs(LOG, PodLogOptions(limit_bytes=6), at(21)) == b"one\ntw"


def test_follow_returns_what_exists_then_streams_new_lines_within_the_limit() -> None:
    options = PodLogOptions(follow=True, tail_lines=1, limit_bytes=12)
    cursor = open_cursor(LOG, options, at(2))
    assert cursor.first(at(2)) == b"two\n"
    assert cursor.more(at(2)) == b""
    assert cursor.more(at(25)) == b"three\nla"     # 4 + 6 + 2 bytes = 12
    assert cursor.exhausted
    assert cursor.more(at(99)) == b""


def test_finished_instances_write_nothing_after_they_end() -> None:
    ended = ContainerLog(LINES, started_at=START, finished_at=at(5))
    assert read_logs(ended, PodLogOptions(), at(100)) == b"one\ntwo\nthree\n"


def test_previous_reads_the_previous_instance() -> None:
    previous = ContainerLog((LogLine(0, "old"),), started_at=at(-60), finished_at=at(-50))
    assert read_logs(LOG, PodLogOptions(previous=True), at(5), previous) == b"old\n"
    with pytest.raises(LookupError):
        read_logs(LOG, PodLogOptions(previous=True), at(5))


def test_query_parsing() -> None:
    options = PodLogOptions.from_query({"follow": "true", "tailLines": "3", "timestamps": "1",
                                        "sinceTime": "2025-01-01T00:00:11Z", "limitBytes": "100"})
    assert options == PodLogOptions(follow=True, timestamps=True, tail_lines=3, limit_bytes=100,
                                    since_time=at(1))
    assert PodLogOptions.from_query({}) == PodLogOptions()


@pytest.mark.parametrize(("params", "field"), [
    ({"tailLines": "-1"}, "tailLines"),
    ({"limitBytes": "0"}, "limitBytes"),
    ({"sinceSeconds": "0"}, "sinceSeconds"),
    ({"sinceSeconds": "5", "sinceTime": "2025-01-01T00:00:00Z"}, "at most one"),
    ({"tailLines": "x"}, "tailLines"),
    ({"follow": "maybe"}, "follow"),
    ({"sinceTime": "yesterday"}, "sinceTime"),
])
def test_invalid_options_name_the_field(params: dict, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        PodLogOptions.from_query(params)
