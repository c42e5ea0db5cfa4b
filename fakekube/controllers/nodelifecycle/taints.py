"""Which taints the node lifecycle controller puts on a node, and how it changes them.

Two passes, as upstream:
- NoSchedule (doNoScheduleTaintingPass): one taint per condition in a bad state
  (Ready False → not-ready, Ready Unknown → unreachable, MemoryPressure / DiskPressure /
  PIDPressure / NetworkUnavailable True → the matching key) plus ``unschedulable`` for a
  cordoned node; applied as a diff against the controller-owned NoSchedule taints only.
- NoExecute (processTaintBaseEviction + doNoExecuteTaintingPass): not-ready or
  unreachable, mutually exclusive, mirroring Ready; added through the zone's rate-limited
  queue, swapped at once when the other one is already there, removed when Ready is True.
Every taint the controller adds carries ``timeAdded`` (upstream SwapNodeControllerTaint
stamps NoSchedule ones too). Source checked: kubernetes/kubernetes
pkg/controller/nodelifecycle/node_lifecycle_controller.go, pkg/controller/util/node.
"""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

from fakekube.clock import format_rfc3339
from fakekube.controllers.nodelifecycle.health import (
    DISK_PRESSURE, MEMORY_PRESSURE, NETWORK_UNAVAILABLE, PID_PRESSURE, READY,
)
from fakekube.objects.taints import (
    NO_EXECUTE, NO_SCHEDULE, TAINT_NODE_DISK_PRESSURE, TAINT_NODE_MEMORY_PRESSURE, TAINT_NODE_NETWORK_UNAVAILABLE,
    TAINT_NODE_NOT_READY, TAINT_NODE_PID_PRESSURE, TAINT_NODE_UNREACHABLE, TAINT_NODE_UNSCHEDULABLE, match_taint,
    taint_diff, taint_exists,
)

# The keys and effects are the well-known ones of fakekube.objects.taints.
TAINT_NOT_READY = TAINT_NODE_NOT_READY
TAINT_UNREACHABLE = TAINT_NODE_UNREACHABLE
TAINT_UNSCHEDULABLE = TAINT_NODE_UNSCHEDULABLE

#: (condition type, status) → taint key; upstream's nodeConditionToTaintKeyStatusMap.
CONDITION_TAINT_KEYS: Mapping[tuple[str, str], str] = {
    (READY, "False"): TAINT_NOT_READY,
    (READY, "Unknown"): TAINT_UNREACHABLE,
    (MEMORY_PRESSURE, "True"): TAINT_NODE_MEMORY_PRESSURE,
    (DISK_PRESSURE, "True"): TAINT_NODE_DISK_PRESSURE,
    (NETWORK_UNAVAILABLE, "True"): TAINT_NODE_NETWORK_UNAVAILABLE,
    (PID_PRESSURE, "True"): TAINT_NODE_PID_PRESSURE,
}

#: NoSchedule keys this controller owns; any other NoSchedule taint is the user's.
CONTROLLER_NOSCHEDULE_KEYS = frozenset(CONDITION_TAINT_KEYS.values()) | {TAINT_UNSCHEDULABLE}

NOT_READY_NOEXECUTE: Mapping[str, str] = {"key": TAINT_NOT_READY, "effect": NO_EXECUTE}
UNREACHABLE_NOEXECUTE: Mapping[str, str] = {"key": TAINT_UNREACHABLE, "effect": NO_EXECUTE}

#: How long the tainting pass waits before retrying a node without a Ready condition.
RETRY_MISSING_READY_S = 0.05

Taint = dict[str, Any]


def desired_noschedule_taints(node: Mapping[str, Any]) -> list[Taint]:
    """The NoSchedule taints the node's conditions and cordon call for, in condition order."""
    taints = []
    for condition in node.get("status", {}).get("conditions") or []:
        key = CONDITION_TAINT_KEYS.get((condition.get("type"), condition.get("status")))
        if key is not None:
            taints.append({"key": key, "effect": NO_SCHEDULE})
    if node.get("spec", {}).get("unschedulable"):
        taints.append({"key": TAINT_UNSCHEDULABLE, "effect": NO_SCHEDULE})
    return taints


def controller_noschedule_taints(taints: Iterable[Mapping[str, Any]] | None) -> list[Mapping[str, Any]]:
    """The node's NoSchedule taints this controller owns (the only ones it may remove)."""
    return [t for t in taints or () if t.get("effect") == NO_SCHEDULE and t.get("key") in CONTROLLER_NOSCHEDULE_KEYS]


def noschedule_diff(node: Mapping[str, Any]) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """What the NoSchedule pass changes on ``node``: (to add, to remove)."""
    current = controller_noschedule_taints(node.get("spec", {}).get("taints"))
    return taint_diff(desired_noschedule_taints(node), current)


def swap_taints(
    taints: Sequence[Mapping[str, Any]] | None,
    to_add: Sequence[Mapping[str, Any]],
    to_remove: Sequence[Mapping[str, Any]],
    now: datetime,
) -> list[Taint]:
    """The node's taints after upstream SwapNodeControllerTaint at ``now``.

    Added taints get ``timeAdded: now`` and replace a taint with the same key and effect
    in place (AddOrUpdateTaint) or go last; removed ones go by key and effect.
    """
    result = [dict(t) for t in taints or ()]
    stamp = format_rfc3339(now)
    for taint in to_add:
        stamped = {**taint, "timeAdded": stamp}
        index = next((i for i, t in enumerate(result) if match_taint(t, stamped)), None)
        if index is None:
            result.append(stamped)
        else:
            result[index] = stamped
    return [t for t in result if not taint_exists(to_remove, t)]


class NoExecuteAction(Enum):
    """What the monitor pass does about a node's NoExecute taint, from its observed Ready."""

    SWAP_NOW = "SwapNow"            # the opposite taint is on: replace it without waiting
    QUEUE = "Queue"                 # add the node to its zone's rate-limited tainting queue
    MARK_REACHABLE = "MarkReachable"  # Ready is True: drop both taints, leave the queue
    NONE = "None"                   # no Ready status to act on


class NoExecuteDecision(NamedTuple):
    action: NoExecuteAction
    #: QUEUE only: take the node off the queue first, because the taint its status calls
    #: for is not on the node (so an earlier entry for the other status is stale).
    requeue: bool = False
    to_add: tuple[Mapping[str, str], ...] = ()
    to_remove: tuple[Mapping[str, str], ...] = ()


def noexecute_decision(observed_ready_status: str | None, taints: Sequence[Mapping[str, Any]] | None) -> NoExecuteDecision:
    """Upstream processTaintBaseEviction for a node whose Ready status was ``observed_ready_status``.

    Note upstream acts on the Ready condition as observed *before* this pass's update, so
    the NoExecute taint follows the Unknown mark by one monitor period.
    """
    if observed_ready_status == "True":
        return NoExecuteDecision(NoExecuteAction.MARK_REACHABLE, to_remove=(UNREACHABLE_NOEXECUTE, NOT_READY_NOEXECUTE))
    swap = noexecute_swap_for(observed_ready_status)
    if swap is None:
        return NoExecuteDecision(NoExecuteAction.NONE)
    wanted, opposite = swap
    if taint_exists(taints, opposite):
        return NoExecuteDecision(NoExecuteAction.SWAP_NOW, to_add=(wanted,), to_remove=(opposite,))
    return NoExecuteDecision(NoExecuteAction.QUEUE, requeue=not taint_exists(taints, wanted))


def noexecute_swap_for(ready_status: str | None) -> tuple[Mapping[str, str], Mapping[str, str]] | None:
    """(taint to add, opposite taint to remove) for a Ready status, None when it is True or absent.

    This is also the tainting pass's action on a dequeued node: None for a node whose Ready
    is True means "ready again, done"; a node with no Ready condition is retried after
    RETRY_MISSING_READY_S.
    """
    if ready_status == "False":
        return NOT_READY_NOEXECUTE, UNREACHABLE_NOEXECUTE
    if ready_status == "Unknown":
        return UNREACHABLE_NOEXECUTE, NOT_READY_NOEXECUTE
    return None

