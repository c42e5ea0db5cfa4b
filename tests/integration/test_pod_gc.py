"""Pods on a deleted node are garbage-collected at upstream's times (20 s passes, 40 s quarantine)."""

from __future__ import annotations

from fakekube import Cluster
from tests.integration.timeline import at


def pod(name: str, node: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx"}]}}


def names(cluster: Cluster) -> list[str]:
    return [p["metadata"]["name"] for p in cluster.list("v1", "Pod", "default")]


def test_pods_of_a_deleted_node_go_after_the_quarantine() -> None:
    cluster = Cluster(nodes=2)
    cluster.create(pod("on-1", "node-1"))
    cluster.create(pod("on-2", "node-2"))
    at(cluster, 25)
    cluster.delete("v1", "Node", "node-1", "")
    at(cluster, 79)  # noticed at the pass at 40 s; quarantined until 80 s
    assert names(cluster) == ["on-1", "on-2"]
    at(cluster, 80)
    assert names(cluster) == ["on-2"]


def test_the_gc_marks_the_pod_failed_before_deleting_it() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(pod("doomed", "node-1"))
    at(cluster, 5)
    start_rv = cluster.store.resource_version
    cluster.delete("v1", "Node", "node-1", "")
    at(cluster, 60)
    updates = [c for c in cluster.store.changes_since(start_rv) if c.resource == "pods" and c.name == "doomed"]
    # Failed, then marked for deletion with grace 0 (upstream's Store.Delete writes it), then gone.
    assert [c.type for c in updates] == ["MODIFIED", "MODIFIED", "DELETED"]
    assert updates[1].obj["metadata"]["deletionGracePeriodSeconds"] == 0
    failed = updates[0].obj["status"]
    assert failed["phase"] == "Failed"
    assert failed["conditions"][-1]["reason"] == "DeletionByPodGC"
    assert failed["conditions"][-1]["message"] == "PodGC: node no longer exists"
