"""The taint eviction controller ("taint manager") on the engine.

A pod on a node with NoExecute taints is deleted when its tolerations run out: at once
when a taint is not tolerated, ``tolerationSeconds`` after the taint appeared when it is
(the minimum over the taints), never when a matching toleration has no seconds. A
scheduled deletion is cancelled when the taint goes, the pod gains a toleration, or the
pod leaves. Deleting marks the pod with the ``DisruptionTarget`` condition and records
the upstream ``TaintManagerEviction`` events. The timing rules are the pure functions in
:mod:`fakekube.controllers.nodelifecycle.tolerations`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Iterable

from fakekube.api.verbs.deletion import DeleteOptions
from fakekube.api.registry import STATUS
from fakekube.clock import Timer
from fakekube.controllers.common import INTERNAL, NODES, PODS, pods_on_node, with_disruption_target
from fakekube.controllers.events import record_event
from fakekube.controllers.nodelifecycle import events as texts
from fakekube.clock import parse_time
from fakekube.controllers.nodelifecycle.taints import noexecute_taints
from fakekube.controllers.nodelifecycle.tolerations import eviction_time, min_toleration_s
from fakekube.engine import Context
from fakekube.store import DELETED, Change

Obj = dict[str, Any]


class TaintEvictionController:
    """Deletes pods whose tolerations of their node's NoExecute taints ran out."""

    name = "taint-eviction"
    resources = (NODES, PODS)

    def __init__(self) -> None:
        self._scheduled: dict[str, tuple[Timer, datetime]] = {}

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
            node = ctx.api.store.get(NODES, ("", rest))
            for pod in pods_on_node(ctx.api.store, rest):
                self._process(pod, node, ctx)
            return
        namespace, name = rest.split("/", 1)
        pod = ctx.api.store.get(PODS, (namespace, name))
        if pod is None:
            self._cancel(f"{namespace}/{name}", None, ctx)
            return
        node_name = (pod.get("spec") or {}).get("nodeName")
        self._process(pod, ctx.api.store.get(NODES, ("", node_name)) if node_name else None, ctx)

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
        scheduled = self._scheduled.get(pod_key)
        if scheduled is None or scheduled[1] != due:
            if scheduled is not None:
                scheduled[0].cancel()
            timer = ctx.engine.call_later((due - ctx.now).total_seconds(), self.name, f"pod/{pod_key}")
            self._scheduled[pod_key] = (timer, due)

    def _cancel(self, pod_key: str, pod: Obj | None, ctx: Context) -> None:
        scheduled = self._scheduled.pop(pod_key, None)
        if scheduled is None:
            return
        scheduled[0].cancel()
        if pod is not None and not pod["metadata"].get("deletionTimestamp"):
            namespace, name = pod_key.split("/", 1)
            text = texts.taint_eviction_cancelled(namespace, name)
            record_event(ctx.api, ctx.now, pod, "Pod", text.type, text.reason, text.message,
                         texts.TAINT_EVICTION_CONTROLLER)

    def _evict(self, pod: Obj, ctx: Context) -> None:
        meta = pod["metadata"]
        self._scheduled.pop(f"{meta['namespace']}/{meta['name']}", None)
        rt = ctx.api.registry.lookup("", "v1", "pods")
        text = texts.taint_eviction_marked(meta["namespace"], meta["name"])
        record_event(ctx.api, ctx.now, pod, "Pod", text.type, text.reason, text.message,
                     texts.TAINT_EVICTION_CONTROLLER)
        ctx.api.update(rt, meta["namespace"], meta["name"], with_disruption_target(pod, ctx.now, texts.DELETION_BY_TAINT_MANAGER_REASON,
                                              texts.DELETION_BY_TAINT_MANAGER_MESSAGE), INTERNAL, STATUS)
        ctx.api.delete(rt, meta["namespace"], meta["name"], DeleteOptions())


def _noexecute(node: Obj | None) -> list:
    return noexecute_taints(((node or {}).get("spec") or {}).get("taints"))
