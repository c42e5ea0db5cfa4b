"""A Deployment's status and conditions: counts from its ReplicaSets, Available and
Progressing with upstream's reasons, and the progress-deadline arithmetic.

Sources (Kubernetes 1.33): ``pkg/controller/deployment/util/deployment_util.go``
(``NewDeploymentCondition``, ``SetDeploymentCondition``, ``DeploymentComplete``,
``DeploymentProgressing``, ``DeploymentTimedOut``) and ``pkg/controller/deployment/sync.go``
(``calculateStatus``). Time is passed in. ``kubectl rollout status`` reads the same fields.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Mapping, Sequence

from fakekube.clock import format_rfc3339, parse_time
from fakekube.objects.deployments import (
    actual_replica_count,
    available_replica_count,
    max_unavailable,
    ready_replica_count,
    replica_count,
    spec_replicas,
)

Obj = dict[str, Any]

AVAILABLE = "Available"
PROGRESSING = "Progressing"
REPLICA_FAILURE = "ReplicaFailure"

# Progressing reasons.
REPLICA_SET_UPDATED = "ReplicaSetUpdated"
FAILED_RS_CREATE = "ReplicaSetCreateError"
NEW_REPLICA_SET = "NewReplicaSetCreated"
FOUND_NEW_RS = "FoundNewReplicaSet"
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
TIMED_OUT = "ProgressDeadlineExceeded"
PAUSED = "DeploymentPaused"
RESUMED = "DeploymentResumed"
# Available reasons.
MINIMUM_REPLICAS_AVAILABLE = "MinimumReplicasAvailable"
MINIMUM_REPLICAS_UNAVAILABLE = "MinimumReplicasUnavailable"

MINIMUM_AVAILABLE_MESSAGE = "Deployment has minimum availability."
MINIMUM_UNAVAILABLE_MESSAGE = "Deployment does not have minimum availability."


def new_condition(condition_type: str, status: str, reason: str, message: str, now: datetime) -> Obj:
    """``NewDeploymentCondition``, in the field order the apiserver returns."""
    stamp = format_rfc3339(now)
    return {"type": condition_type, "status": status, "lastUpdateTime": stamp, "lastTransitionTime": stamp,
            "reason": reason, "message": message}


def get_condition(status: Mapping[str, Any], condition_type: str) -> Obj | None:
    return next((c for c in status.get("conditions") or [] if c.get("type") == condition_type), None)


def remove_condition(status: Obj, condition_type: str) -> None:
    """``RemoveDeploymentCondition`` on ``status`` (the caller's copy)."""
    kept = [c for c in status.get("conditions") or [] if c.get("type") != condition_type]
    if kept:
        status["conditions"] = kept
    else:
        status.pop("conditions", None)


def set_condition(status: Obj, condition: Obj) -> None:
    """``SetDeploymentCondition`` on ``status``: nothing when status and reason are unchanged;
    the transition time kept when only the reason changes; the condition moves last."""
    current = get_condition(status, condition["type"])
    if current is not None and current.get("status") == condition["status"] \
            and current.get("reason") == condition["reason"]:
        return
    if current is not None and current.get("status") == condition["status"]:
        condition = {**condition, "lastTransitionTime": current.get("lastTransitionTime")}
    remove_condition(status, condition["type"])
    status["conditions"] = [*(status.get("conditions") or []), condition]


def has_progress_deadline(deployment: Mapping[str, Any]) -> bool:
    """``HasProgressDeadline``: set and not MaxInt32 (the "no deadline" value)."""
    deadline = (deployment.get("spec") or {}).get("progressDeadlineSeconds")
    return deadline is not None and deadline != 2**31 - 1


def deployment_complete(deployment: Mapping[str, Any], status: Mapping[str, Any]) -> bool:
    """``DeploymentComplete``: every replica updated and available, nothing old left, and the
    newest generation observed."""
    replicas = spec_replicas(deployment)
    return (status.get("updatedReplicas", 0) == replicas and status.get("replicas", 0) == replicas
            and status.get("availableReplicas", 0) == replicas
            and status.get("observedGeneration", 0) >= (deployment.get("metadata") or {}).get("generation", 0))


def deployment_progressing(deployment: Mapping[str, Any], status: Mapping[str, Any]) -> bool:
    """``DeploymentProgressing``: more pods updated, ready or available, or fewer old ones,
    than the stored status says."""
    old = deployment.get("status") or {}
    old_old = old.get("replicas", 0) - old.get("updatedReplicas", 0)
    new_old = status.get("replicas", 0) - status.get("updatedReplicas", 0)
    return (status.get("updatedReplicas", 0) > old.get("updatedReplicas", 0) or new_old < old_old
            or status.get("readyReplicas", 0) > old.get("readyReplicas", 0)
            or status.get("availableReplicas", 0) > old.get("availableReplicas", 0))


def progress_deadline(deployment: Mapping[str, Any], condition: Mapping[str, Any]) -> datetime | None:
    """The last progress (the Progressing condition's lastUpdateTime, whole seconds on the
    wire) plus progressDeadlineSeconds."""
    since = parse_time(condition.get("lastUpdateTime"))
    if since is None:
        return None
    return since + timedelta(seconds=(deployment.get("spec") or {}).get("progressDeadlineSeconds") or 0)


def deployment_timed_out(deployment: Mapping[str, Any], status: Mapping[str, Any], now: datetime) -> bool:
    """``DeploymentTimedOut``: no progress for *more than* progressDeadlineSeconds (a
    completed rollout never times out; a timed-out one stays so)."""
    if not has_progress_deadline(deployment):
        return False
    condition = get_condition(status, PROGRESSING)
    if condition is None or condition.get("reason") == NEW_RS_AVAILABLE:
        return False
    if condition.get("reason") == TIMED_OUT:
        return True
    deadline = progress_deadline(deployment, condition)
    at = parse_time(now)
    return deadline is not None and at is not None and deadline < at


def calculate_status(all_rss: Sequence[Obj | None], new_rs: Obj | None, deployment: Mapping[str, Any],
                     now: datetime, terminating_replicas: bool = False) -> Obj:
    """``calculateStatus``: counts from the ReplicaSets, conditions carried over, and
    Available set from the minimum availability (replicas - maxUnavailable).
    ``terminating_replicas``: DeploymentReplicaSetTerminatingReplicas (on from 1.35) adds
    the ReplicaSets' ``terminatingReplicas`` sum."""
    old = deployment.get("status") or {}
    available = available_replica_count(all_rss)
    status: Obj = {
        "observedGeneration": (deployment.get("metadata") or {}).get("generation", 0),
        "replicas": actual_replica_count(all_rss),
        "updatedReplicas": actual_replica_count([new_rs]),
        "readyReplicas": ready_replica_count(all_rss),
        "availableReplicas": available,
        "unavailableReplicas": max(0, replica_count(all_rss) - available),
    }
    status = {key: value for key, value in status.items() if value}  # omitempty, as the API returns it
    terminating = terminating_replica_count(all_rss) if terminating_replicas else None
    if terminating is not None:  # a pointer: 0 is written
        status["terminatingReplicas"] = terminating
    if old.get("conditions"):
        status["conditions"] = [dict(c) for c in old["conditions"]]
    if old.get("collisionCount") is not None:
        status["collisionCount"] = old["collisionCount"]
    if available >= spec_replicas(deployment) - max_unavailable(deployment):
        condition = new_condition(AVAILABLE, "True", MINIMUM_REPLICAS_AVAILABLE, MINIMUM_AVAILABLE_MESSAGE, now)
    else:
        condition = new_condition(AVAILABLE, "False", MINIMUM_REPLICAS_UNAVAILABLE, MINIMUM_UNAVAILABLE_MESSAGE, now)
    set_condition(status, condition)
    return status


def terminating_replica_count(all_rss: Sequence[Obj | None]) -> int | None:
    """``GetTerminatingReplicaCountForReplicaSets``: the ReplicaSets' sum, unknown (None) while a
    ReplicaSet its controller synced has not reported one; never-synced ones do not count."""
    total = 0
    for rs in all_rss:
        if rs is None:
            continue
        status = rs.get("status") or {}
        if status.get("terminatingReplicas") is None:
            if not status.get("observedGeneration"):
                continue
            return None
        total += int(status["terminatingReplicas"])
    return total


def replica_set_failure(rs_condition: Mapping[str, Any]) -> Obj:
    """``ReplicaSetToDeploymentCondition``: a ReplicaSet's ReplicaFailure, promoted."""
    return {"type": rs_condition.get("type"), "status": rs_condition.get("status"),
            "lastUpdateTime": rs_condition.get("lastTransitionTime"),
            "lastTransitionTime": rs_condition.get("lastTransitionTime"),
            "reason": rs_condition.get("reason"), "message": rs_condition.get("message")}
