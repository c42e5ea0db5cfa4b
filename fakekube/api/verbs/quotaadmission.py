"""The LimitRanger and ResourceQuota admission plugins: upstream's
``plugin/pkg/admission/limitranger`` and ``apiserver/pkg/admission/plugin/resourcequota``
over the rules in :mod:`fakekube.objects.limitranges` and :mod:`fakekube.objects.quota`.

Every write passes here, so a namespace without LimitRanges or ResourceQuotas costs one
keyed slice of the store (a bisect), never a scan. Refusals are upstream's 403 Forbidden,
``<resource> "<name>" is forbidden: <why>``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fakekube.api.machinery import errors
from fakekube.api.registry import ResourceType, WriteContext
from fakekube.objects import limitranges, quota
from fakekube.objects import resourcelist as rl
from fakekube.objects.kinds import PERSISTENT_VOLUME_CLAIMS, PODS, Resource
from fakekube.store import Store

Obj = dict[str, Any]

LIMIT_RANGES = Resource("", "limitranges")
RESOURCE_QUOTAS = quota.RESOURCE_QUOTAS


def _namespace(obj: Obj) -> str:
    return (obj.get("metadata") or {}).get("namespace") or ""


def _forbidden(rt: ResourceType, obj: Obj, why: str) -> errors.ApiError:
    """``admission.NewForbidden``: names the object (its generated name exists by validation)."""
    meta = obj.get("metadata") or {}
    return errors.forbidden_error(rt.group, rt.plural, meta.get("name") or meta.get("generateName") or "Unknown", why)


def limit_ranger_defaults(rt: ResourceType, obj: Obj, ctx: WriteContext) -> None:
    """LimitRanger's mutating half, on pod creates (upstream skips pod updates: containers
    cannot change): each LimitRange of the namespace, in name order, fills its defaults."""
    if rt.key != PODS:
        return
    for limit_range in ctx.store.list_objects(LIMIT_RANGES.group, LIMIT_RANGES.plural, _namespace(obj)):
        limitranges.apply_defaults(obj, limit_range)


def limit_ranger_check(rt: ResourceType, obj: Obj, old: Obj | None, store: Store, now: datetime,
                       dry_run: bool) -> None:
    """LimitRanger's validating half: pod creates, claim creates and updates (not of a claim
    already being deleted). The first LimitRange (by name) with problems refuses the write
    with all of its problems, as ``runLimitFunc`` returns on the first."""
    if not ((rt.key == PODS and old is None) or rt.key == PERSISTENT_VOLUME_CLAIMS):
        return
    if old is not None and (old.get("metadata") or {}).get("deletionTimestamp"):
        return
    check = limitranges.pod_problems if rt.key == PODS else limitranges.pvc_problems
    for limit_range in store.list(LIMIT_RANGES, _namespace(obj))[0]:
        problems = check(obj, limit_range)
        if problems:
            raise _forbidden(rt, obj, limitranges.aggregate(problems))


def resource_quota_check(rt: ResourceType, obj: Obj, old: Obj | None, store: Store, now: datetime,
                         dry_run: bool) -> None:
    """ResourceQuota: charge a create (or an update of a service or claim) to every quota of
    its namespace that tracks it, refusing it when one would be exceeded; the quotas'
    ``status.used`` is written before the object (not for a dry run), as upstream's
    admission updates them first."""
    namespace = _namespace(obj)
    if not rt.namespaced or not namespace:
        return
    resource = Resource(rt.group, rt.plural)
    if old is not None and resource not in quota.UPDATE_CHARGED:
        return
    quotas = store.list(RESOURCE_QUOTAS, namespace)[0]
    if not quotas:
        return
    try:
        charged = quota.charge(resource, quotas, obj, old, now)
    except quota.QuotaRefused as refused:
        raise _forbidden(rt, obj, str(refused)) from None
    if dry_run:
        return
    for resource_quota, used in charged:
        status = dict(resource_quota.get("status") or {}, used=rl.to_object(used))
        store.replace(RESOURCE_QUOTAS, dict(resource_quota, status=status))
