"""PodDisruptionBudget rules shared by the disruption controller and the eviction subresource.

Which budgets guard a pod, which pods count as healthy, how many disruptions a budget
allows and the ``DisruptionAllowed`` condition, as kube-controller-manager 1.33's
``pkg/controller/disruption/disruption.go`` (``getPodsForPdb``, ``countHealthyPods``,
``buildDisruptedPodMap``, ``getExpectedPodCount``, ``updatePdbStatus``, ``failSafe``),
``k8s.io/component-helpers/apps/poddisruptionbudget`` (the condition) and the apiserver's
``pkg/registry/core/pod/storage/eviction.go`` (``getPodDisruptionBudgets``) compute them.
Pure: time is passed in, objects are never changed.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Iterable, Mapping, NamedTuple, TypeVar

from fakekube.clock import format_rfc3339, parse_time
from fakekube.objects.conditions import condition, find_condition, set_condition
from fakekube.objects.intstr import is_percent, scaled_value
from fakekube.objects.labels import compile_selector
from fakekube.objects.pods import is_pod_ready

Obj = dict[str, Any]
_Budget = TypeVar("_Budget", bound=Mapping[str, Any])

#: The PDB condition and its reasons (policy/v1).
DISRUPTION_ALLOWED = "DisruptionAllowed"
SUFFICIENT_PODS = "SufficientPods"
INSUFFICIENT_PODS = "InsufficientPods"
SYNC_FAILED = "SyncFailed"
#: ``spec.unhealthyPodEvictionPolicy`` values; unset means IfHealthyBudget.
IF_HEALTHY_BUDGET = "IfHealthyBudget"
ALWAYS_ALLOW = "AlwaysAllow"
#: The cause type a refused eviction names (policyv1.DisruptionBudgetCause).
DISRUPTION_BUDGET_CAUSE = "DisruptionBudget"

#: ``DeletionTimeout``: how long a pod the eviction API let go stays in
#: ``status.disruptedPods`` (counted as already gone) while nobody marks it for deletion.
DELETION_TIMEOUT_S = 120.0


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def pdb_selects(pdb: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """Does ``pdb`` guard ``pod``? Same namespace and the selector matches the pod's labels
    (policy/v1: a nil selector matches nothing, an empty one every pod); a budget whose
    selector does not parse guards nothing."""
    if _meta(pdb).get("namespace") != _meta(pod).get("namespace"):
        return False
    try:
        matcher = compile_selector((pdb.get("spec") or {}).get("selector"))
    except ValueError:
        return False
    return matcher.matches(_meta(pod).get("labels"))


def budgets_for_pod(pdbs: Iterable[_Budget], pod: Mapping[str, Any]) -> list[_Budget]:
    """The budgets among ``pdbs`` that guard ``pod``, in the order given (the eviction
    subresource's ``getPodDisruptionBudgets``)."""
    return [pdb for pdb in pdbs if pdb_selects(pdb, pod)]


def is_healthy(pod: Mapping[str, Any]) -> bool:
    """A pod counts towards a budget while it is Ready (upstream's "IsHealthy")."""
    return is_pod_ready(pod)


def _disrupted_at(disrupted_pods: Mapping[str, Any], name: str) -> datetime | None:
    return parse_time(disrupted_pods.get(name)) if name in disrupted_pods else None


def count_healthy(pods: Iterable[Mapping[str, Any]], disrupted_pods: Mapping[str, Any], now: datetime) -> int:
    """``countHealthyPods``: Ready pods that are neither being deleted nor listed in
    ``disrupted_pods`` (name → disruption time) within the last DeletionTimeout."""
    healthy = 0
    for pod in pods:
        if _meta(pod).get("deletionTimestamp"):
            continue
        since = _disrupted_at(disrupted_pods, _meta(pod).get("name", ""))
        if since is not None and since + timedelta(seconds=DELETION_TIMEOUT_S) > now:
            continue
        if is_healthy(pod):
            healthy += 1
    return healthy


class Disruptions(NamedTuple):
    """``buildDisruptedPodMap``'s answer: the entries to keep, when to look again, and the
    pods whose entry expired without the pod being deleted (each gets a NotDeleted event)."""

    kept: dict[str, str]
    recheck_at: datetime | None
    expired: list[str]


def live_disruptions(pods: Iterable[Mapping[str, Any]], disrupted_pods: Mapping[str, Any] | None,
                     now: datetime) -> Disruptions:
    """Keep a ``status.disruptedPods`` entry while its pod exists, is not being deleted and
    its DeletionTimeout has not run out (an entry expires only once ``now`` is strictly
    after it); entries for pods that are gone or terminating are dropped silently."""
    kept: dict[str, str] = {}
    recheck_at: datetime | None = None
    expired: list[str] = []
    for pod in pods:
        name = _meta(pod).get("name", "")
        if not disrupted_pods or _meta(pod).get("deletionTimestamp") or name not in disrupted_pods:
            continue
        since = _disrupted_at(disrupted_pods, name)
        expected_deletion = (since or now) + timedelta(seconds=DELETION_TIMEOUT_S)
        if expected_deletion < now:
            expired.append(name)
            continue
        if recheck_at is None or expected_deletion < recheck_at:
            recheck_at = expected_deletion
        kept[name] = disrupted_pods[name]
    return Disruptions(kept, recheck_at, expired)


def needs_scale(spec: Mapping[str, Any]) -> bool:
    """Does the budget's arithmetic need the pods' controllers' scale? (``maxUnavailable``
    in any form, or ``minAvailable`` as a percentage; an integer minAvailable does not.)"""
    if spec.get("maxUnavailable") is not None:
        return True
    return is_percent(spec.get("minAvailable"))


def healthy_target(spec: Mapping[str, Any], pod_count: int, scale: int) -> tuple[int, int]:
    """``getExpectedPodCount``: (expectedPods, desiredHealthy) for a budget's ``spec``.

    ``scale`` is the sum of the pods' controllers' scale (used when :func:`needs_scale`);
    an integer ``minAvailable`` expects the ``pod_count`` matching pods. Percentages round
    up. Raises :class:`ValueError` for a value that does not parse.
    """
    max_unavailable = spec.get("maxUnavailable")
    min_available = spec.get("minAvailable")
    if max_unavailable is not None:
        unavailable = scaled_value(max_unavailable, scale, round_up=True)
        return scale, max(0, scale - unavailable)
    if min_available is None:
        return 0, 0
    if not is_percent(min_available):
        return pod_count, scaled_value(min_available, pod_count, round_up=True)
    return scale, scaled_value(min_available, scale, round_up=True)


def disruptions_allowed(current_healthy: int, desired_healthy: int, expected_pods: int) -> int:
    """``updatePdbStatus``: healthy pods beyond the desired ones, and none while the budget
    expects no pods (a budget whose first pods just appeared is safe until counted)."""
    allowed = current_healthy - desired_healthy
    return 0 if expected_pods <= 0 or allowed <= 0 else allowed


def pdb_status(current_healthy: int, desired_healthy: int, expected_pods: int, allowed: int,
               disrupted_pods: Mapping[str, str], observed_generation: int,
               conditions: Iterable[Mapping[str, Any]] | None) -> Obj:
    """A ``PodDisruptionBudgetStatus`` in Go's field order (omitempty fields left out)."""
    status: Obj = {}
    if observed_generation:
        status["observedGeneration"] = observed_generation
    if disrupted_pods:
        status["disruptedPods"] = dict(sorted(disrupted_pods.items()))
    status.update(disruptionsAllowed=allowed, currentHealthy=current_healthy, desiredHealthy=desired_healthy,
                  expectedPods=expected_pods)
    if conditions:
        status["conditions"] = [dict(c) for c in conditions]
    return status


def with_allowed_condition(status: Mapping[str, Any], now: datetime) -> Obj:
    """``UpdateDisruptionAllowedCondition``: the status with DisruptionAllowed True
    (SufficientPods) when disruptions are allowed, else False (InsufficientPods), carrying
    the status's observedGeneration."""
    allowed = (status.get("disruptionsAllowed") or 0) > 0
    new = condition(DISRUPTION_ALLOWED, "True" if allowed else "False",
                    SUFFICIENT_PODS if allowed else INSUFFICIENT_PODS,
                    observed_generation=status.get("observedGeneration") or 0)
    conditions, _ = set_condition(status.get("conditions"), new, now)
    return {**status, "conditions": conditions}


def with_sync_failed(status: Mapping[str, Any], message: str, now: datetime) -> Obj:
    """``failSafe``: no disruptions allowed, DisruptionAllowed False with reason SyncFailed
    and the error as its message (the rest of the status is kept)."""
    new = condition(DISRUPTION_ALLOWED, "False", SYNC_FAILED, message,
                    observed_generation=status.get("observedGeneration") or 0)
    conditions, _ = set_condition(status.get("conditions"), new, now)
    return {**status, "disruptionsAllowed": 0, "conditions": conditions}


def conditions_up_to_date(pdb: Mapping[str, Any]) -> bool:
    """``ConditionsAreUpToDate``: the condition is there, the status observed the current
    generation, and status/reason agree with ``disruptionsAllowed``."""
    status = pdb.get("status") or {}
    found = find_condition(status.get("conditions"), DISRUPTION_ALLOWED)
    if found is None or (status.get("observedGeneration") or 0) != (_meta(pdb).get("generation") or 0):
        return False
    if (status.get("disruptionsAllowed") or 0) > 0:
        return found.get("status") == "True" and found.get("reason") == SUFFICIENT_PODS
    return found.get("status") == "False" and found.get("reason") == INSUFFICIENT_PODS


def disrupted_now(disrupted_pods: Mapping[str, Any] | None, pod_name: str, now: datetime) -> dict[str, str]:
    """``disruptedPods`` with ``pod_name`` recorded as disrupted at ``now`` (what an eviction
    writes so the controller counts the pod as gone before its deletion shows)."""
    return {**dict(disrupted_pods or {}), pod_name: format_rfc3339(now)}


def selector_go_string(selector: Mapping[str, Any] | None) -> str:
    """``%v`` of a ``*metav1.LabelSelector`` (its generated String()), as upstream's
    UnmanagedPods event prints it."""
    if selector is None:
        return "nil"
    labels = "".join(f"{key}: {value}," for key, value in sorted((selector.get("matchLabels") or {}).items()))
    expressions = "".join(
        f"LabelSelectorRequirement{{Key:{e.get('key', '')},Operator:{e.get('operator', '')},"
        f"Values:[{' '.join(e.get('values') or [])}],}},"
        for e in selector.get("matchExpressions") or [])
    return (f"&LabelSelector{{MatchLabels:map[string]string{{{labels}}},"
            f"MatchExpressions:[]LabelSelectorRequirement{{{expressions}}},}}")
