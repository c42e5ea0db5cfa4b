"""NodeAffinity: a pod runs only on nodes its ``nodeSelector`` and required node affinity
select (Filter), prefers nodes its preferred terms match (Score), and the profile may
enforce extra affinity on every pod (the ``addedAffinity`` arg).

Upstream: ``pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go`` (1.33).
PreFilter narrows the nodes to the names a required term pins with ``matchFields``
``metadata.name In``; a pod with nothing to check skips Filter, one without preferred
terms skips Score. Each pod's compiled terms are cached on its PodInfo.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, NamedTuple

from fakekube.objects.nodeaffinity import (
    PreferredTerms, RequiredNodeAffinity, node_affinity_of, node_selector_errors, preferred_terms,
    preferred_terms_errors, required_node_affinity,
)
from fakekube.objects.nodeselectors import NodeSelector
from fakekube.scheduler.framework import (
    NODE, SKIP, Action, ClusterEvent, CycleState, EventHint, Hint, NodeInfo, PodInfo, Status, unresolvable,
)
from fakekube.scheduler.plugins.helper import default_normalize_score

if TYPE_CHECKING:
    from fakekube.scheduler.runtime import Handle

NAME = "NodeAffinity"
#: ErrReasonPod: the pod's own nodeSelector / required node affinity does not match.
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
#: errReasonEnforced: the profile's addedAffinity does not match.
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
#: errReasonConflict: the required terms pin node names that no term can satisfy together.
ERR_REASON_CONFLICT = "pod affinity terms conflict"

_NAME_FIELD = "metadata.name"


class _PodTerms(NamedTuple):
    """One pod's compiled node affinity (cached in ``PodInfo.data[NAME]``)."""

    required: RequiredNodeAffinity
    #: False when the pod has neither a nodeSelector nor required node affinity.
    has_required: bool
    #: None when the pod has no preferred node-affinity terms.
    preferred: PreferredTerms | None


class NodeAffinity:
    name = NAME

    def __init__(self, handle: "Handle", args: Mapping[str, Any]) -> None:
        self.handle = handle
        added = args.get("addedAffinity") or {}
        required = added.get("requiredDuringSchedulingIgnoredDuringExecution")
        preferred = added.get("preferredDuringSchedulingIgnoredDuringExecution") or []
        errors = []
        if required is not None:
            errors += node_selector_errors(required, "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.")
        errors += preferred_terms_errors(preferred, "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution")
        if errors:
            raise ValueError(f"NodeAffinity args: {errors[0] if len(errors) == 1 else '[' + ', '.join(errors) + ']'}")
        #: The enforced selector (None: none); every pod must match it too.
        self.added_selector = NodeSelector(required.get("nodeSelectorTerms")) if required is not None else None
        self.added_preferred = preferred_terms(preferred) if preferred else None

    # -- filtering -----------------------------------------------------------------------
    def pre_filter(self, state: CycleState, info: PodInfo) -> tuple[set[str] | None, Status | None]:
        terms = _terms(info)
        if not terms.has_required and self.added_selector is None:
            return None, SKIP
        return _pinned_node_names(info.pod)

    def filter(self, state: CycleState, info: PodInfo, node: NodeInfo) -> Status | None:
        if self.added_selector is not None and not self.added_selector.matches(node.labels, node.name):
            return unresolvable(NAME, ERR_REASON_ENFORCED)
        if not _terms(info).required.matches(node.labels, node.name):
            return unresolvable(NAME, ERR_REASON_POD)
        return None

    # -- scoring -------------------------------------------------------------------------
    def pre_score(self, state: CycleState, info: PodInfo, nodes: list[NodeInfo]) -> Status | None:
        if _terms(info).preferred is None and self.added_preferred is None:
            return SKIP
        return None

    def score(self, state: CycleState, info: PodInfo, node: NodeInfo) -> int:
        total = 0
        if self.added_preferred is not None:
            total += self.added_preferred.score(node.labels, node.name)
        preferred = _terms(info).preferred
        if preferred is not None:
            total += preferred.score(node.labels, node.name)
        return total

    def normalize_score(self, state: CycleState, info: PodInfo, scores: list[int]) -> None:
        default_normalize_score(scores, reverse=False)

    # -- queueing ------------------------------------------------------------------------
    def events_to_register(self) -> list[EventHint]:
        """Node added or relabelled (1.33 with queueing hints on: no UpdateNodeTaint)."""
        return [EventHint(ClusterEvent(NODE, Action.ADD | Action.UPDATE_NODE_LABEL), self._node_now_matches)]

    def _node_now_matches(self, pod: Any, old: Any, new: Any) -> Hint:
        """Queue when a new node matches, or an updated node went from not matching to matching."""
        if new is None:
            return Hint.SKIP
        if self.added_selector is not None and not _selector_matches_node(self.added_selector, new):
            return Hint.SKIP
        required = required_node_affinity(pod)
        if not required.matches_node(new):
            return Hint.SKIP
        if old is None:
            return Hint.QUEUE
        return Hint.SKIP if required.matches_node(old) else Hint.QUEUE


def _terms(info: PodInfo) -> _PodTerms:
    """The pod's compiled terms, parsed once per PodInfo."""
    cached = info.data.get(NAME)
    if cached is None:
        spec = info.pod.get("spec") or {}
        affinity = node_affinity_of(info.pod)
        has_required = bool(spec.get("nodeSelector")) or (
            affinity.get("requiredDuringSchedulingIgnoredDuringExecution") is not None)
        preferred_raw = affinity.get("preferredDuringSchedulingIgnoredDuringExecution")
        preferred = preferred_terms(preferred_raw) if preferred_raw else None
        cached = info.data[NAME] = _PodTerms(required_node_affinity(info.pod), has_required, preferred)
    return cached


def _selector_matches_node(selector: NodeSelector, node: Mapping[str, Any]) -> bool:
    meta = node.get("metadata") or {}
    return selector.matches(meta.get("labels") or {}, meta.get("name") or "")


def _pinned_node_names(pod: Mapping[str, Any]) -> tuple[set[str] | None, Status | None]:
    """PreFilter's node-name result: when *every* required term pins names with
    ``matchFields metadata.name In``, only the union of those names can fit (a term's own
    pins intersect); an empty union means the terms conflict."""
    required = node_affinity_of(pod).get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    terms = required.get("nodeSelectorTerms") or []
    if not terms:
        return None, None
    names: set[str] = set()
    for term in terms:
        pinned: set[str] | None = None
        for field in (term or {}).get("matchFields") or []:
            if field.get("key") == _NAME_FIELD and field.get("operator") == "In":
                values = set(field.get("values") or [])
                pinned = values if pinned is None else pinned & values
        if pinned is None:
            return None, None  # this term allows any node name
        names |= pinned
    if not names:
        return None, unresolvable(NAME, ERR_REASON_CONFLICT)
    return names, None
