"""networking.k8s.io/v1 IngressClasses, ServiceCIDRs and IPAddresses over HTTP: the default
ServiceCIDR every cluster has, defaults, upstream's 422s and kubectl's columns."""

from __future__ import annotations

import json

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from fakekube import Cluster
from tests.integration.test_request_semantics import request

GROUP = "/apis/networking.k8s.io/v1"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def message(exc: ApiException) -> str:
    return str(json.loads(exc.body)["message"])


def test_the_default_service_cidr_holds_the_cluster_service_range(fakekube: Cluster) -> None:
    api = client.NetworkingV1Api(fakekube.client())
    default = api.read_service_cidr("kubernetes")
    assert default.spec.cidrs == ["10.96.0.0/16"]
    [ready] = default.status.conditions
    assert (ready.type, ready.status, ready.message) == ("Ready", "True", "Kubernetes default Service CIDR is ready")
    code, table, _ = request(fakekube, "GET", f"{GROUP}/servicecidrs", accept=TABLE)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "CIDRs", "Age"]
    assert table["rows"][0]["cells"] == ["kubernetes", "10.96.0.0/16", "0s"]


@pytest.mark.fakekube(service_cidr="10.100.0.0/20")
def test_the_default_service_cidr_follows_the_cluster_config(fakekube: Cluster) -> None:
    assert client.NetworkingV1Api(fakekube.client()).read_service_cidr("kubernetes").spec.cidrs == ["10.100.0.0/20"]


def test_service_cidr_validation_and_the_dual_stack_upgrade(fakekube: Cluster) -> None:
    api = client.NetworkingV1Api(fakekube.client())
    with pytest.raises(ApiException) as bad:
        api.create_service_cidr({"metadata": {"name": "extra"}, "spec": {"cidrs": ["10.0.0.1/24"]}})
    assert message(bad.value) == ('ServiceCIDR.networking.k8s.io "extra" is invalid: spec.cidrs[0]: Invalid value: '
                                  '"10.0.0.1/24": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)')
    extra = api.create_service_cidr({"metadata": {"name": "extra"}, "spec": {"cidrs": ["10.0.0.0/24"]},
                                     "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "x",
                                                                "message": "", "lastTransitionTime": "2025-01-01T00:00:00Z"}]}})
    assert extra.status.conditions is None  # status is the controller's
    dual = api.patch_service_cidr("extra", {"spec": {"cidrs": ["10.0.0.0/24", "fd00::/108"]}})
    assert dual.spec.cidrs == ["10.0.0.0/24", "fd00::/108"]
    with pytest.raises(ApiException) as changed:
        api.patch_service_cidr("extra", {"spec": {"cidrs": ["10.1.0.0/24"]}})
    assert message(changed.value).endswith('spec.cidrs: Invalid value: ["10.1.0.0/24"]: field is immutable')


def test_ip_addresses_are_named_by_their_address(fakekube: Cluster) -> None:
    api = client.NetworkingV1Api(fakekube.client())
    parent = {"group": "", "resource": "services", "namespace": "default", "name": "web"}
    api.create_ip_address({"metadata": {"name": "10.96.0.10"}, "spec": {"parentRef": parent}})
    with pytest.raises(ApiException) as bad:
        api.create_ip_address({"metadata": {"name": "010.96.0.1"}, "spec": {"parentRef": parent}})
    assert message(bad.value).endswith('metadata.name: Invalid value: "010.96.0.1": must be a valid IP address, '
                                       "(e.g. 10.9.8.7 or 2001:db8::ffff)")
    with pytest.raises(ApiException) as moved:
        api.patch_ip_address("10.96.0.10", {"spec": {"parentRef": {**parent, "name": "other"}}})
    assert message(moved.value).endswith("spec.parentRef: Invalid value: &networking.ParentReference{...}: "
                                         "field is immutable")
    code, table, _ = request(fakekube, "GET", f"{GROUP}/ipaddresses", accept=TABLE)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "ParentRef"]
    assert table["rows"][0]["cells"][:2] == ["10.96.0.10", "services/default/web"]  # then the age


def test_ingress_classes(fakekube: Cluster) -> None:
    api = client.NetworkingV1Api(fakekube.client())
    created = api.create_ingress_class({"metadata": {"name": "nginx"}, "spec": {
        "controller": "k8s.io/ingress-nginx", "parameters": {"apiGroup": "k8s.example.com", "kind": "IngressParameters",
                                                             "name": "external-lb"}}})
    assert created.spec.parameters.scope == "Cluster"
    code, table, _ = request(fakekube, "GET", f"{GROUP}/ingressclasses", accept=TABLE)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Controller", "Parameters", "Age"]
    assert table["rows"][0]["cells"] == ["nginx", "k8s.io/ingress-nginx", "IngressParameters.k8s.example.com/external-lb",
                                         "0s"]
    with pytest.raises(ApiException) as changed:
        api.patch_ingress_class("nginx", {"spec": {"controller": "example.com/other"}})
    assert message(changed.value) == ('IngressClass.networking.k8s.io "nginx" is invalid: spec.controller: Invalid value: '
                                      '"example.com/other": field is immutable')
    with pytest.raises(ApiException) as bad:
        api.create_ingress_class({"metadata": {"name": "bad"}, "spec": {"controller": "nginx"}})
    assert message(bad.value).endswith('spec.controller: Invalid value: "nginx": must be a domain-prefixed path '
                                       '(such as "acme.io/foo")')
