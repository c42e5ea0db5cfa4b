"""What a metrics.k8s.io read costs, next to a plain LIST of the same pods.

Run ``python benchmarks/bench_metrics.py`` (about half a minute; ``--pods N`` to change
the size). metrics.k8s.io stores nothing: each read lists the pods, asks the simulated
kubelets for their figures on the engine thread and builds the objects. The reference is
``GET /api/v1/pods`` of the same pods in the same process, through the same server, so the
ratio is what computing the figures adds. No assertions; it prints medians of wall time.
"""

from __future__ import annotations

import argparse
import http.client
import statistics
import time
from urllib.parse import urlparse

from fakekube import Cluster


def median_ms(connection: http.client.HTTPConnection, path: str, rounds: int) -> float:
    """Median wall time of ``rounds`` GETs of ``path`` on one kept-alive connection."""
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        connection.request("GET", path, headers={"Accept": "application/json"})
        response = connection.getresponse()
        response.read()
        assert response.status == 200, (path, response.status)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    with Cluster(nodes=args.nodes, metrics_server=True) as cluster:
        for index in range(args.pods):
            cluster.create({"apiVersion": "v1", "kind": "Pod",
                            "metadata": {"name": f"p{index}", "namespace": "default", "labels": {"app": "bench"}},
                            "spec": {"nodeName": f"node-{index % args.nodes + 1}",
                                     "containers": [{"name": "c", "image": "nginx"}]}})
        cluster.advance(30)
        url = urlparse(cluster.url)
        connection = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
        rows = [("LIST pods (reference)", "/api/v1/namespaces/default/pods"),
                ("LIST podmetrics", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods"),
                ("LIST nodemetrics", "/apis/metrics.k8s.io/v1beta1/nodes"),
                ("GET one podmetrics", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/p0")]
        figures = {name: median_ms(connection, path, args.rounds) for name, path in rows}
    reference = figures["LIST pods (reference)"]
    print(f"{args.pods} pods on {args.nodes} nodes, median of {args.rounds} requests")
    for name, ms in figures.items():
        print(f"  {name:24s} {ms:8.2f} ms   {ms / reference:5.2f} x LIST pods")


if __name__ == "__main__":
    main()
