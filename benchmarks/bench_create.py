"""Create against the hello ceiling, alone: issue 10's create target in about a minute.

``python benchmarks/bench_create.py [--rounds 7] [--round-s 2]`` serves a prepared cluster
and the bare werkzeug hello app from one child process (``servers.py``, as
``bench_apiserver.py --http-only`` does), then POSTs configmaps to each, interleaved round
by round, with 1 and 8 clients on keep-alive connections. It prints req/s, the median of
the per-round ratios, and the server process's CPU per request — the steadier figure on
a shared host. It asserts nothing; the full picture is ``bench_apiserver.py``.
"""

from __future__ import annotations

import argparse
import os

import loadgen
from servers import ServerProcess

CLIENT_COUNTS = (1, 8)
MAX_REQUESTS_PER_ROUND = 100_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=7, help="timed rounds per server and client count")
    parser.add_argument("--round-s", type=float, default=2.0, help="wall seconds per round")
    args = parser.parse_args()
    print(f"load before: {' / '.join(f'{v:.2f}' for v in os.getloadavg())} (1/5/15-min load average)")
    servers = ServerProcess(pods=0)
    try:
        plan: loadgen.Plan = [
            ("fakekube", loadgen.Endpoint.of(servers.urls["fakekube"]), loadgen.POST_CONFIGMAP, MAX_REQUESTS_PER_ROUND),
            ("hello", loadgen.Endpoint.of(servers.urls["hello"]), loadgen.POST_CONFIGMAP, MAX_REQUESTS_PER_ROUND),
        ]
        results = loadgen.measure_throughput(plan, CLIENT_COUNTS, args.rounds, args.round_s, servers.cpu_s,
                                             warmup_s=1.0)
    finally:
        servers.stop()
    print(f"POST configmap, median of {args.rounds} rounds of {args.round_s:g} s")
    print("clients  fakekube req/s  hello req/s  ratio (per-round median)  server µs/req fakekube / hello")
    for clients in CLIENT_COUNTS:
        ours = results[("fakekube", loadgen.POST_CONFIGMAP.name, clients)]
        hello = results[("hello", loadgen.POST_CONFIGMAP.name, clients)]
        ratios = " ".join(f"{a / b:.2f}" for a, b in zip(ours.rates, hello.rates))
        print(f"{clients:>7}  {ours.median:>14,.0f}  {hello.median:>11,.0f}  {loadgen.paired_ratio(ours, hello):>5.2f}"
              f" [{ratios}]  {ours.cpu_us_per_request:>6.0f} / {hello.cpu_us_per_request:.0f}"
              f"  errors {ours.errors + hello.errors}")
    print(f"load after: {' / '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
