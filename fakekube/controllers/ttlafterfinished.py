"""The TTL-after-finished controller: deletes a finished Job ``ttlSecondsAfterFinished`` after
it finished (upstream ``pkg/controller/ttlafterfinished``, 1.33).

A Job needs cleaning up once it has ``spec.ttlSecondsAfterFinished`` and a Complete or
Failed condition that is True; it finished at that condition's ``lastTransitionTime``
(upstream's ``jobFinishTime``). Until finish + TTL the controller only sets a timer for
then; at it, the Job — re-read, as upstream re-reads it from the apiserver before deleting —
is deleted with propagation Foreground and its uid as a precondition, so a Job of the same
name made meanwhile, or one whose TTL was raised, is not touched. A Job already being
deleted is left alone.

Simplified: a finished Job whose finishing condition has no ``lastTransitionTime`` is
skipped (upstream retries it with back-off forever, logging that it cannot tell when the
Job finished).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Iterable, Mapping

from fakekube.api.machinery.errors import ApiError
from fakekube.clock import parse_time
from fakekube.engine import Context
from fakekube.objects.kinds import JOBS
from fakekube.store import DELETED, Change

Obj = dict[str, Any]


class TTLAfterFinishedController:
    """Deletes finished Jobs whose time to live has run out."""

    name = "ttl-after-finished-controller"
    resources = (JOBS,)

    def keys_for(self, change: Change) -> Iterable[str]:
        """Added or updated Jobs that need cleaning up and are not being deleted."""
        if change.type == DELETED or (change.group, change.resource) != (JOBS.group, JOBS.plural):
            return []
        if change.obj["metadata"].get("deletionTimestamp") or expires_at(change.obj) is None:
            return []
        return [f"{change.namespace}/{change.name}"]

    def reconcile(self, key: str, ctx: Context) -> None:
        namespace, name = key.split("/", 1)
        job = ctx.get(JOBS, name, namespace)
        if job is None or job["metadata"].get("deletionTimestamp"):
            return
        expiry = expires_at(job)
        if expiry is None:
            return
        if expiry > ctx.now:
            ctx.enqueue_at(key, expiry)
            return
        try:
            ctx.client.delete(JOBS, name, namespace, uid=job["metadata"].get("uid"), propagation_policy="Foreground")
        except ApiError as error:
            if error.code != 404:
                raise


def expires_at(job: Mapping[str, Any]) -> datetime | None:
    """When the Job's TTL after finishing runs out, or None if it has none or is not
    finished (or its finish time is unknown)."""
    ttl_s = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
    if ttl_s is None:
        return None
    finished = finish_time(job)
    return None if finished is None else finished + timedelta(seconds=int(ttl_s))


def finish_time(job: Mapping[str, Any]) -> datetime | None:
    """``jobFinishTime``: the lastTransitionTime of the Job's True Complete or Failed condition."""
    for condition in (job.get("status") or {}).get("conditions") or []:
        if condition.get("type") in ("Complete", "Failed") and condition.get("status") == "True":
            return parse_time(condition.get("lastTransitionTime"))
    return None
