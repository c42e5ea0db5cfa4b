"""Simulated kubelets' heartbeats: node Leases and NodeStatus, on the virtual clock.

Upstream's kubelet proves it is alive two ways, and the node lifecycle controller
watches both:

* it renews its Lease ``kube-node-lease/<node>`` every ``lease_duration_s × 0.25``
  (10 s for the default 40 s lease);
* it computes NodeStatus every ``nodeStatusUpdateFrequency`` (10 s) and posts it when
  something changed, or else every ``nodeStatusReportFrequency`` (5 min), bumping the
  conditions' ``lastHeartbeatTime``.

One controller serves every node, and nodes due at the same instant are served in one
batch (:class:`~fakekube.engine.cohorts.Cohorts`): an idle cluster's work is mostly
this, so it is what decides how fast an hour of a 5,000-node cluster runs. With both
periods equal (10 s, the default) a batch's Lease renewals and status checks are one work
item that renews, then checks: as two items they would be armed one after the other and
come up one after the other at every instant, so one item does the same writes in the same
order with half the timers and queue items (``NodeHeartbeats.paired_ticks = False``: two
items, the form the differential tests compare with).

Faults a test can inject, per node:

* **stopped** — the kubelet hangs or loses power: no Lease, no status;
* **partitioned** — the kubelet runs but cannot reach the apiserver: it writes
  nothing (its pods keep running, see :class:`~fakekube.kubelet.pods.PodRunner`);
* **conditions** — the kubelet reports a condition the test chose (MemoryPressure
  True, Ready False, …) at its next 10 s status check, as it would on detecting it;
* **restart** — the kubelet process restarts: Lease and status are written at once and
  the cadence restarts from that instant.

The status also lists the images the node holds (:class:`~fakekube.kubelet.images.NodeImages`):
one its pods pulled shows at the next 10 s status check.
"""

from __future__ import annotations

import itertools
import operator
from datetime import datetime, timedelta
from typing import Any, Iterable, Mapping, cast

from fakekube.clock import format_micro_time, format_rfc3339
from fakekube.engine import Context, Engine
from fakekube.engine.cohorts import Cohorts
from fakekube.engine.events import EventSource
from fakekube.kubelet import events as texts
from fakekube.kubelet.images import NodeImages
from fakekube.kubelet.settings import HeartbeatConfig  # re-exported: where the heartbeats' settings were
from fakekube.objects.kinds import LEASES, NODES
from fakekube.store import ADDED, DELETED, Change

Obj = dict[str, Any]

LEASE_NAMESPACE = "kube-node-lease"
#: The kubelet's port (``--port``), which NodeStatus's ``daemonEndpoints`` publishes and the apiserver dials.
KUBELET_PORT = 10250

LEASE = "lease"
#: What a renewal writes: the Lease's ``spec.renewTime``.
RENEW_TIME_PATH = ("spec", "renewTime")
STATUS_KEY = "status"
#: The key of a deleted node (its kubelet's memory is dropped).
GONE = "gone"

#: What a healthy simulated kubelet reports: (status, reason, message) per condition type.
HEALTHY_CONDITIONS = {
    "MemoryPressure": ("False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    "DiskPressure": ("False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    "PIDPressure": ("False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    "Ready": ("True", "KubeletReady", "kubelet is posting ready status"),
}

#: A condition as the kubelet reports it: (status, reason, message).
Reported = tuple[str, str, str]

CONDITION_STATUSES = ("True", "False", "Unknown")

#: The kubelet's texts for its conditions in a bad state (upstream pkg/kubelet/nodestatus/setters.go).
KUBELET_TEXTS: dict[tuple[str, str], tuple[str, str]] = {
    ("MemoryPressure", "True"): ("KubeletHasInsufficientMemory", "kubelet has insufficient memory available"),
    ("DiskPressure", "True"): ("KubeletHasDiskPressure", "kubelet has disk pressure"),
    ("PIDPressure", "True"): ("KubeletHasInsufficientPID", "kubelet has insufficient PID available"),
    ("Ready", "False"): ("KubeletNotReady", "container runtime is down"),
    **{(kind, status): (reason, message) for kind, (status, reason, message) in HEALTHY_CONDITIONS.items()},
}


class NodeHeartbeats:
    """The lease and status heartbeats of every simulated node, and their faults."""

    name = "kubelet-heartbeats"
    resources = (NODES,)
    #: Only a node added or deleted gives a key, never a heartbeat (engine/routing.py).
    keyless_heartbeats = True
    #: False: every 10 s check steps through every member (the eager form tests compare with).
    quick_checks = True
    #: False: a batch's renewals and status checks are two work items even when their
    #: periods are equal (the form tests compare the paired item with; read when built).
    paired_ticks = True

    def __init__(self, config: HeartbeatConfig = HeartbeatConfig()) -> None:
        self.config = config
        self._stopped: set[str] = set()
        self._partitioned: set[str] = set()
        self._overrides: dict[str, dict[str, Reported]] = {}
        self._last_report: dict[str, datetime] = {}
        #: Nodes whose kubelet posts its status at the next check whatever it finds (a restart).
        self._must_post: set[str] = set()
        #: Nodes whose kubelet (re)started: it records its start events at the next status check.
        self._starting: set[str] = set()
        #: The node object last seen matching what its kubelet reports (stored objects are
        #: never mutated, so identity means "unchanged since then").
        self._verified: dict[str, Obj] = {}
        #: Whether a periodic report with nothing but new heartbeat times is the trusted
        #: internal write (False: every report takes the update path; a test compares both).
        self.quick_reports = True
        self._leases = Cohorts("leases")
        #: The status checks' batches: the renewals' own when both periods are equal (one
        #: item renews, then checks; see the module docstring).
        paired = self.paired_ticks and config.renew_interval_s == config.status_update_period_s
        self._statuses = self._leases if paired else Cohorts("statuses")
        self.images = NodeImages()

    # -- faults ---------------------------------------------------------------
    def stop(self, node: str) -> None:
        """The node's kubelet stops sending heartbeats (it hangs or loses power)."""
        self._stopped.add(node)

    def resume(self, node: str, engine: Engine) -> None:
        """Heartbeats start again at once (the next settle writes both). On the engine thread."""
        self._stopped.discard(node)
        self._beat_now(node, engine)

    def partition(self, node: str) -> None:
        """The node loses its connection to the apiserver; its kubelet keeps running."""
        self._partitioned.add(node)

    def heal(self, node: str, engine: Engine) -> None:
        """The connection is back: the kubelet reports at once."""
        self._partitioned.discard(node)
        self._beat_now(node, engine)

    def restart(self, node: str, engine: Engine) -> None:
        """The kubelet process restarts: it reports at once and its cadence starts again."""
        self._stopped.discard(node)
        self._must_post.add(node)
        self._starting.add(node)
        self._beat_now(node, engine)

    def set_condition(self, node: str, condition_type: str, status: str, reason: str = "", message: str = "") -> None:
        """From now on the kubelet reports ``condition_type`` this way (seen at its next status check).

        Without a reason or message, the kubelet's own texts for that state are used.
        Raises ValueError for an empty type or a status other than True/False/Unknown.
        """
        if not condition_type or not isinstance(condition_type, str):
            raise ValueError("a condition needs a type")
        if status not in CONDITION_STATUSES:
            raise ValueError(f"condition status must be one of {', '.join(CONDITION_STATUSES)}, not {status!r}")
        default_reason, default_message = KUBELET_TEXTS.get((condition_type, status), ("", ""))
        self._overrides.setdefault(node, {})[condition_type] = (status, reason or default_reason,
                                                                message or default_message)
        self._verified.pop(node, None)

    def clear_condition(self, node: str, condition_type: str) -> None:
        """The kubelet reports ``condition_type`` as a healthy kubelet does again."""
        self._overrides.get(node, {}).pop(condition_type, None)
        self._verified.pop(node, None)

    def image_held(self, node: str, image: str) -> bool:
        """Does ``node`` hold ``image`` (its kubelet pulled it, or its status listed it)?"""
        return self.images.holds(node, image)

    def image_pulled(self, node: str, image: str) -> None:
        """A container on ``node`` pulled ``image``: a new one is reported at the next status check."""
        if self.images.pulled(node, image):
            self._verified.pop(node, None)

    def stopped(self, node: str) -> bool:
        return node in self._stopped

    def partitioned(self, node: str) -> bool:
        return node in self._partitioned

    def reaches_apiserver(self, node: str) -> bool:
        """Whether the node's kubelet runs and can write: neither stopped nor partitioned."""
        return node not in self._stopped and node not in self._partitioned

    def state(self, node: str) -> dict[str, Any]:
        """The node's kubelet as a test sees it: heartbeats running/stopped/partitioned, and the
        conditions it reports."""
        heartbeats = "stopped" if node in self._stopped else "partitioned" if node in self._partitioned else "running"
        conditions = {kind: {"status": status, "reason": reason, "message": message}
                      for kind, (status, reason, message) in self.reported_conditions(node).items()}
        return {"heartbeats": heartbeats, "conditions": conditions}

    def reported_conditions(self, node: str) -> dict[str, Reported]:
        """What the node's kubelet reports, per condition type, in the order it writes them."""
        return {**HEALTHY_CONDITIONS, **self._overrides.get(node, {})}

    def _beat_now(self, node: str, engine: Engine) -> None:
        self._verified.pop(node, None)
        engine.enqueue(self.name, f"{LEASE}/{node}")
        engine.enqueue(self.name, f"{STATUS_KEY}/{node}")

    # -- engine interface -------------------------------------------------------
    def keys_for(self, change: Change) -> Iterable[str]:
        """A registered node's kubelet starts both heartbeats; a deleted one is forgotten."""
        if change.type == ADDED:
            return [f"{LEASE}/{change.name}", f"{STATUS_KEY}/{change.name}"]
        if change.type == DELETED:
            return [f"{GONE}/{change.name}"]
        return []

    def _forget(self, node: str) -> None:
        for memory in (self._last_report, self._verified, self._overrides):
            memory.pop(node, None)
        self._must_post.discard(node)
        self._starting.discard(node)
        self._leases.forget(node)
        self._statuses.forget(node)
        self.images.forget(node)

    def reconcile(self, key: str, ctx: Context) -> None:
        if self._leases.owns(key):
            _, members = self._leases.take(key)
            alive = self._alive(members, ctx)
            self._renew_leases(members, ctx, alive)
            if self._statuses is self._leases:  # it schedules them where the renewal did, and a
                self._check_statuses(members, ctx, alive)  # renewal writes no node: the same alive
        elif self._statuses.owns(key):
            _, members = self._statuses.take(key)
            self._check_statuses(members, ctx)
        else:
            kind, node = key.split("/", 1)
            if kind == GONE:
                if ctx.get(NODES, node) is None:
                    self._forget(node)
                return
            (self._renew_leases if kind == LEASE else self._check_statuses)([node], ctx)

    def _alive(self, nodes: list[str], ctx: Context) -> tuple[list[str], list[Obj]]:
        """The nodes (and their objects) whose kubelets write: deleted or faulted ones drop out
        of the cadence until they are resumed, healed or restarted. A cohort with none of
        those is taken whole, at C speed."""
        objects = ctx.get_many(NODES, nodes)
        if None not in objects and self._stopped.isdisjoint(nodes) and self._partitioned.isdisjoint(nodes):
            return nodes, cast(list[Obj], objects)
        alive = [(name, node) for name, node in zip(nodes, objects)
                 if node is not None and name not in self._stopped and name not in self._partitioned]
        return [name for name, _ in alive], [node for _, node in alive]

    # -- the Lease ---------------------------------------------------------------------
    def _renew_leases(self, nodes: list[str], ctx: Context,
                      alive: tuple[list[str], list[Obj]] | None = None) -> None:
        """Renew each node's Lease at ``ctx.now`` and schedule the next renewal (``alive``:
        :meth:`_alive` of ``nodes``, when the caller has it)."""
        names, objects = alive if alive is not None else self._alive(nodes, ctx)
        if not names:
            return
        renew_time = format_micro_time(ctx.now)
        next_at = ctx.now + timedelta(seconds=self.config.renew_interval_s)
        # A renewal changes one timestamp of the node's own lease, which is most of what an
        # idle cluster does: deferred by the store until something could observe it (the
        # same writes, built on read: store/deferred.py), else the trusted internal write.
        with ctx.atomically():
            if not ctx.defer_set(LEASES, names, LEASE_NAMESPACE, RENEW_TIME_PATH, renew_time):
                self._write_leases(list(zip(names, objects)), renew_time, ctx)
            self._leases.schedule_many(names, next_at, ctx)

    def _write_leases(self, alive: list[tuple[str, Obj]], renew_time: str, ctx: Context) -> None:
        """Each Lease written at once: created when missing, else renewed (no validation to fail)."""
        leases = ctx.get_many(LEASES, [name for name, _ in alive], LEASE_NAMESPACE)
        for (name, node), current in zip(alive, leases):
            if current is None:
                ctx.client.create(LEASES, lease_object(node, self.config.lease_duration_s, renew_time))
            else:
                ctx.client.replace_internal(LEASES, dict(current, spec=dict(current.get("spec") or {},
                                                                            renewTime=renew_time)))

    # -- NodeStatus ----------------------------------------------------------------------
    def _check_statuses(self, nodes: list[str], ctx: Context,
                        alive: tuple[list[str], list[Obj]] | None = None) -> None:
        """The kubelet's 10 s status check: post when the server's copy differs from what it
        reports (e.g. after the node controller marked it Unknown), else every 5 min
        (``alive``: :meth:`_alive` of ``nodes``, when the caller has it)."""
        next_at = ctx.now + timedelta(seconds=self.config.status_update_period_s)
        names, objects = alive if alive is not None else self._alive(nodes, ctx)
        self._statuses.schedule_many(names, next_at, ctx)
        work = self._to_check(names, objects, ctx.now)
        for name, node in zip(names, objects):
            if name not in work:
                continue  # verified unchanged, no report due: the check finds nothing to do
            if self._verified.get(name) is not node:
                self.images.adopt(node)  # images written to the status since are held too
            if name in self._starting or name not in self._last_report:
                self._record_start(name, ctx)
            last = self._last_report.get(name)
            if last is None:
                self._last_report[name] = ctx.now  # registered (or restarted) with fresh heartbeats
            due = last is not None and (ctx.now - last).total_seconds() >= self.config.status_report_period_s
            if name not in self._must_post and (self._verified.get(name) is node or not self._differs(name, node)):
                if not due:
                    self._verified[name] = node
                    continue
                self._post_heartbeat(name, node, ctx)  # the 5-min report: only heartbeat times move
                continue
            self._post_status(name, node, ctx)

    def _to_check(self, names: list[str], objects: list[Obj], now: datetime) -> set[str]:
        """The members whose check has something to do: a node object not verified since it
        was written, a 5-minute report due, a (re)started kubelet. Found at C speed: an idle
        cohort's check is a few passes over lists, not a step per node."""
        reported = list(map(self._last_report.get, names))
        if None in reported or not self.quick_checks:
            return set(names)
        lasts = cast(list[datetime], reported)
        cutoff = now - timedelta(seconds=self.config.status_report_period_s)
        unverified = map(operator.is_not, objects, map(self._verified.get, names))
        due = map(operator.le, lasts, itertools.repeat(cutoff))  # (now - last >= the report period)
        work = set(itertools.compress(names, map(operator.or_, unverified, due)))
        if self._starting or self._must_post:
            work.update(self._starting.intersection(names), self._must_post.intersection(names))
        return work

    def _differs(self, name: str, node: Obj) -> bool:
        status = node.get("status") or {}
        current = {c.get("type"): (c.get("status"), c.get("reason"), c.get("message"))
                   for c in status.get("conditions") or []}
        if any(current.get(kind) != wanted for kind, wanted in self.reported_conditions(name).items()):
            return True
        images = self.images.reported(name)
        return images is not None and (status.get("images") or []) != images

    def _record_start(self, name: str, ctx: Context) -> None:
        """What a starting kubelet records (kubelet.go, setters.go on its fresh initial node):
        Starting, an event per pressure condition, NodeAllocatableEnforced, then Ready's."""
        self._starting.discard(name)
        reported = self.reported_conditions(name)
        events: list[texts.EventText | None] = [texts.starting_kubelet()]
        events += [texts.node_condition(name, kind, status) for kind, (status, _, _) in reported.items()
                   if kind != "Ready"]
        events.append(texts.allocatable_enforced())
        events.append(texts.node_condition(name, "Ready", reported["Ready"][0]))
        for text in events:
            if text is not None:
                self._record(name, text, ctx)

    def _record_transitions(self, name: str, current: list[Obj], ctx: Context) -> None:
        """The events for conditions whose status the kubelet now reports differently (setters.go)."""
        before = {c.get("type"): c.get("status") for c in current}
        for kind, (status, _, _) in self.reported_conditions(name).items():
            if before.get(kind) != status:
                text = texts.node_condition(name, kind, status)
                if text is not None:
                    self._record(name, text, ctx)

    def _record(self, name: str, text: texts.EventText, ctx: Context) -> None:
        ctx.record(texts.node_reference(name), text.type, text.reason, text.message, EventSource(texts.KUBELET, name))

    def _post_heartbeat(self, name: str, node: Obj, ctx: Context) -> None:
        """The periodic report of a node whose status is as its kubelet reports it: the same
        object a status update would store (only ``lastHeartbeatTime`` moves), written as the
        trusted internal write unless the cluster's admission could act on it."""
        if not self.quick_reports:
            self._post_status(name, node, ctx)
            return
        with ctx.atomically():
            current = ctx.get(NODES, name)
            if current is not node:  # (cannot happen on the engine thread; the update path rereads)
                self._post_status(name, node, ctx)
                return
            status = node.get("status") or {}
            images = self.images.reported(name)
            if images is not None and status.get("images") != images:  # (absent vs empty: the update path decides)
                self._post_status(name, node, ctx)
                return
            conditions = reported_conditions(status.get("conditions") or [], self.reported_conditions(name),
                                             format_rfc3339(ctx.now))
            if ctx.client.post_heartbeat_status(NODES, dict(node, status=dict(status, conditions=conditions))) is None:
                self._post_status(name, node, ctx)
                return
            self._last_report[name] = ctx.now
            self._verified.pop(name, None)

    def _post_status(self, name: str, node: Obj, ctx: Context) -> None:
        self._last_report[name] = ctx.now
        self._must_post.discard(name)
        self._verified.pop(name, None)
        current = (node.get("status") or {}).get("conditions") or []
        self._record_transitions(name, current, ctx)
        conditions = reported_conditions(current, self.reported_conditions(name), format_rfc3339(ctx.now))
        status = dict(node.get("status") or {}, conditions=conditions)
        images = self.images.reported(name)
        if images is not None:
            status["images"] = [dict(image, names=list(image["names"])) for image in images]
        ctx.client.update_status(NODES, dict(node, status=status))


def healthy_conditions(current: list[Obj], now: str) -> list[Obj]:
    """A healthy kubelet's conditions at ``now`` (see :func:`reported_conditions`)."""
    return reported_conditions(current, HEALTHY_CONDITIONS, now)


def reported_conditions(current: list[Obj], reported: Mapping[str, Reported], now: str) -> list[Obj]:
    """The kubelet's conditions at ``now``: every heartbeat time moves, a transition time only
    when that condition's status changes. Conditions the kubelet does not own (e.g.
    NetworkUnavailable) are kept as they are, after its own."""
    before = {c.get("type"): c for c in current}
    conditions = []
    for kind, (status, reason, message) in reported.items():
        previous = before.get(kind) or {}
        transition = previous.get("lastTransitionTime") if previous.get("status") == status else now
        conditions.append({"type": kind, "status": status, "lastHeartbeatTime": now,
                           "lastTransitionTime": transition or now, "reason": reason, "message": message})
    return conditions + [c for c in current if c.get("type") not in reported]


def lease_object(node: Obj, lease_duration_s: int, renew_time: str) -> Obj:
    """The node's Lease as a kubelet creates it: owned by its Node, so it goes with it."""
    meta = node["metadata"]
    return {
        "metadata": {
            "name": meta["name"],
            "namespace": LEASE_NAMESPACE,
            "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": meta["name"], "uid": meta["uid"]}],
        },
        "spec": {"holderIdentity": meta["name"], "leaseDurationSeconds": lease_duration_s, "renewTime": renew_time},
    }
