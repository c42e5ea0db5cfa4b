"""The pure quota and LimitRange rules: Quantity arithmetic's printing, what objects cost,
and the constraint messages."""

from __future__ import annotations

from datetime import datetime, timezone

from fakekube.objects import limitranges, quota
from fakekube.objects import resourcelist as rl
from fakekube.objects.kinds import PODS, Resource

NOW = datetime(2025, 1, 1, tzinfo=timezone.utc)


def test_sums_print_as_quantity_add_does() -> None:
    a = rl.amount
    assert str(rl.ZERO.plus(a("64Mi"))) == "64Mi"  # a zero takes the other's format
    assert str(a("64Mi").plus(a("100M"))) == "167108864"  # BinarySI, no power of 1024 divides it
    assert str(a("1").plus(a("500m"))) == "1500m"
    assert str(a("1.5Gi")) == "1536Mi" and str(a("0.5")) == "500m" and str(a("512")) == "512"
    assert rl.pretty({"b": a("2"), "a": a("1Ki")}) == "a=1Ki,b=2"


def test_pod_usage_counts_sidecars_init_peaks_and_stops_when_terminal() -> None:
    pod = {"metadata": {}, "spec": {
        "containers": [{"name": "app", "resources": {"requests": {"cpu": "100m"}, "limits": {"memory": "64Mi"}}}],
        "initContainers": [{"name": "big", "resources": {"requests": {"cpu": "1"}}},
                           {"name": "side", "restartPolicy": "Always", "resources": {"requests": {"cpu": "50m"}}}]}}
    assert quota.usage(PODS, pod, NOW) == {"count/pods": rl.ONE, "pods": rl.ONE, "cpu": rl.amount("1"),
                                           "requests.cpu": rl.amount("1"), "limits.memory": rl.amount("64Mi")}
    done = dict(pod, status={"phase": "Succeeded"})
    assert quota.usage(PODS, done, NOW) == {"count/pods": rl.ONE}


def test_object_counts_and_matching_names() -> None:
    assert quota.count_name(Resource("apps", "deployments")) == "count/deployments.apps"
    assert quota.matching_resources(PODS, ["pods", "requests.cpu", "configmaps", "requests.example.com/gpu"]) == [
        "pods", "requests.cpu", "requests.example.com/gpu"]
    assert quota.tracked_resource("count/jobs.batch") == Resource("batch", "jobs")


def test_ratio_and_aggregate_messages() -> None:
    two = rl.amount("2")
    assert limitranges.ratio_constraint("Container", "cpu", two, {"cpu": rl.amount("300m")},
                                        {"cpu": rl.amount("1")}) == (
        "cpu max limit to request ratio per Container is 2, but provided ratio is 3.333333")
    assert limitranges.aggregate(["a"]) == "a"
    assert limitranges.aggregate(["a", "b", "a"]) == "[a, b]"
