"""Load over HTTP: request/response throughput and watch-event delivery.

Every client thread has its own ``http.client.HTTPConnection`` and keeps it (HTTP/1.1
keep-alive) for as long as the server does; every loop is bounded by a request count
and by wall-clock time, and every socket by a timeout.
"""

from __future__ import annotations

import http.client
import json
import statistics
import threading
import time
from dataclasses import dataclass, field
from typing import Callable
from urllib.parse import urlparse

import measure
import workload

HOST = "127.0.0.1"
#: A server that has not answered within this long is broken, not slow.
SOCKET_TIMEOUT_S = 30.0


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def p90(values: list[float]) -> float:
    """Nearest-rank 90th percentile (with few samples this is close to the maximum)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(0.9 * len(ordered)) - 1))]


#: Reads the servers' CPU seconds so far; None when they share this process with the clients.
CpuProbe = Callable[[], float]

@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int

    @classmethod
    def of(cls, url: str) -> "Endpoint":
        parsed = urlparse(url)
        return cls(parsed.hostname or HOST, parsed.port or 80)

    def connect(self) -> http.client.HTTPConnection:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=SOCKET_TIMEOUT_S)
        conn.connect()
        return conn


@dataclass(frozen=True)
class Scenario:
    """One kind of request: ``body(tag, client, i)`` makes a POST body unique per request."""

    name: str
    method: str
    path: str
    expect: int
    body: Callable[[str, int, int], bytes] | None = None


def _unique_configmap(tag: str, client: int, index: int) -> bytes:
    return workload.configmap_body(f"cm-{tag}-c{client}-{index}")


GET_CONFIGMAP = Scenario("GET configmap", "GET", workload.GET_PATH, 200)
LIST_PODS = Scenario("LIST 1000 pods", "GET", workload.LIST_PATH, 200)
POST_CONFIGMAP = Scenario("POST configmap", "POST", workload.CONFIGMAPS_PATH, 201, _unique_configmap)
HELLO_GET = Scenario("hello GET", "GET", "/hello", 200)


@dataclass
class ClientTally:
    requests: int = 0
    errors: int = 0
    closed: int = 0        # responses after which the server closed the connection
    finished_at: float = 0.0


@dataclass(frozen=True)
class Round:
    requests: int
    errors: int
    closed: int
    elapsed_s: float
    server_cpu_s: float

    @property
    def rate(self) -> float:
        return self.requests / self.elapsed_s if self.elapsed_s > 0 else float("nan")


def _client_loop(endpoint: Endpoint, scenario: Scenario, tag: str, client: int, count: int, timeout_s: float,
                 barrier: threading.Barrier, tally: ClientTally) -> None:
    conn = endpoint.connect()
    headers = workload.JSON_HEADERS
    try:
        barrier.wait(timeout=SOCKET_TIMEOUT_S)
        deadline = time.perf_counter() + timeout_s
        for index in range(count):
            if time.perf_counter() > deadline:
                break
            body = scenario.body(tag, client, index) if scenario.body else None
            conn.request(scenario.method, scenario.path, body=body, headers=headers)
            response = conn.getresponse()
            response.read()
            tally.requests += 1
            tally.closed += response.will_close   # http.client reconnects on the next request
            if response.status != scenario.expect:
                tally.errors += 1
    finally:
        tally.finished_at = time.perf_counter()
        conn.close()


def run_round(endpoint: Endpoint, scenario: Scenario, clients: int, total: int, timeout_s: float, tag: str,
              cpu_probe: CpuProbe | None = None) -> Round:
    """``clients`` threads, each on its own keep-alive connection, share ``total`` requests."""
    barrier = threading.Barrier(clients + 1)
    tallies = [ClientTally() for _ in range(clients)]
    per_client = max(1, total // clients)
    threads = [threading.Thread(target=_client_loop, name=f"bench-client-{i}", daemon=True,
                                args=(endpoint, scenario, tag, i, per_client, timeout_s, barrier, tallies[i]))
               for i in range(clients)]
    cpu_before = cpu_probe() if cpu_probe else float("nan")
    for thread in threads:
        thread.start()
    barrier.wait(timeout=SOCKET_TIMEOUT_S)
    started = time.perf_counter()
    for thread in threads:
        thread.join(timeout_s + 2 * SOCKET_TIMEOUT_S)
    finished = max(t.finished_at for t in tallies)
    cpu_used = cpu_probe() - cpu_before if cpu_probe else float("nan")
    return Round(sum(t.requests for t in tallies), sum(t.errors for t in tallies), sum(t.closed for t in tallies),
                 finished - started, cpu_used)


@dataclass(frozen=True)
class Throughput:
    scenario: str
    clients: int
    rates: list[float]
    errors: int
    requests: int
    closed: int
    server_cpu_s: float
    #: Server CPU µs per request in each round (NaN where the servers share this process).
    cpu_us_rounds: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return median(self.rates)

    @property
    def cpu_us_per_request(self) -> float:
        """Server CPU per request (all rounds): steadier than req/s on a busy machine."""
        return self.server_cpu_s / self.requests * 1e6 if self.requests else float("nan")

    @property
    def connections_per_request(self) -> float:
        """1.0 when the server closes the connection after every response (no keep-alive)."""
        return self.closed / self.requests if self.requests else float("nan")


#: What to measure: (server label, server, scenario, most requests per round).
Plan = list[tuple[str, Endpoint, Scenario, int]]
#: Results by (server label, scenario name, clients).
Results = dict[tuple[str, str, int], Throughput]


def measure_throughput(plan: Plan, client_counts: tuple[int, ...], rounds_per_scenario: int, round_s: float,
                       cpu_probe: CpuProbe | None, warmup_s: float = 0.0) -> Results:
    """Each scenario once per round, rounds interleaved: a scenario and its references then
    run under the same machine conditions (other load, sockets in TIME_WAIT), round by round.

    A round lasts ``round_s`` of wall time (or until its request cap): long enough for a
    steady state (short rounds of a few dozen LISTs once hid a 2x slowdown under
    concurrency). Before the first round of each client count every entry runs once for
    ``warmup_s``, not counted (caches filled, threads and connections made).
    """
    rounds: dict[tuple[str, str, int], list[Round]] = {}
    for clients in client_counts:
        if warmup_s > 0:
            for label, endpoint, scenario, total in plan:
                run_round(endpoint, scenario, clients, total, warmup_s, f"{label}-{clients}-warm")
        for index in range(rounds_per_scenario):
            for label, endpoint, scenario, total in plan:
                tag = f"{label}-{scenario.method.lower()}{clients}r{index}"
                result = run_round(endpoint, scenario, clients, total, round_s, tag, cpu_probe)
                rounds.setdefault((label, scenario.name, clients), []).append(result)
    return {key: Throughput(key[1], key[2], [r.rate for r in done], sum(r.errors for r in done),
                            sum(r.requests for r in done), sum(r.closed for r in done),
                            sum(r.server_cpu_s for r in done),
                            [r.server_cpu_s / r.requests * 1e6 if r.requests else float("nan") for r in done])
            for key, done in rounds.items()}


def paired_ratio(ours: Throughput, ceiling: Throughput) -> float:
    """Median over rounds of ours/ceiling, each pair measured back to back."""
    return median([a / b for a, b in zip(ours.rates, ceiling.rates) if b > 0])


def paired_ratios(ours: Throughput, ceiling: Throughput) -> measure.Spread:
    """Median and min–max over rounds of ours/ceiling, each pair measured back to back."""
    return measure.ratios(ours.rates, ceiling.rates)


# -- watch-event delivery ----------------------------------------------------------------

@dataclass
class WatcherTally:
    """What one watcher saw; ``received`` counts measured events (not the primer)."""

    received: int = 0
    latencies_s: list[float] = field(default_factory=list)
    last_at: float = 0.0
    error: str = ""


class Delivery:
    """Counts events across watchers so a paced writer can wait for each write to arrive."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._count = 0

    def one_more(self) -> None:
        with self._cond:
            self._count += 1
            self._cond.notify_all()

    def wait_for(self, count: int, timeout_s: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self._count >= count, timeout_s)


def _watch_loop(endpoint: Endpoint, path: str, expected: int, timeout_s: float, ready: threading.Barrier,
                delivery: Delivery, tally: WatcherTally) -> None:
    conn = http.client.HTTPConnection(endpoint.host, endpoint.port, timeout=SOCKET_TIMEOUT_S)
    try:
        conn.request("GET", path, headers={"Accept": "application/json"})
        response = conn.getresponse()        # returns with the first event: the primer
        if response.status != 200 or not response.readline():
            tally.error = f"watch answered {response.status}"
            ready.abort()
            return
        ready.wait(timeout=SOCKET_TIMEOUT_S)
        deadline = time.perf_counter() + timeout_s
        while tally.received < expected and time.perf_counter() < deadline:
            line = response.readline()
            if not line:
                tally.error = "stream ended early"
                return
            now = time.perf_counter()
            event = json.loads(line)
            sent = float(event["object"]["data"]["sent"])
            tally.latencies_s.append(now - sent)
            tally.received += 1
            tally.last_at = now
            delivery.one_more()
    except (OSError, threading.BrokenBarrierError, KeyError, ValueError) as exc:
        tally.error = f"{type(exc).__name__}: {exc}"
    finally:
        conn.close()


@dataclass(frozen=True)
class WatchRound:
    events: int            # events delivered, summed over watchers
    expected: int
    burst_rate: float      # events/s delivered during the back-to-back burst
    burst_latencies_s: list[float]
    paced_latencies_s: list[float]
    errors: list[str]


def _current_rv(conn: http.client.HTTPConnection) -> str:
    conn.request("GET", f"{workload.WATCH_CONFIGMAPS_PATH}?limit=1", headers=workload.JSON_HEADERS)
    response = conn.getresponse()
    body = json.loads(response.read())
    return str(body["metadata"]["resourceVersion"])


def _write(conn: http.client.HTTPConnection, name: str) -> None:
    body = workload.configmap_body(name, workload.WATCH_NAMESPACE, {"sent": repr(time.perf_counter())})
    conn.request("POST", workload.WATCH_CONFIGMAPS_PATH, body=body, headers=workload.JSON_HEADERS)
    response = conn.getresponse()
    response.read()
    if response.status != 201:
        raise RuntimeError(f"watch writer: POST answered {response.status}")


def watch_round(endpoint: Endpoint, watchers: int, burst: int, paced: int, timeout_s: float, tag: str) -> WatchRound:
    """``watchers`` streams on one namespace; one writer POSTs ``burst`` configmaps back to
    back, then ``paced`` more, each only after every watcher received the previous one.

    Every configmap carries its send time, so each watcher measures write-to-receipt latency
    (same process, same clock). Watches start at the current resourceVersion, and a primer
    write proves every stream is open before the clock starts.
    """
    writer = endpoint.connect()
    try:
        rv = _current_rv(writer)
        path = f"{workload.WATCH_CONFIGMAPS_PATH}?watch=true&resourceVersion={rv}&timeoutSeconds={int(timeout_s) + 5}"
        ready = threading.Barrier(watchers + 1)
        delivery = Delivery()
        tallies = [WatcherTally() for _ in range(watchers)]
        threads = [threading.Thread(target=_watch_loop, name=f"bench-watch-{i}", daemon=True,
                                    args=(endpoint, path, burst + paced, timeout_s, ready, delivery, tallies[i]))
                   for i in range(watchers)]
        for thread in threads:
            thread.start()
        _write(writer, f"primer-{tag}")
        ready.wait(timeout=SOCKET_TIMEOUT_S)
        started = time.perf_counter()
        deadline = started + timeout_s
        for index in range(burst):
            if time.perf_counter() > deadline:
                break
            _write(writer, f"burst-{tag}-{index}")
        delivery.wait_for(watchers * burst, max(0.0, deadline - time.perf_counter()))
        burst_done = max((t.last_at for t in tallies), default=started)
        burst_events = sum(min(t.received, burst) for t in tallies)
        for index in range(paced):
            if time.perf_counter() > deadline:
                break
            _write(writer, f"paced-{tag}-{index}")
            delivery.wait_for(watchers * (burst + index + 1), max(0.0, deadline - time.perf_counter()))
        for thread in threads:
            thread.join(timeout_s + SOCKET_TIMEOUT_S)
    finally:
        writer.close()
    return WatchRound(
        events=sum(t.received for t in tallies), expected=watchers * (burst + paced),
        burst_rate=burst_events / (burst_done - started) if burst_done > started else float("nan"),
        burst_latencies_s=[s for t in tallies for s in t.latencies_s[:burst]],
        paced_latencies_s=[s for t in tallies for s in t.latencies_s[burst:]],
        errors=[t.error for t in tallies if t.error])


@dataclass(frozen=True)
class WatchResult:
    watchers: int
    rates: list[float]
    burst_latencies_s: list[float]
    paced_latencies_s: list[float]
    delivered: int
    expected: int
    errors: list[str]


def measure_watch(endpoint: Endpoint, watchers: int, burst: int, paced: int, rounds_per_count: int,
                  timeout_s: float) -> WatchResult:
    rounds = [watch_round(endpoint, watchers, burst, paced, timeout_s, f"w{watchers}r{i}")
              for i in range(rounds_per_count)]
    return WatchResult(watchers, [r.burst_rate for r in rounds],
                       [s for r in rounds for s in r.burst_latencies_s], [s for r in rounds for s in r.paced_latencies_s],
                       sum(r.events for r in rounds), sum(r.expected for r in rounds), [e for r in rounds for e in r.errors])
