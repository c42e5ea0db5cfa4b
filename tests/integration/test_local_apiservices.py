"""kube-aggregator's local APIServices: one per built-in group-version from the start
(``onstart``), one per group-version a CRD serves for as long as one does (``true``),
each Available as upstream words it (recorded against kube-apiserver 1.36)."""

from __future__ import annotations

import json
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


def remote(name: str = "v1beta1.shop.example.com", port: int = 443) -> dict[str, Any]:
    group = name.split(".", 1)[1]
    return {"apiVersion": APISERVICE, "kind": "APIService", "metadata": {"name": name},
            "spec": {"group": group, "version": name.split(".")[0], "groupPriorityMinimum": 100,
                     "versionPriority": 10, "insecureSkipTLSVerify": True,
                     "service": {"namespace": "default", "name": "shop", "port": port}}}


def available(cluster: Cluster) -> tuple[str, str, str]:
    [condition] = cluster.get(APISERVICE, "APIService", "v1beta1.shop.example.com")["status"]["conditions"]
    return condition["status"], condition["reason"], condition["message"]


def test_an_api_service_with_a_service_is_available_as_kube_aggregator_checks_it() -> None:
    """remote_available_controller.go's checks, in order, with its words (reference: 1.36's
    ServiceNotFound); the discovery request through the service is not simulated."""
    with Cluster(nodes=0) as cluster:
        cluster.create(remote())
        assert available(cluster) == ("False", "ServiceNotFound", 'service/shop in "default" is not present')
        cluster.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "shop", "namespace": "default"},
                        "spec": {"ports": [{"name": "https", "port": 8443}]}})
        assert available(cluster) == ("False", "ServicePortError", 'service/shop in "default" is not listening on port 443')
        core = client.CoreV1Api(cluster.client())
        core.patch_namespaced_service("shop", "default", [{"op": "replace", "path": "/spec/ports/0/port", "value": 443}])
        assert available(cluster) == ("False", "EndpointsNotFound", 'cannot find endpointslices for service/shop in "default"')
        endpoints = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "addressType": "IPv4",
                     "metadata": {"name": "shop-1", "namespace": "default", "labels": {"kubernetes.io/service-name": "shop"}},
                     "endpoints": [{"addresses": ["10.244.0.9"], "conditions": {"ready": False}}],
                     "ports": [{"name": "https", "port": 8443}]}
        cluster.create(endpoints)
        assert available(cluster) == ("False", "MissingEndpoints",
                                      'endpointslices for service/shop in "default" have no addresses with port name "https"')
        cluster.advance(5)
        client.DiscoveryV1Api(cluster.client()).patch_namespaced_endpoint_slice(
            "shop-1", "default", {"endpoints": [{"addresses": ["10.244.0.9"], "conditions": {"ready": True}}]})
        assert available(cluster) == ("True", "Passed", "all checks passed")
        condition = cluster.get(APISERVICE, "APIService", "v1beta1.shop.example.com")["status"]["conditions"][0]
        assert condition["lastTransitionTime"] == "2025-01-01T00:00:05Z"


def test_an_api_service_is_validated_as_upstreams() -> None:
    with Cluster(nodes=0) as cluster:
        wrong = remote("v1.wrongname")
        wrong["spec"].update(group="conformance.example.com", groupPriorityMinimum=0, versionPriority=1001)
        api = client.ApiregistrationV1Api(cluster.client())
        try:
            api.create_api_service(wrong)
            raise AssertionError("created")
        except client.ApiException as refused:
            assert refused.status == 422
            assert json.loads(refused.body)["message"] == (
                'APIService.apiregistration.k8s.io "v1.wrongname" is invalid: [metadata.name: Invalid value: '
                '"v1.wrongname": must be `spec.version+"."+spec.group`: "v1.conformance.example.com", '
                "spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000, "
                "spec.versionPriority: Invalid value: 1001: must be positive and less than 1000]")
