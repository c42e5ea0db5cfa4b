"""The Job controller runs a Job's pods to its completions, at upstream's times and texts.

Containers run the scripts their commands give (kubelet/programs.py): a pod is created at
once, its container starts a second later. Times are seconds since the cluster's epoch.
"""

from __future__ import annotations

from typing import Any

from kubernetes import client

from fakekube import Cluster
from tests.integration.test_request_semantics import request
from tests.integration.timeline import at

Obj = dict[str, Any]


def job(name: str, script: str, **spec: Any) -> Obj:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "default"},
            "spec": {**spec, "template": {"spec": {"restartPolicy": "Never", "containers": [
                {"name": "main", "image": "busybox", "command": ["sh", "-c", script]}]}}}}


def status(cluster: Cluster, name: str) -> Obj:
    return cluster.get("batch/v1", "Job", name)["status"]


def conditions(cluster: Cluster, name: str) -> list[tuple[str, str, str, str]]:
    return [(c["type"], c["status"], c["reason"], c["lastTransitionTime"]) for c in status(cluster, name).get("conditions", [])]


def job_events(cluster: Cluster, name: str) -> list[tuple[str, str, str]]:
    return [(e["type"], e["reason"], e["message"]) for e in cluster.events()
            if e["involvedObject"]["kind"] == "Job" and e["involvedObject"]["name"] == name]


def pods(cluster: Cluster, name: str) -> list[Obj]:
    return [pod for pod in cluster.list("v1", "Pod")
            if pod["metadata"].get("labels", {}).get("batch.kubernetes.io/job-name") == name]


def stamp(seconds: int) -> str:
    return f"2025-01-01T00:{seconds // 60:02d}:{seconds % 60:02d}Z"


def test_a_job_runs_one_pod_to_completion() -> None:
    cluster = Cluster(nodes=1)
    created = cluster.create(job("hello", "echo hello"))
    (pod,) = pods(cluster, "hello")
    meta = pod["metadata"]
    assert meta["generateName"] == "hello-" and meta["finalizers"] == ["batch.kubernetes.io/job-tracking"]
    assert meta["ownerReferences"] == [{"apiVersion": "batch/v1", "kind": "Job", "name": "hello",
                                        "uid": created["metadata"]["uid"], "controller": True,
                                        "blockOwnerDeletion": True}]
    assert status(cluster, "hello") == {"startTime": stamp(0), "active": 1, "terminating": 0,
                                        "uncountedTerminatedPods": {}, "ready": 0}
    at(cluster, 1)
    done = status(cluster, "hello")
    assert conditions(cluster, "hello") == [("SuccessCriteriaMet", "True", "CompletionsReached", stamp(1)),
                                            ("Complete", "True", "CompletionsReached", stamp(1))]
    assert done["conditions"][1]["message"] == "Reached expected number of succeeded pods"
    assert (done["succeeded"], done["completionTime"], "active" in done) == (1, stamp(1), False)
    assert job_events(cluster, "hello") == [("Normal", "SuccessfulCreate", f"Created pod: {meta['name']}"),
                                            ("Normal", "Completed", "Job completed")]
    (pod,) = pods(cluster, "hello")
    assert pod["status"]["phase"] == "Succeeded" and "finalizers" not in pod["metadata"]  # counted, released


def test_failed_pods_are_replaced_after_the_back_off_until_the_limit() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(job("flaky", "sleep 10; exit 1", backoffLimit=2))
    # Pods fail 11 s after their creation; each replacement waits 10 s, then 20 s.
    at(cluster, 20)
    assert len(pods(cluster, "flaky")) == 1 and status(cluster, "flaky")["failed"] == 1
    at(cluster, 21)
    assert len(pods(cluster, "flaky")) == 2
    at(cluster, 51)
    assert len(pods(cluster, "flaky")) == 2
    at(cluster, 52)
    assert len(pods(cluster, "flaky")) == 3
    at(cluster, 63)
    final = status(cluster, "flaky")
    assert conditions(cluster, "flaky") == [("FailureTarget", "True", "BackoffLimitExceeded", stamp(63)),
                                            ("Failed", "True", "BackoffLimitExceeded", stamp(63))]
    assert (final["failed"], "completionTime" in final) == (3, False)
    assert job_events(cluster, "flaky")[-1] == ("Warning", "BackoffLimitExceeded",
                                                "Job has reached the specified backoff limit")


def test_parallel_pods_run_until_the_completions_are_reached() -> None:
    cluster = Cluster(nodes=2)
    cluster.create(job("batch", "sleep 5", completions=3, parallelism=2))
    at(cluster, 1)
    assert status(cluster, "batch")["active"] == 2
    at(cluster, 6)  # two finish; one more is needed
    current = status(cluster, "batch")
    assert (current["succeeded"], current["active"]) == (2, 1)
    at(cluster, 12)
    assert status(cluster, "batch")["succeeded"] == 3
    assert [c[0] for c in conditions(cluster, "batch")] == ["SuccessCriteriaMet", "Complete"]
    assert len(pods(cluster, "batch")) == 3


def test_an_indexed_job_gives_each_pod_its_index() -> None:
    cluster = Cluster(nodes=2)
    cluster.create(job("idx", "sleep 5", completions=3, parallelism=2, completionMode="Indexed"))
    first = sorted(pods(cluster, "idx"), key=lambda pod: pod["metadata"]["name"])
    assert [pod["metadata"]["generateName"] for pod in first] == ["idx-0-", "idx-1-"]
    zero = first[0]
    assert zero["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] == "0"
    assert zero["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] == "0"
    assert zero["spec"]["hostname"] == "idx-0"
    assert zero["spec"]["containers"][0]["env"] == [{"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
        "apiVersion": "v1", "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}]
    at(cluster, 6)
    assert status(cluster, "idx")["completedIndexes"] == "0-1"
    assert [pod["metadata"]["generateName"] for pod in pods(cluster, "idx") if pod["status"]["phase"] != "Succeeded"] == ["idx-2-"]
    at(cluster, 12)
    assert (status(cluster, "idx")["completedIndexes"], status(cluster, "idx")["succeeded"]) == ("0-2", 3)
    assert [c[0] for c in conditions(cluster, "idx")] == ["SuccessCriteriaMet", "Complete"]


def test_a_job_past_its_active_deadline_fails_and_its_pods_are_deleted() -> None:
    """The pod is deleted at the deadline; its ``sleep`` ignores SIGTERM and is killed when the
    30 s grace ends, and the Job is Failed once no pod is terminating (upstream 1.31+)."""
    cluster = Cluster(nodes=1)
    cluster.create(job("slow", "sleep 100", activeDeadlineSeconds=30))
    at(cluster, 30)
    assert conditions(cluster, "slow")[0] == ("FailureTarget", "True", "DeadlineExceeded", stamp(30))
    assert status(cluster, "slow")["conditions"][0]["message"] == "Job was active longer than specified deadline"
    at(cluster, 59)
    assert [c[0] for c in conditions(cluster, "slow")] == ["FailureTarget"]
    assert status(cluster, "slow")["terminating"] == 1
    at(cluster, 60)
    assert conditions(cluster, "slow")[1] == ("Failed", "True", "DeadlineExceeded", stamp(60))
    assert pods(cluster, "slow") == []  # deleted, terminated, released and gone
    assert ("Warning", "DeadlineExceeded", "Job was active longer than specified deadline") in job_events(cluster, "slow")


def test_a_suspended_job_starts_no_pods_until_it_is_resumed() -> None:
    with Cluster(nodes=1) as cluster:
        _suspend_and_resume(cluster, client.BatchV1Api(cluster.client()))


def _suspend_and_resume(cluster: Cluster, batch: client.BatchV1Api) -> None:
    cluster.create(job("held", "echo done", suspend=True))
    at(cluster, 10)
    assert pods(cluster, "held") == []
    assert conditions(cluster, "held") == [("Suspended", "True", "JobSuspended", stamp(0))]
    assert "startTime" not in status(cluster, "held")
    batch.patch_namespaced_job("held", "default", {"spec": {"suspend": False}})
    assert conditions(cluster, "held") == [("Suspended", "False", "JobResumed", stamp(10))]
    assert status(cluster, "held")["startTime"] == stamp(10)
    at(cluster, 11)
    assert [c[0] for c in conditions(cluster, "held")] == ["Suspended", "SuccessCriteriaMet", "Complete"]
    assert [e[1] for e in job_events(cluster, "held")] == ["Suspended", "Resumed", "SuccessfulCreate", "Completed"]


def test_deleting_a_job_in_the_background_removes_its_running_pods() -> None:
    with Cluster(nodes=1) as cluster:
        cluster.create(job("gone", "sleep 100"))
        at(cluster, 5)
        client.BatchV1Api(cluster.client()).delete_namespaced_job("gone", "default", propagation_policy="Background")
        at(cluster, 40)
        assert pods(cluster, "gone") == []


def test_a_delete_naming_no_propagation_warns_that_pods_are_kept() -> None:
    """The job storage warns before it deletes (so a missing Job's 404 warns too), unless the
    request names propagationPolicy or orphanDependents."""
    warning = ('299 - "child pods are preserved by default when jobs are deleted; set propagationPolicy=Background '
               'to remove them or set propagationPolicy=Orphan to suppress this warning"')
    with Cluster(nodes=0) as cluster:
        for name in ("a", "b"):
            cluster.create(job(name, "true"))
        code, _, response = request(cluster, "DELETE", "/apis/batch/v1/namespaces/default/jobs/a")
        assert (code, response.getheader("Warning")) == (200, warning)
        code, _, response = request(cluster, "DELETE", "/apis/batch/v1/namespaces/default/jobs/a")
        assert (code, response.getheader("Warning")) == (404, warning)
        code, _, response = request(cluster, "DELETE", "/apis/batch/v1/namespaces/default/jobs/b",
                                    {"propagationPolicy": "Background"})
        assert (code, response.getheader("Warning")) == (200, None)
