"""kubectl against Services, Endpoints and EndpointSlices: expose a Deployment, the columns
of get svc/endpoints/endpointslices, node ports, the simulated load balancer, and an
explicit ClusterIP refused as kube-apiserver refuses it."""

from __future__ import annotations

import ipaddress
import json

import pytest

from fakekube import Cluster

from .conftest import Kubectl, server_version

pytestmark = pytest.mark.fakekube(nodes=2)
#: What kubectl prints for every request of the Endpoints API to a 1.33 apiserver.
DEPRECATED = "Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice\n"


def rows(kubectl: Kubectl, *args: str) -> list[list[str]]:
    """``kubectl get ...`` as split rows, the header first."""
    return [line.split() for line in kubectl.ok("get", *args).splitlines()]


def pod_ips(kubectl: Kubectl) -> list[str]:
    pods = json.loads(kubectl.ok("get", "pods", "-l", "app=web", "-o", "json"))["items"]
    return sorted(p["status"]["podIP"] for p in pods)


def test_expose_a_deployment_and_read_its_endpoints(kubectl: Kubectl, fakekube: Cluster) -> None:
    kubectl.ok("create", "deployment", "web", "--image=nginx:1.27", "--replicas=3", "--port=80")
    fakekube.advance(2)  # scheduled, started, Ready
    assert kubectl.ok("expose", "deployment", "web", "--port=80", "--target-port=80") == "service/web exposed\n"
    service = json.loads(kubectl.ok("get", "svc", "web", "-o", "json"))
    assert service["spec"]["selector"] == {"app": "web"}
    cluster_ip = service["spec"]["clusterIP"]
    assert ipaddress.ip_address(cluster_ip) in ipaddress.ip_network("10.96.0.0/16")
    header, row = rows(kubectl, "svc", "web")
    assert header == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"]
    assert row[:5] == ["web", "ClusterIP", cluster_ip, "<none>", "80/TCP"]
    ips = pod_ips(kubectl)
    header, row = rows(kubectl, "endpoints", "web")
    assert header == ["NAME", "ENDPOINTS", "AGE"]
    assert row[:2] == ["web", ",".join(f"{ip}:80" for ip in ips)]
    assert kubectl("get", "endpoints", "web").stderr == DEPRECATED
    header, row = rows(kubectl, "endpointslices", "-l", "kubernetes.io/service-name=web")
    assert header == ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
    assert row[0].startswith("web-") and row[1:3] == ["IPv4", "80"]
    assert sorted(row[3].split(",")) == ips
    wide = rows(kubectl, "svc", "web", "-o", "wide")
    assert wide[0][-1] == "SELECTOR" and wide[1][-1] == "app=web"


def test_scaling_down_takes_the_pod_out_of_the_endpoints(kubectl: Kubectl, fakekube: Cluster) -> None:
    kubectl.ok("create", "deployment", "web", "--image=nginx:1.27", "--replicas=2", "--port=80")
    fakekube.advance(2)
    kubectl.ok("expose", "deployment", "web", "--port=8080", "--target-port=80")
    kubectl.ok("scale", "deployment", "web", "--replicas=1")
    fakekube.advance(1)
    [ip] = pod_ips(kubectl)
    assert rows(kubectl, "endpoints", "web")[1][:2] == ["web", f"{ip}:80"]


def test_the_kubernetes_service_and_its_endpoints(kubectl: Kubectl, fakekube: Cluster) -> None:
    assert rows(kubectl, "svc", "kubernetes")[1][:5] == ["kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP"]
    assert rows(kubectl, "endpoints", "kubernetes")[1][:2] == ["kubernetes", "172.18.0.1:6443"]
    assert rows(kubectl, "endpointslices", "kubernetes")[1][:4] == ["kubernetes", "IPv4", "6443", "172.18.0.1"]


def test_node_port_and_load_balancer_services(kubectl: Kubectl, fakekube: Cluster) -> None:
    kubectl.ok("create", "deployment", "web", "--image=nginx:1.27", "--port=80")
    kubectl.ok("expose", "deployment", "web", "--name=web-np", "--type=NodePort", "--port=80")
    node_port = json.loads(kubectl.ok("get", "svc", "web-np", "-o", "json"))["spec"]["ports"][0]["nodePort"]
    assert 30000 <= node_port <= 32767
    row = rows(kubectl, "svc", "web-np")[1]
    assert (row[1], row[3], row[4]) == ("NodePort", "<none>", f"80:{node_port}/TCP")
    kubectl.ok("expose", "deployment", "web", "--name=web-lb", "--type=LoadBalancer", "--port=80")
    row = rows(kubectl, "svc", "web-lb")[1]
    assert row[1] == "LoadBalancer" and row[3] == "172.18.255.200"
    assert row[4].startswith("80:") and row[4].endswith("/TCP")
    events = kubectl.ok("get", "events", "--field-selector", "involvedObject.name=web-lb", "-o", "json")
    assert [e["reason"] for e in json.loads(events)["items"]] == ["EnsuringLoadBalancer", "EnsuredLoadBalancer"]


def test_an_explicit_cluster_ip_in_use_is_refused(kubectl: Kubectl, fakekube: Cluster) -> None:
    out = kubectl.ok("create", "service", "clusterip", "dns", "--clusterip=10.96.0.10", "--tcp=53:53")
    assert out == "service/dns created\n"
    refused = kubectl("create", "service", "clusterip", "dns2", "--clusterip=10.96.0.10", "--tcp=53:53")
    assert refused.rc == 1
    shown = '[]string{"10.96.0.10"}' if server_version(kubectl.version) == "1.33" else '["10.96.0.10"]'  # JSON from 1.34
    assert refused.stderr.strip() == (
        'error: failed to create ClusterIP service: Service "dns2" is invalid: spec.clusterIPs: Invalid value: '
        f"{shown}: failed to allocate IP 10.96.0.10: provided IP is already allocated")
    headless = kubectl.ok("create", "service", "clusterip", "db", "--clusterip=None")
    assert headless == "service/db created\n"
    assert rows(kubectl, "svc", "db")[1][:5] == ["db", "ClusterIP", "None", "<none>", "<none>"]
