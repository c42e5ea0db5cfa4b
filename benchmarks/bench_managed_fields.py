"""What managedFields cost a create: CPU per ``APIServer.create`` with and without them.

Run ``python benchmarks/bench_managed_fields.py`` (``--rounds``, ``--creates``; ``--quick``).
It creates ConfigMaps and Deployments through the in-process apiserver (no HTTP),
alternating rounds with the field manager on and switched off (the reference), and prints
wall and CPU per create of each as median (min–max) with per-round ratios and the load
(``measure.py``). No assertions on timings; benchmarks read the clock, fakekube never does.
"""

from __future__ import annotations

import argparse
from typing import Any

import measure
import workload
from fakekube.api.verbs import fieldmanager

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


def creates(api_version: str, kind: str, build: Any, tracked: bool, count: int) -> measure.Sample:
    """Wall and CPU seconds per create of ``count`` objects on a fresh cluster (built untimed),
    with the field manager on (``tracked``) or switched off."""
    fieldmanager.track_create = _TRACK_CREATE if tracked else (lambda *args, **kwargs: None)
    try:
        return workload.create_cost(api_version, kind, build, count)
    finally:
        fieldmanager.track_create = _TRACK_CREATE


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--creates", type=int, default=1000, help="creates per round (default 1000)")
    parser.add_argument("--quick", action="store_true", help="3 rounds of 200 creates (smoke use)")
    measure.add_round_options(parser, rounds=5, round_s=0.0)
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.creates = 3, 200
    for api_version, kind, build in (("v1", "ConfigMap", configmap), ("apps/v1", "Deployment", deployment)):
        start = measure.Load.now()
        off = f"{kind}, managedFields off (ref)"
        results = measure.interleave({
            f"{kind}, managedFields on": lambda: creates(api_version, kind, build, True, args.creates),
            off: lambda: creates(api_version, kind, build, False, args.creates),
        }, args.rounds, args.round_s)  # the warm-up loads schemas and types once
        measure.report(f"\nµs per create of {args.creates} {kind}s (in process, no HTTP)", results, off, start,
                       args.rounds, args.round_s, unit="µs", scale=1e6)


if __name__ == "__main__":
    main()
