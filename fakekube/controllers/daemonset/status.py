"""A DaemonSet's status counts, as ``updateDaemonSetStatus`` computes them (1.33).

Per node: a node that should run the pod counts in ``desiredNumberScheduled``; if it has
a daemon pod, in ``currentNumberScheduled``, and its oldest pod (bound first) decides
``numberReady``, ``numberAvailable`` (ready for more than ``minReadySeconds``) and
``updatedNumberScheduled`` (current revision). A node that should not run it but has one
counts in ``numberMisscheduled`` (a NotReady or unreachable node is such a node: its
NoSchedule taint is not tolerated, though its pod may stay). ``numberUnavailable`` is
desired minus available. Pure.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Mapping, Sequence

from fakekube.clock import parse_time
from fakekube.controllers.daemonset.manage import creation_order
from fakekube.controllers.daemonset.rollout import is_pod_updated
from fakekube.objects.pods import POD_READY, is_pod_available, is_pod_ready, pod_condition

Obj = dict[str, Any]


class DaemonSetCounts:
    """The status fields the controller owns (names as in ``status``), counted up by :func:`count`."""

    __slots__ = ("desiredNumberScheduled", "currentNumberScheduled", "numberMisscheduled", "numberReady",
                 "updatedNumberScheduled", "numberAvailable", "numberUnavailable", "next_available_at")

    def __init__(self, desiredNumberScheduled: int = 0, currentNumberScheduled: int = 0,
                 numberMisscheduled: int = 0, numberReady: int = 0, updatedNumberScheduled: int = 0,
                 numberAvailable: int = 0, numberUnavailable: int = 0,
                 next_available_at: datetime | None = None) -> None:
        self.desiredNumberScheduled = desiredNumberScheduled
        self.currentNumberScheduled = currentNumberScheduled
        self.numberMisscheduled = numberMisscheduled
        self.numberReady = numberReady
        self.updatedNumberScheduled = updatedNumberScheduled
        self.numberAvailable = numberAvailable
        self.numberUnavailable = numberUnavailable
        #: When the next ready-but-not-yet-available pod turns available (not a status field).
        self.next_available_at = next_available_at


def count(node_facts: Sequence[tuple[str, bool, Sequence[Obj]]], min_ready_s: int, hash_: str,
          template_generation: int | None, now: datetime) -> DaemonSetCounts:
    """The counts over (node, should run, daemon pods on it) for every node."""
    counts = DaemonSetCounts()
    for _, should_run, pods in node_facts:
        if not should_run:
            counts.numberMisscheduled += 1 if pods else 0
            continue
        counts.desiredNumberScheduled += 1
        if not pods:
            continue
        counts.currentNumberScheduled += 1
        pod = creation_order(pods)[0]
        if is_pod_ready(pod):
            counts.numberReady += 1
            if is_pod_available(pod, min_ready_s, now):
                counts.numberAvailable += 1
            else:
                _note_available_at(counts, pod, min_ready_s)
        if is_pod_updated(pod, hash_, template_generation):
            counts.updatedNumberScheduled += 1
    counts.numberUnavailable = counts.desiredNumberScheduled - counts.numberAvailable
    return counts


def _note_available_at(counts: DaemonSetCounts, pod: Mapping[str, Any], min_ready_s: int) -> None:
    ready_since = parse_time((pod_condition(pod, POD_READY) or {}).get("lastTransitionTime"))
    if ready_since is None:
        return
    at = ready_since + timedelta(seconds=min_ready_s)
    if counts.next_available_at is None or at < counts.next_available_at:
        counts.next_available_at = at


STATUS_FIELDS = ("desiredNumberScheduled", "currentNumberScheduled", "numberMisscheduled", "numberReady",
                 "updatedNumberScheduled", "numberAvailable", "numberUnavailable")
#: ``DaemonSetStatus``'s fields in Go's order; those marked True are ``omitempty`` (absent when 0).
_GO_ORDER = (("currentNumberScheduled", False), ("numberMisscheduled", False), ("desiredNumberScheduled", False),
             ("numberReady", False), ("observedGeneration", True), ("updatedNumberScheduled", True),
             ("numberAvailable", True), ("numberUnavailable", True), ("collisionCount", True),
             ("conditions", True))


def status_unchanged(ds: Mapping[str, Any], counts: DaemonSetCounts) -> bool:
    """``storeDaemonSetStatus``' skip: every count as stored and the generation observed."""
    status = ds.get("status") or {}
    generation = int((ds.get("metadata") or {}).get("generation") or 0)
    return (all(int(status.get(name) or 0) == getattr(counts, name) for name in STATUS_FIELDS)
            and int(status.get("observedGeneration") or 0) >= generation)


def new_status(ds: Mapping[str, Any], counts: DaemonSetCounts, observe_generation: bool) -> Obj:
    """The status to write, as Go serialises it: the counts, ``observedGeneration`` when this
    sync acted on the current generation, and the fields others own (collisionCount,
    conditions) kept; zero ``omitempty`` fields left out."""
    values: Obj = dict(ds.get("status") or {})
    if observe_generation:
        values["observedGeneration"] = int((ds.get("metadata") or {}).get("generation") or 0)
    for name in STATUS_FIELDS:
        values[name] = getattr(counts, name)
    status: Obj = {}
    for name, omitempty in _GO_ORDER:
        value = values.pop(name, None)
        if value is None and not omitempty:
            value = 0
        if _serialised(name, omitempty, value):
            status[name] = value
    status.update(values)  # anything else a client put there
    return status


def _serialised(name: str, omitempty: bool, value: Any) -> bool:
    """Does Go write this field? collisionCount is a pointer, so its 0 is written."""
    if value is None:
        return False
    return name == "collisionCount" or not omitempty or value not in (0, [])
