"""``pods/log?follow=true``: a log stream that stays open while cluster time moves.

Upstream's kubelet follows the container's log file and closes the stream when the
container is no longer running (``pkg/kubelet/kuberuntime/logs``); kubectl ``logs -f``
then exits. Here the log is data (the behaviour's lines, stamped from the instance's
start), so a stream needs no buffer of lines: each time it wakes it asks the
:class:`ContainerFollow` what was written between the last answer and *now* (cluster
time), on the HTTP connection's own thread.

* **Wakes** when cluster time moves (:meth:`LogStreams.wake` is a clock observer: one
  attribute read per clock move while no stream waits, a notify when some do) and at
  least every :data:`POLL_INTERVAL_S` of wall time (to notice a deleted pod, a stopped
  server, a gone client). Time moved by ``cluster.advance(...)`` or by scaled time
  reaches the client as soon as the engine moved it; the engine never waits for a stream.
* **Ends** when the followed container instance ends (it exited, was killed, or its pod
  was deleted — a restart starts a new instance, as upstream's ``-f`` does not follow
  restarts), when ``limitBytes`` is used up, when the cluster stops or resets, when the
  client goes away (the transport checks at every chunk, and an idle stream yields an
  empty chunk per poll for it), or after :data:`IDLE_TIMEOUT_S` of wall time without a
  line (upstream's ``--streaming-connection-idle-timeout``, 4 h).
* **Bounds**: one chunk carries at most :data:`MAX_CHUNK_BYTES` (whole lines, at least
  one); what is left is sent at once in the next chunk, so a client that reads slowly
  slows only its own connection thread and nothing piles up in memory. At most
  :data:`MAX_FOLLOW_STREAMS` follow streams are open per cluster; one more is refused
  (:class:`TooManyStreams`, a 429).

Wall time here is transport time (DESIGN.md, "two kinds of time"), read through an
injectable ``wall`` function.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime
from typing import Callable, Iterator, NamedTuple

from fakekube.kubelet.containers import ContainerRun, Instance, after
from fakekube.kubelet.logs import ContainerLog, LogCursor

#: How often an idle stream wakes (wall seconds) to notice what no clock move announces.
POLL_INTERVAL_S = 0.2
#: A stream that sent no line for this long (wall seconds) is closed.
IDLE_TIMEOUT_S = 4 * 3600.0
#: Follow streams open at once per cluster.
MAX_FOLLOW_STREAMS = 1000
#: The most log bytes one chunk carries (whole lines; a longer single line goes alone).
MAX_CHUNK_BYTES = 64 * 1024


class TooManyStreams(RuntimeError):
    """:data:`MAX_FOLLOW_STREAMS` follow streams are already open."""


class Poll(NamedTuple):
    """One look at a followed log."""

    data: bytes
    #: The stream is over (the instance ended and everything it wrote was returned).
    over: bool
    #: Lines written by now were held back by the chunk bound: poll again at once.
    pending: bool


class ContainerFollow:
    """One followed container instance: what its log holds past the last answer.

    Built on the engine thread; polled from a connection thread. It reads only
    references the engine swaps whole (``run.current``/``previous`` are immutable
    :class:`~fakekube.kubelet.containers.Instance` objects), so it never takes a lock.
    """

    def __init__(self, run: ContainerRun, instance: Instance, cursor: LogCursor, first: bytes,
                 pod_known: Callable[[], bool]) -> None:
        self._run = run
        self._instance = instance
        self._stop_from_s = instance.stop_from_s
        self._cursor = cursor
        self.first = first
        self._pod_known = pod_known

    def poll(self, now: datetime, max_bytes: int = MAX_CHUNK_BYTES) -> Poll:
        """The lines written since the last poll, up to ``now``, and whether the stream is over."""
        instance = self._latest()
        if instance.stop_from_s != self._stop_from_s:  # a stop's handler rewrote what comes from the signal on
            self._stop_from_s = instance.stop_from_s
            self._cursor.relog(ContainerLog(instance.log_lines, instance.started_at, instance.finished_at))
        end = self._end(instance)
        if end is None and (not self._pod_known() or not self._is_current(instance)):
            end = now  # the pod is gone, or the instance was replaced: it stopped by now
        upto = now if end is None else min(now, end)
        data = self._cursor.more(upto, max_bytes)
        caught_up = self._cursor.caught_up(upto)
        over = self._cursor.exhausted or (end is not None and end <= now and caught_up)
        return Poll(data, over, not caught_up)

    def _latest(self) -> Instance:
        """The followed instance as the kubelet last recorded it (finished, once it is)."""
        wanted = self._instance.container_id
        for candidate in (self._run.current, self._run.previous):
            if candidate is not None and candidate.container_id == wanted:
                return candidate
        return self._instance

    def _end(self, instance: Instance) -> datetime | None:
        """When the instance ended or is bound to end: its exit, a probe kill, a stop — or None."""
        if instance.finished_at is not None:
            return instance.finished_at
        ends = [after(instance.started_at, end_s) for end_s in (instance.run_for_s, instance.plan.kill_s)
                if end_s is not None]
        stop_at = self._run.stop_at
        if stop_at is not None and self._is_current(instance):
            ends.append(stop_at)
        return min(ends) if ends else None

    def _is_current(self, instance: Instance) -> bool:
        current = self._run.current
        return current is not None and current.container_id == instance.container_id


class LogStreams:
    """A cluster's follow streams: the wake-up signal and the bound on how many are open."""

    def __init__(self, max_streams: int = MAX_FOLLOW_STREAMS, poll_interval_s: float = POLL_INTERVAL_S,
                 idle_timeout_s: float = IDLE_TIMEOUT_S, wall: Callable[[], float] = time.monotonic) -> None:
        self.max_streams = max_streams
        self.poll_interval_s = poll_interval_s
        self.idle_timeout_s = idle_timeout_s
        self._wall = wall
        self._moved = threading.Condition()
        self._generation = 0
        self._waiting = 0
        self._open = 0
        self._count_lock = threading.Lock()

    @property
    def open_streams(self) -> int:
        return self._open

    def wake(self, now: datetime) -> None:
        """Clock observer: cluster time moved. Cheap when nobody waits; never blocks on a stream.

        Only the thread that moves the clock calls it, so the counter needs no lock."""
        self._generation += 1
        if self._waiting:
            with self._moved:
                self._moved.notify_all()

    def open(self, follow: ContainerFollow, clock: Callable[[], datetime], alive: Callable[[], bool],
             on_error: Callable[[BaseException], None]) -> LogStream:
        """A stream for ``follow``; TooManyStreams when the bound is reached."""
        with self._count_lock:
            if self._open >= self.max_streams:
                raise TooManyStreams(f"too many log streams open; limit is {self.max_streams}")
            self._open += 1
        return LogStream(self._chunks(follow, clock, alive, on_error), self._release)

    def _release(self) -> None:
        with self._count_lock:
            self._open -= 1

    def _chunks(self, follow: ContainerFollow, clock: Callable[[], datetime], alive: Callable[[], bool],
                on_error: Callable[[BaseException], None]) -> Iterator[bytes]:
        try:
            yield follow.first
            last_line = self._wall()
            while alive():
                generation = self._generation  # taken before looking: a move after it wakes us at once
                poll = follow.poll(clock())
                if poll.data:
                    last_line = self._wall()
                    yield poll.data
                if poll.over:
                    return
                if poll.pending:
                    continue  # the chunk bound held lines back: send them now
                if self._wall() - last_line > self.idle_timeout_s:
                    return
                self._wait(generation)
                yield b""  # lets the transport notice a client that went away
        except Exception as exc:  # after the headers went out there is no Status to send: report it
            on_error(exc)

    def _wait(self, generation: int) -> None:
        """Until cluster time moves past ``generation``, or one poll interval (wall)."""
        with self._moved:
            self._waiting += 1
            try:
                if self._generation == generation:
                    self._moved.wait(self.poll_interval_s)
            finally:
                self._waiting -= 1


class LogStream:
    """The response body of one follow stream: an iterator of chunks whose ``close`` always
    frees its slot (also when the transport closes it before the first chunk)."""

    def __init__(self, chunks: Iterator[bytes], release: Callable[[], None]) -> None:
        self._chunks = chunks
        self._release = release
        self._closed = False
        self._lock = threading.Lock()

    def __iter__(self) -> LogStream:
        return self

    def __next__(self) -> bytes:
        try:
            return next(self._chunks)
        except StopIteration:
            self.close()
            raise

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            self._chunks.close()  # type: ignore[attr-defined]
        finally:
            self._release()
