"""Printers of batch/v1: Jobs (status from conditions, completions, duration) and CronJobs."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fakekube.api.table.cells import (
    NONE,
    UNSET,
    container_cells,
    format_label_selector,
    get,
    has_condition,
    meta,
    workload_wide,
)
from fakekube.api.table.columns import AGE, CONTAINERS, IMAGES, NAME, Cells, Obj, TableSpec, col, doc
from fakekube.api.table.duration import age, human_duration, parse_time


def job_status(job: Obj) -> str:
    """The STATUS column of jobs: the first terminal or notable condition, else Running."""
    if has_condition(job, "Complete"):
        return "Complete"
    if has_condition(job, "Failed"):
        return "Failed"
    if meta(job, "deletionTimestamp"):
        return "Terminating"
    for ctype in ("Suspended", "FailureTarget", "SuccessCriteriaMet"):
        if has_condition(job, ctype):
            return ctype
    return "Running"


def _completions(spec: Obj, succeeded: int) -> str:
    """COMPLETIONS: "2/3"; a parallel job without a count reads "2/1 of 4"."""
    if spec.get("completions") is not None:
        return f"{succeeded}/{spec['completions']}"
    if (spec.get("parallelism") or 0) > 1:
        return f"{succeeded}/1 of {spec['parallelism']}"
    return f"{succeeded}/1"


def _job_cells(job: Obj, now: datetime) -> Cells:
    spec, st = job.get("spec") or {}, job.get("status") or {}
    completions = _completions(spec, st.get("succeeded", 0))
    start, done = parse_time(st.get("startTime")), parse_time(st.get("completionTime"))
    duration = "" if start is None else human_duration(((done or now) - start).total_seconds())
    return [meta(job, "name", ""), job_status(job), completions, duration, age(meta(job, "creationTimestamp"), now),
            *workload_wide(job, format_label_selector(spec.get("selector")))]


def _bool_ptr(value: Any) -> str:
    """A Go ``*bool``: "<unset>" when nil."""
    return UNSET if value is None else ("True" if value else "False")


def _cronjob_cells(cj: Obj, now: datetime) -> Cells:
    spec, st = cj.get("spec") or {}, cj.get("status") or {}
    job_spec = get(spec, "jobTemplate", "spec", default={})
    names, images = container_cells(get(job_spec, "template", "spec"))
    last = age(st["lastScheduleTime"], now) if st.get("lastScheduleTime") else NONE
    return [meta(cj, "name", ""), spec.get("schedule", ""), spec.get("timeZone") or NONE,
            _bool_ptr(spec.get("suspend")), len(st.get("active") or []), last,
            age(meta(cj, "creationTimestamp"), now), names, images, format_label_selector(job_spec.get("selector"))]


JOB_TABLE = TableSpec((
    NAME,
    col("Status", description="Status of the job."),
    doc("Completions", "batch.v1.JobStatus", "succeeded"),
    col("Duration", description="Time required to complete the job."),
    AGE, CONTAINERS, IMAGES, doc("Selector", "batch.v1.JobSpec", "selector", priority=1),
), _job_cells)

CRON_JOB_TABLE = TableSpec((
    NAME,
    doc("Schedule", "batch.v1.CronJobSpec", "schedule"),
    doc("Timezone", "batch.v1.CronJobSpec", "timeZone"),
    doc("Suspend", "batch.v1.CronJobSpec", "suspend", "boolean"),
    doc("Active", "batch.v1.CronJobStatus", "active", "integer"),
    doc("Last Schedule", "batch.v1.CronJobStatus", "lastScheduleTime"),
    AGE, CONTAINERS, IMAGES, doc("Selector", "batch.v1.JobSpec", "selector", priority=1),
), _cronjob_cells)
