"""Where does the apiserver spend a request? cProfile of the server-side path.

``python benchmarks/profile_apiserver.py TARGET`` where TARGET is ``create``, ``list``,
``get``, ``hello-get`` or ``hello-post`` (an HTTP request), ``api-create`` or
``api-list`` (the in-process Python API), or ``cold-start``.

HTTP targets serve the prepared cluster — or the bare werkzeug app — through the same
werkzeug server class and settings as :class:`~fakekube.api.http.server.BackgroundServer`,
with a request handler that runs each connection under its own ``cProfile.Profile``.
One client in this process sends the requests, so the profile holds everything the
server threads do for them: HTTP parsing, the WSGI app, JSON, the store, writing the
response. ``--direct`` calls the WSGI app on prebuilt environs instead: the app's own
cost, with no socket and no HTTP server.

By default the profiles count each thread's CPU time, not wall time, so time a thread
spends blocked (waiting in ``recv`` or ``epoll`` for the client) is not charged to
anything; ``--timer wall`` counts it. cProfile adds a cost per Python call, so
call-heavy code looks worse than it is; use the ranking, not the absolute times.
The benchmark itself is ``bench_apiserver.py``.
"""

from __future__ import annotations

import argparse
import cProfile
import http.client
import pstats
import sys
import threading
import time
from typing import Callable, Iterable

import workload
from fakekube import Cluster
from fakekube.api.http import RestApp
from fakekube.api.http.server import BackgroundServer

HOST = "127.0.0.1"
SOCKET_TIMEOUT_S = 30.0


WSGIApp = Callable[..., Iterable[bytes]]

#: What the profiles measure: "cpu" (this thread's CPU time: blocking in recv, poll or a
#: lock costs nothing, so the ranking shows where CPU goes) or "wall" (cProfile's default).
TIMERS: dict[str, Callable[[], float]] = {"cpu": time.thread_time, "wall": time.perf_counter}
_timer: list[Callable[[], float]] = [time.thread_time]


def new_profile() -> cProfile.Profile:
    return cProfile.Profile(_timer[0])


class _ProfiledApp:
    """Profiles every request the app serves (the app's work on the server's connection
    thread: the transport's own parsing and socket writes are not in it)."""

    profiles: list[cProfile.Profile] = []
    lock = threading.Lock()

    def __init__(self, app: WSGIApp) -> None:
        self.app = app

    def __call__(self, environ: dict, start_response: Callable) -> list[bytes]:
        profile = new_profile()
        profile.enable()
        try:
            return list(self.app(environ, start_response))
        finally:
            profile.disable()
            with self.lock:
                self.profiles.append(profile)


def profile_http(app: WSGIApp, method: str, path: str, count: int, body: Callable[[int], bytes] | None,
                 expect: int) -> pstats.Stats:
    _ProfiledApp.profiles.clear()
    server = BackgroundServer(_ProfiledApp(app), HOST, 0)
    server.start()
    port = int(server.url.rsplit(":", 1)[1])
    conn = http.client.HTTPConnection(HOST, port, timeout=SOCKET_TIMEOUT_S)
    try:
        for index in range(count):
            conn.request(method, path, body=body(index) if body else None, headers=workload.JSON_HEADERS)
            response = conn.getresponse()
            response.read()
            if response.status != expect:
                raise RuntimeError(f"{method} {path} answered {response.status}")
    finally:
        conn.close()
        server.stop()
    return pstats.Stats(*_ProfiledApp.profiles, stream=sys.stdout)


def profile_python_api(cluster: Cluster, operation: str, count: int) -> pstats.Stats:
    profile = new_profile()
    if operation == "api-create":
        objects = [workload.configmap(f"api-{i}") for i in range(count)]
        profile.enable()
        for obj in objects:
            cluster.create(obj)
        profile.disable()
    else:
        profile.enable()
        for _ in range(count):
            cluster.list("v1", "Pod", workload.PODS_NAMESPACE)
        profile.disable()
    return pstats.Stats(profile, stream=sys.stdout)


def profile_cold_start(nodes: int) -> pstats.Stats:
    """``Cluster()`` + ``start()`` + the first GET, first thing in this process (fakekube
    is imported, nothing else has run). Set PYTHONPYCACHEPREFIX and unset
    PYTHONDONTWRITEBYTECODE, and run twice, to profile with cached bytecode."""
    profile = new_profile()
    profile.enable()
    cluster = Cluster(nodes=nodes).start()
    conn = http.client.HTTPConnection(HOST, int(cluster.url.rsplit(":", 1)[1]), timeout=SOCKET_TIMEOUT_S)
    conn.request("GET", "/api/v1/namespaces", headers=workload.JSON_HEADERS)
    conn.getresponse().read()
    profile.disable()
    conn.close()
    cluster.stop()
    return pstats.Stats(profile, stream=sys.stdout)


def profile_direct(app: WSGIApp, method: str, path: str, count: int, body: Callable[[int], bytes] | None,
                   expect: int) -> pstats.Stats:
    """The WSGI app alone, called on prebuilt environs: no socket, no HTTP server."""
    environs = [workload.environ(method, path, body(i) if body else None) for i in range(count)]
    profile = new_profile()
    profile.enable()
    for env in environs:
        status = workload.call_wsgi(app, env)
        if not status.startswith(str(expect)):
            raise RuntimeError(f"{method} {path} answered {status}")
    profile.disable()
    return pstats.Stats(profile, stream=sys.stdout)


#: target -> (app: "fakekube" or "hello", method, path, expected status, sends a unique configmap body)
HTTP_TARGETS: dict[str, tuple[str, str, str, int, bool]] = {
    "create": ("fakekube", "POST", workload.CONFIGMAPS_PATH, 201, True),
    "list": ("fakekube", "GET", workload.LIST_PATH, 200, False),
    "get": ("fakekube", "GET", workload.GET_PATH, 200, False),
    "hello-get": ("hello", "GET", "/hello", 200, False),
    "hello-post": ("hello", "POST", workload.CONFIGMAPS_PATH, 201, True),
}


def main() -> None:
    parser = argparse.ArgumentParser(description="cProfile the apiserver's create, list and get paths")
    parser.add_argument("target", choices=[*HTTP_TARGETS, "api-create", "api-list", "cold-start"])
    parser.add_argument("--count", type=int, default=0, help="requests to profile (default depends on target)")
    parser.add_argument("--top", type=int, default=25, help="rows per table")
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--timer", choices=sorted(TIMERS), default="cpu",
                        help="cpu: per-thread CPU time (default); wall: includes time blocked on the socket")
    parser.add_argument("--direct", action="store_true",
                        help="call the WSGI app directly (no socket, no HTTP server): the app's own cost")
    args = parser.parse_args()
    _timer[0] = TIMERS[args.timer]
    if args.target == "cold-start":
        _print(profile_cold_start(3), "cold start: Cluster(nodes=3) + start() + first GET", args.top)
        return

    cluster = Cluster(nodes=3)
    workload.prepare(cluster, args.pods)
    count = args.count or (50 if args.target in ("list", "api-list") else 2000)
    if args.target not in HTTP_TARGETS:
        _print(profile_python_api(cluster, args.target, count), f"{args.target}: {count} calls", args.top)
        return
    which, method, path, expect, sends_body = HTTP_TARGETS[args.target]
    app = RestApp(cluster.api) if which == "fakekube" else workload.hello_app  # RestApp: what Cluster.start() serves
    body = (lambda i: workload.configmap_body(f"profiled-{i}")) if sends_body else None
    profile = profile_direct if args.direct else profile_http
    where = "the WSGI app alone (direct calls)" if args.direct else "server side, the app on our HTTP server"
    _print(profile(app, method, path, count, body, expect), f"{args.target}: {count} requests, {where}", args.top)


def _print(stats: pstats.Stats, title: str, top: int) -> None:
    print(title)
    _print_by_file(stats, top)
    stats.strip_dirs()
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)


def _print_by_file(stats: pstats.Stats, top: int) -> None:
    """Own time summed per source file (C built-ins by name), and per layer: where the
    time goes, at a glance."""
    per_file: dict[str, float] = {}
    for (filename, _, function), (_, _, own_s, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        where = function if filename == "~" else _short_path(filename)
        per_file[where] = per_file.get(where, 0.0) + own_s
    total_s = sum(per_file.values()) or 1.0
    per_layer: dict[str, float] = {}
    for where, own_s in per_file.items():
        per_layer[_layer(where)] = per_layer.get(_layer(where), 0.0) + own_s
    print(f"\nOwn time per layer (of {total_s:.3f} s profiled)")
    for layer, own_s in sorted(per_layer.items(), key=lambda item: -item[1]):
        print(f"  {100 * own_s / total_s:5.1f}%  {layer}")
    print("Own time per file")
    for where, own_s in sorted(per_file.items(), key=lambda item: -item[1])[:top]:
        print(f"  {100 * own_s / total_s:5.1f}%  {own_s:7.3f} s  {where}")
    print()


def _layer(where: str) -> str:
    if where.startswith("fakekube/"):
        return "fakekube"
    if where.startswith("werkzeug/"):
        return "werkzeug"
    if where.startswith("{") or where.startswith("<"):
        return "C built-ins (socket/epoll syscalls, json C code, ...)"
    if where.startswith("stdlib/"):
        return "Python stdlib (http.server, email header parsing, json, selectors, ...)"
    return "other (the benchmark's own code: hello app, client)"


def _short_path(filename: str) -> str:
    if "site-packages/" in filename:
        return filename.split("site-packages/", 1)[1]
    if "/fakekube/" in filename:
        return "fakekube/" + filename.rsplit("/fakekube/", 1)[1]
    if "/lib/python3" in filename:
        return "stdlib/" + filename.split("/lib/python3", 1)[1].split("/", 1)[1]
    return filename


if __name__ == "__main__":
    main()
