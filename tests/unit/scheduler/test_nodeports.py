"""NodePorts: host-port conflicts (0.0.0.0 against specific addresses, protocols), the
PreFilter Skip, upstream's reason text, the queueing hint."""

from __future__ import annotations

from typing import Any

import pytest

from fakekube.scheduler.framework import ASSIGNED_POD, NODE, UNSCHEDULED_POD, Action, Code, CycleState, Hint, PodInfo
from fakekube.scheduler.plugins.nodeports import NAME, NodePorts, schedulable_after_pod_deleted
from tests.unit.scheduler.builders import container, handle, node, node_info, pod

Obj = dict[str, Any]


def port(host_port: int, host_ip: str = "", protocol: str = "") -> Obj:
    out: Obj = {"containerPort": 80, "hostPort": host_port}
    if host_ip:
        out["hostIP"] = host_ip
    if protocol:
        out["protocol"] = protocol
    return out


def with_ports(name: str, *ports: Obj, node_name: str = "") -> Obj:
    return pod(name, node_name=node_name, containers=[container(ports=list(ports))])


def verdict(incoming: Obj, *placed: Obj) -> str:
    plugin = NodePorts(handle(), {})
    state = CycleState()
    info = PodInfo(incoming)
    _, status = plugin.pre_filter(state, info)
    if status is not None:
        return "skip" if status.code == Code.SKIP else str(status)
    result = plugin.filter(state, info, node_info(node(), *placed))
    if result is None:
        return "fits"
    assert result.code == Code.UNSCHEDULABLE and result.plugin == NAME
    return result.message


CONFLICT = "node(s) didn't have free ports for the requested pod ports"


@pytest.mark.parametrize("wanted, used, expected", [
    # 0.0.0.0 (or no hostIP) takes the port on every address.
    (port(8080), port(8080, "10.0.0.1"), CONFLICT),
    (port(8080, "10.0.0.2"), port(8080), CONFLICT),
    (port(8080, "0.0.0.0"), port(8080), CONFLICT),
    # Two specific addresses do not collide; the same one does.
    (port(8080, "10.0.0.2"), port(8080, "10.0.0.1"), "fits"),
    (port(8080, "10.0.0.1"), port(8080, "10.0.0.1"), CONFLICT),
    # Protocols are separate; no protocol means TCP.
    (port(8080, protocol="UDP"), port(8080), "fits"),
    (port(8080, protocol="TCP"), port(8080), CONFLICT),
    (port(8080), port(8081), "fits"),
])
def test_conflicts(wanted: Obj, used: Obj, expected: str) -> None:
    assert verdict(with_ports("p", wanted), with_ports("a", used)) == expected


def test_any_conflicting_port_rejects() -> None:
    assert verdict(with_ports("p", port(9000), port(8080, "10.0.0.1")), with_ports("a", port(8080))) == CONFLICT


def test_container_ports_without_host_port_skip_the_plugin() -> None:
    assert verdict(pod("p", containers=[container(ports=[{"containerPort": 80}])])) == "skip"
    assert verdict(pod("p")) == "skip"


def test_init_container_ports_are_not_wanted_in_1_33() -> None:
    incoming = pod("p", containers=[container()], init=[container("i", ports=[port(8080)])])
    assert verdict(incoming, with_ports("a", port(8080))) == "skip"


def test_registered_events() -> None:
    events = {(hint.event.resource, hint.event.action, hint.hint is not None)
              for hint in NodePorts(handle(), {}).events_to_register()}
    assert events == {(ASSIGNED_POD, Action.DELETE, True), (UNSCHEDULED_POD, Action.DELETE, True),
                      (NODE, Action.ADD, False)}


def test_pod_deleted_hint() -> None:
    target = with_ports("p", port(8080))
    assert schedulable_after_pod_deleted(target, with_ports("a", port(8080), node_name="n"), None) == Hint.QUEUE
    assert schedulable_after_pod_deleted(target, with_ports("a", port(9090), node_name="n"), None) == Hint.SKIP
    assert schedulable_after_pod_deleted(target, with_ports("a", port(8080)), None) == Hint.SKIP  # never bound
    assert schedulable_after_pod_deleted(target, pod("a", node_name="n"), None) == Hint.SKIP  # no host ports
    nominated = dict(with_ports("a", port(8080)), status={"nominatedNodeName": "n"})
    assert schedulable_after_pod_deleted(target, nominated, None) == Hint.QUEUE
