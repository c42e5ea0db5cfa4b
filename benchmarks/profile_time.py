"""Where an idle cluster's virtual time goes: cProfile of ``advance`` over N idle nodes.

``python benchmarks/profile_time.py [--nodes 5000] [--seconds 300] [--json out.json]``
builds the cluster, advances 60 virtual seconds to reach steady state, then profiles
``advance(seconds)`` and prints the functions with the most own time. ``--json`` writes
{function: [calls, own seconds]} so two checkouts can be diffed (run each with
``PYTHONPATH`` pointing at it). Asserts nothing; wall time is only read to report it.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import time

from fakekube import Cluster


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--json", default=None, help="write {function: [calls, own s]} here")
    args = parser.parse_args()
    cluster = Cluster(nodes=args.nodes)  # the default cluster CIDR has a /24 for each of 8,192 nodes
    cluster.advance(60)
    profile = cProfile.Profile()
    started = time.perf_counter()
    profile.enable()
    cluster.advance(args.seconds)
    profile.disable()
    print(f"{args.nodes} nodes, {args.seconds:.0f} virtual s: {time.perf_counter() - started:.2f} s profiled wall")
    stats = pstats.Stats(profile)
    stats.sort_stats("tottime").print_stats(25)
    if args.json:
        table: dict[str, list[float]] = {}
        for (path, _, function), (_, calls, own_s, _, _) in stats.stats.items():  # type: ignore[attr-defined]
            key = f"{path.split('fakekube/')[-1]}:{function}"
            entry = table.setdefault(key, [0, 0.0])
            entry[0] += calls
            entry[1] += own_s
        with open(args.json, "w") as out:
            json.dump(table, out)


if __name__ == "__main__":
    main()
