"""NodeUnschedulable: a cordoned node (``spec.unschedulable``) takes only pods that
tolerate the ``node.kubernetes.io/unschedulable:NoSchedule`` taint."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from fakekube.objects.taints import NO_SCHEDULE, TAINT_NODE_UNSCHEDULABLE
from fakekube.objects.tolerations import tolerations_tolerate_taint
from fakekube.scheduler.framework import (
    NODE, UNSCHEDULED_POD, Action, ClusterEvent, CycleState, EventHint, Hint, NodeInfo, PodInfo, Status,
    unresolvable,
)

if TYPE_CHECKING:
    from fakekube.scheduler.runtime import Handle

NAME = "NodeUnschedulable"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
_TAINT = {"key": TAINT_NODE_UNSCHEDULABLE, "effect": NO_SCHEDULE}
_REJECTED = unresolvable(NAME, ERR_REASON_UNSCHEDULABLE)


class NodeUnschedulable:
    name = NAME

    def __init__(self, handle: "Handle", args: Mapping[str, Any]) -> None:
        pass

    def filter(self, state: CycleState, info: PodInfo, node: NodeInfo) -> Status | None:
        if not node.unschedulable:
            return None
        if tolerations_tolerate_taint((info.pod.get("spec") or {}).get("tolerations"), _TAINT):
            return None
        return _REJECTED

    def filter_signature(self, state: CycleState, info: PodInfo) -> bool:
        """The verdict reads only whether the pod tolerates the unschedulable taint."""
        return tolerations_tolerate_taint((info.pod.get("spec") or {}).get("tolerations"), _TAINT)

    def events_to_register(self) -> list[EventHint]:
        return [EventHint(ClusterEvent(NODE, Action.ADD | Action.UPDATE_NODE_TAINT), _node_became_schedulable),
                EventHint(ClusterEvent(UNSCHEDULED_POD, Action.UPDATE_POD_TOLERATIONS))]


def _node_became_schedulable(pod: Any, old: Any, new: Any) -> Hint:
    if new is None:
        return Hint.SKIP
    was = bool(((old or {}).get("spec") or {}).get("unschedulable")) if old is not None else True
    now = bool((new.get("spec") or {}).get("unschedulable"))
    return Hint.QUEUE if was and not now else Hint.SKIP
