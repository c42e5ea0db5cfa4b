"""Simulated kubelets' heartbeats: node Leases and NodeStatus, on the virtual clock.

Upstream's kubelet proves it is alive two ways, and the node lifecycle controller
watches both:

* it renews its Lease ``kube-node-lease/<node>`` every ``lease_duration_s × 0.25``
  (10 s for the default 40 s lease);
* it computes NodeStatus every ``nodeStatusUpdateFrequency`` (10 s) and posts it when
  something changed, or else every ``nodeStatusReportFrequency`` (5 min), bumping the
  conditions' ``lastHeartbeatTime``.

One controller serves every node (one per node would cost the engine a routing check
per node on every change). A node whose heartbeats are stopped (a test's node fault)
stops writing both until it is resumed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Iterable

from fakekube.api.apiserver import WriteOptions
from fakekube.api.registry import STATUS
from fakekube.clock import format_micro_time, format_rfc3339
from fakekube.engine import Context, Engine
from fakekube.store import ADDED, DELETED, Change

Obj = dict[str, Any]

NODES = ("", "nodes")
LEASES = ("coordination.k8s.io", "leases")
LEASE_NAMESPACE = "kube-node-lease"
INTERNAL = WriteOptions(internal=True)

LEASE = "lease"
STATUS_KEY = "status"


@dataclass(frozen=True)
class HeartbeatConfig:
    """Upstream kubelet defaults; all overridable."""

    lease_duration_s: int = 40
    renew_fraction: float = 0.25
    status_update_period_s: float = 10.0
    status_report_period_s: float = 300.0

    @property
    def renew_interval_s(self) -> float:
        return self.lease_duration_s * self.renew_fraction


class NodeHeartbeats:
    """The lease and status heartbeats of every simulated node."""

    name = "kubelet-heartbeats"
    resources = (NODES,)

    def __init__(self, config: HeartbeatConfig = HeartbeatConfig()) -> None:
        self.config = config
        self._stopped: set[str] = set()
        self._last_report: dict[str, datetime] = {}

    # -- faults ---------------------------------------------------------------
    def stop(self, node: str) -> None:
        """The node's kubelet stops sending heartbeats (it hangs or loses power)."""
        self._stopped.add(node)

    def resume(self, node: str, engine: Engine) -> None:
        """Heartbeats start again at once (the next settle writes both)."""
        self._stopped.discard(node)
        engine.queue.add((self.name, f"{LEASE}/{node}"))
        engine.queue.add((self.name, f"{STATUS_KEY}/{node}"))

    def stopped(self, node: str) -> bool:
        return node in self._stopped

    # -- engine interface -------------------------------------------------------
    def keys_for(self, change: Change) -> Iterable[str]:
        if change.type == ADDED:
            return [f"{LEASE}/{change.name}", f"{STATUS_KEY}/{change.name}"]
        if change.type == DELETED:
            self._last_report.pop(change.name, None)
        return []

    def reconcile(self, key: str, ctx: Context) -> None:
        kind, node_name = key.split("/", 1)
        node = ctx.api.store.get(NODES, ("", node_name))
        if node is None or node_name in self._stopped:
            return  # deleted, or failed: no more heartbeats until resumed
        if kind == LEASE:
            self._renew_lease(node, ctx)
            ctx.requeue_after(self.config.renew_interval_s)
        else:
            self._report_status(node, ctx)
            ctx.requeue_after(self.config.status_update_period_s)

    # -- the two heartbeats ------------------------------------------------------
    def _renew_lease(self, node: Obj, ctx: Context) -> None:
        name = node["metadata"]["name"]
        rt = ctx.api.registry.lookup("coordination.k8s.io", "v1", "leases")
        renew_time = format_micro_time(ctx.now)
        current = ctx.api.store.get(LEASES, (LEASE_NAMESPACE, name))
        if current is None:
            ctx.api.create(rt, LEASE_NAMESPACE, lease_object(node, self.config.lease_duration_s, renew_time), INTERNAL)
            return
        # A renewal changes one timestamp of our own lease: the trusted internal write (no
        # validation to fail), which is most of what an idle cluster does every 10 s per node.
        with ctx.api.store.lock:
            current = ctx.api.store.get(LEASES, (LEASE_NAMESPACE, name)) or current
            ctx.api.write_internal(rt, dict(current, spec=dict(current.get("spec") or {}, renewTime=renew_time)))

    def _report_status(self, node: Obj, ctx: Context) -> None:
        """Post status when the server's copy differs from the kubelet's view (e.g. after the
        node controller marked it Unknown), else every ``status_report_period_s``."""
        name = node["metadata"]["name"]
        last = self._last_report.get(name)
        current = (node.get("status") or {}).get("conditions") or []
        differs = _statuses(current) != {kind: wanted[0] for kind, wanted in HEALTHY_CONDITIONS.items()}
        due = last is not None and (ctx.now - last).total_seconds() >= self.config.status_report_period_s
        if last is None:
            self._last_report[name] = ctx.now  # the node registered with fresh heartbeats just now
        if not differs and not due:
            return
        self._last_report[name] = ctx.now
        rt = ctx.api.registry.lookup("", "v1", "nodes")
        status = dict(node.get("status") or {}, conditions=healthy_conditions(current, format_rfc3339(ctx.now)))
        ctx.api.update(rt, "", name, dict(node, status=status), INTERNAL, STATUS)


#: What a healthy simulated kubelet reports: (status, reason, message) per condition type.
HEALTHY_CONDITIONS = {
    "MemoryPressure": ("False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    "DiskPressure": ("False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    "PIDPressure": ("False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    "Ready": ("True", "KubeletReady", "kubelet is posting ready status"),
}


def healthy_conditions(current: list[Obj], now: str) -> list[Obj]:
    """The kubelet's conditions at ``now``: a transition time moves only when a status changes."""
    before = {c.get("type"): c for c in current}
    conditions = []
    for kind, (status, reason, message) in HEALTHY_CONDITIONS.items():
        previous = before.get(kind) or {}
        transition = previous.get("lastTransitionTime") if previous.get("status") == status else now
        conditions.append({"type": kind, "status": status, "lastHeartbeatTime": now,
                           "lastTransitionTime": transition or now, "reason": reason, "message": message})
    return conditions


def _statuses(conditions: list[Obj]) -> dict[str, str]:
    return {c.get("type"): c.get("status") for c in conditions if c.get("type") in HEALTHY_CONDITIONS}


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
