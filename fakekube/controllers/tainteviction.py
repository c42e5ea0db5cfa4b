"""The taint eviction controller ("taint manager") on the engine.

A pod on a node with NoExecute taints is deleted when its tolerations run out: at once
when a taint is not tolerated, ``tolerationSeconds`` after the taint appeared when it is
(the minimum over the taints), never when a matching toleration has no seconds. A
scheduled deletion is cancelled when the taint goes, the pod gains a toleration, or the
pod leaves. Deleting marks the pod with the ``DisruptionTarget`` condition and records
the upstream ``TaintManagerEviction`` events. The timing rules are the pure functions in
:mod:`fakekube.objects.tolerations`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Iterable

from fakekube.clock import parse_time
from fakekube.controllers.nodelifecycle import events as texts
from fakekube.engine import Context
from fakekube.objects.indexes import POD_NODE_NAME, pod_node_name
from fakekube.objects.pods import DISRUPTION_TARGET, with_disruption_target
from fakekube.objects.kinds import NODES, PODS
from fakekube.objects.taints import noexecute_taints
from fakekube.objects.tolerations import eviction_time, min_toleration_s
from fakekube.store import DELETED, Change

Obj = dict[str, Any]


class TaintEvictionController:
    """Deletes pods whose tolerations of their node's NoExecute taints ran out."""

    name = "taint-eviction-controller"
    resources = (NODES, PODS)
    #: A node heartbeat keeps its NoExecute taints: no key (engine/routing.py).
    keyless_heartbeats = True
    indexes = ((PODS, POD_NODE_NAME, pod_node_name),)

    def __init__(self) -> None:
        #: Pod key → when its eviction is due (its timer is the runtime's, at most one per key).
        self._scheduled: dict[str, datetime] = {}

    def keys_for(self, change: Change) -> Iterable[str]:
        """A node matters only when its NoExecute taints change (upstream NodeUpdated compares
        them): a status heartbeat must not revisit every pod on the node."""
        if (change.group, change.resource) == NODES:
            if change.type == DELETED or _noexecute(change.obj) == _noexecute(change.prev):
                return []
            return [f"node/{change.name}"]
        return [f"pod/{change.namespace}/{change.name}"]

    def reconcile(self, key: str, ctx: Context) -> None:
        kind, _, rest = key.partition("/")
        if kind == "node":
            node = ctx.get(NODES, rest)
            for bound in ctx.by_index(PODS, POD_NODE_NAME, rest):
                self._process(bound, node, ctx)
            return
        namespace, name = rest.split("/", 1)
        pod = ctx.get(PODS, name, namespace)
        if pod is None:
            self._cancel(f"{namespace}/{name}", None, ctx)
            return
        node_name = (pod.get("spec") or {}).get("nodeName")
        self._process(pod, ctx.get(NODES, node_name) if node_name else None, ctx)

    def _process(self, pod: Obj, node: Obj | None, ctx: Context) -> None:
        meta = pod["metadata"]
        pod_key = f"{meta['namespace']}/{meta['name']}"
        taints = noexecute_taints(((node or {}).get("spec") or {}).get("taints"))
        if meta.get("deletionTimestamp") or not taints:
            self._cancel(pod_key, pod, ctx)
            return
        toleration_s = min_toleration_s((pod.get("spec") or {}).get("tolerations"), taints)
        if toleration_s is None:
            self._cancel(pod_key, pod, ctx)
            return
        added = min((parse_time(t.get("timeAdded")) or ctx.now) for t in taints)
        due = eviction_time(added, toleration_s) or ctx.now
        if due <= ctx.now:
            self._evict(pod, ctx)
            return
        if self._scheduled.get(pod_key) != due:
            ctx.cancel(f"pod/{pod_key}")  # a later due replaces an earlier one
            self._scheduled[pod_key] = due
        ctx.enqueue_at(f"pod/{pod_key}", due)

    def _cancel(self, pod_key: str, pod: Obj | None, ctx: Context) -> None:
        if self._scheduled.pop(pod_key, None) is None:
            return
        ctx.cancel(f"pod/{pod_key}")
        if pod is not None and not pod["metadata"].get("deletionTimestamp"):
            namespace, name = pod_key.split("/", 1)
            text = texts.taint_eviction_cancelled(namespace, name)
            ctx.record_event(pod, "Pod", text.type, text.reason, text.message, texts.TAINT_EVICTION_CONTROLLER)

    def _evict(self, pod: Obj, ctx: Context) -> None:
        meta = pod["metadata"]
        self._scheduled.pop(f"{meta['namespace']}/{meta['name']}", None)
        text = texts.taint_eviction_marked(meta["namespace"], meta["name"])
        ctx.record_event(pod, "Pod", text.type, text.reason, text.message, texts.TAINT_EVICTION_CONTROLLER)
        if not _has_disruption_target(pod):  # upstream patches only when UpdatePodCondition changed it
            ctx.client.update_status(PODS, with_disruption_target(
                pod, ctx.now, texts.DELETION_BY_TAINT_MANAGER_REASON, texts.DELETION_BY_TAINT_MANAGER_MESSAGE))
        ctx.client.delete(PODS, meta["name"], meta["namespace"])


def _noexecute(node: Obj | None) -> list:
    return noexecute_taints(((node or {}).get("spec") or {}).get("taints"))


def _has_disruption_target(pod: Obj) -> bool:
    """Does the pod already carry this controller's DisruptionTarget condition? (Writing it
    again would only move it: the kubelet keeps others' conditions first, and a retried
    eviction would then fight the kubelet over the order.)"""
    return any(c.get("type") == DISRUPTION_TARGET and c.get("status") == "True"
               and c.get("reason") == texts.DELETION_BY_TAINT_MANAGER_REASON
               and c.get("message") == texts.DELETION_BY_TAINT_MANAGER_MESSAGE
               for c in (pod.get("status") or {}).get("conditions") or [])
