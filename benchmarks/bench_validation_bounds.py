"""How long do hostile user-supplied rules hold the apiserver? (issue 19's three inputs)

Run ``python benchmarks/bench_validation_bounds.py`` (about a minute with the bounds; give
``--cap-s`` to wait longer without them). For each input it starts a ``fakekube serve``
child process (the fakekube on ``PYTHONPATH``), sends the hostile write, and meanwhile
sends GETs one after another, reporting the write's answer and time and the longest a GET
waited. A write still unanswered after ``--cap-s`` is reported as ``> cap`` and its
server killed. The inputs:

* a CRD ``pattern`` ``^(a+)+$`` against 26 and 40 characters (``a`` × n then ``!``);
* a rule nesting ``all()`` three deep over an unbounded list: the CRD's create, then
  (if admitted) a custom resource with 2,000 items; and the same rule bounded by
  ``maxItems: 100`` with 100 items (admitted; each run costs 9 million units);
* an ``enum`` of 100,000 values checked on each of 400 list items.

It reads the wall clock to measure; fakekube itself never does.
"""

from __future__ import annotations

import argparse
import http.client
import json
import subprocess
import sys
import threading
import time
from typing import Any
from urllib.parse import urlsplit

import measure

GROUP = "bench.example.com"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
TRIPLE = "self.items.all(a, self.items.all(b, self.items.all(c, a + b + c >= 0)))"


class Server:
    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "fakekube", "serve", "--no-system-pods", "--no-metrics-server", "--time-scale", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert self.process.stdout is not None
        self.url = urlsplit(self.process.stdout.readline().split(" at ")[1].strip())

    def request(self, method: str, path: str, body: Any, timeout_s: float) -> tuple[int, Any]:
        connection = http.client.HTTPConnection(self.url.hostname or "127.0.0.1", self.url.port, timeout=timeout_s)
        try:
            connection.request(method, path, body=None if body is None else json.dumps(body).encode(),
                               headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            return response.status, json.loads(response.read())
        finally:
            connection.close()

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


def crd(plural: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{GROUP}"},
            "spec": {"group": GROUP, "scope": "Namespaced",
                     "names": {"plural": plural, "singular": plural[:-1], "kind": plural.capitalize()[:-1]},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                         "type": "object", "properties": {"spec": spec}}}}]}}


def timed_write(server: Server, path: str, body: Any, cap_s: float) -> tuple[str, float, float]:
    """(answer, seconds, the longest a concurrent GET waited)."""
    done = threading.Event()
    longest = [0.0]

    def probe() -> None:
        while not done.is_set():
            start = time.perf_counter()
            try:
                server.request("GET", "/api/v1/namespaces/default", None, cap_s)
            except OSError:
                pass
            longest[0] = max(longest[0], time.perf_counter() - start)

    prober = threading.Thread(target=probe, daemon=True)
    start = time.perf_counter()
    prober.start()
    try:
        code, answer = server.request("POST", path, body, cap_s)
        text = str(code) if code < 400 else f"{code}: {_first_cause(answer)}"
    except OSError:
        text = "> cap"
    elapsed = time.perf_counter() - start
    done.set()
    prober.join(timeout=cap_s + 5)
    return text, elapsed, longest[0]


def _first_cause(answer: Any) -> str:
    causes = (answer.get("details") or {}).get("causes") or [{}] if isinstance(answer, dict) else [{}]
    return str(causes[0].get("message", answer.get("message", "") if isinstance(answer, dict) else ""))[:90]


def scenario(name: str, crd_body: dict[str, Any], plural: str, spec: Any, cap_s: float) -> None:
    server = Server()
    try:
        created, created_s, _ = timed_write(server, CRDS, crd_body, cap_s)
        print(f"{name}: CRD {created} ({created_s * 1000:.0f} ms)")
        if created.startswith("201"):
            body = {"apiVersion": f"{GROUP}/v1", "kind": plural.capitalize()[:-1], "metadata": {"name": "x"}, "spec": spec}
            text, elapsed, waited = timed_write(server, f"/apis/{GROUP}/v1/namespaces/default/{plural}", body, cap_s)
            print(f"    write: {text} in {elapsed:.3f} s; a GET meanwhile waited at most {waited:.3f} s")
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cap-s", type=float, default=30.0, help="give up on a write after this long (default 30)")
    cap_s = parser.parse_args().cap_s
    start = measure.Load.now()
    for n in (26, 40):
        scenario(f"pattern ^(a+)+$, {n} characters", crd("patterns", {"type": "object", "properties": {
            "name": {"type": "string", "pattern": "^(a+)+$"}}}), "patterns", {"name": "a" * n + "!"}, cap_s)
    nested = {"type": "object", "x-kubernetes-validations": [{"rule": TRIPLE}],
              "properties": {"items": {"type": "array", "items": {"type": "integer"}}}}
    scenario("all() three deep, unbounded list, 2,000 items", crd("nesteds", nested), "nesteds",
             {"items": list(range(2_000))}, cap_s)
    bounded = json.loads(json.dumps(nested))
    bounded["properties"]["items"]["maxItems"] = 100
    scenario("all() three deep, maxItems 100, 100 items", crd("boundeds", bounded), "boundeds",
             {"items": list(range(100))}, cap_s)
    values = [f"value-{i}" for i in range(100_000)]
    scenario("enum of 100,000 values, 400 items", crd("choices", {"type": "object", "properties": {
        "items": {"type": "array", "items": {"type": "string", "enum": values}}}}), "choices",
        {"items": [values[(i * 7919) % len(values)] for i in range(400)]}, cap_s)
    print(measure.load_line(start, measure.Load.now()))


if __name__ == "__main__":
    main()
