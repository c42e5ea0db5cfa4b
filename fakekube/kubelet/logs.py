"""What ``GET pods/{name}/log`` returns, from a container's log lines and the query options.

Modelled on the kubelet's CRI log reader (``pkg/kubelet/kuberuntime/logs/logs.go``):

* ``tailLines`` picks the last N lines first; ``sinceSeconds``/``sinceTime`` then drops
  lines stamped strictly before ``since`` (so tail 3 + since may return fewer than 3).
  ``since`` is ``now - sinceSeconds``, or ``sinceTime`` when that is later.
* ``timestamps`` prefixes each line with its time in RFC3339NanoFixed
  (``2025-01-01T00:00:01.500000000Z``) and a space.
* ``limitBytes`` cuts the output after that many bytes, mid-line if need be.
* ``follow`` first returns what was written so far (tail applies to it), then the
  caller streams new lines through the same :class:`LogCursor` (same since and byte budget;
  :mod:`fakekube.kubelet.logstream` does, on cluster time).
* ``previous`` reads the previous, terminated instance; the caller passes it in.

Validation follows the apiserver's ``ValidatePodLogOptions``. Lines are stdout only
(no ``stream`` option). Times are cluster (virtual) time, passed in.
"""

from __future__ import annotations

import bisect
from datetime import datetime, timedelta, timezone
from typing import Mapping, NamedTuple, Sequence

from fakekube.kubelet.behaviour import LogLine
from fakekube.record import FrozenRecord

#: The kubelet's message when there is no previous instance (a 400 BadRequest).
PREVIOUS_NOT_FOUND = 'previous terminated container "{container}" in pod "{pod}" not found'


class PodLogOptions(FrozenRecord):
    """The v1.PodLogOptions that change what is returned (container is chosen by the caller)."""

    __slots__ = ("follow", "previous", "timestamps", "tail_lines", "since_seconds", "since_time", "limit_bytes")
    follow: bool
    previous: bool
    timestamps: bool
    tail_lines: int | None
    since_seconds: int | None
    since_time: datetime | None
    limit_bytes: int | None

    def __init__(self, follow: bool = False, previous: bool = False, timestamps: bool = False,
                 tail_lines: int | None = None, since_seconds: int | None = None, since_time: datetime | None = None,
                 limit_bytes: int | None = None) -> None:
        if tail_lines is not None and tail_lines < 0:
            raise ValueError(f"tailLines: Invalid value: {tail_lines}: must be greater than or equal to 0")
        if limit_bytes is not None and limit_bytes < 1:
            raise ValueError(f"limitBytes: Invalid value: {limit_bytes}: must be greater than 0")
        if since_seconds is not None and since_time is not None:
            raise ValueError("Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified")
        if since_seconds is not None and since_seconds < 1:
            raise ValueError(f"sinceSeconds: Invalid value: {since_seconds}: must be greater than 0")
        if since_time is not None and since_time.tzinfo is None:
            raise ValueError("sinceTime: must be timezone-aware")
        values = (follow, previous, timestamps, tail_lines, since_seconds, since_time, limit_bytes)
        for name, value in zip(self.__slots__, values, strict=True):
            self._set(name, value)

    @classmethod
    def from_query(cls, params: Mapping[str, str]) -> PodLogOptions:
        """From URL query parameters (``tailLines=3&timestamps=true``); ValueError names the field."""
        return cls(
            follow=_flag(params, "follow"),
            previous=_flag(params, "previous"),
            timestamps=_flag(params, "timestamps"),
            tail_lines=_integer(params, "tailLines"),
            since_seconds=_integer(params, "sinceSeconds"),
            since_time=_instant(params, "sinceTime"),
            limit_bytes=_integer(params, "limitBytes"),
        )

    def since(self, now: datetime) -> datetime | None:
        """Lines stamped before this are dropped; None keeps all."""
        since = _seconds_before(now, self.since_seconds) if self.since_seconds is not None else None
        if self.since_time is not None and (since is None or self.since_time > since):
            since = self.since_time
        return since


class ContainerLog(NamedTuple):
    """One container instance's log: its lines, when it started and (if it did) finished."""

    lines: tuple[LogLine, ...]
    started_at: datetime
    finished_at: datetime | None = None

    def stamp(self, line: LogLine) -> datetime:
        return self.started_at + timedelta(seconds=line.at_s)

    def written(self, now: datetime) -> Sequence[LogLine]:
        """The lines written by ``now`` (none after the instance finished); lines are in time order,
        so a binary search finds the end (a follow stream asks at every chunk)."""
        end = now if self.finished_at is None else min(now, self.finished_at)
        return self.lines[:bisect.bisect_right(self.lines, end, key=self.stamp)]


def format_timestamp(moment: datetime) -> str:
    """RFC3339NanoFixed, the kubelet's ``timestamps=true`` prefix: always nine fraction digits."""
    utc = moment.astimezone(timezone.utc)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond:06d}000Z"


class LogCursor:
    """One pods/log response, produced in pieces: ``first`` what exists, then ``more``.

    It remembers how many lines it has seen and how many bytes ``limitBytes`` still allows,
    so a follow stream never repeats a line and never exceeds the limit.
    """

    def __init__(self, log: ContainerLog, options: PodLogOptions, now: datetime) -> None:
        self._log = log
        self._options = options
        self._since = options.since(now)
        self._remaining = options.limit_bytes
        self._seen = 0

    def relog(self, log: ContainerLog) -> None:
        """Read ``log`` from now on: the same instance whose lines from some instant on were
        rewritten (a SIGTERM handler's output replacing the program's); the lines already
        returned are earlier than any rewritten one, so the count of lines seen still holds."""
        self._log = log

    @property
    def exhausted(self) -> bool:
        """The byte limit is used up: the response ends."""
        return self._remaining is not None and self._remaining <= 0

    def first(self, now: datetime) -> bytes:
        """What the log holds at ``now``, after tailLines, since and limitBytes."""
        written = self._log.written(now)
        self._seen = len(written)
        tail = self._options.tail_lines
        chosen = written if tail is None else written[len(written) - min(tail, len(written)):]
        return self._emit(chosen)[0]

    def more(self, now: datetime, max_bytes: int | None = None) -> bytes:
        """Lines written since the last call (for ``follow``); tailLines does not apply.

        ``max_bytes`` bounds one answer (at least one line is returned): the lines past it
        stay unread for the next call (:meth:`caught_up` says whether any are left).
        """
        written = self._log.written(now)
        out, used = self._emit(written[self._seen:], max_bytes)
        self._seen += used
        return out

    def caught_up(self, now: datetime) -> bool:
        """Has every line written by ``now`` been returned (or the byte limit reached)?"""
        return self.exhausted or self._seen >= len(self._log.written(now))

    def _emit(self, lines: Sequence[LogLine], max_bytes: int | None = None) -> tuple[bytes, int]:
        """(the rendered lines, how many lines were consumed)."""
        out = bytearray()
        used = 0
        for line in lines:
            if self.exhausted or (max_bytes is not None and out and len(out) >= max_bytes):
                break
            used += 1
            stamp = self._log.stamp(line)
            if self._since is not None and stamp < self._since:
                continue
            data = self._render(line.text, stamp)
            if self._remaining is not None:
                data = data[:self._remaining]
                self._remaining -= len(data)
            out += data
        return bytes(out), used

    def _render(self, text: str, stamp: datetime) -> bytes:
        prefix = format_timestamp(stamp) + " " if self._options.timestamps else ""
        return f"{prefix}{text}\n".encode()


def read_logs(current: ContainerLog, options: PodLogOptions, now: datetime,
              previous: ContainerLog | None = None) -> bytes:
    """A non-follow pods/log body (or a follow stream's first piece).

    With ``options.previous`` the previous instance is read; LookupError when there is none
    (the caller words it with :data:`PREVIOUS_NOT_FOUND`).
    """
    return open_cursor(current, options, now, previous).first(now)


def open_cursor(current: ContainerLog, options: PodLogOptions, now: datetime,
                previous: ContainerLog | None = None) -> LogCursor:
    """A cursor over the instance the options ask for."""
    if options.previous:
        if previous is None:
            raise LookupError("previous terminated container not found")
        return LogCursor(previous, options, now)
    return LogCursor(current, options, now)


def _flag(params: Mapping[str, str], name: str) -> bool:
    raw = params.get(name)
    if raw is None or raw == "":
        return False
    lowered = str(raw).lower()
    if lowered in ("true", "1", "t"):
        return True
    if lowered in ("false", "0", "f"):
        return False
    raise ValueError(f"{name}: Invalid value: {raw!r}: must be true or false")


def _integer(params: Mapping[str, str], name: str) -> int | None:
    raw = params.get(name)
    if raw is None or raw == "":
        return None
    try:
        return int(str(raw))
    except ValueError:
        raise ValueError(f"{name}: Invalid value: {raw!r}: must be an integer") from None


def _instant(params: Mapping[str, str], name: str) -> datetime | None:
    raw = params.get(name)
    if raw is None or raw == "":
        return None
    try:
        moment = datetime.fromisoformat(str(raw).replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{name}: Invalid value: {raw!r}: must be an RFC3339 time") from None
    if moment.tzinfo is None:
        raise ValueError(f"{name}: Invalid value: {raw!r}: must include a time zone")
    return moment


def _seconds_before(now: datetime, seconds: int) -> datetime:
    """``now - seconds``, or the earliest instant when that is before year 1 (a huge
    sinceSeconds keeps every line, as it would on a kubelet)."""
    try:
        return now - timedelta(seconds=seconds)
    except OverflowError:
        return datetime.min.replace(tzinfo=now.tzinfo)
