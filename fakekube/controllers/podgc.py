"""The pod garbage collector's orphan rule: pods on a node that is gone are deleted.

Upstream's PodGC runs every 20 s (``wait.Until`` from the controller's start). A pod bound
to a node that does not exist puts that node in quarantine for 40 s (informers can lag);
if it is still gone after that, each of its pods is marked ``Failed`` with the
``DisruptionTarget`` condition (reason ``DeletionByPodGC``) and force-deleted (grace 0).
On one virtual clock: a node deleted at t=25 is noticed at the pass at 40 and its pods
are deleted at the pass at 80. Not modelled yet: the terminated-pod threshold and
unscheduled terminating pods.

Upstream lists every pod on every pass; here the pods-by-node index makes a pass cost
the number of nodes with pods, not the number of pods (150,000 pods would otherwise cost
a scan every 20 s).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Iterable

from fakekube.engine import Context
from fakekube.objects.indexes import POD_NODE_NAME, pod_node_name
from fakekube.objects.kinds import NODES, PODS
from fakekube.objects.pods import with_disruption_target
from fakekube.store import Change

Obj = dict[str, Any]

GC = "gc"


@dataclass(frozen=True)
class PodGCConfig:
    """kube-controller-manager's pod GC timings (``gcCheckPeriod`` and the quarantine are
    constants upstream; they are settings here so a test can shorten them)."""

    period_s: float = 20.0
    quarantine_s: float = 40.0


class PodGCController:
    """Deletes pods whose node no longer exists, after upstream's quarantine."""

    name = "pod-garbage-collector-controller"
    resources = ()
    indexes = ((PODS, POD_NODE_NAME, pod_node_name),)

    def __init__(self, config: PodGCConfig = PodGCConfig()) -> None:
        self.config = config
        self.periodic = ((GC, config.period_s),)
        self._quarantine: dict[str, datetime] = {}

    def keys_for(self, change: Change) -> Iterable[str]:
        return ()  # periodic only

    def reconcile(self, key: str, ctx: Context) -> None:
        with ctx.atomically():
            missing = [node for node in ctx.index_values(PODS, POD_NODE_NAME) if ctx.get(NODES, node) is None]
        for node in missing:
            self._quarantine.setdefault(node, ctx.now + timedelta(seconds=self.config.quarantine_s))
        for node in sorted(self._quarantine):
            if self._quarantine[node] > ctx.now:
                continue
            del self._quarantine[node]
            if ctx.get(NODES, node) is None:
                for pod in ctx.by_index(PODS, POD_NODE_NAME, node):
                    self._delete(pod, ctx)

    def _delete(self, pod: Obj, ctx: Context) -> None:
        meta = pod["metadata"]
        failed = with_disruption_target(pod, ctx.now, "DeletionByPodGC", "PodGC: node no longer exists", fail=True)
        failed["metadata"].pop("resourceVersion", None)
        ctx.client.update_status(PODS, failed)
        ctx.client.delete(PODS, meta["name"], meta["namespace"], grace_period_s=0)
