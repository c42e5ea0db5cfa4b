"""Emptying a terminating namespace, one pass: upstream's
pkg/controller/namespace/deletion/namespaced_resources_deleter.go (``deleteAllContent``).

A pass deletes every object of every namespaced resource that supports delete (with
propagation Background, as upstream's deleteCollection and per-item deletes), then lists
what is left. What is left decides the wait: pods still in graceful deletion give the
longest ``terminationGracePeriodSeconds`` of the non-terminal pods (until that long has
passed since the namespace's deletion), anything held by finalizers 15 s; leftovers with
neither are an error ("unexpected items still remain"). With OrderedNamespaceDeletion (on
by default from 1.33) pods go first: while any pod is left, nothing else is deleted.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any, Sequence

from fakekube.api.machinery.errors import ApiError
from fakekube.clock import parse_time
from fakekube.controllers.namespace.conditions import ConditionUpdater, ContentTotals
from fakekube.engine import Context
from fakekube.objects.kinds import PODS, APIResource

Obj = dict[str, Any]

#: Upstream's ``finalizerEstimateSeconds``: how long objects held by finalizers are assumed to take.
FINALIZER_ESTIMATE_S = 15
BACKGROUND = "Background"
TERMINAL_PHASES = ("Succeeded", "Failed")


class Pass:
    """The outcome of one pass over a namespace's content."""

    __slots__ = ("estimate_s", "errors", "conditions")

    def __init__(self, estimate_s: int = 0, errors: list[str] | None = None,
                 conditions: ConditionUpdater | None = None) -> None:
        self.estimate_s = estimate_s
        self.errors: list[str] = [] if errors is None else errors
        self.conditions = ConditionUpdater() if conditions is None else conditions


class Leftovers:
    """One resource after its deletion (``gvrDeletionMetadata``)."""

    __slots__ = ("estimate_s", "remaining", "finalizers")

    def __init__(self, estimate_s: int = 0, remaining: int = 0, finalizers: Counter[str] | None = None) -> None:
        self.estimate_s = estimate_s
        self.remaining = remaining
        self.finalizers: Counter[str] = Counter() if finalizers is None else finalizers


def delete_all_content(namespace: Obj, content: Sequence[APIResource], pods_first: bool, ctx: Context) -> Pass:
    """``deleteAllContent``: one pass over every resource in ``content`` (discovery order).

    The caller writes the conditions (``result.conditions``) whatever the outcome."""
    name = namespace["metadata"]["name"]
    deleted_at = parse_time(namespace["metadata"]["deletionTimestamp"]) or ctx.now
    result, totals = Pass(), ContentTotals()
    for served in sorted(content, key=lambda r: r.resource != PODS) if pods_first else content:
        leftovers = _delete_resource(served, name, deleted_at, result, ctx)
        if leftovers.remaining:
            totals.remaining[served.resource] = leftovers.remaining
            totals.finalizers.update(leftovers.finalizers)
        if pods_first and served.resource == PODS and leftovers.remaining:
            return result  # 1.33's early return: its conditions do not count what is left
    result.conditions.content_totals(totals)
    return result


def _delete_resource(served: APIResource, namespace: str, deleted_at: datetime, result: Pass,
                     ctx: Context) -> Leftovers:
    """``deleteAllContentForGroupVersionResource``: delete, then see what is left."""
    estimate_s = _pod_estimate_s(namespace, deleted_at, ctx) if served.resource == PODS else 0
    for obj in ctx.list(served.storage, namespace):
        try:
            ctx.client.delete(served.resource, obj["metadata"]["name"], namespace, propagation_policy=BACKGROUND)
        except ApiError as err:
            if err.code not in (404, 405):
                result.errors.append(err.message)
                result.conditions.content_error(err.message)
                result.estimate_s = max(result.estimate_s, estimate_s)
                return Leftovers(estimate_s)
    left = ctx.list(served.storage, namespace)
    if not left:
        return Leftovers()
    finalizers: Counter[str] = Counter(f for obj in left for f in obj["metadata"].get("finalizers") or ())
    if estimate_s:
        leftovers = Leftovers(estimate_s, len(left), finalizers)
    elif finalizers:
        leftovers = Leftovers(FINALIZER_ESTIMATE_S, len(left), finalizers)
    else:
        group = served.resource.group
        message = (f"unexpected items still remain in namespace: {namespace} for gvr: "
                   f"{group}/{served.api_version.rpartition('/')[2]}, Resource={served.resource.plural}")
        result.errors.append(message)
        result.conditions.content_error(message)
        leftovers = Leftovers(0, len(left))
    result.estimate_s = max(result.estimate_s, leftovers.estimate_s)
    return leftovers


def _pod_estimate_s(namespace: str, deleted_at: datetime, ctx: Context) -> int:
    """``estimateGracefulTerminationForPods``: the longest grace period of the non-terminal
    pods — or 0 once that long has passed since the namespace's deletion."""
    estimate_s = 0
    for pod in ctx.list(PODS, namespace):
        if (pod.get("status") or {}).get("phase") in TERMINAL_PHASES:
            continue
        grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
        if grace is not None:
            estimate_s = max(estimate_s, int(grace))
    return 0 if (ctx.now - deleted_at).total_seconds() >= estimate_s else estimate_s
