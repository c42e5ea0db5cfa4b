"""Node selector terms and topology terms, with the edge cases of component-helpers' nodeaffinity."""

from __future__ import annotations

import pytest

from fakekube.objects.nodeselectors import NodeSelector, node_selector_matches, topology_terms_match

ZONE = "topology.kubernetes.io/zone"


def expr(key: str, operator: str, *values: str) -> dict:
    out: dict = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


@pytest.mark.parametrize("requirement, labels, expected", [
    (expr(ZONE, "In", "a", "b"), {ZONE: "b"}, True),
    (expr(ZONE, "In", "a"), {}, False),
    (expr(ZONE, "NotIn", "a"), {}, True),            # NotIn matches a node without the key
    (expr(ZONE, "NotIn", "a"), {ZONE: "a"}, False),
    (expr(ZONE, "Exists"), {ZONE: ""}, True),
    (expr(ZONE, "DoesNotExist"), {}, True),
    (expr("cpus", "Gt", "4"), {"cpus": "8"}, True),
    (expr("cpus", "Gt", "4"), {"cpus": "4"}, False),
    (expr("cpus", "Lt", "4"), {"cpus": "-1"}, True),
    (expr("cpus", "Gt", "4"), {"cpus": "eight"}, False),  # not an integer: no match
    (expr("cpus", "Gt", "4"), {}, False),
])
def test_one_expression(requirement: dict, labels: dict, expected: bool) -> None:
    assert NodeSelector([{"matchExpressions": [requirement]}]).matches(labels) is expected


def test_terms_are_ored_and_requirements_anded() -> None:
    terms = [{"matchExpressions": [expr("a", "In", "1"), expr("b", "In", "2")]},
             {"matchExpressions": [expr("c", "Exists")]}]
    selector = NodeSelector(terms)
    assert selector.matches({"a": "1", "b": "2"})
    assert not selector.matches({"a": "1"})
    assert selector.matches({"c": "x"})


def test_empty_and_invalid_terms_match_nothing_but_others_still_count() -> None:
    assert not NodeSelector([{}]).matches({"a": "1"})
    assert not NodeSelector([]).matches({"a": "1"})
    invalid = {"matchExpressions": [expr("a", "Gt", "one")]}
    assert not NodeSelector([invalid]).matches({"a": "2"})
    assert NodeSelector([invalid, {"matchExpressions": [expr("a", "Exists")]}]).matches({"a": "2"})
    assert not NodeSelector([{"matchExpressions": [expr("a", "In")]}]).matches({"a": "1"})  # In needs values
    assert not NodeSelector([{"matchExpressions": [expr("a", "Bogus", "1")]}]).matches({"a": "1"})


def test_match_fields_names_the_node() -> None:
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
    assert node_selector_matches({"nodeSelectorTerms": [term]}, {}, "n1")
    assert not node_selector_matches({"nodeSelectorTerms": [term]}, {}, "n2")
    other_field = {"matchFields": [{"key": "spec.unschedulable", "operator": "In", "values": ["n1"]}]}
    assert not node_selector_matches({"nodeSelectorTerms": [other_field]}, {}, "n1")


def test_topology_terms() -> None:
    assert topology_terms_match(None, {})          # no terms: everything
    assert not topology_terms_match([{}], {ZONE: "a"})  # an empty term: nothing
    terms = [{"matchLabelExpressions": [{"key": ZONE, "values": ["a", "b"]}]}]
    assert topology_terms_match(terms, {ZONE: "a"})
    assert not topology_terms_match(terms, {ZONE: "c"})
    assert not topology_terms_match(terms, {})
