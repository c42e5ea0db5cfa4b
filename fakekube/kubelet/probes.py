"""Probe results over time, as upstream's prober workers produce them. Pure: seconds in, seconds out.

What is modelled (``pkg/kubelet/prober/worker.go`` and ``prober_manager.go``):

* A probe runs at ``initialDelaySeconds`` after the container started, then every
  ``periodSeconds``. (Upstream's ticker is phased from when the kubelet added the pod and
  only *skips* ticks inside the initial delay; anchoring at container start makes the
  instants predictable — the one-line simplification.)
* Each probe is a success or a failure: the container's outcome timeline at that instant.
* Consecutive equal results are counted; the result only takes effect after
  ``successThreshold`` successes or ``failureThreshold`` failures in a row.
* Initial results: readiness starts as Failure (not ready until a success), liveness as
  Success, startup as Unknown (the container is not "started").
* While a startup probe has not succeeded, readiness and liveness do not probe. When it
  succeeds the container is Started and the probe manager triggers one readiness probe at
  once (the manual trigger in ``UpdatePodStatus``); liveness waits for its next tick.
* The startup probe stops once it succeeded. A liveness or startup failure means the
  kubelet kills the container (reasons ``LivenessProbe`` / ``StartupProbe``) and the worker
  holds until a new container — the next instance gets a fresh plan.
* No readiness probe: Ready as soon as the container is Started. No startup probe:
  Started as soon as it runs.

Simplifications: a probe's result is instantaneous (``timeoutSeconds`` is carried but a
hung probe is written as an unhealthy segment); the extra readiness probes upstream's
manual trigger fires on other status updates are not modelled.
"""

from __future__ import annotations

import math
from typing import Any, Iterator, Mapping, NamedTuple

from fakekube.kubelet.behaviour import MAX_DURATION_S, ContainerBehaviour, Timeline
from fakekube.record import FrozenRecord

#: Upstream API defaults for a Probe (pkg/apis/core/v1/defaults.go).
DEFAULT_PERIOD_S = 10.0
DEFAULT_TIMEOUT_S = 1.0
DEFAULT_SUCCESS_THRESHOLD = 1
DEFAULT_FAILURE_THRESHOLD = 3

#: Upstream's containerKillReason values (kuberuntime_manager.go).
KILLED_BY_LIVENESS = "LivenessProbe"
KILLED_BY_STARTUP = "StartupProbe"

Transition = tuple[float, bool]

#: Nothing a probe does later than this after the container started is simulated (Go's
#: time.Duration range, about 292 years: upstream's timers cannot be set further either).
MAX_PROBE_HORIZON_S = MAX_DURATION_S
#: A tick index past every horizon; and how many steps fix a float-rounded estimate.
_K_INFINITY = 2**63
_ROUNDING_STEPS = 4


class ProbeSpec(FrozenRecord):
    """The timing half of a v1.Probe; the handler (exec/http/tcp/grpc) is not simulated."""

    __slots__ = ("initial_delay_s", "period_s", "timeout_s", "success_threshold", "failure_threshold")
    initial_delay_s: float
    period_s: float
    timeout_s: float
    success_threshold: int
    failure_threshold: int

    def __init__(self, initial_delay_s: float = 0.0, period_s: float = DEFAULT_PERIOD_S,
                 timeout_s: float = DEFAULT_TIMEOUT_S, success_threshold: int = DEFAULT_SUCCESS_THRESHOLD,
                 failure_threshold: int = DEFAULT_FAILURE_THRESHOLD) -> None:
        if initial_delay_s < 0 or not math.isfinite(initial_delay_s):
            raise ValueError(f"initialDelaySeconds: must be >= 0, got {initial_delay_s}")
        if period_s <= 0 or timeout_s <= 0:
            raise ValueError("periodSeconds and timeoutSeconds must be > 0")
        if success_threshold < 1 or failure_threshold < 1:
            raise ValueError("successThreshold and failureThreshold must be >= 1")
        values = (initial_delay_s, period_s, timeout_s, success_threshold, failure_threshold)
        for name, value in zip(self.__slots__, values, strict=True):
            self._set(name, value)

    @classmethod
    def from_k8s(cls, probe: Mapping[str, Any] | None) -> ProbeSpec | None:
        """From a pod spec's probe (camelCase); unset or 0 fields take upstream's defaults."""
        if probe is None:
            return None
        return cls(
            initial_delay_s=float(probe.get("initialDelaySeconds") or 0),
            period_s=float(probe.get("periodSeconds") or DEFAULT_PERIOD_S),
            timeout_s=float(probe.get("timeoutSeconds") or DEFAULT_TIMEOUT_S),
            success_threshold=int(probe.get("successThreshold") or DEFAULT_SUCCESS_THRESHOLD),
            failure_threshold=int(probe.get("failureThreshold") or DEFAULT_FAILURE_THRESHOLD),
        )

    def horizon_s(self, after_s: float, outcome: Timeline) -> float:
        """No result can change after this: the outcome is constant and every count is full
        (at most :data:`MAX_PROBE_HORIZON_S`: what would happen later never does)."""
        settled_s = max(self.initial_delay_s, after_s, outcome.last_change_s)
        return min(MAX_PROBE_HORIZON_S,
                   settled_s + self.period_s * (max(self.success_threshold, self.failure_threshold) + 1))

    def tick_s(self, k: int) -> float:
        """The k-th probe instant (k >= 0)."""
        return self.initial_delay_s + k * self.period_s


class Ticks:
    """Probe instants, described rather than listed: ``extra_s`` (readiness's manual trigger),
    then the grid ticks ``spec.tick_s(k)`` for ``first <= k <= last``. A billion ticks cost
    as little as one: every question about them is answered arithmetically."""

    __slots__ = ("spec", "first", "last", "extra_s")

    def __init__(self, spec: ProbeSpec, first: int, last: int, extra_s: float | None = None) -> None:
        self.spec = spec
        self.first = first
        self.last = last
        self.extra_s = extra_s

    def __iter__(self) -> Iterator[float]:
        if self.extra_s is not None:
            yield self.extra_s
        for k in range(self.first, self.last + 1):
            yield self.spec.tick_s(k)

    def blocks(self, outcome: Timeline) -> Iterator[tuple[int | None, int, bool]]:
        """Maximal stretches of ticks one outcome segment covers, in time order: (the first
        tick's k, or None for the extra tick; how many ticks; the result). One block per
        outcome segment, not one per tick."""
        if self.extra_s is not None:
            yield None, 1, outcome.healthy_at(self.extra_s)
        bounds = [(-math.inf, True)] + list(outcome.segments)
        for index, (from_s, healthy) in enumerate(bounds):
            until_s = bounds[index + 1][0] if index + 1 < len(bounds) else math.inf
            lo = max(self.first, first_k_at_or_after(self.spec, from_s))
            hi = min(self.last, first_k_at_or_after(self.spec, until_s) - 1)
            if lo <= hi:
                yield lo, hi - lo + 1, healthy

    def instant(self, first_k: int | None, index: int) -> float:
        """The instant of tick ``index`` of the block starting at ``first_k``."""
        if first_k is None:
            assert self.extra_s is not None
            return self.extra_s
        return self.spec.tick_s(first_k + index)


def first_k_at_or_after(spec: ProbeSpec, t_s: float) -> int:
    """The least k >= 0 with ``tick_s(k) >= t_s`` (a huge k for t = inf)."""
    if t_s == math.inf:
        return _K_INFINITY
    if t_s <= spec.initial_delay_s:
        return 0
    k = min(_K_INFINITY, max(0, math.ceil((t_s - spec.initial_delay_s) / spec.period_s)))
    for _ in range(_ROUNDING_STEPS):  # float rounding leaves the estimate a step or two off
        if k > 0 and spec.tick_s(k - 1) >= t_s:
            k -= 1
        elif spec.tick_s(k) < t_s:
            k += 1
        else:
            break
    return k


def probe_ticks(spec: ProbeSpec, after_s: float, until_s: float, *, inclusive: bool = True) -> Ticks:
    """Ticks ``initialDelay + k * period`` from ``after_s`` (inclusive or not) to ``until_s`` (inclusive)."""
    first = first_k_at_or_after(spec, after_s)
    if not inclusive and spec.tick_s(first) == after_s:
        first += 1
    last = first_k_at_or_after(spec, until_s) - 1
    if until_s != math.inf and spec.tick_s(last + 1) == until_s:
        last += 1
    return Ticks(spec, first, last)


def probe_times(spec: ProbeSpec, after_s: float, until_s: float, *, inclusive: bool = True) -> Iterator[float]:
    """Tick instants ``initialDelay + k * period`` from ``after_s`` (inclusive or not) to ``until_s``."""
    return iter(probe_ticks(spec, after_s, until_s, inclusive=inclusive))


def result_transitions(spec: ProbeSpec, outcome: Timeline, ticks: Ticks, initial: bool | None,
                       *, hold_on_failure: bool = False) -> list[Transition]:
    """Apply the worker's threshold counting to probes at ``ticks``; only changes are returned.

    ``initial`` is the result before any probe (None = Unknown). With ``hold_on_failure``
    (liveness, startup) the worker stops after the first failure result takes effect.
    Counted per stretch of equal results, so the cost is the number of outcome segments
    whatever the thresholds, periods and horizon.
    """
    current, last, run = initial, None, 0
    changes: list[Transition] = []
    for first_k, count, result in ticks.blocks(outcome):
        run_before = run if result == last else 0
        last, run = result, run_before + count
        threshold = spec.success_threshold if result else spec.failure_threshold
        if run < threshold:
            continue
        reached_s = ticks.instant(first_k, max(0, threshold - run_before - 1))
        if result != current:
            current = result
            changes.append((reached_s, result))
        if hold_on_failure and not result:
            break
    return changes


def startup_outcome(spec: ProbeSpec, outcome: Timeline, until_s: float | None = None) -> Transition | None:
    """``(t, True)``: Started at t; ``(t, False)``: killed at t; None: undecided by ``until_s``."""
    until_s = spec.horizon_s(0.0, outcome) if until_s is None else until_s
    for t_s, success in result_transitions(spec, outcome, probe_ticks(spec, 0.0, until_s), None,
                                           hold_on_failure=True):
        return (t_s, success)
    return None


def readiness_transitions(spec: ProbeSpec, outcome: Timeline, started_s: float = 0.0,
                          until_s: float | None = None, *, after_startup: bool = False) -> list[Transition]:
    """When Ready flips, for a container Started at ``started_s``. Ready is False before the first.

    ``after_startup``: Started came from a startup probe, so the probe manager triggers one
    readiness probe at ``started_s`` (if past the initial delay) before the regular ticks.
    """
    until_s = spec.horizon_s(started_s, outcome) if until_s is None else until_s
    ticks = probe_ticks(spec, started_s, until_s)
    if after_startup and spec.initial_delay_s <= started_s <= until_s:
        grid = probe_ticks(spec, started_s, until_s, inclusive=False)
        ticks = Ticks(grid.spec, grid.first, grid.last, extra_s=started_s)
    return result_transitions(spec, outcome, ticks, False)


def liveness_failure_s(spec: ProbeSpec, outcome: Timeline, started_s: float = 0.0,
                       until_s: float | None = None, *, after_startup: bool = False) -> float | None:
    """When the liveness result turns Failure (the kubelet kills the container), or None.

    ``after_startup``: Started came from a startup probe at ``started_s``; liveness first
    probes on its next tick after that instant (it has no manual trigger).
    """
    until_s = spec.horizon_s(started_s, outcome) if until_s is None else until_s
    ticks = probe_ticks(spec, started_s, until_s, inclusive=not after_startup)
    for t_s, success in result_transitions(spec, outcome, ticks, True, hold_on_failure=True):
        if not success:
            return t_s
    return None


class ProbePlan(NamedTuple):
    """Everything the probes will do to one container instance, in seconds since it started."""

    #: Started becomes true here (containerStatuses[].started); None = never.
    started_s: float | None
    #: When Ready flips; Ready is False before the first entry.
    ready: tuple[Transition, ...]
    #: The kubelet kills the container here because a probe failed; None = never.
    kill_s: float | None = None
    kill_reason: str | None = None

    def ready_at(self, t_s: float) -> bool:
        value = False
        for from_s, ready in self.ready:
            if from_s > t_s:
                break
            value = ready
        return value


def plan_probes(container: Mapping[str, Any], behaviour: ContainerBehaviour,
                until_s: float | None = None) -> ProbePlan:
    """The probe plan for a container spec (camelCase probes) running ``behaviour``.

    Probing stops when the container exits by itself (``run_for_s``) or at ``until_s``.
    """
    ends = [end for end in (until_s, behaviour.run_for_s) if end is not None]
    end_s = min(ends) if ends else None
    startup = ProbeSpec.from_k8s(container.get("startupProbe"))
    started_s = 0.0
    if startup is not None:
        decided = startup_outcome(startup, behaviour.startup, end_s)
        if decided is None:
            return ProbePlan(None, ())
        if not decided[1]:
            return ProbePlan(None, (), decided[0], KILLED_BY_STARTUP)
        started_s = decided[0]
    kill_s = _liveness_kill(container, behaviour.liveness, started_s, end_s, startup is not None)
    ready = _ready(container, behaviour.readiness, started_s, kill_s if kill_s is not None else end_s,
                   startup is not None)
    return ProbePlan(started_s, tuple(ready), kill_s, KILLED_BY_LIVENESS if kill_s is not None else None)


def _liveness_kill(container: Mapping[str, Any], outcome: Timeline, started_s: float,
                   end_s: float | None, after_startup: bool) -> float | None:
    spec = ProbeSpec.from_k8s(container.get("livenessProbe"))
    if spec is None:
        return None
    return liveness_failure_s(spec, outcome, started_s, end_s, after_startup=after_startup)


def _ready(container: Mapping[str, Any], outcome: Timeline, started_s: float,
           end_s: float | None, after_startup: bool) -> list[Transition]:
    spec = ProbeSpec.from_k8s(container.get("readinessProbe"))
    if spec is None:
        return [(started_s, True)]
    return readiness_transitions(spec, outcome, started_s, end_s, after_startup=after_startup)
