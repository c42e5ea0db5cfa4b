"""NodePorts: a pod that asks for host ports fits only nodes where none of them is taken.

Upstream: ``pkg/scheduler/framework/plugins/nodeports/node_ports.go`` and
``HostPortInfo.CheckConflict`` (1.33). A port is (hostIP, protocol, hostPort), an empty
hostIP meaning 0.0.0.0 and an empty protocol TCP. A wanted 0.0.0.0 port conflicts with that
protocol and port on any address; a wanted specific address conflicts with the same address
or with 0.0.0.0. Only regular containers' ports are the pod's wanted ports in 1.33 (1.34
adds restartable init containers). A pod with no host port skips the plugin (PreFilter Skip).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Mapping, NamedTuple

from fakekube.scheduler.framework import (
    ASSIGNED_POD, NODE, SKIP, UNSCHEDULED_POD, Action, ClusterEvent, CycleState, EventHint, Hint, NodeInfo,
    Obj, PodInfo, Status, unschedulable,
)

if TYPE_CHECKING:
    from fakekube.scheduler.runtime import Handle

NAME = "NodePorts"
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
_REJECTED = unschedulable(NAME, ERR_REASON)

#: HostPortInfo's DefaultBindAllHostIP and the default protocol.
ALL_ADDRESSES = "0.0.0.0"
DEFAULT_PROTOCOL = "TCP"

HostPort = tuple[str, str, int]


class _Wanted(NamedTuple):
    """The PreFilter state: the pod's host ports on one address, and the (protocol, port)
    pairs it wants on every address (0.0.0.0)."""

    specific: tuple[HostPort, ...]
    everywhere: frozenset[tuple[str, int]]


class NodePorts:
    name = NAME

    def __init__(self, handle: "Handle", args: Mapping[str, Any]) -> None:
        pass

    def pre_filter(self, state: CycleState, info: PodInfo) -> tuple[set[str] | None, Status | None]:
        ports = wanted_ports(info.pod)
        if not ports:
            return None, SKIP
        state.data[NAME] = _split(ports)
        return None, None

    def filter(self, state: CycleState, info: PodInfo, node: NodeInfo) -> Status | None:
        used = node.used_ports
        if not used:
            return None
        wanted = state.data.get(NAME)
        if wanted is None:  # PreFilter did not run (a what-if outside a cycle)
            wanted = _split(wanted_ports(info.pod))
        return _REJECTED if conflicts(wanted, used) else None

    def events_to_register(self) -> list[EventHint]:
        """1.33 with SchedulerQueueingHints on: a deleted pod (hinted), a node added."""
        return [EventHint(ClusterEvent(ASSIGNED_POD, Action.DELETE), schedulable_after_pod_deleted),
                EventHint(ClusterEvent(UNSCHEDULED_POD, Action.DELETE), schedulable_after_pod_deleted),
                EventHint(ClusterEvent(NODE, Action.ADD))]


def wanted_ports(pod: Obj) -> list[HostPort]:
    """getContainerPorts: every regular container port with a hostPort, sanitized."""
    ports = []
    for container in (pod.get("spec") or {}).get("containers") or []:
        for port in container.get("ports") or []:
            host_port = port.get("hostPort") or 0
            if host_port > 0:
                ports.append((port.get("hostIP") or ALL_ADDRESSES, port.get("protocol") or DEFAULT_PROTOCOL,
                              int(host_port)))
    return ports


def _split(ports: Iterable[HostPort]) -> _Wanted:
    ports = list(ports)
    return _Wanted(tuple(p for p in ports if p[0] != ALL_ADDRESSES),
                   frozenset((protocol, port) for ip, protocol, port in ports if ip == ALL_ADDRESSES))


def conflicts(wanted: _Wanted, used: Mapping[HostPort, int]) -> bool:
    """CheckConflict for each wanted port against the ports in use."""
    for ip, protocol, port in wanted.specific:
        if (ip, protocol, port) in used or (ALL_ADDRESSES, protocol, port) in used:
            return True
    if wanted.everywhere:
        return any((protocol, port) in wanted.everywhere for _, protocol, port in used)
    return False


def schedulable_after_pod_deleted(pod: Obj, old: Obj | None, new: Obj | None) -> Hint:
    """isSchedulableAfterPodDeleted: only a bound (or nominated) pod holding a port this pod
    wants can free it."""
    if old is None:
        return Hint.SKIP
    if not (old.get("spec") or {}).get("nodeName") and not (old.get("status") or {}).get("nominatedNodeName"):
        return Hint.SKIP
    freed = {port: 1 for port in wanted_ports(old)}
    if not freed:
        return Hint.SKIP
    return Hint.QUEUE if conflicts(_split(wanted_ports(pod)), freed) else Hint.SKIP
