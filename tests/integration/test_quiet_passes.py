"""Periodic passes that would do nothing are skipped; that must be invisible.

The engine asks a periodic controller whether its pass would provably do nothing
(``quiet``: the node lifecycle monitor, pod GC, the PV binder's resync) when the tick's work
item comes up, and skips the reconcile when it says so; the kubelets' Lease renewals and
status checks due at one instant are one work item. Here one seeded scenario — node
failures, partitions, kubelet restarts, nodes deleted and added (orphaned pods), pods
added, removed, finished past a small GC threshold and held terminating by a finalizer,
claims pending and volumes available — runs with the skips and eagerly
(``Engine.lazy_periodic`` off, every pass run; ``NodeHeartbeats.paired_ticks`` off, two
items), and the store, the change log and the events must come out identical; the lazy run
must really have skipped passes.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from fakekube import Cluster, ClusterConfig
from fakekube.controllers.podgc import PodGCConfig
from fakekube.engine.engine import Engine
from fakekube.kubelet.heartbeat import NodeHeartbeats
from tests.integration.nodefaults import FAULTS, inject

NODES = 4


def pod(name: str, node: str | None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx"}], **spec}
    if node is not None:
        body["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": body}


def finishing(name: str, node: str) -> dict[str, Any]:
    """A pod whose container exits at once: Succeeded, counted by pod GC's threshold."""
    return pod(name, node, restartPolicy="Never",
               containers=[{"name": "c", "image": "busybox", "command": ["sh", "-c", "echo done"]}])


def held(name: str) -> dict[str, Any]:
    """A pod no node fits, kept by a finalizer once deleted: pod GC's unscheduled terminating pass."""
    obj = pod(name, None, nodeSelector={"nowhere": "true"})
    obj["metadata"]["finalizers"] = ["example.com/hold"]
    return obj


def claim(name: str) -> dict[str, Any]:
    """A claim without a class: FailedBinding at every resync until a volume fits."""
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
            "spec": {"storageClassName": "", "accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "1Gi"}}}}


def volume(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                     "persistentVolumeReclaimPolicy": "Retain", "hostPath": {"path": f"/data/{name}"}}}


def node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}}


def step(cluster: Cluster, rng: random.Random, index: int, nodes: list[str]) -> None:
    """One random thing done to the cluster (the same draws in both runs)."""
    action = rng.choice(["pod", "pod", "finish", "finish", "remove", "held", "claim", "volume", "delete-node",
                         "add-node", "none", *FAULTS])
    target = rng.choice(nodes)
    if inject(cluster, action, target):
        return
    pods = sorted(p["metadata"]["name"] for p in cluster.list("v1", "Pod", "default"))
    if action == "pod":
        cluster.create(pod(f"p{index}", target))
    elif action == "finish":
        cluster.create(finishing(f"f{index}", target))
    elif action == "remove" and pods:
        cluster.delete("v1", "Pod", rng.choice(pods))
    elif action == "held":
        cluster.create(held(f"h{index}"))
        cluster.advance(rng.choice([1, 5]))
        cluster.delete("v1", "Pod", f"h{index}")
    elif action == "claim":
        cluster.create(claim(f"c{index}"))
    elif action == "volume":
        cluster.create(volume(f"v{index}"))
    elif action == "delete-node" and len(nodes) > 2:
        nodes.remove(target)
        cluster.delete("v1", "Node", target, "")
    elif action == "add-node":
        nodes.append(f"extra-{index}")
        cluster.create(node(f"extra-{index}"))


def scenario(seed: int) -> tuple[str, int]:
    """The run's store, change log and events as JSON, and how many passes it skipped."""
    rng = random.Random(seed)
    cluster = Cluster(ClusterConfig(nodes=NODES, seed=seed, pod_gc=PodGCConfig(terminated_pod_threshold=2)))
    nodes = [f"node-{n}" for n in range(1, NODES + 1)]
    for index in range(50):
        cluster.advance(rng.choice([1, 3, 5, 7, 15, 20, 45, 90]))
        step(cluster, rng, index, nodes)
        if index == 25:
            cluster.restore(cluster.snapshot())
    cluster.advance(900)  # every pod of a deleted node gone, every claim resynced
    assert not cluster.internal_errors and not cluster.engine.errors
    cluster.store.build_deferred()
    dump = {f"{group}/{resource}": cluster.store.list((group, resource))[0]
            for group, resource in cluster.store.resources()}
    dump["changes"] = [(c.rv, c.type, c.group, c.resource, c.namespace, c.name)
                       for c in cluster.store.changes_since(cluster.store.history.horizon_rv())]
    dump["events"] = cluster.events()
    return json.dumps(dump, sort_keys=True, default=str), cluster.engine.passes_skipped


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_skipped_passes_change_nothing(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    lazy, skipped = scenario(seed)
    monkeypatch.setattr(Engine, "lazy_periodic", False)
    monkeypatch.setattr(NodeHeartbeats, "paired_ticks", False)
    eager, eager_skipped = scenario(seed)
    assert eager_skipped == 0
    assert skipped > 100  # the monitor's, pod GC's and the binder's passes between changes
    assert lazy == eager


def test_an_idle_cluster_skips_the_passes_that_would_do_nothing() -> None:
    """An idle hour of one node: pod GC's and the binder's passes all find nothing (no pod,
    claim or volume is written), the monitor's every pass with nothing written since the
    last: every other one (the Lease is renewed every 10 s, the pass runs every 5 s), but the
    one after each 5-minute status report."""
    cluster = Cluster(nodes=1)
    cluster.advance(60)
    before = cluster.engine.passes_skipped
    cluster.advance(3600)
    gc_passes, binder_passes, monitor_passes, reports = 3600 // 20, 3600 // 15, 3600 // 5, 3600 // 300
    assert cluster.engine.passes_skipped - before >= gc_passes + binder_passes + monitor_passes // 2 - reports


def test_a_nodes_renewal_and_status_check_are_one_work_item() -> None:
    """Both are due every 10 s from the node's registration: one item renews, then checks
    (its workqueue's adds, as ``/metrics`` counts them, are one per 10 s)."""
    cluster = Cluster(nodes=1)
    cluster.advance(60)
    adds = dict((name, added) for name, _, added in cluster.engine.queue_stats())
    cluster.advance(3600)
    after = dict((name, added) for name, _, added in cluster.engine.queue_stats())
    assert after["kubelet-heartbeats"] - adds["kubelet-heartbeats"] == 3600 // 10
    lease = cluster.get("coordination.k8s.io/v1", "Lease", "node-1", "kube-node-lease")
    assert lease["spec"]["renewTime"] == "2025-01-01T01:01:00.000000Z"  # renewed at the hour's last tick
