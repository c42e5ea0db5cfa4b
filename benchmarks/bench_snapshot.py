"""What a snapshot costs: taking one and restoring one, for a cluster of N running pods (issue 22).

Prints, with no assertions, for each size: wall and CPU time (process time, so a loaded
host shows as wall >> CPU) of ``cluster.snapshot()`` and ``cluster.restore(snap)``, median
and min–max over interleaved rounds, beside the reference measured in the same rounds:
``Cluster(nodes=3)`` built from scratch (what a test pays today for a fresh cluster), and
the machine's load average. The copy is structural: stored objects are shared, the rest of
the state (controllers, scheduler, kubelets, engine) is copied, so its cost follows that
state's size.

Run ``python benchmarks/bench_snapshot.py [--pods 0,100,500] [--rounds 15]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Callable

from fakekube import Cluster


def timed(work: Callable[[], object]) -> tuple[float, float]:
    """(wall ms, CPU ms) of ``work()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def running_cluster(pods: int) -> Cluster:
    cluster = Cluster(nodes=3, seed=1)
    for index in range(pods):
        cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{index}", "namespace": "default"},
                        "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}})
    cluster.advance(30)
    return cluster


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):8.1f} ({min(values):.1f}–{max(values):.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pods", default="0,100", help="cluster sizes in running pods, comma-separated")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}; {args.rounds} rounds; ms, median (min–max)")
    print(f"{'pods':>5} {'what':<22} {'wall':>22} {'cpu':>22}")
    for pods in [int(size) for size in args.pods.split(",")]:
        cluster = running_cluster(pods)
        snap = cluster.snapshot()
        rows: dict[str, tuple[list[float], list[float]]] = {"snapshot": ([], []), "restore": ([], []),
                                                            "Cluster(nodes=3) (ref)": ([], [])}
        for _ in range(args.rounds):
            for name, work in (("snapshot", cluster.snapshot), ("restore", lambda: cluster.restore(snap)),
                               ("Cluster(nodes=3) (ref)", lambda: Cluster(nodes=3, seed=1))):
                wall, cpu = timed(work)
                rows[name][0].append(wall)
                rows[name][1].append(cpu)
        for name, (walls, cpus) in rows.items():
            print(f"{pods:>5} {name:<22} {spread(walls):>22} {spread(cpus):>22}")


if __name__ == "__main__":
    main()
