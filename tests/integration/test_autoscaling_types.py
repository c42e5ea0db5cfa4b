"""autoscaling/v1 HorizontalPodAutoscalers over HTTP: a view of the autoscaling/v2 ones (one
store), converted as upstream converts them, with v2's defaults and kubectl's columns."""

from __future__ import annotations

from kubernetes import client

from fakekube import Cluster
from tests.integration.test_request_semantics import request

V1 = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
TARGET = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}


def test_one_hpa_through_both_versions(fakekube: Cluster) -> None:
    v1 = client.AutoscalingV1Api(fakekube.client())
    v2 = client.AutoscalingV2Api(fakekube.client())
    created = v1.create_namespaced_horizontal_pod_autoscaler("default", {
        "metadata": {"name": "web"}, "spec": {"scaleTargetRef": TARGET, "maxReplicas": 5,
                                               "targetCPUUtilizationPercentage": 60}})
    assert (created.spec.min_replicas, created.spec.target_cpu_utilization_percentage) == (1, 60)
    seen = v2.read_namespaced_horizontal_pod_autoscaler("web", "default")
    [metric] = seen.spec.metrics
    assert (metric.type, metric.resource.name, metric.resource.target.type, metric.resource.target.average_utilization) == \
        ("Resource", "cpu", "Utilization", 60)
    v2.patch_namespaced_horizontal_pod_autoscaler_status("web", "default", {"status": {
        "currentReplicas": 2, "desiredReplicas": 3,
        "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 75}}}]}})
    status = v1.read_namespaced_horizontal_pod_autoscaler("web", "default").status
    assert (status.current_replicas, status.desired_replicas, status.current_cpu_utilization_percentage) == (2, 3, 75)
    code, table, _ = request(fakekube, "GET", V1, accept=TABLE)
    assert table["rows"][0]["cells"] == ["web", "Deployment/web", "cpu: 75%/60%", "1", 5, 2, "0s"]  # MinPods: a string
    code, listed, _ = request(fakekube, "GET", V1)
    assert listed["apiVersion"] == "autoscaling/v1" and listed["items"][0]["spec"]["targetCPUUtilizationPercentage"] == 60


def test_a_v1_hpa_without_a_target_reads_back_with_v2s_default(fakekube: Cluster) -> None:
    v1 = client.AutoscalingV1Api(fakekube.client())
    created = v1.create_namespaced_horizontal_pod_autoscaler("default", {
        "metadata": {"name": "web"}, "spec": {"scaleTargetRef": TARGET, "maxReplicas": 5}})
    assert created.spec.target_cpu_utilization_percentage == 80
    code, bad, _ = request(fakekube, "POST", V1, {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
                                                  "metadata": {"name": "bad"}, "spec": {"scaleTargetRef": TARGET,
                                                                                        "maxReplicas": 0}})
    assert code == 422 and bad["details"]["causes"][0]["field"] == "spec.maxReplicas"


def test_both_versions_show_the_storage_versions_hash(fakekube: Cluster) -> None:
    """Discovery's storageVersionHash is the stored version's (autoscaling/v2), in either version."""
    hashes = {version: [r["storageVersionHash"] for r in request(fakekube, "GET", f"/apis/autoscaling/{version}")[1]
                        ["resources"] if r["name"] == "horizontalpodautoscalers"] for version in ("v1", "v2")}
    assert hashes == {"v1": ["qwQve8ut294="], "v2": ["qwQve8ut294="]}
