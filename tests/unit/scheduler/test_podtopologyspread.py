"""PodTopologySpread: Filter verdicts with upstream's reasons, scores from the formula
worked by hand, default constraints, args validation, AddPod/RemovePod and hints."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import pytest

from fakekube.objects.kinds import REPLICA_SETS, REPLICATION_CONTROLLERS, SERVICES, STATEFUL_SETS
from fakekube.scheduler.cache import Cache, Snapshot
from fakekube.scheduler.config import Profile, SchedulerConfig
from fakekube.scheduler.framework import SKIP, Code, CycleState, Hint, PodInfo
from fakekube.scheduler.plugins.podtopologyspread import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH, ERR_REASON_NODE_LABEL_NOT_MATCH, NAME, PodTopologySpread,
)
from fakekube.scheduler.runtime import Handle

Obj = dict[str, Any]
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
WEB = {"matchLabels": {"app": "web"}}


def node(name: str, zone: str | None = None, labels: dict[str, str] | None = None,
         taints: list[Obj] | None = None) -> Obj:
    all_labels = {HOST: name, **(labels or {})}
    if zone is not None:
        all_labels[ZONE] = zone
    spec: Obj = {"taints": taints} if taints else {}
    return {"metadata": {"name": name, "labels": all_labels}, "spec": spec,
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def pod(name: str, labels: dict[str, str] | None = None, node_name: str = "", namespace: str = "default",
        constraints: list[Obj] | None = None, **spec: Any) -> Obj:
    meta: Obj = {"name": name, "namespace": namespace, "uid": f"uid-{name}", "labels": labels or {}}
    full: Obj = {"containers": [{"name": "c", "image": "nginx"}], **spec}
    if node_name:
        full["nodeName"] = node_name
    if constraints:
        full["topologySpreadConstraints"] = constraints
    return {"metadata": meta, "spec": full}


def spread(key: str = ZONE, max_skew: int = 1, action: str = "DoNotSchedule", selector: Obj | None = WEB,
           **extra: Any) -> Obj:
    out: Obj = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": action, **extra}
    if selector is not None:
        out["labelSelector"] = selector
    return out


class FakeContext:
    """The two reads the plugin makes through handle.ctx."""

    def __init__(self, *objects: tuple[Any, Obj]) -> None:
        self.objects = list(objects)

    def list(self, resource: Any, namespace: str = "") -> list[Obj]:
        return [obj for res, obj in self.objects
                if res == resource and (not namespace or obj["metadata"].get("namespace") == namespace)]

    def get(self, resource: Any, name: str, namespace: str = "") -> Obj | None:
        return next((obj for obj in self.list(resource, namespace) if obj["metadata"]["name"] == name), None)


class LoggingCache(Cache):
    """A cache that logs the names of the nodes whose NodeInfo changed (the change log
    the plugin uses instead of scanning generations when a snapshot offers one)."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []
        self.start = 0

    @property
    def position(self) -> int:
        return self.start + len(self.names)

    def since(self, position: int) -> list[str] | None:
        return None if position < self.start else self.names[position - self.start:]

    def set_node(self, node_obj: Obj) -> Any:
        self.names.append(node_obj["metadata"]["name"])
        return super().set_node(node_obj)

    def remove_node(self, name: str) -> None:
        self.names.append(name)
        super().remove_node(name)

    def add_pod(self, node_name: str, info: PodInfo) -> None:
        old = self.pods.get(info.key)
        if old is not None:
            self.names.append(old[0])
        self.names.append(node_name)
        super().add_pod(node_name, info)

    def remove_pod(self, key: str) -> Any:
        if key in self.pods:
            self.names.append(self.pods[key][0])
        return super().remove_pod(key)

    def forget(self) -> None:
        """Drop the log's entries (a reader behind them must start over)."""
        self.start += len(self.names)
        self.names = []


class World:
    """A cache with nodes and bound pods, a handle over it, and the plugin."""

    def __init__(self, nodes: list[Obj], pods: list[Obj] = (), args: Obj | None = None,  # type: ignore[assignment]
                 ctx: FakeContext | None = None, change_log: bool = False) -> None:
        self.cache = LoggingCache() if change_log else Cache()
        for each in nodes:
            self.cache.set_node(each)
        for each in pods:
            self.bind(each)
        snapshot = Snapshot(self.cache)
        if change_log:
            snapshot.changes = self.cache  # type: ignore[attr-defined]
        self.handle = Handle(snapshot, SchedulerConfig(), Profile())
        self.handle.use(ctx or FakeContext())  # type: ignore[arg-type]
        self.plugin = PodTopologySpread(self.handle, args or {})

    def bind(self, placed: Obj) -> None:
        self.cache.add_pod(placed["spec"]["nodeName"], PodInfo(placed))

    def filter_all(self, incoming: Obj) -> dict[str, Any]:
        """Each node's Filter verdict: None, or (code, reasons)."""
        state, info = CycleState(), PodInfo(incoming)
        _, status = self.plugin.pre_filter(state, info)
        assert status is None, status
        out: dict[str, Any] = {}
        for each in self.cache.ordered():
            verdict = self.plugin.filter(state, info, each)
            out[each.name] = None if verdict is None else (verdict.code, verdict.reasons)
        return out

    def scores(self, incoming: Obj, names: list[str] | None = None) -> dict[str, int]:
        """Normalized scores over the feasible nodes ``names`` (default: all)."""
        state, info = CycleState(), PodInfo(incoming)
        feasible = [n for n in self.cache.ordered() if names is None or n.name in names]
        status = self.plugin.pre_score(state, info, feasible)
        assert status is None, status
        values = [self.plugin.score(state, info, n) for n in feasible]
        assert self.plugin.score_nodes(state, info, feasible) == values
        self.plugin.normalize_score(state, info, values)
        return {n.name: v for n, v in zip(feasible, values)}


SKEWED = (Code.UNSCHEDULABLE, (ERR_REASON_CONSTRAINTS_NOT_MATCH,))
MISSING = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_NODE_LABEL_NOT_MATCH,))


def three_zones(counts: dict[str, int], labels: dict[str, str] | None = None) -> list[Obj]:
    """Matching pods bound per node name (nodes a1, b1, c1 in zones a, b, c)."""
    pods = []
    for name, count in counts.items():
        pods += [pod(f"{name}-{i}", labels or {"app": "web"}, node_name=name) for i in range(count)]
    return pods


ZONE_NODES = [node("a1", "a"), node("b1", "b"), node("c1", "c")]


# -- reasons -------------------------------------------------------------------------------
def test_reasons_are_upstreams_words() -> None:
    assert ERR_REASON_CONSTRAINTS_NOT_MATCH == "node(s) didn't match pod topology spread constraints"
    assert ERR_REASON_NODE_LABEL_NOT_MATCH == "node(s) didn't match pod topology spread constraints (missing required label)"
    assert NAME == "PodTopologySpread"


# -- Filter --------------------------------------------------------------------------------
def test_filter_skew_against_the_global_minimum() -> None:
    # a=2, b=1, c=0: min 0, self-match 1; a: 2+1-0=3 > 1, b: 1+1-0=2 > 1, c: 0+1-0=1 fits.
    world = World(ZONE_NODES, three_zones({"a1": 2, "b1": 1}))
    verdicts = world.filter_all(pod("new", {"app": "web"}, constraints=[spread()]))
    assert verdicts == {"a1": SKEWED, "b1": SKEWED, "c1": None}


def test_filter_pod_not_matching_its_own_selector_has_no_self_match() -> None:
    # a=2, b=1, c=0 and the pod is not app=web: a: 2+0-0=2 > 1; b: 1 fits; c fits.
    world = World(ZONE_NODES, three_zones({"a1": 2, "b1": 1}))
    verdicts = world.filter_all(pod("new", {"app": "other"}, constraints=[spread()]))
    assert verdicts == {"a1": SKEWED, "b1": None, "c1": None}


def test_node_without_the_topology_key_is_unresolvable() -> None:
    world = World(ZONE_NODES + [node("bare")])
    verdicts = world.filter_all(pod("new", {"app": "web"}, constraints=[spread()]))
    assert verdicts["bare"] == MISSING
    assert verdicts["a1"] is None


def test_nodes_missing_any_key_do_not_count_and_first_constraint_decides_first() -> None:
    # Node c1 lacks "rack", so its pods and domain "c" count for neither constraint:
    # zone min is over {a, b} = 1, so a (2) + 1 - 1 = 2 > 1 fails on the zone constraint.
    nodes = [node("a1", "a", {"rack": "r1"}), node("b1", "b", {"rack": "r2"}), node("c1", "c")]
    world = World(nodes, three_zones({"a1": 2, "b1": 1}))
    verdicts = world.filter_all(pod("new", {"app": "web"}, constraints=[spread(), spread("rack", 5)]))
    assert verdicts == {"a1": SKEWED, "b1": None, "c1": MISSING}


def test_min_domains_makes_the_global_minimum_zero_while_domains_are_few() -> None:
    nodes = [node("a1", "a"), node("b1", "b")]
    pods = three_zones({"a1": 1, "b1": 1})
    incoming = {"app": "web"}
    # Without minDomains: min 1, 1+1-1 = 1 fits everywhere.
    assert World(nodes, pods).filter_all(pod("new", incoming, constraints=[spread()])) == {"a1": None, "b1": None}
    # minDomains 3 > 2 domains: min is 0, 1+1-0 = 2 > 1 on both.
    verdicts = World(nodes, pods).filter_all(pod("new", incoming, constraints=[spread(minDomains=3)]))
    assert verdicts == {"a1": SKEWED, "b1": SKEWED}
    # minDomains 2 is met: the real minimum is used.
    verdicts = World(nodes, pods).filter_all(pod("new", incoming, constraints=[spread(minDomains=2)]))
    assert verdicts == {"a1": None, "b1": None}


def test_node_affinity_policy_honor_leaves_unreachable_domains_out() -> None:
    # a=1, b=1, c=0, the pod may only go to pool=x (zones a and b).
    nodes = [node("a1", "a", {"pool": "x"}), node("b1", "b", {"pool": "x"}), node("c1", "c")]
    pods = three_zones({"a1": 1, "b1": 1})
    honor = pod("new", {"app": "web"}, constraints=[spread()], nodeSelector={"pool": "x"})
    # Honor (default): domains a, b, min 1 -> a: 1+1-1 = 1 fits.
    assert World(nodes, pods).filter_all(honor)["a1"] is None
    ignore = pod("new", {"app": "web"}, constraints=[spread(nodeAffinityPolicy="Ignore")], nodeSelector={"pool": "x"})
    # Ignore: c counts, min 0 -> a: 2 > 1.
    assert World(nodes, pods).filter_all(ignore)["a1"] == SKEWED


def test_required_node_affinity_terms_also_count_for_honor() -> None:
    nodes = [node("a1", "a"), node("b1", "b"), node("c1", "c")]
    pods = three_zones({"a1": 1, "b1": 1})
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": ZONE, "operator": "NotIn", "values": ["c"]}]}]}}}
    incoming = pod("new", {"app": "web"}, constraints=[spread()], affinity=affinity)
    assert World(nodes, pods).filter_all(incoming)["a1"] is None


def test_node_taints_policy_honor_leaves_untolerated_nodes_out() -> None:
    taint = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    nodes = [node("a1", "a"), node("b1", "b"), node("c1", "c", taints=taint)]
    pods = three_zones({"a1": 1, "b1": 1})
    # Ignore (default): c (0) counts -> a: 2 > 1.
    assert World(nodes, pods).filter_all(pod("new", {"app": "web"}, constraints=[spread()]))["a1"] == SKEWED
    honor = pod("new", {"app": "web"}, constraints=[spread(nodeTaintsPolicy="Honor")])
    assert World(nodes, pods).filter_all(honor)["a1"] is None
    tolerated = pod("new", {"app": "web"}, constraints=[spread(nodeTaintsPolicy="Honor")],
                    tolerations=[{"key": "dedicated", "operator": "Exists"}])
    assert World(nodes, pods).filter_all(tolerated)["a1"] == SKEWED


def test_match_label_keys_narrow_the_selector_to_the_pods_own_values() -> None:
    pods = three_zones({"a1": 2}, {"app": "web", "hash": "v1"})
    plain = pod("new", {"app": "web", "hash": "v2"}, constraints=[spread()])
    assert World(ZONE_NODES, pods).filter_all(plain)["a1"] == SKEWED
    keyed = pod("new", {"app": "web", "hash": "v2"}, constraints=[spread(matchLabelKeys=["hash", "absent"])])
    assert World(ZONE_NODES, pods).filter_all(keyed)["a1"] is None
    same = pod("new", {"app": "web", "hash": "v1"}, constraints=[spread(matchLabelKeys=["hash"])])
    assert World(ZONE_NODES, pods).filter_all(same)["a1"] == SKEWED


def test_terminating_pods_and_other_namespaces_do_not_count() -> None:
    gone = pod("gone", {"app": "web"}, node_name="a1")
    gone["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    elsewhere = pod("elsewhere", {"app": "web"}, node_name="a1", namespace="other")
    world = World(ZONE_NODES, [gone, elsewhere])
    # Counted, they would make a=2 (2+1-0 > 1); left out, a=0 and every zone fits.
    assert world.filter_all(pod("new", {"app": "web"}, constraints=[spread()])) == {"a1": None, "b1": None, "c1": None}


def test_empty_selector_counts_nothing_but_matches_the_pod() -> None:
    # Upstream's countPodsMatchSelector skips an empty selector: all domains 0, self 1.
    world = World(ZONE_NODES, three_zones({"a1": 5}))
    verdicts = world.filter_all(pod("new", {"app": "web"}, constraints=[spread(selector={})]))
    assert verdicts == {"a1": None, "b1": None, "c1": None}


def test_pre_filter_skips_without_hard_constraints() -> None:
    world = World(ZONE_NODES)
    state = CycleState()
    soft = PodInfo(pod("new", {"app": "web"}, constraints=[spread(action="ScheduleAnyway")]))
    assert world.plugin.pre_filter(state, soft) == (None, SKIP)
    assert world.plugin.pre_filter(state, PodInfo(pod("plain", {"app": "web"}))) == (None, SKIP)


def test_invalid_selector_is_an_error() -> None:
    bad = spread(selector={"matchExpressions": [{"key": "app", "operator": "Bogus"}]})
    _, status = World(ZONE_NODES).plugin.pre_filter(CycleState(), PodInfo(pod("new", constraints=[bad])))
    assert status is not None and status.code == Code.ERROR
    assert status.message.startswith("get constraints from pod: obtaining pod's hard topology spread constraints: ")


# -- counts kept across cycles -------------------------------------------------------------
def test_counts_follow_bindings_label_changes_and_node_removal() -> None:
    world = World(ZONE_NODES, three_zones({"a1": 1}))
    incoming = pod("new", {"app": "web"}, constraints=[spread()])
    assert world.filter_all(incoming) == {"a1": SKEWED, "b1": None, "c1": None}
    world.bind(pod("b-new", {"app": "web"}, node_name="b1"))
    world.bind(pod("c-new", {"app": "web"}, node_name="c1"))
    assert world.filter_all(incoming) == {"a1": None, "b1": None, "c1": None}
    world.cache.set_node(node("c1", "a"))  # c1 moves to zone a: a=2, b=1
    assert world.filter_all(incoming) == {"a1": SKEWED, "b1": None, "c1": SKEWED}
    world.cache.remove_pod("default/b-new")  # a=2, b=0
    assert world.filter_all(incoming) == {"a1": SKEWED, "b1": None, "c1": SKEWED}
    world.cache.remove_node("b1")  # only zone a is left: min 2, 2+1-2 = 1 fits
    assert world.filter_all(incoming) == {"a1": None, "c1": None}


def test_what_ifs_do_not_leak_into_the_shared_counts() -> None:
    world = World(ZONE_NODES, three_zones({"a1": 2, "b1": 1, "c1": 1}))
    info = PodInfo(pod("new", {"app": "web"}, constraints=[spread()]))
    state = CycleState()
    world.plugin.pre_filter(state, info)
    a1 = world.cache.nodes["a1"]
    for _ in range(2):
        world.plugin.remove_pod(state, info, a1.pods["default/a1-0"], a1)
    assert world.plugin.filter(state, info, a1) is None  # 0+1-0 = 1 after the what-if
    assert world.filter_all(pod("new", {"app": "web"}, constraints=[spread()]))["a1"] == SKEWED  # 2+1-1 = 2


# -- AddPod / RemovePod --------------------------------------------------------------------
def test_remove_pod_on_a_clone_leaves_the_original_alone() -> None:
    world = World(ZONE_NODES, three_zones({"a1": 2, "b1": 1, "c1": 1}))
    info = PodInfo(pod("new", {"app": "web"}, constraints=[spread()]))
    state = CycleState()
    world.plugin.pre_filter(state, info)
    a1, b1 = world.cache.nodes["a1"], world.cache.nodes["b1"]
    assert world.plugin.filter(state, info, a1) is not None  # 2+1-1 = 2 > 1
    what_if = state.clone()
    world.plugin.remove_pod(what_if, info, a1.pods["default/a1-0"], a1)
    assert world.plugin.filter(what_if, info, a1) is None  # 1+1-1 = 1
    assert world.plugin.filter(state, info, a1) is not None
    # Adding one to b: b=2, a=2 in the original -> min 1 (c); b: 2+1-1 = 2 > 1.
    world.plugin.add_pod(state, info, PodInfo(pod("x", {"app": "web"})), b1)
    assert world.plugin.filter(state, info, b1) is not None


def test_remove_pod_that_lowers_the_minimum() -> None:
    world = World(ZONE_NODES, three_zones({"a1": 2, "b1": 1, "c1": 1}))
    info = PodInfo(pod("new", {"app": "web"}, constraints=[spread()]))
    state = CycleState()
    world.plugin.pre_filter(state, info)
    b1 = world.cache.nodes["b1"]
    assert world.plugin.filter(state, info, b1) is None  # 1+1-1 = 1
    world.plugin.remove_pod(state, info, PodInfo(pod("c1-0", {"app": "web"})), world.cache.nodes["c1"])
    assert world.plugin.filter(state, info, b1) is not None  # c=0: 1+1-0 = 2 > 1


def test_filter_and_add_pod_without_pre_filter_state_are_errors() -> None:
    world = World(ZONE_NODES)
    info, a1 = PodInfo(pod("new", {"app": "web"}, constraints=[spread()])), world.cache.nodes["a1"]
    expected = 'reading "PreFilterPodTopologySpread" from cycleState: not found'
    for status in (world.plugin.filter(CycleState(), info, a1),
                   world.plugin.add_pod(CycleState(), info, PodInfo(pod("x")), a1),
                   world.plugin.remove_pod(CycleState(), info, PodInfo(pod("x")), a1)):
        assert status is not None and (status.code, status.message) == (Code.ERROR, expected)


def test_add_pod_ignores_other_namespaces_and_non_matching_pods() -> None:
    world = World(ZONE_NODES)
    info = PodInfo(pod("new", {"app": "web"}, constraints=[spread()]))
    state = CycleState()
    world.plugin.pre_filter(state, info)
    a1 = world.cache.nodes["a1"]
    world.plugin.add_pod(state, info, PodInfo(pod("x", {"app": "web"}, namespace="other")), a1)
    world.plugin.add_pod(state, info, PodInfo(pod("y", {"app": "db"})), a1)
    assert world.plugin.filter(state, info, a1) is None


# -- Score ---------------------------------------------------------------------------------
def test_score_one_zone_constraint_worked_example() -> None:
    # n1, n2 in zone a; n3 in b; n4 in c. Matching pods n1:2, n2:1, n3:1 -> a=3, b=1, c=0.
    # Three domains among the feasible nodes: weight log(3+2) = 1.609; maxSkew 1 adds 0.
    # Raw: n1, n2: round(3*1.609) = 5; n3: round(1.609) = 2; n4: 0.
    # Normalized 100*(max+min-s)/max with max 5, min 0: 0, 0, 60, 100.
    nodes = [node("n1", "a"), node("n2", "a"), node("n3", "b"), node("n4", "c")]
    world = World(nodes, three_zones({"n1": 2, "n2": 1, "n3": 1}))
    incoming = pod("new", {"app": "web"}, constraints=[spread(action="ScheduleAnyway")])
    assert round(3 * math.log(5)) == 5 and round(math.log(5)) == 2
    assert world.scores(incoming) == {"n1": 0, "n2": 0, "n3": 60, "n4": 100}


def test_score_uses_domains_among_feasible_nodes_but_counts_on_all_nodes() -> None:
    # Feasible n3, n4 only: 2 domains -> weight log(4) = 1.386; counts still from all
    # nodes (b=1, c=0), maxSkew 2 adds 1. Raw: n3 round(1.386+1) = 2, n4 round(1) = 1.
    # Normalized, max 2 min 1: n3 100*(3-2)/2 = 50, n4 100*(3-1)/2 = 100.
    nodes = [node("n1", "a"), node("n2", "a"), node("n3", "b"), node("n4", "c")]
    world = World(nodes, three_zones({"n1": 2, "n2": 1, "n3": 1}))
    incoming = pod("new", {"app": "web"}, constraints=[spread(max_skew=2, action="ScheduleAnyway")])
    assert world.scores(incoming, ["n3", "n4"]) == {"n3": 50, "n4": 100}


def test_feasible_nodes_missing_a_key_score_zero_and_do_not_count() -> None:
    # n4 has no zone: ignored (0). n1..n3 as before: a=3 (n1, n2), b=1; 2 domains among
    # the non-ignored -> weight log(4) = 1.386. Raw: n1, n2 round(4.159) = 4; n3 round(1.386) = 1.
    # Normalized, max 4, min 1: n1, n2 100*(5-4)/4 = 25; n3 100*(5-1)/4 = 100.
    nodes = [node("n1", "a"), node("n2", "a"), node("n3", "b"), node("n4")]
    world = World(nodes, three_zones({"n1": 2, "n2": 1, "n3": 1, "n4": 3}))
    incoming = pod("new", {"app": "web"}, constraints=[spread(action="ScheduleAnyway")])
    assert world.scores(incoming) == {"n1": 25, "n2": 25, "n3": 100, "n4": 0}


def test_all_equal_scores_are_all_max() -> None:
    world = World(ZONE_NODES)
    incoming = pod("new", {"app": "web"}, constraints=[spread(action="ScheduleAnyway")])
    assert world.scores(incoming) == {"a1": 100, "b1": 100, "c1": 100}


def test_pre_score_skips_without_soft_constraints_or_nodes() -> None:
    world = World(ZONE_NODES)
    hard = PodInfo(pod("new", {"app": "web"}, constraints=[spread()]))
    assert world.plugin.pre_score(CycleState(), hard, list(world.cache.ordered())) == SKIP
    # No owner, no Service: the system defaults have no selector -> Skip.
    assert world.plugin.pre_score(CycleState(), PodInfo(pod("bare", {"app": "web"})), []) == SKIP
    empty = World([])
    soft = PodInfo(pod("new", {"app": "web"}, constraints=[spread(action="ScheduleAnyway")]))
    assert empty.plugin.pre_score(CycleState(), soft, []) == SKIP


# -- default constraints ---------------------------------------------------------------------
def replica_set(name: str = "web-rs", selector: Obj | None = None) -> tuple[Any, Obj]:
    return REPLICA_SETS, {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
                          "spec": {"selector": selector or {"matchLabels": {"app": "web"}}}}


def owned(name: str, node_name: str = "", kind: str = "ReplicaSet", owner: str = "web-rs",
          api_version: str = "apps/v1", labels: dict[str, str] | None = None) -> Obj:
    out = pod(name, labels or {"app": "web", "hash": "1"}, node_name=node_name)
    out["metadata"]["ownerReferences"] = [{"apiVersion": api_version, "kind": kind, "name": owner,
                                           "uid": f"uid-{owner}", "controller": True}]
    return out


def test_system_defaults_worked_example() -> None:
    # Hostname maxSkew 3 and zone maxSkew 5, selector from the ReplicaSet (app=web).
    # Nodes: n1, n2 zone a; n3 zone b; n4 no zone (still spread by hostname: system
    # defaults do not require every key). Pods: n1:2, n3:1, n4:1.
    # hostname weight log(4+2) = 1.7918 (4 nodes); zone domains {a, b, ""} -> log(5) = 1.6094.
    # zone totals a=2, b=1. Raw:
    #   n1: 2*1.7918+2 + 2*1.6094+4 = 12.80 -> 13
    #   n2: 0+2       + 2*1.6094+4 =  9.22 -> 9
    #   n3: 1.7918+2  + 1.6094+4   =  9.40 -> 9
    #   n4: 1.7918+2  (no zone)    =  3.79 -> 4
    # Normalized, max 13 min 4: 100*(17-s)/13 -> 30, 61, 61, 100.
    nodes = [node("n1", "a"), node("n2", "a"), node("n3", "b"), node("n4")]
    pods = [owned("p1", "n1"), owned("p2", "n1"), owned("p3", "n3"), owned("p4", "n4")]
    world = World(nodes, pods, ctx=FakeContext(replica_set()))
    assert world.scores(owned("new")) == {"n1": 30, "n2": 61, "n3": 61, "n4": 100}


def test_default_selector_merges_services_and_the_owner() -> None:
    service = (SERVICES, {"metadata": {"name": "svc", "namespace": "default"}, "spec": {"selector": {"app": "web"}}})
    other = (SERVICES, {"metadata": {"name": "db", "namespace": "default"}, "spec": {"selector": {"app": "db"}}})
    # The RS selects hash=1: pods with app=web but hash=2 are not counted.
    rs = replica_set(selector={"matchLabels": {"hash": "1"}})
    nodes = [node("n1", "a"), node("n2", "b")]
    pods = [owned("p1", "n1"), owned("p2", "n2", labels={"app": "web", "hash": "2"})]
    world = World(nodes, pods, ctx=FakeContext(service, other, rs))
    scores = world.scores(owned("new"))
    assert scores["n1"] < scores["n2"] == 100


@pytest.mark.parametrize("resource, kind, api_version, spec", [
    (REPLICATION_CONTROLLERS, "ReplicationController", "v1", {"selector": {"app": "web"}}),
    (STATEFUL_SETS, "StatefulSet", "apps/v1", {"selector": {"matchLabels": {"app": "web"}}}),
    (REPLICA_SETS, "ReplicaSet", "apps/v1", {"selector": {"matchLabels": {"app": "web"}}}),
])
def test_default_selector_from_each_controller_kind(resource: Any, kind: str, api_version: str, spec: Obj) -> None:
    owner = (resource, {"metadata": {"name": "ctl", "namespace": "default", "uid": "uid-ctl"}, "spec": spec})
    nodes = [node("n1", "a"), node("n2", "b")]
    pods = [owned("p1", "n1", kind, "ctl", api_version)]
    world = World(nodes, pods, ctx=FakeContext(owner))
    # n1 has one matching pod. Hostname and zone both have 2 domains: weight log(4) = 1.386.
    # Raw n1: 1.386+2 + 1.386+4 = 8.77 -> 9; n2: 2+4 = 6. Normalized: 100*(15-9)/9 = 66, 100.
    assert world.scores(owned("new", kind=kind, owner="ctl", api_version=api_version)) == {"n1": 66, "n2": 100}


def test_unknown_owner_kinds_and_non_controllers_give_no_defaults() -> None:
    world = World([node("n1", "a")], ctx=FakeContext(replica_set()))
    deployment_owned = owned("new", kind="Deployment")
    assert world.plugin.pre_score(CycleState(), PodInfo(deployment_owned), list(world.cache.ordered())) == SKIP
    old_group = owned("new", api_version="extensions/v1beta1")
    assert world.plugin.pre_score(CycleState(), PodInfo(old_group), list(world.cache.ordered())) == SKIP


def test_list_defaulting_with_hard_default_constraints() -> None:
    args = {"defaultingType": "List",
            "defaultConstraints": [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}]}
    pods = [owned("p1", "a1"), owned("p2", "a1")]
    world = World(ZONE_NODES, pods, args=args, ctx=FakeContext(replica_set()))
    assert world.filter_all(owned("new")) == {"a1": SKEWED, "b1": None, "c1": None}
    # Its own constraints replace the defaults entirely.
    own = owned("own")
    own["spec"]["topologySpreadConstraints"] = [spread(max_skew=5)]
    assert world.filter_all(own) == {"a1": None, "b1": None, "c1": None}


# -- args --------------------------------------------------------------------------------------
@pytest.mark.parametrize("args, message", [
    ({"defaultingType": "Other"}, 'defaultingType: Unsupported value: "Other": supported values: "System", "List"'),
    ({"defaultConstraints": [{"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}]},
     'defaultingType: Invalid value: "System": when .defaultConstraints are not empty'),
    ({"defaultingType": "List", "defaultConstraints": [{"maxSkew": 0, "topologyKey": ZONE,
                                                         "whenUnsatisfiable": "DoNotSchedule"}]},
     "defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)"),
    ({"defaultingType": "List", "defaultConstraints": [{"maxSkew": 1, "topologyKey": ZONE,
                                                         "whenUnsatisfiable": "Never"}]},
     'defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Never": supported values: "DoNotSchedule", '
     '"ScheduleAnyway"'),
    ({"defaultingType": "List", "defaultConstraints": [{"maxSkew": 1, "topologyKey": ZONE,
                                                         "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {}}]},
     "defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they deduced for "
     "each pod"),
    ({"defaultingType": "List", "defaultConstraints": [{"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}]},
     "defaultConstraints[0].topologyKey: Required value: can not be empty"),
    ({"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"},
        {"maxSkew": 2, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}]},
     f'defaultConstraints[1]: Duplicate value: "{{{ZONE}, DoNotSchedule}}"'),
])
def test_bad_args_are_refused_with_upstreams_message(args: Obj, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        World([], args=args)
    assert str(caught.value) == message


def test_several_arg_errors_are_aggregated() -> None:
    args = {"defaultingType": "List", "defaultConstraints": [{"maxSkew": 0, "topologyKey": "", "whenUnsatisfiable": ""}]}
    with pytest.raises(ValueError) as caught:
        World([], args=args)
    assert str(caught.value) == ("[defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf), "
                                 "defaultConstraints[0].topologyKey: Required value: can not be empty, "
                                 "defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty]")


# -- events and hints --------------------------------------------------------------------------
def test_registered_events() -> None:
    events = {(e.event.resource, e.event.action) for e in World([]).plugin.events_to_register()}
    from fakekube.scheduler.framework import ASSIGNED_POD, NODE, UNSCHEDULED_POD, Action
    assert events == {
        (ASSIGNED_POD, Action.ADD | Action.UPDATE_POD_LABEL | Action.DELETE),
        (UNSCHEDULED_POD, Action.UPDATE_POD_LABEL | Action.UPDATE_POD_TOLERATIONS),
        (NODE, Action.ADD | Action.DELETE | Action.UPDATE_NODE_LABEL | Action.UPDATE_NODE_TAINT),
    }


def test_pod_hints() -> None:
    plugin = World([]).plugin
    target = pod("t", {"app": "web"}, constraints=[spread()])
    assigned = pod("x", {"app": "web"}, node_name="n1")
    hint = plugin.is_schedulable_after_pod_change
    assert hint(target, None, assigned) == Hint.QUEUE
    assert hint(target, assigned, None) == Hint.QUEUE
    assert hint(target, None, pod("x", {"app": "db"}, node_name="n1")) == Hint.SKIP
    assert hint(target, None, pod("x", {"app": "web"})) == Hint.SKIP  # not assigned
    assert hint(target, None, pod("x", {"app": "web"}, node_name="n1", namespace="other")) == Hint.SKIP
    relabelled = pod("x", {"app": "db"}, node_name="n1")
    assert hint(target, assigned, relabelled) == Hint.QUEUE
    assert hint(target, assigned, pod("x", {"app": "web", "more": "1"}, node_name="n1")) == Hint.SKIP
    assert hint(target, assigned, assigned) == Hint.SKIP


def test_own_toleration_change_queues_only_when_a_constraint_honours_taints() -> None:
    plugin = World([]).plugin
    honor = pod("t", {"app": "web"}, constraints=[spread(nodeTaintsPolicy="Honor")])
    tolerating = pod("t", {"app": "web"}, constraints=[spread(nodeTaintsPolicy="Honor")],
                     tolerations=[{"operator": "Exists"}])
    assert plugin.is_schedulable_after_pod_change(honor, honor, tolerating) == Hint.QUEUE
    ignore = pod("t", {"app": "web"}, constraints=[spread()])
    ignore_tolerating = pod("t", {"app": "web"}, constraints=[spread()], tolerations=[{"operator": "Exists"}])
    assert plugin.is_schedulable_after_pod_change(ignore, ignore, ignore_tolerating) == Hint.SKIP


def test_node_hints() -> None:
    plugin = World([]).plugin
    target = pod("t", {"app": "web"}, constraints=[spread()])
    hint = plugin.is_schedulable_after_node_change
    assert hint(target, None, node("n", "a")) == Hint.QUEUE
    assert hint(target, None, node("n")) == Hint.SKIP
    assert hint(target, node("n", "a"), None) == Hint.QUEUE
    assert hint(target, node("n"), None) == Hint.SKIP
    assert hint(target, node("n"), node("n", "a")) == Hint.QUEUE           # gained the key
    assert hint(target, node("n", "a"), node("n")) == Hint.QUEUE           # lost it
    assert hint(target, node("n", "a"), node("n", "b")) == Hint.QUEUE      # moved zone
    assert hint(target, node("n", "a"), node("n", "a", {"x": "y"})) == Hint.SKIP
    tainted = node("n", "a", taints=[{"key": "k", "effect": "NoSchedule"}])
    assert hint(target, node("n", "a"), tainted) == Hint.QUEUE
    assert hint(target, node("n"), node("n", taints=[{"key": "k", "effect": "NoSchedule"}])) == Hint.SKIP


# -- incremental counts against a brute-force count, over random cluster changes ---------------
def brute_force(world: World, incoming: Obj, feasible: list[str]) -> tuple[dict[str, Any], dict[str, int] | None]:
    """Upstream's algorithm literally, every count from a scan of every pod: Filter
    verdicts for the hard constraints and normalized scores for the soft ones (None when
    the pod has none)."""
    from fakekube.objects.labels import compile_selector
    from fakekube.objects.tolerations import first_untolerated_taint

    labels = incoming["metadata"]["labels"]
    spec = incoming["spec"]

    def parse(action: str) -> list[tuple[Obj, Any]]:
        out = []
        for c in spec.get("topologySpreadConstraints") or []:
            if c["whenUnsatisfiable"] != action:
                continue
            selector = compile_selector(c.get("labelSelector"))
            keys = [k for k in c.get("matchLabelKeys") or [] if k in labels]
            if keys:
                extra = compile_selector({"matchLabels": {k: labels[k] for k in keys}})
                selector = type(selector)(tuple(sorted(selector.requirements + extra.requirements)))
            out.append((c, selector))
        return out

    def eligible(node: Any, c: Obj, keys: list[str]) -> bool:
        if any(k not in node.labels for k in keys):
            return False
        if c.get("nodeAffinityPolicy", "Honor") == "Honor":
            if any(node.labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
                return False
        if c.get("nodeTaintsPolicy", "Ignore") == "Honor":
            if first_untolerated_taint(node.taints, spec.get("tolerations") or [], ("NoSchedule", "NoExecute")):
                return False
        return True

    def count(node: Any, selector: Any) -> int:
        if selector.nothing or not selector.requirements:
            return 0
        return sum(1 for p in node.pods.values() if p.namespace == "default" and selector.matches(p.labels)
                   and not p.pod["metadata"].get("deletionTimestamp"))

    def domain_counts(constraints: list[tuple[Obj, Any]]) -> list[dict[str, int]]:
        keys = [c["topologyKey"] for c, _ in constraints]
        out: list[dict[str, int]] = []
        for c, selector in constraints:
            totals: dict[str, int] = {}
            for node in world.cache.ordered():
                if eligible(node, c, keys):
                    value = node.labels[c["topologyKey"]]
                    totals[value] = totals.get(value, 0) + count(node, selector)
            out.append(totals)
        return out

    verdicts: dict[str, Any] = {}
    hard = parse("DoNotSchedule")
    if hard:
        totals = domain_counts(hard)
        for node in world.cache.ordered():
            verdict = None
            for (c, selector), counts in zip(hard, totals):
                value = node.labels.get(c["topologyKey"])
                if value is None:
                    verdict = MISSING
                    break
                minimum = min(counts.values()) if len(counts) >= c.get("minDomains", 1) else 0
                if counts.get(value, 0) + selector.matches(labels) - minimum > c["maxSkew"]:
                    verdict = SKEWED
                    break
            verdicts[node.name] = verdict
    soft = parse("ScheduleAnyway")
    if not soft:
        return verdicts, None
    totals = domain_counts(soft)
    nodes = [n for n in world.cache.ordered() if n.name in feasible]
    kept = [n for n in nodes if all(c["topologyKey"] in n.labels for c, _ in soft)]
    raw: dict[str, int] = {}
    for node in kept:
        total = 0.0
        for (c, _), counts in zip(soft, totals):
            key = c["topologyKey"]
            size = len(kept) if key == HOST else len({n.labels[key] for n in kept})
            total += counts.get(node.labels[key], 0) * math.log(size + 2) + c["maxSkew"] - 1
        raw[node.name] = math.floor(total + 0.5)
    scores = {n.name: 0 for n in nodes}
    if raw:
        low, high = min(raw.values()), max(raw.values())
        for name, value in raw.items():
            scores[name] = 100 if high == 0 else 100 * (high + low - value) // high
    return verdicts, scores


def random_constraint(rng: Any) -> Obj:
    extra: Obj = {}
    if rng.random() < 0.3:
        extra["minDomains"] = rng.randint(1, 5)
    if rng.random() < 0.3:
        extra["nodeAffinityPolicy"] = rng.choice(["Honor", "Ignore"])
    if rng.random() < 0.3:
        extra["nodeTaintsPolicy"] = rng.choice(["Honor", "Ignore"])
    if rng.random() < 0.3:
        extra["matchLabelKeys"] = ["tier"]
    action = rng.choice(["DoNotSchedule", "ScheduleAnyway"])
    if action == "ScheduleAnyway":
        extra.pop("minDomains", None)
    selector = rng.choice([WEB, {"matchLabels": {"app": "db"}}, {},
                           {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "db"]}]},
                           {"matchLabels": {"app": "web", "tier": rng.choice(["a", "b"])}},
                           {"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
                           {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["db"]}]}])
    return spread(rng.choice([ZONE, HOST, "rack"]), rng.randint(1, 3), action, selector, **extra)


@pytest.mark.parametrize("pool_limit", [None, 1], ids=["kept", "evicted"])
@pytest.mark.parametrize("change_log", [False, True], ids=["generation-scan", "change-log"])
def test_incremental_counts_agree_with_a_brute_force_count(change_log: bool, pool_limit: int | None) -> None:
    # With a pool of one counter, nearly every cycle builds a selector's counts anew from
    # the bound-pod label index (itself caught up from the changes since its last use).
    import random

    rng = random.Random(7)
    nodes = [node(f"n{i}", rng.choice(["z0", "z1", "z2", None]),
                  {"rack": f"r{i % 3}", "pool": "x"} if i % 4 else {}) for i in range(12)]
    world = World(nodes, change_log=change_log)
    if pool_limit is not None:
        world.plugin._pool.limit = pool_limit
    taint = {"key": "dedicated", "effect": "NoSchedule"}
    checked = Counter()
    for step in range(300):
        names = [n.name for n in world.cache.ordered()]
        action = rng.random()
        if action < 0.45 and names:
            labels = {"app": rng.choice(["web", "db"]), "tier": rng.choice(["a", "b"])}
            placed = pod(f"p{step}", labels, node_name=rng.choice(names),
                         namespace=rng.choice(["default", "default", "other"]))
            if rng.random() < 0.1:
                placed["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
            world.bind(placed)
        elif action < 0.6 and world.cache.pods:
            world.cache.remove_pod(rng.choice(sorted(world.cache.pods)))
        elif action < 0.65 and world.cache.pods:  # a bound pod relabelled (or marked terminating)
            node_name, old = world.cache.pods[rng.choice(sorted(world.cache.pods))]
            relabelled = dict(old.pod, metadata=dict(old.pod["metadata"], labels={
                "app": rng.choice(["web", "db"]), "tier": rng.choice(["a", "b"])}))
            if rng.random() < 0.2:
                relabelled["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
            world.bind(relabelled)
        elif action < 0.8 and names:
            name = rng.choice(names)
            world.cache.set_node(node(name, rng.choice(["z0", "z1", "z2", None]), {"rack": "r0", "pool": "x"},
                                      taints=[taint] if rng.random() < 0.3 else None))
        elif action < 0.85 and names:
            world.cache.remove_node(rng.choice(names))
        elif action < 0.9:
            world.cache.set_node(node(f"n{100 + step}", rng.choice(["z0", "z1"]), {"rack": "r1"}))
        elif action < 0.93 and isinstance(world.cache, LoggingCache):
            world.cache.forget()
        constraints = [random_constraint(rng) for _ in range(rng.randint(1, 2))]
        if len({(c["topologyKey"], c["whenUnsatisfiable"]) for c in constraints}) < len(constraints):
            constraints = constraints[:1]
        extra: Obj = {}
        if rng.random() < 0.3:
            extra["nodeSelector"] = {"pool": "x"}
        if rng.random() < 0.3:
            extra["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
        incoming = pod("new", {"app": rng.choice(["web", "db"]), "tier": "a"}, constraints=constraints, **extra)
        all_names = [n.name for n in world.cache.ordered()]
        feasible = sorted(rng.sample(all_names, k=min(len(all_names), rng.randint(1, 8)))) if all_names else []
        expected_verdicts, expected_scores = brute_force(world, incoming, feasible)
        if expected_verdicts:
            assert world.filter_all(incoming) == expected_verdicts, step
            checked["filter"] += 1
            checked["rejections"] += sum(1 for v in expected_verdicts.values() if v is not None)
        if expected_scores is not None and feasible:
            assert world.scores(incoming, feasible) == expected_scores, step
            checked["score"] += 1
            checked["distinct scores"] += len(set(expected_scores.values())) > 1
    assert min(checked.values()) > 50, checked


def test_parsed_spec_is_not_reused_for_a_changed_spec() -> None:
    # A PodInfo may hand its data to a later version of the pod (framework.PodInfo.for_pod).
    taint = [{"key": "dedicated", "effect": "NoSchedule"}]
    world = World([node("a1", "a"), node("b1", "b"), node("c1", "c", taints=taint)], three_zones({"a1": 1, "b1": 1}))
    honor = pod("new", {"app": "web"}, constraints=[spread(nodeTaintsPolicy="Honor")])
    info = PodInfo(honor)
    world.plugin.pre_filter(CycleState(), info)  # c1 left out: a: 1+1-1 fits
    tolerating = dict(honor, spec=dict(honor["spec"], tolerations=[{"operator": "Exists"}]))
    later = info.for_pod(tolerating)
    state = CycleState()
    world.plugin.pre_filter(state, later)  # c1 counts now: min 0, a: 2 > 1
    assert world.plugin.filter(state, later, world.cache.nodes["a1"]) is not None
