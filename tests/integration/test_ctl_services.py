"""Services in the apiserver (ClusterIPs, node ports, families) and the simulated load
balancer, as a user of kube-apiserver 1.33 and a cloud's service controller sees them."""

from __future__ import annotations

import ipaddress
import json
from typing import Any

import pytest

from fakekube import Cluster
from fakekube.api.machinery.errors import ApiError
from fakekube.cluster.configfile import ConfigError, parse_config

Obj = dict[str, Any]
MERGE = "application/merge-patch+json"


def service(name: str, **spec: Any) -> Obj:
    body: Obj = {"selector": {"app": name}, "ports": [{"port": 80}]}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "default"}, "spec": body}


def refused(cluster: Cluster, obj: Obj) -> ApiError:
    with pytest.raises(ApiError) as error:
        cluster.create(obj)
    return error.value


def patch(cluster: Cluster, name: str, body: Obj) -> Obj:
    cluster.api.patch(cluster.resource("v1", "Service"), "default", name, MERGE, json.dumps(body).encode())
    cluster.settle()
    return cluster.get("v1", "Service", name)


def reasons(cluster: Cluster, name: str) -> list[str]:
    return [e["reason"] for e in cluster.events("default", name)]


# -- ClusterIPs --------------------------------------------------------------------------

def test_the_kubernetes_service_takes_the_first_address() -> None:
    spec = Cluster().get("v1", "Service", "kubernetes")["spec"]
    assert spec == {"clusterIP": "10.96.0.1", "clusterIPs": ["10.96.0.1"], "internalTrafficPolicy": "Cluster",
                    "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
                    "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}],
                    "sessionAffinity": "None", "type": "ClusterIP"}


def test_a_service_gets_an_address_of_the_dynamic_band_with_upstreams_defaults() -> None:
    cluster = Cluster(seed=3)
    spec = cluster.create(service("web"))["spec"]
    ip = ipaddress.ip_address(spec["clusterIP"])
    assert ipaddress.ip_address("10.96.1.1") <= ip <= ipaddress.ip_address("10.96.255.254")
    assert spec["clusterIPs"] == [spec["clusterIP"]]
    assert (spec["ipFamilies"], spec["ipFamilyPolicy"]) == (["IPv4"], "SingleStack")
    assert (spec["internalTrafficPolicy"], spec["sessionAffinity"], spec["type"]) == ("Cluster", "None", "ClusterIP")
    assert spec["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 80}]
    # the same seed and calls give the same addresses, whatever the process
    again = Cluster(seed=3).create(service("web"))["spec"]["clusterIP"]
    assert again == spec["clusterIP"]


def test_an_address_in_use_is_refused_with_upstreams_message() -> None:
    cluster = Cluster()
    cluster.create(service("dns", clusterIP="10.96.0.10"))
    error = refused(cluster, service("x", clusterIP="10.96.0.10"))
    assert (error.code, error.reason) == (422, "Invalid")
    assert error.message == ('Service "x" is invalid: spec.clusterIPs: Invalid value: ["10.96.0.10"]: '
                             'failed to allocate IP 10.96.0.10: provided IP is already allocated')
    assert error.details["causes"] == [{"reason": "FieldValueInvalid", "field": "spec.clusterIPs",
                                        "message": 'Invalid value: ["10.96.0.10"]: failed to allocate IP '
                                                   '10.96.0.10: provided IP is already allocated'}]
    assert refused(cluster, service("k", clusterIP="10.96.0.1")).message.endswith("provided IP is already allocated")
    outside = refused(cluster, service("y", clusterIP="10.0.0.5"))
    assert outside.message.endswith("failed to allocate IP 10.0.0.5: the provided network does not match the current range")
    network = refused(cluster, service("z", clusterIP="10.96.0.0"))
    assert network.message.endswith("failed to allocate IP 10.96.0.0: the provided IP (10.96.0.0) is not in the valid "
                                    "range. The range of valid IPs is 10.96.0.0/16")


def test_addresses_are_released_on_delete_and_on_a_change_to_external_name() -> None:
    cluster = Cluster()
    cluster.create(service("a", clusterIP="10.96.0.20"))
    cluster.delete("v1", "Service", "a")
    cluster.create(service("b", clusterIP="10.96.0.20"))
    external = patch(cluster, "b", {"spec": {"type": "ExternalName", "externalName": "example.com"}})
    assert "clusterIP" not in external["spec"] and "ipFamilies" not in external["spec"]
    cluster.create(service("c", clusterIP="10.96.0.20"))
    back = patch(cluster, "b", {"spec": {"type": "ClusterIP", "externalName": None}})
    assert back["spec"]["clusterIP"] not in ("10.96.0.20", "", None)


def test_headless_and_external_name_services() -> None:
    cluster = Cluster()
    headless = cluster.create(service("db", clusterIP="None"))["spec"]
    assert (headless["clusterIP"], headless["clusterIPs"]) == ("None", ["None"])
    assert (headless["ipFamilies"], headless["ipFamilyPolicy"]) == (["IPv4"], "SingleStack")
    bare = cluster.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "bare"},
                           "spec": {"clusterIP": "None", "ports": [{"port": 5432}]}})["spec"]
    assert (bare["ipFamilies"], bare["ipFamilyPolicy"]) == (["IPv4", "IPv6"], "RequireDualStack")
    external = cluster.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "ext"},
                               "spec": {"type": "ExternalName", "externalName": "example.com"}})["spec"]
    assert external == {"externalName": "example.com", "sessionAffinity": "None", "type": "ExternalName"}


def test_dual_stack_requests_on_a_single_stack_cluster_are_refused() -> None:
    cluster = Cluster()
    dual = refused(cluster, service("d", ipFamilyPolicy="RequireDualStack"))
    assert dual.message == ('Service "d" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": '
                            'this cluster is not configured for dual-stack services')
    v6 = refused(cluster, service("v6", ipFamilies=["IPv6"]))
    assert v6.message == 'Service "v6" is invalid: spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster'
    prefer = cluster.create(service("p", ipFamilyPolicy="PreferDualStack"))["spec"]
    assert (prefer["ipFamilies"], prefer["ipFamilyPolicy"]) == (["IPv4"], "PreferDualStack")


def test_session_affinity_client_ip_gets_its_default_timeout() -> None:
    spec = Cluster().create(service("s", sessionAffinity="ClientIP"))["spec"]
    assert spec["sessionAffinityConfig"] == {"clientIP": {"timeoutSeconds": 10800}}


# -- node ports ----------------------------------------------------------------------------

def test_node_ports_come_from_the_upper_band_and_conflicts_are_refused() -> None:
    cluster = Cluster()
    spec = cluster.create(service("np", type="NodePort", ports=[{"name": "http", "port": 80},
                                                                 {"name": "https", "port": 443}]))["spec"]
    ports = [p["nodePort"] for p in spec["ports"]]
    assert all(30086 <= p <= 32767 for p in ports) and len(set(ports)) == 2
    assert spec["externalTrafficPolicy"] == "Cluster"
    cluster.create(service("fixed", type="NodePort", ports=[{"port": 80, "nodePort": 30080}]))
    taken = refused(cluster, service("again", type="NodePort", ports=[{"port": 80, "nodePort": 30080}]))
    assert taken.message == ('Service "again" is invalid: spec.ports[0].nodePort: Invalid value: 30080: '
                             'provided port is already allocated')
    low = refused(cluster, service("low", type="NodePort", ports=[{"port": 80, "nodePort": 8080}]))
    assert low.message == ('Service "low" is invalid: spec.ports[0].nodePort: Invalid value: 8080: provided port is not '
                           'in the valid range. The range of valid ports is 30000-32767')


def test_node_ports_are_released_on_delete_and_when_the_type_no_longer_needs_them() -> None:
    cluster = Cluster()
    cluster.create(service("a", type="NodePort", ports=[{"port": 80, "nodePort": 30080}]))
    as_cluster_ip = patch(cluster, "a", {"spec": {"type": "ClusterIP"}})
    assert "nodePort" not in as_cluster_ip["spec"]["ports"][0]
    assert "externalTrafficPolicy" not in as_cluster_ip["spec"]
    cluster.create(service("b", type="NodePort", ports=[{"port": 80, "nodePort": 30080}]))
    cluster.delete("v1", "Service", "b")
    cluster.create(service("c", type="NodePort", ports=[{"port": 80, "nodePort": 30080}]))


def test_an_update_keeps_the_allocated_values() -> None:
    cluster = Cluster()
    created = cluster.create(service("keep", type="NodePort"))["spec"]
    relabelled = patch(cluster, "keep", {"metadata": {"labels": {"tier": "web"}}})["spec"]
    assert relabelled["clusterIP"] == created["clusterIP"]
    assert relabelled["ports"][0]["nodePort"] == created["ports"][0]["nodePort"]


def test_a_local_load_balancer_gets_a_health_check_node_port() -> None:
    cluster = Cluster()
    spec = cluster.create(service("lb", type="LoadBalancer", externalTrafficPolicy="Local"))["spec"]
    assert 30086 <= spec["healthCheckNodePort"] <= 32767
    assert spec["healthCheckNodePort"] != spec["ports"][0]["nodePort"]
    assert spec["allocateLoadBalancerNodePorts"] is True
    to_cluster = patch(cluster, "lb", {"spec": {"externalTrafficPolicy": "Cluster"}})["spec"]
    assert "healthCheckNodePort" not in to_cluster


# -- the simulated load balancer ------------------------------------------------------------

def test_a_load_balancer_gets_the_lowest_free_address_of_the_pool() -> None:
    cluster = Cluster()
    first = cluster.create(service("one", type="LoadBalancer"))
    assert first["status"] == {"loadBalancer": {}}  # the answer to the create: before the controller
    one = cluster.get("v1", "Service", "one")
    assert one["status"] == {"loadBalancer": {"ingress": [{"ip": "172.18.255.200", "ipMode": "VIP"}]}}
    assert one["metadata"]["finalizers"] == ["service.kubernetes.io/load-balancer-cleanup"]
    assert reasons(cluster, "one") == ["EnsuringLoadBalancer", "EnsuredLoadBalancer"]
    event = cluster.events("default", "one")[0]
    assert (event["source"], event["message"]) == ({"component": "service-controller"}, "Ensuring load balancer")
    cluster.create(service("two", type="LoadBalancer"))
    assert cluster.get("v1", "Service", "two")["status"]["loadBalancer"]["ingress"][0]["ip"] == "172.18.255.201"
    cluster.delete("v1", "Service", "one")
    with pytest.raises(ApiError):
        cluster.get("v1", "Service", "one")
    assert reasons(cluster, "one")[-2:] == ["DeletingLoadBalancer", "DeletedLoadBalancer"]
    cluster.create(service("three", type="LoadBalancer"))
    assert cluster.get("v1", "Service", "three")["status"]["loadBalancer"]["ingress"][0]["ip"] == "172.18.255.200"


def test_leaving_the_load_balancer_type_gives_the_address_back() -> None:
    cluster = Cluster()
    cluster.create(service("lb", type="LoadBalancer"))
    plain = patch(cluster, "lb", {"spec": {"type": "ClusterIP"}})
    assert plain["status"] == {"loadBalancer": {}}
    assert "finalizers" not in plain["metadata"]
    assert "nodePort" not in plain["spec"]["ports"][0] and "allocateLoadBalancerNodePorts" not in plain["spec"]
    assert reasons(cluster, "lb") == ["EnsuringLoadBalancer", "EnsuredLoadBalancer", "DeletingLoadBalancer",
                                      "DeletedLoadBalancer"]


def test_an_exhausted_pool_leaves_the_service_pending_until_an_address_frees() -> None:
    cluster = Cluster(load_balancer_ip_pool="172.18.255.200-172.18.255.200")
    cluster.create(service("a", type="LoadBalancer"))
    cluster.create(service("b", type="LoadBalancer"))
    assert cluster.get("v1", "Service", "b")["status"] == {"loadBalancer": {}}
    failed = [e for e in cluster.events("default", "b") if e["reason"] == "SyncLoadBalancerFailed"]
    assert failed[0]["type"] == "Warning"
    assert failed[0]["message"] == ("Error syncing load balancer: failed to ensure load balancer: no free IP in the load "
                                    "balancer pool 172.18.255.200-172.18.255.200")
    cluster.delete("v1", "Service", "a")
    assert cluster.get("v1", "Service", "b")["status"]["loadBalancer"]["ingress"][0]["ip"] == "172.18.255.200"


def test_a_load_balancer_class_is_another_controllers() -> None:
    cluster = Cluster()
    cluster.create(service("other", type="LoadBalancer", loadBalancerClass="example.com/lb"))
    assert cluster.get("v1", "Service", "other")["status"] == {"loadBalancer": {}}
    assert reasons(cluster, "other") == []


# -- configuration -------------------------------------------------------------------------

def test_the_service_ranges_and_pool_come_from_the_config() -> None:
    config = parse_config({"serviceCIDR": "10.100.0.0/24", "serviceNodePortRange": "31000-31999",
                           "loadBalancerIPPool": "192.168.50.0/30"})
    cluster = Cluster(config)
    assert cluster.get("v1", "Service", "kubernetes")["spec"]["clusterIP"] == "10.100.0.1"
    spec = cluster.create(service("lb", type="LoadBalancer"))["spec"]
    assert ipaddress.ip_address(spec["clusterIP"]) in ipaddress.ip_network("10.100.0.0/24")
    assert 31000 <= spec["ports"][0]["nodePort"] <= 31999
    assert cluster.get("v1", "Service", "lb")["status"]["loadBalancer"]["ingress"][0]["ip"] == "192.168.50.1"
    for bad, message in (({"serviceCIDR": "10.0.0.0/8"}, "serviceCIDR: specified --service-cluster-ip-range is too "
                                                          "large; for 32-bit addresses, the mask must be >= /12"),
                         ({"serviceNodePortRange": "x"}, "serviceNodePortRange: invalid port range 'x'"),
                         ({"loadBalancerIPPool": "1.2.3.4-1.2.3.1"}, "loadBalancerIPPool: invalid load balancer IP pool")):
        with pytest.raises(ConfigError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
            parse_config(bad)
