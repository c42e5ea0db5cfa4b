"""Cold start: how long a fresh interpreter takes to get a cluster answering.

Each run is a new ``python -c`` process that imports fakekube, then times ``Cluster()``,
``start()`` and the first ``GET /api/v1/namespaces``; then the same for a second cluster
in that process (warm start), ``reset()`` and ``stop()``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

#: One fresh interpreter must be done within this long.
CHILD_TIMEOUT_S = 120.0

#: Runs in a fresh interpreter: ``python -c COLD_START_CODE <nodes>``; prints one JSON line.
COLD_START_CODE = r"""
import http.client, json, sys, time
from urllib.parse import urlparse

def first_get(url):
    parsed = urlparse(url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=10)
    conn.request("GET", "/api/v1/namespaces", headers={"Accept": "application/json"})
    response = conn.getresponse()
    response.read()
    conn.close()
    if response.status != 200:
        raise SystemExit(f"first GET answered {response.status}")

def boot(nodes):
    t0 = time.perf_counter()
    cluster = Cluster(nodes=nodes)
    t1 = time.perf_counter()
    cluster.start()
    t2 = time.perf_counter()
    first_get(cluster.url)
    t3 = time.perf_counter()
    return cluster, {"construct_s": t1 - t0, "start_s": t2 - t1, "first_get_s": t3 - t2, "total_s": t3 - t0}

nodes = int(sys.argv[1])
t_import = time.perf_counter()
from fakekube import Cluster
import_s = time.perf_counter() - t_import
cold_cluster, cold = boot(nodes)
warm_cluster, warm = boot(nodes)
t0 = time.perf_counter()
warm_cluster.reset()
reset_s = time.perf_counter() - t0
t0 = time.perf_counter()
warm_cluster.stop()
stop_s = time.perf_counter() - t0
cold_cluster.stop()
print(json.dumps({"import_s": import_s, "cold": cold, "warm": warm, "reset_s": reset_s, "stop_s": stop_s}))
"""


@dataclass
class ColdStart:
    """Per-run samples (seconds) of each cold-start phase."""

    samples: dict[str, list[float]] = field(default_factory=dict)

    def add(self, name: str, value: float) -> None:
        self.samples.setdefault(name, []).append(value)


def measure_cold_start(runs: int, nodes: int, bytecode_cache: bool) -> ColdStart:
    """``runs`` fresh interpreters; with ``bytecode_cache`` a first, discarded run fills
    a private cache (PYTHONPYCACHEPREFIX in a temp dir, so the repo gets no __pycache__)."""
    env = dict(os.environ)
    cache_dir = tempfile.mkdtemp(prefix="fakekube-bench-pycache-")
    if bytecode_cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = cache_dir
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    result = ColdStart()
    try:
        for run in range(runs + (1 if bytecode_cache else 0)):
            done = subprocess.run([sys.executable, "-c", COLD_START_CODE, str(nodes)], env=env, cwd=cache_dir,
                                  capture_output=True, text=True, timeout=120, check=False)
            if done.returncode != 0:
                raise RuntimeError(f"cold-start child failed:\n{done.stderr}")
            if bytecode_cache and run == 0:
                continue
            sample = json.loads(done.stdout.strip().splitlines()[-1])
            result.add("import", sample["import_s"])
            for phase in ("construct", "start", "first_get", "total"):
                result.add(f"cold_{phase}", sample["cold"][f"{phase}_s"])
                result.add(f"warm_{phase}", sample["warm"][f"{phase}_s"])
            result.add("reset", sample["reset_s"])
            result.add("stop", sample["stop_s"])
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    return result
