"""How fast does cluster time run? Wall time for virtual-time scenarios (issue 3).

Prints, with no assertions:
* the headline scenario: 3 nodes, pods on node-1, node-1 stops its heartbeats, advance
  400 virtual seconds (Unknown at 45 s, tainted at 50 s, evictions at 110 s and 350 s);
* one virtual hour of idle, healthy nodes (Lease every 10 s, status every 5 min, the node
  lifecycle controller's pass every 5 s) for several cluster sizes;
* the same with 30 running pods on every node (``--pods-per-node``), the pods created
  through the trusted internal path and started by the simulated kubelets first.

Run ``python benchmarks/bench_time.py`` (add ``--quick`` for a smoke run, ``--nodes
100,1000,5000`` to choose sizes). Wall time is read with perf_counter; fakekube itself
never reads it.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time

from fakekube import Cluster
from fakekube.api.verbs.apiserver import WriteOptions

HOUR_S = 3600.0


def headline_ms() -> float:
    started = time.perf_counter()
    cluster = Cluster(nodes=3)
    tolerations = [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
                    "tolerationSeconds": 60}]
    for name, extra in (("default", {}), ("sixty", {"tolerations": tolerations})):
        cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                        "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx"}], **extra}})
    cluster.fail_node("node-1")
    cluster.advance(400)
    assert cluster.get("v1", "Pod", "default")["metadata"].get("deletionTimestamp"), "scenario did not run"
    return (time.perf_counter() - started) * 1000


def idle_hour_s(nodes: int, virtual_s: float, slices: int) -> tuple[float, float, list[float], int]:
    """(build s, wall s per virtual hour, wall s of each slice, writes) for ``nodes`` idle nodes
    run for ``virtual_s`` in ``slices`` equal slices (the slices show how steady it is)."""
    started = time.perf_counter()
    cluster = Cluster(nodes=nodes)  # the default cluster CIDR has a /24 for each of 8,192 nodes
    built = time.perf_counter()
    rv_before = cluster.store.resource_version
    slice_walls = []
    for _ in range(slices):
        begun = time.perf_counter()
        cluster.advance(virtual_s / slices)
        slice_walls.append(time.perf_counter() - begun)
    return built - started, sum(slice_walls) * HOUR_S / virtual_s, slice_walls, cluster.store.resource_version - rv_before


def pods_hour_s(nodes: int, pods_per_node: int, virtual_s: float) -> tuple[float, float, float, int]:
    """(build s, start s, wall s per virtual hour, pods Running) for ``nodes`` × ``pods_per_node``."""
    started = time.perf_counter()
    cluster = Cluster(nodes=nodes)
    pods = cluster.resource("v1", "Pod")
    trusted = WriteOptions(internal=True)
    for index in range(1, nodes + 1):
        for replica in range(pods_per_node):
            cluster.api.create(pods, "default", {
                "metadata": {"name": f"p-{index}-{replica}"},
                "spec": {"nodeName": f"node-{index}", "containers": [{"name": "c", "image": "nginx"}]}}, trusted)
    built = time.perf_counter()
    cluster.advance(5)  # every pod Running and Ready at ~1 s
    running = sum(1 for p in cluster.store.list(("", "pods"))[0] if p["status"].get("phase") == "Running")
    warm = time.perf_counter()
    cluster.advance(virtual_s)
    elapsed = time.perf_counter() - warm
    return built - started, warm - built, elapsed * HOUR_S / virtual_s, running


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds, shorter virtual spans")
    parser.add_argument("--nodes", default="100,1000,5000", help="comma-separated cluster sizes")
    parser.add_argument("--pods-per-node", type=int, default=30, help="pods per node for the busy run (0: skip)")
    parser.add_argument("--pod-nodes", type=int, default=5000, help="nodes for the busy run")
    args = parser.parse_args()
    rounds = 3 if args.quick else 7
    samples = [headline_ms() for _ in range(rounds)]
    print(f"headline scenario (3 nodes, 400 virtual s): median {statistics.median(samples):.1f} ms, "
          f"max {max(samples):.1f} ms over {rounds} runs  [target < 100 ms]")
    print("idle healthy nodes, wall time per virtual hour:")
    for nodes in (int(n) for n in args.nodes.split(",")):
        span_s = 600.0 if args.quick else HOUR_S
        build_s, per_hour_s, slice_walls, writes = idle_hour_s(nodes, span_s, slices=6)
        print(f"  {nodes:>6} nodes: {per_hour_s:8.1f} s/virtual hour (measured over {span_s:.0f} virtual s, "
              f"{writes} writes; {span_s / 6:.0f}-virtual-s slices took {min(slice_walls):.2f}-{max(slice_walls):.2f} s; "
              f"build {build_s:.2f} s)  [target for 5,000: < 60 s]")
    if args.pods_per_node > 0:
        nodes = 100 if args.quick else args.pod_nodes
        build_s, start_s, per_hour_s, running = pods_hour_s(nodes, args.pods_per_node, 600.0)
        rss_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
        print(f"{nodes} nodes x {args.pods_per_node} pods ({running} Running): {per_hour_s:.1f} s/virtual hour "
              f"(measured over 600 virtual s; build {build_s:.1f} s, pods started in {start_s:.1f} s, "
              f"peak RSS {rss_gb:.1f} GB)")


if __name__ == "__main__":
    main()
