"""SchedulingGates (PreEnqueue): a pod with ``spec.schedulingGates`` is not tried until
they are all removed (an update of the pod brings it back)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from fakekube.scheduler.framework import (
    UNSCHEDULED_POD, Action, ClusterEvent, EventHint, PodInfo, Status, unresolvable,
)

if TYPE_CHECKING:
    from fakekube.scheduler.runtime import Handle

NAME = "SchedulingGates"


class SchedulingGates:
    name = NAME

    def __init__(self, handle: "Handle", args: Mapping[str, Any]) -> None:
        pass

    def pre_enqueue(self, info: PodInfo) -> Status | None:
        gates = (info.pod.get("spec") or {}).get("schedulingGates") or []
        if not gates:
            return None
        names = [gate.get("name", "") for gate in gates]
        return unresolvable(NAME, f"waiting for scheduling gates: [{' '.join(names)}]")

    def events_to_register(self) -> list[EventHint]:
        return [EventHint(ClusterEvent(UNSCHEDULED_POD, Action.UPDATE_POD_SCHEDULING_GATES_ELIMINATED))]
