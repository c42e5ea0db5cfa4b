"""metrics.k8s.io through the official client: figures from container behaviour, on the
15 s scrape grid of virtual time, with metrics-server's selectors, 404s and refusals."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from fakekube import Cluster

GROUP, VERSION = "metrics.k8s.io", "v1beta1"
pytestmark = pytest.mark.fakekube(nodes=2, metrics_server=True)


def web_pod(name: str = "web", node: str = "node-1", behaviour: dict[str, Any] | None = None,
            labels: dict[str, str] | None = None, containers: tuple[str, ...] = ("nginx",),
            restart_policy: str = "Always") -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": "default", "labels": labels or {"app": name}}
    if behaviour is not None:
        metadata["annotations"] = {"fakekube.io/behaviour": json.dumps(behaviour)}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
            "spec": {"nodeName": node, "restartPolicy": restart_policy,
                     "containers": [{"name": c, "image": "nginx:1.27"} for c in containers]}}


@pytest.fixture
def metrics(fakekube: Cluster) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(fakekube.client())


def pod_metrics(metrics: client.CustomObjectsApi, name: str, namespace: str = "default") -> dict[str, Any]:
    return metrics.get_namespaced_custom_object(GROUP, VERSION, namespace, "pods", name)


def not_found(call: Any, *args: Any) -> dict[str, Any]:
    with pytest.raises(ApiException) as info:
        call(*args)
    assert info.value.status == 404
    return json.loads(info.value.body)


def test_a_pod_has_figures_once_scraped_with_the_default_usage(fakekube: Cluster,
                                                               metrics: client.CustomObjectsApi) -> None:
    fakekube.create(web_pod())
    fakekube.advance(5)  # running since 1 s, but no scrape has seen it 10 s yet
    status = not_found(pod_metrics, metrics, "web")
    assert status["message"] == 'podmetrics.metrics.k8s.io "default/web" not found'
    assert status["details"] == {"name": "default/web", "group": GROUP, "kind": "podmetrics"}
    fakekube.advance(10)  # the scrape at 15 s: the fresh-container rule, window since its start
    assert pod_metrics(metrics, "web") == {
        "apiVersion": "metrics.k8s.io/v1beta1", "kind": "PodMetrics",
        "metadata": {"name": "web", "namespace": "default", "creationTimestamp": "2025-01-01T00:00:15Z",
                     "labels": {"app": "web"}},
        "timestamp": "2025-01-01T00:00:15Z", "window": "14s",
        "containers": [{"name": "nginx", "usage": {"cpu": "1m", "memory": "4Mi"}}],
    }
    fakekube.advance(22)  # the last scrape is at 30 s; the one before at 15 s
    later = pod_metrics(metrics, "web")
    assert (later["timestamp"], later["window"]) == ("2025-01-01T00:00:30Z", "15s")
    assert later["metadata"]["creationTimestamp"] == "2025-01-01T00:00:37Z"  # metrics-server: the read's time


def test_figures_follow_the_behaviour_timeline_over_virtual_time(fakekube: Cluster,
                                                                 metrics: client.CustomObjectsApi) -> None:
    behaviour = {"cpu_usage_m": [[0, 5], [60, 250]], "memory_usage_bytes": [[0, "20Mi"], [90, 3000000]]}
    fakekube.create(web_pod(behaviour=behaviour))
    fakekube.advance(45)  # scrape at 45 s: the container has run 44 s
    assert pod_metrics(metrics, "web")["containers"][0]["usage"] == {"cpu": "5m", "memory": "20Mi"}
    fakekube.advance(30)  # scrape at 75 s covers 59..74 s of its life: 1 s at 5m, 14 s at 250m
    assert pod_metrics(metrics, "web")["containers"][0]["usage"] == {"cpu": "233666667n", "memory": "20Mi"}
    fakekube.advance(30)  # scrape at 105 s: 104 s of life, past both changes
    assert pod_metrics(metrics, "web")["containers"][0]["usage"] == {"cpu": "250m", "memory": "3000000"}


def test_node_figures_are_their_pods_plus_the_node_overhead(fakekube: Cluster,
                                                             metrics: client.CustomObjectsApi) -> None:
    assert metrics.list_cluster_custom_object(GROUP, VERSION, "nodes")["items"] == []  # registered at 0 s
    fakekube.create(web_pod(behaviour={"cpu_usage_m": 100, "memory_usage_bytes": "64Mi"}))
    fakekube.advance(30)
    listing = metrics.list_cluster_custom_object(GROUP, VERSION, "nodes")
    assert listing["kind"] == "NodeMetricsList" and listing["metadata"] == {}
    usage = {item["metadata"]["name"]: (item["usage"], item["window"], item["timestamp"]) for item in listing["items"]}
    assert usage == {"node-1": ({"cpu": "125m", "memory": "320Mi"}, "15s", "2025-01-01T00:00:30Z"),
                     "node-2": ({"cpu": "25m", "memory": "256Mi"}, "15s", "2025-01-01T00:00:30Z")}
    one = metrics.get_cluster_custom_object(GROUP, VERSION, "nodes", "node-2")
    assert one["kind"] == "NodeMetrics" and one["metadata"]["labels"]["kubernetes.io/hostname"] == "node-2"
    status = not_found(metrics.get_cluster_custom_object, GROUP, VERSION, "nodes", "node-9")
    assert status["message"] == 'node "node-9" not found'


def test_label_and_field_selectors_and_namespaces(fakekube: Cluster, metrics: client.CustomObjectsApi) -> None:
    fakekube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}})
    fakekube.create(web_pod("web", labels={"app": "web", "tier": "front"}))
    fakekube.create(web_pod("db", labels={"app": "db"}))
    shop = web_pod("cart")
    shop["metadata"]["namespace"] = "shop"
    fakekube.create(shop)
    fakekube.advance(15)

    def names(namespace: str | None = None, **selectors: str) -> list[str]:
        if namespace is None:
            found = metrics.list_cluster_custom_object(GROUP, VERSION, "pods", **selectors)
        else:
            found = metrics.list_namespaced_custom_object(GROUP, VERSION, namespace, "pods", **selectors)
        return [f"{i['metadata']['namespace']}/{i['metadata']['name']}" for i in found["items"]]

    assert names() == ["default/db", "default/web", "shop/cart"]
    assert names("default") == ["default/db", "default/web"]
    assert names(label_selector="tier=front") == ["default/web"]
    assert names(label_selector="app in (db,cart)") == ["default/db", "shop/cart"]
    assert names(field_selector="metadata.name=cart") == ["shop/cart"]
    assert names(field_selector="metadata.namespace!=default") == ["shop/cart"]
    assert names(field_selector="spec.nodeName=node-1") == []  # metrics-server matches metadata only
    node_names = metrics.list_cluster_custom_object(GROUP, VERSION, "nodes", label_selector="kubernetes.io/hostname=node-2")
    assert [i["metadata"]["name"] for i in node_names["items"]] == ["node-2"]
    with pytest.raises(ApiException) as info:
        metrics.list_cluster_custom_object(GROUP, VERSION, "pods", label_selector="a===b")
    assert info.value.status == 400


def test_only_running_containers_report(fakekube: Cluster, metrics: client.CustomObjectsApi) -> None:
    behaviour = {"sidecar": {"run_for_s": 40, "memory_usage_bytes": 1000}}
    fakekube.create(web_pod("pair", containers=("app", "sidecar"), behaviour=behaviour, restart_policy="Never"))
    fakekube.create(web_pod("job", behaviour={"run_for_s": 20}, restart_policy="Never"))
    fakekube.advance(30)
    pair = pod_metrics(metrics, "pair")
    assert [(c["name"], c["usage"]["memory"]) for c in pair["containers"]] == [("app", "4Mi"), ("sidecar", "1k")]
    not_found(pod_metrics, metrics, "job")  # exited at 21 s: nothing ran at the 30 s scrape
    fakekube.advance(15)  # the sidecar exited at 41 s: the 45 s scrape sees the app alone
    assert [c["name"] for c in pod_metrics(metrics, "pair")["containers"]] == ["app"]
    assert not_found(pod_metrics, metrics, "gone")["message"] == 'pods "gone" not found'


def test_an_unreachable_kubelet_has_no_figures(fakekube: Cluster, metrics: client.CustomObjectsApi) -> None:
    fakekube.create(web_pod())
    fakekube.advance(30)
    fakekube.fail_node("node-1")
    not_found(pod_metrics, metrics, "web")
    nodes = metrics.list_cluster_custom_object(GROUP, VERSION, "nodes")["items"]
    assert [n["metadata"]["name"] for n in nodes] == ["node-2"]
    status = not_found(metrics.get_cluster_custom_object, GROUP, VERSION, "nodes", "node-1")
    assert status["message"] == 'nodemetrics.metrics.k8s.io "node-1" not found'
    fakekube.recover_node("node-1")
    assert pod_metrics(metrics, "web")["containers"][0]["usage"]["cpu"] == "1m"


def request(cluster: Cluster, method: str, path: str, body: bytes | None = None,
            accept: str = "application/json") -> tuple[int, Any]:
    req = urllib.request.Request(cluster.url + path, data=body, method=method,
                                 headers={"Accept": accept, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_read_only_as_metrics_server(fakekube: Cluster) -> None:
    code, status = request(fakekube, "GET", "/apis/metrics.k8s.io/v1beta1/pods?watch=true")
    assert (code, status["reason"], status["message"]) == (
        405, "MethodNotAllowed", 'watch is not supported on resources of kind "pods.metrics.k8s.io"')
    code, status = request(fakekube, "POST", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods", b"{}")
    assert (code, status["reason"]) == (405, "MethodNotAllowed")
    code, status = request(fakekube, "DELETE", "/apis/metrics.k8s.io/v1beta1/nodes/node-1")
    assert (code, status["reason"]) == (405, "MethodNotAllowed")


def test_discovery_and_the_api_service(fakekube: Cluster) -> None:
    code, resources = request(fakekube, "GET", "/apis/metrics.k8s.io/v1beta1")
    assert code == 200 and resources["resources"] == [
        {"name": "nodes", "singularName": "", "namespaced": False, "kind": "NodeMetrics", "verbs": ["get", "list"]},
        {"name": "pods", "singularName": "", "namespaced": True, "kind": "PodMetrics", "verbs": ["get", "list"]},
    ]
    groups = request(fakekube, "GET", "/apis")[1]["groups"]
    assert groups[-1] == {"name": "metrics.k8s.io", "versions": [{"groupVersion": "metrics.k8s.io/v1beta1",
                                                                  "version": "v1beta1"}],
                          "preferredVersion": {"groupVersion": "metrics.k8s.io/v1beta1", "version": "v1beta1"}}
    aggregated = request(fakekube, "GET", "/apis",
                         accept="application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")[1]
    last = aggregated["items"][-1]
    assert last["metadata"]["name"] == "metrics.k8s.io"
    assert [(r["resource"], r["scope"], r["singularResource"]) for r in last["versions"][0]["resources"]] == [
        ("nodes", "Cluster", ""), ("pods", "Namespaced", "")]
    service = client.ApiregistrationV1Api(fakekube.client()).read_api_service("v1beta1.metrics.k8s.io")
    assert (service.spec.group, service.spec.version, service.spec.service.name) == (
        "metrics.k8s.io", "v1beta1", "metrics-server")
    assert [(c.type, c.status, c.reason) for c in service.status.conditions] == [("Available", "True", "Passed")]


def test_podmetrics_table_as_metrics_server_prints_it(fakekube: Cluster) -> None:
    fakekube.create(web_pod(containers=("a", "b"), behaviour={"b": {"cpu_usage_m": 2.5, "memory_usage_bytes": "1Mi"}}))
    fakekube.advance(15)
    code, table = request(fakekube, "GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods",
                          accept="application/json;as=Table;v=v1;g=meta.k8s.io")
    assert code == 200
    assert [(c["name"], c["format"]) for c in table["columnDefinitions"]] == [
        ("Name", "name"), ("cpu", "quantity"), ("memory", "quantity"), ("Window", "duration")]
    assert [row["cells"] for row in table["rows"]] == [["web", "3500u", "5Mi", "14s"]]


@pytest.mark.fakekube(nodes=1, metrics_server=None)
def test_off_by_default_in_process(fakekube: Cluster) -> None:
    with pytest.raises(urllib.error.HTTPError) as missing:  # no group's routes: Go's plain NotFoundHandler
        urllib.request.urlopen(fakekube.url + "/apis/metrics.k8s.io/v1beta1", timeout=30)
    assert (missing.value.code, missing.value.read()) == (404, b"404 page not found\n")
    assert "metrics.k8s.io" not in [g["name"] for g in request(fakekube, "GET", "/apis")[1]["groups"]]
    # Only the apiserver's own local APIServices (kube-aggregator's); none for metrics-server.
    services = client.ApiregistrationV1Api(fakekube.client()).list_api_service().items
    assert "v1beta1.metrics.k8s.io" not in [s.metadata.name for s in services]
    assert all(s.spec.service is None for s in services)
    assert fakekube.engine.query("kubelet-pods", lambda ctx: ctx.usage) is None  # an HPA would find no metrics


@pytest.mark.parametrize("argv,file_text,expected", [
    ((), "", True),                                    # fakekube serve: kubectl top works
    (("--no-metrics-server",), "", False),
    ((), "metricsServer: false\n", False),
    (("--no-metrics-server",), "metricsServer: true\n", False),  # the flag wins over the file
])
def test_serve_turns_it_on_unless_told(tmp_path: Any, argv: tuple[str, ...], file_text: str, expected: bool) -> None:
    from fakekube.cli.main import build_parser, cluster_config
    options = ["serve", *argv]
    if file_text:
        (tmp_path / "cluster.yaml").write_text(file_text)
        options += ["--config", str(tmp_path / "cluster.yaml")]
    assert cluster_config(build_parser().parse_args(options), None).metrics_server is expected


def test_controllers_read_the_same_figures_through_the_runtime(fakekube: Cluster,
                                                               metrics: client.CustomObjectsApi) -> None:
    fakekube.create(web_pod(behaviour={"cpu_usage_m": 80}))
    fakekube.advance(30)

    def read(ctx: Any) -> Any:
        return ctx.usage.pod_usage([("default", "web"), ("default", "missing")])
    seen = fakekube.engine.query("kubelet-pods", read)
    assert list(seen) == [("default", "web")]
    assert seen[("default", "web")].containers[0].cpu_nanocores == 80_000_000
    assert pod_metrics(metrics, "web")["containers"][0]["usage"]["cpu"] == "80m"
