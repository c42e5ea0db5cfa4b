"""ResourceQuota (k8s.io/apiserver/pkg/admission/plugin/resourcequota), over the rules in
:mod:`fakekube.objects.quota`; upstream runs it last, since it charges what it admits.

A create (or an update of a service or claim) is charged to every quota of its namespace
that tracks it, and refused with upstream's 403 when one would be exceeded; the quotas'
``status.used`` is written before the object (not for a dry run), as upstream's admission
updates them first. A namespace without quotas costs one keyed slice of the store.
Simplification: a create whose name is taken is not charged (upstream charges, then the
storage refuses it, and the quota controller's next recount gives the usage back).
"""

from __future__ import annotations

from typing import Any, Callable

from fakekube.api.admission.attributes import CREATE, UPDATE, Attributes
from fakekube.api.admission.interfaces import Handler, PluginContext
from fakekube.api.registry import STATUS, Registry, ResourceType
from fakekube.clock import VirtualClock
from fakekube.objects import quota
from fakekube.objects import resourcelist as rl
from fakekube.objects.kinds import Resource
from fakekube.store import Store

RESOURCE_QUOTAS = quota.RESOURCE_QUOTAS

Obj = dict[str, Any]


class ResourceQuota(Handler):
    name = "ResourceQuota"
    operations = frozenset((CREATE, UPDATE))

    def __init__(self, store: Store, clock: VirtualClock,
                 apiserver_write: Callable[[ResourceType, Obj, Obj, str], Obj] | None = None,
                 registry: Callable[[], Registry] | None = None) -> None:
        self.store = store
        self.clock = clock
        #: The charge is kube-apiserver's status write (managedFields: its Update entry).
        self._apiserver_write = apiserver_write
        self._registry = registry

    def validate(self, a: Attributes) -> None:
        if not a.rt.namespaced or not a.namespace or a.subresource or a.obj is None:
            return
        resource = Resource(a.rt.group, a.rt.plural)
        if a.old is not None and resource not in quota.UPDATE_CHARGED:
            return
        if not self.store.count(RESOURCE_QUOTAS):  # no quota anywhere (most clusters): nothing to charge
            return
        quotas = self.store.list(RESOURCE_QUOTAS, a.namespace)[0]
        if not quotas or (a.operation == CREATE and self._taken(a)):
            return
        try:
            charged = quota.charge(resource, quotas, a.obj, a.old, self.clock.now())
        except quota.QuotaRefused as refused:
            raise a.forbidden(str(refused)) from None
        if a.dry_run:
            return
        for resource_quota, used in charged:
            status = dict(resource_quota.get("status") or {}, used=rl.to_object(used))
            self.store.replace(RESOURCE_QUOTAS, self._charged(resource_quota, dict(resource_quota, status=status)))

    def _charged(self, stored: Obj, new: Obj) -> Obj:
        if self._apiserver_write is None or self._registry is None:
            return new
        rt = self._registry().by_group_resource(*RESOURCE_QUOTAS)
        return new if rt is None else self._apiserver_write(rt, stored, new, STATUS)

    def _taken(self, a: Attributes) -> bool:
        return self.store.get(a.rt.key, (a.namespace, a.name)) is not None


def new(context: PluginContext) -> ResourceQuota:
    return ResourceQuota(context.store, context.clock, context.apiserver_write, context.registry)
