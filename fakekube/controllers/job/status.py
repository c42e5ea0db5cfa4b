"""A Job's status: its counts, conditions and completed indexes (upstream 1.33 shapes).

Field order and presence are the wire's: ``active``, ``succeeded`` and ``failed`` are left
out when 0 (``omitempty``), ``ready``, ``terminating`` and ``uncountedTerminatedPods`` are
always written (pointers the 1.33 controller sets), ``completedIndexes`` only for Indexed
Jobs with some. Conditions are JobConditions: both probe and transition times are set
when the condition is added.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Iterable, Mapping

from fakekube.clock import format_rfc3339

Obj = dict[str, Any]

SUSPENDED, SUCCESS_CRITERIA_MET, COMPLETE = "Suspended", "SuccessCriteriaMet", "Complete"
FAILURE_TARGET, FAILED = "FailureTarget", "Failed"

COMPLETIONS_REACHED = ("CompletionsReached", "Reached expected number of succeeded pods")
BACKOFF_LIMIT_EXCEEDED = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
DEADLINE_EXCEEDED = ("DeadlineExceeded", "Job was active longer than specified deadline")
JOB_SUSPENDED = ("JobSuspended", "Job suspended")
JOB_RESUMED = ("JobResumed", "Job resumed")


def has_condition(job: Mapping[str, Any], condition_type: str) -> bool:
    """Does the Job have ``condition_type`` with status True?"""
    return any(c.get("type") == condition_type and c.get("status") == "True"
               for c in (job.get("status") or {}).get("conditions") or [])


def is_finished(job: Mapping[str, Any]) -> bool:
    """``IsJobFinished``: Complete or Failed."""
    return has_condition(job, COMPLETE) or has_condition(job, FAILED)


def with_condition(conditions: Iterable[Mapping[str, Any]], condition_type: str, status: str,
                   reason_message: tuple[str, str], now: datetime) -> list[Obj]:
    """The conditions with ``condition_type`` set: added, or changed in place (its times
    move only when its status changes)."""
    result = [dict(c) for c in conditions]
    stamp = format_rfc3339(now)
    reason, message = reason_message
    for existing in result:
        if existing.get("type") == condition_type:
            if existing.get("status") != status:
                existing.update(status=status, lastProbeTime=stamp, lastTransitionTime=stamp)
            existing.update(reason=reason, message=message)
            return result
    result.append({"type": condition_type, "status": status, "lastProbeTime": stamp,
                   "lastTransitionTime": stamp, "reason": reason, "message": message})
    return result


def format_indexes(indexes: Iterable[int]) -> str:
    """``completedIndexes``: sorted, consecutive runs written ``a-b`` ("1,3-5,7"), as upstream's intervals."""
    ordered = sorted(set(indexes))
    parts: list[str] = []
    start = 0
    while start < len(ordered):
        end = start
        while end + 1 < len(ordered) and ordered[end + 1] == ordered[end] + 1:
            end += 1
        if end - start >= 1:
            parts.append(f"{ordered[start]}-{ordered[end]}")
        else:
            parts.append(str(ordered[start]))
        start = end + 1
    return ",".join(parts)


def parse_indexes(text: str, completions: int) -> set[int]:
    """The indexes ``completedIndexes`` names below ``completions`` (malformed parts skipped)."""
    found: set[int] = set()
    for part in (text or "").split(","):
        low, _, high = part.partition("-")
        if not low.isdigit() or (high and not high.isdigit()):
            continue
        found.update(range(int(low), min(int(high or low), completions - 1) + 1))
    return found


def build_status(previous: Mapping[str, Any], *, active: int, ready: int, terminating: int, succeeded: int,
                 failed: int, conditions: list[Obj], start_time: str | None, completion_time: str | None,
                 completed_indexes: str) -> Obj:
    """The status in Go's field order (see the module docstring for which fields appear)."""
    status: Obj = {}
    if conditions:
        status["conditions"] = conditions
    if start_time:
        status["startTime"] = start_time
    if completion_time:
        status["completionTime"] = completion_time
    for name, value in (("active", active), ("succeeded", succeeded), ("failed", failed)):
        if value:
            status[name] = value
    status["terminating"] = terminating
    if completed_indexes:
        status["completedIndexes"] = completed_indexes
    status["uncountedTerminatedPods"] = dict(previous.get("uncountedTerminatedPods") or {})
    status["ready"] = ready
    return status
