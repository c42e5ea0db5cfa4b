"""The CronJob controller: creates a CronJob's Jobs on its schedule (upstream
``pkg/controller/cronjob/cronjob_controllerv2.go``, 1.33).

A sync of one CronJob (upstream's ``sync``):

1. lists the Jobs whose controller reference names it, and deletes the oldest finished
   ones past ``successfulJobsHistoryLimit`` / ``failedJobsHistoryLimit`` (by startTime);
2. reconciles ``status.active`` with them: a finished one leaves it (SawCompletedJob), a
   succeeded one moves ``lastSuccessfulTime``, an unfinished one not in it is reported
   (UnexpectedJob), a listed one that is gone leaves it (MissingJob);
3. unless the CronJob is being deleted, suspended, or its time zone or schedule is
   unusable: finds the most recent unmet scheduled time. Too late for
   ``startingDeadlineSeconds`` → MissSchedule; already started → nothing; ``Forbid`` with
   active Jobs → JobAlreadyActive; ``Replace`` deletes the active ones; then creates the
   Job ``<name>-<minutes since the epoch>`` and records it in ``active`` and
   ``lastScheduleTime``;
4. writes the status if it changed, and wakes again 100 ms after the next scheduled time.

Work keys: ``<namespace>/<name>`` for a sync; ``schedule:<namespace>/<name>`` when a
CronJob's schedule or time zone changed (upstream's ``updateCronJob``: the sync is moved to
the new schedule's next time instead of running at once).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone, tzinfo
from typing import Any, Iterable, Mapping

from fakekube.api.machinery.errors import ApiError
from fakekube.clock import format_rfc3339, parse_time
from fakekube.controllers.cronjob import jobs as cronjobs
from fakekube.controllers.cronjob import timing
from fakekube.engine import Context
from fakekube.engine.events import object_reference
from fakekube.objects.cronschedule import Schedule, ScheduleError, load_location, parse_standard
from fakekube.objects.kinds import CRON_JOBS, JOBS
from fakekube.objects.owners import controller_of, is_controlled_by
from fakekube.store import DELETED, Change

Obj = dict[str, Any]

COMPONENT = "cronjob-controller"
RESCHEDULE_PREFIX = "schedule:"
NAMESPACE_TERMINATING_CAUSE = "NamespaceTerminating"
TOO_MANY_MISSED = ("too many missed start times. Set or decrease .spec.startingDeadlineSeconds "
                   "or check clock skew")
UNSUPPORTED_SCHEDULE = ("CRON_TZ or TZ used in schedule {} is not officially supported, see "
                        "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details")


class CronJobController:
    """Runs each CronJob's Jobs on its schedule and keeps its status."""

    name = "cronjob-controller"
    resources = (CRON_JOBS, JOBS)

    # -- routing (pure) ------------------------------------------------------------------
    def keys_for(self, change: Change) -> Iterable[str]:
        if (change.group, change.resource) == (CRON_JOBS.group, CRON_JOBS.plural):
            key = f"{change.namespace}/{change.name}"
            if change.prev is not None and change.type != DELETED and _schedule_changed(change.prev, change.obj):
                return [RESCHEDULE_PREFIX + key]
            return [key]
        if (change.group, change.resource) != (JOBS.group, JOBS.plural):
            return []
        names = {ref["name"] for ref in (controller_of(change.prev) if change.prev else None, controller_of(change.obj))
                 if ref is not None and ref.get("kind") == "CronJob" and ref.get("name")}
        return [f"{change.namespace}/{name}" for name in sorted(names)]

    # -- work ----------------------------------------------------------------------------
    def reconcile(self, key: str, ctx: Context) -> None:
        if key.startswith(RESCHEDULE_PREFIX):
            self._reschedule(key[len(RESCHEDULE_PREFIX):], ctx)
            return
        namespace, name = key.split("/", 1)
        cron_job = ctx.get(CRON_JOBS, name, namespace)
        if cron_job is not None:
            _Sync(cron_job, ctx).run(key)

    def _reschedule(self, key: str, ctx: Context) -> None:
        """The schedule or time zone changed: sync at the new schedule's next time."""
        namespace, name = key.split("/", 1)
        cron_job = ctx.get(CRON_JOBS, name, namespace)
        if cron_job is None:
            return
        try:
            schedule = parse_standard(_formatted_schedule(cron_job))
        except ScheduleError:
            _record(ctx, cron_job, "Warning", "UnParseableCronJobSchedule",
                    f"unparseable schedule for cronjob: {(cron_job.get('spec') or {}).get('schedule')}")
            return
        ctx.enqueue_at(key, timing.next_wake(cron_job, ctx.now, schedule))


class _Sync:
    """One sync of one CronJob (see the module docstring)."""

    def __init__(self, cron_job: Obj, ctx: Context) -> None:
        self.cron_job, self.ctx = cron_job, ctx
        self.spec: Mapping[str, Any] = cron_job.get("spec") or {}
        self.meta: Mapping[str, Any] = cron_job["metadata"]
        old = cron_job.get("status") or {}
        self.active: list[Obj] = [dict(ref) for ref in old.get("active") or []]
        self.last_schedule: str | None = old.get("lastScheduleTime")
        self.last_successful: str | None = old.get("lastSuccessfulTime")

    def run(self, key: str) -> None:
        jobs = self._jobs()
        self._clean_up(jobs)
        failure: ApiError | None = None
        wake: datetime | None = None
        try:
            wake = self._sync(jobs)
        except ApiError as error:
            failure = error
        self._write()
        if wake is not None:
            self.ctx.enqueue_at(key, wake)
        elif failure is not None:
            self.ctx.requeue_rate_limited()

    def _jobs(self) -> list[Obj]:
        """``getJobsToBeReconciled``: every Job of the namespace whose controller reference
        has this CronJob's name (upstream matches by name only)."""
        name = self.meta["name"]
        return [job for job in self.ctx.list(JOBS, self.meta["namespace"])
                if (controller_of(job) or {}).get("name") == name]

    # -- history -------------------------------------------------------------------------
    def _clean_up(self, jobs: list[Obj]) -> None:
        """``cleanupFinishedJobs``: the oldest finished Jobs past the history limits go."""
        for condition, limit in (("Complete", "successfulJobsHistoryLimit"), ("Failed", "failedJobsHistoryLimit")):
            if self.spec.get(limit) is None:
                continue
            finished = sorted((job for job in jobs if _finished_condition(job) == condition), key=_start_order)
            for job in finished[:max(0, len(finished) - int(self.spec[limit]))]:
                self._delete(job)

    def _delete(self, job: Mapping[str, Any]) -> bool:
        """``deleteJob``: delete it (in the background) and drop it from ``active``."""
        meta = job["metadata"]
        try:
            self.ctx.client.delete(JOBS, meta["name"], meta["namespace"], propagation_policy="Background")
        except ApiError as error:
            self._event("Warning", "FailedDelete", f"Deleted job: {error.message}")
            return False
        self._drop_active(meta.get("uid"))
        self._event("Normal", "SuccessfulDelete", f"Deleted job {meta['name']}")
        return True

    # -- the sync ------------------------------------------------------------------------
    def _sync(self, jobs: list[Obj]) -> datetime | None:
        """``syncCronJob``: when to wake next (None: only when something changes)."""
        self._reconcile_active(jobs)
        if self.meta.get("deletionTimestamp"):
            return None
        zone = self._zone()
        if zone is None or self.spec.get("suspend"):
            return None
        if "TZ" in str(self.spec.get("schedule") or ""):
            self._event("Warning", "UnsupportedSchedule", UNSUPPORTED_SCHEDULE.format(_go_quote(self.spec["schedule"])))
        try:
            schedule = parse_standard(_formatted_schedule(self.cron_job))
        except ScheduleError as error:
            self._event("Warning", "UnparseableSchedule",
                        f"unparseable schedule: {_go_quote(self.spec.get('schedule') or '')} : {error}")
            return None
        try:
            scheduled = self._unmet(schedule)
        except timing.InvalidSchedule as error:
            self._event("Warning", "InvalidSchedule", f"invalid schedule: {self.spec.get('schedule')} : {error}")
            return None
        if scheduled is not None and not self._start(scheduled, zone):
            return None
        return timing.next_wake(self._current(), self.ctx.now, schedule)

    def _reconcile_active(self, jobs: list[Obj]) -> None:
        children = {job["metadata"].get("uid") for job in jobs}
        for job in jobs:
            found = self._in_active(job["metadata"].get("uid"))
            condition = _finished_condition(job)
            if not found and condition is None:
                self._event("Warning", "UnexpectedJob",
                            f"Saw a job that the controller did not create or forgot: {job['metadata']['name']}")
            elif condition is not None:
                if found:
                    self._drop_active(job["metadata"].get("uid"))
                    self._event("Normal", "SawCompletedJob",
                                f"Saw completed job: {job['metadata']['name']}, condition: {condition}")
                if condition == "Complete":
                    self._saw_success(job)
        for ref in list(self.active):
            if ref.get("uid") in children:
                continue
            if self.ctx.get(JOBS, ref.get("name") or "", ref.get("namespace") or "") is None:
                self._event("Normal", "MissingJob", f"Active job went missing: {ref.get('name')}")
                self._drop_active(ref.get("uid"))

    def _saw_success(self, job: Mapping[str, Any]) -> None:
        """``lastSuccessfulTime`` follows the newest completionTime of a succeeded Job."""
        completed = parse_time((job.get("status") or {}).get("completionTime"))
        last = parse_time(self.last_successful)
        if completed is not None and (last is None or completed > last):
            self.last_successful = format_rfc3339(completed)

    def _zone(self) -> tzinfo | None:
        """The CronJob's time zone, or None (and UnknownTimeZone) when it cannot be loaded."""
        name = self.spec.get("timeZone")
        if name is None:
            return timezone.utc
        try:
            return load_location(str(name))
        except ScheduleError as error:
            self._event("Warning", "UnknownTimeZone", f"invalid timeZone: {_go_quote(str(name))}: {error}")
            return None

    def _unmet(self, schedule: Schedule) -> datetime | None:
        """``nextScheduleTime`` and the checks after it: the scheduled time to start a Job
        for now, or None (missed, already started, or forbidden)."""
        _, scheduled, missed = timing.most_recent_schedule_time(self._current(), self.ctx.now, schedule, True)
        if scheduled is None or scheduled > self.ctx.now:
            return None
        if missed is timing.Missed.MANY:
            self._event("Warning", "TooManyMissedTimes", TOO_MANY_MISSED)
        deadline_s = self.spec.get("startingDeadlineSeconds")
        if deadline_s is not None and scheduled + timedelta(seconds=int(deadline_s)) < self.ctx.now:
            self._event("Warning", "MissSchedule",
                        f"Missed scheduled time to start a job: {_rfc1123z(scheduled)}")
            return None
        name = cronjobs.job_name(self.cron_job, scheduled)
        if any(ref.get("name") == name and ref.get("namespace") == self.meta["namespace"] for ref in self.active) \
                or parse_time(self.last_schedule) == scheduled:
            return None
        if self.spec.get("concurrencyPolicy") == "Forbid" and self.active:
            self._event("Normal", "JobAlreadyActive",
                        "Not starting job because prior execution is running and concurrency policy is Forbid")
            return None
        return scheduled

    def _start(self, scheduled: datetime, zone: tzinfo) -> bool:
        """Replace the running Jobs if asked to, create this time's Job and list it. False:
        a Job of that name already exists and is not to be listed (upstream then waits for
        the next change to the CronJob or its Jobs rather than the next scheduled time)."""
        if self.spec.get("concurrencyPolicy") == "Replace":
            for ref in list(self.active):
                job = self.ctx.get(JOBS, ref.get("name") or "", ref.get("namespace") or "")
                if job is None:
                    message = f'jobs.batch "{ref.get("name")}" not found'
                    self._event("Warning", "FailedGet", f"Get job: {message}")
                    raise ApiError(404, "NotFound", message)
                if not self._delete(job):
                    raise ApiError(409, "Conflict", f"could not replace job {ref.get('namespace')}/{ref.get('name')}")
        request = cronjobs.job_from_template(self.cron_job, scheduled, zone)
        try:
            job = self.ctx.client.create(JOBS, request)
        except ApiError as error:
            job = self._created_before(error, request)
            if job is None:
                return False
        else:
            self._event("Normal", "SuccessfulCreate", f"Created job {job['metadata']['name']}")
        self.active.append(object_reference(job, "Job", "batch/v1", resource_version=True))
        self.last_schedule = format_rfc3339(scheduled)
        return True

    def _created_before(self, error: ApiError, request: Obj) -> Obj | None:
        """A create that failed: the Job to list anyway (ours, made by an earlier sync whose
        status write was lost), or None; other errors are raised for a retry."""
        causes = (error.details or {}).get("causes") or []
        if any(cause.get("reason") == NAMESPACE_TERMINATING_CAUSE for cause in causes):
            raise error
        if error.reason != "AlreadyExists":
            self._event("Warning", "FailedCreate", f"Error creating job: {error.message}")
            raise error
        meta = request["metadata"]
        job = self.ctx.get(JOBS, meta["name"], meta["namespace"])
        if job is None or not is_controlled_by(job, self.cron_job) or self._in_active(job["metadata"].get("uid")):
            return None
        return job

    # -- status --------------------------------------------------------------------------
    def _in_active(self, uid: str | None) -> bool:
        return any(ref.get("uid") == uid for ref in self.active)

    def _drop_active(self, uid: str | None) -> None:
        self.active = [ref for ref in self.active if ref.get("uid") != uid]

    def _status(self) -> Obj:
        """The status in Go's field order, empty fields left out."""
        status: Obj = {}
        if self.active:
            status["active"] = self.active
        if self.last_schedule:
            status["lastScheduleTime"] = self.last_schedule
        if self.last_successful:
            status["lastSuccessfulTime"] = self.last_successful
        return status

    def _current(self) -> Obj:
        """The CronJob as this sync has changed it so far (what upstream's copy holds)."""
        return dict(self.cron_job, status=self._status())

    def _write(self) -> None:
        status = self._status()
        if status != (self.cron_job.get("status") or {}):
            self.ctx.client.update_status(CRON_JOBS, dict(self.cron_job, status=status))

    def _event(self, event_type: str, reason: str, message: str) -> None:
        _record(self.ctx, self.cron_job, event_type, reason, message)


def _record(ctx: Context, cron_job: Obj, event_type: str, reason: str, message: str) -> None:
    ctx.record_event(cron_job, "CronJob", event_type, reason, message, COMPONENT, "batch/v1")


def _schedule_changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    return old_spec.get("schedule") != new_spec.get("schedule") or old_spec.get("timeZone") != new_spec.get("timeZone")


def _formatted_schedule(cron_job: Mapping[str, Any]) -> str:
    """``formatSchedule``: the schedule with a ``TZ=<timeZone>`` prefix when the CronJob has a
    loadable time zone and no TZ of its own."""
    spec = cron_job.get("spec") or {}
    schedule, zone = str(spec.get("schedule") or ""), spec.get("timeZone")
    if "TZ" in schedule or zone is None:
        return schedule
    try:
        load_location(str(zone))
    except ScheduleError:
        return schedule
    return f"TZ={zone} {schedule}"


def _finished_condition(job: Mapping[str, Any]) -> str | None:
    """``FinishedCondition``: "Complete" or "Failed" when that condition is True."""
    for condition in (job.get("status") or {}).get("conditions") or []:
        if condition.get("type") in ("Complete", "Failed") and condition.get("status") == "True":
            return str(condition["type"])
    return None


def _start_order(job: Mapping[str, Any]) -> tuple[bool, str, str]:
    """``byJobStartTime``: by startTime (none last), then name."""
    start = (job.get("status") or {}).get("startTime")
    return start is None, format_rfc3339(parse_time(start)) if start else "", job["metadata"]["name"]


_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _rfc1123z(moment: datetime) -> str:
    """Go's ``UTC().Format(time.RFC1123Z)``: ``Wed, 01 Jan 2025 00:01:00 +0000`` (English
    names whatever the process locale)."""
    utc = moment.astimezone(timezone.utc)
    return (f"{_DAYS[utc.weekday()]}, {utc.day:02d} {_MONTHS[utc.month - 1]} {utc.year:04d} "
            f"{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d} +0000")


def _go_quote(text: str) -> str:
    """Go's ``%q`` for the printable strings schedules and zone names are."""
    return json.dumps(text, ensure_ascii=False)
