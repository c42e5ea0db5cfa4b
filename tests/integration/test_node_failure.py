"""The headline scenario: a node stops sending heartbeats; exact virtual times, as upstream.

Timeline (upstream 1.33 defaults; the node's last Lease renewal is at t=0):
  t=55  the first monitor pass after the 50 s grace marks it Ready=Unknown (passes run every 5 s)
  t=60  the next pass taints it node.kubernetes.io/unreachable:NoExecute (upstream acts on
        the Ready status it observed before the pass: one period after the Unknown mark)
  t=120 a pod tolerating unreachable for 60 s is deleted
  t=360 pods with the default 300 s toleration (DefaultTolerationSeconds) are deleted
  never pods tolerating unreachable without tolerationSeconds
"""

from __future__ import annotations

from fakekube import Cluster
from tests.integration.timeline import at


def pod(name: str, node: str, tolerations: list | None = None) -> dict:
    spec: dict = {"nodeName": node, "containers": [{"name": "c", "image": "nginx:1.27"}]}
    if tolerations is not None:
        spec["tolerations"] = tolerations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


UNREACHABLE_60S = [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
                    "tolerationSeconds": 60}]
UNREACHABLE_FOREVER = [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"}]


def ready(cluster: Cluster, node: str) -> str:
    conditions = cluster.get("v1", "Node", node, "")["status"]["conditions"]
    return next(c["status"] for c in conditions if c["type"] == "Ready")


def noexecute(cluster: Cluster, node: str) -> list[tuple[str, str]]:
    taints = cluster.get("v1", "Node", node, "")["spec"].get("taints") or []
    return [(t["key"], t["timeAdded"]) for t in taints if t["effect"] == "NoExecute"]


def deleting(cluster: Cluster, name: str) -> str | None:
    return cluster.get("v1", "Pod", name)["metadata"].get("deletionTimestamp")


def make_cluster() -> Cluster:
    cluster = Cluster(nodes=3)
    cluster.create(pod("default-toleration", "node-1"))
    cluster.create(pod("tolerates-60s", "node-1", UNREACHABLE_60S))
    cluster.create(pod("tolerates-forever", "node-1", UNREACHABLE_FOREVER))
    cluster.create(pod("elsewhere", "node-2"))
    cluster.fail_node("node-1")
    return cluster


def test_default_tolerations_are_added_at_admission() -> None:
    cluster = make_cluster()
    tolerations = cluster.get("v1", "Pod", "default-toleration")["spec"]["tolerations"]
    assert tolerations == [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    ]
    # A pod tolerating unreachable already gets only the not-ready default.
    added = cluster.get("v1", "Pod", "tolerates-60s")["spec"]["tolerations"]
    assert [t["key"] for t in added] == ["node.kubernetes.io/unreachable", "node.kubernetes.io/not-ready"]


def test_node_goes_unknown_then_tainted_at_upstream_times() -> None:
    cluster = make_cluster()
    at(cluster, 54)
    assert ready(cluster, "node-1") == "True" and noexecute(cluster, "node-1") == []
    at(cluster, 55)
    assert ready(cluster, "node-1") == "Unknown"
    node = cluster.get("v1", "Node", "node-1", "")
    reasons = {c["type"]: c["reason"] for c in node["status"]["conditions"]}
    assert set(reasons.values()) == {"NodeStatusUnknown"}
    assert noexecute(cluster, "node-1") == []
    at(cluster, 60)
    assert noexecute(cluster, "node-1") == [("node.kubernetes.io/unreachable", "2025-01-01T00:01:00Z")]
    assert ready(cluster, "node-2") == "True" and noexecute(cluster, "node-2") == []


def test_pods_are_evicted_when_their_tolerations_run_out() -> None:
    cluster = make_cluster()
    at(cluster, 119)
    assert deleting(cluster, "tolerates-60s") is None
    at(cluster, 120)
    assert deleting(cluster, "tolerates-60s") == "2025-01-01T00:02:30Z"  # 120 s + 30 s grace
    conditions = cluster.get("v1", "Pod", "tolerates-60s")["status"]["conditions"]
    assert {"type": "DisruptionTarget", "reason": "DeletionByTaintManager"}.items() <= conditions[-1].items()
    at(cluster, 359)
    assert deleting(cluster, "default-toleration") is None
    at(cluster, 360)
    assert deleting(cluster, "default-toleration") == "2025-01-01T00:06:30Z"
    at(cluster, 3600)
    assert deleting(cluster, "tolerates-forever") is None
    assert deleting(cluster, "elsewhere") is None


def test_eviction_events_are_recorded() -> None:
    cluster = make_cluster()
    at(cluster, 130)
    events = [(e["reason"], e["message"], e["involvedObject"]["name"], e["firstTimestamp"])
              for e in cluster.list("v1", "Event", "default")]
    assert ("TaintManagerEviction", "Marking for deletion Pod default/tolerates-60s", "tolerates-60s",
            "2025-01-01T00:02:00Z") in events
    assert ("NodeNotReady", "Node node-1 status is now: NodeNotReady", "node-1", "2025-01-01T00:00:55Z") in events


def test_a_recovered_node_loses_its_taints_and_keeps_its_pods() -> None:
    cluster = make_cluster()
    at(cluster, 60)
    cluster.recover_node("node-1")
    at(cluster, 70)
    assert ready(cluster, "node-1") == "True"
    assert noexecute(cluster, "node-1") == []
    at(cluster, 400)
    assert deleting(cluster, "default-toleration") is None
