"""PodGC's passes besides orphans (see test_pod_gc.py): the terminated-pod threshold,
terminating pods on out-of-service nodes and unscheduled terminating pods — each acted on
at a 20 s pass (00:00:20, 00:00:40, … from the cluster's start)."""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

import pytest

from fakekube import Cluster
from fakekube.controllers.podgc import PodGCConfig
from fakekube.kubelet.behaviour import BEHAVIOUR_ANNOTATION
from tests.integration.timeline import at

Obj = dict[str, Any]
MERGE = "application/merge-patch+json"


def patch(cluster: Cluster, path: str, body: Obj) -> None:
    url = urlsplit(cluster.url)
    connection = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=30)
    try:
        connection.request("PATCH", path, body=json.dumps(body).encode(), headers={"Content-Type": MERGE})
        response = connection.getresponse()
        assert response.status == 200, response.read()
    finally:
        connection.close()


def pod(name: str, node: str = "node-1", behaviour: Obj | None = None, **spec: Any) -> Obj:
    meta: Obj = {"name": name, "namespace": "default"}
    if behaviour is not None:
        meta["annotations"] = {BEHAVIOUR_ANNOTATION: json.dumps(behaviour)}
    placement = {"nodeName": node} if node else {"schedulerName": "manual"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {**placement, "containers": [{"name": "c", "image": "nginx"}], **spec}}


def names(cluster: Cluster) -> list[str]:
    return [p["metadata"]["name"] for p in cluster.list("v1", "Pod", "default")]


def writes(cluster: Cluster, since_rv: int, name: str) -> list[tuple[str, str | None, list[str]]]:
    """Each change of pod ``name``: (type, phase, condition types)."""
    return [(c.type, c.obj["status"].get("phase"), [x["type"] for x in c.obj["status"].get("conditions", [])])
            for c in cluster.store.changes_since(since_rv) if c.resource == "pods" and c.name == name]


@pytest.mark.fakekube(nodes=1, pod_gc=PodGCConfig(terminated_pod_threshold=3))
def test_finished_pods_beyond_the_threshold_go_evicted_first_then_oldest(fakekube: Cluster) -> None:
    for second in range(5):  # creationTimestamps 00:00:00 … 00:00:04
        at(fakekube, second)
        fakekube.create(pod(f"done-{second}", behaviour={"run_for_s": 1}, restartPolicy="Never"))
    fakekube.create(pod("evicted", node=""))  # newest, never bound: no kubelet touches it
    patch(fakekube, "/api/v1/namespaces/default/pods/evicted/status",
          {"status": {"phase": "Failed", "reason": "Evicted", "message": "The node was low on resource: memory."}})
    fakekube.create(pod("running"))
    at(fakekube, 19.999)
    assert {p["metadata"]["name"]: p["status"]["phase"] for p in fakekube.list("v1", "Pod", "default")} == {
        "done-0": "Succeeded", "done-1": "Succeeded", "done-2": "Succeeded", "done-3": "Succeeded",
        "done-4": "Succeeded", "evicted": "Failed", "running": "Running"}
    rv = fakekube.store.resource_version
    at(fakekube, 20)  # 6 finished, 3 allowed: the evicted pod, then the two oldest
    assert names(fakekube) == ["done-2", "done-3", "done-4", "running"]
    # Deleted with grace 0: the store writes it marked, then removes it (upstream's two events).
    conditions = ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"]
    assert writes(fakekube, rv, "done-0") == [("MODIFIED", "Succeeded", conditions), ("DELETED", "Succeeded", conditions)]


@pytest.mark.fakekube(nodes=1, pod_gc=PodGCConfig(terminated_pod_threshold=0))
def test_a_threshold_of_zero_keeps_every_finished_pod(fakekube: Cluster) -> None:
    for index in range(3):
        fakekube.create(pod(f"done-{index}", behaviour={"run_for_s": 1}, restartPolicy="Never"))
    at(fakekube, 100)
    assert names(fakekube) == ["done-0", "done-1", "done-2"]


@pytest.mark.fakekube(nodes=2)
def test_terminating_pods_on_an_out_of_service_node_are_force_deleted_at_the_next_pass(fakekube: Cluster) -> None:
    fakekube.create(pod("stuck", node="node-1"))
    fakekube.create(pod("waiting", node="node-2"))
    at(fakekube, 2)
    fakekube.fail_node("node-1")
    fakekube.fail_node("node-2")
    at(fakekube, 100)
    for node in ("node-1", "node-2"):
        ready = [c for c in fakekube.get("v1", "Node", node, "")["status"]["conditions"] if c["type"] == "Ready"]
        assert ready[0]["status"] == "Unknown"
    fakekube.delete("v1", "Pod", "stuck")    # graceful: no kubelet finishes it
    fakekube.delete("v1", "Pod", "waiting")
    at(fakekube, 101)
    patch(fakekube, "/api/v1/nodes/node-1", {"spec": {"taints": [
        *fakekube.get("v1", "Node", "node-1", "")["spec"]["taints"],
        {"key": "node.kubernetes.io/out-of-service", "value": "nodeshutdown", "effect": "NoExecute"}]}})
    rv = fakekube.store.resource_version
    at(fakekube, 119.999)
    assert names(fakekube) == ["stuck", "waiting"]
    at(fakekube, 120)
    assert names(fakekube) == ["waiting"]  # node-2 is NotReady too, but not out of service
    # Marked Failed (no condition of its own), then deleted with grace 0: marked, then removed.
    conditions = ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"]
    assert writes(fakekube, rv, "stuck") == [("MODIFIED", "Failed", conditions), ("MODIFIED", "Failed", conditions),
                                             ("DELETED", "Failed", conditions)]


@pytest.mark.fakekube(nodes=1)
def test_an_unscheduled_terminating_pod_is_marked_failed_and_force_deleted(fakekube: Cluster) -> None:
    held = pod("held", node="")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    fakekube.create(held)
    at(fakekube, 5)
    fakekube.delete("v1", "Pod", "held")  # never bound: the finalizer keeps it
    at(fakekube, 19.999)
    assert fakekube.get("v1", "Pod", "held")["status"]["phase"] == "Pending"
    at(fakekube, 20)
    gone = fakekube.get("v1", "Pod", "held")
    assert (gone["status"]["phase"], gone["metadata"]["deletionGracePeriodSeconds"]) == ("Failed", 0)
    patch(fakekube, "/api/v1/namespaces/default/pods/held", {"metadata": {"finalizers": None}})
    assert names(fakekube) == []


@pytest.mark.fakekube(nodes=2)
def test_an_orphan_that_already_finished_is_deleted_without_a_status_write(fakekube: Cluster) -> None:
    fakekube.create(pod("done", node="node-1", behaviour={"run_for_s": 1}, restartPolicy="Never"))
    at(fakekube, 5)
    assert fakekube.get("v1", "Pod", "done")["status"]["phase"] == "Succeeded"
    rv = fakekube.store.resource_version
    fakekube.delete("v1", "Node", "node-1", "")
    at(fakekube, 60)  # noticed at the pass at 20 s, quarantined until 60 s
    # No status write: only the grace-0 delete's two events (marked, then removed).
    assert [change[0] for change in writes(fakekube, rv, "done")] == ["MODIFIED", "DELETED"]
