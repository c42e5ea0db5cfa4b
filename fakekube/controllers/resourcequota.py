"""The ResourceQuota controller (upstream ``pkg/controller/resourcequota``, 1.33): keeps each
quota's ``status.hard`` equal to ``spec.hard`` and ``status.used`` equal to what the
namespace's objects cost (:func:`fakekube.objects.quota.calculate_used`), so ``kubectl
describe quota`` shows Used/Hard and quota admission (fakekube/api/admission/resourcequota.py)
has a usage to charge against.

A quota is synced when it is created or its ``spec.hard`` changes, when an object of a tracked resource in
its namespace is deleted or changes what it costs (a pod turning Succeeded/Failed or
starting to terminate, a service's type or ports, a claim's size) — upstream's
replenishment — and every 5 minutes (``--resource-quota-sync-period``). Creates are not
watched: admission has already charged them.

Work keys: ``<namespace>/<name>`` for one quota, ``ns:<namespace>`` for every quota of a
namespace, ``resync`` for every quota.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from fakekube.engine import Context
from fakekube.objects import quota
from fakekube.objects import resourcelist as rl
from fakekube.objects.kinds import (CRON_JOBS, DAEMON_SETS, DEPLOYMENTS, JOBS, PERSISTENT_VOLUME_CLAIMS, PODS,
                                    REPLICA_SETS, SERVICES, STATEFUL_SETS, Resource)
from fakekube.store import Change

Obj = dict[str, Any]

RESOURCE_QUOTAS = quota.RESOURCE_QUOTAS
NAMESPACE_PREFIX = "ns:"
RESYNC = "resync"
#: ``--resource-quota-sync-period``'s default.
RESYNC_PERIOD_S = 300.0
#: Resources whose deletions and changes replenish quotas at once; other ``count/`` resources
#: are recounted at the next resync.
WATCHED: tuple[Resource, ...] = tuple(quota.LEGACY_COUNTS) + (
    DEPLOYMENTS, REPLICA_SETS, STATEFUL_SETS, DAEMON_SETS, JOBS, CRON_JOBS)


class ResourceQuotaController:
    """Recomputes ``status.used`` of the quotas whose namespace changed."""

    name = "resourcequota-controller"
    resources = WATCHED
    periodic = ((RESYNC, RESYNC_PERIOD_S),)

    # -- routing (pure) ------------------------------------------------------------------
    def keys_for(self, change: Change) -> Iterable[str]:
        resource = Resource(change.group, change.resource)
        if resource == RESOURCE_QUOTAS:
            if change.type == "DELETED" or (change.prev is not None and _hard(change.prev) == _hard(change.obj)):
                return []  # upstream's updateQuota: only a changed spec.hard (status writes are admission's)
            return [f"{change.namespace}/{change.name}"]
        if change.type == "DELETED" or (change.prev is not None and _cost_changed(resource, change.prev, change.obj)):
            return [NAMESPACE_PREFIX + change.namespace]
        return []

    # -- work ----------------------------------------------------------------------------
    def reconcile(self, key: str, ctx: Context) -> None:
        if key == RESYNC:
            quotas = ctx.list(RESOURCE_QUOTAS)
        elif key.startswith(NAMESPACE_PREFIX):
            quotas = ctx.list(RESOURCE_QUOTAS, key[len(NAMESPACE_PREFIX):])
        else:
            namespace, name = key.split("/", 1)
            found = ctx.get(RESOURCE_QUOTAS, name, namespace)
            quotas = [found] if found is not None else []
        for resource_quota in quotas:
            _sync(resource_quota, ctx)


def _cost_changed(resource: Resource, old: Obj, new: Obj) -> bool:
    """Whether an update can change what the object costs (upstream's monitors' update filters)."""
    if resource == PODS:
        return (_terminal(old) != _terminal(new)
                or bool(old["metadata"].get("deletionTimestamp")) != bool(new["metadata"].get("deletionTimestamp")))
    if resource == SERVICES:
        return quota.service_usage(old) != quota.service_usage(new)
    if resource == PERSISTENT_VOLUME_CLAIMS:
        return quota.pvc_usage(old) != quota.pvc_usage(new)
    return False


def _hard(resource_quota: Obj) -> Any:
    return (resource_quota.get("spec") or {}).get("hard")


def _terminal(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _counted_resources(hard: Mapping[str, Any]) -> list[Resource]:
    """The resources whose objects ``hard`` tracks, in a fixed order."""
    candidates = list(quota.LEGACY_COUNTS)
    for name in sorted(hard):
        counted = quota.tracked_resource(name)
        if counted is not None and counted not in candidates:
            candidates.append(counted)
    return [resource for resource in candidates if quota.matching_resources(resource, hard)]


def _sync(resource_quota: Obj, ctx: Context) -> None:
    """``syncResourceQuota``: hard from the spec, used recounted (names nothing counts keep
    their last value), masked to hard; written only when it changed."""
    meta = resource_quota["metadata"]
    status = resource_quota.get("status") or {}
    hard = rl.parse_list((resource_quota.get("spec") or {}).get("hard"))
    objects = {resource: ctx.list(resource, meta["namespace"]) for resource in _counted_resources(hard)}
    used = rl.parse_list(status.get("used"))
    used.update(quota.calculate_used(resource_quota, hard, objects, ctx.now))
    used = rl.mask(used, sorted(hard))
    old_hard, old_used = status.get("hard"), status.get("used")
    if (old_hard is not None and old_used is not None and rl.equal(hard, rl.parse_list(old_hard))
            and rl.equal(used, rl.parse_list(old_used))):
        return
    new_status = {"hard": rl.to_object(hard), "used": rl.to_object(used)}
    ctx.client.update_status(RESOURCE_QUOTAS, dict(resource_quota, status=new_status))
