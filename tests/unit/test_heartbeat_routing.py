"""Heartbeats go only to the controllers that might get work from them (engine/routing.py).

A Node status report that moves only its conditions' ``lastHeartbeatTime`` (and a Lease
renewal that moves only ``spec.renewTime``) is a heartbeat. A controller declaring
``keyless_heartbeats`` promises such a change gives it no key; the engine then does not
call its ``keys_for``. Each declaration is checked here against a real heartbeat, and each
meaningful change (a condition's status, a taint, labels, allocatable, unschedulable, …)
is checked to stay an ordinary change that reaches every watcher.
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Iterable

import pytest

from fakekube import Cluster
from fakekube.engine import Context
from fakekube.engine.routing import is_heartbeat
from fakekube.objects.kinds import LEASES, NODES
from fakekube.store import ADDED, MODIFIED, Change

Obj = dict[str, Any]
LEASE_NS = "kube-node-lease"

#: Every controller of a default cluster that declares ``keyless_heartbeats`` (a new
#: declaration must be added here, and so gets its check below).
DECLARING = ["daemonset-controller", "garbage-collector-controller", "kube-scheduler", "kubelet-heartbeats",
             "kubelet-pods", "kubelet-static-pods", "taint-eviction-controller"]
#: The scheduler's ``keys_for`` names every change it watches and its node sync finds
#: nothing to do for a heartbeat: its proof is differential (a run syncing every heartbeat
#: and a run skipping them place and record the same: tests/integration/test_heartbeat_routes.py).
SYNC_ONLY = ["kube-scheduler"]
#: Node watchers whose ``keys_for`` looks at the node's state, not at what changed (as
#: upstream's handlers, they retry on every update): a heartbeat still reaches them.
STATE_BASED = ["node-ipam-controller", "node-lifecycle-controller"]


@pytest.fixture(scope="module")
def reported() -> tuple[Cluster, Change]:
    """An idle cluster after its first 5-minute status report, and one node's report."""
    cluster = Cluster(nodes=2, seed=3)
    cluster.advance(301)
    reports = [c for c in cluster.store.changes_since(0) if c.resource == "nodes" and c.type == MODIFIED]
    return cluster, reports[-1]


def changed(change: Change, edit: Callable[[Obj], None]) -> Change:
    """``change`` with ``edit`` applied to a copy of its new object."""
    obj = copy.deepcopy(change.obj)
    edit(obj)
    return change._replace(obj=obj)


def condition(obj: Obj, kind: str) -> Obj:
    return next(c for c in obj["status"]["conditions"] if c["type"] == kind)


MEANINGFUL: dict[str, Callable[[Obj], None]] = {
    "a condition's status": lambda o: condition(o, "Ready").update(status="False"),
    "a condition's reason": lambda o: condition(o, "MemoryPressure").update(reason="KubeletHasInsufficientMemory"),
    "a condition's transition time": lambda o: condition(o, "Ready").update(lastTransitionTime="2025-01-01T00:05:00Z"),
    "a condition added": lambda o: o["status"]["conditions"].append({"type": "NetworkUnavailable", "status": "False"}),
    "a taint": lambda o: o["spec"].update(taints=[{"key": "k", "effect": "NoExecute"}]),
    "labels": lambda o: o["metadata"]["labels"].update(zone="a"),
    "annotations": lambda o: o["metadata"]["annotations"].update(note="x"),
    "allocatable": lambda o: o["status"]["allocatable"].update(cpu="1"),
    "unschedulable": lambda o: o["spec"].update(unschedulable=True),
    "the podCIDR": lambda o: o["spec"].update(podCIDR="10.9.0.0/24", podCIDRs=["10.9.0.0/24"]),
    "images": lambda o: o["status"].update(images=[{"names": ["busybox"], "sizeBytes": 1}]),
    "managedFields": lambda o: o["metadata"].update(managedFields=[{"manager": "kubelet"}]),
    "owner references": lambda o: o["metadata"].update(ownerReferences=[{"uid": "u"}]),
    "finalizers": lambda o: o["metadata"].update(finalizers=["f"]),
}


def test_a_status_report_that_moves_only_heartbeat_times_is_a_heartbeat(reported: tuple[Cluster, Change]) -> None:
    _, report = reported
    assert report.obj["status"]["conditions"] != report.prev["status"]["conditions"]  # type: ignore[index]
    assert is_heartbeat(report)
    assert not is_heartbeat(report._replace(type=ADDED))


@pytest.mark.parametrize("what", sorted(MEANINGFUL))
def test_a_meaningful_node_change_is_no_heartbeat_and_reaches_every_watcher(
        reported: tuple[Cluster, Change], what: str) -> None:
    cluster, report = reported
    change = changed(report, MEANINGFUL[what])
    assert not is_heartbeat(change)
    assert _watchers_called(cluster, change) == [name for name, _ in cluster.engine._routes[NODES]]


def test_a_heartbeat_reaches_only_the_watchers_without_the_declaration(reported: tuple[Cluster, Change]) -> None:
    cluster, report = reported
    routed = [name for name, _ in cluster.engine._routes[NODES]]
    assert sorted(set(routed) - set(STATE_BASED)) == sorted(set(routed) & set(DECLARING))
    assert _watchers_called(cluster, report) == [name for name in routed if name in STATE_BASED]


@pytest.mark.parametrize("name", DECLARING)
def test_each_declaring_controller_gives_no_key_for_a_heartbeat(reported: tuple[Cluster, Change], name: str) -> None:
    cluster, report = reported
    controller = cluster.engine._controllers[name]
    assert controller.keyless_heartbeats is True  # type: ignore[attr-defined]
    if NODES in [tuple(r) for r in controller.resources] and name not in SYNC_ONLY:
        assert list(controller.keys_for(report)) == []
    lease = cluster.store.get(LEASES, (LEASE_NS, "node-1"))
    assert lease is not None
    renewal = Change(lease_rv := int(lease["metadata"]["resourceVersion"]) + 1, MODIFIED, *LEASES, LEASE_NS, "node-1",
                     dict(lease, spec=dict(lease["spec"], renewTime="2030-01-01T00:00:00.000000Z"),
                          metadata=dict(lease["metadata"], resourceVersion=str(lease_rv))), lease)
    assert is_heartbeat(renewal)
    if LEASES in [tuple(r) for r in controller.resources]:
        assert list(controller.keys_for(renewal)) == []


@pytest.mark.parametrize(("name", "what"), [
    ("kube-scheduler", "labels"), ("kube-scheduler", "allocatable"), ("kube-scheduler", "unschedulable"),
    ("kube-scheduler", "a condition's status"), ("kube-scheduler", "a taint"),
    ("taint-eviction-controller", "a taint"), ("daemonset-controller", "labels"), ("daemonset-controller", "a taint"),
    ("garbage-collector-controller", "owner references"),
])
def test_a_declaring_controller_still_gets_its_key_from_a_meaningful_change(
        reported: tuple[Cluster, Change], name: str, what: str) -> None:
    cluster, report = reported
    assert list(cluster.engine._controllers[name].keys_for(changed(report, MEANINGFUL[what])))


class NodeWatcher:
    """A controller watching Nodes, declaring (or not) that heartbeats give it no key."""

    resources = (NODES,)

    def __init__(self, name: str, keyless: bool) -> None:
        self.name = name
        self.keyless_heartbeats = keyless
        self.seen: list[str] = []

    def keys_for(self, change: Change) -> Iterable[str]:
        self.seen.append(change.name)
        return ()

    def reconcile(self, key: str, ctx: Context) -> None:
        pass


def test_status_reports_skip_a_declaring_watcher_until_something_meaningful_changes() -> None:
    cluster = Cluster(nodes=3)
    quiet, plain = NodeWatcher("quiet-watcher", True), NodeWatcher("plain-watcher", False)
    cluster.engine.register(quiet)
    cluster.engine.register(plain)
    cluster.advance(610)  # two 5-minute reports of every node
    assert plain.seen.count("node-1") >= 2
    assert quiet.seen == []
    cluster.patch("v1", "Node", "node-2", {"metadata": {"labels": {"zone": "b"}}}, namespace="")
    assert quiet.seen == ["node-2"]


def test_the_scheduler_does_not_sync_heartbeats_and_still_places_by_what_changed() -> None:
    cluster = Cluster(nodes=2)
    cluster.advance(5)
    adds = dict((name, added) for name, _, added in cluster.engine.queue_stats())["kube-scheduler"]
    cluster.advance(600)  # two status reports of each node
    assert dict((name, added) for name, _, added in cluster.engine.queue_stats())["kube-scheduler"] == adds
    cluster.patch("v1", "Node", "node-1", {"spec": {"unschedulable": True}}, namespace="")
    cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                    "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    cluster.settle()
    pod = cluster.get("v1", "Pod", "p", "default")
    assert pod["spec"]["nodeName"] == "node-2"


def _watchers_called(cluster: Cluster, change: Change) -> list[str]:
    """The node watchers whose ``keys_for`` the engine calls for ``change``, in order."""
    calls: list[str] = []
    spies = _spied(cluster, calls)
    try:
        cluster.engine._on_change(change)
    finally:
        _unspy(spies)
    return calls


def _spied(cluster: Cluster, calls: list[str]) -> list[tuple[Any, Any]]:
    """Record which node watchers' ``keys_for`` the engine calls (their keys are dropped)."""
    spies = []
    for name, controller in cluster.engine._routes[NODES]:
        original = controller.keys_for

        def spy(change: Change, name: str = name) -> Iterable[str]:
            calls.append(name)
            return ()
        controller.keys_for = spy  # type: ignore[method-assign]
        spies.append((controller, original))
    return spies


def _unspy(spies: list[tuple[Any, Any]]) -> None:
    for controller, _ in spies:
        del controller.keys_for
