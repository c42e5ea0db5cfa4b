"""How fast is fakekube's apiserver, next to the ceiling of the stack it runs on?

Run ``python benchmarks/bench_apiserver.py`` (two to three minutes) or add ``--quick``
(under 20 s, for smoke use). It prints, with no assertions on timings:

* cold start — a fresh interpreter imports fakekube, then ``Cluster()`` + ``start()`` +
  the first ``GET /api/v1/namespaces``; plus a warm start (a second cluster in the same
  process), ``reset()`` and ``stop()``;
* requests/s with one ``http.client`` connection per client thread, 1 and 8 concurrent
  clients, for GET one configmap, LIST 1,000 pods and POST a configmap, with the
  server's CPU per request; and watch-event delivery to 1 and 8 watchers;
* the same requests against the same-bytes references (``reference.py``): servers on
  the same :class:`~fakekube.api.http.server.BackgroundServer` that send fakekube's own
  recorded answers and do nothing else — bare WSGI, and through werkzeug's
  Request/Response — and POSTs against a bare werkzeug "hello" app (the create ceiling);
  each with fakekube/reference ratios. Rounds are timed (``round_s``), after a warm-up;
* the WSGI app alone (no socket, no server) and the in-process Python API.

By default the servers run in a child process (``servers.py``) so that the load
generator (``loadgen.py``) does not compete with them for one GIL — ``kubectl`` and
client-go are separate processes too; ``--in-process`` serves them from this process
instead, as a pytest test using the official Python client would. Everything binds
127.0.0.1 and every loop is bounded by a request count and by wall-clock time.
Benchmarks read the wall clock (``time.perf_counter``); fakekube itself never does.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from dataclasses import dataclass
from importlib.metadata import version
from typing import Any, Callable

import workload
from coldstart import ColdStart, measure_cold_start
from fakekube import Cluster
from fakekube.api.http import RestApp
from loadgen import (GET_CONFIGMAP, LIST_PODS, POST_CONFIGMAP, Endpoint, Plan, Results, WatchResult,
                     measure_throughput, measure_watch, median, p90, paired_ratio)
from servers import Servers, ServerProcess

START_TARGET_S = 0.050
#: Issue 10's targets: create at 0.6 x the hello ceiling, LIST at 0.6 x the same-bytes server.
CREATE_TARGET_RATIO = 0.6
LIST_TARGET_RATIO = 0.6
FAKEKUBE, SAME_BYTES, SAME_BYTES_WERKZEUG, HELLO = "fakekube", "same-bytes", "same-bytes-werkzeug", "hello"


# -- settings ------------------------------------------------------------------

@dataclass(frozen=True)
class Settings:
    """Counts and bounds for one run; ``QUICK`` is the smoke-test variant."""

    rounds: int
    cold_runs: int
    pods: int
    get_requests: int            # most requests per round (a cap: rounds are timed), shared among the clients
    list_requests: int
    post_requests: int
    watch_events: int            # configmaps written back to back per watch round
    watch_paced_events: int      # written one at a time, each awaited by every watcher
    api_creates: int             # in-process Python API
    api_lists: int
    round_s: float               # wall time of one round of one scenario (also the watch rounds' bound)
    warmup_s: float              # each scenario once, uncounted, before the rounds of a client count
    client_counts: tuple[int, ...] = (1, 8)


FULL = Settings(rounds=5, cold_runs=15, pods=1000, get_requests=100_000, list_requests=10_000,
                post_requests=20_000, watch_events=1000, watch_paced_events=100, api_creates=3000, api_lists=20,
                round_s=2.0, warmup_s=1.0)
QUICK = Settings(rounds=3, cold_runs=3, pods=1000, get_requests=100_000, list_requests=10_000,
                 post_requests=20_000, watch_events=40, watch_paced_events=10, api_creates=200, api_lists=3,
                 round_s=0.3, warmup_s=0.1)


# -- the in-process Python API -------------------------------------------------------------

@dataclass(frozen=True)
class ApiRate:
    operation: str
    rates: list[float]


def measure_python_api(settings: Settings) -> list[ApiRate]:
    """``cluster.create/get/list`` with no HTTP: what a test pays when it seeds objects."""
    cluster = Cluster(nodes=3)
    workload.prepare(cluster, settings.pods)
    creates, gets, lists = [], [], []
    for round_index in range(settings.rounds):
        objects = [workload.configmap(f"api-r{round_index}-{i}") for i in range(settings.api_creates)]
        started = time.perf_counter()
        for obj in objects:
            cluster.create(obj)
        creates.append(len(objects) / (time.perf_counter() - started))
        started = time.perf_counter()
        for _ in range(settings.api_creates):
            cluster.get("v1", "ConfigMap", workload.GET_NAME, workload.NAMESPACE)
        gets.append(settings.api_creates / (time.perf_counter() - started))
        started = time.perf_counter()
        for _ in range(settings.api_lists):
            cluster.list("v1", "Pod", workload.PODS_NAMESPACE)
        lists.append(settings.api_lists / (time.perf_counter() - started))
    return [ApiRate("cluster.create(configmap)", creates), ApiRate("cluster.get(configmap)", gets),
            ApiRate(f"cluster.list(pods) ({settings.pods:,})", lists)]


# -- the WSGI app alone ---------------------------------------------------------------

@dataclass(frozen=True)
class AppCost:
    request: str
    ours_us: list[float]       # fakekube's RestApp, µs per request, one value per round
    ceiling_us: list[float]    # the hello app (empty when there is no counterpart)


def _time_app(app: Callable[..., Any], environs: list[dict[str, Any]], expect: str) -> float:
    """µs per request for calling ``app`` on prebuilt environs (building them is not timed)."""
    started = time.perf_counter()
    for env in environs:
        status = workload.call_wsgi(app, env)
        if not status.startswith(expect):
            raise RuntimeError(f"the app answered {status}, expected {expect}")
    return (time.perf_counter() - started) / len(environs) * 1e6


def measure_app_alone(settings: Settings) -> list[AppCost]:
    """Each app called directly, no socket and no HTTP server: what the app itself costs."""
    cluster = Cluster(nodes=3)
    workload.prepare(cluster, settings.pods)
    app = RestApp(cluster.api)
    n, n_list = settings.api_creates, settings.api_lists
    costs: dict[str, tuple[list[float], list[float]]] = {"GET configmap": ([], []), "LIST 1000 pods": ([], []),
                                                         "POST configmap": ([], [])}
    for index in range(settings.rounds):
        def bodies() -> list[bytes]:
            return [workload.configmap_body(f"app-r{index}-{i}-{time.perf_counter_ns()}") for i in range(n)]
        gets = [workload.environ("GET", workload.GET_PATH) for _ in range(n)]
        costs["GET configmap"][0].append(_time_app(app, gets, "200"))
        costs["GET configmap"][1].append(_time_app(workload.hello_app, gets, "200"))
        lists = [workload.environ("GET", workload.LIST_PATH) for _ in range(n_list)]
        costs["LIST 1000 pods"][0].append(_time_app(app, lists, "200"))
        posts = [workload.environ("POST", workload.CONFIGMAPS_PATH, body) for body in bodies()]
        costs["POST configmap"][0].append(_time_app(app, posts, "201"))
        posts = [workload.environ("POST", workload.CONFIGMAPS_PATH, body) for body in bodies()]
        costs["POST configmap"][1].append(_time_app(workload.hello_app, posts, "201"))
    return [AppCost(name, ours, ceiling) for name, (ours, ceiling) in costs.items()]


# -- report ------------------------------------------------------------------------------

def _us(value: float) -> str:
    """Microseconds as an integer, or "-" when not measured."""
    return "-" if value != value else f"{value:.0f}"  # NaN is the only value not equal to itself


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:8.2f}"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _load_average() -> str:
    try:
        return " / ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


def print_machine(mode: str) -> None:
    print(f"machine : {os.cpu_count()} cores, {_cpu_model()}, {platform.system()} {platform.release()}")
    print(f"python  : {platform.python_implementation()} {platform.python_version()}; werkzeug {version('werkzeug')}")
    print(f"servers : {mode}")
    print(f"load    : {_load_average()} (1/5/15-min load average before the run: other work skews figures)")


def print_cold_start(cached: ColdStart, uncached: ColdStart, nodes: int) -> None:
    runs = len(cached.samples["import"])
    print(f"\nCold start: fresh interpreter, Cluster(nodes={nodes}), {runs} runs (ms)")
    print(f"  {'phase':<46}{'median':>8}{'p90':>10}")
    rows = [
        ("import fakekube (cached bytecode)", cached, "import"),
        ("import fakekube (no bytecode cache)", uncached, "import"),
        ("Cluster()", cached, "cold_construct"),
        ("start()", cached, "cold_start"),
        ("first GET /api/v1/namespaces", cached, "cold_first_get"),
        ("cold: Cluster() + start() + first GET", cached, "cold_total"),
        ("warm: same, second cluster in the process", cached, "warm_total"),
        ("  of which Cluster()", cached, "warm_construct"),
        ("  of which start()", cached, "warm_start"),
        ("reset()", cached, "reset"),
        ("stop()", cached, "stop"),
    ]
    for label, source, key in rows:
        values = source.samples[key]
        print(f"  {label:<46}{_ms(median(values))}  {_ms(p90(values))}")


#: Per request: fakekube's scenario and the references it is compared with (label, column name).
COMPARISONS = [
    (GET_CONFIGMAP, [(SAME_BYTES, "same-bytes"), (SAME_BYTES_WERKZEUG, "werkzeug s-b")]),
    (LIST_PODS, [(SAME_BYTES, "same-bytes"), (SAME_BYTES_WERKZEUG, "werkzeug s-b")]),
    (POST_CONFIGMAP, [(HELLO, "hello"), (SAME_BYTES, "same-bytes")]),
]


def print_throughput(results: Results, settings: Settings) -> None:
    print(f"\nRequests/s, one persistent http.client connection per client thread, median of {settings.rounds} "
          f"rounds of {settings.round_s:g} s (after {settings.warmup_s:g} s warm-up)")
    print("  same-bytes   = fakekube's recorded answers sent back by a bare WSGI app on the same server")
    print("  werkzeug s-b = the same through werkzeug's Request/Response")
    print("  hello        = a bare werkzeug app answering a short 201 (the create ceiling)")
    print("  x            = fakekube / that reference (median of per-round ratios, pairs measured back to back)")
    print("  µs/req       = server-process CPU per request: fakekube / first reference (child-process mode only)")
    for scenario, references in COMPARISONS:
        header = "".join(f"{name:>14}{'x':>6}" for _, name in references)
        print(f"  {'request':<16}{'clients':>8}{'fakekube':>10}{header}{'µs/req':>16}{'errors':>8}")
        for clients in settings.client_counts:
            ours = results[(FAKEKUBE, scenario.name, clients)]
            cells, errors = "", ours.errors
            for label, _ in references:
                other = results[(label, scenario.name, clients)]
                errors += other.errors
                cells += f"{other.median:14.0f}{paired_ratio(ours, other):6.2f}"
            first = results[(references[0][0], scenario.name, clients)]
            cpu = f"{_us(ours.cpu_us_per_request)} / {_us(first.cpu_us_per_request)}"
            print(f"  {scenario.name:<16}{clients:>8}{ours.median:10.0f}{cells}{cpu:>16}{errors:>8}")


def print_watch(results: list[WatchResult], references: list[WatchResult], settings: Settings) -> None:
    print(f"\nWatch-event delivery: one writer POSTs {settings.watch_events} configmaps back to back "
          f"(then {settings.watch_paced_events} paced), median of {settings.rounds} rounds; same-bytes: the "
          "reference broadcasts each posted body")
    print(f"  {'server':<12}{'watchers':>8}{'events/s':>11}{'x':>6}{'burst p50 ms':>14}{'burst p90 ms':>14}"
          f"{'paced p50 ms':>14}{'paced p90 ms':>14}{'delivered':>14}")
    for result, reference in zip(results, references):
        ratio = median([a / b for a, b in zip(result.rates, reference.rates) if b > 0])
        for name, row, shown in ((FAKEKUBE, result, f"{ratio:6.2f}"), (SAME_BYTES, reference, f"{'':>6}")):
            delivered = f"{row.delivered}/{row.expected}"
            print(f"  {name:<12}{row.watchers:>8}{median(row.rates):11.0f}{shown}"
                  f"{_ms(median(row.burst_latencies_s)):>14}{_ms(p90(row.burst_latencies_s)):>14}"
                  f"{_ms(median(row.paced_latencies_s)):>14}{_ms(p90(row.paced_latencies_s)):>14}{delivered:>14}")
            for error in sorted(set(row.errors)):
                print(f"           watcher error: {error}")


def print_app_alone(costs: list[AppCost], settings: Settings) -> None:
    print(f"\nThe WSGI app alone, called directly (no socket, no HTTP server): µs per request, "
          f"median of {settings.rounds} rounds")
    print(f"  {'request':<16}{'fakekube':>10}{'hello':>8}{'fakekube adds':>15}")
    for cost in costs:
        ours = median(cost.ours_us)
        if cost.ceiling_us:
            top = median(cost.ceiling_us)
            print(f"  {cost.request:<16}{ours:10.0f}{top:8.0f}{ours - top:15.0f}")
        else:
            print(f"  {cost.request:<16}{ours:10.0f}{'':>8}{'':>15}")


def print_python_api(rates: list[ApiRate], settings: Settings) -> None:
    print(f"\nIn-process Python API (no HTTP), operations/s, median of {settings.rounds} rounds")
    for rate in rates:
        print(f"  {rate.operation:<36}{median(rate.rates):12.0f}")


def print_targets(cold: ColdStart, results: Results, settings: Settings) -> None:
    print("\nTargets")
    if cold.samples.get("cold_total"):
        start_s = median(cold.samples["cold_total"])
        verdict = "met" if start_s < START_TARGET_S else "NOT met"
        print(f"  cold Cluster()+start()+first GET < {START_TARGET_S * 1000:.0f} ms: {start_s * 1000:.1f} ms "
              f"-> {verdict}")
    for clients in settings.client_counts:
        ratio = paired_ratio(results[(FAKEKUBE, LIST_PODS.name, clients)],
                             results[(SAME_BYTES, LIST_PODS.name, clients)])
        verdict = "met" if ratio >= LIST_TARGET_RATIO else "NOT met"
        print(f"  LIST >= {LIST_TARGET_RATIO} x same-bytes server, {clients} client(s): {ratio:.2f} -> {verdict}")
    for clients in settings.client_counts:
        ratio = paired_ratio(results[(FAKEKUBE, POST_CONFIGMAP.name, clients)],
                             results[(HELLO, POST_CONFIGMAP.name, clients)])
        verdict = "met" if ratio >= CREATE_TARGET_RATIO else "NOT met"
        print(f"  create >= {CREATE_TARGET_RATIO} x hello ceiling, {clients} client(s): {ratio:.2f} -> {verdict}")


# -- main ----------------------------------------------------------------------------------

def run(settings: Settings, in_process: bool, nodes: int, json_path: str | None, http_only: bool = False) -> None:
    started = time.perf_counter()
    print_machine("in this process (clients share the GIL)" if in_process else "child process (own GIL)")
    if http_only:
        cached = uncached = ColdStart()
    else:
        cached = measure_cold_start(settings.cold_runs, nodes, bytecode_cache=True)
        uncached = measure_cold_start(max(1, settings.cold_runs // 3), nodes, bytecode_cache=False)
        print_cold_start(cached, uncached, nodes)

    local = Servers(settings.pods) if in_process else None
    remote = None if in_process else ServerProcess(settings.pods)
    urls = local.start() if local is not None else remote.urls if remote is not None else {}
    try:
        endpoints = {label: Endpoint.of(urls[label]) for label in (FAKEKUBE, SAME_BYTES, SAME_BYTES_WERKZEUG, HELLO)}
        caps = {GET_CONFIGMAP.name: settings.get_requests, LIST_PODS.name: settings.list_requests,
                POST_CONFIGMAP.name: settings.post_requests}
        plan: Plan = [(label, endpoints[label], scenario, caps[scenario.name])
                      for scenario, references in COMPARISONS
                      for label in (FAKEKUBE, *(label for label, _ in references))]
        results = measure_throughput(plan, settings.client_counts, settings.rounds, settings.round_s,
                                     remote.cpu_s if remote is not None else None, settings.warmup_s)
        print_throughput(results, settings)
        watch_bound_s = max(settings.round_s, 10.0)
        watch = [measure_watch(endpoints[FAKEKUBE], watchers, settings.watch_events, settings.watch_paced_events,
                               settings.rounds, watch_bound_s) for watchers in settings.client_counts]
        watch_reference = [measure_watch(endpoints[SAME_BYTES], watchers, settings.watch_events,
                                         settings.watch_paced_events, settings.rounds, watch_bound_s)
                           for watchers in settings.client_counts]
        print_watch(watch, watch_reference, settings)
    finally:
        if local is not None:
            local.stop()
        if remote is not None:
            remote.stop()
    app_costs = [] if http_only else measure_app_alone(settings)
    api = [] if http_only else measure_python_api(settings)
    if not http_only:
        print_app_alone(app_costs, settings)
        print_python_api(api, settings)
    print_targets(cached, results, settings)
    print(f"\n(benchmark took {time.perf_counter() - started:.1f} s; load average now {_load_average()})")
    if json_path:
        _dump_json(json_path, cached, uncached, results, watch, api, app_costs)


def _dump_json(path: str, cached: ColdStart, uncached: ColdStart, results: Results,
               watch: list[WatchResult], api: list[ApiRate], app_costs: list[AppCost]) -> None:
    data: dict[str, Any] = {
        "cold_start_s": cached.samples, "import_uncached_s": uncached.samples.get("import", []),
        "throughput": [{"server": k[0], "scenario": k[1], "clients": k[2], "rates": v.rates, "errors": v.errors,
                        "connections_per_request": v.connections_per_request,
                        "server_cpu_us_per_request": v.cpu_us_per_request} for k, v in results.items()],
        "watch": [{"watchers": w.watchers, "rates": w.rates, "burst_p50_s": median(w.burst_latencies_s),
                   "paced_p50_s": median(w.paced_latencies_s), "delivered": w.delivered, "expected": w.expected}
                  for w in watch],
        "python_api": [{"operation": a.operation, "rates": a.rates} for a in api],
        "app_alone_us": [{"request": c.request, "fakekube": c.ours_us, "hello": c.ceiling_us} for c in app_costs],
    }
    with open(path, "w", encoding="utf-8") as out:
        json.dump(data, out, indent=1)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small counts: finishes in under 20 s (smoke use)")
    parser.add_argument("--in-process", action="store_true",
                        help="serve from this process (clients and servers share one GIL, as in a pytest test)")
    parser.add_argument("--nodes", type=int, default=3, help="Cluster(nodes=N) for the cold-start figures")
    parser.add_argument("--json", metavar="PATH", help="also write the raw samples as JSON")
    parser.add_argument("--http-only", action="store_true",
                        help="only the HTTP throughput and watch figures (no cold start, app alone, Python API)")
    args = parser.parse_args(argv)
    run(QUICK if args.quick else FULL, args.in_process, args.nodes, args.json, args.http_only)


if __name__ == "__main__":
    main()
