"""Node affinity and inter-pod affinity on a whole cluster: placement, upstream's
FailedScheduling messages, and pods retried when a node or pod change lets them fit."""

from __future__ import annotations

from typing import Any

from fakekube import Cluster
from fakekube.api.verbs.apiserver import WriteOptions
from fakekube.cluster.nodespec import NodeSpec
from fakekube.scheduler.registry import IN_TREE

Obj = dict[str, Any]
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def pod(name: str, labels: dict[str, str] | None = None, node: str = "", node_selector: dict[str, str] | None = None,
        affinity: Obj | None = None) -> Obj:
    spec: Obj = {"containers": [{"name": "c", "image": "nginx:1.27"}]}
    if node:
        spec["nodeName"] = node
    if node_selector:
        spec["nodeSelector"] = node_selector
    if affinity:
        spec["affinity"] = affinity
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": labels or {}}, "spec": spec}


def required(kind: str, topology_key: str, **match_labels: str) -> Obj:
    """{kind: required term} for podAffinity / podAntiAffinity."""
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": match_labels}, "topologyKey": topology_key}]}}


def node_of(cluster: Cluster, name: str) -> str | None:
    return cluster.get("v1", "Pod", name)["spec"].get("nodeName")


def failure(cluster: Cluster, name: str) -> str:
    events = [e for e in cluster.events("default", involved_name=name) if e["reason"] == "FailedScheduling"]
    return events[-1]["message"] if events else ""


def message(nodes: int, reason: str, preemption: str) -> str:
    """Upstream's FailedScheduling text when every node failed for ``reason``; the
    preemption part is there once DefaultPreemption is registered (TEMPORARY check while
    the in-tree plugins land)."""
    text = f"0/{nodes} nodes are available: {nodes} {reason}."
    if "DefaultPreemption" in IN_TREE:
        text += f" preemption: 0/{nodes} nodes are available: {nodes} {preemption}."
    return text


def label_node(cluster: Cluster, name: str, **labels: str) -> None:
    node = cluster.get("v1", "Node", name, namespace="")
    node["metadata"]["labels"].update(labels)
    cluster.api.update(cluster.resource("v1", "Node"), "", name, node, WriteOptions())
    cluster.settle()


def test_anti_affinity_spreads_three_replicas_and_leaves_the_fourth_pending() -> None:
    cluster = Cluster(nodes=3)
    spread = required("podAntiAffinity", HOST, app="web")
    for index in range(1, 5):
        cluster.create(pod(f"web-{index}", {"app": "web"}, affinity=spread))
    cluster.settle()
    placed = [node_of(cluster, f"web-{index}") for index in range(1, 4)]
    assert sorted(n or "" for n in placed) == ["node-1", "node-2", "node-3"]
    assert node_of(cluster, "web-4") is None
    assert failure(cluster, "web-4") == message(3, "node(s) didn't match pod anti-affinity rules",
                                                "No preemption victims found for incoming pod")
    # one replica goes: the pending one takes its node
    freed = placed[1]
    cluster.delete("v1", "Pod", "web-2")
    cluster.advance(15)
    assert node_of(cluster, "web-4") == freed


def test_existing_pods_anti_affinity_keeps_newcomers_away() -> None:
    cluster = Cluster(nodes=2)
    cluster.create(pod("loner", {"app": "loner"}, node="node-1", affinity=required("podAntiAffinity", HOST, app="web")))
    for index in range(1, 3):
        cluster.create(pod(f"web-{index}", {"app": "web"}))
    cluster.settle()
    assert [node_of(cluster, "web-1"), node_of(cluster, "web-2")] == ["node-2", "node-2"]


def test_pod_affinity_follows_the_zone_and_waits_for_a_partner() -> None:
    cluster = Cluster(nodes=[NodeSpec(zone="a", count=2), NodeSpec(zone="b", count=2)])
    near_db = required("podAffinity", ZONE, app="db")
    cluster.create(pod("web-1", {"app": "web"}, affinity=near_db))
    cluster.settle()
    assert node_of(cluster, "web-1") is None
    assert failure(cluster, "web-1") == message(4, "node(s) didn't match pod affinity rules",
                                                "Preemption is not helpful for scheduling")
    cluster.create(pod("db", {"app": "db"}, node="node-4"))  # zone b
    cluster.advance(15)
    assert node_of(cluster, "web-1") in ("node-3", "node-4")
    for index in range(2, 6):
        cluster.create(pod(f"web-{index}", {"app": "web"}, affinity=near_db))
    cluster.settle()
    assert {node_of(cluster, f"web-{index}") for index in range(2, 6)} <= {"node-3", "node-4"}


def test_first_pod_of_a_self_affine_group_is_scheduled() -> None:
    cluster = Cluster(nodes=[NodeSpec(zone="a"), NodeSpec(zone="b")])
    together = required("podAffinity", ZONE, app="batch")
    for index in range(1, 5):
        cluster.create(pod(f"batch-{index}", {"app": "batch"}, affinity=together))
    cluster.settle()
    assert len({node_of(cluster, f"batch-{index}") for index in range(1, 5)}) == 1


def test_preferred_pod_affinity_and_anti_affinity_steer_placement() -> None:
    cluster = Cluster(nodes=3)
    cluster.create(pod("cache", {"app": "cache"}, node="node-3"))
    cluster.create(pod("noisy", {"app": "noisy"}, node="node-1"))
    affinity = {
        "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 50, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": HOST}}]},
        "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "noisy"}},
                                                "topologyKey": HOST}}]},
    }
    cluster.create(pod("app", {"app": "app"}, affinity=affinity))
    cluster.settle()
    assert node_of(cluster, "app") == "node-3"


def test_node_selector_waits_for_a_labelled_node() -> None:
    cluster = Cluster(nodes=2)
    cluster.create(pod("gpu-job", node_selector={"accelerator": "gpu"}))
    cluster.settle()
    assert node_of(cluster, "gpu-job") is None
    assert failure(cluster, "gpu-job") == message(2, "node(s) didn't match Pod's node affinity/selector",
                                                  "Preemption is not helpful for scheduling")
    label_node(cluster, "node-2", accelerator="gpu")
    cluster.advance(15)
    assert node_of(cluster, "gpu-job") == "node-2"


def test_required_and_preferred_node_affinity() -> None:
    cluster = Cluster(nodes=[NodeSpec(labels={"disk": "hdd", "cores": "4"}), NodeSpec(labels={"disk": "ssd", "cores": "16"}),
                             NodeSpec(labels={"disk": "ssd", "cores": "64"})])
    affinity = {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["8"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 80, "preference": {"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["32"]}]}}],
    }}
    cluster.create(pod("big", affinity=affinity))
    pinned = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}}}
    cluster.create(pod("pinned", affinity=pinned))
    cluster.settle()
    assert node_of(cluster, "big") == "node-3"
    assert node_of(cluster, "pinned") == "node-1"


def test_namespace_selectors_read_the_namespaces_labels() -> None:
    cluster = Cluster(nodes=2)
    cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a", "labels": {"team": "a"}}})
    web_a = pod("web-a", {"app": "web"}, node="node-1")
    web_a["metadata"]["namespace"] = "team-a"
    cluster.create(web_a)
    # an existing pod whose anti-affinity names the default namespace by its automatic label
    guard = pod("guard", {"app": "guard"}, node="node-2", affinity={"podAntiAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "web"}},
             "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "default"}},
             "topologyKey": HOST}]}})
    cluster.create(guard)
    # required anti-affinity to app=web pods of every namespace labelled team=a
    avoid_team_a = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "web"}}, "namespaceSelector": {"matchLabels": {"team": "a"}},
         "topologyKey": HOST}]}}
    cluster.create(pod("web", {"app": "web"}, affinity=avoid_team_a))
    cluster.settle()
    assert node_of(cluster, "web") is None
    text = "0/2 nodes are available: 1 node(s) didn't match pod anti-affinity rules, 1 node(s) didn't satisfy " \
           "existing pods anti-affinity rules."
    if "DefaultPreemption" in IN_TREE:
        text += " preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    assert failure(cluster, "web") == text
    # 1.33's hint does not requeue on the deletion of a pod whose *own* anti-affinity was in
    # the way (kubernetes#134393, fixed in 1.35): the pod waits for the 5-minute flush
    cluster.delete("v1", "Pod", "guard")
    cluster.advance(60)
    assert node_of(cluster, "web") is None
    cluster.advance(300)
    assert node_of(cluster, "web") == "node-2"
