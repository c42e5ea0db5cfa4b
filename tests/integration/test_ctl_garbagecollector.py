"""The garbage collector (kube-controller-manager 1.33) at exact virtual times.

Background deletion takes dependents in the same instant as their owner; foreground keeps
the owner (``foregroundDeletion``) until every dependent with ``blockOwnerDeletion`` is
gone, however long its graceful deletion takes; orphan releases the dependents and then
the owner; dangling references (a uid that no longer exists, a namespaced owner in another
namespace) are collected as upstream's attemptToDeleteItem does, with the
OwnerRefInvalidNamespace warning; a cluster-scoped dependent of a namespaced kind is never
collected.
"""

from __future__ import annotations

import json
from typing import Any

from fakekube import Cluster
from fakekube.api.verbs.deletion import DeleteOptions
from fakekube.kubelet.behaviour import BEHAVIOUR_ANNOTATION
from tests.integration.timeline import at

Obj = dict[str, Any]
MERGE = "application/merge-patch+json"


def cm(name: str, *owners: Obj, namespace: str = "default", finalizers: list[str] | None = None,
       block: bool = True) -> Obj:
    meta: Obj = {"name": name, "namespace": namespace}
    if owners:
        meta["ownerReferences"] = [ref(owner, block) for owner in owners]
    if finalizers:
        meta["finalizers"] = finalizers
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}


def ref(owner: Obj, block: bool = True) -> Obj:
    """A reference to ``owner`` (an object as the apiserver returned it)."""
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"], "blockOwnerDeletion": block}


def slow_pod(name: str, owner: Obj, stop_delay_s: int, block: bool = True) -> Obj:
    """A pod on node-1 whose container takes ``stop_delay_s`` to stop (within its 30 s grace)."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "ownerReferences": [ref(owner, block)],
                         "annotations": {BEHAVIOUR_ANNOTATION: json.dumps({"stop_delay_s": stop_delay_s})}},
            "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx:1.27"}]}}


def delete(cluster: Cluster, kind: str, name: str, namespace: str = "default", api_version: str = "v1",
           **options: Any) -> None:
    cluster.api.delete(cluster.resource(api_version, kind), namespace, name, DeleteOptions(**options))
    cluster.settle()


def names(cluster: Cluster, kind: str = "ConfigMap", namespace: str = "default", api_version: str = "v1") -> list[str]:
    return [o["metadata"]["name"] for o in cluster.list(api_version, kind, namespace)
            if o["metadata"]["name"] != "kube-root-ca.crt"]


def deletions(cluster: Cluster, since_rv: int) -> list[str]:
    """``<plural>/<name>`` of every object removed after ``since_rv``, in write order."""
    return [f"{c.resource}/{c.name}" for c in cluster.store.changes_since(since_rv) if c.type == "DELETED"]


def test_background_deletion_takes_every_dependent_in_the_same_instant() -> None:
    cluster = Cluster()
    owner = cluster.create(cm("owner"))
    cluster.create(cm("child-a", owner))
    cluster.create(cm("child-b", owner, block=False))
    cluster.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "ownerReferences": [ref(owner)]}})
    grandchild_owner = cluster.get("v1", "ConfigMap", "child-a")
    cluster.create(cm("grandchild", grandchild_owner))
    rv = cluster.store.resource_version
    delete(cluster, "ConfigMap", "owner", propagation_policy="Background")
    assert deletions(cluster, rv) == ["configmaps/owner", "configmaps/child-a", "configmaps/child-b", "secrets/s",
                                      "configmaps/grandchild"]
    assert names(cluster) == [] and cluster.now == cluster.config.start_time


def test_a_dependent_with_a_live_owner_only_loses_its_reference_to_the_deleted_one() -> None:
    cluster = Cluster()
    first, second = cluster.create(cm("first")), cluster.create(cm("second"))
    cluster.create(cm("shared", first, second))
    delete(cluster, "ConfigMap", "first")
    shared = cluster.get("v1", "ConfigMap", "shared")
    assert [r["name"] for r in shared["metadata"]["ownerReferences"]] == ["second"]
    delete(cluster, "ConfigMap", "second")
    assert names(cluster) == []


def test_dangling_references_at_creation_and_after_the_owner_is_replaced() -> None:
    cluster = Cluster()
    owner = cluster.create(cm("owner"))
    ghost = dict(ref(owner), uid="00000000-0000-0000-0000-000000000000")
    cluster.create({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "ghostly", "ownerReferences": [ghost]}})
    cluster.create({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": "half", "ownerReferences": [ref(owner), ghost]}})
    assert names(cluster) == ["half", "owner"]
    assert [r["uid"] for r in cluster.get("v1", "ConfigMap", "half")["metadata"]["ownerReferences"]] \
        == [owner["metadata"]["uid"]]
    # The owner is deleted with its dependents orphaned, then a namesake appears: the
    # reference names a uid that no longer exists, so a later check collects it.
    cluster.create(cm("child", owner))
    delete(cluster, "ConfigMap", "owner", propagation_policy="Orphan")
    assert names(cluster) == ["child", "half"]
    assert "ownerReferences" not in cluster.get("v1", "ConfigMap", "child")["metadata"]


def test_foreground_waits_for_blocking_dependents_through_their_graceful_deletion() -> None:
    cluster = Cluster(nodes=1)
    owner = cluster.create(cm("owner"))
    cluster.create(slow_pod("blocking", owner, stop_delay_s=10))
    cluster.create(slow_pod("free", owner, stop_delay_s=20, block=False))
    cluster.create(cm("config", owner, block=False))
    at(cluster, 5)  # both running
    delete(cluster, "ConfigMap", "owner", propagation_policy="Foreground")
    held = cluster.get("v1", "ConfigMap", "owner")["metadata"]
    assert held["finalizers"] == ["foregroundDeletion"] and held["deletionTimestamp"] == "2025-01-01T00:00:05Z"
    assert names(cluster) == ["owner"]  # the non-blocking ConfigMap went at once
    pods = {p["metadata"]["name"]: p["metadata"]["deletionTimestamp"] for p in cluster.list("v1", "Pod", "default")}
    assert pods == {"blocking": "2025-01-01T00:00:35Z", "free": "2025-01-01T00:00:35Z"}
    at(cluster, 14.9)
    assert names(cluster) == ["owner"]
    at(cluster, 15)  # the blocking pod's container stopped: the owner goes with it
    assert names(cluster) == [] and names(cluster, "Pod") == ["free"]
    at(cluster, 25)
    assert names(cluster, "Pod") == []


def test_foreground_cascades_down_a_chain_and_a_cycle_does_not_hang() -> None:
    cluster = Cluster()
    top = cluster.create(cm("top"))
    middle = cluster.create(cm("middle", top))
    cluster.create(cm("bottom", middle, finalizers=["example.com/hold"]))
    delete(cluster, "ConfigMap", "top", propagation_policy="Foreground")
    assert names(cluster) == ["bottom", "middle", "top"]
    assert cluster.get("v1", "ConfigMap", "middle")["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert cluster.get("v1", "ConfigMap", "bottom")["metadata"]["deletionTimestamp"]
    cluster.api.patch(cluster.resource("v1", "ConfigMap"), "default", "bottom", MERGE,
                      b'{"metadata":{"finalizers":null}}')
    cluster.settle()
    assert names(cluster) == []
    # Two objects owning each other, both blocking: foreground deletion still ends.
    a = cluster.create(cm("a"))
    b = cluster.create(cm("b", a))
    cluster.api.patch(cluster.resource("v1", "ConfigMap"), "default", "a", MERGE,
                      json.dumps({"metadata": {"ownerReferences": [ref(b)]}}).encode())
    cluster.settle()
    delete(cluster, "ConfigMap", "a", propagation_policy="Foreground")
    assert names(cluster) == []


def test_a_blocking_dependent_letting_go_releases_the_waiting_owner() -> None:
    cluster = Cluster()
    owner = cluster.create(cm("owner"))
    cluster.create(cm("held", owner, finalizers=["example.com/hold"]))
    delete(cluster, "ConfigMap", "owner", propagation_policy="Foreground")
    assert names(cluster) == ["held", "owner"]
    cluster.api.patch(cluster.resource("v1", "ConfigMap"), "default", "held", MERGE,
                      b'{"metadata":{"ownerReferences":null}}')
    cluster.settle()
    assert names(cluster) == ["held"]


def test_orphan_releases_dependents_and_keeps_their_other_owners() -> None:
    cluster = Cluster()
    owner, other = cluster.create(cm("owner")), cluster.create(cm("other"))
    cluster.create(cm("only", owner))
    cluster.create(cm("both", owner, other))
    rv = cluster.store.resource_version
    delete(cluster, "ConfigMap", "owner", propagation_policy="Orphan")
    assert names(cluster) == ["both", "only", "other"]
    assert "ownerReferences" not in cluster.get("v1", "ConfigMap", "only")["metadata"]
    assert [r["name"] for r in cluster.get("v1", "ConfigMap", "both")["metadata"]["ownerReferences"]] == ["other"]
    writes = [(c.type, c.name) for c in cluster.store.changes_since(rv)]
    # Marked, each dependent released (in key order), the finalizer removed, gone.
    # The orphan finalizer's removal deletes the owner at once: one DELETED, no MODIFIED
    # before it (upstream's Store.Update never writes the emptied version).
    assert writes == [("MODIFIED", "owner"), ("MODIFIED", "both"), ("MODIFIED", "only"), ("DELETED", "owner")]


def test_cluster_scoped_owners_and_a_nodes_lease() -> None:
    cluster = Cluster(nodes=2)
    role = cluster.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                           "metadata": {"name": "owner-role"}})
    cluster.create(cm("by-role", role))
    cluster.create(cm("elsewhere", role, namespace="kube-public"))
    delete(cluster, "ClusterRole", "owner-role", namespace="", api_version="rbac.authorization.k8s.io/v1")
    assert names(cluster) == [] and names(cluster, namespace="kube-public") == []
    assert names(cluster, "Lease", "kube-node-lease", "coordination.k8s.io/v1") == ["node-1", "node-2"]
    delete(cluster, "Node", "node-2", namespace="")
    assert names(cluster, "Lease", "kube-node-lease", "coordination.k8s.io/v1") == ["node-1"]


def test_a_namespaced_owner_in_another_namespace_is_absent_with_a_warning() -> None:
    cluster = Cluster()
    cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    owner = cluster.create(cm("owner"))
    cluster.create(cm("astray", owner, namespace="other"))
    assert names(cluster, namespace="other") == []
    [event] = cluster.events(reason="OwnerRefInvalidNamespace")
    uid = owner["metadata"]["uid"]
    assert event["type"] == "Warning" and event["source"] == {"component": "garbage-collector-controller"}
    assert event["involvedObject"]["name"] == "astray" and event["involvedObject"]["namespace"] == "other"
    assert event["message"] == (f'ownerRef [v1/ConfigMap, namespace: other, name: owner, uid: {uid}] '
                                f'does not exist in namespace "other"')
    assert names(cluster) == ["owner"]


def test_a_cluster_scoped_dependent_of_a_namespaced_kind_is_never_collected() -> None:
    cluster = Cluster()
    owner = cluster.create(cm("owner"))
    cluster.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                    "metadata": {"name": "odd", "ownerReferences": [ref(owner)]}})
    [event] = cluster.events(reason="OwnerRefInvalidNamespace")
    assert event["metadata"]["namespace"] == "default" and event["involvedObject"]["kind"] == "ClusterRole"
    assert event["message"] == (f'ownerRef [v1/ConfigMap, namespace: , name: owner, uid: {owner["metadata"]["uid"]}] '
                                'does not exist in namespace ""')
    delete(cluster, "ConfigMap", "owner")
    assert names(cluster, "ClusterRole", "", "rbac.authorization.k8s.io/v1").count("odd") == 1


def test_an_owner_reference_to_an_unserved_kind_is_left_alone() -> None:
    cluster = Cluster()
    odd = {"apiVersion": "example.com/v1", "kind": "Widget", "name": "w", "uid": "1234"}
    cluster.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kept", "ownerReferences": [odd]}})
    assert names(cluster) == ["kept"]


def test_a_deployment_deleted_in_the_foreground_waits_for_its_pods() -> None:
    cluster = Cluster(nodes=1)
    behaviour = json.dumps({"stop_delay_s": 10})
    cluster.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                    "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                             "template": {"metadata": {"labels": {"app": "web"},
                                                       "annotations": {BEHAVIOUR_ANNOTATION: behaviour}},
                                          "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}})
    at(cluster, 5)
    assert len(names(cluster, "Pod")) == 2
    delete(cluster, "Deployment", "web", api_version="apps/v1", propagation_policy="Foreground")
    assert names(cluster, "Deployment", api_version="apps/v1") == ["web"]
    [rs] = cluster.list("apps/v1", "ReplicaSet", "default")
    assert rs["metadata"]["finalizers"] == ["foregroundDeletion"]
    at(cluster, 14.9)
    assert len(names(cluster, "Pod")) == 2
    at(cluster, 15)
    assert names(cluster, "Pod") == [] and names(cluster, "ReplicaSet", api_version="apps/v1") == []
    assert names(cluster, "Deployment", api_version="apps/v1") == []


def test_replication_controllers_orphan_their_pods_by_default() -> None:
    cluster = Cluster(nodes=1)
    cluster.create({"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc"},
                    "spec": {"replicas": 2, "selector": {"app": "rc"},
                             "template": {"metadata": {"labels": {"app": "rc"}},
                                          "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}})
    at(cluster, 2)
    delete(cluster, "ReplicationController", "rc")  # no propagation policy: core/v1's default orphans
    assert names(cluster, "ReplicationController") == []
    pods = cluster.list("v1", "Pod", "default")
    assert len(pods) == 2 and all("ownerReferences" not in p["metadata"] for p in pods)
