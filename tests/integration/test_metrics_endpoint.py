"""``GET /metrics``: kube-apiserver's Prometheus metrics, counted as upstream counts them.

The label sets below were recorded against kube-apiserver 1.36 (the same requests, the
difference of two scrapes): a collection's GET is ``LIST``, an apply ``APPLY``, a pod's
log ``CONNECT``; the scope is the route's; an unknown path or a refused request is not
counted; a custom resource listed by ``metadata.name`` is a ``GET`` of that resource.
"""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

import pytest
from prometheus_client.parser import text_string_to_metric_families

from fakekube import Cluster
from fakekube.api.auth import UserInfo
from fakekube.api.auth.identity import ADMIN_TOKEN

Labels = dict[str, str]
REQUESTS = "apiserver_request_total"


def raw(cluster: Cluster, method: str, path: str, body: Any = None, content_type: str = "application/json",
        token: str | None = None) -> tuple[int, bytes, str]:
    url = urlsplit(cluster.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    headers = {"Content-Type": content_type} if body is not None else {}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    try:
        connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
        response = connection.getresponse()
        return response.status, response.read(), response.getheader("Content-Type") or ""
    finally:
        connection.close()


def scrape(cluster: Cluster, token: str | None = None) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    code, body, content_type = raw(cluster, "GET", "/metrics", token=token)
    assert code == 200, body
    assert content_type == "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(body.decode()) for sample in family.samples}


def request(verb: str, resource: str, scope: str, code: int, subresource: str = "", group: str = "",
            version: str = "v1", dry_run: str = "") -> tuple[str, tuple[tuple[str, str], ...]]:
    labels = {"code": str(code), "component": "apiserver", "dry_run": dry_run, "group": group,
              "resource": resource, "scope": scope, "subresource": subresource, "system_client": "",
              "verb": verb, "version": version}
    return REQUESTS, tuple(sorted(labels.items()))


def path_request(subresource: str, code: int = 200, component: str = "") -> tuple[str, tuple[tuple[str, str], ...]]:
    labels = {"code": str(code), "component": component, "dry_run": "", "group": "", "resource": "", "scope": "",
              "subresource": subresource, "system_client": "", "verb": "GET", "version": ""}
    return REQUESTS, tuple(sorted(labels.items()))


def counted(before: dict, after: dict) -> dict:
    """The request series that moved between two scrapes, by how much."""
    return {key: value - before.get(key, 0) for key, value in after.items()
            if key[0] == REQUESTS and value != before.get(key, 0)}


CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": "crontabs.stable.example.com"},
       "spec": {"group": "stable.example.com", "scope": "Namespaced",
                "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab"},
                "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                    "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}


def test_requests_are_counted_with_upstreams_labels(fakekube: Cluster) -> None:
    fakekube.create(CRD)
    before = scrape(fakekube)
    cms = "/api/v1/namespaces/default/configmaps"
    assert raw(fakekube, "POST", cms, {"metadata": {"name": "a"}})[0] == 201
    assert raw(fakekube, "POST", cms + "?dryRun=All", {"metadata": {"name": "b"}})[0] == 201
    assert raw(fakekube, "GET", cms + "/a")[0] == 200
    assert raw(fakekube, "GET", cms + "/missing")[0] == 404
    assert raw(fakekube, "GET", cms)[0] == 200
    assert raw(fakekube, "GET", "/api/v1/configmaps?limit=1")[0] == 200
    assert raw(fakekube, "PATCH", cms + "/a?fieldManager=m", {"apiVersion": "v1", "kind": "ConfigMap",
                                                            "metadata": {"name": "a"}, "data": {"k": "v"}},
               content_type="application/apply-patch+yaml")[0] == 200
    assert raw(fakekube, "PATCH", cms + "/a", {"data": {"k": "w"}}, "application/merge-patch+json")[0] == 200
    assert raw(fakekube, "GET", "/api/v1/namespaces/default/pods/nopod/log")[0] == 404
    assert raw(fakekube, "DELETE", cms)[0] == 200
    assert raw(fakekube, "GET", "/api/v1/nodes")[0] == 200
    assert raw(fakekube, "GET", "/apis/stable.example.com/v1/crontabs?fieldSelector=metadata.name%3Dx")[0] == 200
    assert raw(fakekube, "GET", "/healthz")[0] == 200
    assert raw(fakekube, "GET", "/openapi/v3")[0] == 200
    assert raw(fakekube, "GET", "/openapi/v3/api/v9")[0] == 404
    # Not counted: unknown paths and resources, discovery documents, /version, /openapi/v2, one health check.
    for path in ("/api/v1/namespaces/default/bogus", "/nothing", "/api", "/apis/apps/v1", "/version",
                 "/openapi/v2", "/healthz/etcd"):
        raw(fakekube, "GET", path)
    moved = counted(before, scrape(fakekube))
    assert moved == {
        request("POST", "configmaps", "resource", 201): 1,
        request("POST", "configmaps", "resource", 201, dry_run="All"): 1,
        request("GET", "configmaps", "resource", 200): 1,
        request("GET", "configmaps", "resource", 404): 1,
        request("LIST", "configmaps", "namespace", 200): 1,
        request("LIST", "configmaps", "cluster", 200): 1,
        request("APPLY", "configmaps", "resource", 200): 1,
        request("PATCH", "configmaps", "resource", 200): 1,
        request("CONNECT", "pods", "resource", 404, subresource="log"): 1,
        request("DELETE", "configmaps", "namespace", 200): 1,
        request("LIST", "nodes", "cluster", 200): 1,
        request("GET", "crontabs", "resource", 200, group="stable.example.com"): 1,
        path_request("/healthz"): 1,
        path_request("openapi/v3"): 1,
        path_request("openapi/v3/", 404): 1,
    }


def test_a_watch_is_long_running_while_open_and_counted_when_it_ends(fakekube: Cluster) -> None:
    before = scrape(fakekube)
    watching = {"component": "apiserver", "group": "", "resource": "configmaps", "scope": "namespace",
                "subresource": "", "verb": "WATCH", "version": "v1"}
    gauge = ("apiserver_longrunning_requests", tuple(sorted(watching.items())))
    url = urlsplit(fakekube.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    connection.request("GET", "/api/v1/namespaces/default/configmaps?watch=true")
    response = connection.getresponse()
    assert response.status == 200
    try:
        during = scrape(fakekube)
        assert during[gauge] == 1
        assert request("WATCH", "configmaps", "namespace", 200) not in counted(before, during)
    finally:
        connection.close()
    fakekube.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "wake", "namespace": "default"}})
    for _ in range(100):  # the server notices the closed connection at its next write or check
        after = scrape(fakekube)
        if after.get(gauge) == 0:
            break
    assert after[gauge] == 0
    assert counted(before, after)[request("WATCH", "configmaps", "namespace", 200)] == 1
    histogram = ("apiserver_request_duration_seconds_count", tuple(sorted({**watching, "dry_run": ""}.items())))
    assert after[histogram] - before.get(histogram, 0) == 1


def test_objects_and_controller_queues(fakekube: Cluster) -> None:
    for name in ("a", "b", "c"):
        fakekube.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}})
    fakekube.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
                     "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                              "template": {"metadata": {"labels": {"app": "web"}},
                                           "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
    metrics = scrape(fakekube)
    configmaps = len(fakekube.list("v1", "ConfigMap"))
    assert metrics[("apiserver_storage_objects", (("resource", "configmaps"),))] == configmaps
    assert metrics[("apiserver_storage_objects", (("resource", "deployments.apps"),))] == 1
    # Only stored types: no reviews; cohabiting events.k8s.io Events are counted as core events.
    resources = {dict(labels)["resource"] for name, labels in metrics if name == "apiserver_storage_objects"}
    assert "tokenreviews.authentication.k8s.io" not in resources and "events.events.k8s.io" not in resources
    queues = {dict(labels)["name"]: value for name, labels in metrics if name == "workqueue_adds_total"
              for value in [metrics[(name, labels)]]}
    assert queues  # one per controller the engine runs
    assert max(queues.values()) > 0
    depths = {dict(labels)["name"] for name, labels in metrics if name == "workqueue_depth"}
    assert depths == set(queues)
    # The scrape itself is the one request in flight (upstream's shows it too).
    assert metrics[("apiserver_current_inflight_requests", (("request_kind", "readOnly"),))] == 1
    assert metrics[("apiserver_current_inflight_requests", (("request_kind", "mutating"),))] == 0


def test_each_cluster_counts_its_own_requests(fakekube: Cluster) -> None:
    with Cluster(system_pods=False) as other:
        before = scrape(other)
        raw(fakekube, "GET", "/api/v1/nodes")
        assert counted(before, scrape(other)) == {}


@pytest.fixture(scope="module")
def rbac() -> Any:
    with Cluster(authorization_mode="RBAC", tls=False, system_pods=False,
                 static_tokens={"alice-token": UserInfo("alice", ("devs",), "u-1"),
                                "prometheus-token": UserInfo("prometheus", ("system:monitoring",), "u-2")}) as running:
        yield running


def test_with_rbac_metrics_are_for_system_monitoring(rbac: Cluster) -> None:
    code, body, _ = raw(rbac, "GET", "/metrics", token="alice-token")
    assert code == 403
    assert json.loads(body)["message"] == 'forbidden: User "alice" cannot get path "/metrics"'
    scrape(rbac, token="prometheus-token")
    scrape(rbac, token=ADMIN_TOKEN)  # system:masters


def test_store_writes_are_timed_as_etcd_requests(fakekube: Cluster) -> None:
    """``etcd_request_duration_seconds{operation,group,resource}``: one observation per store
    write, as the etcd3 store times each etcd call (reads come from memory: not counted)."""
    scrape(fakekube)  # the first request has the store report its writes
    before = scrape(fakekube)
    path = "/api/v1/namespaces/default/configmaps"
    raw(fakekube, "POST", path, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "timed"}})
    raw(fakekube, "PATCH", f"{path}/timed", {"data": {"k": "v"}}, "application/merge-patch+json")
    raw(fakekube, "DELETE", f"{path}/timed")
    after = scrape(fakekube)
    for operation in ("create", "update", "delete"):
        key = ("etcd_request_duration_seconds_count",
               (("group", ""), ("operation", operation), ("resource", "configmaps")))
        assert after[key] - before.get(key, 0) == 1, operation
