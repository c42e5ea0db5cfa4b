"""The managedFields written out for kube-apiserver's own objects (fakekube/cluster/bootstrapfields.py)
are what the field manager computes for the same objects sent by a client."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fakekube import Cluster
from fakekube.api.verbs.apiserver import WriteOptions
from fakekube.cluster import bootstrap, bootstrapfields, rbacpolicy
from fakekube.objects.priority import SYSTEM_PRIORITY_CLASSES

Obj = dict[str, Any]


@pytest.fixture(scope="module")
def cluster() -> Cluster:
    return Cluster(nodes=0, controllers=(), scheduler=None, system_pods=False, metrics_server=False)


def _client_fields(cluster: Cluster, api_version: str, kind: str, obj: Obj, namespace: str = "") -> Obj:
    """The creator's field set when a client creates ``obj`` renamed (so it does not collide)."""
    body = copy.deepcopy(obj)
    body["metadata"] = {**body["metadata"], "name": "copy-" + body["metadata"]["name"].replace(":", "-")}
    if kind == "Namespace":
        body["metadata"]["labels"] = {"kubernetes.io/metadata.name": body["metadata"]["name"]}
    body["metadata"].pop("managedFields", None)
    rt = cluster.resource(api_version, kind)
    created = cluster.api.create(rt, namespace, body, WriteOptions(field_manager="client")).obj
    (entry,) = created["metadata"]["managedFields"]
    return entry["fieldsV1"]


def test_the_namespaces_service_and_priority_classes(cluster: Cluster) -> None:
    namespace = {"metadata": {"name": "default", "labels": {"kubernetes.io/metadata.name": "default"}}}
    assert bootstrapfields.created_fields("Namespace", namespace) == _client_fields(cluster, "v1", "Namespace",
                                                                                  namespace)
    service = bootstrap.kubernetes_service("10.96.0.1")
    sent = {**service, "spec": {**service["spec"], "clusterIP": "10.96.0.99"}}
    assert bootstrapfields.created_fields("Service", service) == _client_fields(cluster, "v1", "Service", sent,
                                                                              "default")
    for priority_class in SYSTEM_PRIORITY_CLASSES:
        assert bootstrapfields.created_fields("PriorityClass", priority_class) == _client_fields(
            cluster, "scheduling.k8s.io/v1", "PriorityClass", {**priority_class, "value": 1000})


@pytest.mark.parametrize("kind, objects", [
    ("ClusterRole", rbacpolicy.cluster_roles()), ("ClusterRoleBinding", rbacpolicy.cluster_role_bindings()),
    ("Role", rbacpolicy.namespace_roles()), ("RoleBinding", rbacpolicy.namespace_role_bindings()),
])
def test_the_rbac_policy(cluster: Cluster, kind: str, objects: tuple[Obj, ...]) -> None:
    for obj in objects:
        created = rbacpolicy._as_created(obj)
        namespace = (obj["metadata"].get("namespace") or "")
        assert bootstrapfields.created_fields(kind, created) == _client_fields(
            cluster, "rbac.authorization.k8s.io/v1", kind, created, namespace), obj["metadata"]["name"]
