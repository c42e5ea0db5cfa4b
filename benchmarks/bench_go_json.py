"""What the Go JSON round trip costs a write: CPU per create with and without it.

Run ``python benchmarks/bench_go_json.py``. It creates Pods and Deployments through the
in-process apiserver (no HTTP), alternating rounds with the round trip on and switched off
(``fakekube/api/wire/gojson.py``: the typed form before the field manager, the stored form
before the store), and prints the time per create of each; then the stored-form walk alone over one created pod, which is what every later
write of that pod pays (a status update, a controller's patch). Each is wall and CPU per
create as median (min–max) over interleaved rounds, with per-round ratios to the run
without the round trip and the load (``measure.py``; ``--rounds``, ``--creates``,
``--quick``). No assertions on timings; benchmarks read the clock, fakekube never does.
"""

from __future__ import annotations

import argparse
from typing import Any

import fakekube
import measure
import workload
from fakekube.api.registry import ResourceType
from fakekube.api.verbs.apiserver import APIServer
from fakekube.api.wire import gojson

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


def _unchanged(self: APIServer, rt: ResourceType, obj: dict[str, Any], old: dict[str, Any] | None = None) -> dict[str, Any]:
    """The round trip switched off: the object as given."""
    return obj


def creates(api_version: str, kind: str, build: Any, round_trip: bool, count: int) -> measure.Sample:
    """Wall and CPU seconds per create of ``count`` objects on a fresh cluster (built
    untimed), with the Go JSON round trip on or switched off."""
    if not round_trip:
        APIServer._go_typed = APIServer._go_stored = _unchanged  # type: ignore[method-assign]
    try:
        return workload.create_cost(api_version, kind, build, count, kubernetes_version="1.36")
    finally:
        APIServer._go_typed, APIServer._go_stored = _TYPED, _STORED  # type: ignore[method-assign]


def walk(count: int) -> measure.Scenario:
    """The stored-form walk over an already stored pod (nothing to change: no copies), per walk."""
    cluster = fakekube.Cluster(kubernetes_version="1.36")
    cluster.start()
    stored = cluster.create(pod(0))
    cluster.stop()
    round_trip = gojson.for_version("1.36")
    message = gojson.message_name("", "v1", "Pod")
    assert message is not None

    def walks() -> measure.Sample:
        sample = measure.time_call(lambda: [round_trip.stored(message, stored) for _ in range(count)])
        return measure.Sample(sample.wall_s / count, sample.cpu_s / count)
    return walks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--creates", type=int, default=500, help="creates per round (default 500)")
    parser.add_argument("--quick", action="store_true", help="3 rounds of 100 creates (smoke use)")
    measure.add_round_options(parser, rounds=7, round_s=0.0)
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.creates = 3, 100
    for api_version, kind, build in (("v1", "Pod", pod), ("apps/v1", "Deployment", deployment)):
        start = measure.Load.now()
        off = f"{kind}, round trip off (ref)"
        scenarios = {f"{kind}, Go JSON round trip on": lambda: creates(api_version, kind, build, True, args.creates),
                     off: lambda: creates(api_version, kind, build, False, args.creates)}
        if kind == "Pod":
            scenarios["stored-form walk of a stored pod"] = walk(args.creates * 20)
        results = measure.interleave(scenarios, args.rounds, args.round_s)  # the warm-up loads schemas and plans
        measure.report(f"\nµs per create of {args.creates} {kind}s (in process, no HTTP)", results, off, start,
                       args.rounds, args.round_s, unit="µs", scale=1e6)


if __name__ == "__main__":
    main()
