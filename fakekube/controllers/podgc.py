"""The pod garbage collector: the four passes of kube-controller-manager 1.33's PodGC.

Upstream (``pkg/controller/podgc/gc_controller.go``) runs every 20 s (``wait.Until`` from
the controller's start) and, in this order:

1. **terminated pods** — when more pods than ``terminatedPodGCThreshold`` (12,500) are
   finished (any phase but Pending, Running and Unknown), the excess is force-deleted:
   kubelet-evicted pods (phase Failed, reason ``Evicted``) first, then the oldest by
   creation timestamp, names breaking ties; a threshold of 0 turns the pass off;
2. **terminating pods on out-of-service nodes** — a pod being deleted on a node that is
   not Ready and carries the ``node.kubernetes.io/out-of-service`` taint (any effect) is
   marked Failed and force-deleted (grace 0), in the same order;
3. **orphaned pods** — a pod bound to a node that does not exist puts that node in
   quarantine for 40 s (informers can lag); if it is still gone after that, each of its
   pods is marked Failed with the ``DisruptionTarget`` condition (reason
   ``DeletionByPodGC``, "PodGC: node no longer exists") and force-deleted. On one virtual
   clock: a node deleted at t=25 is noticed at the pass at 40 and its pods are deleted at
   the pass at 80;
4. **unscheduled terminating pods** — a pod being deleted that was never bound (held by
   a finalizer) is marked Failed and force-deleted at the next pass.

"Marked Failed" is a status write of phase Failed (with the condition, for orphans), made
only when the pod has not finished already; upstream adds no condition in passes 1, 2
and 4. A pod another pass (or client) removed first is skipped, as upstream ignores the
NotFound.

Upstream lists every pod on every pass; here store indexes (pods by node, finished pods,
pods being deleted by node) make a pass cost what it acts on, not the number of pods
(150,000 pods would otherwise cost a scan every 20 s). The quarantine keeps one deadline
per missing node name, dropped when it falls due.

A pass reads only pods, nodes, the quarantine and (through it) the time: after a pass that
wrote nothing and left the quarantine empty, the next is skipped as long as no pod or node
was written since (:meth:`PodGCController.quiet`; the engine's ``lazy_periodic``).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Iterable, Mapping, NamedTuple

from fakekube.api.machinery.errors import ApiError
from fakekube.engine import Context
from fakekube.objects.indexes import POD_NODE_NAME, pod_node_name
from fakekube.objects.kinds import NODES, PODS
from fakekube.objects.pods import PHASE_FAILED, PHASE_SUCCEEDED, pod_condition, with_disruption_target
from fakekube.objects.taints import TAINT_NODE_OUT_OF_SERVICE
from fakekube.store import Change

Obj = dict[str, Any]

GC = "gc"
#: Indexes of the pods the terminated and terminating passes act on.
TERMINATED_INDEX = "podgc.terminated"
TERMINATING_INDEX = "podgc.terminatingOn"
_TERMINATED = "terminated"
_UNSCHEDULED = "unscheduled"
_ON_NODE = "node:"
#: Phases of a pod that has not finished (anything else counts as terminated, as upstream).
_NOT_FINISHED = ("Pending", "Running", "Unknown")


class PodGCConfig(NamedTuple):
    """kube-controller-manager's pod GC settings: ``terminatedPodGCThreshold`` (its flag
    ``--terminated-pod-gc-threshold``, 12,500; 0 turns the pass off) and the timings
    (``gcCheckPeriod`` and the quarantine are constants upstream; settings here so a test
    can shorten them)."""

    period_s: float = 20.0
    quarantine_s: float = 40.0
    terminated_pod_threshold: int = 12500


def _terminated(pod: Obj) -> list[str]:
    """``isPodTerminated``: every phase but Pending, Running and Unknown."""
    return [] if (pod.get("status") or {}).get("phase") in _NOT_FINISHED else [_TERMINATED]


def _terminating_on(pod: Obj) -> list[str]:
    """A pod being deleted, filed under its node (or as unscheduled)."""
    if not (pod.get("metadata") or {}).get("deletionTimestamp"):
        return []
    node = (pod.get("spec") or {}).get("nodeName")
    return [_ON_NODE + node if isinstance(node, str) and node else _UNSCHEDULED]


class PodGCController:
    """Deletes finished pods past the threshold, terminating pods on out-of-service
    nodes, pods whose node is gone and unscheduled terminating pods."""

    name = "pod-garbage-collector-controller"
    resources = ()
    indexes = ((PODS, POD_NODE_NAME, pod_node_name), (PODS, TERMINATED_INDEX, _terminated),
               (PODS, TERMINATING_INDEX, _terminating_on))

    def __init__(self, config: PodGCConfig = PodGCConfig()) -> None:
        self.config = config
        self.periodic = ((GC, config.period_s),)
        self._quarantine: dict[str, datetime] = {}
        #: The resourceVersion before the last pass, when that pass wrote nothing and left
        #: the quarantine empty (None otherwise): from there on, only a pod or node write
        #: can give a pass something to do.
        self._idle_rv: int | None = None

    def keys_for(self, change: Change) -> Iterable[str]:
        return ()  # periodic only

    def quiet(self, key: str, ctx: Context) -> bool:
        """The last pass found nothing and no pod or node was written since: this one would
        find nothing either (with the quarantine empty, the time plays no part). The mark
        moves up to now, so the next question reads only the changes after this one."""
        if self._idle_rv is None:
            return False
        now_rv = ctx.resource_version
        if not ctx.untouched_since(self._idle_rv, (PODS, NODES)):
            return False
        self._idle_rv = now_rv
        return True

    def reconcile(self, key: str, ctx: Context) -> None:
        self._idle_rv, before = None, ctx.resource_version
        if self.config.terminated_pod_threshold > 0:
            self._gc_terminated(ctx)
        self._gc_terminating(ctx)
        self._gc_orphaned(ctx)
        for pod in ctx.by_index(PODS, TERMINATING_INDEX, _UNSCHEDULED):
            _mark_failed_and_delete(pod, ctx)
        if not self._quarantine and ctx.resource_version == before:
            self._idle_rv = before

    def _gc_terminated(self, ctx: Context) -> None:
        finished = ctx.by_index(PODS, TERMINATED_INDEX, _TERMINATED)
        excess = len(finished) - self.config.terminated_pod_threshold
        if excess > 0:
            for pod in sorted(finished, key=_deletion_order)[:excess]:
                _mark_failed_and_delete(pod, ctx)

    def _gc_terminating(self, ctx: Context) -> None:
        doomed: list[Obj] = []
        for value in ctx.index_values(PODS, TERMINATING_INDEX):
            node = ctx.get(NODES, value[len(_ON_NODE):]) if value.startswith(_ON_NODE) else None
            if node is not None and not _node_ready(node) and _out_of_service(node):
                doomed += ctx.by_index(PODS, TERMINATING_INDEX, value)
        for pod in sorted(doomed, key=_deletion_order):
            _mark_failed_and_delete(pod, ctx)

    def _gc_orphaned(self, ctx: Context) -> None:
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
                    _mark_failed_and_delete(pod, ctx, "PodGC: node no longer exists")


def _deletion_order(pod: Mapping[str, Any]) -> tuple[bool, str, str]:
    """``byEvictionAndCreationTimestamp``: kubelet-evicted pods first, then oldest, then by name."""
    status, meta = pod.get("status") or {}, pod.get("metadata") or {}
    evicted = status.get("phase") == PHASE_FAILED and status.get("reason") == "Evicted"
    return not evicted, meta.get("creationTimestamp") or "", meta.get("name") or ""


def _node_ready(node: Mapping[str, Any]) -> bool:
    """``nodeutil.IsNodeReady``: the Ready condition is True."""
    return (pod_condition(node, "Ready") or {}).get("status") == "True"


def _out_of_service(node: Mapping[str, Any]) -> bool:
    """``TaintKeyExists(taints, out-of-service)``: the key with any value and effect."""
    return any(t.get("key") == TAINT_NODE_OUT_OF_SERVICE for t in (node.get("spec") or {}).get("taints") or [])


def _mark_failed_and_delete(pod: Obj, ctx: Context, condition_message: str | None = None) -> None:
    """``markFailedAndDeletePod(WithCondition)``: phase Failed (with the DeletionByPodGC
    condition when a message is given) unless the pod already finished, then a delete with
    grace 0. A pod that went meanwhile is skipped (upstream logs the NotFound)."""
    meta = pod["metadata"]
    try:
        if (pod.get("status") or {}).get("phase") not in (PHASE_SUCCEEDED, PHASE_FAILED):
            if condition_message is None:
                failed: Obj = dict(pod, status=dict(pod.get("status") or {}, phase=PHASE_FAILED))
            else:
                failed = with_disruption_target(pod, ctx.now, "DeletionByPodGC", condition_message, fail=True)
            failed["metadata"] = {k: v for k, v in meta.items() if k != "resourceVersion"}
            ctx.client.update_status(PODS, failed)
        ctx.client.delete(PODS, meta["name"], meta["namespace"], grace_period_s=0)
    except ApiError as failure:
        if failure.code != 404:
            raise
