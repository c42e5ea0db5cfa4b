"""Many CRDs: what each create costs as they accumulate, and what the documents that list
every type (OpenAPI v2 and v3, discovery) cost after one more CRD change.

``python benchmarks/bench_crds.py [--crds 1000] [--step 250] [--layout distinct|shared|both]``
serves a fresh cluster from a child process (its own GIL, as kubectl's server would have)
and, through the HTTP API with one keep-alive client:

1. creates ``--crds`` small CRDs, each in its own group (``distinct``) or spread over
   ``--groups`` shared groups (``shared``), printing wall and server CPU time per
   ``--step``;
2. reads ``/openapi/v2`` once (the first build), then makes one more CRD change (a create,
   an update, a delete) and after each times ``GET /openapi/v2`` as JSON and as protobuf,
   ``/openapi/v3`` and the changed group-version's v3 document, and discovery
   (aggregated ``/apis``, legacy ``/apis`` and the group-version's resource list);
3. after one more change, GETs a ConfigMap over and over from a second connection while
   ``/openapi/v2`` is rebuilt, and prints those GETs' latencies (answered while the slow
   one runs, or held up behind it).

``--sample`` makes the server process sample every thread's stack every 5 ms and print
the hottest functions to stderr when it stops, each charged the CPU time its thread used
since the last sample (a poor man's py-spy: all threads, the engine's included; time a
thread spends holding the GIL between samples lands on where it released it, so use the
ranking). ``--only-creates`` stops after the creates, to profile them alone. Run it with
``PYTHONPATH`` set to another checkout to compare (docs/performance.md, "Many CRDs"). It
asserts nothing.
"""

from __future__ import annotations

import argparse
import collections
import http.client
import json
import os
import select
import statistics
import subprocess
import sys
import threading
import time
from typing import Any, Callable

import measure
from measure import process_cpu_s

HOST = "127.0.0.1"
CRDS_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
CONFIGMAP_PATH = "/api/v1/namespaces/default/configmaps/bench"
JSON = {"Content-Type": "application/json", "Accept": "application/json"}
PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
#: By default the server child must come up within this long (``--start-timeout-s``).
SERVE_STARTUP_TIMEOUT_S = 300.0
SOCKET_TIMEOUT_S = 600.0
SAMPLE_INTERVAL_S = 0.005
SAMPLE_TOP = 60

Obj = dict[str, Any]


# ------------------------------------------------------------------------ the server

class _Sampler(threading.Thread):
    """Samples every other thread's stack every few ms and charges it the CPU time the
    thread used since the last sample (its POSIX per-thread CPU clock), so a thread
    blocked in C (a socket read, a lock, the GIL) costs nothing: a CPU profile of every
    thread, the engine's included."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.own: collections.defaultdict[str, float] = collections.defaultdict(float)  # CPU seconds by place
        self.total: collections.defaultdict[str, float] = collections.defaultdict(float)
        self.cpu_s = 0.0
        self.stopping = threading.Event()
        self._last: dict[int, float] = {}

    def run(self) -> None:
        me = threading.get_ident()
        while not self.stopping.wait(SAMPLE_INTERVAL_S):
            for ident, frame in sys._current_frames().items():
                if ident != me:
                    self._charge(frame, self._cpu_since_last(ident))

    def _cpu_since_last(self, ident: int) -> float:
        try:
            now = time.clock_gettime(time.pthread_getcpuclockid(ident))
        except OSError:  # the thread ended
            return 0.0
        used = now - self._last.get(ident, now)
        self._last[ident] = now
        return used

    def _charge(self, frame: Any, cpu_s: float) -> None:
        if cpu_s <= 0:
            return
        self.cpu_s += cpu_s
        self.own[_where(frame)] += cpu_s
        seen = set()
        while frame is not None:
            where = _where(frame)
            if where not in seen:
                seen.add(where)
                self.total[where] += cpu_s
            frame = frame.f_back

    def report(self) -> None:
        print(f"{self.cpu_s:.1f} CPU seconds sampled (every {SAMPLE_INTERVAL_S * 1000:g} ms, all threads)",
              file=sys.stderr)
        for title, counter in (("self", self.own), ("total (on the stack)", self.total)):
            print(f"-- {title}", file=sys.stderr)
            for where, cpu_s in sorted(counter.items(), key=lambda item: -item[1])[:SAMPLE_TOP]:
                print(f"{cpu_s:8.2f} s {100 * cpu_s / max(self.cpu_s, 1e-9):5.1f}%  {where}", file=sys.stderr)


def _where(frame: Any) -> str:
    code = frame.f_code
    path = code.co_filename
    short = path.split("/fakekube/", 1)[-1] if "/fakekube/" in path else os.path.basename(path)
    return f"{short}:{code.co_name}"


def serve(sample: bool) -> None:
    """Child-process mode: print the URL as one JSON line, serve until stdin closes."""
    from fakekube import Cluster
    cluster = Cluster().start()
    cluster.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bench", "namespace": "default"},
                    "data": {"key": "value"}})
    sampler = _Sampler() if sample else None
    if sampler is not None:
        sampler.start()
    print(json.dumps({"url": cluster.url}), flush=True)
    sys.stdin.read()
    if sampler is not None:
        sampler.stopping.set()
        sampler.join()
        sampler.report()
    cluster.stop()


class ServerProcess:
    def __init__(self, sample: bool, startup_timeout_s: float = SERVE_STARTUP_TIMEOUT_S) -> None:
        args = [sys.executable, os.path.abspath(__file__), "--serve"] + (["--sample"] if sample else [])
        self._process = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self._process.stdout is not None
        ready, _, _ = select.select([self._process.stdout], [], [], startup_timeout_s)
        line = self._process.stdout.readline() if ready else ""
        if not line:
            self.stop()
            raise RuntimeError(f"the server process did not start within {startup_timeout_s:g} s")
        url = json.loads(line)["url"]
        self.port = int(url.rsplit(":", 1)[1])

    def cpu_s(self) -> float:
        return process_cpu_s(self._process.pid)

    def stop(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(timeout=5)


# ------------------------------------------------------------------------ the client

def crd(index: int, group: str, kind: str | None = None, columns: int = 0) -> Obj:
    """A small CRD: one version, a three-field schema, the status subresource."""
    kind = kind or f"Widget{index}"
    plural = kind.lower() + "s"
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "size": {"type": "integer"}, "color": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}}},
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}}}
    version: Obj = {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema},
                    "subresources": {"status": {}}}
    if columns:
        version["additionalPrinterColumns"] = [{"name": f"Size{i}", "type": "integer", "jsonPath": ".spec.size"}
                                               for i in range(columns)]
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": "Namespaced", "versions": [version],
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind}}}


def group_of(index: int, layout: str, groups: int) -> str:
    return f"g{index}.bench.example.com" if layout == "distinct" else f"shared{index % groups}.bench.example.com"


class Client:
    def __init__(self, port: int) -> None:
        self.conn = http.client.HTTPConnection(HOST, port, timeout=SOCKET_TIMEOUT_S)

    def call(self, method: str, path: str, body: Obj | None = None, accept: str = "application/json",
             expect: tuple[int, ...] = (200, 201)) -> tuple[bytes, float]:
        """The answer's bytes and the wall seconds it took."""
        data = json.dumps(body).encode() if body is not None else None
        started = time.perf_counter()
        self.conn.request(method, path, body=data, headers={**JSON, "Accept": accept})
        response = self.conn.getresponse()
        payload = response.read()
        elapsed = time.perf_counter() - started
        if response.status not in expect:
            raise RuntimeError(f"{method} {path}: {response.status} {payload[:300]!r}")
        return payload, elapsed

    def close(self) -> None:
        self.conn.close()


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"


def create_all(client: Client, server: ServerProcess, count: int, step: int, layout: str, groups: int) -> None:
    print(f"creating {count} CRDs ({layout} groups)")
    print("    CRDs   wall s   server CPU s   ms per create (median, max)")
    for start in range(0, count, step):
        cpu_before = server.cpu_s()
        began = time.perf_counter()
        times = [client.call("POST", CRDS_PATH, crd(i, group_of(i, layout, groups)))[1]
                 for i in range(start, min(start + step, count))]
        wall = time.perf_counter() - began
        print(f"{start + 1:>5}-{start + len(times):<5} {wall:7.2f}  {server.cpu_s() - cpu_before:13.2f}"
              f"   {statistics.median(times) * 1000:6.1f}, {max(times) * 1000:6.1f}")


def read_documents(client: Client, group: str, label: str) -> None:
    """Every document that lists all types, timed, after a change to ``group``."""
    gv = f"apis/{group}/v1"
    reads: list[tuple[str, str, str]] = [
        ("GET /openapi/v2 (JSON)", "/openapi/v2", "application/json"),
        ("GET /openapi/v2 (JSON, again)", "/openapi/v2", "application/json"),
        ("GET /openapi/v2 (protobuf)", "/openapi/v2", PROTOBUF),
        ("GET /openapi/v3", "/openapi/v3", "application/json"),
        (f"GET /openapi/v3/{gv}", f"/openapi/v3/{gv}", "application/json"),
        ("GET /apis (aggregated)", "/apis", AGGREGATED),
        ("GET /apis (legacy)", "/apis", "application/json"),
        (f"GET /{gv}", f"/{gv}", "application/json"),
    ]
    print(f"after {label}:")
    for title, path, accept in reads:
        payload, elapsed = client.call("GET", path, accept=accept)
        print(f"  {title:<52} {_ms(elapsed)}  {len(payload) / 1e6:8.2f} MB")


def concurrent_get(server: ServerProcess, client: Client, group: str, count: int) -> None:
    """ConfigMap GETs on a second connection while /openapi/v2 is rebuilt after a change."""
    client.call("POST", CRDS_PATH, crd(count + 2, group, kind="Concurrent"))
    other = Client(server.port)
    done = threading.Event()
    slow: list[float] = []

    def rebuild() -> None:
        slow.append(client.call("GET", "/openapi/v2")[1])
        done.set()

    thread = threading.Thread(target=rebuild)
    thread.start()
    latencies = []
    while not done.is_set():
        latencies.append(other.call("GET", CONFIGMAP_PATH)[1])
    thread.join()
    other.close()
    print(f"ConfigMap GETs while /openapi/v2 was rebuilt ({_ms(slow[0]).strip()}): {len(latencies)} answered,"
          f" median {_ms(statistics.median(latencies)).strip()}, max {_ms(max(latencies)).strip()}")


def run(layout: str, args: argparse.Namespace) -> None:
    start = measure.Load.now()
    server = ServerProcess(args.sample, args.start_timeout_s)
    client = Client(server.port)
    try:
        create_all(client, server, args.crds, args.step, layout, args.groups)
        if args.only_creates:
            return
        _, first = client.call("GET", "/openapi/v2")
        print(f"first GET /openapi/v2 (JSON) after the creates: {_ms(first)}")
        group = group_of(args.crds, layout, args.groups)
        changes: list[tuple[str, Callable[[], float]]] = [
            ("one more CRD created", lambda: client.call("POST", CRDS_PATH, crd(args.crds, group))[1]),
            ("that CRD updated (a printer column)", lambda: client.call(
                "PUT", f"{CRDS_PATH}/widget{args.crds}s.{group}", _with_version(client, args.crds, group))[1]),
            ("that CRD deleted", lambda: client.call("DELETE", f"{CRDS_PATH}/widget{args.crds}s.{group}")[1]),
        ]
        for label, change in changes:
            print(f"{label}: {_ms(change()).strip()}")
            read_documents(client, group if "deleted" not in label else group_of(0, layout, args.groups), label)
        concurrent_get(server, client, group, args.crds)
    finally:
        client.close()
        server.stop()
        print(measure.load_line(start, measure.Load.now()))


def _with_version(client: Client, index: int, group: str) -> Obj:
    current = json.loads(client.call("GET", f"{CRDS_PATH}/widget{index}s.{group}")[0])
    updated = crd(index, group, columns=1)
    updated["metadata"] = current["metadata"]
    return updated


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--crds", type=int, default=1000)
    parser.add_argument("--step", type=int, default=250, help="print create times per this many CRDs")
    parser.add_argument("--layout", choices=("distinct", "shared", "both"), default="both")
    parser.add_argument("--groups", type=int, default=4, help="shared groups in the shared layout")
    parser.add_argument("--sample", action="store_true", help="the server samples its stacks (stderr)")
    parser.add_argument("--only-creates", action="store_true", help="stop after the creates (to profile them)")
    parser.add_argument("--start-timeout-s", type=float, default=SERVE_STARTUP_TIMEOUT_S,
                        help=f"wall seconds the server child may take to come up (default {SERVE_STARTUP_TIMEOUT_S:g})")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.sample)
        return
    print(f"load before: {' / '.join(f'{v:.2f}' for v in os.getloadavg())} (1/5/15-min load average)")
    for layout in ("distinct", "shared") if args.layout == "both" else (args.layout,):
        run(layout, args)
    print(f"load after: {' / '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
