"""The TTL-after-finished controller deletes a finished Job ``ttlSecondsAfterFinished`` after
its Complete or Failed condition's lastTransitionTime, with its pods.

Times are seconds since the cluster's epoch; a Job whose pod runs ``echo hi`` completes
one second after it is created.
"""

from __future__ import annotations

from typing import Any

from kubernetes import client

from fakekube import Cluster
from tests.integration.timeline import at

Obj = dict[str, Any]


def job(name: str, script: str = "echo hi", **spec: Any) -> Obj:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "default"},
            "spec": {**spec, "template": {"spec": {"restartPolicy": "Never", "containers": [
                {"name": "main", "image": "busybox", "command": ["sh", "-c", script]}]}}}}


def jobs(cluster: Cluster) -> list[str]:
    return sorted(item["metadata"]["name"] for item in cluster.list("batch/v1", "Job"))


def pods_of(cluster: Cluster, name: str) -> list[Obj]:
    return cluster.list("v1", "Pod", label_selector=f"batch.kubernetes.io/job-name={name}")


def test_a_completed_job_is_deleted_with_its_pods_when_its_ttl_runs_out() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(job("done", ttlSecondsAfterFinished=30))
    cluster.create(job("kept"))
    at(cluster, 30.9)  # completed at 1 s
    assert jobs(cluster) == ["done", "kept"]
    at(cluster, 31)
    assert jobs(cluster) == ["kept"]
    assert pods_of(cluster, "done") == [] and len(pods_of(cluster, "kept")) == 1
    at(cluster, 3600)
    assert jobs(cluster) == ["kept"]


def test_a_failed_job_goes_too_and_a_zero_ttl_deletes_at_once() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(job("failed", "exit 1", backoffLimit=0, ttlSecondsAfterFinished=10))
    cluster.create(job("instant", ttlSecondsAfterFinished=0))
    at(cluster, 1)  # both finished at 1 s
    assert jobs(cluster) == ["failed"]
    at(cluster, 10.9)
    assert jobs(cluster) == ["failed"]
    at(cluster, 11)
    assert jobs(cluster) == []


def test_the_ttl_counts_from_finishing_and_follows_a_later_change() -> None:
    with Cluster(nodes=1) as cluster:
        batch = client.BatchV1Api(cluster.client())
        cluster.create(job("slow", "sleep 20", ttlSecondsAfterFinished=5))
        at(cluster, 25.9)  # finished at 21 s
        assert jobs(cluster) == ["slow"]
        batch.patch_namespaced_job("slow", "default", {"spec": {"ttlSecondsAfterFinished": 60}})
        at(cluster, 80.9)
        assert jobs(cluster) == ["slow"]
        at(cluster, 81)
        assert jobs(cluster) == []


def test_a_ttl_added_after_finishing_starts_from_the_finish_time() -> None:
    with Cluster(nodes=1) as cluster:
        batch = client.BatchV1Api(cluster.client())
        cluster.create(job("old"))
        at(cluster, 100)
        batch.patch_namespaced_job("old", "default", {"spec": {"ttlSecondsAfterFinished": 50}})
        assert jobs(cluster) == []  # finished at 1 s: already past 51 s
