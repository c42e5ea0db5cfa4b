"""A DaemonSet's RollingUpdate: which old pods go, and on which nodes new ones surge.

Upstream (``rollingUpdate``, ``findUpdatedPodsOnNode``, ``updatedDesiredNodeCounts`` in
``pkg/controller/daemon/update.go``; ``SurgeCount``, ``UnavailableCount``,
``IsPodUpdated`` in ``util/daemonset_util.go``; 1.33):

* without surge, old pods are deleted while fewer than ``maxUnavailable`` daemon nodes
  are unavailable (an old pod that is not available may always go); the core loop then
  creates each replacement once its predecessor is gone;
* with ``maxSurge``, a new pod is created next to an old one on up to ``maxSurge`` nodes
  (at once where the old pod is not available), and the old pod is deleted when the new
  one is available;
* both counts are ints or percents of the nodes that should run the pod, rounded up; 0
  and 0 falls back to ``maxUnavailable`` 1.

Upstream walks a Go map, so which nodes go first is random there; here nodes go in name
order. Pure: the controller makes the deletes and creates this returns.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable, Mapping, NamedTuple, Sequence

from fakekube.objects.constants import LABEL_CONTROLLER_REVISION_HASH, LABEL_DAEMONSET_TEMPLATE_GENERATION
from fakekube.objects.intstr import scaled_value
from fakekube.objects.pods import is_pod_available

Obj = dict[str, Any]

ROLLING_UPDATE = "RollingUpdate"
ON_DELETE = "OnDelete"


def _rolling(ds: Mapping[str, Any]) -> Mapping[str, Any] | None:
    strategy = (ds.get("spec") or {}).get("updateStrategy") or {}
    if strategy.get("type") != ROLLING_UPDATE:
        return None
    return strategy.get("rollingUpdate")


def surge_count(ds: Mapping[str, Any], number_to_schedule: int) -> int:
    """``SurgeCount``: 0 unless a RollingUpdate asks for ``maxSurge`` (int or percent, rounded up)."""
    rolling = _rolling(ds)
    if rolling is None or rolling.get("maxSurge") is None:
        return 0
    return scaled_value(rolling["maxSurge"], number_to_schedule, True)


def unavailable_count(ds: Mapping[str, Any], number_to_schedule: int) -> int:
    """``UnavailableCount``: ``maxUnavailable`` of a RollingUpdate (int or percent, rounded up)."""
    rolling = _rolling(ds)
    if rolling is None:
        return 0
    return scaled_value(rolling.get("maxUnavailable"), number_to_schedule, True)


def allows_surge(ds: Mapping[str, Any]) -> bool:
    """``AllowsSurge``: may a node hold an old and a new pod at once?"""
    try:
        return surge_count(ds, 1) > 0
    except ValueError:
        return False


def is_pod_updated(pod: Mapping[str, Any], hash_: str, template_generation: int | None) -> bool:
    """``IsPodUpdated``: the pod carries the current revision's hash (or, for pods made before
    revisions existed, the current ``pod-template-generation``)."""
    labels = (pod.get("metadata") or {}).get("labels") or {}
    generation_matches = (template_generation is not None
                          and labels.get(LABEL_DAEMONSET_TEMPLATE_GENERATION) == str(template_generation))
    hash_matches = bool(hash_) and labels.get(LABEL_CONTROLLER_REVISION_HASH) == hash_
    return hash_matches or generation_matches


def updated_pods_on_node(pods: Sequence[Obj], hash_: str, template_generation: int | None
                         ) -> tuple[Obj | None, Obj | None, bool]:
    """``findUpdatedPodsOnNode``: (the new pod, the old pod, True) among the node's pods not
    being deleted, or (None, None, False) when there are several of either kind."""
    new = old = None
    for pod in pods:
        if (pod.get("metadata") or {}).get("deletionTimestamp"):
            continue
        if is_pod_updated(pod, hash_, template_generation):
            if new is not None:
                return None, None, False
            new = pod
        else:
            if old is not None:
                return None, None, False
            old = pod
    return new, old, True


class RolloutPlan:
    """What one rolling-update pass does: pods to delete (by name), nodes to create on."""

    __slots__ = ("delete", "create")

    def __init__(self, delete: list[str] | None = None, create: list[str] | None = None) -> None:
        self.delete: list[str] = [] if delete is None else delete
        self.create: list[str] = [] if create is None else create


class RolloutInput(NamedTuple):
    """The facts a rolling-update pass decides on (``node_pods`` holds an entry, maybe
    empty, for every node that should run the pod; name order is the order of decisions)."""

    ds: Mapping[str, Any]
    node_pods: Mapping[str, Sequence[Obj]]
    hash: str
    template_generation: int | None
    now: datetime
    desired: int
    should_run: Callable[[str], bool]

    def available(self, pod: Mapping[str, Any]) -> bool:
        min_ready_s = int((self.ds.get("spec") or {}).get("minReadySeconds") or 0)
        return is_pod_available(pod, min_ready_s, self.now)


def budgets(ds: Mapping[str, Any], desired: int) -> tuple[int, int]:
    """``updatedDesiredNodeCounts``: (maxSurge, maxUnavailable) for ``desired`` nodes, with
    upstream's fallback to maxUnavailable 1 when both come out 0. Raises ValueError for a
    value that is not an int or a percent."""
    max_unavailable = unavailable_count(ds, desired)
    max_surge = surge_count(ds, desired)
    if desired > 0 and max_unavailable == 0 and max_surge == 0:
        max_unavailable = 1
    return max_surge, max_unavailable


def plan_rolling_update(facts: RolloutInput) -> RolloutPlan:
    """``rollingUpdate``'s decisions for one pass."""
    max_surge, max_unavailable = budgets(facts.ds, facts.desired)
    if max_surge == 0:
        return _without_surge(facts, max_unavailable)
    return _with_surge(facts, max_surge)


def _without_surge(facts: RolloutInput, max_unavailable: int) -> RolloutPlan:
    unavailable = 0
    replacements: list[str] = []
    candidates: list[str] = []
    for node in sorted(facts.node_pods):
        new, old, ok = updated_pods_on_node(facts.node_pods[node], facts.hash, facts.template_generation)
        if not ok or (old is None) == (new is None):
            unavailable += 1  # the core loop prunes, creates or deletes here first
        elif new is not None:
            unavailable += 0 if facts.available(new) else 1
        elif old is not None and not facts.available(old):
            replacements.append(old["metadata"]["name"])
            unavailable += 1
        elif old is not None and unavailable < max_unavailable:
            candidates.append(old["metadata"]["name"])
    room = min(max(0, max_unavailable - unavailable), len(candidates))
    return RolloutPlan(delete=replacements + candidates[:room])


def _with_surge(facts: RolloutInput, max_surge: int) -> RolloutPlan:
    plan = RolloutPlan()
    sunset: list[str] = []  # available old pods on nodes that should no longer run one
    candidates: list[str] = []
    surging = available = 0
    for node in sorted(facts.node_pods):
        new, old, ok = updated_pods_on_node(facts.node_pods[node], facts.hash, facts.template_generation)
        if not ok:
            surging += 1  # the core loop prunes the excess first
            continue
        counted = old if old is not None else new
        available += 1 if counted is not None and facts.available(counted) else 0
        if old is None:
            continue
        if new is None:
            if not facts.available(old) and not facts.should_run(node):
                plan.delete.append(old["metadata"]["name"])
            elif not facts.available(old):
                plan.create.append(node)  # replaced at once: it serves nothing now
            elif not facts.should_run(node):
                sunset.append(old["metadata"]["name"])
            elif surging < max_surge:
                candidates.append(node)
        elif not facts.available(new):
            surging += 1
        else:
            plan.delete.append(old["metadata"]["name"])
    # With surge, availability comes first: a pod on a node that left the DaemonSet's
    # reach goes only while more pods are available than nodes want one.
    plan.delete += sunset[:max(0, min(available - facts.desired, len(sunset)))]
    room = min(max(0, max_surge - surging), len(candidates))
    plan.create += candidates[:room]
    return plan
