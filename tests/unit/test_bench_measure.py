"""benchmarks/measure.py's pure parts: the figures and the table a reader of a benchmark sees.

The module is loaded from its file (benchmarks/ is a folder of scripts, not a package).
No timing is asserted: only the arithmetic on given samples and how it is printed.
"""

from __future__ import annotations

import importlib.util
import math
import pathlib
import sys
from types import ModuleType

PATH = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "measure.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_measure", PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


measure = _load()


def test_spread_is_median_min_and_max() -> None:
    assert measure.spread([3.0, 1.0, 2.0, 10.0]) == measure.Spread(2.5, 1.0, 10.0)


def test_spread_of_nothing_is_not_measured() -> None:
    figure = measure.spread([float("nan")])
    assert math.isnan(figure.median)
    assert measure.format_spread(figure) == "-"


def test_ratios_pair_each_round_with_the_same_round_of_the_reference() -> None:
    # Round 2 was slow for both: its ratio is the same as round 1's.
    assert measure.ratios([2.0, 20.0, 3.0], [1.0, 10.0, 1.0]) == measure.Spread(2.0, 2.0, 3.0)


def test_ratios_skip_rounds_where_the_reference_measured_zero() -> None:
    assert measure.ratios([1.0, 4.0], [0.0, 2.0]) == measure.Spread(2.0, 2.0, 2.0)


def test_format_spread_scales_and_rounds() -> None:
    assert measure.format_spread(measure.Spread(0.0123, 0.01, 0.02), scale=1e3) == "12.3 (10.0–20.0)"
    assert measure.format_spread(measure.Spread(1.5, 1.234, 2.0), digits=2) == "1.50 (1.23–2.00)"


def _series(wall: list[float], cpu: list[float]) -> object:
    return measure.Series(wall, cpu)


def test_table_rows_show_wall_cpu_and_ratios_to_the_reference() -> None:
    results = {"scenario": _series([0.002, 0.004, 0.003], [0.001, 0.002, 0.001]),
               "ref": _series([0.001, 0.002, 0.001], [0.001, 0.001, 0.001])}
    head, ours, ref = measure.table(results, "ref")
    assert head.split() == ["scenario", "wall", "ms", "cpu", "ms", "wall", "x", "ref", "cpu", "x", "ref"]
    assert ours.split() == ["scenario", "3.0", "(2.0–4.0)", "1.0", "(1.0–2.0)", "2.00", "(2.00–3.00)",
                            "1.00", "(1.00–2.00)"]
    assert ref.split() == ["ref", "1.0", "(1.0–2.0)", "1.0", "(1.0–1.0)"]  # no ratio to itself


def test_table_without_a_reference_has_no_ratio_columns() -> None:
    head, line = measure.table({"alone": _series([1.0], [0.5])}, None, unit="s", scale=1.0)
    assert "x ref" not in head and "wall s" in head
    assert line.split() == ["alone", "1.0", "(1.0–1.0)", "0.50", "(0.50–0.50)"]


def test_long_names_widen_the_name_column() -> None:
    name = "a scenario name longer than the default column"
    head, line = measure.table({name: _series([1.0], [1.0])}, None)
    assert line.startswith(name + " ")
    assert line.index("1000.0") == head.index("wall ms") + len("wall ms") - len("1000.0 (1000.0–1000.0)")


def test_machine_line_says_load_at_start_and_end_cpus_and_rounds() -> None:
    line = measure.machine_line(measure.Load(1.5), measure.Load(3.25), rounds=5, round_s=2.0)
    assert line.startswith("load 1.50 → 3.25 (1-min average, start → end), ")
    assert "5 interleaved rounds of 2 s each" in line
    assert "one call each" in measure.machine_line(measure.Load(0.0), measure.Load(0.0), 3, 0.0)


def test_interleave_runs_every_scenario_once_per_round_in_order() -> None:
    calls: list[str] = []

    def scenario(name: str) -> object:
        def run() -> object:
            calls.append(name)
            return measure.Sample(1.0, 0.5)
        return run
    results = measure.interleave({"a": scenario("a"), "b": scenario("b")}, rounds=2, round_s=0.0, warmup=True)
    assert calls == ["a", "b", "a", "b", "a", "b"]  # the warm-up, then two rounds
    assert results["a"].wall_s == [1.0, 1.0] and results["b"].cpu_s == [0.5, 0.5]


def test_small_figures_keep_their_significant_digits() -> None:
    assert measure.format_spread(measure.Spread(0.0021, 0.002, 0.0034)) == "0.0021 (0.0020–0.0034)"
    assert measure.format_spread(measure.Spread(0.25, 0.2, 0.3)) == "0.25 (0.20–0.30)"
    assert measure.format_spread(measure.Spread(52.31, 50.0, 61.0)) == "52.3 (50.0–61.0)"


def test_large_ratios_drop_decimals_to_keep_the_column() -> None:
    results = {"hour": _series([250.0, 300.0], [250.0, 300.0]), "ref": _series([1.0, 1.0], [1.0, 1.0])}
    assert measure.table(results, "ref", unit="s", scale=1.0)[1].split()[-4:] == [
        "275", "(250–300)", "275", "(250–300)"]


def test_busy_line_reads_the_hosts_load_from_wall_over_cpu() -> None:
    line = measure.busy_line("yardstick", _series([0.002, 0.004, 0.003], [0.002, 0.002, 0.002]))
    assert line.startswith("yardstick: wall/CPU 1.50 (1.00–2.00) ")
