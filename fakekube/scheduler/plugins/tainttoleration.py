"""TaintToleration: a node's NoSchedule/NoExecute taints keep out pods that do not
tolerate them (Filter); PreferNoSchedule taints a pod does not tolerate lower the node's
score (fewest is best)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Hashable, Mapping

from fakekube.objects.taints import NO_EXECUTE, NO_SCHEDULE, PREFER_NO_SCHEDULE
from fakekube.objects.tolerations import first_untolerated_taint, tolerations_tolerate_taint
from fakekube.scheduler.framework import (
    NODE, UNSCHEDULED_POD, Action, ClusterEvent, CycleState, EventHint, Hint, NodeInfo, PodInfo, Status,
    unresolvable,
)
from fakekube.scheduler.plugins.helper import default_normalize_score

if TYPE_CHECKING:
    from fakekube.scheduler.runtime import Handle

NAME = "TaintToleration"
_FILTERED_EFFECTS = (NO_SCHEDULE, NO_EXECUTE)


class TaintToleration:
    name = NAME

    def __init__(self, handle: "Handle", args: Mapping[str, Any]) -> None:
        pass

    def filter(self, state: CycleState, info: PodInfo, node: NodeInfo) -> Status | None:
        if not node.taints:
            return None
        taint = first_untolerated_taint(node.taints, _tolerations(info), _FILTERED_EFFECTS)
        if taint is None:
            return None
        return unresolvable(NAME, f"node(s) had untolerated taint {{{taint.get('key', '')}: {taint.get('value', '')}}}")

    def filter_signature(self, state: CycleState, info: PodInfo) -> Hashable:
        """The verdict reads only the pod's tolerations."""
        return _signature(_tolerations(info))

    def pre_score(self, state: CycleState, info: PodInfo, nodes: list[NodeInfo]) -> Status | None:
        state.data[NAME] = [t for t in _tolerations(info) if (t.get("effect") or "") in ("", PREFER_NO_SCHEDULE)]
        return None

    def score(self, state: CycleState, info: PodInfo, node: NodeInfo) -> int:
        if not node.taints:
            return 0
        tolerations = state.data[NAME]
        return sum(1 for taint in node.taints
                   if taint.get("effect") == PREFER_NO_SCHEDULE and not tolerations_tolerate_taint(tolerations, taint))

    def score_signature(self, state: CycleState, info: PodInfo) -> Hashable | None:
        """The raw score reads only the pod's PreferNoSchedule tolerations."""
        tolerations = state.data.get(NAME)
        if tolerations is None:
            return None
        return (NAME, _signature(tolerations))

    def score_nodes(self, state: CycleState, info: PodInfo, nodes: list[NodeInfo]) -> list[int]:
        """``score`` for every node in one call; an untainted node counts 0 without a call."""
        score = self.score
        return [score(state, info, node) if node.taints else 0 for node in nodes]

    def normalize_score(self, state: CycleState, info: PodInfo, scores: list[int]) -> None:
        default_normalize_score(scores, reverse=True)

    def events_to_register(self) -> list[EventHint]:
        return [EventHint(ClusterEvent(NODE, Action.ADD | Action.UPDATE_NODE_TAINT), _taint_now_tolerated),
                EventHint(ClusterEvent(UNSCHEDULED_POD, Action.UPDATE_POD_TOLERATIONS))]


def _signature(tolerations: list[Mapping[str, Any]]) -> Hashable:
    """Tolerations as a hashable value (what the memoized filter and score read of a pod)."""
    return tuple(tuple(sorted((k, str(v)) for k, v in t.items())) for t in tolerations)


def _tolerations(info: PodInfo) -> list[Mapping[str, Any]]:
    return (info.pod.get("spec") or {}).get("tolerations") or []


def _taint_now_tolerated(pod: Any, old: Any, new: Any) -> Hint:
    """Queue when the new node's taints are all tolerated and the old node's were not."""
    if new is None:
        return Hint.SKIP
    tolerations = (pod.get("spec") or {}).get("tolerations") or []

    def fits(node: Any) -> bool:
        taints = (node.get("spec") or {}).get("taints") or []
        return first_untolerated_taint(taints, tolerations, _FILTERED_EFFECTS) is None

    if not fits(new):
        return Hint.SKIP
    return Hint.QUEUE if old is None or not fits(old) else Hint.SKIP
