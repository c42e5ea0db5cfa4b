"""The namespace controller (kube-controller-manager 1.33) at exact virtual times.

A deleted namespace is Terminating at once; the controller's first pass comes 5 s after
the deletion, its status write brings the next 5 s later, content still going brings it
back ``estimate / 2 + 1`` s later (30 s pod grace: 16 s; finalizers: 8 s); pods go first
(OrderedNamespaceDeletion, on in 1.33); the five deletion conditions carry upstream's
reasons and messages; ``namespaces/finalize`` ends it. Creating in a Terminating
namespace is refused with upstream's 403.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from fakekube import Cluster
from fakekube.api.machinery.errors import ApiError
from fakekube.api.verbs.deletion import DeleteOptions
from fakekube.kubelet.behaviour import BEHAVIOUR_ANNOTATION
from tests.integration.timeline import at

Obj = dict[str, Any]
MERGE = "application/merge-patch+json"
NS = "demo"


def deployment(name: str, replicas: int = 2, stop_delay_s: float = 0) -> Obj:
    annotations = {BEHAVIOUR_ANNOTATION: json.dumps({"stop_delay_s": stop_delay_s})} if stop_delay_s else {}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": NS},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}, "annotations": annotations},
                                  "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}}


def configmap(name: str, finalizers: list[str] | None = None) -> Obj:
    meta: Obj = {"name": name, "namespace": NS}
    if finalizers:
        meta["finalizers"] = finalizers
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": "v"}}


def service(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": NS},
            "spec": {"selector": {"app": name}, "ports": [{"port": 80}]}}


def populated(cluster: Cluster) -> None:
    cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    for name in ("web", "api"):
        cluster.create(deployment(name))
        cluster.create(service(name))
    cluster.create(configmap("settings"))
    cluster.create(configmap("held", ["example.com/hold"]))


def namespace(cluster: Cluster) -> Obj | None:
    found = [n for n in cluster.list("v1", "Namespace") if n["metadata"]["name"] == NS]
    return found[0] if found else None


def conditions(cluster: Cluster) -> dict[str, tuple[str, str, str, str]]:
    """type → (status, reason, message, lastTransitionTime's HH:MM:SS)."""
    ns = namespace(cluster)
    assert ns is not None
    return {c["type"]: (c["status"], c["reason"], c["message"], c["lastTransitionTime"][11:19])
            for c in ns["status"].get("conditions") or []}


def content(cluster: Cluster) -> dict[str, int]:
    kinds = (("v1", "Pod"), ("apps/v1", "Deployment"), ("apps/v1", "ReplicaSet"), ("v1", "Service"),
             ("v1", "ConfigMap"), ("v1", "ServiceAccount"), ("discovery.k8s.io/v1", "EndpointSlice"))
    return {kind: n for api, kind in kinds if (n := len(cluster.list(api, kind, NS)))}


def settings(cluster: Cluster) -> bool:
    return any(c["metadata"]["name"] == "settings" for c in cluster.list("v1", "ConfigMap", NS))


ALL_OK = {
    "NamespaceDeletionDiscoveryFailure": ("False", "ResourcesDiscovered", "All resources successfully discovered"),
    "NamespaceDeletionGroupVersionParsingFailure": ("False", "ParsedGroupVersions",
                                                    "All legacy kube types successfully parsed"),
    "NamespaceDeletionContentFailure": ("False", "ContentDeleted",
                                        "All content successfully deleted, may be waiting on finalization"),
    "NamespaceContentRemaining": ("False", "ContentRemoved", "All content successfully removed"),
    "NamespaceFinalizersRemaining": ("False", "ContentHasNoFinalizers", "All content-preserving finalizers finished"),
}


def with_times(expected: dict[str, tuple[str, str, str]], when: str) -> dict[str, tuple[str, str, str, str]]:
    return {kind: (*value, when) for kind, value in expected.items()}


def test_deletion_finishes_once_the_custom_finalizer_is_removed_not_before() -> None:
    cluster = Cluster(nodes=2)
    populated(cluster)
    at(cluster, 10)
    assert content(cluster)["Pod"] == 4
    cluster.delete("v1", "Namespace", NS, "")
    ns = namespace(cluster)
    assert ns is not None and ns["status"] == {"phase": "Terminating"}
    assert ns["metadata"]["deletionTimestamp"] == "2025-01-01T00:00:10Z" and ns["spec"]["finalizers"] == ["kubernetes"]
    with pytest.raises(ApiError) as refused:
        cluster.create(configmap("late"))
    assert refused.value.code == 403
    assert refused.value.message == ('configmaps "late" is forbidden: unable to create new content in namespace demo '
                                     'because it is being terminated')
    at(cluster, 14.9)
    assert "ConfigMap" in content(cluster) and not conditions(cluster)
    # 00:00:15, the first pass: pods first. They are still in their grace period when it
    # looks, so nothing else is deleted yet and 1.33's conditions say nothing is left.
    at(cluster, 15)
    assert conditions(cluster) == with_times(ALL_OK, "00:00:15")
    assert "Pod" not in content(cluster) and content(cluster)["Deployment"] == 2  # the kubelets stopped them
    # 00:00:20 (its own status write + 5 s): everything else goes; the held ConfigMap stays.
    at(cluster, 20)
    assert content(cluster) == {"ConfigMap": 1}
    held = cluster.get("v1", "ConfigMap", "held", NS)["metadata"]
    assert held["deletionTimestamp"] == "2025-01-01T00:00:20Z"
    remaining = dict(ALL_OK,
                     NamespaceContentRemaining=("True", "SomeResourcesRemain",
                                                "Some resources are remaining: configmaps. has 1 resource instances"),
                     NamespaceFinalizersRemaining=("True", "SomeFinalizersRemain",
                                                   "Some content in the namespace has finalizers remaining: "
                                                   "example.com/hold in 1 resource instances"))
    expected = with_times(remaining, "00:00:15")
    expected["NamespaceContentRemaining"] = (*remaining["NamespaceContentRemaining"], "00:00:20")
    expected["NamespaceFinalizersRemaining"] = (*remaining["NamespaceFinalizersRemaining"], "00:00:20")
    assert conditions(cluster) == expected
    # Passes at 25 (status write + 5), then every 8 s (15 / 2 + 1): 33, 41, 49, 57, ...
    at(cluster, 50)
    assert namespace(cluster) is not None
    cluster.api.patch(cluster.resource("v1", "ConfigMap"), NS, "held", MERGE, b'{"metadata":{"finalizers":null}}')
    cluster.settle()
    assert content(cluster) == {} and namespace(cluster) is not None  # the controller does not watch content
    at(cluster, 56.9)
    assert namespace(cluster) is not None
    at(cluster, 57)
    assert namespace(cluster) is None


def test_an_empty_namespace_goes_at_the_first_pass_with_its_conditions_written_first() -> None:
    cluster = Cluster()
    cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    at(cluster, 1)
    cluster.delete("v1", "Namespace", NS, "")
    rv = cluster.store.resource_version
    deleting = namespace(cluster)
    assert deleting is not None and deleting["status"]["phase"] == "Terminating"
    # The namespace REST's Delete sets the timestamp only (kube-apiserver 1.36): no grace period.
    assert deleting["metadata"]["deletionTimestamp"] == "2025-01-01T00:00:01Z"
    assert "deletionGracePeriodSeconds" not in deleting["metadata"]
    at(cluster, 5.9)
    assert namespace(cluster) is not None
    at(cluster, 6)
    assert namespace(cluster) is None
    changes = [c for c in cluster.store.changes_since(rv) if c.resource == "namespaces"]
    conditions_written = changes[0].obj["status"]["conditions"]
    assert [c["type"] for c in conditions_written] == list(ALL_OK)
    assert changes[-1].type == "DELETED"
    # Its ServiceAccount and root CA ConfigMap went with it.
    assert cluster.list("v1", "ServiceAccount", NS) == [] and cluster.list("v1", "ConfigMap", NS) == []


def test_pods_go_first_and_others_wait_for_their_graceful_termination() -> None:
    cluster = Cluster(nodes=1)
    cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    cluster.create(deployment("slow", replicas=1, stop_delay_s=20))
    cluster.create(configmap("settings"))
    at(cluster, 5)
    cluster.delete("v1", "Namespace", NS, "")
    # 10: first pass, the pod's 30 s grace → back in 16 s; its status write brings it at 15
    # instead (one timer per namespace, the earliest wins), and 15 + 16 = 31.
    at(cluster, 10)
    [pod] = cluster.list("v1", "Pod", NS)
    assert pod["metadata"]["deletionTimestamp"] == "2025-01-01T00:00:40Z"
    assert settings(cluster) and content(cluster)["Deployment"] == 1
    at(cluster, 29.9)  # the container stops at 30
    assert settings(cluster)
    at(cluster, 30.9)
    assert "Pod" not in content(cluster) and settings(cluster)
    at(cluster, 31)
    assert namespace(cluster) is None


def test_pods_that_never_stop_are_an_error_retried_with_the_controllers_back_off() -> None:
    cluster = Cluster(nodes=1)
    cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    cluster.create(deployment("stuck", replicas=1))
    at(cluster, 5)
    cluster.fail_node("node-1")  # its kubelet stops: nothing will finish the pod's deletion
    cluster.delete("v1", "Namespace", NS, "")
    # 10: first pass (estimate 30); 15 (its status write); 31, 47 (16 s later each): by
    # 47 the 30 s since the deletion are up, and a pod left with no finalizer is an error.
    at(cluster, 46.9)
    assert conditions(cluster)["NamespaceDeletionContentFailure"][0] == "False"
    at(cluster, 47)
    assert conditions(cluster)["NamespaceDeletionContentFailure"] == (
        "True", "ContentDeletionFailed", "Failed to delete all resource types, 1 remaining: unexpected items still "
        "remain in namespace: demo for gvr: /v1, Resource=pods", "00:00:47")
    at(cluster, 200)
    assert namespace(cluster) is not None
    [pod] = cluster.list("v1", "Pod", NS)
    cluster.api.delete(cluster.resource("v1", "Pod"), NS, pod["metadata"]["name"], DeleteOptions(grace_period_s=0))
    at(cluster, 260)  # retries are at most 60 s apart
    assert namespace(cluster) is None


def test_deleting_a_terminating_namespace_again_answers_it_unchanged_and_the_immortal_ones_are_refused() -> None:
    cluster = Cluster()
    cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    cluster.create(configmap("held", ["example.com/hold"]))
    cluster.delete("v1", "Namespace", NS, "")
    terminating = namespace(cluster)
    body, status = cluster.api.delete(cluster.resource("v1", "Namespace"), "", NS, DeleteOptions())
    assert status == 200
    assert body["kind"] == "Namespace" and body["status"]["phase"] == "Terminating"
    assert body["metadata"]["resourceVersion"] == terminating["metadata"]["resourceVersion"]  # nothing written
    with pytest.raises(ApiError) as immortal:
        cluster.delete("v1", "Namespace", "kube-system", "")
    assert immortal.value.code == 403
    assert immortal.value.message == 'namespaces "kube-system" is forbidden: this namespace may not be deleted'
