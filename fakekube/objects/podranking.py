"""Which pods a controller deletes first when it scales down (upstream's ``ActivePodsWithRanks``).

ReplicaSets (and the controllers built on them) pick the pods that are cheapest to lose:
earlier in their start-up, less proven, doubled up on a node. Source (Kubernetes 1.33):
``pkg/controller/controller_utils.go`` (``ActivePodsWithRanks.Less``, ``podReadyTime``,
``maxContainerRestarts``, ``logarithmicRankDiff``) with ``PodDeletionCost`` (beta, on) and
``LogarithmicScaleDown`` (GA) enabled, and ``pkg/apis/core/helper``'s
``GetDeletionCostFromPodAnnotations``. The rules, first difference wins:

1. a pod not yet bound to a node before a bound one;
2. phase Pending < Unknown < Running (any other phase counts as Pending);
3. not ready before ready;
4. the lower ``controller.kubernetes.io/pod-deletion-cost`` first;
5. the higher rank first (the ReplicaSet controller ranks a pod by how many active
   related pods share its node: doubled-up pods go first);
6. both ready: ready for less time first, on a log2 scale of nanoseconds before ``now``
   (equal scales are ordered by uid, upstream's pseudo-random spread);
7. the pod whose busiest container restarted more first;
8. created more recently first, on the same log2 scale (then by uid).

Upstream sorts with Go's unstable ``sort.Sort`` over an informer's (random) order; here
the sort is stable over the order the caller gives (callers pass pods in name order),
so ties are broken the same way on every run. Pure: time is passed in.
"""

from __future__ import annotations

import functools
import math
import re
from datetime import datetime
from typing import Any, Iterable, Mapping, Sequence

from fakekube.clock import parse_time
from fakekube.objects.pods import POD_READY, is_pod_active, is_pod_ready

Obj = dict[str, Any]

#: The annotation that lets users say which replicas are cheaper to delete.
POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"

_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}
_INT32_MIN, _INT32_MAX = -(2 ** 31), 2 ** 31 - 1
_DECIMAL = re.compile(r"-?[0-9]+")


def pod_deletion_cost(pod: Mapping[str, Any]) -> int:
    """``GetDeletionCostFromPodAnnotations``: the annotation as an int32, 0 when absent or
    invalid (a ``+`` sign, leading zeros, not a number, out of int32 range)."""
    value = ((pod.get("metadata") or {}).get("annotations") or {}).get(POD_DELETION_COST)
    if not isinstance(value, str) or not _DECIMAL.fullmatch(value):
        return 0
    if value.startswith("0") and value != "0":
        return 0
    number = int(value)
    return number if _INT32_MIN <= number <= _INT32_MAX else 0


def pod_ready_time(pod: Mapping[str, Any]) -> datetime | None:
    """``podReadyTime``: when a ready pod's Ready condition turned True (None: not ready, or
    no transition time — Go's zero time)."""
    if not is_pod_ready(pod):
        return None
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == POD_READY and condition.get("status") == "True":
            return parse_time(condition.get("lastTransitionTime"))
    return None


def max_container_restarts(pod: Mapping[str, Any]) -> int:
    """``maxContainerRestarts``: the highest restartCount among the app containers."""
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return max([int(s.get("restartCount") or 0) for s in statuses], default=0)


def colocation_ranks(pods: Sequence[Mapping[str, Any]], related: Iterable[Mapping[str, Any]]) -> list[int]:
    """``getPodsRankedByRelatedPodsOnSameNode``: for each pod, how many active ``related``
    pods are on its node (unbound pods share the node "")."""
    per_node: dict[str, int] = {}
    for other in related:
        if is_pod_active(other):
            node = (other.get("spec") or {}).get("nodeName") or ""
            per_node[node] = per_node.get(node, 0) + 1
    return [per_node.get((pod.get("spec") or {}).get("nodeName") or "", 0) for pod in pods]


def compare_for_deletion(a: Mapping[str, Any], b: Mapping[str, Any], rank_a: int, rank_b: int,
                         now: datetime | None) -> int:
    """``ActivePodsWithRanks.Less`` as a comparison: negative when ``a`` goes before ``b``
    (is deleted first), positive when ``b`` does, 0 when no rule tells them apart.
    ``now`` None compares times without the logarithmic scale (upstream's zero ``Now``)."""
    if _less(a, b, rank_a, rank_b, now):
        return -1
    return 1 if _less(b, a, rank_b, rank_a, now) else 0


def rank_for_deletion(pods: Sequence[Mapping[str, Any]], ranks: Sequence[int] | None = None,
                      now: datetime | None = None) -> list[Any]:
    """``pods`` in deletion order (the first ones go first); ``ranks`` default to 0 each."""
    ranked: list[tuple[Any, int]] = list(zip(pods, ranks if ranks is not None else [0] * len(pods)))

    def compare(x: tuple[Any, int], y: tuple[Any, int]) -> int:
        return compare_for_deletion(x[0], y[0], x[1], y[1], now)

    ranked.sort(key=functools.cmp_to_key(compare))
    return [pod for pod, _ in ranked]


def _less(a: Mapping[str, Any], b: Mapping[str, Any], rank_a: int, rank_b: int, now: datetime | None) -> bool:
    """Upstream's ``Less(a, b)``: should ``a`` be deleted before ``b``?"""
    node_a, node_b = _node(a), _node(b)
    if node_a != node_b and (not node_a or not node_b):
        return not node_a
    phase_a, phase_b = _phase(a), _phase(b)
    if phase_a != phase_b:
        return phase_a < phase_b
    ready_a, ready_b = is_pod_ready(a), is_pod_ready(b)
    if ready_a != ready_b:
        return not ready_a
    cost_a, cost_b = pod_deletion_cost(a), pod_deletion_cost(b)
    if cost_a != cost_b:
        return cost_a < cost_b
    if rank_a != rank_b:
        return rank_a > rank_b
    if ready_a and ready_b:
        since_a, since_b = pod_ready_time(a), pod_ready_time(b)
        if since_a != since_b:
            return _newer_first(a, b, since_a, since_b, now)
    restarts_a, restarts_b = max_container_restarts(a), max_container_restarts(b)
    if restarts_a != restarts_b:
        return restarts_a > restarts_b
    created_a, created_b = _created(a), _created(b)
    if created_a != created_b:
        return _newer_first(a, b, created_a, created_b, now)
    return False


def _newer_first(a: Mapping[str, Any], b: Mapping[str, Any], time_a: datetime | None, time_b: datetime | None,
                 now: datetime | None) -> bool:
    """Steps 6 and 8: the later time first (a missing time first of all); with ``now``, on
    upstream's log2 scale, equal scales ordered by uid."""
    if now is None or time_a is None or time_b is None:
        return _after_or_zero(time_a, time_b)
    diff = _log_rank(time_a, now) - _log_rank(time_b, now)
    if diff == 0:
        return _uid(a) < _uid(b)
    return diff < 0


def _after_or_zero(time_a: datetime | None, time_b: datetime | None) -> bool:
    """``afterOrZero``: a zero (missing) time counts as after any other."""
    if time_a is None or time_b is None:
        return time_a is None
    return time_a > time_b


def _log_rank(moment: datetime, now: datetime) -> int:
    """``int64(math.Log2(float64(now.Sub(t))))`` in nanoseconds; -1 when not in the past."""
    parsed_now = parse_time(now)
    assert parsed_now is not None
    delta = parsed_now - moment
    ns = (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000
    return int(math.log2(float(ns))) if ns > 0 else -1


def _node(pod: Mapping[str, Any]) -> str:
    return (pod.get("spec") or {}).get("nodeName") or ""


def _phase(pod: Mapping[str, Any]) -> int:
    return _PHASE_ORDINAL.get((pod.get("status") or {}).get("phase") or "", 0)


def _created(pod: Mapping[str, Any]) -> datetime | None:
    return parse_time((pod.get("metadata") or {}).get("creationTimestamp"))


def _uid(pod: Mapping[str, Any]) -> str:
    return (pod.get("metadata") or {}).get("uid") or ""
