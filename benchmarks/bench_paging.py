"""What does a paged list cost against an unpaged one? Wall time for big collections (issue 19).

For each size N (default 10,000 and 100,000 ConfigMaps in one namespace, created through
the trusted internal path), prints, with no assertions:
* the unpaged list and the same list in 500-item pages (``limit`` + ``continue``), through
  the Python API (``APIServer.list``: the store and the list rules, no JSON);
* the same two over HTTP (``GET .../configmaps`` on one keep-alive connection, JSON), with
  ``--http``;
* the first and the last page alone, so a cost that grows along the list shows.

Run ``python benchmarks/bench_paging.py`` (``--sizes 10000,100000``, ``--limit 500``,
``--http``, ``--rounds 3``: the best of the rounds is printed). Wall time is read with
perf_counter; fakekube itself never reads it.
"""

from __future__ import annotations

import argparse
import http.client
import json
import time
import urllib.parse
from typing import Any, Callable

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


def in_process(cluster: Cluster, limit: int) -> tuple[int, list[float]]:
    """(items listed, wall seconds of each page) for one list in pages of ``limit`` (0: unpaged)."""
    rt = cluster.resource("v1", "ConfigMap")
    token, items, pages = "", 0, []
    while True:
        started = time.perf_counter()
        answer = cluster.api.list(rt, NAMESPACE, ListOptions(limit=limit, continue_token=token))
        pages.append(time.perf_counter() - started)
        items += len(answer["items"])
        token = answer["metadata"].get("continue", "")
        if not token:
            return items, pages


def over_http(cluster: Cluster, limit: int) -> tuple[int, list[float]]:
    """The same over one keep-alive HTTP connection, JSON decoded by the client."""
    connection = http.client.HTTPConnection("127.0.0.1", int(cluster.url.rsplit(":", 1)[1]), timeout=600)
    token, items, pages = "", 0, []
    try:
        while True:
            query = urllib.parse.urlencode({k: v for k, v in (("limit", limit), ("continue", token)) if v})
            started = time.perf_counter()
            connection.request("GET", f"{PATH}?{query}" if query else PATH, headers={"Accept": "application/json"})
            body: Any = json.loads(connection.getresponse().read())
            pages.append(time.perf_counter() - started)
            items += len(body["items"])
            token = body["metadata"].get("continue", "")
            if not token:
                return items, pages
    finally:
        connection.close()


def best(rounds: int, run: Callable[[], tuple[int, list[float]]]) -> tuple[int, list[float]]:
    results = [run() for _ in range(rounds)]
    return min(results, key=lambda result: sum(result[1]))


def report(label: str, count: int, limit: int, result: tuple[int, list[float]]) -> None:
    items, pages = result
    assert items == count, f"{label}: listed {items} of {count}"
    total = sum(pages)
    if limit:
        print(f"  {label:<8} {limit}-item pages: {total:8.3f} s for {len(pages)} pages "
              f"(first {pages[0] * 1000:7.2f} ms, last {pages[-1] * 1000:7.2f} ms, "
              f"mean {total / len(pages) * 1000:7.2f} ms)")
    else:
        print(f"  {label:<8} unpaged:         {total:8.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated collection sizes")
    parser.add_argument("--limit", type=int, default=500, help="page size (default 500)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per figure; the best is printed")
    parser.add_argument("--http", action="store_true", help="also list over HTTP (JSON)")
    args = parser.parse_args()
    for count in (int(size) for size in args.sizes.split(",")):
        started = time.perf_counter()
        cluster = build(count)
        print(f"{count:,} ConfigMaps (built in {time.perf_counter() - started:.1f} s)")
        report("python", count, 0, best(args.rounds, lambda: in_process(cluster, 0)))
        report("python", count, args.limit, best(args.rounds, lambda: in_process(cluster, args.limit)))
        if args.http:
            with cluster:
                report("http", count, 0, best(args.rounds, lambda: over_http(cluster, 0)))
                report("http", count, args.limit, best(args.rounds, lambda: over_http(cluster, args.limit)))


if __name__ == "__main__":
    main()
