"""``metav1.Condition`` lists: the status conditions of newer APIs (PodDisruptionBudget, …).

Upstream edits them with ``apimeta.SetStatusCondition`` (apimachinery
``pkg/api/meta/conditions.go``): a condition of a new type is appended; an existing one
keeps its place, its ``lastTransitionTime`` moves only when its status changes, and its
reason, message and observedGeneration are replaced. Here the list is never edited in
place: a new list comes back. A condition is written in Go's field order (type, status,
observedGeneration when set, lastTransitionTime, reason, message — the last two always,
as they are required fields).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Iterable, Mapping

from fakekube.clock import format_rfc3339

Obj = dict[str, Any]


def find_condition(conditions: Iterable[Mapping[str, Any]] | None, condition_type: str) -> Mapping[str, Any] | None:
    """``FindStatusCondition``: the condition of ``condition_type``, or None."""
    return next((c for c in conditions or () if c.get("type") == condition_type), None)


def condition(condition_type: str, status: str, reason: str, message: str = "", observed_generation: int = 0,
              last_transition_time: str = "") -> Obj:
    """A ``metav1.Condition`` in Go's field order (``observedGeneration`` omitted when 0)."""
    new: Obj = {"type": condition_type, "status": status}
    if observed_generation:
        new["observedGeneration"] = observed_generation
    new.update(lastTransitionTime=last_transition_time, reason=reason, message=message)
    return new


def set_condition(conditions: Iterable[Mapping[str, Any]] | None, new: Mapping[str, Any],
                  now: datetime) -> tuple[list[Obj], bool]:
    """``SetStatusCondition``: (the new list, whether anything changed).

    ``new``'s empty ``lastTransitionTime`` means "now" when one is needed.
    """
    result = [dict(c) for c in conditions or ()]
    index = next((i for i, c in enumerate(result) if c.get("type") == new["type"]), None)
    if index is None:
        result.append(condition(new["type"], new["status"], new.get("reason", ""), new.get("message", ""),
                                new.get("observedGeneration", 0),
                                new.get("lastTransitionTime") or format_rfc3339(now)))
        return result, True
    old = result[index]
    transition = old.get("lastTransitionTime", "")
    if old.get("status") != new["status"]:
        transition = new.get("lastTransitionTime") or format_rfc3339(now)
    updated = condition(new["type"], new["status"], new.get("reason", ""), new.get("message", ""),
                        new.get("observedGeneration", 0), transition)
    changed = any((old.get(key) or None) != (updated.get(key) or None)
                  for key in ("status", "reason", "message", "observedGeneration", "lastTransitionTime"))
    result[index] = updated
    return result, changed
