"""ResourceQuota: admission charges each create to the namespace's quotas and refuses the
one that would exceed them (upstream's 403 texts); the resourcequota-controller keeps
``status.hard`` and ``status.used`` as the namespace's objects come and go."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from fakekube import Cluster
from fakekube.api.machinery.errors import ApiError

Obj = dict[str, Any]


def quota(name: str, hard: Obj, **spec: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name, "namespace": "default"},
            "spec": {"hard": hard, **spec}}


def pod(name: str, requests: Obj | None = None, limits: Obj | None = None, **spec: Any) -> Obj:
    resources = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "app", "image": "nginx", "resources": resources}], **spec}}


def configmap(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}}


def service(name: str, kind: str = "ClusterIP", ports: int = 1) -> Obj:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "default"},
            "spec": {"type": kind, "selector": {"app": name},
                     "ports": [{"name": f"p{i}", "port": 80 + i} for i in range(ports)]}}


def status(cluster: Cluster, name: str) -> Obj:
    return cluster.get("v1", "ResourceQuota", name, namespace="default")["status"]


def refused(cluster: Cluster, obj: Obj) -> tuple[int, str]:
    with pytest.raises(ApiError) as info:
        cluster.create(obj)
    return info.value.code, info.value.message


def test_a_new_quota_gets_hard_and_used_from_the_namespace() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(pod("before", requests={"cpu": "250m", "memory": "100Mi"}))
    cluster.create(quota("compute", {"pods": "10", "requests.cpu": "2", "requests.memory": "1Gi",
                                     "limits.cpu": "4", "configmaps": "5"}))
    assert status(cluster, "compute") == {
        "hard": {"configmaps": "5", "limits.cpu": "4", "pods": "10", "requests.cpu": "2", "requests.memory": "1Gi"},
        # kube-root-ca.crt is the namespace's one ConfigMap
        "used": {"configmaps": "1", "limits.cpu": "0", "pods": "1", "requests.cpu": "250m",
                 "requests.memory": "100Mi"}}


def test_the_pod_past_the_quota_is_refused_and_deletes_free_it() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(quota("pods", {"pods": "2"}))
    cluster.create(pod("a"))
    cluster.create(pod("b"))
    assert status(cluster, "pods")["used"] == {"pods": "2"}
    assert refused(cluster, pod("c")) == (
        403, 'pods "c" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=2, limited: pods=2')
    cluster.delete("v1", "Pod", "a", namespace="default")
    assert status(cluster, "pods")["used"] == {"pods": "1"}
    cluster.create(pod("c"))
    assert status(cluster, "pods")["used"] == {"pods": "2"}


def test_compute_quota_sums_requests_and_names_only_what_is_exceeded() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(quota("compute", {"requests.cpu": "1", "requests.memory": "1Gi", "pods": "5"}))
    cluster.create(pod("a", requests={"cpu": "600m", "memory": "512Mi"}))
    assert status(cluster, "compute")["used"] == {"pods": "1", "requests.cpu": "600m", "requests.memory": "512Mi"}
    assert refused(cluster, pod("b", requests={"cpu": "500m", "memory": "768Mi"})) == (
        403, 'pods "b" is forbidden: exceeded quota: compute, requested: requests.cpu=500m,requests.memory=768Mi, '
             'used: requests.cpu=600m,requests.memory=512Mi, limited: requests.cpu=1,requests.memory=1Gi')
    cluster.create(pod("c", requests={"cpu": "400m", "memory": "512Mi"}))
    assert status(cluster, "compute")["used"] == {"pods": "2", "requests.cpu": "1", "requests.memory": "1Gi"}


def test_a_compute_quota_requires_every_container_to_say_its_resources() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(quota("compute", {"limits.cpu": "2", "requests.memory": "1Gi"}))
    assert refused(cluster, pod("bare")) == (
        403, 'pods "bare" is forbidden: failed quota: compute: must specify limits.cpu for: app; '
             'requests.memory for: app')
    # a limit alone also sets the request (pod defaulting), which satisfies requests.memory
    cluster.create(pod("full", limits={"cpu": "500m", "memory": "128Mi"}))
    assert status(cluster, "compute")["used"] == {"limits.cpu": "500m", "requests.memory": "128Mi"}


def test_terminal_pods_stop_counting() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(quota("pods", {"pods": "1", "count/pods": "5"}))
    done = pod("once", restartPolicy="Never")
    done["spec"]["containers"][0]["command"] = ["sh", "-c", "exit 0"]
    cluster.create(done)
    assert status(cluster, "pods")["used"] == {"count/pods": "1", "pods": "1"}
    cluster.advance(5)
    assert cluster.get("v1", "Pod", "once", namespace="default")["status"]["phase"] == "Succeeded"
    assert status(cluster, "pods")["used"] == {"count/pods": "1", "pods": "0"}
    cluster.create(pod("next"))


def test_object_counts_configmaps_and_count_names() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(quota("objects", {"configmaps": "3", "count/deployments.apps": "1", "count/secrets": "10"}))
    cluster.create(configmap("one"))
    cluster.create(configmap("two"))
    assert refused(cluster, configmap("three")) == (
        403, 'configmaps "three" is forbidden: exceeded quota: objects, requested: configmaps=1, used: configmaps=3, '
             'limited: configmaps=3')
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
                  "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}}, "template": {
                      "metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    cluster.create(deployment)
    second = dict(deployment, metadata={"name": "api", "namespace": "default"})
    assert refused(cluster, second) == (
        403, 'deployments.apps "api" is forbidden: exceeded quota: objects, requested: count/deployments.apps=1, '
             'used: count/deployments.apps=1, limited: count/deployments.apps=1')
    cluster.delete("v1", "ConfigMap", "one", namespace="default")
    assert status(cluster, "objects")["used"] == {"configmaps": "2", "count/deployments.apps": "1",
                                                  "count/secrets": "0"}


def test_services_load_balancers_and_node_ports() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(quota("svc", {"services": "3", "services.loadbalancers": "1", "services.nodeports": "2"}))
    cluster.create(service("lb", "LoadBalancer"))
    assert refused(cluster, service("lb2", "LoadBalancer")) == (
        403, 'services "lb2" is forbidden: exceeded quota: svc, requested: services.loadbalancers=1, '
             'used: services.loadbalancers=1, limited: services.loadbalancers=1')
    assert refused(cluster, service("np", "NodePort", ports=2)) == (
        403, 'services "np" is forbidden: exceeded quota: svc, requested: services.nodeports=2, '
             'used: services.nodeports=1, limited: services.nodeports=2')
    cluster.create(service("plain"))
    # with the default namespace's own "kubernetes" Service
    assert status(cluster, "svc")["used"] == {"services": "3", "services.loadbalancers": "1",
                                              "services.nodeports": "1"}


def test_claims_count_storage_in_total_and_per_class() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(quota("storage", {"requests.storage": "10Gi", "persistentvolumeclaims": "5",
                                     "fast.storageclass.storage.k8s.io/requests.storage": "3Gi"}))

    def claim(name: str, size: str, storage_class: str) -> Obj:
        return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
                "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": storage_class,
                         "resources": {"requests": {"storage": size}}}}

    cluster.create(claim("a", "2Gi", "fast"))
    assert refused(cluster, claim("b", "2Gi", "fast")) == (
        403, 'persistentvolumeclaims "b" is forbidden: exceeded quota: storage, requested: '
             'fast.storageclass.storage.k8s.io/requests.storage=2Gi, used: '
             'fast.storageclass.storage.k8s.io/requests.storage=2Gi, limited: '
             'fast.storageclass.storage.k8s.io/requests.storage=3Gi')
    cluster.create(claim("c", "5Gi", "slow"))
    assert status(cluster, "storage")["used"] == {"fast.storageclass.storage.k8s.io/requests.storage": "2Gi",
                                                  "persistentvolumeclaims": "2", "requests.storage": "7Gi"}


def test_scopes_choose_the_pods_a_quota_counts() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(quota("best-effort", {"pods": "1"}, scopes=["BestEffort"]))
    cluster.create(pod("guaranteed", limits={"cpu": "100m", "memory": "64Mi"}))
    cluster.create(pod("free"))
    assert refused(cluster, pod("free2"))[1].endswith("exceeded quota: best-effort, requested: pods=1, "
                                                      "used: pods=1, limited: pods=1")
    assert status(cluster, "best-effort")["used"] == {"pods": "1"}


def test_a_dry_run_is_checked_but_not_charged_and_the_http_client_sees_403() -> None:
    with Cluster(nodes=1) as cluster:
        core = client.CoreV1Api(cluster.client())
        core.create_namespaced_resource_quota("default", quota("cm", {"configmaps": "2"}))
        core.create_namespaced_config_map("default", {"metadata": {"name": "a"}}, dry_run="All")
        assert core.read_namespaced_resource_quota("cm", "default").status.used == {"configmaps": "1"}
        core.create_namespaced_config_map("default", {"metadata": {"name": "a"}})
        with pytest.raises(ApiException) as info:
            core.create_namespaced_config_map("default", {"metadata": {"name": "b"}})
        body = json.loads(info.value.body)
        assert (info.value.status, body["reason"], body["message"]) == (
            403, "Forbidden", 'configmaps "b" is forbidden: exceeded quota: cm, requested: configmaps=1, '
                              'used: configmaps=2, limited: configmaps=2')
        used = core.read_namespaced_resource_quota("cm", "default").status
        assert (used.hard, used.used) == ({"configmaps": "2"}, {"configmaps": "2"})


def test_a_replica_set_over_quota_reports_the_refusal() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(quota("pods", {"pods": "2"}))
    cluster.create({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web", "namespace": "default"},
                    "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": {
                        "metadata": {"labels": {"app": "web"}},
                        "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
    assert len(cluster.list("v1", "Pod", namespace="default")) == 2
    failed = [e["message"] for e in cluster.events() if e["reason"] == "FailedCreate"]
    assert failed and failed[0].startswith('Error creating: pods "web-') and failed[0].endswith(
        '" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=2, limited: pods=2')


def test_raising_spec_hard_updates_status_and_admits_again() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(quota("cm", {"configmaps": "1"}))
    assert refused(cluster, configmap("a"))[0] == 403
    body = json.dumps({"spec": {"hard": {"configmaps": "2", "secrets": "1"}}}).encode()
    cluster.api.patch(cluster.resource("v1", "ResourceQuota"), "default", "cm", "application/merge-patch+json", body)
    cluster.settle()
    assert status(cluster, "cm") == {"hard": {"configmaps": "2", "secrets": "1"},
                                     "used": {"configmaps": "1", "secrets": "0"}}
    cluster.create(configmap("a"))
    assert status(cluster, "cm")["used"] == {"configmaps": "2", "secrets": "0"}
