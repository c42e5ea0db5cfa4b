"""NodeAffinity: nodeSelector and required terms (ORed terms, ANDed requirements, every
operator, matchFields on the node name), PreFilter's node names and Skip, addedAffinity,
preferred-term scores with DefaultNormalizeScore, the queueing hint."""

from __future__ import annotations

from typing import Any

import pytest

from fakekube.objects.nodeaffinity import node_selector_errors, required_node_affinity
from fakekube.scheduler.cache import Cache, Snapshot
from fakekube.scheduler.config import Profile, SchedulerConfig
from fakekube.scheduler.framework import NODE, Action, Code, CycleState, Hint, NodeInfo, PodInfo
from fakekube.scheduler.plugins.nodeaffinity import (
    ERR_REASON_CONFLICT, ERR_REASON_ENFORCED, ERR_REASON_POD, NAME, NodeAffinity,
)
from fakekube.scheduler.runtime import Handle

Obj = dict[str, Any]


def node(name: str, **labels: str) -> Obj:
    return {"metadata": {"name": name, "labels": dict(labels)}, "spec": {}, "status": {}}


def expr(key: str, operator: str, *values: str) -> Obj:
    out: Obj = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


def name_field(operator: str, *values: str) -> Obj:
    return {"key": "metadata.name", "operator": operator, "values": list(values)}


def pod(node_selector: dict[str, str] | None = None, terms: list[Obj] | None = None,
        preferred: list[Obj] | None = None) -> Obj:
    spec: Obj = {"containers": [{"name": "c", "image": "nginx"}]}
    if node_selector:
        spec["nodeSelector"] = node_selector
    node_affinity: Obj = {}
    if terms is not None:
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
    if preferred is not None:
        node_affinity["preferredDuringSchedulingIgnoredDuringExecution"] = preferred
    if node_affinity:
        spec["affinity"] = {"nodeAffinity": node_affinity}
    return {"metadata": {"name": "p", "namespace": "default", "uid": "uid-p"}, "spec": spec}


def plugin(args: Obj | None = None) -> NodeAffinity:
    return NodeAffinity(Handle(Snapshot(Cache()), SchedulerConfig(), Profile()), args or {})


def verdict(incoming: Obj, target: Obj, args: Obj | None = None) -> str:
    """"skip", "fits", or the rejection's reason (always UnschedulableAndUnresolvable)."""
    pl, state, info = plugin(args), CycleState(), PodInfo(incoming)
    _, status = pl.pre_filter(state, info)
    if status is not None and status.code == Code.SKIP:
        return "skip"
    result = pl.filter(state, info, NodeInfo(target))
    if result is None:
        return "fits"
    assert result.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE and result.plugin == NAME
    return result.message


# -- Filter ---------------------------------------------------------------------------------
def test_nothing_to_check_skips_filter() -> None:
    assert verdict(pod(), node("n1")) == "skip"


def test_node_selector_needs_every_pair() -> None:
    incoming = pod({"disk": "ssd", "zone": "a"})
    assert verdict(incoming, node("n1", disk="ssd", zone="a", extra="x")) == "fits"
    assert verdict(incoming, node("n1", disk="ssd")) == ERR_REASON_POD
    assert ERR_REASON_POD == "node(s) didn't match Pod's node affinity/selector"


def test_terms_are_ored_and_expressions_anded() -> None:
    incoming = pod(terms=[{"matchExpressions": [expr("disk", "In", "ssd"), expr("gpu", "Exists")]},
                          {"matchExpressions": [expr("zone", "In", "b")]}])
    assert verdict(incoming, node("n1", disk="ssd", gpu="1")) == "fits"
    assert verdict(incoming, node("n1", disk="ssd")) == ERR_REASON_POD  # first term half matched
    assert verdict(incoming, node("n1", zone="b")) == "fits"  # second term alone


def test_node_selector_and_affinity_must_both_hold() -> None:
    incoming = pod({"disk": "ssd"}, terms=[{"matchExpressions": [expr("zone", "In", "a")]}])
    assert verdict(incoming, node("n1", disk="ssd", zone="a")) == "fits"
    assert verdict(incoming, node("n1", zone="a")) == ERR_REASON_POD
    assert verdict(incoming, node("n1", disk="ssd", zone="b")) == ERR_REASON_POD


@pytest.mark.parametrize("requirement, labels, fits", [
    (expr("zone", "In", "a", "b"), {"zone": "b"}, True),
    (expr("zone", "In", "a"), {}, False),
    (expr("zone", "NotIn", "a"), {}, True),  # NotIn matches nodes without the key
    (expr("zone", "NotIn", "a"), {"zone": "a"}, False),
    (expr("gpu", "Exists"), {"gpu": ""}, True),
    (expr("gpu", "DoesNotExist"), {"gpu": ""}, False),
    (expr("gpu", "DoesNotExist"), {}, True),
    (expr("cores", "Gt", "8"), {"cores": "16"}, True),
    (expr("cores", "Gt", "8"), {"cores": "8"}, False),
    (expr("cores", "Lt", "8"), {"cores": "-3"}, True),
    (expr("cores", "Gt", "8"), {"cores": "+9"}, True),  # Go's ParseInt takes a sign
    (expr("cores", "Gt", "8"), {"cores": "010"}, True),  # and leading zeros: 10
    (expr("cores", "Gt", "8"), {"cores": "1_000"}, False),  # but not Python's underscores
    (expr("cores", "Gt", "8"), {"cores": "9.5"}, False),
    (expr("cores", "Gt", "8"), {"cores": "9223372036854775808"}, False),  # past int64
    (expr("cores", "Lt", "8"), {}, False),  # a missing label never compares
    (expr("cores", "Gt", "eight"), {"cores": "9"}, False),  # a bad bound: the term never matches
])
def test_operators(requirement: Obj, labels: dict[str, str], fits: bool) -> None:
    incoming = pod(terms=[{"matchExpressions": [requirement]}])
    assert verdict(incoming, node("n1", **labels)) == ("fits" if fits else ERR_REASON_POD)


def test_match_fields_on_the_node_name() -> None:
    only_n2 = pod(terms=[{"matchFields": [name_field("In", "n2")]}])
    not_n2 = pod(terms=[{"matchFields": [name_field("NotIn", "n2")]}])
    assert verdict(only_n2, node("n2")) == "fits"
    assert verdict(only_n2, node("n1")) == ERR_REASON_POD
    assert verdict(not_n2, node("n1")) == "fits"
    assert verdict(not_n2, node("n2")) == ERR_REASON_POD


def test_empty_terms_match_no_node() -> None:
    assert verdict(pod(terms=[{}]), node("n1", zone="a")) == ERR_REASON_POD
    assert verdict(pod(terms=[]), node("n1", zone="a")) == ERR_REASON_POD
    # an empty term next to a real one does not hide it
    assert verdict(pod(terms=[{}, {"matchExpressions": [expr("zone", "Exists")]}]), node("n1", zone="a")) == "fits"


def test_parse_error_spoils_only_its_term() -> None:
    incoming = pod(terms=[{"matchExpressions": [expr("zone", "Bogus", "a")]},
                          {"matchExpressions": [expr("zone", "In", "a")]}])
    assert verdict(incoming, node("n1", zone="a")) == "fits"


# -- PreFilter's node names -------------------------------------------------------------------
def pre_filter(incoming: Obj) -> tuple[set[str] | None, str]:
    names, status = plugin().pre_filter(CycleState(), PodInfo(incoming))
    if status is None:
        return names, ""
    return names, "skip" if status.code == Code.SKIP else f"{status.code.name}: {status.message}"


def test_pre_filter_returns_pinned_names() -> None:
    # terms ORed: the union; inside a term the In sets intersect
    incoming = pod(terms=[{"matchFields": [name_field("In", "n1", "n2"), name_field("In", "n2", "n3")]},
                          {"matchFields": [name_field("In", "n5")]}])
    assert pre_filter(incoming) == ({"n2", "n5"}, "")


def test_pre_filter_any_term_without_names_allows_all() -> None:
    incoming = pod(terms=[{"matchFields": [name_field("In", "n1")]}, {"matchExpressions": [expr("zone", "Exists")]}])
    assert pre_filter(incoming) == (None, "")
    assert pre_filter(pod({"disk": "ssd"})) == (None, "")


def test_pre_filter_conflicting_names() -> None:
    incoming = pod(terms=[{"matchFields": [name_field("In", "n1"), name_field("In", "n2")]}])
    assert pre_filter(incoming) == (None, f"UNSCHEDULABLE_AND_UNRESOLVABLE: {ERR_REASON_CONFLICT}")
    assert ERR_REASON_CONFLICT == "pod affinity terms conflict"


def test_pre_filter_skip() -> None:
    assert pre_filter(pod()) == (None, "skip")
    assert pre_filter(pod(preferred=[{"weight": 1, "preference": {"matchExpressions": [expr("a", "Exists")]}}])) \
        == (None, "skip")


# -- addedAffinity ----------------------------------------------------------------------------
ENFORCED = {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
    "nodeSelectorTerms": [{"matchExpressions": [expr("pool", "In", "general")]}]}}}


def test_added_affinity_is_enforced_first() -> None:
    assert verdict(pod(), node("n1", pool="general"), ENFORCED) == "fits"
    assert verdict(pod(), node("n1", pool="gpu"), ENFORCED) == ERR_REASON_ENFORCED
    assert verdict(pod({"disk": "ssd"}), node("n1"), ENFORCED) == ERR_REASON_ENFORCED
    assert verdict(pod({"disk": "ssd"}), node("n1", pool="general"), ENFORCED) == ERR_REASON_POD
    assert ERR_REASON_ENFORCED == "node(s) didn't match scheduler-enforced node affinity"


def test_bad_added_affinity_is_refused() -> None:
    bad = {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [expr("cores", "Gt", "many")]}]}}}
    with pytest.raises(ValueError) as raised:
        plugin(bad)
    assert str(raised.value) == (
        "NodeAffinity args: addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
        '.matchExpressions[0].values[0]: Invalid value: "many": for \'Gt\', \'Lt\' operators, the value must be '
        "an integer")


def test_node_selector_errors_name_every_problem() -> None:
    selector = {"nodeSelectorTerms": [{"matchExpressions": [expr("a", "Nope")],
                                       "matchFields": [name_field("In", "x", "y")]}]}
    assert node_selector_errors(selector) == [
        'nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: "Nope": supported values: '
        '"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
        'nodeSelectorTerms[0].matchFields[0].values: Invalid value: []string{"x", "y"}: must have one element',
    ]


# -- Score ------------------------------------------------------------------------------------
def preferred_term(weight: int, *requirements: Obj) -> Obj:
    return {"weight": weight, "preference": {"matchExpressions": list(requirements)}}


def scores(incoming: Obj, nodes: list[Obj], args: Obj | None = None) -> list[int] | str:
    pl, state, info = plugin(args), CycleState(), PodInfo(incoming)
    infos = [NodeInfo(n) for n in nodes]
    status = pl.pre_score(state, info, infos)
    if status is not None:
        return "skip" if status.code == Code.SKIP else status.message
    out = [pl.score(state, info, n) for n in infos]
    pl.normalize_score(state, info, out)
    return out


def test_score_sums_matching_weights_then_scales_to_100() -> None:
    incoming = pod(preferred=[preferred_term(30, expr("disk", "In", "ssd")),
                              preferred_term(50, expr("zone", "In", "a")),
                              preferred_term(0, expr("disk", "Exists"))])  # weight 0: ignored
    nodes = [node("n1"), node("n2", disk="ssd"), node("n3", disk="ssd", zone="a"), node("n4", zone="a")]
    # raw 0, 30, 80, 50; DefaultNormalizeScore: 100 * raw // 80
    assert scores(incoming, nodes) == [0, 37, 100, 62]


def test_score_all_zero_stays_zero() -> None:
    incoming = pod(preferred=[preferred_term(10, expr("disk", "In", "ssd"))])
    assert scores(incoming, [node("n1"), node("n2")]) == [0, 0]


def test_pre_score_skips_without_preferred_terms() -> None:
    assert scores(pod({"disk": "ssd"}), [node("n1")]) == "skip"


def test_added_preferred_terms_score_every_pod() -> None:
    args = {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        preferred_term(5, expr("pool", "In", "general"))]}}
    incoming = pod(preferred=[preferred_term(15, expr("disk", "In", "ssd"))])
    # raw 5, 15, 20, 0
    nodes = [node("n1", pool="general"), node("n2", disk="ssd"), node("n3", pool="general", disk="ssd"), node("n4")]
    assert scores(incoming, nodes, args) == [25, 75, 100, 0]
    assert scores(pod(), [node("n1", pool="general"), node("n2")], args) == [100, 0]


# -- queueing -----------------------------------------------------------------------------------
def test_events_and_hint() -> None:
    pl = plugin()
    [registered] = pl.events_to_register()
    assert registered.event.resource == NODE
    assert registered.event.action == Action.ADD | Action.UPDATE_NODE_LABEL
    hint = registered.hint
    assert hint is not None
    incoming = pod({"disk": "ssd"})
    assert hint(incoming, None, node("n1", disk="ssd")) == Hint.QUEUE
    assert hint(incoming, None, node("n1")) == Hint.SKIP
    assert hint(incoming, node("n1"), node("n1", disk="ssd")) == Hint.QUEUE
    assert hint(incoming, node("n1", disk="ssd"), node("n1", disk="ssd", x="y")) == Hint.SKIP
    assert hint(incoming, node("n1", disk="ssd"), node("n1")) == Hint.SKIP


def test_hint_honours_added_affinity() -> None:
    [registered] = plugin(ENFORCED).events_to_register()
    assert registered.hint is not None
    assert registered.hint(pod(), None, node("n1", pool="gpu")) == Hint.SKIP
    assert registered.hint(pod(), None, node("n1", pool="general")) == Hint.QUEUE


def test_required_node_affinity_reads_the_pod() -> None:
    required = required_node_affinity(pod({"b": "2", "a": "1"}, terms=[{"matchFields": [name_field("In", "n1")]}]))
    assert required.node_selector == (("a", "1"), ("b", "2"))
    assert required.matches({"a": "1", "b": "2"}, "n1")
    assert not required.matches({"a": "1", "b": "2"}, "n2")
