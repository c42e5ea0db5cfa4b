"""Where one scheduling cycle's time goes at 5,000 nodes (docs/performance.md, "Scheduling").

Builds a cluster of ``--nodes`` nodes, then, on the engine thread with the scheduler's
own query context, times (wall and CPU, median and min–max of ``--rounds``) for one
alike 100m/64Mi pod: PreFilter, Filter over the sampled nodes (from the rotating start,
as a real cycle), PreScore + Score + selection, and the cycle up to selection. **It ends
at host selection: nothing binds**, so no node is invalidated and every memo stays warm
after the first rounds — a best case for one cycle's parts, not a throughput. For pods
per second in a burst where every binding invalidates its node, and for create → Running,
see ``bench_scheduler.py``. A plain-Python yardstick runs in the same rounds
(``measure.py``). Prints, asserts nothing.

Run ``python benchmarks/scheduler_cycle.py`` (``--nodes 5000 --rounds 200``; ``--quick``:
500 nodes, 20 rounds).
"""

from __future__ import annotations

import argparse
from typing import Any

import measure
from fakekube import Cluster
from fakekube.engine import Context
from fakekube.scheduler.framework import CycleState, Diagnosis, PodInfo
from fakekube.scheduler.scheduler import select_host

POD: dict[str, Any] = {"metadata": {"name": "p", "namespace": "default", "labels": {"app": "bench"}},
                       "spec": {"containers": [{"name": "c", "image": "nginx:1.27",
                                                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}
PHASES = ("PreFilter", "Filter", "PreScore+Score+select", "cycle to selection (no binding)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="smoke run: 500 nodes, 20 rounds")
    args = parser.parse_args()
    if args.quick:
        args.nodes, args.rounds = 500, 20
    start = measure.Load.now()
    cluster = Cluster(nodes=args.nodes)
    scheduler = cluster.scheduler
    assert scheduler is not None
    framework = scheduler.frameworks["default-scheduler"]
    info = PodInfo(POD)

    def one_cycle(ctx: Context, nodes: Any) -> list[measure.Sample]:
        """The phases of one cycle, each timed; the last sample is the whole."""
        state = CycleState()
        feasible: list[Any] = []

        def filter_nodes() -> None:
            feasible.extend(scheduler._filter(framework, state, info, nodes, Diagnosis()))

        def score() -> None:
            framework.run_pre_score(state, info, feasible)
            select_host(feasible, framework.run_score(state, info, feasible), ctx)
        parts = [measure.time_call(lambda: framework.run_pre_filter(state, info)), measure.time_call(filter_nodes),
                 measure.time_call(score)]
        return [*parts, measure.Sample(sum(p.wall_s for p in parts), sum(p.cpu_s for p in parts))]

    def run(ctx: Context) -> dict[str, measure.Series]:
        framework.handle.use(ctx)
        nodes = scheduler.snapshot.node_infos()
        results = {name: measure.Series() for name in (*PHASES, measure.YARDSTICK)}
        one_cycle(ctx, nodes)  # warm-up, not counted
        for _ in range(args.rounds):
            for name, sample in zip(PHASES, one_cycle(ctx, nodes)):
                results[name].add(sample)
            results[measure.YARDSTICK].add(measure.time_call(measure.yardstick))
        return results

    results = cluster.engine.query(scheduler.name, run)
    measure.report(f"one alike pod's scheduling cycle at {args.nodes} nodes, ending at host selection (no binding)",
                   results, measure.YARDSTICK, start, args.rounds, 0.0)


if __name__ == "__main__":
    main()
