"""Follow streams: chunk bounds, the open-stream bound, idle timeout and end conditions, without HTTP."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from fakekube.clock import DEFAULT_EPOCH
from fakekube.kubelet import ContainerBehaviour, LogLine
from fakekube.kubelet.backoff import ImagePullBackoff, RestartBackoff
from fakekube.kubelet.containers import ContainerRun, RunContext
from fakekube.kubelet.logs import ContainerLog, LogCursor, PodLogOptions
from fakekube.kubelet.logstream import ContainerFollow, LogStreams, Poll, TooManyStreams


def at(seconds: float) -> datetime:
    return DEFAULT_EPOCH + timedelta(seconds=seconds)


def test_a_bounded_read_keeps_the_rest_for_the_next_one() -> None:
    lines = tuple(LogLine(float(i), f"line {i}") for i in range(5))  # 7 bytes each
    cursor = LogCursor(ContainerLog(lines, at(0)), PodLogOptions(follow=True), at(0))
    assert cursor.first(at(0)) == b"line 0\n"
    assert cursor.more(at(10), max_bytes=10) == b"line 1\nline 2\n"  # whole lines, at least one past the bound
    assert not cursor.caught_up(at(10))
    assert cursor.more(at(10), max_bytes=10) == b"line 3\nline 4\n"
    assert cursor.caught_up(at(10))


def running_container(**behaviour: Any) -> ContainerRun:
    run = ContainerRun({"name": "c", "image": "x"}, ContainerBehaviour(**behaviour), False, "Always")
    ctx = RunContext("uid", RestartBackoff(), ImagePullBackoff(), lambda: "containerd://1", DEFAULT_EPOCH)
    run.begin(at(0), ctx)
    while run.due is not None and run.due <= at(1):
        run.step(ctx)
    return run


def follow_of(run: ContainerRun, now: datetime, pod_known: Any = lambda: True) -> ContainerFollow:
    assert run.current is not None
    cursor = LogCursor(ContainerLog(run.behaviour.log_lines, run.current.started_at), PodLogOptions(follow=True), now)
    return ContainerFollow(run, run.current, cursor, cursor.first(now), pod_known)


def test_a_follow_ends_at_the_planned_exit_even_before_the_kubelet_saw_it() -> None:
    run = running_container(log_lines=(LogLine(0, "a"), LogLine(5, "b"), LogLine(20, "c")), run_for_s=10)
    follow = follow_of(run, at(1))
    assert follow.first == b"a\n"
    assert follow.poll(at(5)) == (b"", False, False)  # "b" is due at 6 (started at 1)
    assert follow.poll(at(30)) == (b"b\n", True, False)  # exited at 11: "c" never written


def test_a_follow_ends_when_its_pod_is_forgotten() -> None:
    run = running_container(log_lines=(LogLine(0, "a"),))
    known = [True]
    follow = follow_of(run, at(1), lambda: known[0])
    assert follow.poll(at(100)).over is False
    known[0] = False
    assert follow.poll(at(100)).over is True


class Follow:
    """A stand-in that writes one line per poll for ``lines`` polls, then ends."""

    first = b"first\n"

    def __init__(self, lines: int = 1) -> None:
        self.lines = lines

    def poll(self, now: datetime) -> Any:
        if self.lines <= 0:
            return Poll(b"", False, False)
        self.lines -= 1
        return Poll(b"line\n", self.lines == 0, False)


def test_streams_are_bounded_and_a_closed_stream_frees_its_slot() -> None:
    streams = LogStreams(max_streams=1)
    first = streams.open(Follow(), lambda: at(0), lambda: True, pytest.fail)  # type: ignore[arg-type]
    with pytest.raises(TooManyStreams):
        streams.open(Follow(), lambda: at(0), lambda: True, pytest.fail)  # type: ignore[arg-type]
    first.close()  # never iterated: the slot comes back anyway
    assert streams.open_streams == 0
    second = streams.open(Follow(2), lambda: at(0), lambda: True, pytest.fail)  # type: ignore[arg-type]
    assert list(second) == [b"first\n", b"line\n", b"", b"line\n"]
    assert streams.open_streams == 0


def test_an_idle_stream_ends_after_the_idle_timeout_of_wall_time() -> None:
    wall = [0.0]

    def tick() -> float:
        wall[0] += 1.0
        return wall[0]
    streams = LogStreams(idle_timeout_s=5, poll_interval_s=0.001, wall=tick)
    chunks = list(streams.open(Follow(0), lambda: at(0), lambda: True, pytest.fail))  # type: ignore[arg-type]
    assert chunks[0] == b"first\n" and set(chunks[1:]) == {b""}
    assert streams.open_streams == 0


def test_a_stream_ends_when_its_cluster_stops_and_reports_its_errors() -> None:
    streams = LogStreams(poll_interval_s=0.001)
    alive = [True]
    stream = iter(streams.open(Follow(0), lambda: at(0), lambda: alive[0], pytest.fail))  # type: ignore[arg-type]
    assert next(stream) == b"first\n"
    alive[0] = False
    assert list(stream) == []
    errors: list[BaseException] = []

    class Broken(Follow):
        def poll(self, now: datetime) -> Any:
            raise RuntimeError("boom")
    assert list(streams.open(Broken(), lambda: at(0), lambda: True, errors.append)) == [b"first\n"]  # type: ignore[arg-type]
    assert [str(e) for e in errors] == ["boom"]


def test_waking_is_cheap_without_waiters() -> None:
    streams = LogStreams()
    for second in range(1000):
        streams.wake(at(second))
    assert streams.open_streams == 0
