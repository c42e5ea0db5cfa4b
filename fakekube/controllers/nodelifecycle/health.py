"""Is a node's status stale? Upstream's tryUpdateNodeHealth, as a pure function.

The controller keeps, per node, when it last saw a sign of life (``probe_timestamp``):
a new Ready heartbeat in the node's status or a newer Lease ``renewTime``. Both are
stamped with the controller's own ``now``, not the kubelet's timestamps, as upstream
does to dodge clock skew. When ``now`` is strictly past probe + grace period, Ready,
MemoryPressure, DiskPressure and PIDPressure go Unknown (NetworkUnavailable is left
alone: the control plane owns it). Source checked: kubernetes/kubernetes
pkg/controller/nodelifecycle/node_lifecycle_controller.go (tryUpdateNodeHealth).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Mapping, NamedTuple, Sequence

from fakekube.clock import format_rfc3339
from fakekube.clock import parse_time
from fakekube.controllers.nodelifecycle.config import NodeLifecycleConfig

READY = "Ready"
MEMORY_PRESSURE = "MemoryPressure"
DISK_PRESSURE = "DiskPressure"
PID_PRESSURE = "PIDPressure"
NETWORK_UNAVAILABLE = "NetworkUnavailable"

#: The conditions a stale node has set to Unknown, in upstream's order.
CONDITIONS_SET_UNKNOWN = (READY, MEMORY_PRESSURE, DISK_PRESSURE, PID_PRESSURE)

REASON_STATUS_UNKNOWN = "NodeStatusUnknown"
MESSAGE_STATUS_UNKNOWN = "Kubelet stopped posting node status."
REASON_NEVER_UPDATED = "NodeStatusNeverUpdated"
MESSAGE_NEVER_UPDATED = "Kubelet never posted node status."

_TIME_FIELDS = ("lastHeartbeatTime", "lastTransitionTime", "lastProbeTime")

Condition = dict[str, Any]


class NodeHealth(NamedTuple):
    """What the controller remembers about a node between passes (upstream nodeHealthData).

    A named tuple: the monitor pass builds one per renewed Lease, every node every 10 s,
    and a frozen dataclass costs five times as much to build.
    """

    probe_timestamp: datetime
    ready_transition_timestamp: datetime
    saved_ready: Mapping[str, Any] | None
    lease_renew_time: datetime | None


class HealthCheck(NamedTuple):
    """The outcome of one health check of one node."""

    #: Bookkeeping to pass back in on the next check of this node.
    health: NodeHealth
    #: The grace period the node got: startup grace until it ever posted Ready.
    grace_period_s: float
    #: Ready as the node had it before this check (a fake Unknown one if it had none).
    observed_ready: Mapping[str, Any]
    #: Ready after this check (None: the node never posted one and is not stale yet).
    current_ready: Mapping[str, Any] | None
    #: The node's new ``status.conditions`` to write, or None when nothing is written.
    new_conditions: list[Condition] | None

    @property
    def became_not_ready(self) -> bool:
        """Ready left True in this check: record NodeNotReady and mark the pods not ready."""
        return condition_status(self.current_ready) != "True" and condition_status(self.observed_ready) == "True"


def find_condition(conditions: Sequence[Mapping[str, Any]] | None, condition_type: str) -> Mapping[str, Any] | None:
    """The first condition of that type, as upstream's GetNodeCondition."""
    for condition in conditions or ():
        if condition.get("type") == condition_type:
            return condition
    return None


def condition_status(condition: Mapping[str, Any] | None) -> str | None:
    return None if condition is None else condition.get("status")


def check_node_health(
    node: Mapping[str, Any],
    lease_renew_time: datetime | None,
    saved: NodeHealth | None,
    now: datetime,
    config: NodeLifecycleConfig,
) -> HealthCheck:
    """Decide whether ``node``'s status is stale at ``now`` and what to write if so."""
    created = parse_time(node.get("metadata", {}).get("creationTimestamp")) or now
    conditions = node.get("status", {}).get("conditions") or []
    current_ready = find_condition(conditions, READY)
    if current_ready is None:
        stamp = format_rfc3339(created)
        observed_ready: Mapping[str, Any] = {
            "type": READY, "status": "Unknown", "lastHeartbeatTime": stamp, "lastTransitionTime": stamp,
        }
        grace_period_s = config.startup_grace_period_s
        health: NodeHealth | None = saved._replace(saved_ready=None) if saved else NodeHealth(created, created, None, None)
    else:
        observed_ready = _copy_condition(current_ready)
        grace_period_s = config.grace_s
        health = saved
    saved_lease = health.lease_renew_time if health else None
    health = _refresh_from_status(health, current_ready, now)
    if lease_renew_time is not None and (saved_lease is None or saved_lease < lease_renew_time):
        health = health._replace(lease_renew_time=lease_renew_time, probe_timestamp=now)
    if now <= health.probe_timestamp + timedelta(seconds=grace_period_s):
        return HealthCheck(health, grace_period_s, observed_ready, current_ready, None)
    new_conditions = unknown_conditions(conditions, created, now)
    new_ready = find_condition(new_conditions, READY)
    if same_condition(new_ready, observed_ready):
        return HealthCheck(health, grace_period_s, observed_ready, new_ready, None)
    written = NodeHealth(health.probe_timestamp, now, _copy_condition(new_ready or {}), lease_renew_time)
    return HealthCheck(written, grace_period_s, observed_ready, new_ready, new_conditions)


def _refresh_from_status(health: NodeHealth | None, current_ready: Mapping[str, Any] | None, now: datetime) -> NodeHealth:
    """Upstream's four cases for a new, appearing, vanishing or heart-beating Ready condition.

    As upstream, a refreshed record starts without its lease; the lease check that
    follows compares against the lease saved before this refresh.
    """
    ready_copy = _copy_condition(current_ready) if current_ready is not None else None
    if health is None:
        return NodeHealth(now, now, ready_copy, None)
    saved_ready = health.saved_ready
    if saved_ready is None and current_ready is not None:
        return NodeHealth(now, now, ready_copy, None)
    if saved_ready is not None and current_ready is None:
        return NodeHealth(now, now, None, None)
    if saved_ready is not None and current_ready is not None and not _same_time(
        saved_ready.get("lastHeartbeatTime"), current_ready.get("lastHeartbeatTime")
    ):
        transitioned = not _same_time(saved_ready.get("lastTransitionTime"), current_ready.get("lastTransitionTime"))
        return NodeHealth(now, now if transitioned else health.ready_transition_timestamp, ready_copy, None)
    return health


def unknown_conditions(conditions: Sequence[Mapping[str, Any]], created: datetime, now: datetime) -> list[Condition]:
    """A stale node's conditions: the four kubelet-owned ones Unknown, others untouched.

    A condition already Unknown keeps its reason and times; a missing one is added as
    NodeStatusNeverUpdated with the creation time as its heartbeat.
    """
    result = [_copy_condition(c) for c in conditions]
    stamp = format_rfc3339(now)
    for condition_type in CONDITIONS_SET_UNKNOWN:
        existing = next((c for c in result if c.get("type") == condition_type), None)
        if existing is None:
            result.append({
                "type": condition_type, "status": "Unknown",
                "lastHeartbeatTime": format_rfc3339(created), "lastTransitionTime": stamp,
                "reason": REASON_NEVER_UPDATED, "message": MESSAGE_NEVER_UPDATED,
            })
        elif existing.get("status") != "Unknown":
            existing.update(status="Unknown", reason=REASON_STATUS_UNKNOWN,
                            message=MESSAGE_STATUS_UNKNOWN, lastTransitionTime=stamp)
    return result


def same_condition(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    """Semantic equality: times compare as instants, absent equals empty."""
    if a is None or b is None:
        return a is b
    for key in set(a) | set(b):
        if key in _TIME_FIELDS:
            if not _same_time(a.get(key), b.get(key)):
                return False
        elif (a.get(key) or None) != (b.get(key) or None):
            return False
    return True


def _same_time(a: Any, b: Any) -> bool:
    return parse_time(a) == parse_time(b)


def pod_conditions_not_ready(pod: Mapping[str, Any], now: datetime) -> list[Condition] | None:
    """The pod's conditions with Ready set False (MarkPodsNotReady), or None if nothing changes.

    As upstream's UpdatePodCondition: reason and message stay, lastTransitionTime moves to
    ``now`` only when the status changes; a pod without a Ready condition is left alone.
    """
    conditions = [_copy_condition(c) for c in pod.get("status", {}).get("conditions") or []]
    ready = next((c for c in conditions if c.get("type") == READY), None)
    if ready is None or ready.get("status") == "False":
        return None
    ready.update(status="False", lastTransitionTime=format_rfc3339(now))
    return conditions


def _copy_condition(condition: Mapping[str, Any]) -> dict[str, Any]:
    """A condition is a flat map of strings (and null times), so a shallow copy is a deep one.

    This runs for every node on every 5 s pass: copy.deepcopy here was a third of the cost.
    """
    return dict(condition)
