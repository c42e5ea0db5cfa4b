"""InterPodAffinity: required affinity and anti-affinity by topology (both directions),
namespaces and namespaceSelector, matchLabelKeys, the first-pod exception, Skip rules,
AddPod/RemovePod on cloned state, scores from both sides normalized min-max, hints."""

from __future__ import annotations

from typing import Any

import pytest

from fakekube.objects.kinds import NAMESPACES, Resource
from fakekube.scheduler.cache import Cache, Snapshot
from fakekube.scheduler.config import Profile, SchedulerConfig
from fakekube.scheduler.framework import ASSIGNED_POD, NODE, Action, Code, CycleState, Hint, NodeInfo, PodInfo
from fakekube.scheduler.plugins.interpodaffinity import (
    ERR_REASON_AFFINITY, ERR_REASON_ANTI_AFFINITY, ERR_REASON_EXISTING_ANTI_AFFINITY, NAME, InterPodAffinity,
)
from fakekube.scheduler.runtime import Handle

Obj = dict[str, Any]
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


class FakeContext:
    """The two reads the plugin makes: namespaces by name, and all of them."""

    def __init__(self, namespaces: dict[str, dict[str, str]]) -> None:
        self.namespaces = [{"metadata": {"name": name, "labels": labels}} for name, labels in sorted(namespaces.items())]

    def get(self, resource: Resource, name: str, namespace: str = "") -> Obj | None:
        assert resource == NAMESPACES
        return next((ns for ns in self.namespaces if ns["metadata"]["name"] == name), None)

    def list(self, resource: Resource, namespace: str = "") -> list[Obj]:
        assert resource == NAMESPACES
        return list(self.namespaces)


def node(name: str, zone: str | None = "a", **labels: str) -> Obj:
    all_labels = {HOST: name, **labels}
    if zone is not None:
        all_labels[ZONE] = zone
    return {"metadata": {"name": name, "labels": all_labels}, "spec": {}, "status": {}}


def term(topology_key: str = HOST, namespaces: list[str] | None = None, namespace_selector: Obj | None = None,
         match_label_keys: list[str] | None = None, **match_labels: str) -> Obj:
    out: Obj = {"labelSelector": {"matchLabels": match_labels}, "topologyKey": topology_key}
    if namespaces is not None:
        out["namespaces"] = namespaces
    if namespace_selector is not None:
        out["namespaceSelector"] = namespace_selector
    if match_label_keys is not None:
        out["matchLabelKeys"] = match_label_keys
    return out


def pod(name: str, node_name: str = "", namespace: str = "default", labels: dict[str, str] | None = None,
        affinity: list[Obj] | None = None, anti: list[Obj] | None = None, preferred: list[tuple[int, Obj]] | None = None,
        preferred_anti: list[tuple[int, Obj]] | None = None) -> Obj:
    spec: Obj = {"containers": [{"name": "c", "image": "nginx"}]}
    if node_name:
        spec["nodeName"] = node_name
    groups: Obj = {}
    if affinity or preferred:
        groups["podAffinity"] = {}
    if anti or preferred_anti:
        groups["podAntiAffinity"] = {}
    if affinity:
        groups["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = affinity
    if preferred:
        groups["podAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": w, "podAffinityTerm": t} for w, t in preferred]
    if anti:
        groups["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = anti
    if preferred_anti:
        groups["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": w, "podAffinityTerm": t} for w, t in preferred_anti]
    if groups:
        spec["affinity"] = groups
    return {"metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}", "labels": labels or {}},
            "spec": spec}


class World:
    """Nodes with bound pods, the plugin over them, and one cycle's helpers."""

    def __init__(self, nodes: list[Obj], pods: list[Obj], args: Obj | None = None,
                 namespaces: dict[str, dict[str, str]] | None = None) -> None:
        self.cache = Cache()
        for n in nodes:
            self.cache.set_node(n)
        for p in pods:
            self.cache.add_pod(p["spec"]["nodeName"], PodInfo(p))
        handle = Handle(Snapshot(self.cache), SchedulerConfig(), Profile())
        handle.use(FakeContext(namespaces or {"default": {}}))  # type: ignore[arg-type]
        self.plugin = InterPodAffinity(handle, args or {})

    def verdicts(self, incoming: Obj) -> dict[str, str] | str:
        """Per node: "fits" or "<code>: <reason>"; or PreFilter's own outcome."""
        state, info = CycleState(), PodInfo(incoming)
        _, status = self.plugin.pre_filter(state, info)
        if status is not None:
            return "skip" if status.code == Code.SKIP else f"{status.code.name}: {status.message}"
        return {n.name: _show(self.plugin.filter(state, info, n)) for n in self.cache.ordered()}

    def scores(self, incoming: Obj) -> dict[str, int] | str:
        state, info = CycleState(), PodInfo(incoming)
        nodes = self.cache.ordered()
        status = self.plugin.pre_score(state, info, nodes)
        if status is not None:
            return "skip" if status.code == Code.SKIP else status.message
        raw = [self.plugin.score(state, info, n) for n in nodes]
        self.plugin.normalize_score(state, info, raw)
        return {n.name: s for n, s in zip(nodes, raw)}


def _show(status: Any) -> str:
    if status is None:
        return "fits"
    assert status.plugin == NAME
    return f"{status.code.name}: {status.message}"


AFFINITY = f"UNSCHEDULABLE_AND_UNRESOLVABLE: {ERR_REASON_AFFINITY}"
ANTI = f"UNSCHEDULABLE: {ERR_REASON_ANTI_AFFINITY}"
EXISTING = f"UNSCHEDULABLE: {ERR_REASON_EXISTING_ANTI_AFFINITY}"
FOUR_NODES = [node("n1", "a"), node("n2", "a"), node("n3", "b"), node("n4", None)]


def test_reasons_are_upstreams() -> None:
    assert ERR_REASON_AFFINITY == "node(s) didn't match pod affinity rules"
    assert ERR_REASON_ANTI_AFFINITY == "node(s) didn't match pod anti-affinity rules"
    assert ERR_REASON_EXISTING_ANTI_AFFINITY == "node(s) didn't satisfy existing pods anti-affinity rules"


# -- Filter -------------------------------------------------------------------------------------
def test_no_affinity_anywhere_skips() -> None:
    world = World(FOUR_NODES, [pod("db", "n1", labels={"app": "db"})])
    assert world.verdicts(pod("web", labels={"app": "web"})) == "skip"


def test_affinity_needs_a_matching_pod_in_the_same_domain() -> None:
    world = World(FOUR_NODES, [pod("db", "n1", labels={"app": "db"})])
    incoming = pod("web", labels={"app": "web"}, affinity=[term(ZONE, app="db")])
    # zone a holds the db pod; n3 is zone b; n4 has no zone label at all
    assert world.verdicts(incoming) == {"n1": "fits", "n2": "fits", "n3": AFFINITY, "n4": AFFINITY}


def test_all_affinity_terms_must_match_one_pod() -> None:
    world = World(FOUR_NODES, [pod("db", "n1", labels={"app": "db"}), pod("cache", "n3", labels={"tier": "cache"})])
    incoming = pod("web", affinity=[term(ZONE, app="db"), term(ZONE, tier="cache")])
    # no single pod matches both terms: nothing counts, and the pod does not match its own terms
    assert world.verdicts(incoming) == {"n1": AFFINITY, "n2": AFFINITY, "n3": AFFINITY, "n4": AFFINITY}


def test_first_pod_of_a_self_affine_group() -> None:
    incoming = pod("web-0", labels={"app": "web"}, affinity=[term(ZONE, app="web")])
    empty = World(FOUR_NODES, [pod("db", "n1", labels={"app": "db"})])
    # nobody matches anywhere and the pod matches itself: any node with the zone key
    assert empty.verdicts(incoming) == {"n1": "fits", "n2": "fits", "n3": "fits", "n4": AFFINITY}
    started = World(FOUR_NODES, [pod("web-1", "n3", labels={"app": "web"})])
    assert started.verdicts(incoming) == {"n1": AFFINITY, "n2": AFFINITY, "n3": "fits", "n4": AFFINITY}
    # a pod that does not match its own terms gets no exception
    stranger = pod("api", labels={"app": "api"}, affinity=[term(ZONE, app="web")])
    assert empty.verdicts(stranger) == {"n1": AFFINITY, "n2": AFFINITY, "n3": AFFINITY, "n4": AFFINITY}


def test_anti_affinity_keeps_out_of_the_domain() -> None:
    world = World(FOUR_NODES, [pod("web-1", "n1", labels={"app": "web"})])
    by_host = pod("web-2", labels={"app": "web"}, anti=[term(HOST, app="web")])
    assert world.verdicts(by_host) == {"n1": ANTI, "n2": "fits", "n3": "fits", "n4": "fits"}
    by_zone = pod("web-2", labels={"app": "web"}, anti=[term(ZONE, app="web")])
    # a node without the key is never in the domain
    assert world.verdicts(by_zone) == {"n1": ANTI, "n2": ANTI, "n3": "fits", "n4": "fits"}


def test_existing_pods_anti_affinity_applies_to_the_incoming_pod() -> None:
    loner = pod("loner", "n1", labels={"app": "loner"}, anti=[term(ZONE, app="web")])
    world = World(FOUR_NODES, [loner])
    assert world.verdicts(pod("web", labels={"app": "web"})) == {
        "n1": EXISTING, "n2": EXISTING, "n3": "fits", "n4": "fits"}
    assert world.verdicts(pod("db", labels={"app": "db"})) == "skip"


def test_affinity_is_checked_before_anti_affinity() -> None:
    world = World(FOUR_NODES, [pod("db", "n1", labels={"app": "db"}), pod("web-1", "n2", labels={"app": "web"})])
    incoming = pod("web-2", labels={"app": "web"}, affinity=[term(ZONE, app="db")], anti=[term(HOST, app="web")])
    assert world.verdicts(incoming) == {"n1": "fits", "n2": ANTI, "n3": AFFINITY, "n4": AFFINITY}


def test_namespaces_default_to_the_pods_own() -> None:
    world = World(FOUR_NODES, [pod("web-1", "n1", namespace="other", labels={"app": "web"})],
                  namespaces={"default": {}, "other": {}})
    same_ns = pod("web-2", labels={"app": "web"}, anti=[term(HOST, app="web")])
    assert world.verdicts(same_ns)["n1"] == "fits"
    listed = pod("web-2", labels={"app": "web"}, anti=[term(HOST, namespaces=["other"], app="web")])
    assert world.verdicts(listed)["n1"] == ANTI


def test_namespace_selector_resolves_against_namespace_labels() -> None:
    namespaces = {"default": {}, "team-a": {"team": "a"}, "team-b": {"team": "b"}}
    world = World(FOUR_NODES, [pod("w1", "n1", namespace="team-a", labels={"app": "web"}),
                               pod("w2", "n3", namespace="team-b", labels={"app": "web"})], namespaces=namespaces)
    team_a = pod("web", labels={"app": "web"},
                 anti=[term(HOST, namespace_selector={"matchLabels": {"team": "a"}}, app="web")])
    assert world.verdicts(team_a) == {"n1": ANTI, "n2": "fits", "n3": "fits", "n4": "fits"}
    every = pod("web", labels={"app": "web"}, anti=[term(HOST, namespace_selector={}, app="web")])
    assert world.verdicts(every) == {"n1": ANTI, "n2": "fits", "n3": ANTI, "n4": "fits"}


def test_existing_pods_namespace_selector_reads_the_incoming_pods_namespace() -> None:
    namespaces = {"default": {}, "prod": {"env": "prod"}, "dev": {"env": "dev"}}
    guard = pod("guard", "n1", namespace="default", labels={"app": "guard"},
                anti=[term(HOST, namespace_selector={"matchLabels": {"env": "prod"}}, app="web")])
    world = World(FOUR_NODES, [guard], namespaces=namespaces)
    assert world.verdicts(pod("web", namespace="prod", labels={"app": "web"}))["n1"] == EXISTING
    assert world.verdicts(pod("web", namespace="dev", labels={"app": "web"})) == "skip"


def test_match_label_keys_narrow_the_selector() -> None:
    old = pod("web-old", "n1", labels={"app": "web", "pod-template-hash": "v1"})
    world = World(FOUR_NODES, [old])
    anti = [term(HOST, match_label_keys=["pod-template-hash"], app="web")]
    new_revision = pod("web-new", labels={"app": "web", "pod-template-hash": "v2"}, anti=anti)
    assert world.verdicts(new_revision)["n1"] == "fits"
    same_revision = pod("web-twin", labels={"app": "web", "pod-template-hash": "v1"}, anti=anti)
    assert world.verdicts(same_revision)["n1"] == ANTI


def test_bad_selector_is_unresolvable() -> None:
    world = World(FOUR_NODES, [])
    broken = pod("web", anti=[{"labelSelector": {"matchExpressions": [{"key": "app", "operator": "Near"}]},
                               "topologyKey": HOST}])
    assert world.verdicts(broken) == (
        'UNSCHEDULABLE_AND_UNRESOLVABLE: parsing pod: requiredAntiAffinityTerms: "Near" is not a valid label '
        "selector operator")


# -- AddPod / RemovePod ---------------------------------------------------------------------------
def test_add_and_remove_pod_work_on_a_clone() -> None:
    world = World(FOUR_NODES, [pod("web-1", "n1", labels={"app": "web"})])
    incoming = pod("web-2", labels={"app": "web"}, anti=[term(HOST, app="web")])
    state, info = CycleState(), PodInfo(incoming)
    assert world.plugin.pre_filter(state, info) == (None, None)
    n1, n2 = world.cache.nodes["n1"], world.cache.nodes["n2"]
    what_if = state.clone()
    world.plugin.add_pod(what_if, info, PodInfo(pod("web-3", "n2", labels={"app": "web"})), n2)
    world.plugin.remove_pod(what_if, info, world.cache.bound("default/web-1"), n1)  # type: ignore[arg-type]
    assert _show(world.plugin.filter(what_if, info, n1)) == "fits"
    assert _show(world.plugin.filter(what_if, info, n2)) == ANTI
    # the original cycle's counts are untouched
    assert _show(world.plugin.filter(state, info, n1)) == ANTI
    assert _show(world.plugin.filter(state, info, n2)) == "fits"


def test_added_pod_with_anti_affinity_counts_against_the_incoming_pod() -> None:
    world = World(FOUR_NODES, [pod("db", "n1", labels={"app": "db"})])
    incoming = pod("web", labels={"app": "web"}, affinity=[term(ZONE, app="db")])
    state, info = CycleState(), PodInfo(incoming)
    world.plugin.pre_filter(state, info)
    nominated = pod("guard", "n2", labels={"app": "guard"}, anti=[term(ZONE, app="web")])
    world.plugin.add_pod(state, info, PodInfo(nominated), world.cache.nodes["n2"])
    assert _show(world.plugin.filter(state, info, world.cache.nodes["n1"])) == EXISTING


# -- Score --------------------------------------------------------------------------------------
def test_incoming_preferred_terms() -> None:
    world = World(FOUR_NODES[:3], [pod("db", "n1", labels={"app": "db"}), pod("web-1", "n2", labels={"app": "web"})])
    incoming = pod("web-2", labels={"app": "web"}, preferred=[(5, term(ZONE, app="db"))],
                   preferred_anti=[(3, term(HOST, app="web"))])
    # zone a: +5 (db on n1); host n2: -3 (web-1). Raw n1 5, n2 2, n3 0 -> (raw - 0) * 100 / 5
    assert world.scores(incoming) == {"n1": 100, "n2": 40, "n3": 0}


def test_existing_pods_terms_score_the_incoming_pod() -> None:
    existing = [
        pod("a", "n1", labels={"app": "a"}, affinity=[term(HOST, app="web")]),  # hard: +1 on host n1
        pod("b", "n2", labels={"app": "b"}, preferred=[(10, term(ZONE, app="web"))]),  # +10 on zone a
        pod("c", "n3", labels={"app": "c"}, preferred_anti=[(4, term(HOST, app="web"))]),  # -4 on host n3
    ]
    nodes = [node("n1", "a"), node("n2", "a"), node("n3", "b"), node("n4", "b")]
    incoming = pod("web", labels={"app": "web"})
    # raw n1 11, n2 10, n3 -4, n4 0; min-max over 15: int(100 * (raw + 4) / 15)
    assert World(nodes, existing).scores(incoming) == {"n1": 100, "n2": 93, "n3": 0, "n4": 26}
    # hardPodAffinityWeight 0: raw 10, 10, -4, 0 over 14
    assert World(nodes, existing, {"hardPodAffinityWeight": 0}).scores(incoming) == {
        "n1": 100, "n2": 100, "n3": 0, "n4": 28}
    assert World(nodes, existing, {"ignorePreferredTermsOfExistingPods": True}).scores(incoming) == "skip"


def test_pre_score_skips() -> None:
    world = World(FOUR_NODES, [pod("db", "n1", labels={"app": "db"})])
    assert world.scores(pod("web", labels={"app": "web"})) == "skip"  # nobody has affinity
    # preferred terms that match nothing leave no score either
    assert world.scores(pod("web", preferred=[(5, term(ZONE, app="cache"))])) == "skip"
    state = CycleState()
    assert world.plugin.pre_score(state, PodInfo(pod("web", preferred=[(5, term(ZONE, app="db"))])), []) is not None


def test_args_are_validated() -> None:
    with pytest.raises(ValueError, match=r"hardPodAffinityWeight: Invalid value: 101: not in valid range \[0, 100\]"):
        World([], [], {"hardPodAffinityWeight": 101})


# -- queueing -----------------------------------------------------------------------------------
def hints() -> tuple[Any, Any]:
    pod_event, node_event = World([], []).plugin.events_to_register()
    assert pod_event.event.resource == ASSIGNED_POD
    assert pod_event.event.action == Action.ADD | Action.UPDATE_POD_LABEL | Action.DELETE
    assert node_event.event.resource == NODE
    assert node_event.event.action == Action.ADD | Action.UPDATE_NODE_LABEL
    return pod_event.hint, node_event.hint


def test_pod_hint() -> None:
    pod_hint, _ = hints()
    wants_db = pod("web", affinity=[term(ZONE, app="db")])
    avoids_web = pod("web", anti=[term(HOST, app="web")])
    db = pod("db", "n1", labels={"app": "db"})
    web = pod("web-1", "n1", labels={"app": "web"})
    assert pod_hint(wants_db, None, db) == Hint.QUEUE
    assert pod_hint(wants_db, None, web) == Hint.SKIP
    assert pod_hint(wants_db, None, pod("db", labels={"app": "db"})) == Hint.SKIP  # not scheduled
    assert pod_hint(wants_db, web, pod("web-1", "n1", labels={"app": "db"})) == Hint.QUEUE  # relabelled into it
    assert pod_hint(avoids_web, web, pod("web-1", "n1", labels={"app": "api"})) == Hint.QUEUE  # out of the way
    assert pod_hint(avoids_web, web, None) == Hint.QUEUE
    assert pod_hint(avoids_web, db, None) == Hint.SKIP
    # 1.33's hint does not look at the deleted pod's own anti-affinity (fixed upstream in 1.35)
    guard = pod("guard", "n1", anti=[term(HOST, app="web")])
    assert pod_hint(pod("web", labels={"app": "web"}), guard, None) == Hint.SKIP


def test_node_hint() -> None:
    _, node_hint = hints()
    wants_db = pod("web", affinity=[term(ZONE, app="db")])
    avoids_web = pod("web", anti=[term(ZONE, app="web")])
    assert node_hint(wants_db, None, node("n9", "c")) == Hint.QUEUE
    assert node_hint(wants_db, None, node("n9", None)) == Hint.SKIP
    assert node_hint(avoids_web, None, node("n9", None)) == Hint.QUEUE  # any new node may help
    assert node_hint(wants_db, node("n1", None), node("n1", "a")) == Hint.QUEUE  # gained the key
    assert node_hint(wants_db, node("n1", "a"), node("n1", "b")) == Hint.QUEUE  # moved domain
    assert node_hint(wants_db, node("n1", "a"), node("n1", "a", extra="x")) == Hint.SKIP
    assert node_hint(avoids_web, node("n1", "a"), node("n1", None)) == Hint.QUEUE  # lost the key
    assert node_hint(avoids_web, node("n1", None), node("n1", "a")) == Hint.SKIP
