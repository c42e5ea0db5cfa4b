"""kube-aggregator's local APIServices: one per built-in group-version from the start
(``onstart``), one per group-version a CRD serves for as long as one does (``true``),
each Available as upstream words it (recorded against kube-apiserver 1.36)."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from fakekube import Cluster

APISERVICE = "apiregistration.k8s.io/v1"
LOCAL = [{"type": "Available", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z", "reason": "Local",
          "message": "Local APIServices are always available"}]


def crd(versions: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.shop.example.com"},
            "spec": {"group": "shop.example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                     "versions": versions}}


def version(name: str, served: bool = True, storage: bool = False) -> dict[str, Any]:
    return {"name": name, "served": served, "storage": storage,
            "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}


def test_every_built_in_group_version_has_a_local_api_service(fakekube: Cluster) -> None:
    services = {s["metadata"]["name"]: s for s in fakekube.list(APISERVICE, "APIService")}
    assert {"v1.", "v1.apps", "v1.autoscaling", "v2.autoscaling", "v1.batch", "v1.apiextensions.k8s.io",
            "v1.authentication.k8s.io", "v1.flowcontrol.apiserver.k8s.io"} <= set(services)
    core = services["v1."]
    assert core["metadata"]["labels"] == {"kube-aggregator.kubernetes.io/automanaged": "onstart"}
    assert core["spec"] == {"version": "v1", "groupPriorityMinimum": 18000, "versionPriority": 1}
    assert core["status"]["conditions"] == LOCAL
    assert services["v2.autoscaling"]["spec"] == {"group": "autoscaling", "version": "v2",
                                                  "groupPriorityMinimum": 17500, "versionPriority": 30}
    assert core["metadata"]["managedFields"][0]["fieldsV1"] == {
        "f:metadata": {"f:labels": {".": {}, "f:kube-aggregator.kubernetes.io/automanaged": {}}},
        "f:spec": {"f:groupPriorityMinimum": {}, "f:version": {}, "f:versionPriority": {}}}


def names(cluster: Cluster) -> set[str]:
    return {s["metadata"]["name"] for s in cluster.list(APISERVICE, "APIService")}


def test_a_crds_group_versions_are_registered_while_served(fakekube: Cluster) -> None:
    fakekube.create(crd([version("v1", storage=True), version("v2beta1", served=False)]))
    registered = fakekube.get(APISERVICE, "APIService", "v1.shop.example.com")
    assert registered["metadata"]["labels"] == {"kube-aggregator.kubernetes.io/automanaged": "true"}
    assert registered["spec"] == {"group": "shop.example.com", "version": "v1", "groupPriorityMinimum": 1000,
                                  "versionPriority": 100}
    assert registered["status"]["conditions"] == LOCAL
    assert "v2beta1.shop.example.com" not in names(fakekube)
    ext = client.ApiextensionsV1Api(fakekube.client())  # a PUT of the CRD, with v2beta1 served
    stored = ext.read_custom_resource_definition("widgets.shop.example.com")
    stored.spec.versions[1].served = True
    ext.replace_custom_resource_definition("widgets.shop.example.com", stored)
    fakekube.settle()
    assert "v2beta1.shop.example.com" in names(fakekube)
    fakekube.delete("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.shop.example.com")
    fakekube.settle()
    assert not {"v1.shop.example.com", "v2beta1.shop.example.com"} & names(fakekube)


def test_an_api_service_without_a_service_is_available_when_created(fakekube: Cluster) -> None:
    """kube-aggregator's strategy marks a local APIService Available on create (the answer
    to the POST already says so); one naming a service starts without conditions."""
    local = fakekube.create({"apiVersion": APISERVICE, "kind": "APIService", "metadata": {"name": "v1.toys.example.com"},
                             "spec": {"group": "toys.example.com", "version": "v1", "groupPriorityMinimum": 100,
                                      "versionPriority": 10}, "status": {"conditions": []}})
    assert local["status"]["conditions"] == LOCAL
    registration = client.ApiregistrationV1Api(fakekube.client())  # an update keeps the status
    replaced = registration.patch_api_service("v1.toys.example.com", {"metadata": {"labels": {"a": "b"}},
                                                                      "status": {"conditions": None}})
    assert replaced.status.conditions[0].reason == "Local"
    remote = fakekube.create({"apiVersion": APISERVICE, "kind": "APIService", "metadata": {"name": "v1.games.example.com"},
                              "spec": {"group": "games.example.com", "version": "v1", "groupPriorityMinimum": 100,
                                       "versionPriority": 10, "insecureSkipTLSVerify": True,
                                       "service": {"namespace": "default", "name": "games"}}})
    assert remote["status"] == {}
