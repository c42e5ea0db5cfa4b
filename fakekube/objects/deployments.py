"""What a Deployment's spec and its ReplicaSets mean: upstream's ``deploymentutil``.

Surge and unavailability budgets, which ReplicaSet is new and which are old, revisions
and the annotations that carry them, proportions for scaling in mid-rollout. The
deployment controller and ``kubectl rollout`` read Deployments through these rules.
Sources (Kubernetes 1.33): ``pkg/controller/deployment/util/deployment_util.go``,
``pkg/controller/controller_utils.go`` (ReplicaSet sort orders, ``FilterActiveReplicaSets``)
and ``k8s.io/apimachinery/pkg/util/intstr`` (``GetScaledValueFromIntOrPercent``, in
:mod:`fakekube.objects.intstr`).
Functions never change their inputs, except the ``set_*`` helpers, which edit the copy
they are given (as upstream edits its DeepCopy) and say whether anything changed.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping, Sequence

from fakekube.objects._json import deep_copy
from fakekube.objects.intstr import scaled_value

Obj = dict[str, Any]

#: The label that ties a ReplicaSet and its pods to one template (``DefaultDeploymentUniqueLabelKey``).
POD_TEMPLATE_HASH_LABEL = "pod-template-hash"
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
REVISION_HISTORY_ANNOTATION = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS_ANNOTATION = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS_ANNOTATION = "deployment.kubernetes.io/max-replicas"
LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"
#: ``apps.DeprecatedRollbackTo``: the old server-side rollback request.
ROLLBACK_TO_ANNOTATION = "deprecated.deployment.rollback.to"
#: Deployment annotations never copied onto its ReplicaSets (``annotationsToSkip``).
ANNOTATIONS_TO_SKIP = frozenset({LAST_APPLIED_ANNOTATION, REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION,
                                 DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION, ROLLBACK_TO_ANNOTATION})
#: ``maxRevHistoryLengthInChars``: the revision-history annotation stops growing past this.
MAX_REVISION_HISTORY_CHARS = 2000

ROLLING_UPDATE = "RollingUpdate"
RECREATE = "Recreate"

_GO_INT = re.compile(r"^[+-]?[0-9]+$")


def go_int(text: Any) -> int | None:
    """``strconv.Atoi``/``ParseInt``: a decimal with an optional sign, else None."""
    return int(text) if isinstance(text, str) and _GO_INT.match(text) else None


# -- budgets ----------------------------------------------------------------------------
def resolve_fenceposts(max_surge: Any, max_unavailable: Any, desired: int) -> tuple[int, int]:
    """``ResolveFenceposts``: surge rounds up, unavailable down; both 0 would deadlock, so
    unavailable becomes 1 (validation refuses an explicit 0/0, but 1% of 10 rounds to 0)."""
    surge = scaled_value(0 if max_surge is None else max_surge, desired, True)
    unavailable = scaled_value(0 if max_unavailable is None else max_unavailable, desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def spec_replicas(obj: Mapping[str, Any]) -> int:
    """``*spec.replicas`` (defaulted to 1 by the apiserver for both kinds)."""
    value = (obj.get("spec") or {}).get("replicas")
    return 1 if value is None else int(value)


def is_rolling_update(deployment: Mapping[str, Any]) -> bool:
    return ((deployment.get("spec") or {}).get("strategy") or {}).get("type") == ROLLING_UPDATE


def _fenceposts(deployment: Mapping[str, Any]) -> tuple[int, int]:
    rolling = ((deployment.get("spec") or {}).get("strategy") or {}).get("rollingUpdate") or {}
    try:
        return resolve_fenceposts(rolling.get("maxSurge"), rolling.get("maxUnavailable"), spec_replicas(deployment))
    except ValueError:
        return 0, 0


def max_surge(deployment: Mapping[str, Any]) -> int:
    """``MaxSurge``: extra pods a rolling update may run above ``replicas`` (0 for Recreate)."""
    return _fenceposts(deployment)[0] if is_rolling_update(deployment) else 0


def max_unavailable(deployment: Mapping[str, Any]) -> int:
    """``MaxUnavailable``: pods a rolling update may have unavailable, at most ``replicas``."""
    replicas = spec_replicas(deployment)
    if not is_rolling_update(deployment) or replicas == 0:
        return 0
    return min(_fenceposts(deployment)[1], replicas)


# -- counting ReplicaSets ---------------------------------------------------------------
def _status(rs: Mapping[str, Any], field: str) -> int:
    return int((rs.get("status") or {}).get(field) or 0)


def replica_count(rss: Iterable[Obj | None]) -> int:
    """``GetReplicaCountForReplicaSets``: the sum of ``spec.replicas``."""
    return sum(spec_replicas(rs) for rs in rss if rs is not None)


def actual_replica_count(rss: Iterable[Obj | None]) -> int:
    """``GetActualReplicaCountForReplicaSets``: the sum of ``status.replicas``."""
    return sum(_status(rs, "replicas") for rs in rss if rs is not None)


def ready_replica_count(rss: Iterable[Obj | None]) -> int:
    return sum(_status(rs, "readyReplicas") for rs in rss if rs is not None)


def available_replica_count(rss: Iterable[Obj | None]) -> int:
    return sum(_status(rs, "availableReplicas") for rs in rss if rs is not None)


def filter_active(rss: Iterable[Obj | None]) -> list[Obj]:
    """``FilterActiveReplicaSets``: those that want pods."""
    return [rs for rs in rss if rs is not None and spec_replicas(rs) > 0]


def by_creation(rs: Mapping[str, Any]) -> tuple[str, str]:
    """Sort key of ``ReplicaSetsByCreationTimestamp`` (oldest first, then by name).
    RFC 3339 times of one format sort as strings."""
    meta = rs.get("metadata") or {}
    return meta.get("creationTimestamp") or "", meta.get("name") or ""


def sorted_by_size_newer(rss: Sequence[Obj]) -> list[Obj]:
    """``ReplicaSetsBySizeNewer``: largest first, newer first among equals."""
    newest_first = sorted(rss, key=by_creation, reverse=True)
    return sorted(newest_first, key=lambda rs: -spec_replicas(rs))


def sorted_by_size_older(rss: Sequence[Obj]) -> list[Obj]:
    """``ReplicaSetsBySizeOlder``: largest first, older first among equals."""
    return sorted(sorted(rss, key=by_creation), key=lambda rs: -spec_replicas(rs))


# -- revisions --------------------------------------------------------------------------
def annotations_of(obj: Mapping[str, Any]) -> dict[str, str]:
    return dict((obj.get("metadata") or {}).get("annotations") or {})


def revision(obj: Mapping[str, Any]) -> int | None:
    """``Revision``: the revision annotation (0 when absent), None when it is not a number."""
    value = annotations_of(obj).get(REVISION_ANNOTATION)
    return 0 if value is None else go_int(value)


def max_revision(rss: Iterable[Obj]) -> int:
    """``MaxRevision``: the highest parseable revision (0 when none)."""
    return max((r for r in (revision(rs) for rs in rss) if r is not None), default=0)


def last_revision(rss: Iterable[Obj]) -> int:
    """``LastRevision``: the second highest revision (the one to roll back to)."""
    top = second = 0
    for rs in rss:
        value = revision(rs)
        if value is None:
            continue
        if value >= top:
            top, second = value, top
        elif value > second:
            second = value
    return second


def sorted_by_revision(rss: Sequence[Obj]) -> list[Obj]:
    """``ReplicaSetsByRevision``: by revision (unparseable counts as 0), then by creation."""
    return sorted(rss, key=lambda rs: (revision(rs) or 0, by_creation(rs)))


# -- which ReplicaSet is new ------------------------------------------------------------
def _semantic(value: Any) -> Any:
    """A template as Go's semantic equality sees it: absent, null and empty are alike."""
    if isinstance(value, dict):
        kept = {k: _semantic(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in (None, {}, [], "", False)}
    if isinstance(value, list):
        return [_semantic(v) for v in value]
    return value


def without_hash_label(template: Mapping[str, Any] | None) -> Obj:
    """A copy of a pod template without the ``pod-template-hash`` label."""
    copy: Obj = deep_copy(dict(template or {}))
    labels = (copy.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(POD_TEMPLATE_HASH_LABEL, None)
    return copy


def _without_hash(labels: Any) -> Any:
    if isinstance(labels, dict) and POD_TEMPLATE_HASH_LABEL in labels:
        return {k: v for k, v in labels.items() if k != POD_TEMPLATE_HASH_LABEL}
    return labels


def _same_but_hash(template1: Mapping[str, Any], template2: Mapping[str, Any]) -> bool:
    """Plain equality but for the hash label: the common case, compared at C speed."""
    meta1, meta2 = template1.get("metadata") or {}, template2.get("metadata") or {}
    if template1.get("spec") != template2.get("spec") or meta1.keys() != meta2.keys():
        return False
    return all(_without_hash(meta1[k]) == _without_hash(meta2[k]) if k == "labels" else meta1[k] == meta2[k]
               for k in meta1)


#: Normalized ReplicaSet templates remembered by the identity of the stored (never
#: edited) template they came from; each entry keeps its template alive, so an id is never
#: reused while cached. Oldest entries go first past this many.
NORMALIZED_MEMO_SIZE = 4096
_normalized_memo: dict[int, tuple[Mapping[str, Any], Any]] = {}


def _normalized(template: Mapping[str, Any] | None) -> Any:
    """A template's semantic form without the hash label (one pass, no copy first)."""
    return _normalize(template) if template is not None else {}


def _normalized_stored(template: Mapping[str, Any]) -> Any:
    """:func:`_normalized` of a stored template, remembered: a Deployment compares its
    template with each old ReplicaSet's on every sync (:data:`NORMALIZED_MEMO_SIZE`)."""
    found = _normalized_memo.get(id(template))
    if found is not None and found[0] is template:
        return found[1]
    normalized = _normalize(template)
    if len(_normalized_memo) >= NORMALIZED_MEMO_SIZE:
        _normalized_memo.pop(next(iter(_normalized_memo)), None)
    _normalized_memo[id(template)] = (template, normalized)
    return normalized


def _normalize(template: Mapping[str, Any]) -> Any:
    meta = template.get("metadata")
    if isinstance(meta, dict) and "labels" in meta:
        template = {**template, "metadata": {**meta, "labels": _without_hash(meta["labels"])}}
    return _semantic(template)


def equal_ignore_hash(template1: Mapping[str, Any] | None, template2: Mapping[str, Any] | None) -> bool:
    """``EqualIgnoreHash``: the templates are semantically equal but for the hash label."""
    return _same_but_hash(template1 or {}, template2 or {}) or _normalized(template1) == _normalized(template2)


def find_new_replica_set(deployment: Mapping[str, Any], rss: Sequence[Obj]) -> Obj | None:
    """``FindNewReplicaSet``: the oldest ReplicaSet whose template is the Deployment's
    (``rss`` are stored objects: their templates' forms are remembered)."""
    template = (deployment.get("spec") or {}).get("template") or {}
    normalized = None
    for rs in sorted(rss, key=by_creation):
        candidate = (rs.get("spec") or {}).get("template") or {}
        if _same_but_hash(candidate, template):
            return rs
        if normalized is None:
            normalized = _normalized(template)
        if _normalized_stored(candidate) == normalized:
            return rs
    return None


def old_replica_sets(new_rs: Obj | None, rss: Sequence[Obj]) -> list[Obj]:
    """``FindOldReplicaSets``' second answer: every ReplicaSet but the new one."""
    new_uid = (new_rs or {}).get("metadata", {}).get("uid")
    return [rs for rs in rss if new_rs is None or rs["metadata"].get("uid") != new_uid]


def find_active_or_latest(new_rs: Obj | None, old_rss: Sequence[Obj]) -> Obj | None:
    """``FindActiveOrLatest``: the only active ReplicaSet, or the newest when none is active;
    None when several are active (then scaling is proportional)."""
    if new_rs is None and not old_rss:
        return None
    newest_first = sorted(old_rss, key=by_creation, reverse=True)
    active = filter_active([*newest_first, new_rs])
    if not active:
        return new_rs if new_rs is not None else newest_first[0]
    return active[0] if len(active) == 1 else None


# -- sizes ------------------------------------------------------------------------------
def new_rs_new_replicas(deployment: Mapping[str, Any], all_rss: Sequence[Obj | None], new_rs: Obj) -> int:
    """``NewRSNewReplicas``: how big the new ReplicaSet may be now (within the surge)."""
    replicas = spec_replicas(deployment)
    if not is_rolling_update(deployment):
        return replicas
    max_total = replicas + max_surge(deployment)
    current = replica_count(all_rss)
    if current >= max_total:
        return spec_replicas(new_rs)
    return spec_replicas(new_rs) + min(max_total - current, replicas - spec_replicas(new_rs))


def is_saturated(deployment: Mapping[str, Any], rs: Obj | None) -> bool:
    """``IsSaturated``: the ReplicaSet has the Deployment's full size, all of it available."""
    if rs is None:
        return False
    desired = go_int(annotations_of(rs).get(DESIRED_REPLICAS_ANNOTATION))
    replicas = spec_replicas(deployment)
    return (desired is not None and spec_replicas(rs) == replicas and desired == replicas
            and _status(rs, "availableReplicas") == replicas)


def _round_half_away(value: float) -> int:
    """``integer.RoundToInt32``."""
    return int(value - 0.5) if value < 0 else int(value + 0.5)


def replica_set_fraction(rs: Obj, deployment: Mapping[str, Any]) -> int:
    """``getReplicaSetFraction``: how many pods ``rs`` gains or loses when the Deployment's
    maximum size moves from the one annotated on ``rs`` to today's."""
    replicas = spec_replicas(deployment)
    if replicas == 0:
        return -spec_replicas(rs)
    deployment_max = replicas + max_surge(deployment)
    before = go_int(annotations_of(rs).get(MAX_REPLICAS_ANNOTATION))
    if not before:
        before = _status(dict(deployment), "replicas")
        if before == 0:
            return 0
    return _round_half_away(spec_replicas(rs) * deployment_max / before) - spec_replicas(rs)


def proportion(rs: Obj | None, deployment: Mapping[str, Any], to_add: int, added: int) -> int:
    """``GetProportion``: ``rs``'s share of ``to_add`` pods, ``added`` of them already given."""
    if rs is None or spec_replicas(rs) == 0 or to_add == 0 or to_add == added:
        return 0
    fraction = replica_set_fraction(rs, deployment)
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


# -- annotations ------------------------------------------------------------------------
def set_replicas_annotations(rs: Obj, desired: int, maximum: int) -> bool:
    """``SetReplicasAnnotations`` on ``rs`` (a copy the caller owns); True if changed."""
    meta = rs.setdefault("metadata", {})
    current = dict(meta.get("annotations") or {})
    wanted = {**current, DESIRED_REPLICAS_ANNOTATION: str(desired), MAX_REPLICAS_ANNOTATION: str(maximum)}
    meta["annotations"] = wanted
    return wanted != current


def replicas_annotations_need_update(rs: Mapping[str, Any], desired: int, maximum: int) -> bool:
    found = annotations_of(rs)
    return found.get(DESIRED_REPLICAS_ANNOTATION) != str(desired) or found.get(MAX_REPLICAS_ANNOTATION) != str(maximum)


def copy_deployment_annotations(deployment: Mapping[str, Any], rs: Obj) -> bool:
    """``copyDeploymentAnnotationsToReplicaSet`` onto ``rs`` (the caller's copy)."""
    meta = rs.setdefault("metadata", {})
    current = dict(meta.get("annotations") or {})
    merged = dict(current)
    for key, value in annotations_of(deployment).items():
        if key not in ANNOTATIONS_TO_SKIP:
            merged[key] = value
    meta["annotations"] = merged
    return merged != current


def _appended_history(history: str, old_revision: str, limit_chars: int) -> str | None:
    """The revision-history annotation with ``old_revision`` appended, oldest entries
    dropped to stay within ``limit_chars``; None when even that cannot fit."""
    if not history:
        return old_revision
    entries = history.split(",")
    total = len(history) + len(old_revision) + 1
    start = 0
    while total > limit_chars and start < len(entries):
        total -= len(entries[start]) + 1
        start += 1
    return ",".join(entries[start:] + [old_revision]) if total <= limit_chars else None


def set_new_rs_annotations(deployment: Mapping[str, Any], rs: Obj, new_revision: int, exists: bool,
                           limit_chars: int = MAX_REVISION_HISTORY_CHARS) -> bool:
    """``SetNewReplicaSetAnnotations`` on ``rs`` (the caller's copy): the Deployment's
    annotations, the revision raised to ``new_revision`` (a rolled-back-to ReplicaSet keeps
    its old numbers in revision-history), and for a new ReplicaSet the replica annotations."""
    changed = copy_deployment_annotations(deployment, rs)
    found = rs["metadata"]["annotations"]
    old_text = found.get(REVISION_ANNOTATION)
    old_revision = 0 if not old_text else go_int(old_text)
    if old_revision is None:
        return False
    if old_revision < new_revision:
        found[REVISION_ANNOTATION] = str(new_revision)
        changed = True
        if old_text is not None:
            history = _appended_history(found.get(REVISION_HISTORY_ANNOTATION) or "", old_text, limit_chars)
            if history is not None:
                found[REVISION_HISTORY_ANNOTATION] = history
    if not exists:
        replicas = spec_replicas(deployment)
        changed = set_replicas_annotations(rs, replicas, replicas + max_surge(deployment)) or changed
    return changed
