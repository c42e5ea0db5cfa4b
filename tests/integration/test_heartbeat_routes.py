"""Routing heartbeats only to the controllers that may get work from them is invisible.

The engine skips, for a heartbeat (engine/routing.py), every controller declaring
``keyless_heartbeats`` — the scheduler among them, whose node sync is then not run for a
status report. One seeded scenario runs with that routing (``Engine.quick_routes``) and with
every heartbeat routed to every watcher: heterogeneous nodes with zones, labels and taints,
pods with affinity, spread and requests (some fitting nowhere, so back-offs and the
unschedulable queue are in play) arriving in bursts across many 5-minute status reports,
nodes relabelled, tainted, cordoned, failed, partitioned and restarted meanwhile. Every pod's
placement and phase, every Event, every Node and the store's resourceVersion are compared.
"""

from __future__ import annotations

import json
import random
from typing import Any

from fakekube import Cluster
from fakekube.api.verbs.apiserver import WriteOptions
from fakekube.objects.kinds import EVENTS, NODES, PODS
from tests.integration.nodefaults import FAULTS, inject
from tests.integration.test_sched_determinism import node_specs, pod

NODE_COUNT = 12


def scenario(quick: bool, seed: int) -> tuple[list[str], int]:
    """The observations of one run and how many node changes the scheduler was given."""
    rng = random.Random(seed)
    cluster = Cluster(nodes=node_specs(NODE_COUNT), seed=seed)
    cluster.engine.quick_routes = quick
    pods = cluster.resource("v1", "Pod")
    seen: list[str] = []
    created = 0

    def note(what: str, value: Any) -> None:
        seen.append(f"{len(seen)} {what}: {json.dumps(value, sort_keys=True, default=str)}")

    for step in range(16):
        for _ in range(rng.randint(0, 8)):
            cluster.api.create(pods, "default", pod(created), WriteOptions())
            created += 1
        cluster.advance(rng.choice([1, 7, 30, 95, 299, 301]))
        node = f"node-{rng.randint(1, NODE_COUNT)}"
        change = rng.choice(["none", "none", "label", "taint", "cordon", "uncordon", "delete-pod", *FAULTS])
        if change == "label":
            cluster.patch("v1", "Node", node, {"metadata": {"labels": {"disk": rng.choice(["ssd", "hdd"])}}},
                          namespace="")
        elif change == "taint":
            cluster.patch("v1", "Node", node, {"spec": {"taints": [{"key": "t", "effect": "NoSchedule"}]}},
                          namespace="")
        elif change in ("cordon", "uncordon"):
            cluster.patch("v1", "Node", node, {"spec": {"unschedulable": change == "cordon"}}, namespace="")
        elif change == "delete-pod" and created:
            name = f"p-{rng.randrange(created):04d}"
            if cluster.store.get(PODS, ("default", name)) is not None:
                cluster.delete("v1", "Pod", name, "default")
        else:
            inject(cluster, change, node)
        note("rv", cluster.store.resource_version)
        note("pods", sorted((p["metadata"]["name"], p["spec"].get("nodeName"), p.get("status", {}).get("phase"))
                            for p in cluster.store.list(PODS, "default")[0]))
    cluster.advance(310)
    assert not cluster.internal_errors and not cluster.engine.errors
    note("events", [(e["metadata"]["name"], e.get("reason"), e.get("message"), e.get("count"))
                    for e in cluster.store.list(EVENTS)[0]])
    note("nodes", cluster.store.list(NODES)[0])
    note("pods", cluster.store.list(PODS)[0])
    return seen, dict((name, added) for name, _, added in cluster.engine.queue_stats())["kube-scheduler"]


def test_heartbeats_routed_only_where_they_give_work_change_nothing_observed() -> None:
    quick, quick_syncs = scenario(True, 5)
    eager, eager_syncs = scenario(False, 5)
    for index, (got, want) in enumerate(zip(quick, eager)):
        assert got == want, f"observation {index} differs"
    assert len(quick) == len(eager)
    assert quick_syncs + 3 * NODE_COUNT < eager_syncs  # the scheduler skipped heartbeats: over three reports a node
    placed = json.loads(quick[-1].split(": ", 1)[1])
    assert sum(1 for p in placed if p["spec"].get("nodeName")) > 20  # not trivial: pods were placed
