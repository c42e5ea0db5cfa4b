"""What managedFields cost a create: CPU per ``APIServer.create`` with and without them.

Run ``python benchmarks/bench_managed_fields.py``. It creates ConfigMaps and Deployments
through the in-process apiserver (no HTTP), alternating rounds with the field manager on and
switched off, and prints the median CPU time (``time.process_time``) per create of each.
No assertions on timings; benchmarks read the clock, fakekube never does.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import fakekube
from fakekube.api.verbs import fieldmanager
from fakekube.api.verbs.apiserver import WriteOptions

ROUNDS = 5
CREATES = 1000
_TRACK_CREATE = fieldmanager.track_create


def configmap(i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}", "labels": {"app": "x"}},
            "data": {"a": "1", "b": "2"}}


def deployment(i: int) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"d{i}", "labels": {"app": "x"}},
            "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "x"}},
                     "template": {"metadata": {"labels": {"app": "x"}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx",
                                                           "ports": [{"containerPort": 80}]}]}}}}


def cpu_per_create_us(api_version: str, kind: str, build: Any, tracked: bool, count: int) -> float:
    fieldmanager.track_create = _TRACK_CREATE if tracked else (lambda *args, **kwargs: None)  # type: ignore[assignment]
    try:
        cluster = fakekube.Cluster()
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
        fieldmanager.track_create = _TRACK_CREATE  # type: ignore[assignment]


def main() -> None:
    print(f"CPU µs per create, median of {ROUNDS} rounds of {CREATES} (in process, no HTTP)")
    print(f"  {'kind':<12}{'managedFields':>15}{'without':>10}{'added':>8}")
    for api_version, kind, build in (("v1", "ConfigMap", configmap), ("apps/v1", "Deployment", deployment)):
        cpu_per_create_us(api_version, kind, build, True, 200)  # warm-up: schemas and types load once
        on, off = [], []
        for _ in range(ROUNDS):
            on.append(cpu_per_create_us(api_version, kind, build, True, CREATES))
            off.append(cpu_per_create_us(api_version, kind, build, False, CREATES))
        with_fields, without = statistics.median(on), statistics.median(off)
        print(f"  {kind:<12}{with_fields:>15.0f}{without:>10.0f}{with_fields - without:>8.0f}")


if __name__ == "__main__":
    main()
