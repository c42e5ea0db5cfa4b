"""The monitor pass skips nodes whose check would change nothing; that must be invisible.

The node lifecycle controller reuses a node's last check while the node object is
unchanged and its grace period has not run out, and a pass visits only the nodes that
changed or whose deadline came (a 5,000-node cluster would otherwise check every node every
5 s). Here a seeded storm of faults runs twice — with the shortcut and with every node fully
checked on every pass (``quick_passes`` off) — and every object and every change must come
out identical.
"""

from __future__ import annotations

import json
import random

import pytest

from fakekube import Cluster
from fakekube.api.verbs.apiserver import WriteOptions
from fakekube.controllers.nodelifecycle.controller import NodeLifecycleController
from fakekube.engine.engine import Engine
from fakekube.kubelet.heartbeat import NodeHeartbeats
from tests.integration.nodefaults import inject

NODES = 12


def cordon(cluster: Cluster, name: str, unschedulable: bool) -> None:
    node = cluster.get("v1", "Node", name, "")
    node["spec"]["unschedulable"] = unschedulable
    cluster.api.update(cluster.resource("v1", "Node"), "", name, node, WriteOptions())
    cluster.settle()


def move_zone(cluster: Cluster, name: str, zone: str) -> None:
    node = cluster.get("v1", "Node", name, "")
    node["metadata"]["labels"]["topology.kubernetes.io/zone"] = zone
    cluster.api.update(cluster.resource("v1", "Node"), "", name, node, WriteOptions())
    cluster.settle()


def storm(seed: int, history_limit: int = 10_000) -> str:
    """Random faults, cordons and zone moves at random instants; the whole store as JSON."""
    rng = random.Random(seed)
    cluster = Cluster(nodes=NODES, seed=seed, history_limit=history_limit)
    for index in range(NODES):
        cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{index}"},
                        "spec": {"nodeName": f"node-{index % NODES + 1}",
                                 "containers": [{"name": "c", "image": "nginx"}]}})
    for _ in range(60):
        cluster.advance(rng.choice([1, 3, 5, 7, 20, 45, 90]))
        node = f"node-{rng.randint(1, NODES)}"
        action = rng.choice(["fail", "recover", "partition", "heal", "restart", "pressure", "clear",
                             "cordon", "uncordon", "zone"])
        if inject(cluster, action, node):
            continue
        if action == "pressure":
            cluster.set_node_condition(node, rng.choice(["MemoryPressure", "DiskPressure", "Ready"]),
                                       rng.choice(["True", "False"]))
        elif action == "clear":
            for kind in ("MemoryPressure", "DiskPressure", "Ready"):
                cluster.clear_node_condition(node, kind)
        elif action in ("cordon", "uncordon"):
            cordon(cluster, node, action == "cordon")
        else:
            move_zone(cluster, node, rng.choice(["a", "b"]))
    cluster.advance(600)
    assert not cluster.internal_errors
    dump = {f"{group}/{resource}": cluster.store.list((group, resource))[0]
            for group, resource in cluster.store.resources()}
    if cluster.store.history.covers(0):  # (every object carries its resourceVersion either way)
        dump["changes"] = [(c.rv, c.type, c.resource, c.namespace, c.name) for c in cluster.store.changes_since(0)]
    return json.dumps(dump)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_skipping_quiet_nodes_changes_nothing(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    with_shortcut = storm(seed)
    monkeypatch.setattr(NodeLifecycleController, "quick_passes", False)
    monkeypatch.setattr(NodeHeartbeats, "quick_checks", False)  # and every kubelet's 10 s check node by node
    monkeypatch.setattr(Engine, "lazy_periodic", False)  # and every periodic pass run, quiet or not
    monkeypatch.setattr(NodeHeartbeats, "paired_ticks", False)  # renewals and checks as two items
    assert storm(seed) == with_shortcut
    assert '"node.kubernetes.io/unreachable"' in with_shortcut  # the storm did take nodes down


def test_a_pass_whose_history_is_gone_reads_every_lease_and_decides_the_same() -> None:
    """The pass learns which Leases were renewed from the store's change log; with a history
    too short to reach the previous pass it reads every Lease instead, with the same result."""
    full = json.loads(storm(4))
    del full["changes"]
    assert json.loads(storm(4, history_limit=5)) == full


def test_an_idle_pass_checks_no_node_until_one_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The monitor's pass over idle nodes visits none of them (their renewals are noted a
    cohort at a time, their deadlines wait on a heap); the 5-minute status report changes
    each node once, and each is checked once for it."""
    cluster = Cluster(nodes=40, seed=1)
    cluster.advance(60)
    visited: list[str] = []
    for method in ("_check_node", "_pass_node"):
        original = getattr(NodeLifecycleController, method)
        monkeypatch.setattr(NodeLifecycleController, method, lambda self, node, *rest, _run=original: (
            visited.append(node["metadata"]["name"]), _run(self, node, *rest))[1])
    cluster.advance(200)  # 40 passes; the first reports are due 300 s after registration
    assert visited == []
    cluster.advance(60)
    assert sorted(visited) == sorted(f"node-{index}" for index in range(1, 41))
    assert cluster.get("v1", "Node", "node-7", "")["status"]["conditions"][-1]["status"] == "True"
