"""Deletion: preconditions, finalizers, propagation policy and graceful deletion.

An object with finalizers (or a delete that asks for foreground/orphan propagation,
which adds the matching finalizer) is only marked: ``deletionTimestamp`` is set and it
stays until an update removes its last finalizer. A pod bound to a node is deleted
gracefully: marked with ``deletionTimestamp = now + grace`` for its kubelet to finish.
Everything else is removed at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from fakekube.api import errors
from fakekube.api.registry import ResourceType
from fakekube.clock import format_rfc3339

Obj = dict[str, Any]

FOREGROUND = "Foreground"
BACKGROUND = "Background"
ORPHAN = "Orphan"
FOREGROUND_FINALIZER = "foregroundDeletion"
ORPHAN_FINALIZER = "orphan"

#: Types whose DELETE answers with the deleted object instead of a Status (upstream's
#: ReturnDeletedObject).
RETURNS_DELETED_OBJECT = {("", "pods"), ("", "services"), ("", "namespaces")}

#: Kubelet-less default grace for pods whose spec has none.
DEFAULT_POD_GRACE_S = 30


@dataclass(frozen=True)
class DeleteOptions:
    grace_period_s: int | None = None
    propagation_policy: str | None = None
    orphan_dependents: bool | None = None
    precondition_uid: str | None = None
    precondition_rv: str | None = None
    dry_run: bool = False

    @classmethod
    def parse(cls, body: Obj | None, query: dict[str, str]) -> "DeleteOptions":
        body = body or {}
        if not isinstance(body, dict):
            raise errors.bad_request("DeleteOptions must be an object")
        preconditions = body.get("preconditions") or {}
        grace = body.get("gracePeriodSeconds", query.get("gracePeriodSeconds"))
        dry_run = body.get("dryRun") or ([query["dryRun"]] if "dryRun" in query else [])
        options = cls(
            grace_period_s=_int_or_none(grace, "gracePeriodSeconds"),
            propagation_policy=body.get("propagationPolicy", query.get("propagationPolicy")),
            orphan_dependents=_bool_or_none(body.get("orphanDependents", query.get("orphanDependents"))),
            precondition_uid=preconditions.get("uid"),
            precondition_rv=preconditions.get("resourceVersion"),
            dry_run=_dry_run(dry_run),
        )
        options.validate()
        return options

    def validate(self) -> None:
        problems = []
        if self.propagation_policy is not None and self.propagation_policy not in (FOREGROUND, BACKGROUND, ORPHAN):
            problems.append(errors.not_supported("propagationPolicy", self.propagation_policy,
                                                 [FOREGROUND, BACKGROUND, ORPHAN]))
        if self.propagation_policy is not None and self.orphan_dependents is not None:
            problems.append(errors.invalid("propagationPolicy", self.propagation_policy,
                                           "orphanDependents and deletionPropagation cannot be both set"))
        if self.grace_period_s is not None and self.grace_period_s < 0:
            problems.append(errors.invalid("gracePeriodSeconds", self.grace_period_s, "must be greater than or equal to 0"))
        if problems:
            raise errors.invalid_object("meta.k8s.io", "DeleteOptions", "", problems)

    def finalizers_to_add(self) -> list[str]:
        if self.propagation_policy == FOREGROUND:
            return [FOREGROUND_FINALIZER]
        if self.propagation_policy == ORPHAN or self.orphan_dependents:
            return [ORPHAN_FINALIZER]
        return []


def _int_or_none(value: Any, name: str) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise errors.bad_request(f'invalid value for {name}: "{value}"') from None


def _bool_or_none(value: Any) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    return str(value).lower() == "true"


def _dry_run(values: Any) -> bool:
    values = values if isinstance(values, list) else [values]
    for value in values:
        if value != "All":
            raise errors.bad_request(f"dryRun: Unsupported value: \"{value}\": supported values: \"All\"")
    return bool(values)


def check_preconditions(rt: ResourceType, obj: Obj, options: DeleteOptions) -> None:
    meta = obj.get("metadata") or {}
    name = meta.get("name", "")
    if options.precondition_uid is not None and options.precondition_uid != meta.get("uid"):
        why = (f"Precondition failed: UID in precondition: {options.precondition_uid}, "
               f"UID in object meta: {meta.get('uid')}")
        raise errors.conflict(rt.group, rt.plural, name, why)
    if options.precondition_rv is not None and options.precondition_rv != meta.get("resourceVersion"):
        why = (f"Precondition failed: ResourceVersion in precondition: {options.precondition_rv}, "
               f"ResourceVersion in object meta: {meta.get('resourceVersion')}")
        raise errors.conflict(rt.group, rt.plural, name, why)


def pod_grace_period_s(pod: Obj, options: DeleteOptions) -> int:
    """How long a pod may take to stop; 0 means delete now (unscheduled or finished pods)."""
    spec = pod.get("spec") or {}
    phase = (pod.get("status") or {}).get("phase")
    if not spec.get("nodeName") or phase in ("Succeeded", "Failed"):
        return 0
    if options.grace_period_s is not None:
        return options.grace_period_s
    grace = spec.get("terminationGracePeriodSeconds")
    return DEFAULT_POD_GRACE_S if grace is None else int(grace)


def mark_for_deletion(rt: ResourceType, obj: Obj, options: DeleteOptions, now) -> Obj | None:
    """The marked copy of ``obj`` if it must linger, or None if it can be removed now."""
    meta = dict(obj.get("metadata") or {})
    finalizers = list(meta.get("finalizers") or [])
    for extra in options.finalizers_to_add():
        if extra not in finalizers:
            finalizers.append(extra)
    grace_s = pod_grace_period_s(obj, options) if rt.key == ("", "pods") else 0
    lingers = bool(finalizers) or grace_s > 0 or rt.key == ("", "namespaces")
    if not lingers:
        return None
    if meta.get("deletionTimestamp"):
        return _shorten_grace(obj, meta, grace_s, now, finalizers)
    meta["deletionTimestamp"] = format_rfc3339(now + timedelta(seconds=grace_s))
    meta["deletionGracePeriodSeconds"] = grace_s
    if finalizers:
        meta["finalizers"] = finalizers
    marked = dict(obj, metadata=meta)
    if rt.key == ("", "namespaces"):
        marked["status"] = dict(obj.get("status") or {}, phase="Terminating")
    return marked


def _shorten_grace(obj: Obj, meta: Obj, grace_s: int, now, finalizers: list[str]) -> Obj:
    """A second delete may shorten a pending grace period, never lengthen it."""
    current = meta.get("deletionGracePeriodSeconds")
    if current is not None and grace_s < current:
        meta["deletionTimestamp"] = format_rfc3339(now + timedelta(seconds=grace_s))
        meta["deletionGracePeriodSeconds"] = grace_s
    if finalizers:
        meta["finalizers"] = finalizers
    return dict(obj, metadata=meta)


def success_status(rt: ResourceType, obj: Obj) -> Obj:
    """The Status a DELETE returns for types that do not return the object."""
    meta = obj.get("metadata") or {}
    details: Obj = {"name": meta.get("name", "")}
    if rt.group:
        details["group"] = rt.group
    details["kind"] = rt.plural
    details["uid"] = meta.get("uid", "")
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}
