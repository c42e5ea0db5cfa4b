"""How fast does the scheduler place pods? (issues 8, 22)

Prints, with no assertions, for each (pods, nodes) size, wall and CPU seconds for the
whole burst as median (min–max) over interleaved rounds (``measure.py``; a fresh cluster
per round, built untimed), a plain-Python yardstick measured in the same rounds, the load,
and pods/s from the medians. Each figure says where it ends:

* **scheduling cycles, pop → bound**: only the scheduler's own work (its cycles, timed
  around ``Scheduler._schedule_one``, the binding included); every binding invalidates
  its node, as in any real burst;
* **create → bound**: from the first create to the last binding, through the apiserver's
  create path, with everything else the cluster does at that instant;
* **create → Running**: the same, then the clock moved in 0.5-virtual-s steps until every
  pod is Running (the kubelets' image pulls and starts, status writes): what a user of
  ``kubectl rollout status`` waits for, in wall time;
* **HTTP create → bound**: the creates through the REST API (one keep-alive connection,
  server in this process), then a poll until all are bound.

kube-scheduler's published scalability target is about 100 pods/s at 5,000 nodes; kwok's
benchmark schedules 10,000 pods in about 60 s. Pods request 100m cpu and 64Mi memory and
belong to a ReplicaSet-like label set (no owner: no default spreading applies) unless
``--owned`` gives them a ReplicaSet owner (PodTopologySpread's system defaults then score).

``benchmarks/scheduler_cycle.py`` is different: one pod against a snapshot where nothing
binds (every memo hits), ending at host selection — a figure for one cycle's parts only.

Run ``python benchmarks/bench_scheduler.py`` (default: the issue-22 burst, 5,000 pods onto
5,000 nodes; ``--sizes 1000x100,30000x5000`` for others, ``--no-http``, ``--rounds 3``;
``--quick``: 500 pods on 500 nodes). At 5,000 nodes upstream's adaptive
percentageOfNodesToScore (50 % − 1 % per 125 nodes, at least 5 % and 100 nodes) filters
until 500 nodes fit, so each pod's cycle filters and scores 500 nodes, and every binding
changes the node it lands on: no two cycles see the same nodes. Wall time is
read here with perf_counter; fakekube itself never reads it.
"""

from __future__ import annotations

import argparse
import http.client
import json
import time
import urllib.parse
from typing import Any, Callable

import measure
from fakekube import Cluster
from fakekube.api.verbs.apiserver import WriteOptions
from fakekube.scheduler.scheduler import Scheduler

Obj = dict[str, Any]


def pod(index: int, owner: Obj | None) -> Obj:
    meta: Obj = {"name": f"bench-{index}", "namespace": "default", "labels": {"app": "bench"}}
    if owner is not None:
        meta["ownerReferences"] = [owner]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27",
                                     "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}


def replica_set(cluster: Cluster) -> Obj:
    created = cluster.create({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "bench"},
                              "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "bench"}},
                                       "template": {"metadata": {"labels": {"app": "bench"}},
                                                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
    meta = created["metadata"]
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": meta["name"], "uid": meta["uid"],
            "controller": True, "blockOwnerDeletion": True}


#: The ReplicaSet controller is off: the benchmark's owner is a ReplicaSet of 0 replicas
#: that only gives the pods an owner (for PodTopologySpread's default constraints).
CONTROLLERS = ("*", "-replicaset-controller")


class CycleTimer:
    """Wall time spent inside the scheduler's cycles (patched around _schedule_one)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        #: CPU time of this process in the cycles: steadier than wall time on a shared machine.
        self.cpu_seconds = 0.0
        self._original: Callable[..., bool] = Scheduler._schedule_one

    def __enter__(self) -> "CycleTimer":
        original = self._original

        def timed(scheduler: Scheduler, *args: Any) -> bool:
            started, cpu_started = time.perf_counter(), time.process_time()
            try:
                return bool(original(scheduler, *args))
            finally:
                self.seconds += time.perf_counter() - started
                self.cpu_seconds += time.process_time() - cpu_started
        Scheduler._schedule_one = timed  # type: ignore[method-assign, assignment]
        return self

    def __exit__(self, *exc: Any) -> None:
        Scheduler._schedule_one = self._original  # type: ignore[method-assign]


def bound_count(cluster: Cluster) -> int:
    pods = cluster.store.list(("", "pods"), "default")[0]
    return sum(1 for p in pods if p["spec"].get("nodeName"))


def running_count(cluster: Cluster) -> int:
    pods = cluster.store.list(("", "pods"), "default")[0]
    return sum(1 for p in pods if p.get("status", {}).get("phase") == "Running")


#: Virtual seconds a burst may take to be Running before the round fails (pulls take a few).
RUNNING_WITHIN_S = 300.0
CYCLES, BOUND, RUNNING, HTTP = ("scheduling cycles, pop → bound", "create → bound", "create → Running",
                                "HTTP create → bound")


def in_process(pods: int, nodes: int, owned: bool) -> dict[str, measure.Sample]:
    """One burst on a fresh cluster: its cycles, create → bound, create → Running."""
    cluster = Cluster(nodes=nodes, controllers=CONTROLLERS)
    owner = replica_set(cluster) if owned else None
    rt = cluster.resource("v1", "Pod")
    bodies = [pod(index, owner) for index in range(pods)]

    def create_and_bind() -> None:
        for body in bodies:
            cluster.api.create(rt, "default", body, WriteOptions())
        cluster.settle()

    def run_until_running() -> None:
        waited = 0.0
        while running_count(cluster) < pods:
            if waited >= RUNNING_WITHIN_S:
                raise RuntimeError(f"only {running_count(cluster)} of {pods} Running after {waited} virtual s")
            cluster.advance(0.5)
            waited += 0.5

    with CycleTimer() as cycles:
        bound = measure.time_call(create_and_bind)
    assert bound_count(cluster) == pods, f"only {bound_count(cluster)} of {pods} bound"
    running = measure.time_call(run_until_running)
    return {CYCLES: measure.Sample(cycles.seconds, cycles.cpu_seconds), BOUND: bound,
            RUNNING: measure.Sample(bound.wall_s + running.wall_s, bound.cpu_s + running.cpu_s)}


def over_http(pods: int, nodes: int, owned: bool) -> measure.Sample:
    """Creates over one keep-alive connection, then a poll until every pod is bound (this
    process's CPU: the client and the in-process server together)."""
    cluster = Cluster(nodes=nodes, controllers=CONTROLLERS).start()
    try:
        owner = replica_set(cluster) if owned else None
        address = urllib.parse.urlsplit(cluster.url)
        connection = http.client.HTTPConnection(address.hostname or "127.0.0.1", address.port)
        bodies = [json.dumps(pod(index, owner)) for index in range(pods)]

        def create_and_wait() -> None:
            for body in bodies:
                connection.request("POST", "/api/v1/namespaces/default/pods", body=body,
                                   headers={"Content-Type": "application/json"})
                response = connection.getresponse()
                response.read()
                assert response.status == 201, response.status
            while bound_count(cluster) < pods:
                time.sleep(0.01)
        sample = measure.time_call(create_and_wait)
        connection.close()
        return sample
    finally:
        cluster.stop()


def measure_size(pods: int, nodes: int, owned: bool, rounds: int, with_http: bool) -> dict[str, measure.Series]:
    """``rounds`` interleaved rounds: a burst in process, over HTTP, and the yardstick,
    after a small uncounted burst of each."""
    results = {name: measure.Series() for name in (CYCLES, BOUND, RUNNING, *((HTTP,) if with_http else ()),
                                                   measure.YARDSTICK)}
    in_process(10, 2, owned)  # warm-up, not counted: the lazy imports of a first burst and its pods' start
    if with_http:
        over_http(10, 2, owned)
    for _ in range(rounds):
        for name, sample in in_process(pods, nodes, owned).items():
            results[name].add(sample)
        if with_http:
            results[HTTP].add(over_http(pods, nodes, owned))
        results[measure.YARDSTICK].add(measure.time_call(measure.yardstick))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="5000x5000", help="PODSxNODES,... (default 5000x5000)")
    parser.add_argument("--rounds", "--repeat", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--no-http", action="store_true")
    parser.add_argument("--owned", action="store_true", help="pods owned by a ReplicaSet (default spreading)")
    parser.add_argument("--quick", action="store_true", help="smoke run: 500 pods on 500 nodes")
    args = parser.parse_args()
    sizes = "500x500" if args.quick else args.sizes
    for size in sizes.split(","):
        pods, nodes = (int(part) for part in size.split("x"))
        start = measure.Load.now()
        results = measure_size(pods, nodes, args.owned, args.rounds, not args.no_http)
        measure.report(f"\n{pods} pods onto {nodes} nodes (a burst; s for the whole burst)", results,
                       measure.YARDSTICK, start, args.rounds, 0.0, unit="s", scale=1.0)
        rates = ", ".join(f"{name} {pods / measure.spread(series.wall_s).median:,.0f} "
                          f"({pods / measure.spread(series.cpu_s).median:,.0f} per CPU-s)"
                          for name, series in results.items() if name != measure.YARDSTICK)
        print(f"  pods/s from the medians: {rates}", flush=True)


if __name__ == "__main__":
    main()
