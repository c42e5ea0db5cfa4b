"""`kubectl autoscale` and `kubectl get hpa` against the HPA controller, on metrics the
pods' behaviour gives (metrics-server on, as in a served cluster)."""

from __future__ import annotations

import json

import pytest

from fakekube import Cluster

from .conftest import Kubectl, kubectl_or_skip

pytestmark = pytest.mark.fakekube(nodes=2, metrics_server=True, kubernetes_version="1.33")  # kubectl 1.33's


@pytest.fixture
def kubectl(fakekube: Cluster, kubectl_cache_dir: str) -> Kubectl:
    return kubectl_or_skip("1.33", fakekube, kubectl_cache_dir)


def test_autoscale_scales_a_busy_deployment_and_get_hpa_shows_its_targets(kubectl: Kubectl, fakekube: Cluster) -> None:
    kubectl.ok("create", "deployment", "web", "--image=nginx", "--replicas=2")
    kubectl.ok("set", "resources", "deployment", "web", "--requests=cpu=100m")
    busy = json.dumps({"spec": {"template": {"metadata": {"annotations": {
        "fakekube.io/behaviour": json.dumps({"cpu_usage_m": 90})}}}}})
    kubectl.ok("patch", "deployment", "web", "-p", busy)
    fakekube.advance(60)
    assert kubectl.ok("autoscale", "deployment", "web", "--cpu-percent=60", "--min=2", "--max=5") == \
        "horizontalpodautoscaler.autoscaling/web autoscaled\n"
    fakekube.advance(15)
    row = kubectl.ok("get", "hpa", "web", "--no-headers").split()
    # REPLICAS is status.currentReplicas: the count the sync saw (it scaled the Deployment to 3)
    assert row[:7] == ["web", "Deployment/web", "cpu:", "90%/60%", "2", "5", "2"], row
    assert kubectl.ok("get", "deployment", "web", "-o", "jsonpath={.spec.replicas}") == "3"
    described = kubectl.ok("describe", "hpa", "web")
    assert "New size: 3; reason: cpu resource utilization (percentage of request) above target" in described
