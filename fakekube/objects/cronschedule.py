"""CronJob schedules as kube-controller-manager reads them: robfig/cron v3's ``ParseStandard``.

One parser for the apiserver's validation and the CronJob controller, so a schedule is
refused with the same text it would fail with upstream, and runs at the same instants:

* five fields — minute, hour, day of month, month (``jan``-``dec``), day of week
  (``sun``-``sat``, 0-6) — each a comma list of ``*``/``?``, ``N``, ``N-M``, with an
  optional ``/step`` (``N/step`` means ``N-max/step``);
* descriptors ``@yearly``/``@annually``, ``@monthly``, ``@weekly``, ``@daily``/``@midnight``,
  ``@hourly`` and ``@every <Go duration>`` (at least 1 s, whole seconds);
* an optional ``TZ=<zone> ``/``CRON_TZ=<zone> `` prefix (the controller prefixes
  ``spec.timeZone`` this way; validation refuses it in ``spec.schedule``).

Day of month and day of week match with OR when both are restricted, with AND when either
is ``*``/``?`` (cron's rule, robfig's star bit). :meth:`SpecSchedule.next` is robfig's
``Next``: field by field in the schedule's zone, giving up after five years (None, Go's
zero time) — so an impossible date such as ``0 0 30 2 *`` parses but never runs.

Pure: no clock reads; time zones come from the IANA database (``zoneinfo``, imported the
first time a zone is named, so a cluster that schedules in UTC starts without it).
"""

from __future__ import annotations

import re
from datetime import date, datetime, timezone, tzinfo
from typing import Mapping, Union

#: robfig's starBit: the field was ``*`` or ``?`` (decides AND/OR of the two day fields).
STAR_BIT = 1 << 63
#: robfig gives up looking for the next activation after this many years.
YEAR_LIMIT = 5
#: The largest int Go's strconv.Atoi returns (int64 on the platforms upstream ships).
_MAX_INT = 2**63 - 1

_MONTHS = {name: number for number, name in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1)}
_WEEKDAYS = {name: number for number, name in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}


class ScheduleError(ValueError):
    """A schedule robfig/cron refuses; ``str()`` is its error text."""


class _Bounds:
    __slots__ = ("low", "high", "names")

    def __init__(self, low: int, high: int, names: Mapping[str, int] | None = None) -> None:
        self.low, self.high, self.names = low, high, names


_MINUTES, _HOURS = _Bounds(0, 59), _Bounds(0, 23)
_DOM, _MONTH, _DOW = _Bounds(1, 31), _Bounds(1, 12, _MONTHS), _Bounds(0, 6, _WEEKDAYS)


def _bits(low: int, high: int, step: int = 1) -> int:
    return sum(1 << value for value in range(low, high + 1, step))


def _all(bounds: _Bounds) -> int:
    return _bits(bounds.low, bounds.high) | STAR_BIT


class SpecSchedule:
    """A five-field schedule (seconds always 0) in one time zone."""

    __slots__ = ("minute", "hour", "dom", "month", "dow", "zone")

    def __init__(self, minute: int, hour: int, dom: int, month: int, dow: int, zone: tzinfo) -> None:
        self.minute, self.hour, self.dom, self.month, self.dow, self.zone = minute, hour, dom, month, dow, zone

    def next(self, after: datetime) -> datetime | None:
        """The first activation strictly after ``after`` (UTC), or None within five years."""
        found = _SpecSearch(self).run(int(after.timestamp() // 1) + 1)
        return None if found is None else datetime.fromtimestamp(found, timezone.utc)

    def day_matches(self, moment: datetime) -> bool:
        dom = bool(1 << moment.day & self.dom)
        dow = bool(1 << (moment.weekday() + 1) % 7 & self.dow)
        if self.dom & STAR_BIT or self.dow & STAR_BIT:
            return dom and dow
        return dom or dow


class _SpecSearch:
    """robfig's ``SpecSchedule.Next`` over Unix seconds, reading fields in the schedule's zone.

    Wall-clock steps (a new month or day) go through :meth:`_date` (Go's ``time.Date``),
    hour, minute and second steps add absolute time, as Go does — so DST gaps and repeats
    behave as upstream's."""

    def __init__(self, spec: SpecSchedule) -> None:
        self.spec, self.zone = spec, spec.zone

    def local(self, unix_s: int) -> datetime:
        return datetime.fromtimestamp(unix_s, self.zone)

    def _date(self, year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> int:
        """Go's ``time.Date`` in the zone: months and days normalised, a wall time that a
        DST change skips or repeats resolved with Go's offset choice."""
        year, month = year + (month - 1) // 12, (month - 1) % 12 + 1
        days = date(year, month, 1).toordinal() - date(1970, 1, 1).toordinal() + day - 1
        wall = days * 86400 + hour * 3600 + minute * 60
        offset = self._offset_at(wall)
        if self._offset_at(wall - offset) != offset:
            offset = self._offset_at(wall - offset)
        return wall - offset

    def _offset_at(self, unix_s: int) -> int:
        delta = self.local(unix_s).utcoffset()
        return int(delta.total_seconds()) if delta is not None else 0

    def run(self, start_s: int) -> int | None:
        """The first activation at or after ``start_s``. Each phase moves forward until its
        field matches; one that wraps past its field's start re-checks from the month
        (robfig's ``goto WRAP``)."""
        moment, added = start_s, False
        year_limit = self.local(moment).year + YEAR_LIMIT
        while self.local(moment).year <= year_limit:
            for phase in (self._month, self._day, self._hour, self._minute, self._second):
                moment, added, wrapped = phase(moment, added)
                if wrapped:
                    break
            else:
                return moment
        return None

    def _month(self, moment: int, added: bool) -> tuple[int, bool, bool]:
        now = self.local(moment)
        while not 1 << now.month & self.spec.month:
            if not added:
                added, moment = True, self._date(now.year, now.month, 1)
                now = self.local(moment)
            moment = self._date(now.year, now.month + 1, now.day, now.hour, now.minute)
            now = self.local(moment)
            if now.month == 1:
                return moment, added, True
        return moment, added, False

    def _day(self, moment: int, added: bool) -> tuple[int, bool, bool]:
        now = self.local(moment)
        while not self.spec.day_matches(now):
            if not added:
                added, moment = True, self._date(now.year, now.month, now.day)
                now = self.local(moment)
            moment = self._date(now.year, now.month, now.day + 1, now.hour, now.minute)
            now = self.local(moment)
            if now.hour:  # a DST change moved midnight: back to it, as robfig does
                moment += (24 - now.hour) * 3600 if now.hour > 12 else -now.hour * 3600
                now = self.local(moment)
            if now.day == 1:
                return moment, added, True
        return moment, added, False

    def _hour(self, moment: int, added: bool) -> tuple[int, bool, bool]:
        now = self.local(moment)
        while not 1 << now.hour & self.spec.hour:
            if not added:
                added, moment = True, self._date(now.year, now.month, now.day, now.hour)
            moment += 3600
            now = self.local(moment)
            if now.hour == 0:
                return moment, added, True
        return moment, added, False

    def _minute(self, moment: int, added: bool) -> tuple[int, bool, bool]:
        now = self.local(moment)
        while not 1 << now.minute & self.spec.minute:
            if not added:
                added, moment = True, moment - moment % 60
            moment += 60
            now = self.local(moment)
            if now.minute == 0:
                return moment, added, True
        return moment, added, False

    def _second(self, moment: int, added: bool) -> tuple[int, bool, bool]:
        """A standard spec's seconds field is 0."""
        now = self.local(moment)
        while now.second:
            added = True
            moment += 1
            now = self.local(moment)
            if now.second == 0:
                return moment, added, True
        return moment, added, False


class EverySchedule:
    """``@every <duration>``: robfig's ConstantDelaySchedule (whole seconds, at least one)."""

    __slots__ = ("delay_s",)

    def __init__(self, delay_s: int) -> None:
        self.delay_s = delay_s

    def next(self, after: datetime) -> datetime | None:
        """``after`` cut to the second, plus the delay."""
        return datetime.fromtimestamp(int(after.timestamp() // 1) + self.delay_s, timezone.utc)


Schedule = Union[SpecSchedule, EverySchedule]


# -- parsing ---------------------------------------------------------------------------------

def parse_standard(spec: str) -> Schedule:
    """robfig/cron v3's ``ParseStandard`` (``ScheduleError`` with its message when refused).
    Without a ``TZ=`` prefix the schedule is in UTC (kube-controller-manager's local time)."""
    if not spec:
        raise ScheduleError("empty spec string")
    zone: tzinfo = timezone.utc
    if spec.startswith("TZ=") or spec.startswith("CRON_TZ="):
        space, equals = spec.find(" "), spec.find("=")
        name = spec[equals + 1:space] if space >= 0 else spec[equals + 1:]
        try:
            zone = load_location(name)
        except ScheduleError as error:
            raise ScheduleError(f"provided bad location {name}: {error}") from None
        spec = spec[space:].strip() if space >= 0 else ""
    if spec.startswith("@"):
        return _descriptor(spec, zone)
    fields = spec.split()
    if len(fields) != 5:
        raise ScheduleError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    minute, hour, dom, month, dow = (_field(text, bounds) for text, bounds in
                                     zip(fields, (_MINUTES, _HOURS, _DOM, _MONTH, _DOW)))
    return SpecSchedule(minute, hour, dom, month, dow, zone)


def load_location(name: str) -> tzinfo:
    """Go's ``time.LoadLocation``: ``""`` and ``UTC`` are UTC, else an IANA zone
    (``unknown time zone <name>`` when there is none). ``Local`` is UTC here, the zone
    kube-controller-manager runs in."""
    if name in ("", "UTC", "Local"):
        return timezone.utc
    if name.startswith("/") or ".." in name.split("/") or "\\" in name:
        raise ScheduleError(f"unknown time zone {name}")
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError  # only when a zone is named: it imports sysconfig
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ScheduleError(f"unknown time zone {name}") from None


def _descriptor(spec: str, zone: tzinfo) -> Schedule:
    midnight_dom = 1 << _DOM.low
    named = {
        "@yearly": (1, 1, midnight_dom, 1 << _MONTH.low, _all(_DOW)),
        "@monthly": (1, 1, midnight_dom, _all(_MONTH), _all(_DOW)),
        "@weekly": (1, 1, _all(_DOM), _all(_MONTH), 1 << _DOW.low),
        "@daily": (1, 1, _all(_DOM), _all(_MONTH), _all(_DOW)),
        "@hourly": (1, _all(_HOURS), _all(_DOM), _all(_MONTH), _all(_DOW)),
    }
    named["@annually"], named["@midnight"] = named["@yearly"], named["@daily"]
    if spec in named:
        return SpecSchedule(*named[spec], zone)
    if spec.startswith("@every "):
        try:
            duration_ns = parse_go_duration_ns(spec[len("@every "):])
        except ScheduleError as error:
            raise ScheduleError(f"failed to parse duration {spec}: {error}") from None
        return EverySchedule(max(duration_ns, 10**9) // 10**9)
    raise ScheduleError(f"unrecognized descriptor: {spec}")


def _field(text: str, bounds: _Bounds) -> int:
    """A comma list of ranges (empty items skipped, as Go's FieldsFunc does)."""
    bits = 0
    for expr in (part for part in text.split(",") if part):
        bits |= _range(expr, bounds)
    return bits


def _range(expr: str, bounds: _Bounds) -> int:
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    extra = 0
    if low_and_high[0] in ("*", "?"):
        start, end, extra = bounds.low, bounds.high, STAR_BIT
    else:
        start = _int_or_name(low_and_high[0], bounds.names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _int_or_name(low_and_high[1], bounds.names)
        else:
            raise ScheduleError(f"too many hyphens: {expr}")
    step = 1
    if len(range_and_step) == 2:
        step = _atoi(range_and_step[1])
        if len(low_and_high) == 1:
            end = bounds.high  # "N/step" means "N-max/step"
        if step > 1:
            extra = 0
    elif len(range_and_step) > 2:
        raise ScheduleError(f"too many slashes: {expr}")
    if start < bounds.low:
        raise ScheduleError(f"beginning of range ({start}) below minimum ({bounds.low}): {expr}")
    if end > bounds.high:
        raise ScheduleError(f"end of range ({end}) above maximum ({bounds.high}): {expr}")
    if start > end:
        raise ScheduleError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise ScheduleError(f"step of range should be a positive number: {expr}")
    return _bits(start, end, step) | extra


def _int_or_name(text: str, names: Mapping[str, int] | None) -> int:
    if names is not None and text.lower() in names:
        return names[text.lower()]
    return _atoi(text)


_ATOI = re.compile(r"[+-]?[0-9]+")


def _atoi(text: str) -> int:
    """robfig's mustParseInt: Go's strconv.Atoi, then no negatives."""
    if not _ATOI.fullmatch(text):
        raise ScheduleError(f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": invalid syntax')
    number = int(text)
    if abs(number) > _MAX_INT:
        raise ScheduleError(f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": value out of range')
    if number < 0:
        raise ScheduleError(f"negative number ({number}) not allowed: {text}")
    return number


# -- Go durations ----------------------------------------------------------------------------

_UNIT_NS = {"ns": 1, "us": 10**3, "µs": 10**3, "μs": 10**3, "ms": 10**6, "s": 10**9, "m": 60 * 10**9,
            "h": 3600 * 10**9}
_PART = re.compile(r"([0-9]*)(\.[0-9]*)?([^0-9.]*)")


def parse_go_duration_ns(text: str) -> int:
    """Go's ``time.ParseDuration`` in nanoseconds (errors with Go's ``time: …`` texts)."""
    quoted = '"' + text + '"'
    rest, negative = text, False
    if rest[:1] in ("+", "-"):
        negative, rest = rest[0] == "-", rest[1:]
    if rest == "0":
        return 0
    if not rest:
        raise ScheduleError(f"time: invalid duration {quoted}")
    total = 0
    while rest:
        match = _PART.match(rest)
        whole, fraction, unit = (match.group(1), match.group(2) or "", match.group(3)) if match else ("", "", "")
        if not whole and fraction in ("", "."):
            raise ScheduleError(f"time: invalid duration {quoted}")
        if not unit:
            raise ScheduleError(f"time: missing unit in duration {quoted}")
        if unit not in _UNIT_NS:
            raise ScheduleError(f'time: unknown unit "{unit}" in duration {quoted}')
        scale = _UNIT_NS[unit]
        total += int(whole or "0") * scale
        if len(fraction) > 1:
            total += int(fraction[1:]) * scale // 10 ** (len(fraction) - 1)
        if total > _MAX_INT:
            raise ScheduleError(f"time: invalid duration {quoted}")
        rest = rest[match.end():] if match else ""
    return -total if negative else total
