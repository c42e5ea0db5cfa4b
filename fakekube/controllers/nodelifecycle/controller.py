"""The node lifecycle controller on the engine: upstream's monitor loop, on virtual time.

Every ``monitor_period_s`` (5 s, from the controller's start) one pass looks at the
nodes, in name order — as upstream's looks at every node, but a node whose object is
unchanged since a check that changed nothing is only visited when its grace period runs
out (sightings.py: the deadline heap; ``quick_passes`` off checks every node every pass):

1. health — a node whose Lease and Ready heartbeat are older than the grace period
   (50 s since 1.32; 40 s before) gets all its conditions set Unknown
   (``NodeStatusUnknown``); when Ready leaves True its pods' Ready condition is set
   False and NodeNotReady events are recorded;
2. the NoExecute ``not-ready``/``unreachable`` taint follows the Ready status the pass
   *observed* (as upstream: one period after the Unknown mark), through the zone's
   rate-limited tainting queue (0.1 nodes/s);
3. zone states are recomputed and each zone's tainting rate set from them.

NoSchedule taints follow the node's conditions and ``spec.unschedulable`` as soon as the
Node changes, as upstream's node update worker does (``doNoScheduleTaintingPass``): a
node whose taints disagree with its conditions is a work key at the instant it is
written.

A pass that provably does nothing is skipped (:meth:`NodeLifecycleController.quiet`, asked
by the engine when the tick's work item comes up): nothing written anywhere since the last
pass read the store, every known node quietly checked, no grace deadline on the heap passed,
the zones as steady as the last pass left them and no node waiting in a tainting queue. A
pass that only sees renewals skips the zone rules when the zone counts are the ones their
last no-op run had, and the tainting pass when every queue is empty (both would change
nothing).

The decisions themselves are the pure functions of this package; this module reads
through the controller runtime, applies them with its client and keeps the per-node
bookkeeping.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Iterable, cast

from fakekube.api.machinery.jsonutil import deep_copy
from fakekube.clock import parse_time
from fakekube.controllers.nodelifecycle import events as texts
from fakekube.controllers.nodelifecycle.config import NodeLifecycleConfig
from fakekube.controllers.nodelifecycle.health import (
    HealthCheck, NodeHealth, check_node_health, condition_status, pod_conditions_not_ready,
)
from fakekube.controllers.nodelifecycle.ratelimiter import RateLimitedTimedQueue, TimedValue
from fakekube.controllers.nodelifecycle.sightings import Sightings
from fakekube.controllers.nodelifecycle.taints import (
    NoExecuteAction, noexecute_decision, noexecute_swap_for, noschedule_diff, swap_taints,
)
from fakekube.controllers.nodelifecycle.zones import (
    ZoneState, excluded_from_disruption_checks, handle_disruption, zone_key,
)
from fakekube.engine import Context
from fakekube.objects.indexes import POD_NODE_NAME, pod_node_name
from fakekube.objects.kinds import LEASES, NODES, PODS
from fakekube.objects.taints import noexecute_taints, taint_exists
from fakekube.store import DELETED, Change, Deferred

Obj = dict[str, Any]
LEASE_NAMESPACE = "kube-node-lease"

MONITOR = "monitor"
TAINT = "taint"
#: Key prefix of the NoSchedule pass for one node (``noschedule/<node>``).
NOSCHEDULE = "noschedule/"


class _Quiet:
    """A node whose last check changed nothing, and what that check found.

    Checking the same node object again, with the same Lease, before ``until`` would
    change nothing either (stored objects are never mutated, so identity means
    unchanged): the pass reuses the result. A renewed Lease (a new object) only moves
    the probe time. ``until`` None: the node was already stale
    and marked, so only a change can make a check act again.
    """

    __slots__ = ("node", "until", "grace_period_s", "zone", "ready")

    def __init__(self, node: Obj, until: datetime | None, grace_period_s: float, zone: str, ready: Any) -> None:
        self.node = node
        self.until = until
        self.grace_period_s = grace_period_s
        self.zone = zone
        self.ready = ready


class NodeLifecycleController:
    """Node health, condition taints and zone-rate-limited NoExecute tainting."""

    name = "node-lifecycle-controller"
    resources = (NODES,)
    indexes = ((PODS, POD_NODE_NAME, pod_node_name),)
    #: False: every pass fully checks every node, each Lease read — the eager form tests
    #: compare the quick passes with (tests/integration/test_nodelifecycle_shortcut.py).
    quick_passes = True

    def __init__(self, config: NodeLifecycleConfig = NodeLifecycleConfig()) -> None:
        self.config = config
        #: The monitor pass from the controller's start (upstream's wait.Until loop).
        self.periodic = ((MONITOR, config.monitor_period_s),)
        self._health: dict[str, NodeHealth] = {}
        #: Nodes the pass has seen (name → uid): upstream's knownNodeSet.
        self._known: dict[str, str] = {}
        self._quiet: dict[str, _Quiet] = {}
        self._zone_states: dict[str, ZoneState] = {}
        #: The resourceVersion the last pass read at: the next one asks which Leases changed since.
        self._pass_rv: int | None = None
        self._queues: dict[str, RateLimitedTimedQueue] = {}
        #: Known nodes without a quiet check (every pass checks them), in no particular order.
        self._restless: dict[str, None] = {}
        #: Renewals seen and not yet applied, and the deadline heap.
        self._sightings = Sightings()
        #: Per node, what its last check counted for its zone: (zone, Ready is True); None
        #: for a node excluded from disruption checks. And per zone: [Ready nodes, nodes].
        self._standing: dict[str, tuple[str, bool] | None] = {}
        self._zone_counts: dict[str, list[int]] = {}
        #: Moved by every change of the zone counts; and its value when the zone rules last
        #: ran and changed nothing (None: they changed something): the same rules on the
        #: same counts change nothing again.
        self._counts_version = 0
        self._steady_version: int | None = None
        self._min_grace_s = min(config.grace_s, config.startup_grace_period_s)

    def keys_for(self, change: Change) -> Iterable[str]:
        """A node whose NoSchedule taints no longer match its conditions (upstream's node
        update worker); everything else waits for the monitor pass."""
        if change.type == DELETED:
            return ()
        to_add, to_remove = noschedule_diff(change.obj)
        return (NOSCHEDULE + change.name,) if to_add or to_remove else ()

    def quiet(self, key: str, ctx: Context) -> bool:
        """Whether a monitor pass now would do nothing (engine.QuietPeriodic): the quick pass
        would read no change (nothing written since the last pass read the store), visit no
        node (none restless, no deadline on the heap before now that still holds — the stale
        ones are dropped here as the pass would drop them), and the zone rules and the
        tainting pass would change nothing. Quick passes only: the eager form runs them all."""
        return (self.quick_passes and self._pass_rv is not None and self._pass_rv == ctx.resource_version
                and not self._restless and self._zones_steady() and not self._queued()
                and not self._sightings.live_expired(ctx.now, self._check_due))

    def reconcile(self, key: str, ctx: Context) -> None:
        if key.startswith(NOSCHEDULE):
            node = ctx.get(NODES, key[len(NOSCHEDULE):])
            if node is not None:
                self._apply_noschedule(node, ctx)
            return
        if key == MONITOR:
            self._monitor(ctx)
            if self.quick_passes and not self._queued():
                return  # the tainting pass would find every queue empty
        self._tainting_pass(ctx)

    def _check_due(self, name: str, deadline: datetime) -> bool:
        """Whether a full check's heap entry at ``deadline`` holds for ``name`` (as :meth:`_due`
        reads it: the node's quiet check still ends then and no renewal was seen since)."""
        quiet = self._quiet.get(name)
        return quiet is not None and quiet.until == deadline and name not in self._sightings.seen

    def _queued(self) -> bool:
        """Whether any zone's tainting queue holds a node."""
        return any(len(queue) for queue in self._queues.values())

    def _zones_steady(self) -> bool:
        """Whether the zone rules would change nothing: they did not the last time, on the
        zone counts there are now (the rules are a function of those and the zone states
        they left)."""
        return self._steady_version == self._counts_version

    # -- the monitor pass ----------------------------------------------------------
    def _monitor(self, ctx: Context) -> None:
        """One pass: nodes new, gone, changed or without a quiet check, and those whose
        grace period the deadline heap says has run out, in name order; the others'
        renewals are only noted (sightings.py)."""
        with ctx.atomically():
            since, self._pass_rv = self._pass_rv, ctx.resource_version
            written = ctx.renewals_since(since) if since is not None and self.quick_passes else None
            if written is None:
                nodes = ctx.list(NODES)
            else:
                touched = sorted(self._restless.keys() | {c.name for c in written[0] if c.resource == "nodes"
                                                          and c.group == ""})
                current = dict(zip(touched, ctx.get_many(NODES, touched)))
        if written is None:
            self._full_pass(nodes, ctx)
        else:
            self._quick_pass(written, current, ctx)
        if not (self.quick_passes and self._zones_steady()):
            self._handle_disruption(self._zone_statuses(), ctx)

    def _full_pass(self, nodes: list[Obj], ctx: Context) -> None:
        """Every node, each Lease read (the first pass, a history that no longer reaches the
        previous pass, or ``quick_passes`` off: every node fully checked, the eager form)."""
        for name in list(self._sightings.seen):
            self._apply_sighting(name)
        leases = _Leases(ctx)
        for node in self._register_and_remove(nodes, ctx):
            if self.quick_passes:
                self._pass_node(node, leases, ctx)
            else:
                self._check_node(node, leases.get((LEASE_NAMESPACE, node["metadata"]["name"])), ctx)

    def _quick_pass(self, written: tuple[list[Change], list[Deferred]], current: dict[str, Obj | None],
                    ctx: Context) -> None:
        """The pass from what was written since the last one: ``current`` holds the nodes
        written since (or without a quiet check) as they are now."""
        known = self._known
        unquiet = [name for name, node in current.items() if node is not None and
                   ((quiet := self._quiet.get(name)) is None or quiet.node is not node)]
        for name in unquiet:  # the eager pass saw their earlier renewals, not this pass's
            self._apply_sighting(name)
        self._see_renewals(*written, ctx.now)
        self._sightings.discard(unquiet)
        for name in [name for name, node in current.items() if node is not None and name not in known]:
            current[name] = self._register(cast(Obj, current[name]), ctx)
        gone = [name for name, node in current.items() if node is None and name in known]
        for name in gone:
            self._forget(name, ctx)
        due = self._due(ctx.now)
        leases = _Leases(ctx)
        for name in sorted(due.keys() | set(unquiet)):
            node = current.get(name) or self._quiet[name].node
            self._apply_sighting(name)
            self._check_node(node, leases.get((LEASE_NAMESPACE, name)), ctx)

    def _see_renewals(self, changes: list[Change], deferred: list[Deferred], now: datetime) -> None:
        """Note the renewTime each Lease was last written with since the previous pass, from
        the store's change log and its deferred renewals (never built for this:
        store/deferred.py), a cohort at a time."""
        group, plural = LEASES
        renewed = {c.name: (None if c.type == DELETED else (c.obj.get("spec") or {}).get("renewTime"))
                   for c in changes if c.resource == plural and c.namespace == LEASE_NAMESPACE and c.group == group}
        cohorts: dict[str, list[str]] = {}  # renewTime → Leases last written with it (built renewals: a cohort each)
        for name, value in renewed.items():
            if value is not None:
                cohorts.setdefault(value, []).append(name)
        for value, names in cohorts.items():  # (oldest first: renewTimes grow with resourceVersions)
            renew = parse_time(value)
            if renew is not None:
                self._sightings.see(names, renew, now, self._min_grace_s, self._held_renew)
        for block in deferred:  # all newer than the changes held
            if block.resource == (group, plural) and block.path == ("spec", "renewTime"):
                names = [name for namespace, name in block.keys if namespace == LEASE_NAMESPACE]
                renew = parse_time(block.value)
                if names and renew is not None:
                    self._sightings.see(names, renew, now, self._min_grace_s, self._held_renew)

    def _held_renew(self, name: str) -> datetime | None:
        health = self._health.get(name)
        return health.lease_renew_time if health is not None else None

    def _due(self, now: datetime) -> dict[str, None]:
        """Quiet nodes whose grace period ran out before ``now``, from the deadline heap: an
        entry holds only for nodes whose newest sighting (or quiet check) is the entry's."""
        sightings = self._sightings
        due: dict[str, None] = {}
        later: dict[str, datetime] = {}
        for deadline, names, seen_at in sightings.expired(now):
            for name in names:
                quiet = self._quiet.get(name)
                if quiet is None:
                    continue
                if seen_at is None:
                    if not self._check_due(name, deadline):
                        continue
                    until = quiet.until
                else:
                    until = seen_at + timedelta(seconds=quiet.grace_period_s)
                if until is not None and now > until:
                    due[name] = None
                elif until is not None:
                    later[name] = until
        for name, until in later.items():  # a longer (startup) grace period than the entry's
            sightings.push(until, (name,), sightings.seen.get(name))
        return due

    def _apply_sighting(self, name: str) -> None:
        """What the eager pass did with a renewed Lease of an otherwise unchanged node: the
        probe time moved to the pass that saw it (upstream stamps its own time, not the
        kubelet's)."""
        sighting = self._sightings.take(name)
        health = self._health.get(name)
        if sighting is None or health is None:
            return
        renew, seen_at = sighting
        if health.lease_renew_time is not None and health.lease_renew_time >= renew:
            return
        self._health[name] = NodeHealth(seen_at, health.ready_transition_timestamp, health.saved_ready, renew)
        quiet = self._quiet.get(name)
        if quiet is not None:
            quiet.until = seen_at + timedelta(seconds=quiet.grace_period_s)
            self._sightings.push(quiet.until, (name,), None)  # (the sighting's own entry no longer holds)

    def _pass_node(self, node: Obj, leases: _Leases, ctx: Context) -> None:
        """A full pass's visit: a quiet, unchanged node's check is reused until its deadline."""
        name = node["metadata"]["name"]
        quiet = self._quiet.get(name)
        if quiet is None or quiet.node is not node:
            self._check_node(node, leases.get((LEASE_NAMESPACE, name)), ctx)
            return
        lease = leases.get((LEASE_NAMESPACE, name))
        renew = _renew_time(lease) if lease is not None else None
        if renew is not None:
            self._observe_lease(name, renew, quiet, ctx.now)
        if quiet.until is not None and ctx.now > quiet.until:
            self._check_node(node, lease, ctx)

    def _observe_lease(self, name: str, renew: datetime, quiet: _Quiet, now: datetime) -> None:
        health = self._health[name]
        self._sightings.note_renew(renew)
        if (health.lease_renew_time is not None and health.lease_renew_time >= renew):
            return
        self._health[name] = NodeHealth(now, health.ready_transition_timestamp, health.saved_ready, renew)
        quiet.until = now + timedelta(seconds=quiet.grace_period_s)
        self._sightings.push(quiet.until, (name,), None)

    def _register_and_remove(self, nodes: list[Obj], ctx: Context) -> list[Obj]:
        """Upstream classifyNodes: a node seen the first time gets RegisteredNode and is marked
        reachable (its controller NoExecute taints go); one gone since the last pass gets
        RemovingNode and is forgotten. Returns the nodes as they are now."""
        known = self._known
        current = [node if node["metadata"]["name"] in known else self._register(node, ctx) for node in nodes]
        if len(known) > len(nodes):
            present = {node["metadata"]["name"] for node in nodes}
            for name in sorted(known.keys() - present):
                self._forget(name, ctx)
        return current

    def _register(self, node: Obj, ctx: Context) -> Obj:
        meta = node["metadata"]
        self._known[meta["name"]] = meta.get("uid") or ""
        self._restless[meta["name"]] = None
        self._record_node_event(node, texts.registered_node(meta["name"]), ctx)
        return self._mark_reachable(node, ctx)

    def _forget(self, name: str, ctx: Context) -> None:
        gone = {"metadata": {"name": name, "uid": self._known.pop(name)}}
        self._record_node_event(gone, texts.removing_node(name), ctx)
        self._health.pop(name, None)
        self._quiet.pop(name, None)
        self._restless.pop(name, None)
        self._sightings.take(name)
        self._stand(name, None)

    def _record_node_event(self, node: Obj, text: texts.EventText, ctx: Context) -> None:
        ctx.record_event(node, "Node", text.type, text.reason, text.message, texts.NODE_CONTROLLER)

    def _check_node(self, node: Obj, lease: Obj | None, ctx: Context) -> tuple[str, Any]:
        name = node["metadata"]["name"]
        renew = parse_time(((lease or {}).get("spec") or {}).get("renewTime"))
        self._sightings.take(name)  # (applied by the caller where the eager pass saw it)
        self._sightings.note_renew(renew)
        check = check_node_health(node, renew, self._health.get(name), ctx.now, self.config)
        self._health[name] = check.health
        acted = check.new_conditions is not None
        if check.new_conditions is not None:
            node = self._write_conditions(node, check.new_conditions, ctx)
        if check.became_not_ready:
            self._node_became_not_ready(node, ctx)
        checked = node
        node = ctx.get(NODES, name) or node  # the NoSchedule pass may have followed the write
        zone = zone_key(node)
        acted = self._apply_noexecute(node, condition_status(check.observed_ready), zone, ctx) or acted
        ready = _SKIP if excluded_from_disruption_checks(node) else condition_status(check.current_ready)
        if acted or node is not checked:
            self._quiet.pop(name, None)
            self._restless[name] = None
        else:
            until = self._quiet_until(check, ctx.now)
            self._quiet[name] = _Quiet(node, until, check.grace_period_s, zone, ready)
            self._restless.pop(name, None)
            if until is not None:
                self._sightings.push(until, (name,), None)
        self._stand(name, None if ready is _SKIP else (zone, ready == "True"))
        return zone, ready

    @staticmethod
    def _quiet_until(check: HealthCheck, now: datetime) -> datetime | None:
        deadline = check.health.probe_timestamp + timedelta(seconds=check.grace_period_s)
        return deadline if now <= deadline else None

    def _node_became_not_ready(self, node: Obj, ctx: Context) -> None:
        self._record_node_event(node, texts.node_status_change(node["metadata"]["name"]), ctx)
        for pod in ctx.by_index(PODS, POD_NODE_NAME, node["metadata"]["name"]):
            conditions = pod_conditions_not_ready(pod, ctx.now)
            if conditions is None:
                continue
            status = dict(pod.get("status") or {}, conditions=conditions)
            ctx.client.update_status(PODS, dict(deep_copy(pod), status=status))
            text = texts.pod_node_not_ready()
            ctx.record_event(pod, "Pod", text.type, text.reason, text.message, texts.NODE_CONTROLLER)

    # -- taints --------------------------------------------------------------------
    def _apply_noschedule(self, node: Obj, ctx: Context) -> Obj:
        to_add, to_remove = noschedule_diff(node)
        if not to_add and not to_remove:
            return node
        return self._write_taints(node, swap_taints(_taints(node), to_add, to_remove, ctx.now), ctx)

    def _apply_noexecute(self, node: Obj, observed: str | None, zone: str, ctx: Context) -> bool:
        """Upstream processTaintBaseEviction; True when it changed the node or its zone's queue."""
        name = node["metadata"]["name"]
        decision = noexecute_decision(observed, _taints(node))
        queue = self._queue(zone)
        if decision.action is NoExecuteAction.SWAP_NOW:
            self._write_taints(node, swap_taints(_taints(node), decision.to_add, decision.to_remove, ctx.now), ctx)
            return True
        if decision.action is NoExecuteAction.QUEUE:
            removed = queue.remove(name) if decision.requeue else False
            return queue.add(name, node["metadata"].get("uid"), ctx.now.timestamp()) or removed
        if decision.action is NoExecuteAction.MARK_REACHABLE:
            acted = queue.remove(name)
            if any(taint_exists(_taints(node), t) for t in decision.to_remove):
                self._write_taints(node, swap_taints(_taints(node), (), decision.to_remove, ctx.now), ctx)
                return True
            return acted
        return False

    def _tainting_pass(self, ctx: Context) -> None:
        """Taint queued nodes as each zone's rate allows, then wake when the next is due."""
        now_s = ctx.now.timestamp()
        for zone in sorted(self._queues):
            self._queues[zone].try_process(now_s, lambda item: self._taint_queued(item, ctx))
        due = [d for q in self._queues.values() if (d := q.next_due_s()) is not None]
        if due:
            ctx.enqueue_after(TAINT, min(due) - now_s)

    def _taint_queued(self, item: TimedValue, ctx: Context) -> tuple[bool, float]:
        node = ctx.get(NODES, item.value)
        if node is None:
            return True, 0.0
        ready = next((c for c in (node.get("status") or {}).get("conditions", []) if c.get("type") == "Ready"), None)
        swap = noexecute_swap_for(condition_status(ready))
        if swap is not None:
            wanted, opposite = swap
            self._write_taints(node, swap_taints(_taints(node), (wanted,), (opposite,), ctx.now), ctx)
        return True, 0.0

    # -- zones -----------------------------------------------------------------------
    def _stand(self, name: str, standing: tuple[str, bool] | None) -> None:
        """Count ``name`` in its zone as its last check found it (None: not counted)."""
        if self._standing.get(name) == standing:
            return  # counted so already: the counts (and their version) stay
        self._counts_version += 1
        before = self._standing.pop(name, None)
        if before is not None:
            counts = self._zone_counts[before[0]]
            counts[0] -= before[1]
            counts[1] -= 1
            if not counts[1]:
                del self._zone_counts[before[0]]
        if standing is not None:
            self._standing[name] = standing
            counts = self._zone_counts.setdefault(standing[0], [0, 0])
            counts[0] += standing[1]
            counts[1] += 1

    def _zone_statuses(self) -> dict[str, list[str | None]]:
        """Each zone's Ready statuses as the pass found them (only the count of True ones
        and of all matters to the zone rules)."""
        return {zone: ["True"] * ready + [None] * (total - ready) for zone, (ready, total) in self._zone_counts.items()}

    def _handle_disruption(self, statuses: dict[str, list[str | None]], ctx: Context) -> None:
        decision = handle_disruption(self._zone_states, statuses, self.config)
        changes_nothing = (not decision.rates_per_s and not decision.mark_all_nodes_reachable
                           and not decision.reset_probe_timestamps and decision.zone_states == self._zone_states)
        self._steady_version = self._counts_version if changes_nothing else None
        now_s = ctx.now.timestamp()
        for zone, rate in decision.rates_per_s.items():
            self._queue(zone).swap_rate(rate, now_s)
        if decision.mark_all_nodes_reachable or decision.reset_probe_timestamps:
            for name in list(self._sightings.seen):
                self._apply_sighting(name)
            self._sightings.clear()
            self._quiet.clear()  # queues emptied or probe times moved: every node is checked afresh
            self._restless = dict.fromkeys(sorted(self._known))
        if decision.mark_all_nodes_reachable:
            self._mark_all_reachable(ctx)
        if decision.reset_probe_timestamps:
            self._health = {n: h._replace(probe_timestamp=ctx.now, ready_transition_timestamp=ctx.now)
                            for n, h in self._health.items()}
        self._zone_states = dict(decision.zone_states)

    def _mark_all_reachable(self, ctx: Context) -> None:
        for queue in self._queues.values():
            queue.clear()
        for node in ctx.list(NODES):
            self._mark_reachable(node, ctx)

    def _mark_reachable(self, node: Obj, ctx: Context) -> Obj:
        """Upstream markNodeAsReachable: drop the not-ready/unreachable NoExecute taints and the
        node's place in its zone's tainting queue; returns the node as it is now."""
        self._queue(zone_key(node)).remove(node["metadata"]["name"])
        controlled = [t for t in noexecute_taints(_taints(node)) if t.get("key") in _NOEXECUTE_KEYS]
        if not controlled:
            return node
        return self._write_taints(node, swap_taints(_taints(node), (), controlled, ctx.now), ctx)

    def _queue(self, zone: str) -> RateLimitedTimedQueue:
        if zone not in self._queues:
            self._queues[zone] = RateLimitedTimedQueue(self.config.eviction_rate_per_s, self.config.eviction_burst,
                                                       self.config.max_queued_nodes_per_zone)
        return self._queues[zone]

    # -- writes ----------------------------------------------------------------------
    def _write_conditions(self, node: Obj, conditions: list, ctx: Context) -> Obj:
        status = dict(node.get("status") or {}, conditions=conditions)
        return ctx.client.update_status(NODES, dict(deep_copy(node), status=status))

    def _write_taints(self, node: Obj, taints: list, ctx: Context) -> Obj:
        updated = deep_copy(node)
        updated["metadata"].pop("resourceVersion", None)
        spec = updated.setdefault("spec", {})
        if taints:
            spec["taints"] = taints
        else:
            spec.pop("taints", None)
        return ctx.client.update(NODES, updated)


_SKIP = object()
#: A deferred write of some other Lease field: the renewTime it leaves is the one before.
_UNCHANGED: Any = object()


def _renew_time(lease: Obj) -> datetime | None:
    return parse_time((lease.get("spec") or {}).get("renewTime"))


class _Leases:
    """The Leases the pass reads one by one: a lookup through the controller runtime, which
    builds deferred renewals first (a view taken before them would not show them)."""

    __slots__ = ("_ctx",)

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx

    def get(self, key: tuple[str, str]) -> Obj | None:
        return self._ctx.get(LEASES, key[1], key[0])
_NOEXECUTE_KEYS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


def _taints(node: Obj) -> list:
    return list((node.get("spec") or {}).get("taints") or [])

