"""``pods/portforward`` with the official Python client (WebSocket ``v4.channel.k8s.io``: two
channels per port, each opened with the port's two bytes) and in-cluster routing rules."""

from __future__ import annotations

import json

import pytest
from kubernetes import client
from kubernetes.stream import portforward

from fakekube import Cluster
from fakekube.kubelet.httpmodel import HttpAnswer, HttpRequest
from fakekube.objects.serviceroutes import Backend, Unreachable, resolve, service_backend

pytestmark = pytest.mark.fakekube(nodes=1)


def read_all(sock: object) -> bytes:
    data = b""
    while True:
        chunk = sock.recv(65536)  # type: ignore[attr-defined]
        if not chunk:
            return data
        data += chunk


def test_the_python_clients_port_forward_is_answered_by_the_pods_behaviour(fakekube: Cluster) -> None:
    routes = {"http": [{"port": 8080, "path": "/version", "body": '{"v": 3}', "headers": {"Content-Type": "application/json"}}]}
    fakekube.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "api", "namespace": "default",
                                                                     "annotations": {"fakekube.io/behaviour": json.dumps(routes)}},
                     "spec": {"containers": [{"name": "c", "image": "example/api:1", "ports": [{"containerPort": 8080}]}]}})
    fakekube.advance(2)
    core = client.CoreV1Api(fakekube.client())
    forward = portforward(core.connect_get_namespaced_pod_portforward, "api", "default", ports="8080,81")
    try:
        sock = forward.socket(8080)
        sock.setblocking(True)
        sock.sendall(b"GET /version HTTP/1.1\r\nHost: api\r\nConnection: close\r\n\r\n")
        head, _, body = read_all(sock).partition(b"\r\n\r\n")
        assert head.split(b"\r\n") == [b"HTTP/1.1 200 OK", b"Content-Type: application/json",
                                       b"Date: Wed, 01 Jan 2025 00:00:02 GMT", b"Content-Length: 8",
                                       b"Connection: close"]
        assert body == b'{"v": 3}'
        assert forward.error(8080) is None
        assert forward.error(81).startswith("error forwarding port 81 to pod ")
        assert forward.error(81).endswith("IPv4: dial tcp4 127.0.0.1:81: connect: connection refused IPv6 dial tcp6 "
                                          "[::1]:81: connect: connection refused ")
    finally:
        forward.close()


def test_services_route_by_dns_name_and_port_to_a_ready_endpoint() -> None:
    service = {"metadata": {"name": "web", "namespace": "shop"},
               "spec": {"clusterIP": "10.96.0.20", "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}}
    endpoints = {"subsets": [{"addresses": [{"ip": "10.224.0.7", "targetRef": {"kind": "Pod", "namespace": "shop",
                                                                                 "name": "web-1"}}],
                              "ports": [{"name": "http", "port": 8080}]}]}
    args = (lambda ns, name: service if (ns, name) == ("shop", "web") else None, lambda: [service],
            lambda ns, name: endpoints, lambda ip: None)
    expected = Backend("shop", "web-1", "10.224.0.7", 8080)
    for host in ("web.shop", "web.shop.svc", "web.shop.svc.cluster.local", "10.96.0.20"):
        assert resolve(host, 80, "default", *args) == expected
    assert resolve("web", 80, "shop", *args) == expected
    assert resolve("web", 80, "default", *args) == Unreachable("Could not resolve host: web", 0)
    assert resolve("web.shop", 81, "default", *args) == Unreachable(
        "Failed to connect to 10.96.0.20 port 81: Connection refused", 0)
    assert service_backend(service, endpoints, "80") == expected
    assert service_backend(service, {"subsets": []}, "http") == Unreachable('no endpoints available for service "web"')
    assert service_backend(service, endpoints, "90") == Unreachable('no service port 90 found for service "web"')


def test_a_request_from_inside_the_cluster_reaches_a_service_by_name(fakekube: Cluster) -> None:
    """What a ``curl`` in a container gets (the shell model calls ``PodRunner.request``)."""
    routes = {"http": [{"port": 8080, "path": "/", "body": "hello from web\n"}]}
    fakekube.create({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": "web-1", "namespace": "default", "labels": {"app": "web"},
                                  "annotations": {"fakekube.io/behaviour": json.dumps(routes)}},
                     "spec": {"containers": [{"name": "c", "image": "example/web:1", "ports": [{"containerPort": 8080}]}]}})
    fakekube.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
                     "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]}})
    fakekube.advance(2)
    runner = fakekube.kubelets.pods

    def curl(namespace: str, host: str, port: int) -> object:
        return fakekube.engine.run(lambda: runner.request(namespace, host, port, HttpRequest("GET", "/")))

    answer = curl("default", "web", 80)
    assert isinstance(answer, HttpAnswer) and (answer.status, answer.body) == (200, b"hello from web\n")
    cluster_ip = fakekube.get("v1", "Service", "web")["spec"]["clusterIP"]
    assert isinstance(curl("kube-system", f"{cluster_ip}", 80), HttpAnswer)
    assert isinstance(curl("kube-system", "web.default.svc.cluster.local", 80), HttpAnswer)
    assert curl("kube-system", "web", 80) == Unreachable("Could not resolve host: web", 0)
    assert curl("default", "10.224.0.2", 9999) == Unreachable("Failed to connect to 10.224.0.2 port 9999: "
                                                              "Connection refused", 0)
