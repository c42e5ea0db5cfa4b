"""Pod tolerations against node taints: matching, how long a pod may stay, admission defaults.

The scheduler (may a pod go here?), taint eviction (how long may it stay?) and the
DefaultTolerationSeconds admission plugin share these rules. Sources (Kubernetes 1.33):
k8s.io/api core/v1 ``toleration.go`` (``ToleratesTaint``), ``pkg/apis/core/v1/helper``
(``TolerationsTolerateTaint``, ``GetMatchingTolerations``, ``FindMatchingUntoleratedTaint``),
``pkg/controller/tainteviction`` (``getMinTolerationTime``) and
``plugin/pkg/admission/defaulttolerationseconds``.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Iterable, Mapping, Sequence

from fakekube.objects.taints import NO_EXECUTE, TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE, Taint

Toleration = Mapping[str, Any]

OP_EQUAL = "Equal"
OP_EXISTS = "Exists"

#: DefaultTolerationSeconds' default for both the not-ready and the unreachable toleration.
DEFAULT_TOLERATION_SECONDS = 300


def tolerates_taint(toleration: Toleration, taint: Taint) -> bool:
    """``Toleration.ToleratesTaint``, in upstream's order of checks.

    An empty effect matches every effect and an empty key every key (validation allows an
    empty key only with Exists). Exists matches any value; Equal (or no operator) needs
    the same value. Any other operator tolerates nothing: 1.33 has no Lt/Gt.
    """
    effect = toleration.get("effect") or ""
    if effect and effect != (taint.get("effect") or ""):
        return False
    key = toleration.get("key") or ""
    if key and key != (taint.get("key") or ""):
        return False
    operator = toleration.get("operator") or OP_EQUAL
    if operator == OP_EXISTS:
        return True
    if operator == OP_EQUAL:
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return False


def tolerations_tolerate_taint(tolerations: Iterable[Toleration] | None, taint: Taint) -> bool:
    """``TolerationsTolerateTaint``: does any of ``tolerations`` tolerate ``taint``?"""
    return any(tolerates_taint(t, taint) for t in tolerations or ())


def tolerates_all(tolerations: Sequence[Toleration] | None, taints: Iterable[Taint] | None) -> bool:
    """Is every one of ``taints`` tolerated by some toleration? (True when there are no taints.)"""
    return all(tolerations_tolerate_taint(tolerations, taint) for taint in taints or ())


def first_untolerated_taint(
    taints: Iterable[Taint] | None, tolerations: Sequence[Toleration] | None, effects: Iterable[str] | None = None
) -> Taint | None:
    """``FindMatchingUntoleratedTaint``: the first taint (of ``effects``, if given) nothing tolerates.

    The scheduler's TaintToleration filter passes NoSchedule and NoExecute; None means the
    pod tolerates the node.
    """
    wanted = None if effects is None else set(effects)
    for taint in taints or ():
        if wanted is not None and taint.get("effect") not in wanted:
            continue
        if not tolerations_tolerate_taint(tolerations, taint):
            return taint
    return None


def matching_tolerations(taints: Sequence[Taint], tolerations: Sequence[Toleration] | None) -> list[Toleration] | None:
    """``GetMatchingTolerations``: per taint, the *first* toleration that tolerates it.

    None when some taint is not tolerated. Only the first match counts, so a later,
    longer toleration for the same taint never extends a pod's stay.
    """
    used = []
    for taint in taints:
        match = next((t for t in tolerations or () if tolerates_taint(t, taint)), None)
        if match is None:
            return None
        used.append(match)
    return used


def min_toleration_s(tolerations: Sequence[Toleration] | None, noexecute_taints: Sequence[Taint]) -> float | None:
    """How long a pod may stay on a node with these NoExecute taints (``getMinTolerationTime``).

    None: forever (no taints, or no used toleration sets tolerationSeconds).
    0: evict now (a taint is not tolerated, or a used toleration has seconds <= 0).
    Otherwise the least tolerationSeconds among the tolerations used, as upstream's taint
    manager turns it into a ``time.Duration`` (:func:`go_duration_s`): MaxInt64 seconds is
    its "not set" sentinel (forever), and a product past int64 nanoseconds wraps, to a
    negative duration (forever) or to whatever positive duration it wraps to.
    """
    if not noexecute_taints:
        return None
    used = matching_tolerations(noexecute_taints, tolerations)
    if not used:
        return 0.0
    least = MAX_INT64
    for toleration in used:
        seconds = toleration.get("tolerationSeconds")
        if seconds is None:
            continue
        if seconds <= 0:
            return 0.0
        least = min(least, int(seconds))
    if least == MAX_INT64:
        return None
    return go_duration_s(least)


#: Go's math.MaxInt64; a time.Duration counts int64 nanoseconds (about 292 years).
MAX_INT64 = 2**63 - 1
NANOSECONDS_PER_S = 10**9


def go_duration_s(seconds: int) -> float | None:
    """``time.Duration(seconds) * time.Second`` in seconds, wrapping as Go's int64 arithmetic
    does; None when the result is negative (upstream's taint manager reads a negative
    duration as "tolerate forever")."""
    nanoseconds = (seconds * NANOSECONDS_PER_S + 2**63) % 2**64 - 2**63
    if nanoseconds < 0:
        return None
    return nanoseconds / NANOSECONDS_PER_S


def eviction_time(taint_added: datetime, toleration_s: float | None) -> datetime | None:
    """When taint eviction deletes the pod: taint time plus toleration; None means never.

    Upstream starts counting when the controller first sees the pod under the taint; on
    one virtual clock that instant is the taint's ``timeAdded``. An instant past datetime's
    range (year 9999) is never due.
    """
    if toleration_s is None:
        return None
    try:
        return taint_added + timedelta(seconds=toleration_s)
    except OverflowError:
        return None


def _covers(toleration: Toleration, taint_key: str) -> bool:
    """The admission plugin's loose test: key equal or empty, effect NoExecute or empty."""
    return (toleration.get("key") or "") in ("", taint_key) and (toleration.get("effect") or "") in ("", NO_EXECUTE)


def default_tolerations(
    pod: Mapping[str, Any],
    not_ready_s: int = DEFAULT_TOLERATION_SECONDS,
    unreachable_s: int = DEFAULT_TOLERATION_SECONDS,
) -> list[dict[str, Any]]:
    """The tolerations DefaultTolerationSeconds appends to a pod (new dicts; the pod is untouched).

    A not-ready (resp. unreachable) NoExecute Exists toleration with the given seconds,
    unless the pod already has a toleration whose key is that key or empty and whose
    effect is NoExecute or empty, whatever its operator, value or seconds.
    """
    tolerations = (pod.get("spec") or {}).get("tolerations") or []
    added = []
    for key, seconds in ((TAINT_NODE_NOT_READY, not_ready_s), (TAINT_NODE_UNREACHABLE, unreachable_s)):
        if not any(_covers(t, key) for t in tolerations):
            added.append({"key": key, "operator": OP_EXISTS, "effect": NO_EXECUTE, "tolerationSeconds": seconds})
    return added
