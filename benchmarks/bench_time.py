"""How fast does cluster time run? Wall and CPU time for virtual-time scenarios (issues 3, 22).

Prints, with no assertions, each as median (min–max) over interleaved rounds beside a
plain-Python yardstick measured in the same rounds (``measure.py``), and the load:

* **headline**: 3 nodes, two pods on node-1, node-1 stops its heartbeats, advance 400
  virtual seconds (Unknown at 45 s, tainted at 50 s, evictions at 110 s and 350 s). Only
  the scenario is timed: the cluster is built, the scenario run once (lazy imports, first
  allocations) and a snapshot taken before the rounds; each call restores it untimed.
  ``Cluster(nodes=3)`` is timed as its own row (the old headline included it);
* **idle healthy nodes** (Lease every 10 s, status every 5 min, the node lifecycle
  controller's pass every 5 s) for several cluster sizes, as wall and CPU seconds per
  virtual hour, each round one slice of the span; with each cluster's build time and its
  memory per node (RSS growth / nodes, measured in a fresh interpreter: from after a
  3-node cluster's one-time work to after the build and one slice);
* **busy nodes**: the same with ``--pods-per-node`` running pods on every node, created
  through the trusted internal path and started by the simulated kubelets first;
* **idle day** (``--only idle-day``): a small idle cluster (``--day-nodes``, default 1 and
  3 nodes) run one virtual day per round, built and run 60 virtual s first — what a test
  that moves a small cluster through days or weeks pays (issue 22: work nobody observes
  costs nothing), with the periodic passes the engine skipped as quiet.

Run ``python benchmarks/bench_time.py`` (``--quick`` for a smoke run of a few seconds;
``--nodes 100,1000,5000``, ``--rounds``, ``--round-s``, ``--virtual-s``, ``--only busy``
for the busy run's memory alone). Wall time is
read with perf_counter; fakekube itself never reads it.
"""

from __future__ import annotations

import argparse
import functools
import os
import resource
import subprocess
import sys

import measure
from fakekube import Cluster
from fakekube.api.verbs.apiserver import WriteOptions

HOUR_S = 3600.0
DAY_S = 86400.0
TOLERATIONS = [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
                "tolerationSeconds": 60}]


def headline_scenario(cluster: Cluster) -> None:
    """The node-failure eviction scenario on a ready 3-node cluster."""
    for name, extra in (("default", {}), ("sixty", {"tolerations": TOLERATIONS})):
        cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                        "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx"}], **extra}})
    cluster.fail_node("node-1")
    cluster.advance(400)
    assert cluster.get("v1", "Pod", "default")["metadata"].get("deletionTimestamp"), "scenario did not run"


def headline(rounds: int, round_s: float) -> None:
    start = measure.Load.now()
    headline_scenario(Cluster(nodes=3))  # lazy imports and first allocations, not timed
    cluster = Cluster(nodes=3)
    ready = cluster.snapshot()

    def from_snapshot() -> measure.Sample:
        cluster.restore(ready)
        return measure.time_call(lambda: headline_scenario(cluster))

    results = measure.interleave({
        "headline scenario (restored)": from_snapshot,
        "Cluster(nodes=3) (not in it)": measure.timed(lambda: Cluster(nodes=3)),
        measure.YARDSTICK: measure.timed(measure.yardstick),
    }, rounds, round_s)
    measure.report("headline: 3 nodes, node-1 fails, 400 virtual s  [issue 22 target: < 5 ms]", results,
                   measure.YARDSTICK, start, rounds, round_s)


def advance_slice(cluster: Cluster, slice_s: float) -> measure.Sample:
    """One round of an idle run: wall and CPU seconds per virtual hour over one slice."""
    sample = measure.time_call(lambda: cluster.advance(slice_s))
    return measure.Sample(sample.wall_s * HOUR_S / slice_s, sample.cpu_s * HOUR_S / slice_s)


def built(nodes: int) -> tuple[Cluster, measure.Sample]:
    """A cluster of ``nodes`` nodes and the wall and CPU seconds its build took."""
    holder: list[Cluster] = []
    sample = measure.time_call(lambda: holder.append(Cluster(nodes=nodes)))
    return holder[0], sample  # the default cluster CIDR has a /24 for each of 8,192 nodes


#: Runs in a fresh interpreter: ``python -c MEMORY_CODE NODES SLICE_S``; prints the RSS
#: growth in bytes of building NODES idle nodes and running them one slice, after a small
#: cluster has done the one-time work (lazy imports, schema and type caches).
MEMORY_CODE = r"""
import sys
import measure
from fakekube import Cluster

nodes, slice_s = int(sys.argv[1]), float(sys.argv[2])
warm = Cluster(nodes=3)
warm.advance(slice_s)
before = measure.rss_bytes()
cluster = Cluster(nodes=nodes)
cluster.advance(slice_s)
print(measure.rss_bytes() - before)
"""


def rss_growth_per_node_kb(nodes: int, slice_s: float, timeout_s: float) -> float:
    """KB of RSS per idle node, measured in a fresh interpreter: in this one, memory that
    earlier runs freed would be reused and the growth would read low (even negative)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [BENCHMARKS, os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", MEMORY_CODE, str(nodes), str(slice_s)], capture_output=True,
                          text=True, env=env, timeout=timeout_s, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the memory child failed:\n{done.stderr}")
    return int(done.stdout.strip().splitlines()[-1]) / nodes / 1024


BENCHMARKS = os.path.dirname(os.path.abspath(__file__))


def idle_nodes(sizes: list[int], virtual_s: float, rounds: int, memory_timeout_s: float) -> None:
    """Every size advances one slice per round, interleaved with the yardstick; the
    clusters are built first, in the order given; memory per node is measured apart."""
    start = measure.Load.now()
    slice_s = virtual_s / rounds
    scenarios: dict[str, measure.Scenario] = {}
    notes = []
    for nodes in sizes:
        cluster, build = built(nodes)
        cluster.advance(slice_s)  # the first heartbeats and passes, not counted
        per_node_kb = rss_growth_per_node_kb(nodes, slice_s, memory_timeout_s)
        notes.append(f"  {nodes:>6} nodes: built in {build.wall_s:.2f} s wall / {build.cpu_s:.2f} s CPU; "
                     f"{per_node_kb:.1f} KB per node (RSS growth / nodes, fresh process)  [target: < 10 KB; "
                     "before issue 22: 30–34 KB]")
        scenarios[f"{nodes} idle nodes"] = functools.partial(advance_slice, cluster, slice_s)
    scenarios[measure.YARDSTICK] = measure.timed(measure.yardstick)
    results = measure.interleave(scenarios, rounds, warmup=False)
    measure.report(f"\nidle healthy nodes: s per virtual hour, {rounds} slices of {slice_s:g} virtual s  "
                   "[target for 5,000: < 2.5 s, a virtual day < 60 s; before issue 22: 51–53 s]", results, measure.YARDSTICK, start,
                   rounds, 0.0, unit="s/vh", scale=1.0)
    for note in notes:
        print(note)


def idle_day(sizes: list[int], rounds: int) -> None:
    """Every size advances one virtual day per round, interleaved with the yardstick."""
    start = measure.Load.now()
    clusters = {nodes: Cluster(nodes=nodes) for nodes in sizes}
    scenarios: dict[str, measure.Scenario] = {}
    for nodes, cluster in clusters.items():
        cluster.advance(60)  # registration, the first heartbeats and passes: not counted
        scenarios[f"{nodes} idle node{'s' if nodes > 1 else ''}, 1 virtual day"] = measure.timed(
            functools.partial(cluster.advance, DAY_S))
    scenarios[measure.YARDSTICK] = measure.timed(measure.yardstick)
    results = measure.interleave(scenarios, rounds, warmup=False)
    measure.report(f"\nidle small clusters: s per virtual day, {rounds} rounds  [issue 22: near free; before: "
                   "2.8–4 s for 1 node]", results, measure.YARDSTICK, start, rounds, 0.0, unit="s/vd", scale=1.0)
    for nodes, cluster in clusters.items():
        engine = cluster.engine
        print(f"  {nodes} node(s): {engine.reconciles} reconciles, {getattr(engine, 'passes_skipped', 0)} of them "
              "periodic passes skipped as quiet")


def busy_nodes(nodes: int, pods_per_node: int, virtual_s: float, rounds: int) -> None:
    """``nodes`` × ``pods_per_node`` running pods: their build and start, then slices."""
    start = measure.Load.now()
    rss_before = measure.rss_bytes()
    cluster, build = built(nodes)
    pods = cluster.resource("v1", "Pod")
    trusted = WriteOptions(internal=True)

    def create_all() -> None:
        for index in range(1, nodes + 1):
            for replica in range(pods_per_node):
                cluster.api.create(pods, "default", {
                    "metadata": {"name": f"p-{index}-{replica}"},
                    "spec": {"nodeName": f"node-{index}", "containers": [{"name": "c", "image": "nginx"}]}}, trusted)
    created = measure.time_call(create_all)
    started = measure.time_call(lambda: cluster.advance(5))  # every pod Running and Ready at ~1 s
    running = sum(1 for p in cluster.store.list(("", "pods"))[0] if p["status"].get("phase") == "Running")
    growth_mb = (measure.rss_bytes() - rss_before) / 2**20
    slice_s = virtual_s / rounds
    results = measure.interleave({f"{nodes} nodes x {pods_per_node} pods": lambda: advance_slice(cluster, slice_s),
                                  measure.YARDSTICK: measure.timed(measure.yardstick)}, rounds, warmup=False)
    measure.report(f"\n{nodes} nodes x {pods_per_node} pods ({running} Running): s per virtual hour, {rounds} "
                   f"slices of {slice_s:g} virtual s  [target for 5,000 x 30: < 60 s; before issue 22: 60 s]", results, measure.YARDSTICK,
                   start, rounds, 0.0, unit="s/vh", scale=1.0)
    peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    for what, sample in (("Cluster built", build), ("pods created", created), ("pods started (5 virtual s)", started)):
        print(f"  {what:<28} {sample.wall_s:8.2f} s wall {sample.cpu_s:8.2f} s CPU")
    print(f"  RSS growth {growth_mb:.0f} MB ({growth_mb * 1024 / (nodes * pods_per_node):.1f} KB per pod); "
          f"peak RSS of the process {peak_gb:.2f} GB  [target for 5,000 x 30: < 2 GiB; before issue 22: 3.8 GB]")
    print(f"  created, started and Running in {created.wall_s + started.wall_s:.0f} s wall  [target for 5,000 x 30: "
          "< 5 min; before issue 22: 193 s with a settle every 15,000 pods, and no finish without: QueueFull]")
    print("  (both include what earlier parts of this run left or freed: --only busy for this run alone)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: small sizes, 3 short rounds")
    parser.add_argument("--nodes", default=None, help="comma-separated idle cluster sizes (default 100,1000,5000)")
    parser.add_argument("--pods-per-node", type=int, default=30, help="pods per node for the busy run (0: skip)")
    parser.add_argument("--pod-nodes", type=int, default=5000, help="nodes for the busy run")
    parser.add_argument("--virtual-s", type=float, default=HOUR_S, help="virtual span of the idle and busy runs")
    parser.add_argument("--only", choices=("headline", "idle", "busy", "idle-day"), help="run one part alone")
    parser.add_argument("--day-nodes", default="1,3", help="comma-separated sizes of the idle-day run")
    parser.add_argument("--memory-timeout-s", type=float, default=1800.0,
                        help="wall seconds the fresh process measuring memory per node may take")
    measure.add_round_options(parser, rounds=7, round_s=0.5)
    args = parser.parse_args()
    if args.quick:
        args.nodes, args.pod_nodes, args.pods_per_node = args.nodes or "100", 20, min(args.pods_per_node, 10)
        args.virtual_s, args.rounds, args.round_s = 300.0, 3, 0.0
    if args.only in (None, "headline"):
        headline(args.rounds, args.round_s)
    if args.only in (None, "idle"):
        idle_nodes([int(n) for n in (args.nodes or "100,1000,5000").split(",")], args.virtual_s, args.rounds,
                   args.memory_timeout_s)
    if args.only in (None, "busy") and args.pods_per_node > 0:
        busy_nodes(args.pod_nodes, args.pods_per_node, args.virtual_s, args.rounds)
    if args.only in (None, "idle-day"):
        idle_day([int(n) for n in args.day_nodes.split(",")], args.rounds)


if __name__ == "__main__":
    main()
