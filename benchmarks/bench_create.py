"""Create against the hello ceiling, alone: issue 10's create target in about a minute.

``python benchmarks/bench_create.py [--rounds 7] [--round-s 2]`` serves a prepared cluster
and the bare werkzeug hello app from one child process (``servers.py``, as
``bench_apiserver.py --http-only`` does), then POSTs configmaps to each, interleaved round
by round, with 1 and 8 clients on keep-alive connections. It prints req/s, the per-round
ratios and the server process's CPU per request (the steadier figure on a shared host),
each as median (min–max), and the load at start and end. It asserts nothing; the full
picture is ``bench_apiserver.py``. ``--quick``: 3 rounds of 0.3 s.
"""

from __future__ import annotations

import argparse

import loadgen
import measure
from servers import SERVE_STARTUP_TIMEOUT_S, ServerProcess

CLIENT_COUNTS = (1, 8)
MAX_REQUESTS_PER_ROUND = 100_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    measure.add_round_options(parser, rounds=7, round_s=2.0)
    parser.add_argument("--quick", action="store_true", help="3 rounds of 0.3 s (smoke use)")
    parser.add_argument("--start-timeout-s", type=float, default=SERVE_STARTUP_TIMEOUT_S,
                        help="wall seconds the server child may take to come up")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.round_s = 3, 0.3
    start = measure.Load.now()
    servers = ServerProcess(pods=0, startup_timeout_s=args.start_timeout_s)
    try:
        plan: loadgen.Plan = [
            ("fakekube", loadgen.Endpoint.of(servers.urls["fakekube"]), loadgen.POST_CONFIGMAP, MAX_REQUESTS_PER_ROUND),
            ("hello", loadgen.Endpoint.of(servers.urls["hello"]), loadgen.POST_CONFIGMAP, MAX_REQUESTS_PER_ROUND),
        ]
        results = loadgen.measure_throughput(plan, CLIENT_COUNTS, args.rounds, args.round_s, servers.cpu_s,
                                             warmup_s=min(1.0, args.round_s))
    finally:
        servers.stop()
    print("POST configmap against the hello ceiling, served from one child process")
    print(measure.machine_line(start, measure.Load.now(), args.rounds, args.round_s))
    print(f"{'clients':>7}  {'server':<9}{'req/s':>22}{'x hello':>20}{'server µs/req':>22}{'errors':>8}")
    for clients in CLIENT_COUNTS:
        ours = results[("fakekube", loadgen.POST_CONFIGMAP.name, clients)]
        hello = results[("hello", loadgen.POST_CONFIGMAP.name, clients)]
        for name, row in (("fakekube", ours), ("hello", hello)):
            ratio = measure.format_spread(loadgen.paired_ratios(ours, hello), digits=2) if row is ours else ""
            print(f"{clients:>7}  {name:<9}{measure.format_spread(measure.spread(row.rates), digits=0):>22}"
                  f"{ratio:>20}{measure.format_spread(measure.spread(row.cpu_us_rounds), digits=0):>22}"
                  f"{row.errors:>8}")


if __name__ == "__main__":
    main()
