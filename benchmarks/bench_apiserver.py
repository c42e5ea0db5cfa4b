"""How fast is fakekube's apiserver, next to the ceiling of the stack it runs on?

Run ``python benchmarks/bench_apiserver.py`` (two to three minutes) or add ``--quick``
(under a minute, for smoke use). It prints, with no assertions on timings:

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
  each with fakekube/reference ratios. Rounds are timed (``--round-s``, 2 s by default;
  longer rounds even out a busy host's stalls) and interleaved (``--rounds``), after a
  warm-up (``--warmup-s``); every figure is median (min–max) over the rounds, with the
  server process's CPU per request beside it;
* the WSGI app alone (no socket, no server) and the in-process Python API, wall and CPU.

A server child or cold-start child that has not come up within ``--start-timeout-s``
(300 s by default) fails the run.

By default the servers run in a child process (``servers.py``) so that the load
generator (``loadgen.py``) does not compete with them for one GIL — ``kubectl`` and
client-go are separate processes too; ``--in-process`` serves them from this process
instead, as a pytest test using the official Python client would. Everything binds
127.0.0.1 and every loop is bounded by a request count and by wall-clock time.
Benchmarks read the wall clock (``time.perf_counter``); fakekube itself never does.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import time
from dataclasses import dataclass
from importlib.metadata import version
from typing import Any, Callable

import measure
import workload
from coldstart import ColdStart, measure_cold_start
from fakekube import Cluster
from fakekube.api.http import RestApp
from loadgen import (GET_CONFIGMAP, LIST_PODS, POST_CONFIGMAP, Endpoint, Plan, Results, WatchResult,
                     measure_throughput, measure_watch, median, p90, paired_ratio, paired_ratios)
from servers import SERVE_STARTUP_TIMEOUT_S, Servers, ServerProcess

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

def _per_call(work: Callable[[], object], calls: int) -> measure.Sample:
    """Wall and CPU seconds per call of ``work``, which makes ``calls`` calls."""
    sample = measure.time_call(work)
    return measure.Sample(sample.wall_s / calls, sample.cpu_s / calls)


def measure_python_api(settings: Settings) -> dict[str, measure.Series]:
    """``cluster.create/get/list`` with no HTTP: what a test pays when it seeds objects;
    per call, each round, with the yardstick in the same rounds."""
    cluster = Cluster(nodes=3)
    workload.prepare(cluster, settings.pods)
    names = ("cluster.create(configmap)", "cluster.get(configmap)", f"cluster.list(pods) ({settings.pods:,})")
    results = {name: measure.Series() for name in (*names, measure.YARDSTICK)}
    for round_index in range(settings.rounds):
        objects = [workload.configmap(f"api-r{round_index}-{i}") for i in range(settings.api_creates)]

        def create() -> None:
            for obj in objects:
                cluster.create(obj)

        def get() -> None:
            for _ in range(settings.api_creates):
                cluster.get("v1", "ConfigMap", workload.GET_NAME, workload.NAMESPACE)

        def list_pods() -> None:
            for _ in range(settings.api_lists):
                cluster.list("v1", "Pod", workload.PODS_NAMESPACE)
        for name, work, calls in zip(names, (create, get, list_pods),
                                     (settings.api_creates, settings.api_creates, settings.api_lists)):
            results[name].add(_per_call(work, calls))
        results[measure.YARDSTICK].add(measure.time_call(measure.yardstick))
    return results


# -- the WSGI app alone ---------------------------------------------------------------

def _call_app(app: Callable[..., Any], environs: list[dict[str, Any]], expect: str) -> measure.Sample:
    """Wall and CPU seconds per request for calling ``app`` on prebuilt environs (building
    them is not timed)."""
    def call_all() -> None:
        for env in environs:
            status = workload.call_wsgi(app, env)
            if not status.startswith(expect):
                raise RuntimeError(f"the app answered {status}, expected {expect}")
    return _per_call(call_all, len(environs))


#: The app-alone figures: fakekube's RestApp per request, and the hello app where it has a counterpart.
APP_ROWS = ("GET configmap", "GET configmap: hello (ref)", "LIST 1000 pods", "POST configmap",
            "POST configmap: hello (ref)")


def measure_app_alone(settings: Settings) -> dict[str, measure.Series]:
    """Each app called directly, no socket and no HTTP server: what the app itself costs."""
    cluster = Cluster(nodes=3)
    workload.prepare(cluster, settings.pods)
    app = RestApp(cluster.api)
    n, n_list = settings.api_creates, settings.api_lists
    results = {name: measure.Series() for name in APP_ROWS}
    for index in range(settings.rounds):
        def posts() -> list[dict[str, Any]]:
            return [workload.environ("POST", workload.CONFIGMAPS_PATH,
                                     workload.configmap_body(f"app-r{index}-{i}-{time.perf_counter_ns()}"))
                    for i in range(n)]
        gets = [workload.environ("GET", workload.GET_PATH) for _ in range(n)]
        results["GET configmap"].add(_call_app(app, gets, "200"))
        results["GET configmap: hello (ref)"].add(_call_app(workload.hello_app, gets, "200"))
        lists = [workload.environ("GET", workload.LIST_PATH) for _ in range(n_list)]
        results["LIST 1000 pods"].add(_call_app(app, lists, "200"))
        results["POST configmap"].add(_call_app(app, posts(), "201"))
        results["POST configmap: hello (ref)"].add(_call_app(workload.hello_app, posts(), "201"))
    return results


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
    print(f"\nCold start: fresh interpreter, Cluster(nodes={nodes}), {runs} runs (ms), median (min–max); "
          "CPU: the child's own")
    print(f"  {'phase':<46}{'wall':>24}{'CPU':>24}")
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
        wall = measure.format_spread(measure.spread(source.samples[key]), 1e3)
        cpu = measure.format_spread(measure.spread(source.cpu_samples.get(key, [])), 1e3)
        print(f"  {label:<46}{wall:>24}{cpu:>24}")


#: Per request: fakekube's scenario and the references it is compared with (label, column name).
COMPARISONS = [
    (GET_CONFIGMAP, [(SAME_BYTES, "same-bytes"), (SAME_BYTES_WERKZEUG, "werkzeug s-b")]),
    (LIST_PODS, [(SAME_BYTES, "same-bytes"), (SAME_BYTES_WERKZEUG, "werkzeug s-b")]),
    (POST_CONFIGMAP, [(HELLO, "hello"), (SAME_BYTES, "same-bytes")]),
]


def _spread(values: list[float], scale: float = 1.0) -> str:
    return measure.format_spread(measure.spread(values), scale, digits=0)


def print_throughput(results: Results, settings: Settings) -> None:
    print(f"\nRequests/s, one persistent http.client connection per client thread, median (min–max) of "
          f"{settings.rounds} interleaved rounds of {settings.round_s:g} s (after {settings.warmup_s:g} s warm-up)")
    print("  same-bytes   = fakekube's recorded answers sent back by a bare WSGI app on the same server")
    print("  werkzeug s-b = the same through werkzeug's Request/Response")
    print("  hello        = a bare werkzeug app answering a short 201 (the create ceiling)")
    print("  fakekube x   = fakekube / that server, per round (pairs measured back to back)")
    print("  server µs/req = the server process's CPU per request, per round (child-process mode only)")
    for scenario, references in COMPARISONS:
        for clients in settings.client_counts:
            ours = results[(FAKEKUBE, scenario.name, clients)]
            print(f"  {scenario.name}, {clients} client(s)")
            print(f"    {'server':<14}{'req/s':>22}{'fakekube x':>20}{'server µs/req':>22}{'errors':>8}")
            rows = [(FAKEKUBE, ours), *((name, results[(label, scenario.name, clients)]) for label, name in references)]
            for name, row in rows:
                ratio = "" if row is ours else measure.format_spread(paired_ratios(ours, row), digits=2)
                print(f"    {name:<14}{_spread(row.rates):>22}{ratio:>20}{_spread(row.cpu_us_rounds):>22}"
                      f"{row.errors:>8}")


def print_watch(results: list[WatchResult], references: list[WatchResult], settings: Settings) -> None:
    print(f"\nWatch-event delivery: one writer POSTs {settings.watch_events} configmaps back to back "
          f"(then {settings.watch_paced_events} paced), events/s median (min–max) of {settings.rounds} rounds; "
          "x: per round; same-bytes: the reference broadcasts each posted body")
    print(f"  {'server':<12}{'watchers':>8}{'events/s':>22}{'x':>18}{'burst p50 ms':>14}{'burst p90 ms':>14}"
          f"{'paced p50 ms':>14}{'paced p90 ms':>14}{'delivered':>14}")
    for result, reference in zip(results, references):
        ratio = measure.format_spread(measure.ratios(result.rates, reference.rates), digits=2)
        for name, row, shown in ((FAKEKUBE, result, f"{ratio:>18}"), (SAME_BYTES, reference, f"{'':>18}")):
            delivered = f"{row.delivered}/{row.expected}"
            print(f"  {name:<12}{row.watchers:>8}{_spread(row.rates):>22}{shown}"
                  f"{_ms(median(row.burst_latencies_s)):>14}{_ms(p90(row.burst_latencies_s)):>14}"
                  f"{_ms(median(row.paced_latencies_s)):>14}{_ms(p90(row.paced_latencies_s)):>14}{delivered:>14}")
            for error in sorted(set(row.errors)):
                print(f"           watcher error: {error}")


def print_app_alone(results: dict[str, measure.Series], settings: Settings) -> None:
    print(f"\nThe WSGI app alone, called directly (no socket, no HTTP server): µs per request, median (min–max) "
          f"of {settings.rounds} rounds; x ref: against the hello app in the same rounds")
    for request in ("GET configmap", "LIST 1000 pods", "POST configmap"):
        reference = f"{request}: hello (ref)"
        rows = {name: results[name] for name in (request, reference) if name in results}
        for line in measure.table(rows, reference if reference in rows else None, "µs", 1e6):
            print(f"  {line}")


def print_python_api(results: dict[str, measure.Series], settings: Settings) -> None:
    print(f"\nIn-process Python API (no HTTP), µs per call, median (min–max) of {settings.rounds} rounds, "
          "with the yardstick measured in the same rounds")
    for line in measure.table(results, measure.YARDSTICK, "µs", 1e6):
        print(f"  {line}")
    if measure.YARDSTICK in results:
        print(f"  {measure.busy_line(measure.YARDSTICK, results[measure.YARDSTICK])}")


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

def run(settings: Settings, in_process: bool, nodes: int, json_path: str | None, http_only: bool = False,
        start_timeout_s: float = SERVE_STARTUP_TIMEOUT_S) -> None:
    started = time.perf_counter()
    print_machine("in this process (clients share the GIL)" if in_process else "child process (own GIL)")
    if http_only:
        cached = uncached = ColdStart()
    else:
        cached = measure_cold_start(settings.cold_runs, nodes, bytecode_cache=True, timeout_s=start_timeout_s)
        uncached = measure_cold_start(max(1, settings.cold_runs // 3), nodes, bytecode_cache=False,
                                      timeout_s=start_timeout_s)
        print_cold_start(cached, uncached, nodes)

    local = Servers(settings.pods) if in_process else None
    remote = None if in_process else ServerProcess(settings.pods, start_timeout_s)
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
    app_costs = {} if http_only else measure_app_alone(settings)
    api = {} if http_only else measure_python_api(settings)
    if not http_only:
        print_app_alone(app_costs, settings)
        print_python_api(api, settings)
    print_targets(cached, results, settings)
    print(f"\n(benchmark took {time.perf_counter() - started:.1f} s; load average now {_load_average()})")
    if json_path:
        _dump_json(json_path, cached, uncached, results, watch, api, app_costs)


def _dump_json(path: str, cached: ColdStart, uncached: ColdStart, results: Results,
               watch: list[WatchResult], api: dict[str, measure.Series],
               app_costs: dict[str, measure.Series]) -> None:
    data: dict[str, Any] = {
        "cold_start_s": cached.samples, "import_uncached_s": uncached.samples.get("import", []),
        "throughput": [{"server": k[0], "scenario": k[1], "clients": k[2], "rates": v.rates, "errors": v.errors,
                        "connections_per_request": v.connections_per_request,
                        "server_cpu_us_per_request": v.cpu_us_per_request,
                        "server_cpu_us_per_request_rounds": v.cpu_us_rounds} for k, v in results.items()],
        "watch": [{"watchers": w.watchers, "rates": w.rates, "burst_p50_s": median(w.burst_latencies_s),
                   "paced_p50_s": median(w.paced_latencies_s), "delivered": w.delivered, "expected": w.expected}
                  for w in watch],
        "python_api_s_per_call": {name: {"wall": v.wall_s, "cpu": v.cpu_s} for name, v in api.items()},
        "app_alone_s_per_request": {name: {"wall": v.wall_s, "cpu": v.cpu_s} for name, v in app_costs.items()},
    }
    with open(path, "w", encoding="utf-8") as out:
        json.dump(data, out, indent=1)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small counts: finishes in under a minute (smoke use)")
    parser.add_argument("--in-process", action="store_true",
                        help="serve from this process (clients and servers share one GIL, as in a pytest test)")
    parser.add_argument("--nodes", type=int, default=3, help="Cluster(nodes=N) for the cold-start figures")
    parser.add_argument("--json", metavar="PATH", help="also write the raw samples as JSON")
    parser.add_argument("--http-only", action="store_true",
                        help="only the HTTP throughput and watch figures (no cold start, app alone, Python API)")
    parser.add_argument("--rounds", type=int, help="interleaved rounds per scenario (default 5; 3 with --quick)")
    parser.add_argument("--round-s", type=float,
                        help="wall seconds per round of one scenario (default 2; 0.3 with --quick): longer rounds "
                             "even out short stalls of a busy host")
    parser.add_argument("--warmup-s", type=float, help="uncounted wall seconds per scenario before the rounds")
    parser.add_argument("--start-timeout-s", type=float, default=SERVE_STARTUP_TIMEOUT_S,
                        help=f"wall seconds a server or cold-start child may take to come up "
                             f"(default {SERVE_STARTUP_TIMEOUT_S:g})")
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else FULL
    chosen = {"rounds": args.rounds, "round_s": args.round_s, "warmup_s": args.warmup_s}
    settings = dataclasses.replace(settings, **{key: value for key, value in chosen.items() if value is not None})
    run(settings, args.in_process, args.nodes, args.json, args.http_only, args.start_timeout_s)


if __name__ == "__main__":
    main()
