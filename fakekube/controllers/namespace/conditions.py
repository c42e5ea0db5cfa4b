"""A terminating namespace's status conditions: pure rules, as upstream's
pkg/controller/namespace/deletion/status_condition_utils.go.

Every pass sets all five condition types: the failing ones with what failed, the others
with their "ok" reason and message. A condition's lastTransitionTime moves only when its
status flips; a pass that changes nothing writes nothing.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from fakekube.objects import Resource

Obj = dict[str, Any]

DISCOVERY_FAILURE = "NamespaceDeletionDiscoveryFailure"
GROUP_VERSION_PARSING_FAILURE = "NamespaceDeletionGroupVersionParsingFailure"
CONTENT_FAILURE = "NamespaceDeletionContentFailure"
CONTENT_REMAINING = "NamespaceContentRemaining"
FINALIZERS_REMAINING = "NamespaceFinalizersRemaining"

#: The types the namespace deleter maintains, in upstream's order (``conditionTypes``).
CONDITION_TYPES = (DISCOVERY_FAILURE, GROUP_VERSION_PARSING_FAILURE, CONTENT_FAILURE, CONTENT_REMAINING,
                   FINALIZERS_REMAINING)

#: (reason, message) of each type when nothing is wrong (``okReasons``, ``okMessages``).
OK = {
    DISCOVERY_FAILURE: ("ResourcesDiscovered", "All resources successfully discovered"),
    GROUP_VERSION_PARSING_FAILURE: ("ParsedGroupVersions", "All legacy kube types successfully parsed"),
    CONTENT_FAILURE: ("ContentDeleted", "All content successfully deleted, may be waiting on finalization"),
    CONTENT_REMAINING: ("ContentRemoved", "All content successfully removed"),
    FINALIZERS_REMAINING: ("ContentHasNoFinalizers", "All content-preserving finalizers finished"),
}


class ContentTotals:
    """What a pass left behind: instances per resource and per finalizer (``allGVRDeletionMetadata``)."""

    __slots__ = ("remaining", "finalizers")

    def __init__(self, remaining: dict[Resource, int] | None = None, finalizers: Counter[str] | None = None) -> None:
        self.remaining: dict[Resource, int] = {} if remaining is None else remaining
        self.finalizers: Counter[str] = Counter() if finalizers is None else finalizers


class ConditionUpdater:
    """Collects one pass's failures (``namespaceConditionUpdater``) and applies them."""

    __slots__ = ("failing", "content_errors")

    def __init__(self, failing: dict[str, tuple[str, str]] | None = None,
                 content_errors: list[str] | None = None) -> None:
        self.failing: dict[str, tuple[str, str]] = {} if failing is None else failing
        self.content_errors: list[str] = [] if content_errors is None else content_errors

    def content_error(self, message: str) -> None:
        """``ProcessDeleteContentErr``: one resource's deletion failed."""
        self.content_errors.append(message)

    def content_totals(self, totals: ContentTotals) -> None:
        """``ProcessContentTotals``: what is left, by resource and by finalizer."""
        by_resource = sorted(f"{r.plural}.{r.group} has {n} resource instances"
                             for r, n in totals.remaining.items() if n)
        if by_resource:
            self.failing[CONTENT_REMAINING] = ("SomeResourcesRemain",
                                               f"Some resources are remaining: {', '.join(by_resource)}")
        by_finalizer = sorted(f"{f} in {n} resource instances" for f, n in totals.finalizers.items() if n)
        if by_finalizer:
            self.failing[FINALIZERS_REMAINING] = (
                "SomeFinalizersRemain",
                f"Some content in the namespace has finalizers remaining: {', '.join(by_finalizer)}")

    def conditions(self, current: list[Obj], now: str) -> list[Obj] | None:
        """``Update``: the namespace's new conditions, or None when nothing changes."""
        failing = dict(self.failing)
        if CONTENT_FAILURE not in failing and self.content_errors:
            messages = sorted(self.content_errors)
            failing[CONTENT_FAILURE] = ("ContentDeletionFailed", f"Failed to delete all resource types, "
                                        f"{len(messages)} remaining: {', '.join(messages)}")
        updated = [dict(c) for c in current]
        changed = False
        for kind in CONDITION_TYPES:
            status, (reason, message) = ("True", failing[kind]) if kind in failing else ("False", OK[kind])
            old = next((c for c in updated if c.get("type") == kind), None)
            if old is None:
                updated.append({"type": kind, "status": status, "lastTransitionTime": now, "reason": reason,
                                "message": message})
                changed = True
            elif (old.get("status"), old.get("reason"), old.get("message")) != (status, reason, message):
                if old.get("status") != status:
                    old["lastTransitionTime"] = now
                old.update(status=status, reason=reason, message=message)
                changed = True
        return updated if changed else None
