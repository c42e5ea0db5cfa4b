"""The pod printer (upstream's ``printPod``): READY, STATUS, RESTARTS and the wide columns.

STATUS is the one cell users read most and the one with the most rules: init containers
are walked first (a failing or waiting one names the status, restartable "sidecar" init
containers count as regular containers once started), then the app containers in
reverse, then deletion overrides everything. The walk is kept in upstream's order so
the same pod prints the same status.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fakekube.api.table.cells import NONE, condition_true, get, meta
from fakekube.api.table.columns import AGE, NAME, Cells, Obj, TableSpec, col, doc
from fakekube.api.table.duration import age, human_duration, parse_time

NODE_UNREACHABLE_REASON = "NodeLost"


class _Tally:
    """What ``printPod`` accumulates while it walks the container statuses."""

    __slots__ = ("reason", "ready", "restarts", "last_restart", "sidecar_restarts", "last_sidecar_restart")

    def __init__(self, reason: str, ready: int = 0, restarts: int = 0, last_restart: datetime | None = None,
                 sidecar_restarts: int = 0, last_sidecar_restart: datetime | None = None) -> None:
        self.reason = reason
        self.ready = ready
        self.restarts = restarts
        self.last_restart = last_restart
        self.sidecar_restarts = sidecar_restarts
        self.last_sidecar_restart = last_sidecar_restart

    def count_restarts(self, cs: Obj, sidecar: bool = False) -> None:
        """Add one container's restarts; a sidecar's also count once the pod is initialized."""
        finished = parse_time(get(cs, "lastState", "terminated", "finishedAt"))
        self.restarts += cs.get("restartCount", 0)
        self.last_restart = _later(self.last_restart, finished)
        if sidecar:
            self.sidecar_restarts += cs.get("restartCount", 0)
            self.last_sidecar_restart = _later(self.last_sidecar_restart, finished)


def _later(current: datetime | None, candidate: datetime | None) -> datetime | None:
    if candidate is None:
        return current
    return candidate if current is None or candidate > current else current


def _is_sidecar(container: Obj | None) -> bool:
    return bool(container and container.get("restartPolicy") == "Always")


def _terminated_reason(term: Obj, prefix: str) -> str:
    if term.get("reason"):
        return prefix + term["reason"]
    if term.get("signal"):
        return f"{prefix}Signal:{term['signal']}"
    return f"{prefix}ExitCode:{term.get('exitCode', 0)}"


def _initial_reason(status: Obj) -> str:
    """The pod-level reason, or its phase; a scheduling-gated pod says so."""
    reason = status.get("reason") or status.get("phase", "")
    for cond in status.get("conditions") or []:
        if cond.get("type") == "PodScheduled" and cond.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    return reason


def _walk_init_containers(tally: _Tally, init_specs: dict[Any, Obj], statuses: list[Obj]) -> bool:
    """Walk the init container statuses; True if one is still holding the pod up.

    Succeeded init containers and started sidecars are passed over; the first other one
    names the status (``Init:Error``, ``Init:CrashLoopBackOff``, ``Init:1/3``…).
    """
    for index, cs in enumerate(statuses):
        sidecar = _is_sidecar(init_specs.get(cs.get("name")))
        tally.count_restarts(cs, sidecar)
        state = cs.get("state") or {}
        term, waiting = state.get("terminated"), state.get("waiting")
        if term is not None and term.get("exitCode", 0) == 0:
            continue
        if sidecar and cs.get("started"):
            tally.ready += 1 if cs.get("ready") else 0
            continue
        if term is not None:
            tally.reason = _terminated_reason(term, "Init:")
        elif waiting is not None and waiting.get("reason") and waiting["reason"] != "PodInitializing":
            tally.reason = "Init:" + waiting["reason"]
        else:
            tally.reason = f"Init:{index}/{len(init_specs)}"
        return True
    return False


def _walk_containers(tally: _Tally, status: Obj) -> None:
    """Walk the app containers, last first, so the first one's state has the final word.

    Restarts start again from the sidecars' (the other init containers' no longer count).
    """
    tally.restarts, tally.last_restart = tally.sidecar_restarts, tally.last_sidecar_restart
    has_running = False
    for cs in reversed(status.get("containerStatuses") or []):
        tally.count_restarts(cs)
        state = cs.get("state") or {}
        term, waiting = state.get("terminated"), state.get("waiting")
        if waiting is not None and waiting.get("reason"):
            tally.reason = waiting["reason"]
        elif term is not None:
            tally.reason = _terminated_reason(term, "")
        elif cs.get("ready") and state.get("running") is not None:
            has_running = True
            tally.ready += 1
    if tally.reason == "Completed" and has_running:
        tally.reason = "Running" if condition_true(status, "Ready") else "NotReady"


def _deletion_reason(pod: Obj, status: Obj, reason: str) -> str:
    """A pod being deleted reads Terminating (Unknown if its node was lost), unless finished."""
    if meta(pod, "deletionTimestamp") and status.get("reason") == NODE_UNREACHABLE_REASON:
        return "Unknown"
    if meta(pod, "deletionTimestamp") and status.get("phase", "") not in ("Succeeded", "Failed"):
        return "Terminating"
    return reason


def _restarts_text(tally: _Tally, now: datetime) -> str:
    """RESTARTS: the count, with "(Xm ago)" for the latest restart when known."""
    if tally.restarts and tally.last_restart is not None:
        return f"{tally.restarts} ({human_duration((now - tally.last_restart).total_seconds())} ago)"
    return str(tally.restarts)


def pod_cells(pod: Obj, now: datetime) -> Cells:
    """printPod: READY, STATUS (reason), RESTARTS ("N (Xm ago)") and the wide columns."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    init_specs = {c.get("name"): c for c in spec.get("initContainers") or []}
    total = len(spec.get("containers") or []) + sum(1 for c in init_specs.values() if _is_sidecar(c))
    tally = _Tally(reason=_initial_reason(status))
    initializing = _walk_init_containers(tally, init_specs, status.get("initContainerStatuses") or [])
    if not initializing or condition_true(status, "Initialized"):
        _walk_containers(tally, status)
    return [
        meta(pod, "name", ""), f"{tally.ready}/{total}", _deletion_reason(pod, status, tally.reason),
        _restarts_text(tally, now), age(meta(pod, "creationTimestamp"), now), *_pod_wide(spec, status),
    ]


def _pod_wide(spec: Obj, status: Obj) -> Cells:
    pod_ips = status.get("podIPs") or []
    ip = (pod_ips[0].get("ip") if pod_ips else status.get("podIP")) or NONE
    gates = spec.get("readinessGates") or []
    gates_text = NONE
    if gates:
        conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
        true_count = sum(1 for g in gates if conditions.get(g.get("conditionType")) == "True")
        gates_text = f"{true_count}/{len(gates)}"
    return [ip, spec.get("nodeName") or NONE, status.get("nominatedNodeName") or NONE, gates_text]


def pod_row_conditions(pod: Obj) -> list[Obj] | None:
    """Row conditions upstream attaches to finished pods (kubectl uses them to filter)."""
    phase = get(pod, "status", "phase")
    if phase == "Succeeded":
        return [{"type": "Completed", "status": "True", "reason": "Succeeded",
                 "message": "The pod has completed successfully."}]
    if phase == "Failed":
        return [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]
    return None


POD_TABLE = TableSpec((
    NAME,
    col("Ready", description="The aggregate readiness state of this pod for accepting traffic."),
    col("Status", description="The aggregate status of the containers in this pod."),
    col("Restarts", description="The number of times the containers in this pod have been restarted and when the "
                                "last container in this pod has restarted."),
    AGE,
    doc("IP", "core.v1.PodStatus", "podIP", priority=1),
    doc("Node", "core.v1.PodSpec", "nodeName", priority=1),
    doc("Nominated Node", "core.v1.PodStatus", "nominatedNodeName", priority=1),
    doc("Readiness Gates", "core.v1.PodSpec", "readinessGates", priority=1),
), pod_cells, pod_row_conditions)
