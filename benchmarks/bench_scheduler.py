"""How fast does the scheduler place pods? (issue 8)

Prints, with no assertions, for each (pods, nodes) size:
* **cycles**: pods per second counting only the scheduler's own work (its scheduling
  cycles, from pop to bound, timed around ``Scheduler._schedule_one``), in wall time and
  per CPU-second of this process (steadier on a shared machine);
* **in-process**: pods per second from the first create to the last binding, through the
  apiserver's create path, with everything else the cluster does at that instant
  (the scheduler's cache updates, the kubelets starting the pods);
* **HTTP**: the same through the REST API (one keep-alive connection posting the pods,
  then a poll until all are bound) — what a client-go or kubectl user sees.

kube-scheduler's published scalability target is about 100 pods/s at 5,000 nodes; kwok's
benchmark schedules 10,000 pods in about 60 s. Pods request 100m cpu and 64Mi memory and
belong to a ReplicaSet-like label set (no owner: no default spreading applies) unless
``--owned`` gives them a ReplicaSet owner (PodTopologySpread's system defaults then score).

Run ``python benchmarks/bench_scheduler.py`` (``--sizes 1000x100,30000x5000``,
``--no-http``, ``--repeat 3``). Wall time is read here with perf_counter; fakekube itself
never reads it.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import time
import urllib.parse
from typing import Any, Callable

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
        Scheduler._schedule_one = timed  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: Any) -> None:
        Scheduler._schedule_one = self._original  # type: ignore[method-assign]


def bound_count(cluster: Cluster) -> int:
    pods = cluster.store.list(("", "pods"), "default")[0]
    return sum(1 for p in pods if p["spec"].get("nodeName"))


def in_process(pods: int, nodes: int, owned: bool) -> tuple[float, float, float]:
    """(pods/s end to end, pods/s in scheduling cycles, pods per CPU-second in cycles)."""
    cluster = Cluster(nodes=nodes, controllers=CONTROLLERS)
    owner = replica_set(cluster) if owned else None
    rt = cluster.resource("v1", "Pod")
    with CycleTimer() as cycles:
        started = time.perf_counter()
        for index in range(pods):
            cluster.api.create(rt, "default", pod(index, owner), WriteOptions())
        cluster.settle()
        elapsed = time.perf_counter() - started
    assert bound_count(cluster) == pods, f"only {bound_count(cluster)} of {pods} bound"
    return pods / elapsed, pods / cycles.seconds, pods / cycles.cpu_seconds


def over_http(pods: int, nodes: int, owned: bool) -> float:
    cluster = Cluster(nodes=nodes, controllers=CONTROLLERS).start()
    try:
        owner = replica_set(cluster) if owned else None
        address = urllib.parse.urlsplit(cluster.url)
        connection = http.client.HTTPConnection(address.hostname or "127.0.0.1", address.port)
        started = time.perf_counter()
        for index in range(pods):
            body = json.dumps(pod(index, owner))
            connection.request("POST", "/api/v1/namespaces/default/pods", body=body,
                               headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            response.read()
            assert response.status == 201, response.status
        while bound_count(cluster) < pods:
            time.sleep(0.01)
        elapsed = time.perf_counter() - started
        connection.close()
        return pods / elapsed
    finally:
        cluster.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000x100,30000x5000", help="PODSxNODES,...")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-http", action="store_true")
    parser.add_argument("--owned", action="store_true", help="pods owned by a ReplicaSet (default spreading)")
    args = parser.parse_args()
    for size in args.sizes.split(","):
        pods, nodes = (int(part) for part in size.split("x"))
        runs = [in_process(pods, nodes, args.owned) for _ in range(args.repeat)]
        end_to_end = statistics.median(r[0] for r in runs)
        cycles = statistics.median(r[1] for r in runs)
        cpu = statistics.median(r[2] for r in runs)
        line = (f"{pods} pods onto {nodes} nodes: in-process {end_to_end:,.0f} pods/s end to end, "
                f"{cycles:,.0f} pods/s in scheduling cycles ({cpu:,.0f} per CPU-second)")
        if not args.no_http:
            http_rate = statistics.median(over_http(pods, nodes, args.owned) for _ in range(args.repeat))
            line += f"; HTTP {http_rate:,.0f} pods/s"
        print(line + f" (median of {args.repeat})", flush=True)


if __name__ == "__main__":
    main()
