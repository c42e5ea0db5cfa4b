"""Static pods run by the simulated kubelets, seen in the API as mirror pods (upstream's rules)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fakekube import Cluster
from fakekube.api.verbs.deletion import DeleteOptions
from fakekube.cluster.nodespec import NodeSpec

Obj = dict[str, Any]
MIRROR = "kubernetes.io/config.mirror"
HASH = "kubernetes.io/config.hash"


def manifest(name: str, namespace: str | None = "kube-system", **spec: Any) -> Obj:
    meta: Obj = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "main", "image": f"example/{name}:1"}], **spec}}


def mirror(cluster: Cluster, name: str, namespace: str = "kube-system") -> Obj | None:
    return cluster.store.get(("", "pods"), (namespace, name))


def get(cluster: Cluster, name: str, namespace: str = "kube-system") -> Obj:
    return cluster.get("v1", "Pod", name, namespace)


def running(pod: Obj) -> tuple[str, str, int]:
    """(containerID, startedAt, restartCount) of the pod's one container."""
    status = pod["status"]["containerStatuses"][0]
    return status["containerID"], status["state"]["running"]["startedAt"], status["restartCount"]


def test_every_kubelet_creates_a_mirror_pod_of_its_static_pods() -> None:
    cluster = Cluster(nodes=2, static_pods=(manifest("kube-proxy", hostNetwork=True),))
    for node in ("node-1", "node-2"):
        pod = get(cluster, f"kube-proxy-{node}")
        meta = pod["metadata"]
        node_uid = cluster.get("v1", "Node", node, "")["metadata"]["uid"]
        assert meta["ownerReferences"] == [
            {"apiVersion": "v1", "kind": "Node", "name": node, "uid": node_uid, "controller": True}]
        assert meta["annotations"][MIRROR] == meta["annotations"][HASH] and len(meta["annotations"][HASH]) == 32
        assert meta["annotations"]["kubernetes.io/config.source"] == "file"
        assert meta["annotations"]["kubernetes.io/config.seen"] == "2025-01-01T00:00:00Z"
        assert pod["spec"]["nodeName"] == node
        assert {"operator": "Exists", "effect": "NoExecute"} in pod["spec"]["tolerations"]
    assert get(cluster, "kube-proxy-node-1")["metadata"]["annotations"][HASH] != \
        get(cluster, "kube-proxy-node-2")["metadata"]["annotations"][HASH]


def test_a_mirror_pod_runs_like_any_bound_pod() -> None:
    cluster = Cluster(nodes=1, static_pods=(manifest("agent"),))
    cluster.advance(1)
    status = get(cluster, "agent-node-1")["status"]
    assert (status["phase"], status["hostIP"], status["podIP"]) == ("Running", "172.18.0.2", "10.224.0.2")


def test_a_static_pod_without_namespace_lands_in_default_and_names_use_the_lowercased_node() -> None:
    cluster = Cluster(nodes=(NodeSpec(name="cp"),), static_pods=(manifest("web", namespace=None),))
    assert mirror(cluster, "web-cp", "default") is not None


def test_node_static_pods_run_on_that_node_only() -> None:
    nodes = (NodeSpec(name="cp", static_pods=(manifest("etcd", hostNetwork=True),)), NodeSpec(count=2))
    cluster = Cluster(nodes=nodes)
    assert [p["metadata"]["name"] for p in cluster.list("v1", "Pod", "kube-system")] == ["etcd-cp"]


def test_manifests_are_read_once_from_the_static_pod_path_in_name_order(tmp_path: Path) -> None:
    for name in ("zeta", "alpha"):
        (tmp_path / f"{name}.yaml").write_text(
            f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: kube-system}}\n"
            f"spec: {{containers: [{{name: c, image: {name}}}]}}\n")
    (tmp_path / ".swap.yaml").write_text("not: a pod")
    cluster = Cluster(nodes=1, static_pod_path=str(tmp_path))
    assert [m.source for m in cluster.kubelets.static_pods.manifests] == ["alpha.yaml", "zeta.yaml"]
    created = [c.name for c in cluster.store.changes_since(0) if c.resource == "pods" and c.type == "ADDED"]
    assert created == ["alpha-node-1", "zeta-node-1"]
    (tmp_path / "alpha.yaml").unlink()
    cluster.reset()  # a reset rebuilds from the manifests read at the start
    assert mirror(cluster, "alpha-node-1") is not None


def test_a_deleted_mirror_pod_is_recreated_at_once_and_its_containers_keep_running() -> None:
    cluster = Cluster(nodes=1, static_pods=(manifest("agent"),))
    cluster.advance(5)
    before = get(cluster, "agent-node-1")
    cluster.delete("v1", "Pod", "agent-node-1", "kube-system")  # graceful, 30 s: the kubelet deletes it with grace 0
    after = get(cluster, "agent-node-1")
    assert after["metadata"]["uid"] != before["metadata"]["uid"]
    assert after["metadata"].get("deletionTimestamp") is None
    assert after["metadata"]["annotations"] == before["metadata"]["annotations"]
    assert running(after) == running(before) == (running(before)[0], "2025-01-01T00:00:01Z", 0)
    assert after["status"]["podIP"] == before["status"]["podIP"]


def test_a_force_deleted_mirror_pod_is_recreated_too() -> None:
    cluster = Cluster(nodes=1, static_pods=(manifest("agent"),))
    cluster.advance(5)
    before = get(cluster, "agent-node-1")
    cluster.api.delete(cluster.resource("v1", "Pod"), "kube-system", "agent-node-1", DeleteOptions(grace_period_s=0))
    cluster.settle()
    assert running(get(cluster, "agent-node-1")) == running(before)


def test_a_kubelet_that_is_down_does_not_recreate_its_mirror_pod_until_it_is_back() -> None:
    cluster = Cluster(nodes=2, static_pods=(manifest("agent"),))
    cluster.advance(5)
    before = get(cluster, "agent-node-1")
    cluster.fail_node("node-1")
    cluster.delete("v1", "Pod", "agent-node-1", "kube-system")
    cluster.advance(60)
    assert get(cluster, "agent-node-1")["metadata"]["uid"] == before["metadata"]["uid"]  # still Terminating
    assert get(cluster, "agent-node-1")["metadata"]["deletionTimestamp"] == "2025-01-01T00:00:35Z"
    cluster.recover_node("node-1")
    after = get(cluster, "agent-node-1")
    assert after["metadata"]["uid"] != before["metadata"]["uid"] and "deletionTimestamp" not in after["metadata"]
    assert running(after) == running(before)


def test_a_partitioned_kubelet_cannot_recreate_its_mirror_pod() -> None:
    cluster = Cluster(nodes=1, static_pods=(manifest("agent"),))
    cluster.partition_node("node-1")
    cluster.api.delete(cluster.resource("v1", "Pod"), "kube-system", "agent-node-1", DeleteOptions(grace_period_s=0))
    cluster.advance(30)
    assert mirror(cluster, "agent-node-1") is None
    cluster.heal_node("node-1")
    assert mirror(cluster, "agent-node-1") is not None


def test_no_mirror_pod_is_recreated_for_a_deleted_node() -> None:
    cluster = Cluster(nodes=1, static_pods=(manifest("agent"),))
    cluster.delete("v1", "Node", "node-1", "")
    cluster.api.delete(cluster.resource("v1", "Pod"), "kube-system", "agent-node-1", DeleteOptions(grace_period_s=0))
    cluster.settle()
    assert mirror(cluster, "agent-node-1") is None


def test_a_node_registered_later_gets_the_static_pods_for_every_node() -> None:
    cluster = Cluster(nodes=0, static_pods=(manifest("agent"),))
    cluster.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "late"}})
    assert mirror(cluster, "agent-late") is not None


def test_an_ordinary_pod_holding_the_name_is_left_alone() -> None:
    cluster = Cluster(nodes=1, static_pods=(manifest("agent"),))
    cluster.fail_node("node-1")  # replace the mirror pod by an ordinary pod while the kubelet is down
    cluster.api.delete(cluster.resource("v1", "Pod"), "kube-system", "agent-node-1", DeleteOptions(grace_period_s=0))
    cluster.create({**manifest("agent-node-1"), "spec": {"nodeName": "node-1",
                                                        "containers": [{"name": "c", "image": "x"}]}})
    cluster.recover_node("node-1")
    assert MIRROR not in (get(cluster, "agent-node-1")["metadata"].get("annotations") or {})
    assert not cluster.internal_errors


def test_static_pods_tolerate_an_unreachable_node_and_are_not_evicted() -> None:
    cluster = Cluster(nodes=3, static_pods=(manifest("agent"),))
    cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
                    "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx"}]}})
    cluster.fail_node("node-1")
    cluster.advance(400)
    assert get(cluster, "web", "default")["metadata"]["deletionTimestamp"]  # evicted after 300 s (Terminating)
    assert get(cluster, "agent-node-1")["metadata"].get("deletionTimestamp") is None


def test_an_invalid_manifest_fails_when_the_cluster_is_built() -> None:
    bad = manifest("agent")
    bad["spec"]["containers"][0]["name"] = "Not_A_Name"
    with pytest.raises(ValueError, match=r"^staticPods\[0\]: Pod \"agent-node-1\" is invalid: spec.containers\[0\].name"):
        Cluster(nodes=1, static_pods=(bad,))


def test_a_manifest_for_a_missing_namespace_fails_when_the_cluster_is_built() -> None:
    with pytest.raises(ValueError, match=r'^staticPods\[0\]: namespaces "monitoring" not found'):
        Cluster(nodes=1, static_pods=(manifest("agent", namespace="monitoring"),))
