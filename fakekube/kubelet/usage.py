"""Resource usage over time as data: what a simulated container uses of CPU and memory.

Two :class:`ContainerBehaviour` fields hold a :class:`UsageTimeline` each:
``cpu_usage_m`` (millicores) and ``memory_usage_bytes`` (bytes of working set). A timeline
is a step function of seconds since the container started: ``(from_s, value)`` segments,
the value of the last segment starting at or before ``t`` (the first segment's value
before it). metrics-server reports CPU as the average rate over its window and memory as
the working set at the scrape, so a timeline answers both: :meth:`UsageTimeline.value_at`
and :meth:`UsageTimeline.average`.

In YAML, JSON or the annotation a timeline is a number (constant), a quantity string
(``"250m"``, ``"64Mi"``), or a list of ``[from_s, value]`` pairs.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping, Sequence

from fakekube.kubelet.segments import Segments
from fakekube.objects.quantity import parse_quantity

#: The largest figure a timeline may hold: int64, the range of a resource.Quantity's value.
MAX_USAGE = float(2**63 - 1)
#: The most segments one timeline may have: a read walks them all (docs/reliability.md).
MAX_USAGE_SEGMENTS = 1000


class UsageTimeline(Segments[float]):
    """A usage figure over a container's life: ``(from_s, value)`` segments, rising starts.
    Immutable: the default timelines are shared by every behaviour."""

    __slots__ = ()

    def __init__(self, segments: tuple[tuple[float, float], ...] = ((0.0, 0.0),)) -> None:
        if not segments:
            raise ValueError("a usage timeline needs at least one segment")
        if len(segments) > MAX_USAGE_SEGMENTS:
            raise ValueError(f"a usage timeline has at most {MAX_USAGE_SEGMENTS} segments, got {len(segments)}")
        previous = -math.inf
        for from_s, value in segments:
            if not _is_number(from_s) or not _is_number(value) or not 0 <= value <= MAX_USAGE or from_s < 0:
                raise ValueError(f"usage segment ({from_s!r}, {value!r}) must be (seconds >= 0, a figure >= 0)")
            if from_s <= previous:
                raise ValueError("usage segments must start at strictly increasing times")
            previous = from_s
        super().__init__(segments)

    @classmethod
    def constant(cls, value: float) -> UsageTimeline:
        return cls(((0.0, float(value)),))

    def value_at(self, t_s: float) -> float:
        """The figure ``t_s`` seconds after the container started."""
        value = self.segments[0][1]
        for from_s, segment_value in self.segments:
            if from_s > t_s:
                break
            value = segment_value
        return value

    def average(self, start_s: float, end_s: float) -> float:
        """The mean figure over ``[start_s, end_s]`` (a CPU rate over a scrape window)."""
        if end_s <= start_s:
            return self.value_at(end_s)
        total = 0.0
        for index, (from_s, value) in enumerate(self.segments):
            until_s = self.segments[index + 1][0] if index + 1 < len(self.segments) else math.inf
            low = start_s if index == 0 else max(start_s, from_s)
            high = min(end_s, until_s)
            if high > low:
                total += (high - low) * value
        return total / (end_s - start_s)


def parse_usage(raw: Any, unit: str) -> UsageTimeline:
    """A timeline from config: a figure, a quantity string, or ``[[from_s, figure], ...]``.

    ``unit`` is ``"m"`` (figures are millicores; ``"250m"`` and ``"0.5"`` cores parse too)
    or ``"bytes"`` (``"64Mi"`` parses too)."""
    if isinstance(raw, (int, float, str)) and not isinstance(raw, bool):
        return UsageTimeline.constant(_figure(raw, unit))
    if isinstance(raw, (bytes, Mapping)) or not isinstance(raw, Iterable):
        raise ValueError(f"must be a figure, a quantity string or a list of [from_s, figure] pairs, got {raw!r:.80}")
    segments: list[tuple[float, float]] = []
    for item in raw:
        if len(segments) == MAX_USAGE_SEGMENTS:
            raise ValueError(f"at most {MAX_USAGE_SEGMENTS} segments")
        if isinstance(item, Mapping):
            item = (item.get("from_s"), item.get("value"))
        if isinstance(item, (str, bytes)) or not isinstance(item, Sequence) or len(item) != 2:
            raise ValueError(f"segment {item!r:.80} must be [from_s, figure]")
        from_s = item[0]
        if not _is_number(from_s) or not 0 <= from_s <= MAX_USAGE:
            raise ValueError(f"segment start {from_s!r:.80} must be a number of seconds >= 0")
        segments.append((float(from_s), _figure(item[1], unit)))
    return UsageTimeline(tuple(segments))


def _figure(raw: Any, unit: str) -> float:
    """One figure in the timeline's unit, from a number (already in it) or a quantity string."""
    if isinstance(raw, str):
        try:
            amount = parse_quantity(raw)
        except ValueError as error:
            raise ValueError(f"{raw!r:.80}: {error}") from None
        value = float(amount * 1000) if unit == "m" else float(amount)
    elif _is_number(raw):
        value = float(raw)
    else:
        raise ValueError(f"must be a number or a quantity string, got {raw!r:.80}")
    if not math.isfinite(value) or not 0 <= value <= MAX_USAGE:
        raise ValueError(f"must be between 0 and {MAX_USAGE:.0f}, got {raw!r:.80}")
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
