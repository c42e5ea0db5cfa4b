"""When a container instance's probes fail: the instants of its ``Unhealthy`` events.

Upstream's prober records a Warning ``Unhealthy`` event for *every* failed probe
(``prober.go``), not only for the one that crosses ``failureThreshold``. This module
answers "which probes fail next, and when", for one instance, from the same tick grid and
outcome timelines as :mod:`fakekube.kubelet.probes` (``initialDelay + k * period`` since
the container started), and over the same windows the probe plan implies:

* startup: from the first tick until it succeeds (Started) or kills;
* liveness: from Started (the same tick, or the next one after a startup probe) until it
  kills — every failure until then, also those that never reach the threshold;
* readiness: from Started (plus the manual trigger at Started after a startup probe)
  until the instance ends; a probe at the very instant of a probe kill is not counted.

Lazily: :meth:`ProbeFailures.next_after` walks the outcome timeline's unhealthy segments,
so a container healthy for a day costs nothing, and one failing forever costs one answer
per failure. Pure: seconds since container start in and out.
"""

from __future__ import annotations

import math
from typing import Mapping, NamedTuple

from fakekube.kubelet.behaviour import ContainerBehaviour, Timeline
from fakekube.kubelet.probes import KILLED_BY_LIVENESS, ProbePlan, ProbeSpec, first_k_at_or_after

#: Probe types in the order their events are recorded when several fail at one instant.
STARTUP, LIVENESS, READINESS = "Startup", "Liveness", "Readiness"
#: Tolerance when comparing a tick with an instant rounded to microseconds.
EPSILON_S = 1e-6
#: Grid ticks tried from the estimate before giving up (two suffice; the rest absorbs rounding).
_TICKS_TRIED = 8


class Window(NamedTuple):
    """Where one probe runs: its ticks in (start, end) — each bound inclusive or not."""

    kind: str
    spec: ProbeSpec
    outcome: Timeline
    start_s: float
    start_inclusive: bool = True
    end_s: float = math.inf
    end_inclusive: bool = True
    #: A tick off the grid (readiness's manual trigger when a startup probe succeeds).
    extra_tick_s: float | None = None

    def contains(self, t_s: float) -> bool:
        after_start = t_s > self.start_s or (self.start_inclusive and t_s == self.start_s)
        return after_start and self._before_end(t_s)

    def _before_end(self, t_s: float) -> bool:
        return t_s < self.end_s or (self.end_inclusive and t_s == self.end_s)

    def next_failure_s(self, after_s: float) -> float | None:
        """The first failing tick strictly after ``after_s``, or None."""
        best = None
        extra = self.extra_tick_s
        if extra is not None and extra > after_s and self._before_end(extra) and not self.outcome.healthy_at(extra):
            best = extra
        for from_s, until_s in unhealthy_spans(self.outcome):
            if best is not None and from_s >= best:
                break
            tick = self._first_tick(max(from_s, after_s, self.start_s), after_s, until_s)
            if tick is not None:
                return tick if best is None else min(best, tick)
        return best

    def _first_tick(self, lower_s: float, after_s: float, until_s: float) -> float | None:
        """The first grid tick >= ``lower_s`` that is after ``after_s``, in the window, before ``until_s``.

        ``lower_s`` is at or past the window's start and ``after_s``, so the answer is the
        first or second tick from there (bounded: a tick equal to ``after_s`` is skipped)."""
        spec = self.spec
        k = first_k_at_or_after(spec, lower_s - EPSILON_S * spec.period_s)
        for _ in range(_TICKS_TRIED):
            t_s = spec.tick_s(k)
            if t_s >= until_s or t_s > self.end_s:
                return None
            if t_s > after_s and self.contains(t_s):
                return t_s
            k += 1
        return None


def unhealthy_spans(outcome: Timeline) -> list[tuple[float, float]]:
    """The [from, until) spans in which the outcome is unhealthy, in time order."""
    spans = []
    segments = outcome.segments
    for index, (from_s, healthy) in enumerate(segments):
        if not healthy:
            until_s = segments[index + 1][0] if index + 1 < len(segments) else math.inf
            spans.append((from_s, until_s))
    return spans


class ProbeFailures:
    """The failing probes of one container instance (see the module docstring)."""

    __slots__ = ("windows",)
    #: Set once by ``__init__`` (a tuple of immutable windows) and never changed: snapshots
    #: (cluster/statecopy.py) refer to it rather than copy it.
    SNAPSHOT_SHARED = True

    def __init__(self, container: Mapping[str, object], behaviour: ContainerBehaviour, plan: ProbePlan) -> None:
        self.windows = tuple(_windows(container, behaviour, plan))

    def next_after(self, after_s: float) -> tuple[float, tuple[str, ...]] | None:
        """(the next instant any probe fails after ``after_s``, the probe types failing then)."""
        found = [(w.next_failure_s(after_s), w.kind) for w in self.windows]
        times = [t_s for t_s, _ in found if t_s is not None]
        if not times:
            return None
        first = min(times)
        return first, tuple(kind for t_s, kind in found if t_s is not None and abs(t_s - first) < EPSILON_S)


def _windows(container: Mapping[str, object], behaviour: ContainerBehaviour, plan: ProbePlan) -> list[Window]:
    startup = ProbeSpec.from_k8s(container.get("startupProbe"))  # type: ignore[arg-type]
    liveness = ProbeSpec.from_k8s(container.get("livenessProbe"))  # type: ignore[arg-type]
    readiness = ProbeSpec.from_k8s(container.get("readinessProbe"))  # type: ignore[arg-type]
    kill_s = plan.kill_s if plan.kill_s is not None else math.inf
    windows = []
    if startup is not None:
        end_s = plan.started_s if plan.started_s is not None else kill_s
        windows.append(Window(STARTUP, startup, behaviour.startup, 0.0, end_s=end_s))
    started_s = plan.started_s
    if started_s is None:
        return windows
    after_startup = startup is not None
    if liveness is not None:
        end_s = kill_s if plan.kill_reason == KILLED_BY_LIVENESS else math.inf
        windows.append(Window(LIVENESS, liveness, behaviour.liveness, started_s,
                              start_inclusive=not after_startup, end_s=end_s))
    if readiness is not None:
        trigger = after_startup and readiness.initial_delay_s <= started_s
        windows.append(Window(READINESS, readiness, behaviour.readiness, started_s,
                              start_inclusive=not trigger, end_s=kill_s, end_inclusive=False,
                              extra_tick_s=started_s if trigger else None))
    return windows

