"""The Job controller: runs a Job's pods to its completions (upstream ``pkg/controller/job``, 1.33).

A sync of one Job:

1. counts its terminal pods that still carry the tracking finalizer into ``succeeded`` /
   ``failed`` (and, for an Indexed Job, ``completedIndexes``), then removes the finalizer;
2. decides whether the Job is done: failed when ``failed`` exceeds ``backoffLimit`` (default
   6) or it ran past ``activeDeadlineSeconds`` (``FailureTarget``, then ``Failed``); succeeded
   when it has its completions (``SuccessCriteriaMet``, then ``Complete`` with
   ``completionTime``). The final condition is added once no pod of the Job still runs or
   terminates; running ones are deleted first;
3. otherwise keeps ``min(parallelism, completions still needed)`` pods active — none while
   ``suspend`` is set (``Suspended``) — creating pods after upstream's failure back-off
   (10 s doubling per failure since the last success, at most 10 min);
4. writes the status when it changed.

Events are upstream's: SuccessfulCreate / SuccessfulDelete ("Created pod: x"), Completed
("Job completed"), BackoffLimitExceeded / DeadlineExceeded (Warning), Suspended, Resumed.

Not simulated (docs/controllers.md): podFailurePolicy, successPolicy, backoffLimitPerIndex,
managedBy, adopting orphan pods by selector, ``podReplacementPolicy: Failed`` (a deleted pod
is replaced at once, as under ``TerminatingOrFailed``).

Work keys: ``<namespace>/<name>`` for a Job; ``pod:<namespace>/<name>`` for a pod with the
tracking finalizer that no Job controls, or that finished or is being deleted (its Job may
be gone): when no Job controls it, the finalizer is removed.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Iterable, Mapping

from fakekube.api.machinery.errors import ApiError
from fakekube.clock import format_rfc3339, parse_time
from fakekube.controllers.job import pods as jobpods
from fakekube.controllers.job import status as jobstatus
from fakekube.engine import Context
from fakekube.objects.kinds import JOBS, PODS
from fakekube.objects.owners import controller_of
from fakekube.objects.pods import is_pod_ready
from fakekube.store import Change

Obj = dict[str, Any]

COMPONENT = "job-controller"
ORPHAN_PREFIX = "pod:"
DEFAULT_BACKOFF_LIMIT = 6
#: Upstream's DefaultJobPodFailureBackOff and MaxJobPodFailureBackOff.
POD_FAILURE_BACKOFF_S = 10.0
MAX_POD_FAILURE_BACKOFF_S = 600.0
#: ``MaxPodCreateDeletePerSync``.
MAX_POD_CHANGES_PER_SYNC = 500


class _Backoff:
    """Failures since the last success and when the last one happened (upstream's backoffRecord)."""

    __slots__ = ("failures", "last_failure")

    def __init__(self) -> None:
        self.failures = 0
        self.last_failure: datetime | None = None

    def ready_at(self) -> datetime | None:
        """When the next pod may be created (None: at once)."""
        if not self.failures or self.last_failure is None:
            return None
        delay_s = min(POD_FAILURE_BACKOFF_S * 2 ** (self.failures - 1), MAX_POD_FAILURE_BACKOFF_S)
        return self.last_failure + timedelta(seconds=delay_s)


class JobController:
    """Creates and deletes each Job's pods and keeps its status."""

    name = "job-controller"
    resources = (JOBS, PODS)

    def __init__(self) -> None:
        #: Per Job uid; dropped when the Job finishes or goes (bounded by the live Jobs).
        self._backoff: dict[str, _Backoff] = {}

    # -- routing (pure) ------------------------------------------------------------------
    def keys_for(self, change: Change) -> Iterable[str]:
        if (change.group, change.resource) == (JOBS.group, JOBS.plural):
            return [f"{change.namespace}/{change.name}"]
        if (change.group, change.resource) != (PODS.group, PODS.plural):
            return []
        keys = [key for key in (_job_key(change.prev), _job_key(change.obj)) if key]
        pod = change.obj
        if jobpods.is_tracked(pod) and (not keys or jobpods.finished(pod) or jobpods.is_deleting(pod)):
            keys.append(f"{ORPHAN_PREFIX}{change.namespace}/{change.name}")  # its Job may be gone
        return sorted(set(keys))

    # -- work ----------------------------------------------------------------------------
    def reconcile(self, key: str, ctx: Context) -> None:
        if key.startswith(ORPHAN_PREFIX):
            namespace, name = key[len(ORPHAN_PREFIX):].split("/", 1)
            pod = ctx.get(PODS, name, namespace)
            if pod is not None and jobpods.is_tracked(pod) and self._controlling_job(pod, ctx) is None:
                _untrack(pod, ctx)
            return
        namespace, name = key.split("/", 1)
        job = ctx.get(JOBS, name, namespace)
        if job is None:
            return
        pods = self._pods(job, ctx)
        if jobstatus.is_finished(job) or job["metadata"].get("deletionTimestamp"):
            self._backoff.pop(job["metadata"]["uid"], None)
            for pod in pods:
                if jobpods.is_tracked(pod) and (jobpods.finished(pod) or jobpods.is_deleting(pod)):
                    _untrack(pod, ctx)
            return
        _Sync(job, pods, self._backoff.setdefault(job["metadata"]["uid"], _Backoff()), ctx).run(key)

    def _pods(self, job: Obj, ctx: Context) -> list[Obj]:
        meta = job["metadata"]
        owned = [pod for pod in ctx.owned_by(PODS, meta["uid"]) if pod["metadata"].get("namespace") == meta["namespace"]
                 and (controller_of(pod) or {}).get("uid") == meta["uid"]]
        return sorted(owned, key=lambda pod: pod["metadata"]["name"])

    def _controlling_job(self, pod: Obj, ctx: Context) -> Obj | None:
        ref = controller_of(pod) or {}
        if ref.get("kind") != "Job" or not ref.get("name"):
            return None
        job = ctx.get(JOBS, ref["name"], pod["metadata"].get("namespace") or "")
        return job if job is not None and job["metadata"].get("uid") == ref.get("uid") else None


class _Sync:
    """One sync of one Job (see the module docstring)."""

    def __init__(self, job: Obj, pods: list[Obj], backoff: _Backoff, ctx: Context) -> None:
        self.job, self.pods, self.backoff, self.ctx = job, pods, backoff, ctx
        self.spec: Mapping[str, Any] = job.get("spec") or {}
        self.old: Mapping[str, Any] = job.get("status") or {}
        self.indexed = self.spec.get("completionMode") == jobpods.INDEXED
        self.completions: int | None = self.spec.get("completions")
        self.conditions: list[Obj] = [dict(c) for c in self.old.get("conditions") or []]
        self.start_time: str | None = self.old.get("startTime")
        self.completion_time: str | None = None

    def run(self, key: str) -> None:
        counted = [pod for pod in self.pods if jobpods.finished(pod) and jobpods.is_tracked(pod)]
        succeeded, failed, indexes = self._count(counted)
        active = [pod for pod in self.pods if not jobpods.finished(pod) and not jobpods.is_deleting(pod)]
        terminating = [pod for pod in self.pods if not jobpods.finished(pod) and jobpods.is_deleting(pod)]
        target = self._finish_target(succeeded, failed, indexes)
        if target is not None:
            left = self._delete(active)
            terminating += [pod for pod in active if not any(pod is other for other in left)]  # upstream: += deleted
            active = left
            if not active and not terminating:
                self._finish(target)
        elif self.spec.get("suspend"):
            active = self._delete(active)
            self._set(jobstatus.SUSPENDED, "True", jobstatus.JOB_SUSPENDED, "Suspended")
        else:
            active = self._manage(key, active, terminating, succeeded, indexes)
        self._write(active, terminating, succeeded, failed, indexes)
        for pod in counted:
            _untrack(pod, self.ctx)

    # -- counting ------------------------------------------------------------------------
    def _count(self, counted: list[Obj]) -> tuple[int, int, set[int]]:
        succeeded = int(self.old.get("succeeded") or 0)
        failed = int(self.old.get("failed") or 0)
        indexes = jobstatus.parse_indexes(self.old.get("completedIndexes") or "", self.completions or 0)
        for pod in sorted(counted, key=lambda p: jobpods.finished_at(p, self.ctx.now)):
            if jobpods.succeeded(pod):
                index = jobpods.completion_index(pod)
                if not self.indexed or (index is not None and index < (self.completions or 0)
                                        and index not in indexes):
                    succeeded += 1
                    indexes.update([index] if index is not None else [])
                self.backoff.failures = 0
            else:
                failed += 1
                self.backoff.failures += 1
                self.backoff.last_failure = jobpods.finished_at(pod, self.ctx.now)
        return succeeded, failed, indexes

    # -- finishing -----------------------------------------------------------------------
    def _finish_target(self, succeeded: int, failed: int, indexes: set[int]) -> tuple[str, tuple[str, str]] | None:
        """(final condition, reason and message) once the Job has failed or succeeded."""
        for interim, final in ((jobstatus.FAILURE_TARGET, jobstatus.FAILED),
                               (jobstatus.SUCCESS_CRITERIA_MET, jobstatus.COMPLETE)):
            existing = next((c for c in self.conditions if c.get("type") == interim and c.get("status") == "True"), None)
            if existing is not None:
                return final, (existing.get("reason") or "", existing.get("message") or "")
        if failed > int(self.spec.get("backoffLimit", DEFAULT_BACKOFF_LIMIT)):
            return self._target(jobstatus.FAILURE_TARGET, jobstatus.FAILED, jobstatus.BACKOFF_LIMIT_EXCEEDED)
        if self._past_deadline():
            return self._target(jobstatus.FAILURE_TARGET, jobstatus.FAILED, jobstatus.DEADLINE_EXCEEDED)
        if self._succeeded(succeeded, indexes):
            return self._target(jobstatus.SUCCESS_CRITERIA_MET, jobstatus.COMPLETE, jobstatus.COMPLETIONS_REACHED)
        return None

    def _target(self, interim: str, final: str, reason: tuple[str, str]) -> tuple[str, tuple[str, str]]:
        self.conditions = jobstatus.with_condition(self.conditions, interim, "True", reason, self.ctx.now)
        return final, reason

    def _past_deadline(self) -> bool:
        deadline_s = self.spec.get("activeDeadlineSeconds")
        start = parse_time(self.start_time)
        if deadline_s is None or start is None or self.spec.get("suspend"):
            return False
        return self.ctx.now >= start + timedelta(seconds=int(deadline_s))

    def _succeeded(self, succeeded: int, indexes: set[int]) -> bool:
        if self.indexed:
            return len(indexes) >= (self.completions or 0)
        if self.completions is None:
            return succeeded > 0 and not any(not jobpods.finished(p) for p in self.pods)
        return succeeded >= self.completions

    def _finish(self, target: tuple[str, tuple[str, str]]) -> None:
        final, reason = target
        self.conditions = jobstatus.with_condition(self.conditions, final, "True", reason, self.ctx.now)
        if final == jobstatus.COMPLETE:
            self.completion_time = format_rfc3339(self.ctx.now)
            self._record("Normal", "Completed", "Job completed")
        else:
            self._record("Warning", reason[0], reason[1])

    # -- running -------------------------------------------------------------------------
    def _manage(self, key: str, active: list[Obj], terminating: list[Obj], succeeded: int,
                indexes: set[int]) -> list[Obj]:
        """Resume if suspended, start the clock, and bring the active pods to what is wanted."""
        if jobstatus.has_condition(self.job, jobstatus.SUSPENDED):
            self._set(jobstatus.SUSPENDED, "False", jobstatus.JOB_RESUMED, "Resumed")
            self.start_time = None  # upstream restarts the clock (and activeDeadlineSeconds) on resume
        if self.start_time is None:
            self.start_time = format_rfc3339(self.ctx.now)
        deadline_s, start = self.spec.get("activeDeadlineSeconds"), parse_time(self.start_time)
        if deadline_s is not None and start is not None:
            self.ctx.enqueue_at(key, start + timedelta(seconds=int(deadline_s)))
        wanted = self._wanted_indexes(active, indexes) if self.indexed else None
        want = self._want(succeeded, indexes)
        if len(active) > want:
            ordered = _deletion_order(active)
            return self._delete(ordered[:len(active) - want]) + ordered[len(active) - want:]
        ready_at = self.backoff.ready_at()
        if len(active) < want and ready_at is not None and ready_at > self.ctx.now:
            self.ctx.enqueue_at(key, ready_at)
            return active
        return active + self._create(want - len(active), wanted)

    def _want(self, succeeded: int, indexes: set[int]) -> int:
        parallelism = int(self.spec.get("parallelism", 1) or 0)
        if self.indexed:
            remaining = (self.completions or 0) - len(indexes)
        elif self.completions is None:
            remaining = parallelism if succeeded == 0 else 0
        else:
            remaining = self.completions - succeeded
        return max(0, min(parallelism, remaining))

    def _wanted_indexes(self, active: list[Obj], indexes: set[int]) -> list[int]:
        running = {jobpods.completion_index(pod) for pod in active}
        return [index for index in range(self.completions or 0) if index not in indexes and index not in running]

    def _create(self, count: int, indexes: list[int] | None) -> list[Obj]:
        created = []
        for number in range(min(count, MAX_POD_CHANGES_PER_SYNC)):
            index = indexes[number] if indexes is not None and number < len(indexes) else None
            if indexes is not None and index is None:
                break
            try:
                pod = self.ctx.client.create(PODS, jobpods.new_pod(self.job, index))
            except ApiError as error:
                self._record("Warning", "FailedCreate", f"Error creating: {error.message}")
                self.ctx.requeue_rate_limited()
                break
            self._record("Normal", "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}")
            created.append(pod)
        return created

    def _delete(self, pods: list[Obj]) -> list[Obj]:
        """Delete ``pods``; the ones still active (a delete that failed)."""
        left = []
        for pod in pods[:MAX_POD_CHANGES_PER_SYNC]:
            name = pod["metadata"]["name"]
            try:
                self.ctx.client.delete(PODS, name, pod["metadata"]["namespace"])
            except ApiError as error:
                if error.code != 404:
                    self._record("Warning", "FailedDelete", f"Error deleting: {error.message}")
                    left.append(pod)
                continue
            self._record("Normal", "SuccessfulDelete", f"Deleted pod: {name}")
        return left + pods[MAX_POD_CHANGES_PER_SYNC:]

    # -- status --------------------------------------------------------------------------
    def _set(self, condition_type: str, status: str, reason: tuple[str, str], event: str) -> None:
        """Set a condition (and record ``event``) unless it already has ``status``; a False
        one is only written over an existing condition (resuming a Job never suspended is nothing)."""
        current = next((c for c in self.conditions if c.get("type") == condition_type), None)
        if (current is not None and current.get("status") == status) or (current is None and status != "True"):
            return
        self.conditions = jobstatus.with_condition(self.conditions, condition_type, status, reason, self.ctx.now)
        self._record("Normal", event, reason[1])

    def _write(self, active: list[Obj], terminating: list[Obj], succeeded: int, failed: int,
               indexes: set[int]) -> None:
        new = jobstatus.build_status(
            self.old, active=len(active), ready=sum(1 for pod in active if is_pod_ready(pod)),
            terminating=len(terminating), succeeded=succeeded, failed=failed, conditions=self.conditions,
            start_time=self.start_time, completion_time=self.completion_time or self.old.get("completionTime"),
            completed_indexes=jobstatus.format_indexes(indexes) if self.indexed else "")
        if new != self.old:
            self.ctx.client.update_status(JOBS, dict(self.job, status=new))

    def _record(self, event_type: str, reason: str, message: str) -> None:
        self.ctx.record_event(self.job, "Job", event_type, reason, message, COMPONENT, "batch/v1")


def _job_key(pod: Mapping[str, Any] | None) -> str | None:
    ref = controller_of(pod) if pod is not None else None
    if ref is None or ref.get("kind") != "Job" or not ref.get("name"):
        return None
    return f"{(pod or {}).get('metadata', {}).get('namespace') or ''}/{ref['name']}"


def _deletion_order(pods: list[Obj]) -> list[Obj]:
    """Which extra pods go first: not ready before ready, then the newest first."""
    newest_first = sorted(pods, key=lambda pod: pod["metadata"].get("creationTimestamp") or "", reverse=True)
    return sorted(newest_first, key=is_pod_ready)


def _untrack(pod: Obj, ctx: Context) -> None:
    """Remove the tracking finalizer (the pod was counted, or its Job is gone)."""
    finalizers = [f for f in pod["metadata"].get("finalizers") or [] if f != jobpods.TRACKING_FINALIZER]
    try:
        ctx.client.patch(PODS, pod["metadata"]["name"], {"metadata": {"finalizers": finalizers or None}},
                         pod["metadata"]["namespace"])
    except ApiError as error:
        if error.code != 404:
            ctx.requeue_rate_limited()
