"""The HorizontalPodAutoscaler scales a Deployment on the CPU its pods' behaviour uses.

metrics-server's figures come from the containers' behaviour (``cpu_usage_m``); the HPA is
synced 15 s after it is created and every 15 s after, as upstream's fixed-interval queue
does. Times are seconds since the cluster's epoch.
"""

from __future__ import annotations

import json
from typing import Any

from fakekube import Cluster
from tests.integration.timeline import at

Obj = dict[str, Any]

UP_TO_TEN = {"minReplicas": 1, "maxReplicas": 10, "metrics": [
    {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}]}


def deployment(replicas: int, cpu_m: int, request: str | None = "200m") -> Obj:
    container: Obj = {"name": "app", "image": "nginx"}
    if request is not None:
        container["resources"] = {"requests": {"cpu": request}}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}}, "template": {
                "metadata": {"labels": {"app": "web"},
                             "annotations": {"fakekube.io/behaviour": json.dumps({"cpu_usage_m": cpu_m})}},
                "spec": {"containers": [container]}}}}


def hpa(target: str = "web", **spec: Any) -> Obj:
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target}, **spec}}


def status(cluster: Cluster) -> Obj:
    return cluster.get("autoscaling/v2", "HorizontalPodAutoscaler", "web").get("status") or {}


def conditions(cluster: Cluster) -> list[tuple[str, str, str]]:
    return [(c["type"], c["status"], c["reason"]) for c in status(cluster).get("conditions", [])]


def replicas(cluster: Cluster) -> int:
    return cluster.get("apps/v1", "Deployment", "web")["spec"]["replicas"]


def hpa_events(cluster: Cluster) -> list[tuple[str, str, str]]:
    return [(e["type"], e["reason"], e["message"]) for e in cluster.events(involved_name="web")
            if e["involvedObject"]["kind"] == "HorizontalPodAutoscaler"]


def test_a_busy_deployment_scales_up_at_the_policy_rate_until_max_replicas() -> None:
    cluster = Cluster(nodes=2, metrics_server=True)
    cluster.create(deployment(2, cpu_m=300))      # 300m of a 200m request: 150 % against a 50 % target
    at(cluster, 60)
    cluster.create(hpa(**UP_TO_TEN))
    at(cluster, 74)
    # Synced one period after creation; currentMetrics has no omitempty (1.36 answers null too).
    assert replicas(cluster) == 2 and status(cluster) == {"desiredReplicas": 0, "currentMetrics": None}
    at(cluster, 75)
    assert replicas(cluster) == 6                 # ceil(3 × 2); the default policy allows max(+4, +100 %)
    assert status(cluster)["currentMetrics"] == [{"type": "Resource", "resource": {
        "name": "cpu", "current": {"averageValue": "300m", "averageUtilization": 150}}}]
    assert (status(cluster)["currentReplicas"], status(cluster)["desiredReplicas"]) == (2, 6)
    assert status(cluster)["lastScaleTime"] == "2025-01-01T00:01:15Z"
    assert conditions(cluster) == [("AbleToScale", "True", "SucceededRescale"),
                                   ("ScalingActive", "True", "ValidMetricFound"),
                                   ("ScalingLimited", "False", "DesiredWithinRange")]
    at(cluster, 90)
    assert replicas(cluster) == 10                # 18 wanted, held at maxReplicas
    assert conditions(cluster)[2] == ("ScalingLimited", "True", "TooManyReplicas")
    assert hpa_events(cluster) == [
        ("Normal", "SuccessfulRescale", "New size: 6; reason: cpu resource utilization (percentage of request) above target"),
        ("Normal", "SuccessfulRescale", "New size: 10; reason: cpu resource utilization (percentage of request) above target")]


def test_an_idle_deployment_scales_down_to_min_replicas() -> None:
    cluster = Cluster(nodes=2, metrics_server=True)
    cluster.create(deployment(4, cpu_m=10))       # 5 % of the request
    at(cluster, 60)
    cluster.create(hpa(**UP_TO_TEN))
    at(cluster, 75)
    assert replicas(cluster) == 1
    assert status(cluster)["currentMetrics"][0]["resource"]["current"] == {"averageValue": "10m",
                                                                           "averageUtilization": 5}
    assert hpa_events(cluster) == [("Normal", "SuccessfulRescale", "New size: 1; reason: All metrics below target")]


def test_without_metrics_server_the_hpa_says_it_cannot_compute_a_count() -> None:
    cluster = Cluster(nodes=1)                    # in-process default: no metrics.k8s.io
    cluster.create(deployment(2, cpu_m=300))
    cluster.create(hpa(**UP_TO_TEN))
    at(cluster, 15)
    assert replicas(cluster) == 2
    detail = ("failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from "
              "resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)")
    active = next(c for c in status(cluster)["conditions"] if c["type"] == "ScalingActive")
    assert (active["status"], active["reason"], active["message"]) == (
        "False", "FailedGetResourceMetric", f"the HPA was unable to compute the replica count: {detail}")
    assert hpa_events(cluster) == [
        ("Warning", "FailedGetResourceMetric", detail),
        ("Warning", "FailedComputeMetricsReplicas",
         f"invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: {detail}")]
    assert (status(cluster)["currentReplicas"], status(cluster)["desiredReplicas"]) == (2, 0)


def test_a_missing_target_or_request_is_reported_in_upstreams_words() -> None:
    cluster = Cluster(nodes=1, metrics_server=True)
    cluster.create(hpa("nope", **UP_TO_TEN))
    at(cluster, 15)
    assert conditions(cluster) == [("AbleToScale", "False", "FailedGetScale")]
    assert status(cluster)["conditions"][0]["message"] == (
        'the HPA controller was unable to get the target\'s current scale: deployments.apps "nope" not found')
    cluster.delete("autoscaling/v2", "HorizontalPodAutoscaler", "web")
    cluster.create(deployment(2, cpu_m=300, request=None))
    at(cluster, 60)
    cluster.create(hpa(**UP_TO_TEN))
    at(cluster, 75)
    active = next(c for c in status(cluster)["conditions"] if c["type"] == "ScalingActive")
    pod = sorted(p["metadata"]["name"] for p in cluster.list("v1", "Pod"))[0]
    assert active["message"] == ("the HPA was unable to compute the replica count: failed to get cpu utilization: "
                                 f"missing request for cpu in container app of Pod {pod}")
