"""DefaultPreemption on hand-built nodes: which pods it evicts, which node it picks, when a
pod may not preempt, the exact messages, and the API writes of an eviction.

The what-ifs run through a real Framework whose only filter is a toy "fits if the cpu
requested stays within allocatable" plugin; the controller Context is a small fake that
keeps objects by key and records writes and events.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Mapping

import pytest

from fakekube.objects.kinds import POD_DISRUPTION_BUDGETS, PODS, Resource
from fakekube.scheduler.cache import Cache, Snapshot
from fakekube.scheduler.config import PluginSet, Profile, SchedulerConfig
from fakekube.scheduler.framework import (
    Code, CycleState, NodeInfo, PodInfo, Status, unresolvable, unschedulable,
)
from fakekube.scheduler.plugins.defaultpreemption import (
    DefaultPreemption, split_by_budget_violation, terminating_by_preemption, validate_args,
)
from fakekube.scheduler.plugins.preemption import (
    Budget, Candidate, aggregate, fit_error_message, pick_one_node_for_preemption,
)
from fakekube.scheduler.runtime import Framework, Handle

Obj = dict[str, Any]
NOW = datetime(2025, 1, 1, 0, 10, tzinfo=timezone.utc)
TOY = "ToyFit"


class ToyFit:
    """Fits when the node's requested cpu plus the pod's stays within allocatable."""

    name = TOY

    def __init__(self, handle: Handle, args: Mapping[str, Any]) -> None:
        pass

    def filter(self, state: CycleState, info: PodInfo, node: NodeInfo) -> Status | None:
        if node.requested.milli_cpu + info.requests.milli_cpu <= node.allocatable.milli_cpu:
            return None
        return unschedulable(TOY, "Insufficient cpu")


class ToyCount:
    """A PreFilter with per-cycle data kept up to date by add_pod/remove_pod (so a test can
    see the evaluator clones the state instead of changing the cycle's own)."""

    name = "ToyCount"

    def __init__(self, handle: Handle, args: Mapping[str, Any]) -> None:
        pass

    class Data:
        def __init__(self, removed: int = 0) -> None:
            self.removed = removed

        def clone(self) -> "ToyCount.Data":
            return ToyCount.Data(self.removed)

    def pre_filter(self, state: CycleState, info: PodInfo) -> tuple[set[str] | None, Status | None]:
        state.data[self.name] = ToyCount.Data()
        return None, None

    def add_pod(self, state: CycleState, info: PodInfo, other: PodInfo, node: NodeInfo) -> Status | None:
        state.data[self.name].removed -= 1
        return None

    def remove_pod(self, state: CycleState, info: PodInfo, other: PodInfo, node: NodeInfo) -> Status | None:
        state.data[self.name].removed += 1
        return None


class ToySort:
    name = "PrioritySort"

    def __init__(self, handle: Handle, args: Mapping[str, Any]) -> None:
        pass

    def sort_key(self, queued: Any) -> tuple[Any, ...]:
        return ()


class ToyBinder:
    name = "DefaultBinder"

    def __init__(self, handle: Handle, args: Mapping[str, Any]) -> None:
        pass

    def bind(self, state: CycleState, info: PodInfo, node_name: str) -> Status | None:
        return None


REGISTRY = {"PrioritySort": ToySort, "ToyCount": ToyCount, TOY: ToyFit, "DefaultPreemption": DefaultPreemption,
            "DefaultBinder": ToyBinder}


class FakeRng:
    def __init__(self, offset: int = 0) -> None:
        self.offset = offset

    def randrange(self, start: int, stop: int) -> int:
        return start + self.offset % (stop - start)


class FakeClient:
    def __init__(self, ctx: "FakeContext") -> None:
        self.ctx = ctx

    def update_status(self, resource: Resource, obj: Obj) -> Obj:
        self.ctx.writes.append(("update_status", obj["metadata"]["name"], obj["status"]))
        self.ctx.objects[resource, obj["metadata"]["namespace"], obj["metadata"]["name"]] = obj
        return obj

    def delete(self, resource: Resource, name: str, namespace: str = "", **options: Any) -> Obj:
        self.ctx.writes.append(("delete", name, options))
        return self.ctx.objects[resource, namespace, name]

    def patch(self, resource: Resource, name: str, patch: Any, namespace: str = "", patch_type: str = "",
              subresource: str = "") -> Obj:
        self.ctx.writes.append(("patch", name, subresource, patch))
        return self.ctx.objects[resource, namespace, name]


class FakeContext:
    def __init__(self, offset: int = 0) -> None:
        self.now = NOW
        self.rng = FakeRng(offset)
        self.objects: dict[tuple[Resource, str, str], Obj] = {}
        self.writes: list[tuple[Any, ...]] = []
        self.events: list[tuple[str, str, str, str, str]] = []
        self.client = FakeClient(self)

    def get(self, resource: Resource, name: str, namespace: str = "") -> Obj | None:
        return self.objects.get((resource, namespace, name))

    def list(self, resource: Resource, namespace: str = "") -> list[Obj]:
        return [obj for (r, ns, _), obj in sorted(self.objects.items(), key=lambda kv: kv[0][1:])
                if r == resource and (not namespace or ns == namespace)]

    def record_eventf(self, regarding: Obj, kind: str, event_type: str, reason: str, action: str, note: str,
                      reporting_controller: str, related: Obj | None = None) -> None:
        assert (kind, action) == ("Pod", "Preempting") and related is not None
        self.events.append((regarding["metadata"]["name"], event_type, reason, note, reporting_controller))


def pod(name: str, priority: int = 0, cpu: str = "500m", started: str | None = "2025-01-01T00:00:00Z",
        **extra: Any) -> Obj:
    status: Obj = {"startTime": started} if started else {}
    status.update(extra.pop("status", {}))
    meta: Obj = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    meta.update(extra.pop("metadata", {}))
    return {"metadata": meta, "status": status,
            "spec": {"priority": priority, "schedulerName": "default-scheduler",
                     "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}], **extra}}


def node(name: str, cpu: str = "2") -> Obj:
    return {"metadata": {"name": name}, "status": {"allocatable": {"cpu": cpu, "pods": "110"}}}


class World:
    """A cache of nodes and bound pods, a framework over it and the preemption plugin."""

    def __init__(self, nodes: Mapping[str, list[Obj]], args: Mapping[str, Any] | None = None, offset: int = 0,
                 cpu: str = "2") -> None:
        self.cache = Cache()
        self.ctx = FakeContext(offset)
        for node_name, pods in nodes.items():
            self.cache.set_node(node(node_name, cpu))
            for bound in pods:
                self.add(bound, node_name)
        profile = Profile(multi_point=PluginSet(
            (("PrioritySort", 0), ("ToyCount", 0), (TOY, 0), ("DefaultPreemption", 0), ("DefaultBinder", 0)),
            ("*",)), plugin_args=(("DefaultPreemption", args or {}),))
        self.handle = Handle(Snapshot(self.cache), SchedulerConfig((profile,)), profile)
        self.handle.use(self.ctx)  # type: ignore[arg-type]
        self.framework = Framework(profile, self.handle, REGISTRY)
        self.plugin: DefaultPreemption = self.framework.plugins["DefaultPreemption"]

    def add(self, obj: Obj, node_name: str = "") -> PodInfo:
        if node_name:
            obj["spec"]["nodeName"] = node_name
        self.ctx.objects[PODS, "default", obj["metadata"]["name"]] = obj
        info = PodInfo(obj)
        if node_name:
            self.cache.add_pod(node_name, info)
        return info

    def add_pdb(self, name: str, labels: Mapping[str, str], allowed: int, disrupted: tuple[str, ...] = ()) -> None:
        self.ctx.objects[POD_DISRUPTION_BUDGETS, "default", name] = {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": dict(labels)}},
            "status": {"disruptionsAllowed": allowed, "disruptedPods": {n: "2025-01-01T00:00:00Z" for n in disrupted}}}

    def preempt(self, preemptor: Obj, statuses: Mapping[str, Status] | None = None) -> tuple[str | None, Status]:
        """A cycle as the scheduler runs it: PreFilter, Filter on every node, then the plugin's
        PostFilter (called directly: the framework's runner drops the "" that clears a
        nomination when preemption cannot help)."""
        info = self.add(preemptor)
        state = CycleState()
        self.framework.run_pre_filter(state, info)
        if statuses is None:
            statuses = {}
            for node_info in self.handle.snapshot.node_infos():
                status = self.framework.run_filters(state, info, node_info)
                assert status is not None, f"{preemptor['metadata']['name']} fits {node_info.name}"
                statuses[node_info.name] = status
        before = state.data["ToyCount"].removed
        result = self.plugin.post_filter(state, info, statuses)
        assert state.data["ToyCount"].removed == before, "the what-ifs changed the cycle's own state"
        return result


def labelled(name: str, priority: int, labels: Mapping[str, str], **kw: Any) -> Obj:
    return pod(name, priority, metadata={"labels": dict(labels)}, **kw)


# -- victims on one node ---------------------------------------------------------------------
def test_evicts_only_the_lowest_priority_pod_that_makes_room() -> None:
    # 2 cpu node, three 500m pods (priorities 1, 2, 3), preemptor needs 1 cpu: with all three
    # gone it fits; reprieving 3 (1000m used then) and 2 (1500m... 1000 + 1000 = 2000) keeps
    # it fitting, reprieving 1 too would need 2500m -> 1 is the victim.
    world = World({"node-1": [pod("p1", 1), pod("p2", 2), pod("p3", 3)]})
    nominated, status = world.preempt(pod("high", 10, cpu="1"))
    assert (nominated, status.code) == ("node-1", Code.SUCCESS)
    assert [w[1] for w in world.ctx.writes if w[0] == "delete"] == ["p1"]


def test_pods_at_or_above_the_preemptors_priority_are_never_victims() -> None:
    world = World({"node-1": [pod("same", 10, cpu="1"), pod("low", 1, cpu="1")]})
    nominated, _ = world.preempt(pod("high", 10, cpu="1"))
    assert nominated == "node-1"
    assert [w[1] for w in world.ctx.writes if w[0] == "delete"] == ["low"]


def test_victims_are_reprieved_most_important_first_and_listed_so() -> None:
    # Four 500m pods, preemptor needs 1.5 cpu: only one 500m pod can stay, the most
    # important (priority 4); the other three are victims, most important first. Among
    # equal priorities the one running longer is more important.
    world = World({"node-1": [pod("a", 2, started="2025-01-01T00:05:00Z"), pod("b", 4), pod("c", 1),
                              pod("d", 2, started="2025-01-01T00:01:00Z")]})
    info = PodInfo(pod("high", 10, cpu="1500m"))
    state = CycleState()
    world.framework.run_pre_filter(state, info)
    node_copy = world.cache.nodes["node-1"].clone()
    victims, violations, status = world.plugin.select_victims_on_node(state, info, node_copy, [])
    assert status is None and violations == 0
    assert [v.name for v in victims] == ["d", "a", "c"]
    assert state.data["ToyCount"].removed == 3  # the copy's state: three pods stay removed
    assert len(world.cache.nodes["node-1"].pods) == 4  # the cache's node is untouched


def test_budget_protected_pods_are_reprieved_before_others() -> None:
    # Two equal pods, room for one of them: "guarded" is covered by a PDB with no
    # disruptions left, so it is reprieved first and "free" is evicted.
    world = World({"node-1": [pod("free", 1, cpu="1"), labelled("guarded", 1, {"app": "db"}, cpu="1")]})
    world.add_pdb("db", {"app": "db"}, allowed=0)
    nominated, _ = world.preempt(pod("high", 10, cpu="1"))
    assert nominated == "node-1"
    assert [w[1] for w in world.ctx.writes if w[0] == "delete"] == ["free"]


def test_budget_split_counts_allowed_disruptions_in_order() -> None:
    pods = [PodInfo(labelled(n, 1, {"app": "web"})) for n in ("w1", "w2", "w3")] + [PodInfo(pod("bare", 1))]
    budgets = [Budget.from_pdb({"metadata": {"namespace": "default"}, "spec": {"selector": {"matchLabels": {
        "app": "web"}}}, "status": {"disruptionsAllowed": 1, "disruptedPods": {"w2": "t"}}})]
    violating, respecting = split_by_budget_violation(pods, budgets)
    # w1 uses the one allowed disruption, w2 is already being disrupted (free), w3 violates.
    assert [p.name for p in violating] == ["w3"]
    assert [p.name for p in respecting] == ["w1", "w2", "bare"]
    # Empty, nil and invalid selectors and other namespaces cover nothing.
    specs: list[Obj] = [{"selector": {}}, {}, {"selector": {"matchExpressions": [{"key": "app", "operator": "Bad"}]}}]
    for spec in specs:
        budget = Budget.from_pdb({"metadata": {"namespace": "default"}, "spec": spec, "status": {}})
        assert split_by_budget_violation(pods, [budget])[0] == []
    other_ns = Budget.from_pdb({"metadata": {"namespace": "other"}, "spec": {"selector": {"matchLabels": {
        "app": "web"}}}, "status": {}})
    assert split_by_budget_violation(pods, [other_ns])[0] == []


# -- choosing the node -----------------------------------------------------------------------
def test_prefers_the_node_whose_victims_violate_no_budget() -> None:
    world = World({"node-a": [labelled("guarded", 1, {"app": "db"}, cpu="2")], "node-b": [pod("costly", 5, cpu="2")]})
    world.add_pdb("db", {"app": "db"}, allowed=0)
    nominated, _ = world.preempt(pod("high", 10, cpu="1"))
    assert nominated == "node-b"


def test_prefers_the_node_with_the_lowest_priority_victims() -> None:
    world = World({"node-a": [pod("mid", 5, cpu="2")], "node-b": [pod("low", 1, cpu="2")]})
    nominated, _ = world.preempt(pod("high", 10, cpu="1"))
    assert nominated == "node-b"
    assert world.ctx.events == [("low", "Normal", "Preempted", "Preempted by pod uid-high on node node-b",
                                 "default-scheduler")]


def candidate(name: str, *victims: tuple[int, str], violations: int = 0) -> Candidate:
    return Candidate(name, [PodInfo(pod(f"{name}-{i}", priority, started=started))
                            for i, (priority, started) in enumerate(victims)], violations)


T0, T1, T2 = "2025-01-01T00:00:00Z", "2025-01-01T00:01:00Z", "2025-01-01T00:02:00Z"


@pytest.mark.parametrize(("candidates", "expected"), [
    # 1. fewest budget violations
    ([candidate("a", (1, T0), violations=1), candidate("b", (5, T0))], "b"),
    # 2. lowest highest-victim priority
    ([candidate("a", (5, T0)), candidate("b", (3, T0), (3, T0), (3, T0))], "b"),
    # 3. smallest sum of priorities (each + 2^31): two victims of -5 cost more than one
    ([candidate("a", (-5, T0), (-5, T0)), candidate("b", (-5, T0))], "b"),
    ([candidate("a", (3, T0), (2, T0)), candidate("b", (3, T0), (1, T0))], "b"),
    # 4. (sums equal, so counts are too unless priorities differ) fewest victims
    # 5. latest start among the highest-priority victims
    ([candidate("a", (3, T0), (1, T2)), candidate("b", (3, T1), (1, T0))], "b"),
    # 6. still tied: the first found
    ([candidate("a", (3, T1)), candidate("b", (3, T1))], "a"),
])
def test_pick_one_node_criteria_in_order(candidates: list[Candidate], expected: str) -> None:
    assert pick_one_node_for_preemption(candidates, NOW).name == expected


def test_dry_run_starts_at_the_random_offset_and_stops_at_enough_candidates() -> None:
    # Percentage 0 and absolute 1: one candidate is enough. Offset 1 starts at node-b, whose
    # victim (priority 5) is worse than node-a's (1), and still wins: node-a is never tried.
    nodes = {"node-a": [pod("a", 1, cpu="2")], "node-b": [pod("b", 5, cpu="2")], "node-c": [pod("c", 1, cpu="2")]}
    world = World(nodes, {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 1}, offset=1)
    assert world.preempt(pod("high", 10, cpu="1"))[0] == "node-b"
    # With the defaults all three nodes are tried (max(10% of 3, 100) capped at 3).
    world = World(nodes, offset=1)
    assert world.preempt(pod("high", 10, cpu="1"))[0] == "node-c"  # node-c found before node-a


def test_number_of_candidates() -> None:
    plugin = World({"node-1": []}).plugin
    assert [plugin.num_candidates(n) for n in (1, 50, 100, 999, 1000, 5000)] == [1, 50, 100, 100, 100, 500]
    plugin.min_candidate_nodes_percentage, plugin.min_candidate_nodes_absolute = 30, 5
    assert [plugin.num_candidates(n) for n in (3, 10, 100)] == [3, 5, 30]


# -- when preemption does not happen ---------------------------------------------------------
def test_preemption_policy_never() -> None:
    world = World({"node-1": [pod("low", 1, cpu="2")]})
    nominated, status = world.preempt(pod("never", 10, cpu="1", preemptionPolicy="Never"))
    assert (nominated, status.code, status.reasons) == (
        None, Code.UNSCHEDULABLE, ("preemption: not eligible due to preemptionPolicy=Never.",))
    assert world.ctx.writes == [] and world.ctx.events == []


def test_no_second_preemption_while_victims_on_the_nominated_node_terminate() -> None:
    terminating = pod("victim", 1, cpu="2", metadata={"deletionTimestamp": "2025-01-01T00:09:00Z"},
                      status={"conditions": [{"type": "DisruptionTarget", "status": "True",
                                              "reason": "PreemptionByScheduler"}]})
    assert terminating_by_preemption(terminating)
    world = World({"node-1": [terminating], "node-2": [pod("other", 1, cpu="2")]})
    waiting = pod("high", 10, cpu="1", status={"nominatedNodeName": "node-1"})
    nominated, status = world.preempt(waiting)
    assert (nominated, status.reasons) == (
        None, ("preemption: not eligible due to a terminating pod on the nominated node.",))
    # Once Filter finds the nominated node Unresolvable, the pod may preempt elsewhere.
    statuses = {"node-1": unresolvable(TOY, "gone"), "node-2": unschedulable(TOY, "Insufficient cpu")}
    assert world.preempt(waiting, statuses)[0] == "node-2"


def test_no_potential_node() -> None:
    world = World({"node-1": [], "node-2": [], "node-3": []})
    statuses = {name: unresolvable("NodeAffinity", "node(s) didn't match Pod's node affinity/selector")
                for name in ("node-1", "node-2", "node-3")}
    nominated, status = world.preempt(pod("high", 10), statuses)
    assert (nominated, status.code, status.reasons) == ("", Code.UNSCHEDULABLE, (
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",))


def test_histogram_of_why_each_tried_node_cannot_help() -> None:
    # node-1: only a higher-priority pod; node-2: too small even when empty; node-3 and
    # node-4: Unresolvable in Filter, so never tried.
    world = World({"node-1": [pod("top", 100, cpu="2")], "node-2": [pod("low", 1, cpu="1")], "node-3": [],
                   "node-4": []}, cpu="2")
    world.cache.set_node(node("node-2", "1"))
    statuses = {"node-1": unschedulable(TOY, "Insufficient cpu"), "node-2": unschedulable(TOY, "Insufficient cpu"),
                "node-3": unresolvable(TOY, "x"), "node-4": unresolvable(TOY, "x")}
    nominated, status = world.preempt(pod("high", 10, cpu="1500m"), statuses)
    assert (nominated, status.reasons) == ("", (
        "preemption: 0/4 nodes are available: 1 Insufficient cpu, 1 No preemption victims found for incoming pod, "
        "2 Preemption is not helpful for scheduling.",))


def test_fit_error_message_sorts_as_strings() -> None:
    statuses = [unschedulable("X", "b")] * 10 + [unschedulable("X", "a")] * 2
    assert fit_error_message(12, statuses, "absent") == "0/12 nodes are available: 10 b, 2 a."
    assert aggregate(["x", "y", "x"]) == "[x, y]" and aggregate(["x"]) == "x"


# -- the eviction itself ---------------------------------------------------------------------
def test_eviction_writes_condition_delete_event_and_clears_lower_nominations() -> None:
    world = World({"node-1": [pod("low", 1, cpu="2")]})
    lower = world.add(pod("lower-nominee", 5, status={"nominatedNodeName": "node-1"}))
    higher = world.add(pod("higher-nominee", 50, cpu="0", status={"nominatedNodeName": "node-1"}))
    world.cache.nominate(lower, "node-1")
    world.cache.nominate(higher, "node-1")
    nominated, status = world.preempt(pod("high", 10, cpu="1"))
    assert (nominated, status.code, status.reasons) == ("node-1", Code.SUCCESS, ())
    condition = {"type": "DisruptionTarget", "status": "True", "lastProbeTime": None,
                 "lastTransitionTime": "2025-01-01T00:10:00Z", "reason": "PreemptionByScheduler",
                 "message": "default-scheduler: preempting to accommodate a higher priority pod"}
    assert world.ctx.writes == [
        ("patch", "lower-nominee", "status", {"status": {"nominatedNodeName": None}}),
        ("update_status", "low", {"startTime": "2025-01-01T00:00:00Z", "conditions": [condition]}),
        ("delete", "low", {}),  # no grace override: the pod's own terminationGracePeriodSeconds
    ]
    assert world.ctx.events == [("low", "Normal", "Preempted", "Preempted by pod uid-high on node node-1",
                                 "default-scheduler")]


def test_args_validation() -> None:
    assert validate_args({}) == (10, 100)
    assert validate_args({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 5}) == (0, 5)
    with pytest.raises(ValueError, match=r"^minCandidateNodesPercentage: Invalid value: 101: not in valid range "
                                         r"\[0, 100\]$"):
        validate_args({"minCandidateNodesPercentage": 101})
    with pytest.raises(ValueError, match=r"^minCandidateNodesAbsolute: Invalid value: -1: not in valid range "
                                         r"\[0, inf\)$"):
        validate_args({"minCandidateNodesAbsolute": -1})
    with pytest.raises(ValueError, match="cannot be zero at the same time as minCandidateNodesAbsolute"):
        validate_args({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0})


def test_registers_assigned_pod_deletion_with_a_skip_hint() -> None:
    plugin = World({"node-1": []}).plugin
    [hint] = plugin.events_to_register()
    assert hint.event.resource == "AssignedPod" and hint.hint is not None
    assert hint.hint({}, {}, None).value == "QueueSkip"
