"""What a realistic cluster costs: the demo generator and ``Cluster.populate`` (issue 23).

Prints, with no assertions, median (min–max) wall and CPU time over interleaved rounds
beside the plain-Python yardstick measured in the same rounds (``measure.py``), and the load:

* ``manifests(seed, apps)`` alone (Faker draws, no cluster) for each size;
* ``populate`` on a fresh ``Cluster(nodes=N)`` (one node per 10 apps, at least 3): the
  objects created through the Python API, then cluster time advanced until every
  Deployment has rolled out; the build is timed as its own row and left out of this one.

Run ``python benchmarks/bench_demo.py`` (``--apps 10,100,500``, ``--rounds``, ``--round-s``;
``--quick`` for a smoke run). Wall time is read with perf_counter; fakekube never reads it.
"""

from __future__ import annotations

import argparse
import functools

import measure
from fakekube import Cluster
from fakekube.cluster.demo import manifests

SEED = 3


def nodes_for(apps: int) -> int:
    """Room for every app's pods (up to 3 replicas of at most 100m CPU each)."""
    return max(3, apps // 10)


def populate_scenario(apps: int) -> measure.Scenario:
    """``populate`` alone: the cluster is built untimed before each call."""
    def scenario() -> measure.Sample:
        cluster = Cluster(nodes=nodes_for(apps))
        return measure.time_call(lambda: cluster.populate(SEED, apps=apps))
    return scenario


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", default="10,100,500", help="comma-separated app counts (default 10,100,500)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 10 apps, 3 rounds")
    measure.add_round_options(parser, rounds=5, round_s=0.0)
    args = parser.parse_args()
    sizes = [10] if args.quick else [int(n) for n in args.apps.split(",")]
    rounds = 3 if args.quick else args.rounds
    scenarios: dict[str, measure.Scenario] = {measure.YARDSTICK: measure.timed(measure.yardstick)}
    for apps in sizes:
        scenarios[f"manifests({SEED}, apps={apps})"] = measure.timed(functools.partial(manifests, SEED, apps))
        scenarios[f"Cluster(nodes={nodes_for(apps)})"] = measure.timed(functools.partial(Cluster, nodes=nodes_for(apps)))
        scenarios[f"populate({SEED}, apps={apps})"] = populate_scenario(apps)
    start = measure.Load.now()
    results = measure.interleave(scenarios, rounds, args.round_s)
    measure.report("Realistic clusters on demand: demo generator and populate", results, measure.YARDSTICK, start,
                   rounds, args.round_s)


if __name__ == "__main__":
    main()
