"""What the Go JSON round trip costs a write: CPU per create with and without it.

Run ``python benchmarks/bench_go_json.py``. It creates Pods and Deployments through the
in-process apiserver (no HTTP), alternating rounds with the round trip on and switched off
(``fakekube/api/wire/gojson.py``: the typed form before the field manager, the stored form
before the store), and prints the median CPU time (``time.process_time``) per create of
each; then the stored-form walk alone over one created pod, which is what every later
write of that pod pays (a status update, a controller's patch). No assertions on timings;
benchmarks read the clock, fakekube never does.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import fakekube
from fakekube.api.verbs.apiserver import APIServer, WriteOptions
from fakekube.api.wire import gojson

ROUNDS = 7
CREATES = 500
_TYPED, _STORED = APIServer._go_typed, APIServer._go_stored


def pod(i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "labels": {"app": "x"}},
            "spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}],
                                     "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                                     "env": [{"name": "A", "value": "1"}],
                                     "readinessProbe": {"httpGet": {"path": "/", "port": 80}}}]}}


def deployment(i: int) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"d{i}", "labels": {"app": "x"}},
            "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "x"}},
                     "template": {"metadata": {"labels": {"app": "x"}}, "spec": pod(0)["spec"]}}}


def cpu_per_create_us(api_version: str, kind: str, build: Any, round_trip: bool, count: int) -> float:
    if not round_trip:
        APIServer._go_typed = APIServer._go_stored = lambda self, rt, obj: obj  # type: ignore[method-assign]
    try:
        cluster = fakekube.Cluster(kubernetes_version="1.36")
        cluster.start()
        rt = cluster.resource(api_version, kind)
        bodies = [build(i) for i in range(count)]
        options = WriteOptions(field_manager="bench")
        started = time.process_time()
        for body in bodies:
            cluster.api.create(rt, "default", body, options)
        spent = time.process_time() - started
        cluster.stop()
        return spent / count * 1e6
    finally:
        APIServer._go_typed, APIServer._go_stored = _TYPED, _STORED  # type: ignore[method-assign]


def walk_us(count: int = 20_000) -> float:
    """The stored-form walk over an already stored pod (nothing to change: no copies)."""
    cluster = fakekube.Cluster(kubernetes_version="1.36")
    cluster.start()
    stored = cluster.create(pod(0))
    cluster.stop()
    round_trip = gojson.for_version("1.36")
    message = gojson.message_name("", "v1", "Pod")
    assert message is not None
    started = time.process_time()
    for _ in range(count):
        round_trip.stored(message, stored)
    return (time.process_time() - started) / count * 1e6


def main() -> None:
    print(f"CPU µs per create, median of {ROUNDS} rounds of {CREATES} (in process, no HTTP)")
    print(f"  {'kind':<12}{'round trip':>12}{'without':>10}{'added':>8}")
    for api_version, kind, build in (("v1", "Pod", pod), ("apps/v1", "Deployment", deployment)):
        cpu_per_create_us(api_version, kind, build, True, 100)  # warm-up: schemas and plans load once
        on, off = [], []
        for _ in range(ROUNDS):
            on.append(cpu_per_create_us(api_version, kind, build, True, CREATES))
            off.append(cpu_per_create_us(api_version, kind, build, False, CREATES))
        with_it, without = statistics.median(on), statistics.median(off)
        print(f"  {kind:<12}{with_it:>12.0f}{without:>10.0f}{with_it - without:>8.0f}")
    print(f"stored-form walk of a stored pod: {walk_us():.1f} µs")


if __name__ == "__main__":
    main()
