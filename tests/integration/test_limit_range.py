"""LimitRanger admission: a namespace's LimitRanges default containers' requests and limits
(recorded in the ``kubernetes.io/limit-ranger`` annotation) and refuse pods and claims
outside their min, max and maxLimitRequestRatio with upstream's 403 texts."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from fakekube import Cluster
from fakekube.api.machinery.errors import ApiError

Obj = dict[str, Any]


def limit_range(*items: Obj, name: str = "limits") -> Obj:
    return {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": name, "namespace": "default"},
            "spec": {"limits": list(items)}}


def pod(name: str, *containers: Obj, init: tuple[Obj, ...] = ()) -> Obj:
    spec: Obj = {"containers": list(containers)}
    if init:
        spec["initContainers"] = list(init)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def container(name: str = "app", requests: Obj | None = None, limits: Obj | None = None) -> Obj:
    resources = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    return {"name": name, "image": "nginx", "resources": resources}


def refused(cluster: Cluster, obj: Obj) -> tuple[int, str]:
    with pytest.raises(ApiError) as info:
        cluster.create(obj)
    return info.value.code, info.value.message


def test_defaults_fill_what_containers_leave_unset_and_are_annotated() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(limit_range({"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"},
                                "defaultRequest": {"cpu": "100m"}}))
    created = cluster.create(pod("web", container("app"), container("side", requests={"memory": "64Mi"}),
                                 init=(container("setup", limits={"cpu": "1"}),)))
    app, side = created["spec"]["containers"]
    # defaultRequest memory comes from default memory (LimitRange defaulting), cpu from defaultRequest
    assert app["resources"] == {"limits": {"cpu": "500m", "memory": "256Mi"},
                                "requests": {"cpu": "100m", "memory": "256Mi"}}
    assert side["resources"] == {"limits": {"cpu": "500m", "memory": "256Mi"},
                                 "requests": {"cpu": "100m", "memory": "64Mi"}}
    # a limit without a request: the request is the limit (pod defaulting), not defaultRequest
    assert created["spec"]["initContainers"][0]["resources"] == {
        "limits": {"cpu": "1", "memory": "256Mi"}, "requests": {"cpu": "1", "memory": "256Mi"}}
    assert created["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app; "
        "cpu request for container side; cpu, memory limit for container side; "
        "memory request for init container setup; memory limit for init container setup")


def test_a_stored_limit_range_shows_its_defaulted_items() -> None:
    cluster = Cluster(nodes=1)
    stored = cluster.create(limit_range({"type": "Container", "max": {"memory": "1Gi"}, "min": {"cpu": "100m"}}))
    assert stored["spec"]["limits"] == [{"type": "Container", "max": {"memory": "1Gi"}, "min": {"cpu": "100m"},
                                         "default": {"memory": "1Gi"},
                                         "defaultRequest": {"memory": "1Gi", "cpu": "100m"}}]


def test_container_min_and_max_refuse_with_every_problem() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(limit_range({"type": "Container", "min": {"cpu": "100m"}, "max": {"memory": "1Gi"}}))
    assert refused(cluster, pod("x", container(requests={"cpu": "50m"}, limits={"memory": "2Gi"}))) == (
        403, 'pods "x" is forbidden: [minimum cpu usage per Container is 100m, but request is 50m, '
             'maximum memory usage per Container is 1Gi, but limit is 2Gi]')
    assert refused(cluster, pod("y", container(requests={"cpu": "50m"}))) == (
        403, 'pods "y" is forbidden: minimum cpu usage per Container is 100m, but request is 50m')
    assert [p["metadata"]["name"] for p in cluster.list("v1", "Pod", namespace="default")] == []


def test_pod_totals_and_the_limit_to_request_ratio() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(limit_range({"type": "Pod", "max": {"cpu": "1"}},
                               {"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}}))
    two = (container("a", requests={"cpu": "300m"}, limits={"cpu": "600m"}),
           container("b", requests={"cpu": "300m"}, limits={"cpu": "600m"}))
    assert refused(cluster, pod("big", *two)) == (
        403, 'pods "big" is forbidden: maximum cpu usage per Pod is 1, but limit is 1200m')
    assert refused(cluster, pod("spiky", container(requests={"cpu": "100m"}, limits={"cpu": "300m"}))) == (
        403, 'pods "spiky" is forbidden: cpu max limit to request ratio per Container is 2, '
             'but provided ratio is 3.000000')
    assert refused(cluster, pod("none", container())) == (
        403, 'pods "none" is forbidden: [maximum cpu usage per Pod is 1.  No limit is specified, '
             'cpu max limit to request ratio per Container is 2, but no request is specified or request is 0]')
    cluster.create(pod("fits", container(requests={"cpu": "300m"}, limits={"cpu": "600m"})))


def test_claims_are_held_to_the_storage_min_and_max() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(limit_range({"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"},
                                "max": {"storage": "10Gi"}}))

    def claim(name: str, size: str) -> Obj:
        return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}}

    assert refused(cluster, claim("small", "500Mi")) == (
        403, 'persistentvolumeclaims "small" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, '
             'but request is 500Mi')
    assert refused(cluster, claim("huge", "20Gi")) == (
        403, 'persistentvolumeclaims "huge" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, '
             'but request is 20Gi')
    cluster.create(claim("ok", "5Gi"))


def test_the_http_client_gets_a_403_forbidden_status() -> None:
    with Cluster(nodes=1) as cluster:
        core = client.CoreV1Api(cluster.client())
        core.create_namespaced_limit_range("default", limit_range({"type": "Container", "max": {"cpu": "1"}}))
        body = pod("greedy", container(limits={"cpu": "2"}))
        with pytest.raises(ApiException) as info:
            core.create_namespaced_pod("default", body)
        status = json.loads(info.value.body)
        assert (info.value.status, status["reason"], status["message"]) == (
            403, "Forbidden", 'pods "greedy" is forbidden: maximum cpu usage per Container is 1, but limit is 2')
        assert status["details"] == {"name": "greedy", "kind": "pods"}
        defaulted = core.create_namespaced_pod("default", pod("plain", container()))
        assert defaulted.spec.containers[0].resources.limits == {"cpu": "1"}
        assert defaulted.metadata.annotations == {
            "kubernetes.io/limit-ranger": "LimitRanger plugin set: cpu request for container app; "
                                          "cpu limit for container app"}
