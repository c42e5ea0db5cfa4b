"""Cold start: how long a fresh interpreter takes to get a cluster answering.

Run as a script (``python benchmarks/coldstart.py [--runs N] [--timeout-s S]``) it prints,
each as the median (min–max) of N fresh processes run in the same rounds (every scenario
once per round, so a busy host slows them alike), wall beside the child's CPU, and the
load at start and end: the import of werkzeug (the stack's floor) and of fakekube,
``fakekube serve`` from process start to its banner and to the first ``GET /version``
answered (also with a fixed start time: the boot cache off, and warm), the same for
werkzeug's hello app served by ``werkzeug.serving``, and ``Cluster()`` → first answer inside one process; ratios beside them; then the slowest
imports from ``python -X importtime``. Nothing is asserted.

``measure_cold_start`` (used by ``bench_apiserver.py``) times the phases of one
in-process cluster instead: ``Cluster()``, ``start()`` and the first
``GET /api/v1/namespaces``; then the same for a second cluster in that process (warm
start), ``reset()`` and ``stop()``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Callable

import measure

#: One fresh interpreter must be done within this long by default (``--timeout-s``): a
#: bound against a hung child, generous because a loaded host is slow, not broken.
CHILD_TIMEOUT_S = 300.0

#: A first GET from inside a child (``first_get(port, path)``): the in-process figures.
_CHILD_GET = r"""
import http.client, sys, threading, time
from urllib.parse import urlparse

def first_get(port, path="/version"):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", path, headers={"Accept": "application/json"})
    response = conn.getresponse()
    response.read()
    conn.close()
    if response.status != 200:
        raise SystemExit(f"first GET answered {response.status}")
"""

#: Runs in a fresh interpreter: ``python -c COLD_START_CODE <nodes>``; prints one JSON line.
COLD_START_CODE = _CHILD_GET + r"""
import json

def boot(nodes):
    c0 = time.process_time()
    t0 = time.perf_counter()
    cluster = Cluster(nodes=nodes)
    t1 = time.perf_counter()
    cluster.start()
    t2 = time.perf_counter()
    first_get(urlparse(cluster.url).port, "/api/v1/namespaces")
    t3 = time.perf_counter()
    return cluster, {"construct_s": t1 - t0, "start_s": t2 - t1, "first_get_s": t3 - t2, "total_s": t3 - t0,
                     "total_cpu_s": time.process_time() - c0}

nodes = int(sys.argv[1])
t_import, c_import = time.perf_counter(), time.process_time()
from fakekube import Cluster
import_s, import_cpu_s = time.perf_counter() - t_import, time.process_time() - c_import
cold_cluster, cold = boot(nodes)
warm_cluster, warm = boot(nodes)
t0 = time.perf_counter()
warm_cluster.reset()
reset_s = time.perf_counter() - t0
t0 = time.perf_counter()
warm_cluster.stop()
stop_s = time.perf_counter() - t0
cold_cluster.stop()
print(json.dumps({"import_s": import_s, "import_cpu_s": import_cpu_s, "cold": cold, "warm": warm, "reset_s": reset_s, "stop_s": stop_s}))
"""


@dataclass
class ColdStart:
    """Per-run samples (seconds) of each cold-start phase: wall clock, and where the script
    measures it the CPU the process used for it (steadier than wall time on a busy host)."""

    samples: dict[str, list[float]] = field(default_factory=dict)
    cpu_samples: dict[str, list[float]] = field(default_factory=dict)

    def add(self, name: str, value: float, cpu_s: float | None = None) -> None:
        self.samples.setdefault(name, []).append(value)
        if cpu_s is not None:
            self.cpu_samples.setdefault(name, []).append(cpu_s)


def measure_cold_start(runs: int, nodes: int, bytecode_cache: bool, timeout_s: float = CHILD_TIMEOUT_S) -> ColdStart:
    """``runs`` fresh interpreters, each done within ``timeout_s``; with ``bytecode_cache``
    a first, discarded run fills a private cache (PYTHONPYCACHEPREFIX in a temp dir, so
    the repo gets no __pycache__)."""
    cache_dir = tempfile.mkdtemp(prefix="fakekube-bench-pycache-")
    env = child_env(cache_dir, cached=bytecode_cache)
    result = ColdStart()
    try:
        for run in range(runs + (1 if bytecode_cache else 0)):
            done = subprocess.run([sys.executable, "-c", COLD_START_CODE, str(nodes)], env=env, cwd=cache_dir,
                                  capture_output=True, text=True, timeout=timeout_s, check=False)
            if done.returncode != 0:
                raise RuntimeError(f"cold-start child failed:\n{done.stderr}")
            if bytecode_cache and run == 0:
                continue
            sample = json.loads(done.stdout.strip().splitlines()[-1])
            result.add("import", sample["import_s"], sample["import_cpu_s"])
            for phase in ("construct", "start", "first_get", "total"):
                for kind in ("cold", "warm"):
                    result.add(f"{kind}_{phase}", sample[kind][f"{phase}_s"], sample[kind].get(f"{phase}_cpu_s"))
            result.add("reset", sample["reset_s"])
            result.add("stop", sample["stop_s"])
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    return result


# -- the script: fresh processes side by side with werkzeug ---------------------------------

#: Runs in a fresh interpreter: ``python -c IMPORT_CODE "import module"``; prints seconds.
IMPORT_CODE = r"""
import sys, time
t0, c0 = time.perf_counter(), time.process_time()
exec(sys.argv[1])
print(time.perf_counter() - t0, time.process_time() - c0)
"""

#: ``Cluster()`` → ``start()`` → first answer, timed after the import; prints seconds.
CLUSTER_CODE = _CHILD_GET + r"""
from fakekube import Cluster
t0, c0 = time.perf_counter(), time.process_time()
cluster = Cluster(system_pods=sys.argv[1] == "system-pods").start()
first_get(urlparse(cluster.url).port)
print(time.perf_counter() - t0, time.process_time() - c0)
cluster.stop()
"""

#: werkzeug's hello app on werkzeug's own threaded server, timed after the import.
HELLO_CODE = _CHILD_GET + r"""
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

@Request.application
def hello(request):
    return Response("hello")

t0, c0 = time.perf_counter(), time.process_time()
server = make_server("127.0.0.1", 0, hello, threaded=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
first_get(server.server_port)
print(time.perf_counter() - t0, time.process_time() - c0)
server.shutdown()
"""

#: The same app as a server process (``python -c HELLO_SERVE_CODE PORT``): the reference for ``fakekube serve``.
HELLO_SERVE_CODE = r"""
import sys
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

@Request.application
def hello(request):
    return Response("hello")

server = make_server("127.0.0.1", int(sys.argv[1]), hello, threaded=True)
print("serving", flush=True)
server.serve_forever()
"""

#: Where children run: ``python -c`` puts its working directory first on ``sys.path``, so
#: run from the repo it would import the checkout's package over --compare's tree.
CHILD_CWD = tempfile.gettempdir()

#: How often the parent retries connecting to a server that is still starting.
CONNECT_RETRY_S = 0.001


def free_port() -> int:
    """A port nobody listens on right now (the OS picks it; a race with another process is unlikely)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def child_env(pycache: str, cached: bool = True) -> dict[str, str]:
    """The children's environment: bytecode cached under ``pycache`` (as after a
    ``pip install``, without writing into the repo), or, not ``cached``, never written
    there (``pycache`` then stays empty, so a ``__pycache__`` in the tree is not read either)."""
    env = dict(os.environ)
    env["PYTHONPYCACHEPREFIX"] = pycache
    env["FAKEKUBE_CACHE_DIR"] = str(Path(pycache).parent / "fakekube-cache")  # the boot cache: this run's own
    env["FAKEKUBE_BOOT_CACHE"] = "1"
    if cached:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def child_seconds(args: list[str], env: dict[str, str], timeout_s: float) -> tuple[float, float]:
    """Run ``python -c ...`` to completion (within ``timeout_s``); its last output line is
    the wall and CPU seconds it measured."""
    done = subprocess.run([sys.executable, "-c", *args], capture_output=True, text=True, env=env, cwd=CHILD_CWD,
                          timeout=timeout_s, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"child {args[1:]} failed:\n{done.stderr}")
    wall_s, cpu_s = done.stdout.strip().splitlines()[-1].split()
    return float(wall_s), float(cpu_s)


def _answers_version(port: int) -> bool:
    """One GET /version; False while nothing listens yet."""
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/version")
        response = conn.getresponse()
        response.read()
        conn.close()
    except ConnectionRefusedError:
        return False
    return response.status == 200


def _first_line_time(stream: IO[str], marker: str, times: dict[str, float]) -> None:
    """Note when the first line containing ``marker`` arrives (the banner), then drain."""
    for line in stream:
        if marker in line and "banner" not in times:
            times["banner"] = time.perf_counter()


def served_seconds(argv: list[str], port: int, marker: str, env: dict[str, str],
                   timeout_s: float) -> tuple[float, float, float]:
    """Process start → banner line and → first answered ``GET /version`` (seconds), and
    the CPU seconds the process had used by then; a process that has not answered within
    ``timeout_s`` fails the run."""
    times: dict[str, float] = {}
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
                               cwd=CHILD_CWD)
    assert process.stdout is not None
    reader = threading.Thread(target=_first_line_time, args=(process.stdout, marker, times), daemon=True)
    reader.start()
    try:
        while not _answers_version(port):
            if process.poll() is not None:
                raise RuntimeError(f"{argv} exited with {process.returncode} before answering")
            if time.perf_counter() - started > timeout_s:
                raise RuntimeError(f"{argv} did not answer within {timeout_s} s (--timeout-s)")
            time.sleep(CONNECT_RETRY_S)
        answered = time.perf_counter()
        cpu_s = measure.process_cpu_s(process.pid)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        reader.join(timeout=timeout_s)
    return times.get("banner", float("nan")) - started, answered - started, cpu_s


def fakekube_command() -> list[str]:
    """The ``fakekube`` console script beside this interpreter (as installed), else its entry point."""
    script = Path(sys.executable).with_name("fakekube")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from fakekube.cli.main import main; sys.exit(main())"]


Step = Callable[[ColdStart], None]

#: What the import figures import, each in a fresh interpreter.
IMPORTS = ("import werkzeug", "import werkzeug.serving, werkzeug.wrappers", "import fakekube",
           "from fakekube import Cluster", "import fakekube.cli.main")


def _serve_fakekube(name: str, extra: list[str], kubeconfig: str, env: dict[str, str], timeout_s: float) -> Step:
    def run(result: ColdStart) -> None:
        port = free_port()
        argv = [*fakekube_command(), "serve", "--port", str(port), "--kubeconfig", kubeconfig, *extra]
        banner_s, answer_s, cpu_s = served_seconds(argv, port, "fakekube: serving", env, timeout_s)
        result.add(f"{name}: banner", banner_s)
        result.add(f"{name}: first answer", answer_s, cpu_s)
    return run


def _serve_hello(env: dict[str, str], timeout_s: float) -> Step:
    def run(result: ColdStart) -> None:
        port = free_port()
        banner_s, answer_s, cpu_s = served_seconds([sys.executable, "-c", HELLO_SERVE_CODE, str(port)], port,
                                                   "serving", env, timeout_s)
        result.add("werkzeug hello server: banner", banner_s)
        result.add("werkzeug hello server: first answer", answer_s, cpu_s)
    return run


def _child(name: str, args: list[str], env: dict[str, str], timeout_s: float) -> Step:
    return lambda result: result.add(name, *child_seconds(args, env, timeout_s))


#: Marks the figures of the tree given with ``--compare`` (an older commit, say).
COMPARED = " (compared tree)"


def compared_scenarios(kubeconfig: str, env: dict[str, str], timeout_s: float) -> list[Step]:
    """The fakekube figures again with ``env`` importing another copy of the package."""
    return [
        _child("from fakekube import Cluster" + COMPARED, [IMPORT_CODE, "from fakekube import Cluster"], env,
               timeout_s),
        _child("in-process: Cluster(system_pods=True) → first answer" + COMPARED, [CLUSTER_CODE, "system-pods"], env,
               timeout_s),
        _serve_fakekube("fakekube serve" + COMPARED, [], kubeconfig, env, timeout_s),
        _serve_fakekube("fakekube serve --start-time T, boot cache warm" + COMPARED, FIXED_START, kubeconfig, env,
                        timeout_s),
    ]


def scenarios(kubeconfig: str, env: dict[str, str], uncached: dict[str, str], timeout_s: float) -> list[Step]:
    """Every measurement of one round, in the order they run (``uncached``: no bytecode
    cache); each child must be done, or a server answer, within ``timeout_s``."""
    return [
        *(_child(statement, [IMPORT_CODE, statement], env, timeout_s) for statement in IMPORTS),
        _child("from fakekube import Cluster (no bytecode cache)", [IMPORT_CODE, "from fakekube import Cluster"],
               uncached, timeout_s),
        _child("in-process: werkzeug hello server → first answer", [HELLO_CODE], env, timeout_s),
        _child("in-process: Cluster() → first answer", [CLUSTER_CODE, "default"], env, timeout_s),
        _child("in-process: Cluster(system_pods=True) → first answer", [CLUSTER_CODE, "system-pods"], env, timeout_s),
        _serve_hello(env, timeout_s),
        _serve_fakekube("fakekube serve", [], kubeconfig, env, timeout_s),
        _serve_fakekube("fakekube serve --no-system-pods", ["--no-system-pods"], kubeconfig, env, timeout_s),
        # The boot cache (cluster/bootcache.py) keeps a boot whose start time is fixed: the same
        # serve without it (cold) and with it (warm: the warm-up round wrote it).
        _serve_fakekube("fakekube serve --start-time T, boot cache off", [*FIXED_START, "--no-boot-cache"],
                        kubeconfig, env, timeout_s),
        _serve_fakekube("fakekube serve --start-time T, boot cache warm", FIXED_START, kubeconfig, env, timeout_s),
    ]


#: A fixed start time (the boot cache keeps only such boots), in manual time.
FIXED_START = ["--start-time", "2025-01-01T00:00:00Z", "--time-scale", "0"]


def median(values: list[float]) -> float:
    return statistics.median(values)


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]


#: Each figure's reference, for the ratio column.
REFERENCES = {
    "import fakekube": "import werkzeug",
    "import fakekube.cli.main": "import werkzeug",
    "in-process: Cluster() → first answer": "in-process: werkzeug hello server → first answer",
    "in-process: Cluster(system_pods=True) → first answer": "in-process: werkzeug hello server → first answer",
    "from fakekube import Cluster": "import werkzeug",
    "from fakekube import Cluster (no bytecode cache)": "import werkzeug",
    "fakekube serve: banner": "werkzeug hello server: banner",
    "fakekube serve: first answer": "werkzeug hello server: first answer",
    "fakekube serve --no-system-pods: banner": "werkzeug hello server: banner",
    "fakekube serve --no-system-pods: first answer": "werkzeug hello server: first answer",
    "fakekube serve --start-time T, boot cache off: banner": "werkzeug hello server: banner",
    "fakekube serve --start-time T, boot cache off: first answer": "werkzeug hello server: first answer",
    "fakekube serve --start-time T, boot cache warm: banner": "werkzeug hello server: banner",
    "fakekube serve --start-time T, boot cache warm: first answer": "werkzeug hello server: first answer",
}


def print_table(result: ColdStart, runs: int, start: measure.Load) -> None:
    """Wall and CPU (the child's own, where it measures it) as median (min–max) of the
    interleaved runs, and each figure's per-round ratio to its reference."""
    print(f"\nCold start: {runs} fresh processes per figure, interleaved round by round (ms); ratios are "
          "per round against the reference named in the last column")
    print(measure.machine_line(start, measure.Load.now(), runs, 0.0))
    width = max(len(name) for name in result.samples)
    print(f"{'':{width}}  {'wall ms':>22}  {'CPU ms':>22}  {'wall x ref':>18}  {'CPU x ref':>18}  reference")
    for name, values in result.samples.items():
        reference = REFERENCES.get(name.replace(COMPARED, ""))
        cpu = result.cpu_samples.get(name, [])
        cells = [measure.format_spread(measure.spread(values), 1e3), measure.format_spread(measure.spread(cpu), 1e3)]
        for ours, theirs in ((values, result.samples.get(reference or "")),
                             (cpu, result.cpu_samples.get(reference or ""))):
            figure = measure.ratios(ours, theirs or [])
            cells.append(measure.format_spread(figure, digits=2) if theirs else "")
        print(f"{name:{width}}  {cells[0]:>22}  {cells[1]:>22}  {cells[2]:>18}  {cells[3]:>18}  {reference or ''}")


def importtime_rows(module: str, env: dict[str, str]) -> list[tuple[int, int, str]]:
    """``python -X importtime -c "import module"``: (self µs, cumulative µs, name) per module."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"], capture_output=True,
                          text=True, env=env, cwd=CHILD_CWD, timeout=CHILD_TIMEOUT_S, check=True)
    rows = []
    for line in done.stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) == 3 and parts[0].strip().isdigit():
            rows.append((int(parts[0]), int(parts[1]), parts[2].strip()))
    return rows


def median_importtime(module: str, env: dict[str, str], runs: int) -> list[tuple[float, float, str]]:
    """(self µs, cumulative µs, name) per module, each the median over ``runs`` interpreters
    (one run on a busy host puts a scheduler stall on whichever module was loading)."""
    samples: dict[str, list[tuple[int, int]]] = {}
    for _ in range(runs):
        for self_us, cumulative_us, name in importtime_rows(module, env):
            samples.setdefault(name, []).append((self_us, cumulative_us))
    return [(median([float(s) for s, _ in values]), median([float(c) for _, c in values]), name)
            for name, values in samples.items()]


def print_importtime(module: str, top: int, env: dict[str, str], runs: int) -> None:
    rows = median_importtime(module, env, runs)
    total_ms = sum(self_us for self_us, _, _ in rows) / 1e3
    print(f"\npython -X importtime -c 'import {module}', medians of {runs} runs: {len(rows)} modules, "
          f"{total_ms:.1f} ms in all (importtime's own overhead included)")
    print(f"\ntop {top} cumulative (ms): a package with everything it imports")
    for _, cumulative_us, name in sorted(rows, key=lambda row: -row[1])[:top]:
        print(f"  {cumulative_us / 1e3:8.1f}  {name}")
    print(f"\ntop {top} self (ms): the module's own code")
    for self_us, _, name in sorted(rows, key=lambda row: -row[0])[:top]:
        print(f"  {self_us / 1e3:8.1f}  {name}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=15, help="fresh processes per figure (default 15)")
    parser.add_argument("--top", type=int, default=15, help="modules listed from -X importtime (default 15)")
    parser.add_argument("--timeout-s", type=float, default=CHILD_TIMEOUT_S,
                        help=f"wall seconds a child may take to finish or answer (default {CHILD_TIMEOUT_S:g})")
    parser.add_argument("--compare", metavar="DIR", default=None,
                        help="also time the fakekube package found in DIR (e.g. `git archive <commit> fakekube | "
                             "tar -x -C DIR`), in the same rounds")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="fakekube-coldstart-") as tmp:
        env = child_env(str(Path(tmp) / "pycache"))
        start = measure.Load.now()
        steps = scenarios(str(Path(tmp) / "kubeconfig"), env, child_env(str(Path(tmp) / "empty"), cached=False),
                          args.timeout_s)
        if args.compare:
            compare_env = {**env, "PYTHONPATH": str(Path(args.compare).resolve())}
            steps += compared_scenarios(str(Path(tmp) / "kubeconfig"), compare_env, args.timeout_s)
        warm_up = ColdStart()
        for step in steps:  # writes the bytecode caches, as after a pip install, and is discarded
            step(warm_up)
        result = ColdStart()
        for _ in range(args.runs):
            for step in steps:
                step(result)
        print_table(result, args.runs, start)
        print_importtime("fakekube.cluster", args.top, env, args.runs)  # what `from fakekube import Cluster` loads
    return 0


if __name__ == "__main__":
    sys.exit(main())
