"""The node lifecycle controller on the engine: upstream's monitor loop, on virtual time.

Every ``monitor_period_s`` (5 s) one pass looks at every node, in name order:

1. health — a node whose Lease and Ready heartbeat are older than the grace period
   (40 s) gets all its conditions set Unknown (``NodeStatusUnknown``); when Ready leaves
   True its pods' Ready condition is set False and NodeNotReady events are recorded;
2. NoSchedule taints follow the node's conditions and ``spec.unschedulable``;
3. the NoExecute ``not-ready``/``unreachable`` taint follows the Ready status the pass
   *observed* (as upstream: one period after the Unknown mark), through the zone's
   rate-limited tainting queue (0.1 nodes/s);
4. zone states are recomputed and each zone's tainting rate set from them.

The decisions themselves are the pure functions of this package; this module reads the
store, applies them through the apiserver and keeps the per-node bookkeeping.
Simplification: NoSchedule taints are applied by the monitor pass (at most one period
late) rather than by upstream's separate event-driven worker.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import Any, Iterable

from fakekube.api.jsonutil import deep_copy
from fakekube.api.registry import STATUS
from fakekube.controllers.common import INTERNAL, NODES, pods_on_node
from fakekube.controllers.events import record_event
from fakekube.controllers.nodelifecycle import events as texts
from fakekube.clock import parse_time
from fakekube.controllers.nodelifecycle.config import NodeLifecycleConfig
from fakekube.controllers.nodelifecycle.health import (
    NodeHealth, check_node_health, condition_status, pod_conditions_not_ready,
)
from fakekube.controllers.nodelifecycle.ratelimiter import RateLimitedTimedQueue, TimedValue
from fakekube.controllers.nodelifecycle.taints import (
    NoExecuteAction, has_taint, noexecute_decision, noexecute_swap_for, noexecute_taints, noschedule_diff, swap_taints,
)
from fakekube.controllers.nodelifecycle.zones import (
    ZoneState, excluded_from_disruption_checks, handle_disruption, zone_key,
)
from fakekube.engine import Context
from fakekube.store import ADDED, Change

Obj = dict[str, Any]
LEASES = ("coordination.k8s.io", "leases")

MONITOR = "monitor"
TAINT = "taint"


class NodeLifecycleController:
    """Node health, condition taints and zone-rate-limited NoExecute tainting."""

    name = "node-lifecycle"
    resources = (NODES,)

    def __init__(self, config: NodeLifecycleConfig = NodeLifecycleConfig()) -> None:
        self.config = config
        self._health: dict[str, NodeHealth] = {}
        self._zone_states: dict[str, ZoneState] = {}
        self._queues: dict[str, RateLimitedTimedQueue] = {}
        self._looping = False

    def keys_for(self, change: Change) -> Iterable[str]:
        """The first node starts the periodic pass; after that it runs on its own timer."""
        return [MONITOR] if change.type == ADDED and not self._looping else []

    def reconcile(self, key: str, ctx: Context) -> None:
        if key == MONITOR:
            self._looping = True
            self._monitor(ctx)
            ctx.requeue_after(self.config.monitor_period_s)
        self._tainting_pass(ctx)

    # -- the monitor pass ----------------------------------------------------------
    def _monitor(self, ctx: Context) -> None:
        statuses: dict[str, list[str | None]] = defaultdict(list)
        nodes, _ = ctx.api.store.list(NODES)
        for node in nodes:
            zone, ready = self._check_node(node, ctx)
            if ready is not _SKIP:
                statuses[zone].append(ready)
        self._handle_disruption(dict(statuses), ctx)

    def _check_node(self, node: Obj, ctx: Context) -> tuple[str, Any]:
        name = node["metadata"]["name"]
        lease = ctx.api.store.get(LEASES, ("kube-node-lease", name))
        renew = parse_time(((lease or {}).get("spec") or {}).get("renewTime"))
        check = check_node_health(node, renew, self._health.get(name), ctx.now, self.config)
        self._health[name] = check.health
        if check.new_conditions is not None:
            node = self._write_conditions(node, check.new_conditions, ctx)
        if check.became_not_ready:
            self._node_became_not_ready(node, ctx)
        node = self._apply_noschedule(node, ctx)
        zone = zone_key(node)
        self._apply_noexecute(node, condition_status(check.observed_ready), zone, ctx)
        ready = _SKIP if excluded_from_disruption_checks(node) else condition_status(check.current_ready)
        return zone, ready

    def _node_became_not_ready(self, node: Obj, ctx: Context) -> None:
        name = node["metadata"]["name"]
        text = texts.node_status_change(name)
        record_event(ctx.api, ctx.now, node, "Node", text.type, text.reason, text.message, texts.NODE_CONTROLLER)
        pods_rt = ctx.api.registry.lookup("", "v1", "pods")
        for pod in pods_on_node(ctx.api.store, node["metadata"]["name"]):
            conditions = pod_conditions_not_ready(pod, ctx.now)
            if conditions is None:
                continue
            status = dict(pod.get("status") or {}, conditions=conditions)
            meta = pod["metadata"]
            ctx.api.update(pods_rt, meta["namespace"], meta["name"], dict(deep_copy(pod), status=status),
                           INTERNAL, STATUS)
            text = texts.pod_node_not_ready()
            record_event(ctx.api, ctx.now, pod, "Pod", text.type, text.reason, text.message, texts.NODE_CONTROLLER)

    # -- taints --------------------------------------------------------------------
    def _apply_noschedule(self, node: Obj, ctx: Context) -> Obj:
        to_add, to_remove = noschedule_diff(node)
        if not to_add and not to_remove:
            return node
        return self._write_taints(node, swap_taints(_taints(node), to_add, to_remove, ctx.now), ctx)

    def _apply_noexecute(self, node: Obj, observed: str | None, zone: str, ctx: Context) -> None:
        name = node["metadata"]["name"]
        decision = noexecute_decision(observed, _taints(node))
        queue = self._queue(zone)
        if decision.action is NoExecuteAction.SWAP_NOW:
            self._write_taints(node, swap_taints(_taints(node), decision.to_add, decision.to_remove, ctx.now), ctx)
        elif decision.action is NoExecuteAction.QUEUE:
            if decision.requeue:
                queue.remove(name)
            queue.add(name, node["metadata"].get("uid"), ctx.now.timestamp())
        elif decision.action is NoExecuteAction.MARK_REACHABLE:
            queue.remove(name)
            if any(has_taint(_taints(node), t) for t in decision.to_remove):
                self._write_taints(node, swap_taints(_taints(node), (), decision.to_remove, ctx.now), ctx)

    def _tainting_pass(self, ctx: Context) -> None:
        """Taint queued nodes as each zone's rate allows, then wake when the next is due."""
        now_s = ctx.now.timestamp()
        for zone in sorted(self._queues):
            self._queues[zone].try_process(now_s, lambda item: self._taint_queued(item, ctx))
        due = [d for q in self._queues.values() if (d := q.next_due_s()) is not None]
        if due:
            ctx.engine.call_later(max(0.0, min(due) - now_s), self.name, TAINT)

    def _taint_queued(self, item: TimedValue, ctx: Context) -> tuple[bool, float]:
        node = ctx.api.store.get(NODES, ("", item.value))
        if node is None:
            return True, 0.0
        ready = next((c for c in (node.get("status") or {}).get("conditions", []) if c.get("type") == "Ready"), None)
        swap = noexecute_swap_for(condition_status(ready))
        if swap is not None:
            wanted, opposite = swap
            self._write_taints(node, swap_taints(_taints(node), (wanted,), (opposite,), ctx.now), ctx)
        return True, 0.0

    # -- zones -----------------------------------------------------------------------
    def _handle_disruption(self, statuses: dict[str, list[str | None]], ctx: Context) -> None:
        decision = handle_disruption(self._zone_states, statuses, self.config)
        now_s = ctx.now.timestamp()
        for zone, rate in decision.rates_per_s.items():
            self._queue(zone).swap_rate(rate, now_s)
        if decision.mark_all_nodes_reachable:
            self._mark_all_reachable(ctx)
        if decision.reset_probe_timestamps:
            self._health = {n: replace(h, probe_timestamp=ctx.now, ready_transition_timestamp=ctx.now)
                            for n, h in self._health.items()}
        self._zone_states = dict(decision.zone_states)

    def _mark_all_reachable(self, ctx: Context) -> None:
        for queue in self._queues.values():
            queue.clear()
        nodes, _ = ctx.api.store.list(NODES)
        for node in nodes:
            controlled = [t for t in noexecute_taints(_taints(node)) if t.get("key") in _NOEXECUTE_KEYS]
            if controlled:
                self._write_taints(node, swap_taints(_taints(node), (), controlled, ctx.now), ctx)

    def _queue(self, zone: str) -> RateLimitedTimedQueue:
        if zone not in self._queues:
            self._queues[zone] = RateLimitedTimedQueue(self.config.eviction_rate_per_s, self.config.eviction_burst,
                                                       self.config.max_queued_nodes_per_zone)
        return self._queues[zone]

    # -- writes ----------------------------------------------------------------------
    def _write_conditions(self, node: Obj, conditions: list, ctx: Context) -> Obj:
        rt = ctx.api.registry.lookup("", "v1", "nodes")
        status = dict(node.get("status") or {}, conditions=conditions)
        ctx.api.update(rt, "", node["metadata"]["name"], dict(deep_copy(node), status=status), INTERNAL, STATUS)
        return ctx.api.store.get(NODES, ("", node["metadata"]["name"])) or node

    def _write_taints(self, node: Obj, taints: list, ctx: Context) -> Obj:
        rt = ctx.api.registry.lookup("", "v1", "nodes")
        updated = deep_copy(node)
        updated["metadata"].pop("resourceVersion", None)
        spec = updated.setdefault("spec", {})
        if taints:
            spec["taints"] = taints
        else:
            spec.pop("taints", None)
        ctx.api.update(rt, "", node["metadata"]["name"], updated, INTERNAL)
        return ctx.api.store.get(NODES, ("", node["metadata"]["name"])) or node


_SKIP = object()
_NOEXECUTE_KEYS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


def _taints(node: Obj) -> list:
    return list((node.get("spec") or {}).get("taints") or [])

