"""DefaultPreemption: when a pod fits nowhere, evict lower-priority pods from one node so
it fits there next time (kube-scheduler 1.33's PostFilter plugin).

The search itself is the evaluator's (preemption.py); this module is the policy: a pod
with ``preemptionPolicy: Never`` or one whose earlier victims are still terminating does
not preempt; a node's victims are its lower-priority pods minus every one that can stay
(the most important reprieved first, PodDisruptionBudget-protected ones before others);
and the dry run stops after ``max(minCandidateNodesPercentage % of the nodes,
minCandidateNodesAbsolute)`` candidates, starting at a random node.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from fakekube.objects.pods import DISRUPTION_TARGET
from fakekube.scheduler.framework import (
    ASSIGNED_POD, Action, ClusterEvent, Code, CycleState, EventHint, Hint, NodeInfo, PodInfo, Status, error,
    unresolvable,
)
from fakekube.scheduler.plugins.preemption import (
    PREEMPTION_BY_SCHEDULER, Budget, Evaluator, importance_key,
)

if TYPE_CHECKING:
    from fakekube.scheduler.runtime import Framework, Handle

NAME = "DefaultPreemption"
#: Every message the plugin returns starts so (PostFilter wraps the evaluator's).
MESSAGE_PREFIX = "preemption: "
ERR_PREEMPTION_POLICY_NEVER = "not eligible due to preemptionPolicy=Never."
ERR_TERMINATING_ON_NOMINATED = "not eligible due to a terminating pod on the nominated node."
ERR_NO_VICTIMS = "No preemption victims found for incoming pod"
PREEMPT_NEVER = "Never"

#: DefaultPreemptionArgs' defaults (pkg/scheduler/apis/config/v1/defaults.go).
DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100


class DefaultPreemption:
    name = NAME

    def __init__(self, handle: "Handle", args: Mapping[str, Any]) -> None:
        self.handle = handle
        self.min_candidate_nodes_percentage, self.min_candidate_nodes_absolute = validate_args(args)
        self.evaluator = Evaluator(NAME, handle, self)

    # -- PostFilter ----------------------------------------------------------------------
    def post_filter(self, state: CycleState, info: PodInfo,
                    statuses: Mapping[str, Status]) -> tuple[str | None, Status]:
        """See Evaluator.preempt; every non-empty message gets the "preemption: " prefix."""
        nominated, status = self.evaluator.preempt(state, info, statuses)
        if status.message:
            status = Status(status.code, (MESSAGE_PREFIX + status.message,), NAME)
        return nominated, status

    def events_to_register(self) -> list[EventHint]:
        """As upstream with asynchronous preemption on (1.33's default): an assigned pod's
        deletion, always skipped — the plugins whose rejection preemption resolves decide
        when the pod retries. (Preemption's API calls finish inside PostFilter here, so
        upstream's PreEnqueue gate "waiting for the preemption for this pod to be
        finished" never holds a pod and is left out.)"""
        return [EventHint(ClusterEvent(ASSIGNED_POD, Action.DELETE), _always_skip)]

    # -- the policy the evaluator asks ----------------------------------------------------
    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        """A random start in the potential nodes (the reconcile's seeded stream) and how
        many candidates to find."""
        return self.handle.ctx.rng.randrange(0, num_nodes), self.num_candidates(num_nodes)

    def num_candidates(self, num_nodes: int) -> int:
        """calculateNumCandidates: the percentage of the nodes (rounded down), at least the
        absolute number, at most every node."""
        wanted = max(num_nodes * self.min_candidate_nodes_percentage // 100, self.min_candidate_nodes_absolute)
        return min(wanted, num_nodes)

    def pod_eligible_to_preempt_others(self, pod: Mapping[str, Any], nominated_status: Status) -> tuple[bool, str]:
        """PodEligibleToPreemptOthers: not with preemptionPolicy Never; not while a
        lower-priority pod on the node it is nominated to is still terminating because the
        scheduler preempted it (its earlier preemption is still under way) — unless Filter
        now finds that node Unresolvable, when it may look elsewhere."""
        spec = pod.get("spec") or {}
        if spec.get("preemptionPolicy") == PREEMPT_NEVER:
            return False, ERR_PREEMPTION_POLICY_NEVER
        nominated = (pod.get("status") or {}).get("nominatedNodeName") or ""
        if not nominated or nominated_status.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            return True, ""
        node = self.handle.snapshot.get(nominated)
        priority = spec.get("priority") or 0
        if node is not None and any(other.priority < priority and terminating_by_preemption(other.pod)
                                    for other in node.pods.values()):
            return False, ERR_TERMINATING_ON_NOMINATED
        return True, ""

    def select_victims_on_node(self, state: CycleState, info: PodInfo, node: NodeInfo,
                               budgets: Sequence[Budget]) -> tuple[list[PodInfo], int, Status | None]:
        """SelectVictimsOnNode on a copy of the node and state: take away every
        lower-priority pod; if the preemptor still does not fit, this node cannot help.
        Otherwise put pods back, most important first — those whose eviction would violate
        a budget before the rest — keeping each that leaves the preemptor fitting. What
        cannot come back are the victims, most important first, with how many of them
        violate a budget."""
        framework = self.framework
        potential = [other for other in node.pods.values() if other.priority < info.priority]
        for other in potential:
            failed = self._remove(state, info, other, node)
            if failed is not None:
                return [], 0, failed
        if not potential:
            return [], 0, unresolvable(NAME, ERR_NO_VICTIMS)
        status = framework.run_filters_with_nominated(state, info, node)
        if status is not None:
            return [], 0, status
        key = importance_key(self.handle.ctx.now)
        potential.sort(key=key)
        violating, respecting = split_by_budget_violation(potential, budgets)
        victims: list[PodInfo] = []
        violations = 0
        for group in (violating, respecting):
            for other in group:
                fits, failed = self._reprieve(state, info, other, node)
                if failed is not None:
                    return [], 0, failed
                if not fits:
                    victims.append(other)
                    if group is violating:
                        violations += 1
        if violating and respecting:
            victims.sort(key=key)
        return victims, violations, None

    # -- what-ifs on the copied node ------------------------------------------------------
    @property
    def framework(self) -> "Framework":
        assert self.handle.framework is not None, "DefaultPreemption runs inside a framework"
        return self.handle.framework

    def _remove(self, state: CycleState, info: PodInfo, other: PodInfo, node: NodeInfo) -> Status | None:
        node.remove_pod(other.key)
        return _as_error(self.framework.run_remove_pod(state, info, other, node))

    def _reprieve(self, state: CycleState, info: PodInfo, other: PodInfo,
                  node: NodeInfo) -> tuple[bool, Status | None]:
        """Put ``other`` back; if the preemptor no longer fits, take it away again."""
        node.add_pod(other)
        failed = _as_error(self.framework.run_add_pod(state, info, other, node))
        if failed is not None:
            return False, failed
        if self.framework.run_filters_with_nominated(state, info, node) is None:
            return True, None
        return False, self._remove(state, info, other, node)


def validate_args(args: Mapping[str, Any]) -> tuple[int, int]:
    """DefaultPreemptionArgs (defaulted as upstream), checked as ValidateDefaultPreemptionArgs;
    ValueError with upstream's field errors otherwise."""
    percentage = args.get("minCandidateNodesPercentage", DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE)
    absolute = args.get("minCandidateNodesAbsolute", DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE)
    for field, value in (("minCandidateNodesPercentage", percentage), ("minCandidateNodesAbsolute", absolute)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{field}: Invalid value: {value!r}: must be an integer")
    problems = []
    if not 0 <= percentage <= 100:
        problems.append(f"minCandidateNodesPercentage: Invalid value: {percentage}: not in valid range [0, 100]")
    if absolute < 0:
        problems.append(f"minCandidateNodesAbsolute: Invalid value: {absolute}: not in valid range [0, inf)")
    if percentage == 0 and absolute == 0:
        problems += ["minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as "
                     "minCandidateNodesAbsolute",
                     "minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as "
                     "minCandidateNodesPercentage"]
    if problems:
        raise ValueError(problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]")
    return percentage, absolute


def split_by_budget_violation(pods: Sequence[PodInfo],
                              budgets: Sequence[Budget]) -> tuple[list[PodInfo], list[PodInfo]]:
    """filterPodsWithPDBViolation: walking ``pods`` in order, each pod a budget covers uses
    one of its allowed disruptions; a pod that takes any budget below zero is violating.
    (A pod the budget already lists in ``disruptedPods`` costs nothing.) Order is kept."""
    allowed = [budget.disruptions_allowed for budget in budgets]
    violating: list[PodInfo] = []
    respecting: list[PodInfo] = []
    for info in pods:
        violated = False
        if info.labels:  # a pod with no labels matches no budget
            for index, budget in enumerate(budgets):
                if budget.covers(info):
                    allowed[index] -= 1
                    violated = violated or allowed[index] < 0
        (violating if violated else respecting).append(info)
    return violating, respecting


def terminating_by_preemption(pod: Mapping[str, Any]) -> bool:
    """podTerminatingByPreemption: being deleted, and its DisruptionTarget condition (the
    first one) is True with reason PreemptionByScheduler."""
    if not (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == DISRUPTION_TARGET:
            return bool(condition.get("status") == "True" and condition.get("reason") == PREEMPTION_BY_SCHEDULER)
    return False


def _as_error(status: Status | None) -> Status | None:
    """A failed PreFilterExtension call as an internal error (upstream's status.AsError)."""
    return None if status is None else error(NAME, status.message)


def _always_skip(pod: Any, old: Any, new: Any) -> Hint:
    return Hint.SKIP
