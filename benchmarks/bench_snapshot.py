"""What a snapshot costs: taking one and restoring one, for a cluster of N running pods (issue 22).

Prints, with no assertions, for each size: wall and CPU time of ``cluster.snapshot()`` and
``cluster.restore(snap)``, median and min–max over interleaved rounds (``measure.py``),
beside the reference measured in the same rounds: ``Cluster(nodes=3)`` built from scratch
(the build cache off: what the first build of a config pays), ``Cluster(nodes=3)`` once the
process has built that config before (restored from the build cache, cluster/buildcache.py),
and the machine's load. The copy is
structural: stored objects are shared, the rest of the state (controllers, scheduler,
kubelets, engine) is copied, so its cost follows that state's size.

Run ``python benchmarks/bench_snapshot.py [--pods 0,100,500] [--rounds 15] [--round-s 0]``
(``--quick``: 3 rounds of sizes 0 and 100).
"""

from __future__ import annotations

import argparse

import measure
from fakekube import Cluster
from fakekube.cluster import buildcache

REFERENCE = "Cluster(nodes=3) built (ref)"
CACHED = "Cluster(nodes=3) built before"


def built_from_scratch() -> Cluster:
    """A build that the process's build cache does not answer."""
    cache = buildcache.BUILDS
    buildcache.BUILDS = buildcache.BuildCache(enabled=False)
    try:
        return Cluster(nodes=3, seed=1)
    finally:
        buildcache.BUILDS = cache


def running_cluster(pods: int) -> Cluster:
    cluster = Cluster(nodes=3, seed=1)
    for index in range(pods):
        cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{index}", "namespace": "default"},
                        "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}})
    cluster.advance(30)
    return cluster


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pods", default="0,100", help="cluster sizes in running pods, comma-separated")
    parser.add_argument("--quick", action="store_true", help="3 rounds (smoke use)")
    measure.add_round_options(parser, rounds=15, round_s=0.0)
    args = parser.parse_args()
    rounds = 3 if args.quick else args.rounds
    for pods in [int(size) for size in args.pods.split(",")]:
        start = measure.Load.now()
        cluster = running_cluster(pods)
        snap = cluster.snapshot()
        results = measure.interleave({
            "snapshot()": measure.timed(cluster.snapshot),
            "restore(snap)": measure.timed(lambda: cluster.restore(snap)),
            REFERENCE: measure.timed(built_from_scratch),
            CACHED: measure.timed(lambda: Cluster(nodes=3, seed=1)),
        }, rounds, args.round_s)
        measure.report(f"\n{pods} pods running", results, REFERENCE, start, rounds, args.round_s)


if __name__ == "__main__":
    main()
