"""``kubectl port-forward``, ``attach`` and the apiserver's proxy against simulated pods.

A forwarded or proxied request is answered by the container's HTTP behaviour
(kubelet/httpmodel.py): routes declared in the ``http`` behaviour field, nginx's own pages,
or a declared port's empty 200. kubectl 1.31+ port-forwards over WebSocket (SPDY tunneled),
older ones over SPDY; attach streams the container's output as cluster time reaches it.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
import urllib.error
import urllib.request
from typing import Any

import pytest

from fakekube import Cluster
from tests.e2e.conftest import VERSIONS, Kubectl, kubectl_or_skip

ALL_VERSIONS = ("1.27", *VERSIONS)
ROUTES = {"http": [{"port": 8080, "path": "/healthz", "body": "ok\n", "headers": {"X-Served-By": "fakekube"}},
                   {"port": 8080, "path": "/api/*", "method": "POST", "status": 201, "body": "created\n"}]}


@pytest.fixture(params=ALL_VERSIONS, ids=lambda v: f"kubectl{v}")
def any_kubectl(request: pytest.FixtureRequest, fakekube: Cluster, kubectl_cache_dir: str) -> Kubectl:
    return kubectl_or_skip(request.param, fakekube, kubectl_cache_dir)


def web_pod(name: str = "web", **metadata: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": {"app": name},
                         "annotations": {"fakekube.io/behaviour": json.dumps(ROUTES)}, **metadata},
            "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27",
                                     "ports": [{"name": "http", "containerPort": 80}, {"containerPort": 8080}]}]}}


def local_ports(stream: Any, pattern: str, count: int) -> list[int]:
    """The local ports kubectl chose and printed (``pattern``'s first group), once it printed
    ``count``. kubectl picks them (``:80``, ``--port=0``): a port the test found free and let
    go could be taken by another process before kubectl bound it (the suite runs in parallel)."""
    lines: list[str] = []
    while True:
        printed = stream.wait_for_lines(len(lines) + 1)
        if len(printed) == len(lines):  # nothing new before the stream's wait ran out
            break
        lines = printed
        found = [int(match.group(1)) for line in lines if (match := re.search(pattern, line))]
        if len(found) >= count:
            return found[:count]
    raise AssertionError(f"kubectl did not print {count} line(s) matching {pattern!r}: {lines}")


def fetch(url: str, method: str = "GET", body: bytes | None = None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, data=body, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


@pytest.mark.fakekube(nodes=1)
def test_port_forward_reaches_the_containers_declared_http_behaviour(any_kubectl: Kubectl, fakekube: Cluster) -> None:
    fakekube.create(web_pod())
    fakekube.advance(2)
    forward = any_kubectl.stream("port-forward", "pod/web", ":80", ":8080")
    try:
        [nginx] = local_ports(forward, r"^Forwarding from 127\.0\.0\.1:(\d+) -> 80$", 1)
        [api] = local_ports(forward, r"^Forwarding from 127\.0\.0\.1:(\d+) -> 8080$", 1)
        status, headers, body = fetch(f"http://127.0.0.1:{nginx}/")
        assert (status, headers["Server"]) == (200, "nginx/1.29.1") and b"<title>Welcome to nginx!</title>" in body
        assert headers["Date"] == "Wed, 01 Jan 2025 00:00:02 GMT"  # the pod's clock is the cluster's
        assert fetch(f"http://127.0.0.1:{nginx}/missing")[0] == 404
        status, headers, body = fetch(f"http://127.0.0.1:{api}/healthz")
        assert (status, headers["X-Served-By"], body) == (200, "fakekube", b"ok\n")
        assert fetch(f"http://127.0.0.1:{api}/api/orders", "POST", b"{}")[::2] == (201, b"created\n")
        assert fetch(f"http://127.0.0.1:{api}/other")[::2] == (404, b"404 page not found\n")
    finally:
        forward.stop()


@pytest.mark.fakekube(nodes=1)
def test_port_forward_to_a_port_nothing_listens_on_says_so(fakekube: Cluster, kubectl_cache_dir: str) -> None:
    kubectl = kubectl_or_skip("1.33", fakekube, kubectl_cache_dir)
    fakekube.create(web_pod())
    fakekube.advance(2)
    forward = kubectl.stream("port-forward", "pod/web", ":9999")
    try:
        [local] = local_ports(forward, r"^Forwarding from 127\.0\.0\.1:(\d+) -> 9999$", 1)
        with pytest.raises((urllib.error.URLError, ConnectionError)):
            fetch(f"http://127.0.0.1:{local}/")
    finally:
        result = forward.stop()
    assert "an error occurred forwarding " in result.stderr and "-> 9999: error forwarding port 9999 to pod " in \
        result.stderr and "dial tcp4 127.0.0.1:9999: connect: connection refused" in result.stderr, result.stderr


@pytest.mark.fakekube(nodes=1)
def test_the_apiserver_proxy_of_a_service_and_of_a_pod(fakekube: Cluster, kubectl_cache_dir: str) -> None:
    kubectl = kubectl_or_skip("1.33", fakekube, kubectl_cache_dir)
    fakekube.create(web_pod())
    fakekube.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
                     "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": "http"},
                                                                    {"name": "api", "port": 81, "targetPort": 8080}]}})
    fakekube.advance(2)
    assert kubectl.ok("get", "--raw", "/api/v1/namespaces/default/services/web:api/proxy/healthz") == "ok\n"
    assert "Welcome to nginx!" in kubectl.ok("get", "--raw", "/api/v1/namespaces/default/pods/web/proxy/")
    refused = kubectl("get", "--raw", "/api/v1/namespaces/default/pods/web:9999/proxy/")
    assert refused.rc == 1 and "error trying to reach service: dial tcp 10.224.0.2:9999: connect: connection refused" \
        in refused.stderr, refused.stderr
    proxy = kubectl.stream("proxy", "--port=0")
    try:
        [local] = local_ports(proxy, r"^Starting to serve on 127\.0\.0\.1:(\d+)$", 1)
        status, _, body = fetch(f"http://127.0.0.1:{local}/api/v1/namespaces/default/services/web:80/proxy/")
        assert status == 200 and b"Welcome to nginx!" in body
        assert fetch(f"http://127.0.0.1:{local}/api/v1/namespaces/default/services/web:81/proxy/api/x",
                     "POST", b"{}")[::2] == (201, b"created\n")
    finally:
        proxy.stop()


@pytest.mark.fakekube(nodes=1)
def test_attach_streams_the_output_as_cluster_time_reaches_it(any_kubectl: Kubectl, fakekube: Cluster) -> None:
    script = "for i in 1 2 3 4; do echo line $i; sleep 2; done"
    fakekube.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "talk", "namespace": "default"},
                     "spec": {"restartPolicy": "Never",
                              "containers": [{"name": "c", "image": "busybox:1.36", "command": ["sh", "-c", script]}]}})
    fakekube.advance(2)  # started at 1: line 1 is written before the attach, and not shown
    attach = subprocess.Popen([any_kubectl.binary, "--kubeconfig", any_kubectl.kubeconfig, "attach", "talk"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=any_kubectl._env)
    try:
        deadline = time.monotonic() + 10  # wall time for kubectl to connect (transport time)
        while fakekube.api.pod_streams.open_sessions == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        for _ in range(4):
            fakekube.advance(2)
            time.sleep(0.2)
        out, err = attach.communicate(timeout=20)
    finally:
        if attach.poll() is None:
            attach.kill()
    assert (attach.returncode, out) == (0, "line 2\nline 3\nline 4\n"), err
