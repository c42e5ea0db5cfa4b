"""Where one scheduling cycle's time goes at 5,000 nodes (docs/performance.md, "Scheduling").

Builds a cluster of ``--nodes`` nodes, then, on the engine thread with the scheduler's
own query context, times (CPU time, median of ``--rounds``) for one alike 100m/64Mi pod:
PreFilter, Filter over the sampled nodes (from the rotating start, as a real cycle),
PreScore + Score + selection, and the whole cycle without its binding. Memos are warm
after the first rounds, as in a burst of alike pods. Prints, asserts nothing.

Run ``python benchmarks/scheduler_cycle.py`` (``--nodes 5000 --rounds 200``).
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from fakekube import Cluster
from fakekube.engine import Context
from fakekube.scheduler.framework import CycleState, Diagnosis, PodInfo
from fakekube.scheduler.scheduler import select_host

POD: dict[str, Any] = {"metadata": {"name": "p", "namespace": "default", "labels": {"app": "bench"}},
                       "spec": {"containers": [{"name": "c", "image": "nginx:1.27",
                                                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    cluster = Cluster(nodes=args.nodes)
    scheduler = cluster.scheduler
    assert scheduler is not None
    framework = scheduler.frameworks["default-scheduler"]
    info = PodInfo(POD)

    def measure(ctx: Context) -> dict[str, list[float]]:
        framework.handle.use(ctx)
        nodes = scheduler.snapshot.node_infos()
        times: dict[str, list[float]] = {"PreFilter": [], "Filter": [], "PreScore+Score+select": [], "cycle": []}
        for _ in range(args.rounds):
            state = CycleState()
            started = time.process_time()
            framework.run_pre_filter(state, info)
            filtered = time.process_time()
            feasible = scheduler._filter(framework, state, info, nodes, Diagnosis())
            scored = time.process_time()
            framework.run_pre_score(state, info, feasible)
            select_host(feasible, framework.run_score(state, info, feasible), ctx)
            done = time.process_time()
            times["PreFilter"].append(filtered - started)
            times["Filter"].append(scored - filtered)
            times["PreScore+Score+select"].append(done - scored)
            times["cycle"].append(done - started)
        return times

    results = cluster.engine.query(scheduler.name, measure)
    for phase, samples in results.items():
        print(f"{phase:24} {statistics.median(samples) * 1000:7.3f} ms (median of {len(samples)}, CPU time)")


if __name__ == "__main__":
    main()
