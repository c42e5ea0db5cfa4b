"""What a pod's status and spec mean to its controllers and the scheduler (upstream podutil).

ReplicaSets count ready and available pods, Deployments wait for availability, PDBs and
taint eviction mark disruption targets, the scheduler sums requests; all of them read
pods through these rules. Sources (Kubernetes 1.33): ``pkg/api/v1/pod/util.go``
(``GetPodCondition``, ``IsPodReady``, ``IsPodAvailable``, ``IsPodTerminal``),
``pkg/controller/controller_utils.go`` (``IsPodActive``) and
``k8s.io/component-helpers/resource`` (``PodRequests``). Time is passed in; pods are
never changed in place.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from fractions import Fraction
from typing import Any, Iterable, Mapping

from fakekube.clock import format_rfc3339, parse_time
from fakekube.objects._json import deep_copy
from fakekube.objects.quantity import parse_quantity

Obj = dict[str, Any]

POD_READY = "Ready"
DISRUPTION_TARGET = "DisruptionTarget"
PHASE_SUCCEEDED = "Succeeded"
PHASE_FAILED = "Failed"
#: An init container with this restartPolicy is a sidecar: it keeps running beside the app containers.
RESTART_POLICY_ALWAYS = "Always"


def is_restartable_init_container(container: Mapping[str, Any]) -> bool:
    """``IsRestartableInitContainer``: an init container with restartPolicy Always, a sidecar."""
    return container.get("restartPolicy") == RESTART_POLICY_ALWAYS


def pod_condition(pod: Mapping[str, Any], condition_type: str) -> Obj | None:
    """``GetPodCondition``: the first status condition of ``condition_type``, or None."""
    conditions = (pod.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c.get("type") == condition_type), None)


def is_pod_ready(pod: Mapping[str, Any]) -> bool:
    """``IsPodReady``: the Ready condition is there and True."""
    condition = pod_condition(pod, POD_READY)
    return condition is not None and condition.get("status") == "True"


def is_pod_available(pod: Mapping[str, Any], min_ready_seconds: int, now: datetime) -> bool:
    """``IsPodAvailable`` as of 1.33: ready, and ready for *more than* ``min_ready_seconds``.

    With ``min_ready_seconds`` 0 a ready pod is available at once. Otherwise the Ready
    condition's lastTransitionTime plus ``min_ready_seconds`` must be strictly before
    ``now`` (1.34 relaxed this to "not after"); a missing transition time never qualifies.
    """
    if not is_pod_ready(pod):
        return False
    if min_ready_seconds == 0:
        return True
    condition = pod_condition(pod, POD_READY) or {}
    since = parse_time(condition.get("lastTransitionTime"))
    at = parse_time(now)  # a naive ``now`` is taken as UTC, like wire times
    return since is not None and at is not None and since + timedelta(seconds=min_ready_seconds) < at


def is_pod_terminal(pod: Mapping[str, Any]) -> bool:
    """``IsPodTerminal``: phase Succeeded or Failed; such a pod never runs again."""
    return (pod.get("status") or {}).get("phase") in (PHASE_SUCCEEDED, PHASE_FAILED)


def is_pod_active(pod: Mapping[str, Any]) -> bool:
    """``controller.IsPodActive``: not terminal and not being deleted (what ReplicaSets count)."""
    return not is_pod_terminal(pod) and not (pod.get("metadata") or {}).get("deletionTimestamp")


def with_disruption_target(pod: Mapping[str, Any], now: datetime, reason: str, message: str,
                           fail: bool = False) -> Obj:
    """A copy of ``pod`` with the DisruptionTarget condition a controller sets before deleting it.

    Any earlier DisruptionTarget condition is replaced. With ``fail`` (PodGC), the phase
    also becomes Failed unless the pod already finished.
    """
    updated: Obj = deep_copy(dict(pod))
    status = updated.setdefault("status", {})
    if fail and status.get("phase") not in (PHASE_SUCCEEDED, PHASE_FAILED):
        status["phase"] = PHASE_FAILED
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != DISRUPTION_TARGET]
    conditions.append({"type": DISRUPTION_TARGET, "status": "True", "lastProbeTime": None,
                       "lastTransitionTime": format_rfc3339(now), "reason": reason, "message": message})
    status["conditions"] = conditions
    return updated


def update_pod_condition(pod: Mapping[str, Any], condition: Mapping[str, Any], now: datetime) -> Obj | None:
    """``podutil.UpdatePodCondition``: a copy of ``pod`` with ``condition`` set, or None when
    the pod already has it unchanged (so the caller skips the write).

    An existing condition of that type is replaced where it stands; its lastTransitionTime
    is kept when the status did not change, else it becomes ``now``. A new one is appended.
    """
    conditions = list((pod.get("status") or {}).get("conditions") or [])
    new: Obj = {"type": condition["type"], "status": condition["status"],
                "lastProbeTime": condition.get("lastProbeTime"), "lastTransitionTime": format_rfc3339(now)}
    new.update({key: condition[key] for key in ("reason", "message") if condition.get(key)})  # omitempty
    index = next((i for i, c in enumerate(conditions) if c.get("type") == condition["type"]), None)
    if index is None:
        conditions.append(new)
    else:
        old = conditions[index]
        if old.get("status") == new["status"]:
            new["lastTransitionTime"] = old.get("lastTransitionTime")
        if all((old.get(key) or None) == (new.get(key) or None)
               for key in ("status", "reason", "message", "lastProbeTime", "lastTransitionTime")):
            return None
        conditions[index] = new
    return dict(pod, status=dict(pod.get("status") or {}, conditions=conditions))


ResourceList = dict[str, Fraction]


def _requests(container: Mapping[str, Any]) -> ResourceList:
    requests = (container.get("resources") or {}).get("requests") or {}
    return {name: parse_quantity(value) for name, value in requests.items()}


def _add(total: ResourceList, more: Mapping[str, Fraction]) -> None:
    for name, value in more.items():
        total[name] = total.get(name, Fraction(0)) + value


def _take_max(total: ResourceList, other: Mapping[str, Fraction]) -> None:
    for name, value in other.items():
        if name not in total or value > total[name]:
            total[name] = value


def pod_requests(pod: Mapping[str, Any], include_overhead: bool = True) -> ResourceList:
    """``PodRequests`` from the spec: what the scheduler reserves for ``pod``, per resource.

    The sum over app containers and sidecars (init containers with restartPolicy Always),
    raised to what any init container needs while it runs (itself plus the sidecars
    started before it), plus ``spec.overhead``. Quantities are exact; a resource nobody
    requests is absent. Pod-level ``spec.resources`` (alpha in 1.33) is not applied.
    Raises :class:`ValueError` for a quantity that does not parse.
    """
    spec = pod.get("spec") or {}
    total: ResourceList = {}
    for container in spec.get("containers") or []:
        _add(total, _requests(container))
    sidecars: ResourceList = {}
    init_peak: ResourceList = {}
    for container in spec.get("initContainers") or []:
        requests = _requests(container)
        if is_restartable_init_container(container):
            _add(total, requests)
            _add(sidecars, requests)
            running = dict(sidecars)
        else:
            running = dict(requests)
            _add(running, sidecars)
        _take_max(init_peak, running)
    _take_max(total, init_peak)
    if include_overhead:
        _add(total, {name: parse_quantity(value) for name, value in (spec.get("overhead") or {}).items()})
    return total


def sum_requests(pods: Iterable[Mapping[str, Any]]) -> ResourceList:
    """The requests of several pods added up (what a node has promised away)."""
    total: ResourceList = {}
    for pod in pods:
        _add(total, pod_requests(pod))
    return total
