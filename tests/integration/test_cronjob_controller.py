"""The CronJob controller creates a CronJob's Jobs on its schedule, at upstream's times and texts.

Times are seconds since the cluster's epoch (2025-01-01T00:00:00Z). Upstream's controller
wakes 100 ms after each scheduled time, so the Job for minute 1 appears at 60.1 s; a Job
whose pod runs ``echo hi`` completes about a second after that.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from fakekube import Cluster
from tests.integration.timeline import at

Obj = dict[str, Any]
#: Minutes since the Unix epoch at the cluster's epoch: Job names end in this plus the minute.
EPOCH_MINUTES = 28928160


def cron_job(name: str, schedule: str, script: str = "echo hi", **spec: Any) -> Obj:
    template = {"metadata": {"labels": {"app": name}, "annotations": {"team": "infra"}},
                "spec": {"backoffLimit": 0, "template": {"spec": {"restartPolicy": "Never", "containers": [
                    {"name": "main", "image": "busybox", "command": ["sh", "-c", script]}]}}}}
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedule": schedule, **spec, "jobTemplate": template}}


def job_name(cron: str, minute: int) -> str:
    return f"{cron}-{EPOCH_MINUTES + minute}"


def jobs(cluster: Cluster) -> list[str]:
    return sorted(job["metadata"]["name"] for job in cluster.list("batch/v1", "Job"))


def status(cluster: Cluster, name: str) -> Obj:
    return cluster.get("batch/v1", "CronJob", name).get("status") or {}


def active(cluster: Cluster, name: str) -> list[str]:
    return [ref["name"] for ref in status(cluster, name).get("active") or []]


def events(cluster: Cluster, name: str) -> list[tuple[str, str, str]]:
    return [(e["type"], e["reason"], e["message"]) for e in cluster.events()
            if e["involvedObject"]["kind"] == "CronJob" and e["involvedObject"]["name"] == name]


def stamp(seconds: int) -> str:
    return f"2025-01-01T{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}Z"


@pytest.fixture
def served() -> Iterator[tuple[Cluster, client.BatchV1Api]]:
    with Cluster(nodes=1) as cluster:
        yield cluster, client.BatchV1Api(cluster.client())


def test_a_job_is_made_from_the_template_100_ms_after_each_scheduled_minute() -> None:
    cluster = Cluster(nodes=1)
    created = cluster.create(cron_job("tick", "* * * * *"))
    at(cluster, 60)
    assert jobs(cluster) == []
    at(cluster, 60.1)
    first = job_name("tick", 1)
    assert jobs(cluster) == [first]
    job = cluster.get("batch/v1", "Job", first)
    meta = job["metadata"]
    assert meta["labels"]["app"] == "tick"
    assert meta["annotations"] == {"team": "infra", "batch.kubernetes.io/cronjob-scheduled-timestamp": stamp(60)}
    assert meta["ownerReferences"] == [{"apiVersion": "batch/v1", "kind": "CronJob", "name": "tick",
                                        "uid": created["metadata"]["uid"], "controller": True,
                                        "blockOwnerDeletion": True}]
    assert job["spec"]["backoffLimit"] == 0 and meta["creationTimestamp"] == stamp(60)
    (ref,) = status(cluster, "tick")["active"]  # the Job as created: the Job controller has written since
    assert ref == {"kind": "Job", "namespace": "default", "name": first, "uid": meta["uid"],
                   "apiVersion": "batch/v1", "resourceVersion": ref["resourceVersion"]}
    assert int(ref["resourceVersion"]) < int(meta["resourceVersion"])
    assert status(cluster, "tick")["lastScheduleTime"] == stamp(60)
    at(cluster, 62)  # the job completed at 61 s
    assert status(cluster, "tick") == {"lastScheduleTime": stamp(60), "lastSuccessfulTime": stamp(61)}
    at(cluster, 180.1)
    assert jobs(cluster) == [first, job_name("tick", 2), job_name("tick", 3)]
    assert events(cluster, "tick")[:3] == [
        ("Normal", "SuccessfulCreate", f"Created job {first}"),
        ("Normal", "SawCompletedJob", f"Saw completed job: {first}, condition: Complete"),
        ("Normal", "SuccessfulCreate", f"Created job {job_name('tick', 2)}")]


def test_history_limits_keep_the_newest_finished_jobs() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(cron_job("ok", "* * * * *", successfulJobsHistoryLimit=2))
    cluster.create(cron_job("bad", "* * * * *", script="exit 1"))  # failedJobsHistoryLimit defaults to 1
    at(cluster, 240.1)  # minutes 1-4 made; 1-3 finished, and the oldest of them deleted as each finished
    assert [name for name in jobs(cluster) if name.startswith("ok-")] == [job_name("ok", m) for m in (2, 3, 4)]
    assert [name for name in jobs(cluster) if name.startswith("bad-")] == [job_name("bad", 3), job_name("bad", 4)]
    assert ("Normal", "SuccessfulDelete", f"Deleted job {job_name('ok', 1)}") in events(cluster, "ok")
    at(cluster, 242)  # minute 4's finished
    assert [name for name in jobs(cluster) if name.startswith("ok-")] == [job_name("ok", 3), job_name("ok", 4)]
    assert [name for name in jobs(cluster) if name.startswith("bad-")] == [job_name("bad", 4)]
    assert events(cluster, "bad")[-2:] == [
        ("Normal", "SuccessfulDelete", f"Deleted job {job_name('bad', 3)}"),
        ("Normal", "SawCompletedJob", f"Saw completed job: {job_name('bad', 4)}, condition: Failed")]
    assert "lastSuccessfulTime" not in status(cluster, "bad")


def test_forbid_holds_a_run_until_the_last_one_finishes() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(cron_job("one", "* * * * *", script="sleep 90", concurrencyPolicy="Forbid"))
    cluster.create(cron_job("strict", "* * * * *", script="sleep 90", concurrencyPolicy="Forbid",
                            startingDeadlineSeconds=10))
    at(cluster, 120.1)
    assert jobs(cluster) == [job_name("one", 1), job_name("strict", 1)]
    assert events(cluster, "one")[-1] == ("Normal", "JobAlreadyActive", "Not starting job because prior execution "
                                          "is running and concurrency policy is Forbid")
    at(cluster, 151.2)  # the first runs finished at 151.1 s: minute 2's run starts late, unless past its deadline
    assert jobs(cluster) == [job_name("one", 1), job_name("one", 2), job_name("strict", 1)]
    assert cluster.get("batch/v1", "Job", job_name("one", 2))["metadata"]["creationTimestamp"] == stamp(151)
    at(cluster, 180.1)
    assert jobs(cluster) == [job_name("one", 1), job_name("one", 2), job_name("strict", 1), job_name("strict", 3)]
    assert status(cluster, "strict")["lastScheduleTime"] == stamp(180)


def test_replace_deletes_the_running_job_for_the_new_one() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(cron_job("swap", "* * * * *", script="sleep 90", concurrencyPolicy="Replace"))
    at(cluster, 120.1)
    assert active(cluster, "swap") == [job_name("swap", 2)]
    assert events(cluster, "swap")[-2:] == [("Normal", "SuccessfulDelete", f"Deleted job {job_name('swap', 1)}"),
                                            ("Normal", "SuccessfulCreate", f"Created job {job_name('swap', 2)}")]
    at(cluster, 130)
    assert jobs(cluster) == [job_name("swap", 2)]


def test_allow_runs_jobs_side_by_side() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(cron_job("many", "* * * * *", script="sleep 90"))
    at(cluster, 120.1)
    assert active(cluster, "many") == [job_name("many", 1), job_name("many", 2)]


def test_a_suspended_cron_job_starts_nothing_and_resuming_starts_the_latest_missed_run(served) -> None:
    cluster, batch = served
    cluster.create(cron_job("held", "* * * * *", suspend=True))
    at(cluster, 150)
    assert jobs(cluster) == [] and status(cluster, "held") == {}
    batch.patch_namespaced_cron_job("held", "default", {"spec": {"suspend": False}})
    assert jobs(cluster) == [job_name("held", 2)]  # minute 2, started late, at once
    assert status(cluster, "held")["lastScheduleTime"] == stamp(120)
    at(cluster, 180.1)
    assert jobs(cluster) == [job_name("held", 2), job_name("held", 3)]


def test_starting_deadline_seconds_drops_runs_missed_by_longer(served) -> None:
    cluster, batch = served
    cluster.create(cron_job("late", "* * * * *", suspend=True, startingDeadlineSeconds=20))
    cluster.create(cron_job("ontime", "* * * * *", suspend=True, startingDeadlineSeconds=40))
    at(cluster, 150)
    batch.patch_namespaced_cron_job("late", "default", {"spec": {"suspend": False}})
    batch.patch_namespaced_cron_job("ontime", "default", {"spec": {"suspend": False}})
    assert jobs(cluster) == [job_name("ontime", 2)]  # minute 2 was 30 s ago
    at(cluster, 180.1)
    assert jobs(cluster) == [job_name("late", 3), job_name("ontime", 2), job_name("ontime", 3)]


def test_more_than_100_missed_runs_are_reported(served) -> None:
    cluster, batch = served
    cluster.create(cron_job("asleep", "* * * * *", suspend=True))
    at(cluster, 102 * 60 + 30)
    batch.patch_namespaced_cron_job("asleep", "default", {"spec": {"suspend": False}})
    assert events(cluster, "asleep") == [
        ("Warning", "TooManyMissedTimes",
         "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew"),
        ("Normal", "SuccessfulCreate", f"Created job {job_name('asleep', 102)}")]


def test_a_time_zone_schedules_in_its_wall_clock() -> None:
    cluster = Cluster(nodes=1)
    # 05:50 in Kathmandu (UTC+05:45) is 00:05 UTC.
    cluster.create(cron_job("nepal", "50 5 * * *", timeZone="Asia/Kathmandu"))
    at(cluster, 300.1)
    assert jobs(cluster) == [job_name("nepal", 5)]
    annotations = cluster.get("batch/v1", "Job", job_name("nepal", 5))["metadata"]["annotations"]
    assert annotations["batch.kubernetes.io/cronjob-scheduled-timestamp"] == "2025-01-01T05:50:00+05:45"


def test_a_new_schedule_takes_effect_from_its_next_time(served) -> None:
    cluster, batch = served
    cluster.create(cron_job("moved", "0 * * * *"))
    at(cluster, 100)
    batch.patch_namespaced_cron_job("moved", "default", {"spec": {"schedule": "*/5 * * * *"}})
    assert jobs(cluster) == []  # nothing at once, though minute 1 passed since creation
    at(cluster, 300.1)
    assert jobs(cluster) == [job_name("moved", 5)]


def test_an_active_job_deleted_by_someone_else_leaves_the_active_list(served) -> None:
    cluster, batch = served
    cluster.create(cron_job("lost", "* * * * *", script="sleep 100"))
    at(cluster, 61)
    batch.delete_namespaced_job(job_name("lost", 1), "default", propagation_policy="Background")
    at(cluster, 62)
    assert "active" not in status(cluster, "lost")
    assert events(cluster, "lost")[-1] == ("Normal", "MissingJob", f"Active job went missing: {job_name('lost', 1)}")


def test_a_job_it_did_not_create_is_reported(served) -> None:
    cluster, batch = served
    owner = cluster.create(cron_job("adopt", "0 0 * * *"))
    stray = cron_job("x", "* * * * *")["spec"]["jobTemplate"]
    cluster.create({"apiVersion": "batch/v1", "kind": "Job", "metadata": {
        "name": "stray", "namespace": "default", "ownerReferences": [{
            "apiVersion": "batch/v1", "kind": "CronJob", "name": "adopt", "uid": owner["metadata"]["uid"],
            "controller": True}]}, "spec": {**stray["spec"], "template": {**stray["spec"]["template"]}}})
    assert ("Warning", "UnexpectedJob", "Saw a job that the controller did not create or forgot: stray") \
        in events(cluster, "adopt")


@pytest.mark.parametrize(("spec", "message"), [
    ({"schedule": "61 * * * *"},
     'spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61'),
    ({"schedule": "* * * *"}, 'spec.schedule: Invalid value: "* * * *": expected exactly 5 fields, found 4: [* * * *]'),
    ({"schedule": "TZ=UTC * * * * *"}, 'spec.schedule: Invalid value: "TZ=UTC * * * * *": cannot use TZ or CRON_TZ '
                                       'in schedule, use timeZone field instead'),
    ({"schedule": "@daily", "timeZone": "Mars/Olympus"},
     'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus'),
    ({"schedule": "@daily", "timeZone": "Local"}, 'spec.timeZone: Invalid value: "Local": timeZone must be an '
                                                  'explicit time zone as defined in https://www.iana.org/time-zones'),
])
def test_schedules_and_time_zones_upstream_refuses_are_refused(served, spec: Obj, message: str) -> None:
    _, batch = served
    body = cron_job("bad", **spec)
    with pytest.raises(ApiException) as refused:
        batch.create_namespaced_cron_job("default", body)
    assert refused.value.status == 422
    assert message in json.loads(refused.value.body)["message"]
