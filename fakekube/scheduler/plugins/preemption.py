"""The preemption evaluator a preemption PostFilter plugin runs (upstream's
``pkg/scheduler/framework/preemption``, kube-scheduler 1.33).

When a pod fits nowhere, the evaluator asks, node by node, "would it fit if some
lower-priority pods were gone?" on copies of the node and the cycle state (the dry run),
keeps the nodes where the answer is yes (candidates, each with its victims), picks the
best one by upstream's criteria and evicts its victims: each gets the DisruptionTarget
condition, is deleted with its own grace period, and a ``Preempted`` event (events.k8s.io,
action Preempting, the preemptor as related object). The plugin
supplies the policy — who may preempt, which victims a node needs, how many nodes to try
(upstream's ``preemption.Interface``); see defaultpreemption.py.

Deterministic where upstream is not: nodes are tried one after another (upstream runs
them in parallel and keeps whichever finish first), ties between candidates go to the
one found first (upstream ranges over a map), and the random offset comes from the
reconcile's seeded stream.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, NamedTuple, Protocol, Sequence

from fakekube.api.machinery.errors import ApiError
from fakekube.clock import parse_time
from fakekube.objects.kinds import POD_DISRUPTION_BUDGETS, PODS
from fakekube.objects.labels import LabelMatcher, compile_selector
from fakekube.objects.pods import DISRUPTION_TARGET, update_pod_condition
from fakekube.scheduler.framework import Code, CycleState, NodeInfo, PodInfo, Status, error

if TYPE_CHECKING:
    from fakekube.scheduler.runtime import Framework, Handle

Obj = dict[str, Any]

#: framework.NoNodeAvailableMsg, the head of every FitError message.
NO_NODE_AVAILABLE_MSG = "0/{} nodes are available"
#: The status of every node the dry run did not look at when no candidate was found.
PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"
ERR_NO_NODES = "no nodes available"
ERR_NO_CANDIDATE = "no candidate node for preemption"
ERR_NO_VICTIMS_ON_NODE = 'expected at least one victim pod on node "{}"'
#: The victim's event and condition (v1.PodReasonPreemptionByScheduler).
PREEMPTED_REASON = "Preempted"
PREEMPTING_ACTION = "Preempting"
PREEMPTED_MESSAGE = "Preempted by pod {uid} on node {node}"
PREEMPTION_BY_SCHEDULER = "PreemptionByScheduler"
PREEMPTION_CONDITION_MESSAGE = "{scheduler}: preempting to accommodate a higher priority pod"

#: What a node missing from Filter's statuses counts as (NewDefaultNodeToStatus's absent status).
ABSENT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)

#: Added to every priority before summing victims' priorities (upstream's MaxInt32+1), so a
#: few negative-priority victims never look cheaper than fewer of them.
_PRIORITY_OFFSET = 2**31


class Budget(NamedTuple):
    """A PodDisruptionBudget as preemption reads it: the pods it covers and how many of
    them may still be disrupted (``status.disruptionsAllowed``)."""

    namespace: str
    selector: LabelMatcher | None
    disruptions_allowed: int
    disrupted_pods: frozenset[str]

    @classmethod
    def from_pdb(cls, pdb: Mapping[str, Any]) -> "Budget":
        meta, spec, status = pdb.get("metadata") or {}, pdb.get("spec") or {}, pdb.get("status") or {}
        try:
            matcher: LabelMatcher | None = compile_selector(spec.get("selector"))
        except ValueError:  # an invalid selector matches no pod
            matcher = None
        if matcher is not None and (matcher.nothing or matcher.everything):
            matcher = None  # "A PDB with a nil or empty selector matches nothing."
        return cls(meta.get("namespace") or "", matcher, int(status.get("disruptionsAllowed") or 0),
                   frozenset(status.get("disruptedPods") or {}))

    def covers(self, info: PodInfo) -> bool:
        return (self.selector is not None and info.namespace == self.namespace
                and self.selector.matches(info.labels) and info.name not in self.disrupted_pods)


class Candidate:
    """A node where the preemptor fits once ``victims`` (most important first) are gone."""

    __slots__ = ("name", "victims", "pdb_violations")

    def __init__(self, name: str, victims: list[PodInfo], pdb_violations: int) -> None:
        self.name = name
        self.victims = victims
        self.pdb_violations = pdb_violations


class PreemptionPolicy(Protocol):
    """What a preemption plugin decides (upstream's ``preemption.Interface``)."""

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        """Where in the potential nodes the dry run starts, and how many candidates suffice."""

    def pod_eligible_to_preempt_others(self, pod: Obj, nominated_status: Status) -> tuple[bool, str]:
        """May ``pod`` preempt at all? (False, why) when not. ``nominated_status`` is what
        Filter said of the pod's nominated node (ABSENT when it has none or was not seen)."""

    def select_victims_on_node(self, state: CycleState, info: PodInfo, node: NodeInfo,
                               budgets: Sequence[Budget]) -> tuple[list[PodInfo], int, Status | None]:
        """The fewest pods to evict from ``node`` (a copy) so ``info`` fits, with how many of
        them violate a budget; or the status saying why no eviction helps."""


def start_time(pod: Mapping[str, Any], now: datetime) -> datetime:
    """util.GetPodStartTime: ``status.startTime``, or now for a pod that has not started."""
    return parse_time((pod.get("status") or {}).get("startTime")) or now


def importance_key(now: datetime) -> Callable[[PodInfo], tuple[int, datetime]]:
    """A sort key putting the more important pod first (util.MoreImportantPod): higher
    priority, then the one running longer. Python's sort is stable, so equal pods keep
    the node's order (upstream's sort.Slice leaves their order unspecified)."""
    return lambda info: (-info.priority, start_time(info.pod, now))


class Evaluator:
    """Runs one preemption attempt for a PostFilter plugin (upstream's ``Evaluator.Preempt``)."""

    def __init__(self, plugin_name: str, handle: "Handle", policy: PreemptionPolicy) -> None:
        self.plugin_name = plugin_name
        self.handle = handle
        self.policy = policy

    @property
    def framework(self) -> "Framework":
        assert self.handle.framework is not None, "the evaluator runs inside a framework"
        return self.handle.framework

    def preempt(self, state: CycleState, info: PodInfo,
                statuses: Mapping[str, Status]) -> tuple[str | None, Status]:
        """(node name, SUCCESS) after evicting that node's victims; ("", UNSCHEDULABLE with a
        FitError message) when no node would do — the empty name clears the pod's
        nomination, as upstream's result; (None, status) when the pod may not preempt now."""
        ctx = self.handle.ctx
        pod = ctx.get(PODS, info.name, info.namespace)  # the latest version (its nomination)
        if pod is None:
            return None, error(self.plugin_name, f'pods "{info.name}" not found')
        nominated = (pod.get("status") or {}).get("nominatedNodeName") or ""
        eligible, why = self.policy.pod_eligible_to_preempt_others(pod, statuses.get(nominated, ABSENT))
        if not eligible:
            return None, Status(Code.UNSCHEDULABLE, (why,), self.plugin_name)
        all_nodes = self.handle.snapshot.node_infos()
        if not all_nodes:
            return None, error(self.plugin_name, ERR_NO_NODES)
        candidates, node_statuses, errors = self.find_candidates(state, info, all_nodes, statuses)
        if not candidates:
            if errors:
                return None, error(self.plugin_name, aggregate(errors))
            message = fit_error_message(len(all_nodes), node_statuses.values(), PREEMPTION_NOT_HELPFUL)
            return "", Status(Code.UNSCHEDULABLE, (message,), self.plugin_name)
        best = self.select_candidate(candidates, ctx.now)
        self.prepare_candidate(best, info, pod)
        return best.name, Status(Code.SUCCESS, (), self.plugin_name)

    def find_candidates(self, state: CycleState, info: PodInfo, all_nodes: Sequence[NodeInfo],
                        statuses: Mapping[str, Status]) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        """The dry run over the nodes Filter found Unschedulable (not Unresolvable: evicting
        pods cannot fix those; nodes missing from ``statuses`` count as Unresolvable)."""
        potential = [node for node in all_nodes
                     if (status := statuses.get(node.name)) is not None and status.code == Code.UNSCHEDULABLE]
        if not potential:
            return [], {}, []
        budgets = [Budget.from_pdb(pdb) for pdb in self.handle.ctx.list(POD_DISRUPTION_BUDGETS)]
        offset, wanted = self.policy.get_offset_and_num_candidates(len(potential))
        return self.dry_run(state, info, potential, budgets, offset, wanted)

    def dry_run(self, state: CycleState, info: PodInfo, potential: Sequence[NodeInfo], budgets: Sequence[Budget],
                offset: int, wanted: int) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        """Try the nodes from ``offset`` round the list until ``wanted`` candidates are found
        with at least one that violates no budget (upstream's DryRunPreemption). Returns
        the candidates (budget-respecting ones first), each failed node's status, and the
        internal errors met."""
        clean: list[Candidate] = []
        violating: list[Candidate] = []
        node_statuses: dict[str, Status] = {}
        errors: list[str] = []
        for index in range(len(potential)):
            node = potential[(offset + index) % len(potential)].clone()
            victims, violations, status = self.policy.select_victims_on_node(state.clone(), info, node, budgets)
            if status is None and victims:
                kept = clean if violations == 0 else violating
                if len(kept) < wanted:  # upstream's candidate lists hold at most ``wanted`` each
                    kept.append(Candidate(node.name, victims, violations))
                if clean and len(clean) + len(violating) >= wanted:
                    break
                continue
            if status is None:
                status = error(self.plugin_name, ERR_NO_VICTIMS_ON_NODE.format(node.name))
            if status.code == Code.ERROR:
                errors.append(status.message)
            node_statuses[node.name] = status
        return clean + violating, node_statuses, errors

    def select_candidate(self, candidates: Sequence[Candidate], now: datetime) -> Candidate:
        """The best candidate (upstream's SelectCandidate with no extenders)."""
        if len(candidates) == 1:
            return candidates[0]
        return pick_one_node_for_preemption(candidates, now)

    def prepare_candidate(self, candidate: Candidate, info: PodInfo, preemptor: Obj) -> None:
        """Evict the victims and drop lower-priority nominations to the node, in the order of
        1.33's asynchronous preemption (nominations first, then victims); here the API
        calls finish before PostFilter returns, so the preemptor never waits for them.
        A failed call is skipped, as upstream only logs it."""
        self._clear_lower_nominations(candidate.name, info)
        for victim in candidate.victims:
            self._preempt_pod(candidate.name, preemptor, victim)

    def _clear_lower_nominations(self, node_name: str, info: PodInfo) -> None:
        """getLowerPriorityNominatedPods + ClearNominatedNodeName: pods nominated to this node
        with lower priority may no longer fit there; clearing them sends them back to try
        elsewhere sooner."""
        ctx = self.handle.ctx
        for other in _nominated_to(self.handle, node_name):
            if other.priority >= info.priority:
                continue
            current = ctx.get(PODS, other.name, other.namespace)
            if current is None or not (current.get("status") or {}).get("nominatedNodeName"):
                continue
            try:
                ctx.client.patch(PODS, other.name, {"status": {"nominatedNodeName": None}}, other.namespace,
                                 subresource="status")
            except ApiError:
                continue

    def _preempt_pod(self, node_name: str, preemptor: Obj, victim: PodInfo) -> None:
        """Upstream's PreemptPod: the DisruptionTarget condition (when not already there),
        a delete with the pod's own grace period, and the Preempted event."""
        ctx = self.handle.ctx
        current = ctx.get(PODS, victim.name, victim.namespace)
        if current is None or (current.get("metadata") or {}).get("uid") != victim.uid:
            return  # already gone: upstream's NotFound
        scheduler = (preemptor.get("spec") or {}).get("schedulerName") or self.handle.profile.scheduler_name
        condition = {"type": DISRUPTION_TARGET, "status": "True", "reason": PREEMPTION_BY_SCHEDULER,
                     "message": PREEMPTION_CONDITION_MESSAGE.format(scheduler=scheduler)}
        try:
            updated = update_pod_condition(current, condition, ctx.now)
            if updated is not None:
                ctx.client.update_status(PODS, updated)
            ctx.client.delete(PODS, victim.name, victim.namespace)
        except ApiError:
            return
        # About the victim as the scheduler saw it (upstream's event references the cached pod).
        note = PREEMPTED_MESSAGE.format(uid=(preemptor.get("metadata") or {}).get("uid") or "", node=node_name)
        ctx.record_eventf(current, "Pod", "Normal", PREEMPTED_REASON, PREEMPTING_ACTION, note,
                          self.handle.profile.scheduler_name, related=preemptor)


def _nominated_to(handle: "Handle", node_name: str) -> list[PodInfo]:
    """Every pod nominated to ``node_name``, as the scheduler's nominator has them."""
    return handle.snapshot.nominated_to(node_name)


def pick_one_node_for_preemption(candidates: Sequence[Candidate], now: datetime) -> Candidate:
    """Upstream's pickOneNodeForPreemption: keep the candidates with the best score under
    each rule in turn until one is left: fewest budget violations, lowest highest-victim
    priority, smallest sum of victim priorities, fewest victims, latest start among the
    highest-priority victims; still tied, the first."""
    rules: list[Callable[[Candidate], Any]] = [
        lambda c: -c.pdb_violations,
        lambda c: -c.victims[0].priority,
        lambda c: -sum(v.priority + _PRIORITY_OFFSET for v in c.victims),
        lambda c: -len(c.victims),
        lambda c: _earliest_top_start(c.victims, now),
    ]
    left = list(candidates)
    for rule in rules:
        scores = [rule(c) for c in left]
        best = max(scores)
        left = [c for c, score in zip(left, scores) if score == best]
        if len(left) == 1:
            break
    return left[0]


def _earliest_top_start(victims: Sequence[PodInfo], now: datetime) -> datetime:
    """util.GetEarliestPodStartTime: the earliest start among the highest-priority victims."""
    top = max(v.priority for v in victims)
    return min(start_time(v.pod, now) for v in victims if v.priority == top)


def fit_error_message(num_all_nodes: int, statuses: Iterable[Status], absent_reason: str) -> str:
    """framework.FitError.Error() with no PreFilter or PostFilter message: "0/N nodes are
    available: " then each reason with how many nodes gave it ("2 Insufficient cpu"),
    sorted as strings and joined with ", ", then ".". Nodes without a status count under
    ``absent_reason``."""
    counts: dict[str, int] = {}
    seen = 0
    for status in statuses:
        seen += 1
        for reason in status.reasons:
            counts[reason] = counts.get(reason, 0) + 1
    if seen < num_all_nodes:
        counts[absent_reason] = counts.get(absent_reason, 0) + num_all_nodes - seen
    message = NO_NODE_AVAILABLE_MSG.format(num_all_nodes) + ":"
    histogram = sorted(f"{count} {reason}" for reason, count in counts.items())
    if histogram:
        message += f" {', '.join(histogram)}."
    return message


def aggregate(messages: Sequence[str]) -> str:
    """utilerrors.NewAggregate(errs).Error(): one message as is, several deduplicated in
    brackets."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"
