"""What does a paged list cost against an unpaged one? Wall time for big collections (issue 19).

For each size N (default 10,000 and 100,000 ConfigMaps in one namespace, created through
the trusted internal path), prints, with no assertions:
* the unpaged list and the same list in 500-item pages (``limit`` + ``continue``), through
  the Python API (``APIServer.list``: the store and the list rules, no JSON);
* the same two over HTTP (``GET .../configmaps`` on one keep-alive connection, JSON), with
  ``--http``;
* the first and the last page alone, so a cost that grows along the list shows.

Each figure is wall and CPU as median (min–max) over interleaved rounds, with per-round
ratios to the unpaged in-process list and the load (``measure.py``; over HTTP the server
threads are in this process, so CPU is client and server together).

Run ``python benchmarks/bench_paging.py`` (``--sizes 10000,100000``, ``--limit 500``,
``--http``, ``--rounds 3``; ``--quick``). Wall time is read with perf_counter; fakekube
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
from fakekube.api.verbs.listing import ListOptions

NAMESPACE = "bench"
PATH = f"/api/v1/namespaces/{NAMESPACE}/configmaps"


def build(count: int) -> Cluster:
    """A cluster holding ``count`` small ConfigMaps in one namespace (names in random-looking order)."""
    cluster = Cluster(immutability_guard=False, controllers=("*", "-root-ca-certificate-publisher-controller"))
    cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    rt = cluster.resource("v1", "ConfigMap")
    trusted = WriteOptions(internal=True)
    for index in range(count):
        name = f"cm-{(index * 7919) % count:07d}"  # not in key order: inserts land all over the list
        cluster.api.create(rt, NAMESPACE, {"metadata": {"name": name}, "data": {"k": "v" * 20}}, trusted)
    return cluster


#: One page: (items on it, the next continue token or "").
Page = tuple[int, str]


def in_process(cluster: Cluster, limit: int) -> Callable[[str], Page]:
    """A page fetcher through the Python API (``limit`` 0: unpaged)."""
    rt = cluster.resource("v1", "ConfigMap")

    def fetch(token: str) -> Page:
        answer = cluster.api.list(rt, NAMESPACE, ListOptions(limit=limit, continue_token=token))
        return len(answer["items"]), answer["metadata"].get("continue", "")
    return fetch


def over_http(connection: http.client.HTTPConnection, limit: int) -> Callable[[str], Page]:
    """The same over one keep-alive HTTP connection, JSON decoded by the client."""
    def fetch(token: str) -> Page:
        query = urllib.parse.urlencode({k: v for k, v in (("limit", limit), ("continue", token)) if v})
        connection.request("GET", f"{PATH}?{query}" if query else PATH, headers={"Accept": "application/json"})
        body: Any = json.loads(connection.getresponse().read())
        return len(body["items"]), body["metadata"].get("continue", "")
    return fetch


def list_all(fetch: Callable[[str], Page], count: int) -> list[measure.Sample]:
    """Every page of one list, each timed; the whole list must have ``count`` items."""
    token, items, samples = "", 0, []
    while True:
        page: list[Page] = []
        samples.append(measure.time_call(lambda: page.append(fetch(token))))
        items += page[0][0]
        token = page[0][1]
        if not token:
            assert items == count, f"listed {items} of {count}"
            return samples


def whole(samples: list[measure.Sample]) -> measure.Sample:
    return measure.Sample(sum(s.wall_s for s in samples), sum(s.cpu_s for s in samples))


def measure_size(cluster: Cluster, count: int, limit: int, rounds: int, with_http: bool) -> dict[str, measure.Series]:
    """Interleaved rounds: unpaged (the reference), paged, its first and last page, over
    the Python API and, ``with_http``, over HTTP."""
    fetchers = [("python", in_process(cluster, 0), in_process(cluster, limit))]
    connection = None
    if with_http:
        connection = http.client.HTTPConnection("127.0.0.1", int(cluster.url.rsplit(":", 1)[1]), timeout=600)
        fetchers.append(("http", over_http(connection, 0), over_http(connection, limit)))
    results: dict[str, measure.Series] = {}
    try:
        for _, unpaged, paged in fetchers:  # warm-up, not counted (lazy imports, first encodings)
            list_all(unpaged, count)
            list_all(paged, count)
        for _ in range(rounds):
            for way, unpaged, paged in fetchers:
                pages = list_all(paged, count)
                for name, sample in ((f"{way} unpaged (ref)" if way == "python" else f"{way} unpaged",
                                      whole(list_all(unpaged, count))),
                                     (f"{way} {limit}-item pages, all {len(pages)}", whole(pages)),
                                     (f"{way} first page", pages[0]), (f"{way} last page", pages[-1])):
                    results.setdefault(name, measure.Series()).add(sample)
    finally:
        if connection is not None:
            connection.close()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated collection sizes")
    parser.add_argument("--limit", type=int, default=500, help="page size (default 500)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--http", action="store_true", help="also list over HTTP (JSON)")
    parser.add_argument("--quick", action="store_true", help="2,000 ConfigMaps, 3 rounds (smoke use)")
    args = parser.parse_args()
    sizes = "2000" if args.quick else args.sizes
    for count in (int(size) for size in sizes.split(",")):
        start = measure.Load.now()
        holder: list[Cluster] = []
        build_sample = measure.time_call(lambda: holder.append(build(count)))
        cluster = holder[0]
        if args.http:
            cluster.start()
        try:
            results = measure_size(cluster, count, args.limit, args.rounds, args.http)
        finally:
            if args.http:
                cluster.stop()
        measure.report(f"\n{count:,} ConfigMaps (built in {build_sample.wall_s:.1f} s wall, "
                       f"{build_sample.cpu_s:.1f} s CPU)", results, "python unpaged (ref)", start, args.rounds, 0.0)


if __name__ == "__main__":
    main()
