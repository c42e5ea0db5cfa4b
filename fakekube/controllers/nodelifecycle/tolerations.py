"""Pod tolerations against node taints: matching, the taint manager's clock, admission defaults.

Sources checked: k8s.io/api core/v1 toleration.go (Toleration.ToleratesTaint),
pkg/apis/core/v1/helper GetMatchingTolerations, pkg/controller/tainteviction
(getMinTolerationTime, processPodOnNode) and plugin/pkg/admission/defaulttolerationseconds.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any, Mapping, Sequence

from fakekube.controllers.nodelifecycle.config import NodeLifecycleConfig
from fakekube.controllers.nodelifecycle.taints import NO_EXECUTE, TAINT_NOT_READY, TAINT_UNREACHABLE

EQUAL = "Equal"
EXISTS = "Exists"
LESS_THAN = "Lt"
GREATER_THAN = "Gt"

_INT64 = re.compile(r"[+-]?[0-9]+")

Toleration = Mapping[str, Any]


def tolerates(toleration: Toleration, taint: Mapping[str, Any]) -> bool:
    """Does one toleration tolerate one taint? Upstream's rules, in order:

    an empty effect matches every effect; an empty key matches every key (validation only
    allows it with Exists); operator Exists matches any value, Equal (or empty) needs the
    same value; Lt / Gt compare integer values (taint < or > toleration); anything else no.
    """
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or EQUAL
    if operator == EQUAL:
        return (toleration.get("value") or "") == (taint.get("value") or "")
    if operator == EXISTS:
        return True
    if operator in (LESS_THAN, GREATER_THAN):
        return _compare_numeric(toleration.get("value"), taint.get("value"), operator)
    return False


def _compare_numeric(toleration_value: Any, taint_value: Any, operator: str) -> bool:
    """Go's ParseInt(base 10) on both sides; an unparsable value never matches."""
    if not (_INT64.fullmatch(str(toleration_value or "")) and _INT64.fullmatch(str(taint_value or ""))):
        return False
    wanted, actual = int(toleration_value), int(taint_value)
    return actual < wanted if operator == LESS_THAN else actual > wanted


def tolerates_all(tolerations: Sequence[Toleration] | None, taints: Sequence[Mapping[str, Any]]) -> bool:
    return all(any(tolerates(t, taint) for t in tolerations or ()) for taint in taints)


def matching_tolerations(
    taints: Sequence[Mapping[str, Any]], tolerations: Sequence[Toleration] | None
) -> list[Toleration] | None:
    """For each taint, the first toleration that tolerates it; None if any taint is untolerated.

    Only that first match counts (upstream GetMatchingTolerations), so a later, longer
    toleration for the same taint never extends a pod's stay.
    """
    used = []
    for taint in taints:
        match = next((t for t in tolerations or () if tolerates(t, taint)), None)
        if match is None:
            return None
        used.append(match)
    return used


def min_toleration_s(
    pod_tolerations: Sequence[Toleration] | None, node_noexecute_taints: Sequence[Mapping[str, Any]]
) -> float | None:
    """How long a pod may stay on a node with these NoExecute taints (getMinTolerationTime).

    None: forever (no taints, or every used toleration has no tolerationSeconds).
    0: evict now (a taint is not tolerated, or a used toleration has seconds <= 0).
    Otherwise the least tolerationSeconds among the used tolerations.
    """
    if not node_noexecute_taints:
        return None
    used = matching_tolerations(node_noexecute_taints, pod_tolerations)
    if used is None:
        return 0.0
    seconds = [t["tolerationSeconds"] for t in used if t.get("tolerationSeconds") is not None]
    if not seconds:
        return None
    return float(max(0, min(seconds)))


def eviction_time(taint_added: datetime, toleration_s: float | None) -> datetime | None:
    """When the taint manager deletes the pod: taint time + toleration; None means never.

    Upstream starts the countdown when the taint manager first sees the pod under the
    taint (processPodOnNode keeps an earlier scheduled deletion); on one virtual clock
    that instant is the taint's ``timeAdded``.
    """
    if toleration_s is None:
        return None
    return taint_added + timedelta(seconds=toleration_s)


def _covers(toleration: Toleration, taint_key: str) -> bool:
    """The admission plugin's loose test: key equal or empty, effect NoExecute or empty."""
    return (toleration.get("key") or "") in ("", taint_key) and (toleration.get("effect") or "") in ("", NO_EXECUTE)


def default_tolerations(pod: Mapping[str, Any], config: NodeLifecycleConfig) -> list[dict[str, Any]]:
    """The tolerations DefaultTolerationSeconds appends to a pod on create and update.

    A not-ready (resp. unreachable) NoExecute toleration with the configured seconds,
    unless the pod already has a toleration whose key is that key or empty and whose
    effect is NoExecute or empty — whatever its operator, value or seconds.
    """
    tolerations = pod.get("spec", {}).get("tolerations") or []
    added = []
    for key, seconds in (
        (TAINT_NOT_READY, config.default_not_ready_toleration_s),
        (TAINT_UNREACHABLE, config.default_unreachable_toleration_s),
    ):
        if not any(_covers(t, key) for t in tolerations):
            added.append({"key": key, "operator": EXISTS, "effect": NO_EXECUTE, "tolerationSeconds": seconds})
    return added
