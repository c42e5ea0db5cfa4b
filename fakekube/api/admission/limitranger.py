"""LimitRanger (plugin/pkg/admission/limitranger), over the rules in
:mod:`fakekube.objects.limitranges`.

Its mutating half fills a new pod's container defaults from each LimitRange of the
namespace, in name order; its validating half checks min, max and ratios for pod creates
and claim creates and updates (not of a claim already being deleted). Upstream skips pod
updates: containers cannot change. The first LimitRange (by name) with problems refuses
the write with all of its problems, as ``runLimitFunc`` returns on the first. A namespace
without LimitRanges costs one keyed slice of the store (a bisect), never a scan.
"""

from __future__ import annotations

from fakekube.api.admission.attributes import CREATE, UPDATE, Attributes
from fakekube.api.admission.interfaces import Handler, PluginContext
from fakekube.objects import limitranges
from fakekube.objects.kinds import PERSISTENT_VOLUME_CLAIMS, PODS, Resource
from fakekube.store import Store

LIMIT_RANGES = Resource("", "limitranges")


class LimitRanger(Handler):
    name = "LimitRanger"
    operations = frozenset((CREATE, UPDATE))
    resources = {"admit": frozenset((PODS,)), "validate": frozenset((PODS, PERSISTENT_VOLUME_CLAIMS))}

    def __init__(self, store: Store) -> None:
        self.store = store

    def admit(self, a: Attributes) -> None:
        if a.rt.key != PODS or a.operation != CREATE or a.subresource or a.obj is None:
            return
        for limit_range in self.store.list(LIMIT_RANGES, a.namespace)[0]:
            limitranges.apply_defaults(a.obj, limit_range)

    def validate(self, a: Attributes) -> None:
        if a.subresource or a.obj is None:
            return
        if not ((a.rt.key == PODS and a.operation == CREATE) or a.rt.key == PERSISTENT_VOLUME_CLAIMS):
            return
        if a.old is not None and (a.old.get("metadata") or {}).get("deletionTimestamp"):
            return
        check = limitranges.pod_problems if a.rt.key == PODS else limitranges.pvc_problems
        for limit_range in self.store.list(LIMIT_RANGES, a.namespace)[0]:
            problems = check(a.obj, limit_range)
            if problems:
                raise a.forbidden(limitranges.aggregate(problems))


def new(context: PluginContext) -> LimitRanger:
    return LimitRanger(context.store)
