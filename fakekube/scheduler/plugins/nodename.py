"""NodeName: a pod that names its node (``spec.nodeName``) fits only there."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from fakekube.scheduler.framework import (
    NODE, SKIP, Action, ClusterEvent, CycleState, EventHint, NodeInfo, PodInfo, Status, unresolvable,
)

if TYPE_CHECKING:
    from fakekube.scheduler.runtime import Handle

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"
_REJECTED = unresolvable(NAME, ERR_REASON)


class NodeName:
    name = NAME

    def __init__(self, handle: "Handle", args: Mapping[str, Any]) -> None:
        pass

    def pre_filter(self, state: CycleState, info: PodInfo) -> tuple[set[str] | None, Status | None]:
        """Not upstream's (NodeName has no PreFilter in 1.33): a pod naming no node passes
        every node, so the per-node Filter is skipped; verdicts are unchanged."""
        return None, (None if (info.pod.get("spec") or {}).get("nodeName") else SKIP)

    def filter(self, state: CycleState, info: PodInfo, node: NodeInfo) -> Status | None:
        wanted = (info.pod.get("spec") or {}).get("nodeName")
        return None if not wanted or wanted == node.name else _REJECTED

    def events_to_register(self) -> list[EventHint]:
        return [EventHint(ClusterEvent(NODE, Action.ADD))]
