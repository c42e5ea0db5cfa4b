"""What a metrics.k8s.io read costs, next to a plain LIST of the same pods.

Run ``python benchmarks/bench_metrics.py`` (about half a minute; ``--pods N`` to change
the size). metrics.k8s.io stores nothing: each read lists the pods, asks the simulated
kubelets for their figures on the engine thread and builds the objects. The reference is
``GET /api/v1/pods`` of the same pods in the same process, through the same server, so the
ratio is what computing the figures adds. No assertions; it prints wall and CPU (this
process's: client and server) as median (min–max) over interleaved rounds, with per-round
ratios and the load (``measure.py``). ``--rounds``, ``--round-s``, ``--quick``.
"""

from __future__ import annotations

import argparse
import http.client
from urllib.parse import urlparse

import measure
from fakekube import Cluster


def get(connection: http.client.HTTPConnection, path: str) -> measure.Scenario:
    """One GET of ``path`` on a kept-alive connection, as a scenario."""
    def request() -> None:
        connection.request("GET", path, headers={"Accept": "application/json"})
        response = connection.getresponse()
        response.read()
        assert response.status == 200, (path, response.status)
    return measure.timed(request)


REFERENCE = "LIST pods (ref)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="100 pods, 5 rounds (smoke use)")
    measure.add_round_options(parser, rounds=30, round_s=0.0)
    args = parser.parse_args()
    if args.quick:
        args.pods, args.rounds = 100, 5
    start = measure.Load.now()
    with Cluster(nodes=args.nodes, metrics_server=True) as cluster:
        for index in range(args.pods):
            cluster.create({"apiVersion": "v1", "kind": "Pod",
                            "metadata": {"name": f"p{index}", "namespace": "default", "labels": {"app": "bench"}},
                            "spec": {"nodeName": f"node-{index % args.nodes + 1}",
                                     "containers": [{"name": "c", "image": "nginx"}]}})
        cluster.advance(30)
        url = urlparse(cluster.url)
        connection = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=60)
        rows = [(REFERENCE, "/api/v1/namespaces/default/pods"),
                ("LIST podmetrics", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods"),
                ("LIST nodemetrics", "/apis/metrics.k8s.io/v1beta1/nodes"),
                ("GET one podmetrics", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/p0")]
        results = measure.interleave({name: get(connection, path) for name, path in rows}, args.rounds, args.round_s)
    measure.report(f"{args.pods} pods on {args.nodes} nodes: one request each, server in this process (CPU: "
                   "client and server)", results, REFERENCE, start, args.rounds, args.round_s)


if __name__ == "__main__":
    main()
