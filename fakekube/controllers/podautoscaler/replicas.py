"""How many replicas a resource metric asks for (upstream ``replica_calculator.go``, 1.33).

Pure: pods, their usage figures (metrics-server's, :class:`~fakekube.objects.metrics.PodUsage`)
and an instant in, a recommendation out. The rules are upstream's ``GetResourceReplicas`` /
``GetRawResourceReplicas``:

* pods being deleted or Failed are ignored; Pending ones count as not yet ready;
* for CPU, a pod is "unready" while its first 5 minutes run and it is not Ready or its
  figures predate its readiness, and afterwards while it is not Ready and never was
  Ready within 30 s of starting — such pods' figures are left out;
* utilization = total usage / total requests of the pods with figures (percent, rounded
  down); within 10 % of the target nothing changes; otherwise the desired count is
  ``ceil(ratio × pods with figures)``, after pods without figures are assumed to use 100 %
  of their request when scaling down and 0 when scaling up, and unready pods 0 when
  scaling up — unless that flips the direction, which keeps the current count.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any, Callable, Mapping, NamedTuple, Sequence

from fakekube.clock import parse_time
from fakekube.objects.metrics import PodUsage
from fakekube.objects.pods import POD_READY, pod_condition
from fakekube.objects.quantity import milli_value

Obj = dict[str, Any]

#: ``--horizontal-pod-autoscaler-tolerance``.
TOLERANCE = 0.1
#: ``--horizontal-pod-autoscaler-cpu-initialization-period`` and
#: ``--horizontal-pod-autoscaler-initial-readiness-delay``.
CPU_INITIALIZATION_PERIOD = timedelta(minutes=5)
INITIAL_READINESS_DELAY = timedelta(seconds=30)


class MetricError(Exception):
    """The metric cannot be computed; ``str()`` is upstream's error text."""


class Recommendation(NamedTuple):
    """What one metric asks for, and what it saw (for ``status.currentMetrics``)."""

    replicas: int
    #: Percent of request (Utilization targets), else None.
    utilization: int | None
    #: The average usage per pod with figures: millicores for CPU, bytes × 1000 for memory
    #: (upstream keeps both as milli-values).
    average_milli: int


def resource_replicas(current: int, target_utilization: int | None, target_average_milli: int | None,
                      resource: str, pods: Sequence[Obj], usage: Mapping[tuple[str, str], PodUsage],
                      now: datetime, container: str | None = None) -> Recommendation:
    """The recommendation of one Resource (or ContainerResource, ``container``) metric."""
    figures = {key: _usage_milli(found, resource, container) for key, found in usage.items()}
    if not pods:
        raise MetricError("no pods returned by selector while calculating replica count")
    ready, unready, missing, ignored = _group(pods, figures, usage, resource, now)
    counted = {key: value for key in ready if (value := figures[key]) is not None}
    if not counted:
        raise MetricError("did not receive metrics for targeted pods (pods might be unready)")
    if target_utilization is None:
        return _raw_replicas(current, target_average_milli or 0, counted, unready, missing)
    requests = {_key(pod): _request_milli(pod, resource, container) for pod in pods if _key(pod) not in ignored}
    return _utilization_replicas(current, target_utilization, counted, requests, unready, missing)


def _utilization_replicas(current: int, target: int, counted: dict[tuple[str, str], int],
                          requests: Mapping[tuple[str, str], int], unready: set[tuple[str, str]],
                          missing: set[tuple[str, str]]) -> Recommendation:
    _, utilization, average = _utilization(counted, requests, target)
    replicas = _replicas(current, counted, unready, missing, lambda usage: _utilization(usage, requests, target)[0],
                         requests.__getitem__)
    return Recommendation(replicas, utilization, average)


def _raw_replicas(current: int, target_milli: int, counted: dict[tuple[str, str], int],
                  unready: set[tuple[str, str]], missing: set[tuple[str, str]]) -> Recommendation:
    if target_milli <= 0:
        raise MetricError("invalid target value: the averageValue must be positive")
    replicas = _replicas(current, counted, unready, missing,
                         lambda usage: sum(usage.values()) / (target_milli * len(usage)), lambda key: target_milli)
    return Recommendation(replicas, None, sum(counted.values()) // len(counted))


def _replicas(current: int, counted: dict[tuple[str, str], int], unready: set[tuple[str, str]],
              missing: set[tuple[str, str]], ratio_of: Callable[[Mapping[tuple[str, str], int]], float],
              full: Callable[[tuple[str, str]], int]) -> int:
    """Upstream's two passes: the ratio of the pods with figures; then, when pods lack figures
    or unready ones would change a scale-up, again with the missing ones assumed at ``full``
    (scaling down) or 0 (up) and the unready ones at 0."""
    ratio = ratio_of(counted)
    rebalance_unready = bool(unready) and ratio > 1.0
    if not rebalance_unready and not missing:
        return current if abs(1.0 - ratio) <= TOLERANCE else math.ceil(ratio * len(counted))
    filled = dict(counted)
    for key in missing:
        filled[key] = full(key) if ratio < 1.0 else 0
    if rebalance_unready:
        filled.update({key: 0 for key in unready})
    return _rebalanced(current, ratio, ratio_of(filled), len(filled))


def _rebalanced(current: int, ratio: float, new_ratio: float, pods: int) -> int:
    """Upstream's second pass: no change when within tolerance or when the guesses flip the
    direction of the first answer."""
    if abs(1.0 - new_ratio) <= TOLERANCE or (ratio < 1.0 < new_ratio) or (ratio > 1.0 > new_ratio):
        return current
    replicas = math.ceil(new_ratio * pods)
    if (new_ratio < 1.0 and replicas > current) or (new_ratio > 1.0 and replicas < current):
        return current
    return replicas


def _utilization(usage: Mapping[tuple[str, str], int], requests: Mapping[tuple[str, str], int],
                 target: int) -> tuple[float, int, int]:
    """(usage ratio to the target, utilization in percent, average usage) over ``usage``'s pods."""
    total_usage = sum(usage.values())
    total_request = sum(requests[key] for key in usage if key in requests)
    if total_request == 0:
        raise MetricError("no metrics returned matched known pods")
    utilization = int(total_usage * 100 / total_request)
    return utilization / target, utilization, total_usage // len(usage)


def _group(pods: Sequence[Obj], figures: Mapping[tuple[str, str], int | None],
           usage: Mapping[tuple[str, str], PodUsage], resource: str,
           now: datetime) -> tuple[set[tuple[str, str]], set[tuple[str, str]], set[tuple[str, str]], set[tuple[str, str]]]:
    """(ready with figures, unready, missing figures, ignored) as upstream's ``groupPods``."""
    ready: set[tuple[str, str]] = set()
    unready: set[tuple[str, str]] = set()
    missing: set[tuple[str, str]] = set()
    ignored: set[tuple[str, str]] = set()
    for pod in pods:
        key, phase = _key(pod), (pod.get("status") or {}).get("phase")
        if pod["metadata"].get("deletionTimestamp") or phase == "Failed":
            ignored.add(key)
        elif phase == "Pending":
            unready.add(key)
        elif figures.get(key) is None:
            missing.add(key)
        elif resource == "cpu" and _cpu_unready(pod, usage[key], now):
            unready.add(key)
        else:
            ready.add(key)
    return ready, unready, missing, ignored


def _cpu_unready(pod: Obj, figures: PodUsage, now: datetime) -> bool:
    condition = pod_condition(pod, POD_READY)
    started = parse_time((pod.get("status") or {}).get("startTime"))
    if condition is None or started is None:
        return True
    changed = parse_time(condition.get("lastTransitionTime")) or started
    if started + CPU_INITIALIZATION_PERIOD > now:
        return condition.get("status") == "False" or figures.timestamp < changed + timedelta(seconds=figures.window_s)
    return condition.get("status") == "False" and started + INITIAL_READINESS_DELAY > changed


def _usage_milli(found: PodUsage, resource: str, container: str | None) -> int | None:
    """The pod's usage as a milli-value (cores × 1000, bytes × 1000), or None for a
    ContainerResource metric whose container has no figures."""
    containers = [c for c in found.containers if container is None or c.name == container]
    if not containers:
        return None
    if resource == "cpu":
        return sum(c.cpu_nanocores for c in containers) // 1_000_000
    return sum(c.memory_bytes for c in containers) * 1000


def _request_milli(pod: Obj, resource: str, container: str | None) -> int:
    """The pod's request of ``resource`` (milli-value); MetricError naming the first
    container without one, as upstream's ``calculatePodRequests``."""
    total = 0
    for spec in (pod.get("spec") or {}).get("containers") or []:
        if container is not None and spec.get("name") != container:
            continue
        request = ((spec.get("resources") or {}).get("requests") or {}).get(resource)
        if request is None:
            raise MetricError(f"missing request for {resource} in container {spec.get('name')} of Pod "
                              f"{pod['metadata']['name']}")
        total += milli_value(request)
    return total


def _key(pod: Mapping[str, Any]) -> tuple[str, str]:
    meta = pod.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")
