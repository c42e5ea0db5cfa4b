"""The Progressing condition during a rollout, and the timer that notices a stuck one
(upstream's ``pkg/controller/deployment/progress.go``).

Progress is any of: more pods updated, ready or available, or fewer old ones. Each
progress refreshes the condition's lastUpdateTime; with none for *more than*
progressDeadlineSeconds the condition turns False/ProgressDeadlineExceeded. Upstream
re-checks a stuck Deployment one second after the deadline (``enqueueAfter(after + 1 s)``,
to absorb clock skew), and the strict "more than" needs that second: on the virtual
clock the condition turns at lastUpdateTime + progressDeadlineSeconds + 1 s exactly.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Sequence

from fakekube.controllers.deployment.sync import Obj, Sync
from fakekube.objects.deploymentstatus import (
    NEW_RS_AVAILABLE,
    PROGRESSING,
    REPLICA_FAILURE,
    REPLICA_SET_UPDATED,
    TIMED_OUT,
    calculate_status,
    deployment_complete,
    deployment_progressing,
    deployment_timed_out,
    get_condition,
    has_progress_deadline,
    new_condition,
    progress_deadline,
    remove_condition,
    replica_set_failure,
    set_condition,
)

#: Upstream's margin after the deadline before the re-check (``after + time.Second``).
RECHECK_MARGIN_S = 1.0


def sync_rollout_status(sync: Sync, all_rss: Sequence[Obj | None], new_rs: Obj | None) -> None:
    """``syncRolloutStatus``: status with Progressing and ReplicaFailure conditions; when
    nothing changed, a timer for the progress check."""
    d = sync.d
    status = calculate_status(all_rss, new_rs, d, sync.ctx.now, sync.terminating_replicas)
    if not has_progress_deadline(d):
        remove_condition(status, PROGRESSING)
    current = get_condition(d.get("status") or {}, PROGRESSING)
    complete_before = status.get("replicas", 0) == status.get("updatedReplicas", 0) \
        and current is not None and current.get("reason") == NEW_RS_AVAILABLE
    if has_progress_deadline(d) and not complete_before:
        _progress(sync, status, current, new_rs)
    failures = _replica_failures(all_rss, new_rs)
    if failures:
        set_condition(status, failures[0])
    else:
        remove_condition(status, REPLICA_FAILURE)
    if status == (d.get("status") or {}):
        _requeue_stuck(sync, status)
        return
    d["status"] = status
    sync.write_status()


def _progress(sync: Sync, status: Obj, current: Obj | None, new_rs: Obj | None) -> None:
    d, now = sync.d, sync.ctx.now
    subject = f'ReplicaSet "{new_rs["metadata"]["name"]}"' if new_rs is not None else f'Deployment "{d["metadata"]["name"]}"'
    if deployment_complete(d, status):
        condition = new_condition(PROGRESSING, "True", NEW_RS_AVAILABLE, f"{subject} has successfully progressed.", now)
        set_condition(status, condition)
    elif deployment_progressing(d, status):
        condition = new_condition(PROGRESSING, "True", REPLICA_SET_UPDATED, f"{subject} is progressing.", now)
        if current is not None:
            if current.get("status") == "True":
                condition["lastTransitionTime"] = current.get("lastTransitionTime")
            remove_condition(status, PROGRESSING)
        set_condition(status, condition)
    elif deployment_timed_out(d, status, now):
        condition = new_condition(PROGRESSING, "False", TIMED_OUT, f"{subject} has timed out progressing.", now)
        set_condition(status, condition)


def _replica_failures(all_rss: Sequence[Obj | None], new_rs: Obj | None) -> list[Obj]:
    """``getReplicaFailures``: the new ReplicaSet's ReplicaFailure conditions, else any old one's."""
    def failures(rss: Sequence[Obj | None]) -> list[Obj]:
        return [replica_set_failure(c) for rs in rss if rs is not None
                for c in (rs.get("status") or {}).get("conditions") or [] if c.get("type") == REPLICA_FAILURE]
    return failures([new_rs]) or failures(all_rss)


def _requeue_stuck(sync: Sync, status: Obj) -> None:
    """``requeueStuckDeployment``: come back when the deadline will have passed."""
    d = sync.d
    current = get_condition(d.get("status") or {}, PROGRESSING)
    if not has_progress_deadline(d) or current is None:
        return
    if deployment_complete(d, status) or current.get("reason") == TIMED_OUT:
        return
    deadline = progress_deadline(d, current)
    if deadline is None:
        return
    if deadline - sync.ctx.now < timedelta(seconds=1):
        sync.ctx.requeue_rate_limited()
        return
    sync.ctx.enqueue_at(sync.ctx.key, deadline + timedelta(seconds=RECHECK_MARGIN_S))
