"""How every benchmark measures and reports, so that a figure says how far it can be trusted.

A benchmark on a shared machine measures the host as much as the code: the same scenario
took 279 ms at load 16 and 40 ms at load 2. So every figure here is printed with

* CPU time beside wall time (this process's ``process_time``, or a server child's CPU
  from /proc): a loaded host shows as wall >> CPU, while CPU moves much less;
* the median and the min–max of repeated rounds, not one number;
* its reference, measured in the *same* rounds: each round runs every scenario once,
  back to back (interleaved), so a burst of other load slows a scenario and its
  reference alike, and the per-round ratio stays meaningful;
* the machine's load average at the start and end, and its CPU count.

Rounds can be time-boxed (``round_s``): a scenario is then repeated until the round's
wall time is used up and the round's figure is the mean per call. Nothing here asserts a
timing; the leaves (:func:`spread`, :func:`ratios`, :func:`row`) are pure, so tests can
check what a reader sees.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

#: The name of the plain-Python reference scenario (:func:`yardstick`).
YARDSTICK = "yardstick (plain Python, ref)"
#: Reads CPU seconds used so far: this process's by default, or a server child's.
CpuClock = Callable[[], float]
#: One run of a scenario: it times what it measures (set-up around it is not counted).
Scenario = Callable[[], "Sample"]


@dataclass(frozen=True)
class Sample:
    """Wall and CPU seconds of one timed piece of work."""

    wall_s: float
    cpu_s: float


def time_call(work: Callable[[], object], cpu_clock: CpuClock = time.process_time) -> Sample:
    """Wall (perf_counter) and CPU seconds of ``work()``; the garbage collector is left on,
    since the code under test pays for it too."""
    wall, cpu = time.perf_counter(), cpu_clock()
    work()
    return Sample(time.perf_counter() - wall, cpu_clock() - cpu)


def timed(work: Callable[[], object], cpu_clock: CpuClock = time.process_time) -> Scenario:
    """A scenario that times all of ``work`` (for work with no untimed set-up)."""
    return lambda: time_call(work, cpu_clock)


@dataclass
class Series:
    """One scenario's samples, one per round (for a time-boxed round: the mean per call)."""

    wall_s: list[float] = field(default_factory=list)
    cpu_s: list[float] = field(default_factory=list)

    def add(self, sample: Sample) -> None:
        self.wall_s.append(sample.wall_s)
        self.cpu_s.append(sample.cpu_s)


def run_round(scenario: Scenario, round_s: float) -> Sample:
    """Run ``scenario`` once, or again and again until ``round_s`` of wall time has passed
    (a longer round evens out a short stall; the scenario's untimed set-up counts toward
    the round's length too); the mean per call."""
    started = time.perf_counter()
    samples = [scenario()]
    while time.perf_counter() - started < round_s:
        samples.append(scenario())
    return Sample(sum(s.wall_s for s in samples) / len(samples), sum(s.cpu_s for s in samples) / len(samples))


def interleave(scenarios: Mapping[str, Scenario], rounds: int, round_s: float = 0.0,
               warmup: bool = True) -> dict[str, Series]:
    """Each scenario once per round, ``rounds`` times, in the order given: a scenario and
    its reference then meet the same host conditions. With ``warmup`` each runs once first,
    uncounted (lazy imports, caches, first allocations)."""
    if warmup:
        for scenario in scenarios.values():
            scenario()
    results = {name: Series() for name in scenarios}
    for _ in range(rounds):
        for name, scenario in scenarios.items():
            results[name].add(run_round(scenario, round_s))
    return results


# -- the pure parts: arithmetic and formatting ------------------------------------------

@dataclass(frozen=True)
class Spread:
    """Median and range of a set of values (the range says how much to trust the median)."""

    median: float
    low: float
    high: float


def spread(values: Sequence[float]) -> Spread:
    """Median, min and max; NaN for no values (a figure that was not measured)."""
    finite = [value for value in values if value == value]  # NaN is the only value not equal to itself
    if not finite:
        nan = float("nan")
        return Spread(nan, nan, nan)
    return Spread(statistics.median(finite), min(finite), max(finite))


def ratios(values: Sequence[float], reference: Sequence[float]) -> Spread:
    """The spread of per-round ratios value/reference, round i against round i of the
    reference (measured back to back, so the host's state cancels out of each ratio)."""
    return spread([value / ref for value, ref in zip(values, reference) if ref > 0])


def decimals(value: float) -> int:
    """Decimals that show a value to about three significant figures when it is below 1
    (a yardstick of 0.002 s is not printed as 0.0), one decimal above."""
    for limit, places in ((1.0, 1), (0.1, 2), (0.01, 3)):
        if abs(value) >= limit:
            return places
    return 4


def ratio_decimals(value: float) -> int:
    """Two decimals for a ratio near 1, three below 0.1 (a sub-millisecond phase against
    the yardstick), fewer in the hundreds (per-hour figures against it), so the figure
    stays readable and the column keeps its width."""
    return 3 if abs(value) < 0.1 else 2 if abs(value) < 10 else 1 if abs(value) < 100 else 0


def format_spread(figure: Spread, scale: float = 1.0, digits: int | None = None) -> str:
    """``median (min–max)`` of the values times ``scale``, with ``digits`` decimals (by
    default as :func:`decimals` picks for the median); ``-`` when not measured."""
    if figure.median != figure.median:
        return "-"
    if digits is None:
        digits = decimals(figure.median * scale)
    return (f"{figure.median * scale:.{digits}f} "
            f"({figure.low * scale:.{digits}f}–{figure.high * scale:.{digits}f})")


NAME_WIDTH = 28
CELL_WIDTH = 22
RATIO_WIDTH = 18


def header(unit: str, reference: str | None, name_width: int = NAME_WIDTH) -> str:
    """The table's column titles: wall and CPU in ``unit``, then the ratios to ``reference``."""
    line = f"{'scenario':<{name_width}} {'wall ' + unit:>{CELL_WIDTH}} {'cpu ' + unit:>{CELL_WIDTH}}"
    if reference is not None:
        line += f" {'wall x ref':>{RATIO_WIDTH}} {'cpu x ref':>{RATIO_WIDTH}}"
    return line


def row(name: str, series: Series, reference: Series | None, scale: float = 1e3,
        name_width: int = NAME_WIDTH) -> str:
    """One scenario: wall and CPU as ``median (min–max)`` times ``scale`` (seconds to ms by
    default), then wall and CPU ratios to ``reference`` over the same rounds (blank for the
    reference itself and when there is none)."""
    line = (f"{name:<{name_width}} {format_spread(spread(series.wall_s), scale):>{CELL_WIDTH}} "
            f"{format_spread(spread(series.cpu_s), scale):>{CELL_WIDTH}}")
    if reference is not None and reference is not series:
        for values, ref_values in ((series.wall_s, reference.wall_s), (series.cpu_s, reference.cpu_s)):
            figure = ratios(values, ref_values)
            line += f" {format_spread(figure, digits=ratio_decimals(figure.median)):>{RATIO_WIDTH}}"
    return line


def table(results: Mapping[str, Series], reference: str | None, unit: str = "ms", scale: float = 1e3) -> list[str]:
    """Header and one row per scenario, ratios against the ``reference`` scenario's rounds."""
    name_width = max([NAME_WIDTH, *(len(name) for name in results)])
    ref = results[reference] if reference is not None else None
    return [header(unit, reference, name_width),
            *(row(name, series, ref, scale, name_width) for name, series in results.items())]


# -- the machine --------------------------------------------------------------------------

@dataclass(frozen=True)
class Load:
    """The 1-minute load average at one moment (NaN where the OS has none)."""

    one_min: float

    @classmethod
    def now(cls) -> "Load":
        try:
            return cls(os.getloadavg()[0])
        except OSError:
            return cls(float("nan"))


def load_line(start: Load, end: Load) -> str:
    """The load at start and end and the CPU count: a load above the CPU count means the
    figures had to share the machine."""
    return f"load {start.one_min:.2f} → {end.one_min:.2f} (1-min average, start → end), {os.cpu_count()} CPUs"


def machine_line(start: Load, end: Load, rounds: int, round_s: float) -> str:
    """What a reader needs to weigh the table below: load, CPUs, how it was sampled."""
    boxed = f" of {round_s:g} s each" if round_s > 0 else ", one call each"
    return f"{load_line(start, end)}; {rounds} interleaved rounds{boxed}; median (min–max)"


def busy_line(name: str, series: Series) -> str:
    """Wall/CPU of a single-threaded scenario that never waits (the yardstick): about 1 on
    an idle core; above that, the share of time the process waited for a core."""
    return (f"{name}: wall/CPU {format_spread(ratios(series.wall_s, series.cpu_s), digits=2)} "
            "(about 1.0 when this process had a core to itself; more: the host was busy)")


def report(title: str, results: Mapping[str, Series], reference: str | None, start: Load, rounds: int,
           round_s: float, unit: str = "ms", scale: float = 1e3) -> None:
    """Print a titled table, its machine line first (the load read now as the end), and,
    when the yardstick ran, how busy the host was by its wall/CPU."""
    print(title)
    print(machine_line(start, Load.now(), rounds, round_s))
    for line in table(results, reference, unit, scale):
        print(line)
    if YARDSTICK in results:
        print(busy_line(YARDSTICK, results[YARDSTICK]))


# -- a reference for benchmarks that have no natural one -----------------------------------

_YARDSTICK_DOC = [{"name": f"item-{i}", "labels": {"app": "x", "tier": str(i % 7)}, "n": i} for i in range(200)]


def yardstick() -> None:
    """A fixed piece of plain-Python work (about a millisecond: JSON round trips, dict and
    list handling) that involves no fakekube code. Measured in the same rounds as a
    scenario with no natural reference, its own wall time shows how much the host slowed
    that round, and the ratio scenario/yardstick shows the scenario in host-independent units.
    The cyclic collector is off while it runs: a collection would scan whatever heap the
    benchmark has built, and the yardstick would measure that instead of the host."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(5):
            decoded = json.loads(json.dumps(_YARDSTICK_DOC))
            sorted(decoded, key=lambda item: (item["labels"]["tier"], -item["n"]))
    finally:
        if enabled:
            gc.enable()




def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds a live process (a server child) has used so far, from
    /proc (Linux; in clock ticks, usually 10 ms); NaN elsewhere. A :data:`CpuClock` for a
    server measured from outside: ``functools.partial(process_cpu_s, pid)``."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime (fields 14, 15)


# -- memory ----------------------------------------------------------------------------------

PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def rss_bytes() -> int:
    """This process's resident set now, after a full collection (Linux /proc; 0 elsewhere),
    so that garbage not yet collected is not counted as cost."""
    gc.collect()
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * PAGE_BYTES
    except OSError:
        return 0


# -- options shared by every benchmark -------------------------------------------------------

def add_round_options(parser: argparse.ArgumentParser, rounds: int, round_s: float) -> None:
    """``--rounds`` and ``--round-s`` with this benchmark's defaults."""
    parser.add_argument("--rounds", type=int, default=rounds, help=f"interleaved rounds (default {rounds})")
    parser.add_argument("--round-s", type=float, default=round_s,
                        help=f"wall seconds per scenario per round; 0: one call per round (default {round_s:g})")
