"""A ReplicaSet's status from its pods (upstream's ``calculateStatus`` and
``updateReplicaSetStatus``, ``pkg/controller/replicaset/replica_set_utils.go``, 1.33).

``status.terminatingReplicas`` (the claimed pods being deleted that have not finished) is
written by ReplicaSets, not ReplicationControllers, when DeploymentReplicaSetTerminatingReplicas
is on (from 1.35; fakekube/objects/versions.py).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Mapping, Sequence

from fakekube.clock import format_rfc3339, parse_time
from fakekube.objects.pods import POD_READY, is_pod_available, is_pod_ready, pod_condition

Obj = dict[str, Any]

REPLICA_FAILURE = "ReplicaFailure"
FAILED_CREATE = "FailedCreate"
FAILED_DELETE = "FailedDelete"
#: The counted status fields, in Go's field order.
COUNTS = ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas", "terminatingReplicas")

#: The clock's resolution: a pod ready since ``t`` with ``minReadySeconds`` m is available
#: strictly after ``t + m`` (1.33's IsPodAvailable), so its ReplicaSet is looked at again
#: one microsecond after that instant.
AVAILABILITY_STEP = timedelta(microseconds=1)


def calculate_status(rs: Mapping[str, Any], pods: Sequence[Mapping[str, Any]], manage_error: str | None,
                     now: datetime, terminating: int | None = None) -> Obj:
    """The status ``rs`` should have with its claimed active ``pods``; ``manage_error`` is the
    message of this sync's failed create or delete, if any; ``terminating`` the count of its
    terminating pods (None: not reported). Fields in Go's order, zero counts left out as
    ``omitempty`` does (``replicas`` is always written, and ``terminatingReplicas``, a pointer,
    whenever it is reported)."""
    spec = rs.get("spec") or {}
    template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    min_ready_s = int(spec.get("minReadySeconds") or 0)
    labelled = sum(1 for pod in pods if _has_labels(pod, template_labels))
    ready = [pod for pod in pods if is_pod_ready(pod)]
    available = sum(1 for pod in ready if is_pod_available(pod, min_ready_s, now))
    counts = {"replicas": len(pods), "fullyLabeledReplicas": labelled, "readyReplicas": len(ready),
              "availableReplicas": available}
    status: Obj = {key: value for key, value in counts.items() if value or key == "replicas"}
    if terminating is not None:
        status["terminatingReplicas"] = terminating
    conditions = _conditions(rs, len(pods), manage_error, now)
    if conditions:
        status["conditions"] = conditions
    return status


def with_observed_generation(rs: Mapping[str, Any], status: Obj) -> Obj | None:
    """The status to write (``observedGeneration`` set to the object's generation), or None
    when upstream would skip the write: counts and conditions unchanged and the generation
    already observed."""
    current = rs.get("status") or {}
    generation = (rs.get("metadata") or {}).get("generation") or 0
    same = all((current.get(key) or 0) == (status.get(key) or 0) for key in COUNTS[:-1]) \
        and current.get("terminatingReplicas") == status.get("terminatingReplicas")
    if same and current.get("observedGeneration", 0) == generation and \
            (current.get("conditions") or []) == (status.get("conditions") or []):
        return None
    ordered: Obj = {key: status[key] for key in COUNTS if key in status}
    if generation:
        ordered["observedGeneration"] = generation
    if "conditions" in status:
        ordered["conditions"] = status["conditions"]
    return ordered


def next_availability(pods: Sequence[Mapping[str, Any]], min_ready_s: int, now: datetime) -> datetime | None:
    """The first instant one of the ready-but-not-yet-available ``pods`` becomes available
    (None: none will without another change)."""
    if min_ready_s <= 0:
        return None
    instants = []
    for pod in pods:
        if is_pod_ready(pod) and not is_pod_available(pod, min_ready_s, now):
            since = parse_time((pod_condition(pod, POD_READY) or {}).get("lastTransitionTime"))
            if since is not None:
                instants.append(since + timedelta(seconds=min_ready_s) + AVAILABILITY_STEP)
    return min(instants, default=None)


def _has_labels(pod: Mapping[str, Any], wanted: Mapping[str, str]) -> bool:
    """``labels.Set(template.Labels).AsSelector().Matches(pod.Labels)``."""
    labels = (pod.get("metadata") or {}).get("labels") or {}
    return all(key in labels and labels[key] == value for key, value in wanted.items())


def _conditions(rs: Mapping[str, Any], active: int, manage_error: str | None, now: datetime) -> list[Obj]:
    """ReplicaFailure is set (once: an existing one is kept as is) when managing failed, and
    removed by the first sync that manages without error."""
    conditions = list((rs.get("status") or {}).get("conditions") or [])
    failure = next((c for c in conditions if c.get("type") == REPLICA_FAILURE), None)
    if manage_error is not None and failure is None:
        replicas = int((rs.get("spec") or {}).get("replicas") or 0)
        reason = FAILED_CREATE if active < replicas else FAILED_DELETE if active > replicas else ""
        condition: Obj = {"type": REPLICA_FAILURE, "status": "True", "lastTransitionTime": format_rfc3339(now)}
        if reason:
            condition["reason"] = reason
        condition["message"] = manage_error
        return conditions + [condition]
    if manage_error is None and failure is not None:
        return [c for c in conditions if c.get("type") != REPLICA_FAILURE]
    return conditions
