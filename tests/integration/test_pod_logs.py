"""pods/log serves what the pod's behaviour says its container printed, on cluster time."""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from fakekube import Cluster

LINES = [[0, "starting"], [5, "listening on :8080"], [60, "request 1"]]


def logging_pod(name: str = "talker", node: str = "node-1") -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default",
                         "annotations": {"fakekube.io/behaviour": json.dumps({"log_lines": LINES})}},
            "spec": {"nodeName": node, "containers": [{"name": "app", "image": "example/app:1"}]}}


@pytest.fixture
def core(fakekube: Cluster) -> client.CoreV1Api:
    return client.CoreV1Api(fakekube.client())


@pytest.mark.fakekube(nodes=1)
def test_logs_appear_as_cluster_time_passes(fakekube: Cluster, core: client.CoreV1Api) -> None:
    fakekube.create(logging_pod())
    fakekube.advance(10)  # started at 1 s: lines at 1 s and 6 s so far
    assert core.read_namespaced_pod_log("talker", "default") == "starting\nlistening on :8080\n"
    fakekube.advance(60)
    assert core.read_namespaced_pod_log("talker", "default", tail_lines=1) == "request 1\n"
    stamped = core.read_namespaced_pod_log("talker", "default", timestamps=True, tail_lines=1)
    assert stamped == "2025-01-01T00:01:01.000000000Z request 1\n"


@pytest.mark.fakekube(nodes=1)
def test_log_errors_are_upstreams(fakekube: Cluster, core: client.CoreV1Api) -> None:
    fakekube.create(logging_pod())
    fakekube.advance(2)
    with pytest.raises(ApiException) as info:
        core.read_namespaced_pod_log("talker", "default", container="nope")
    assert info.value.status == 400
    with pytest.raises(ApiException) as info:
        core.read_namespaced_pod_log("missing", "default")
    assert info.value.status == 404


@pytest.mark.fakekube(nodes=1)
def test_the_log_of_a_pod_no_node_runs_yet_is_no_content(fakekube: Cluster, core: client.CoreV1Api) -> None:
    """Upstream's LogLocation finds no kubelet for an unscheduled pod: 204, no body, no Content-Type."""
    pending = logging_pod("pending")
    del pending["spec"]["nodeName"]
    pending["spec"]["schedulerName"] = "nobody"  # stays unscheduled
    fakekube.create(pending)
    url = urlsplit(fakekube.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        connection.request("GET", "/api/v1/namespaces/default/pods/pending/log")
        response = connection.getresponse()
        assert (response.status, response.read()) == (204, b"")
        assert response.getheader("Content-Type") is None
    finally:
        connection.close()
