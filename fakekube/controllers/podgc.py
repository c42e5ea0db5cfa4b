"""The pod garbage collector's orphan rule: pods on a node that is gone are deleted.

Upstream's PodGC runs every 20 s. A pod bound to a node that does not exist puts that
node in quarantine for 40 s (informers can lag); if it is still gone after that, each of
its pods is marked ``Failed`` with the ``DisruptionTarget`` condition (reason
``DeletionByPodGC``) and force-deleted (grace 0). On one virtual clock: a node deleted
at t=25 is noticed at the pass at 40 and its pods are deleted at the pass at 80.
Not modelled yet: the terminated-pod threshold and unscheduled terminating pods.

Upstream lists every pod on every pass; here the store's pods-by-node index makes a
pass cost the number of nodes with pods, not the number of pods (150,000 pods would
otherwise cost a scan every 20 s).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Iterable

from fakekube.api.verbs.deletion import DeleteOptions
from fakekube.api.registry import STATUS
from fakekube.controllers.common import INTERNAL, NODE_NAME, NODES, PODS, pods_on_node, with_disruption_target
from fakekube.engine import Context
from fakekube.store import ADDED, Change

Obj = dict[str, Any]

GC_PERIOD_S = 20.0
QUARANTINE_S = 40.0
GC = "gc"


class PodGCController:
    """Deletes pods whose node no longer exists, after upstream's quarantine."""

    name = "pod-gc"
    resources = (NODES,)

    def __init__(self, period_s: float = GC_PERIOD_S, quarantine_s: float = QUARANTINE_S) -> None:
        self.period_s = period_s
        self.quarantine_s = quarantine_s
        self._quarantine: dict[str, datetime] = {}
        self._looping = False

    def keys_for(self, change: Change) -> Iterable[str]:
        """The first node starts the periodic pass; after that it runs on its own timer."""
        return [GC] if change.type == ADDED and not self._looping else []

    def reconcile(self, key: str, ctx: Context) -> None:
        self._looping = True
        self._collect_orphans(ctx)
        ctx.requeue_after(self.period_s)

    def _collect_orphans(self, ctx: Context) -> None:
        store = ctx.api.store
        with store.lock:
            missing = [node for node in store.field_values(PODS, NODE_NAME) if store.get(NODES, ("", node)) is None]
        for node in missing:
            if node not in self._quarantine:
                self._quarantine[node] = ctx.now + timedelta(seconds=self.quarantine_s)
        for node in sorted(self._quarantine):
            if self._quarantine[node] > ctx.now:
                continue
            del self._quarantine[node]
            if ctx.api.store.get(NODES, ("", node)) is None:
                for pod in pods_on_node(ctx.api.store, node):
                    self._delete(pod, ctx)

    def _delete(self, pod: Obj, ctx: Context) -> None:
        meta = pod["metadata"]
        rt = ctx.api.registry.lookup("", "v1", "pods")
        if ctx.api.store.get(PODS, (meta["namespace"], meta["name"])) is None:
            return
        failed = with_disruption_target(pod, ctx.now, "DeletionByPodGC", "PodGC: node no longer exists", fail=True)
        failed["metadata"].pop("resourceVersion", None)
        ctx.api.update(rt, meta["namespace"], meta["name"], failed, INTERNAL, STATUS)
        ctx.api.delete(rt, meta["namespace"], meta["name"], DeleteOptions(grace_period_s=0))

