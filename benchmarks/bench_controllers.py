"""How fast do Deployments roll out? (issue 9)

Prints, with no assertions, wall and CPU time for:
* **rolling update**: a 100-replica Deployment (25 %/25 %) already running on 20 nodes
  gets a new image; from the patch until the rollout is complete (every pod replaced and
  available), stepping the clock timer by timer;
* **fleet**: 1,000 Deployments × 10 replicas on 500 nodes, created at one instant and
  rolled out until all 10,000 pods are available, then all given a new image and rolled
  out again.

Each runs **in-process** (``api.create``/``api.patch``, ``cluster.advance_until``) and
**through HTTP** (one keep-alive connection POSTs and PATCHes the Deployments, and moves
the clock with ``POST /fakekube/v1/clock/advance`` one second at a time; completion is
read in-process, so the figure is the cluster's work plus the client's requests, not a
client's polling). Virtual time taken is printed too: pods are Ready about a second after
binding, so a rollout's virtual time is a few seconds per surge step.

Each figure is wall and CPU (this process's, the HTTP server threads included) as median
(min–max) over ``--rounds`` interleaved rounds (a fresh cluster per scenario, built
untimed), beside a plain-Python yardstick of the same rounds and the load (``measure.py``).

Run ``python benchmarks/bench_controllers.py`` (``--quick`` for 100 Deployments on 50
nodes, ``--no-http``, ``--rounds N``). Wall time is read here with perf_counter; fakekube
itself never reads it.
"""

from __future__ import annotations

import argparse
import http.client
import json
import urllib.parse
from typing import Any, Callable

import measure
from fakekube import Cluster
from fakekube.api.verbs.apiserver import WriteOptions
from fakekube.control import attach as attach_control

Obj = dict[str, Any]
MERGE = "application/merge-patch+json"
#: Virtual seconds a rollout may take before the benchmark gives up (it never should).
ROLLOUT_LIMIT_S = 3600.0


def deployment(name: str, replicas: int, image: str = "nginx:1.27") -> Obj:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": image,
                                                           "resources": {"requests": {"cpu": "10m"}}}]}}}}


def new_image(image: str) -> Obj:
    return {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}}}


def all_complete(cluster: Cluster) -> bool:
    """Every Deployment observed, fully updated and available, with nothing old left."""
    for d in cluster.store.list(("apps", "deployments"), "default")[0]:
        status, replicas = d.get("status") or {}, d["spec"]["replicas"]
        if status.get("observedGeneration") != d["metadata"]["generation"] or not (
                status.get("updatedReplicas") == status.get("replicas") == status.get("availableReplicas") == replicas):
            return False
    return True


class Client:
    """The in-process or the HTTP way of creating, patching and moving the clock."""

    def __init__(self, cluster: Cluster, over_http: bool) -> None:
        self.cluster = cluster
        self.connection: http.client.HTTPConnection | None = None
        if over_http:
            address = urllib.parse.urlsplit(cluster.url)
            self.connection = http.client.HTTPConnection(address.hostname or "127.0.0.1", address.port)

    def _request(self, method: str, path: str, body: Any, content_type: str = "application/json") -> None:
        assert self.connection is not None
        self.connection.request(method, path, body=json.dumps(body), headers={"Content-Type": content_type})
        response = self.connection.getresponse()
        response.read()
        assert response.status < 300, (response.status, path)

    def create(self, obj: Obj) -> None:
        if self.connection is None:
            self.cluster.api.create(self.cluster.resource("apps/v1", "Deployment"), "default", obj, WriteOptions())
        else:
            self._request("POST", "/apis/apps/v1/namespaces/default/deployments", obj)

    def patch(self, name: str, body: Obj) -> None:
        if self.connection is None:
            self.cluster.api.patch(self.cluster.resource("apps/v1", "Deployment"), "default", name, MERGE,
                                   json.dumps(body).encode())
        else:
            self._request("PATCH", f"/apis/apps/v1/namespaces/default/deployments/{name}", body, MERGE)

    def until_complete(self) -> float:
        """Move the clock until every rollout is complete; the virtual seconds it took."""
        started = self.cluster.now
        if self.connection is None:
            self.cluster.advance_until(all_complete, ROLLOUT_LIMIT_S)
        else:
            self._request("POST", "/fakekube/v1/clock/advance", {"seconds": 0})
            while not all_complete(self.cluster):
                assert (self.cluster.now - started).total_seconds() < ROLLOUT_LIMIT_S
                self._request("POST", "/fakekube/v1/clock/advance", {"seconds": 1})
        return (self.cluster.now - started).total_seconds()

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()


#: One step's wall and CPU seconds (CPU of this process: the HTTP server threads are in it
#: too) and the virtual seconds it took.
Timing = tuple[measure.Sample, float]


def timed(step: Callable[[], float]) -> Timing:
    """(wall and CPU seconds, virtual seconds) of one step."""
    virtual: list[float] = []
    return measure.time_call(lambda: virtual.append(step())), virtual[0]


def with_cluster(nodes: int, over_http: bool, body: Callable[[Client], list[Timing]]) -> list[Timing]:
    cluster = Cluster(nodes=nodes)  # the default cluster CIDR has a /24 for each of 8,192 nodes
    if over_http:
        attach_control(cluster)  # /fakekube/v1/clock/advance
        cluster.start()
    client = Client(cluster, over_http)
    try:
        return body(client)
    finally:
        client.close()
        if over_http:
            cluster.stop()


def rolling_update(client: Client, replicas: int = 100) -> list[Timing]:
    client.create(deployment("web", replicas))
    client.until_complete()

    def roll() -> float:
        client.patch("web", new_image("nginx:1.28"))
        return client.until_complete()
    return [timed(roll)]


def fleet(client: Client, deployments: int, replicas: int = 10) -> list[Timing]:
    def create_all() -> float:
        for index in range(deployments):
            client.create(deployment(f"app-{index}", replicas))
        return client.until_complete()

    def update_all() -> float:
        for index in range(deployments):
            client.patch(f"app-{index}", new_image("nginx:1.28"))
        return client.until_complete()
    return [timed(create_all), timed(update_all)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="100 Deployments on 50 nodes for the fleet")
    parser.add_argument("--rounds", "--repeat", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--no-http", action="store_true")
    args = parser.parse_args()
    deployments, nodes = (100, 50) if args.quick else (1000, 500)
    ways = [False] if args.no_http else [False, True]
    start = measure.Load.now()
    results: dict[str, measure.Series] = {}
    virtual: dict[str, list[float]] = {}
    for _ in range(args.rounds):
        for over_http in ways:
            way = "HTTP" if over_http else "in-process"
            steps = {f"rolling update, 100 replicas, 20 nodes ({way})": with_cluster(20, over_http, rolling_update)[0]}
            create, update = with_cluster(nodes, over_http, lambda c: fleet(c, deployments))
            steps[f"fleet create + roll out ({way})"] = create
            steps[f"fleet new image, roll out ({way})"] = update
            for name, (sample, virtual_s) in steps.items():
                results.setdefault(name, measure.Series()).add(sample)
                virtual.setdefault(name, []).append(virtual_s)
        results.setdefault(measure.YARDSTICK, measure.Series()).add(measure.time_call(measure.yardstick))
    measure.report(f"Deployment rollouts (fleet: {deployments} Deployments x 10 replicas on {nodes} nodes), "
                   "s from the first write to every rollout complete", results, measure.YARDSTICK, start,
                   args.rounds, 0.0, unit="s", scale=1.0)
    for name, spans in virtual.items():
        print(f"  {name}: {measure.format_spread(measure.spread(spans))} virtual s")


if __name__ == "__main__":
    main()
