"""CRD rules are type-checked when the CRD is written, as apiextensions-apiserver compiles
them: what kube-apiserver 1.36 refused is refused with its words (position, caret line),
and nothing it stored is refused (tests/unit/wire/cel_reference.py holds the recording)."""

from __future__ import annotations

from typing import Any

import pytest

from fakekube.api.wire.structural import validate_crd_schema
from tests.unit.wire.cel_reference import ACCEPTED, PROBE_PROPS, REFUSED, UPSTREAM_PROPS

P = "spec.validation.openAPIV3Schema"
RULE = f"{P}.properties[spec].x-kubernetes-validations[0].rule"
PROPS = {"cel": PROBE_PROPS, "upstream": UPSTREAM_PROPS}


def errors(props: dict[str, Any], rules: list[dict[str, Any]], version: str = "1.36") -> list[tuple[str, str]]:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": props,
                                                        "x-kubernetes-validations": rules}}}
    return [(e.path, e.detail) for e in validate_crd_schema(schema, P, kubernetes_version=version)]


@pytest.mark.parametrize("props, rule", ACCEPTED, ids=[rule for _, rule in ACCEPTED])
def test_what_upstream_stores_is_stored(props: str, rule: str) -> None:
    assert errors(PROPS[props], [{"rule": rule}]) == []


@pytest.mark.parametrize("props, rule, detail", REFUSED, ids=[rule for _, rule, _ in REFUSED])
def test_what_upstream_refuses_is_refused_with_its_words(props: str, rule: str, detail: str) -> None:
    assert errors(PROPS[props], [{"rule": rule}]) == [(RULE, detail)]


def test_the_errors_of_one_rule_come_in_source_order_with_line_and_caret() -> None:
    rule = "self.zz == 1 &&\n  self.a > 'x'"
    assert errors(PROBE_PROPS, [{"rule": rule, "message": "m"}]) == [(RULE, (
        "compilation failed: ERROR: <input>:1:5: undefined field 'zz'\n | self.zz == 1 &&\n | ....^\n"
        "ERROR: <input>:2:10: found no matching overload for '_>_' applied to '(int, string)'\n"
        " |   self.a > 'x'\n | .........^"))]


def test_a_message_expression_must_be_a_string() -> None:
    assert errors(PROBE_PROPS, [{"rule": "self.a > 0", "messageExpression": "self.a"},
                                {"rule": "self.a > 0", "messageExpression": "self.nope + 'x'"}]) == [
        (f"{P}.properties[spec].x-kubernetes-validations[0].messageExpression",
         "messageExpression must evaluate to a string"),
        (f"{P}.properties[spec].x-kubernetes-validations[1].messageExpression",
         "messageExpression compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n"
         " | self.nope + 'x'\n | ....^")]


def test_old_self_of_an_optional_rule_is_an_optional() -> None:
    assert errors(PROBE_PROPS, [{"rule": "oldSelf.hasValue() && oldSelf.value().a == self.a",
                                 "optionalOldSelf": True}]) == []
    assert errors(PROBE_PROPS, [{"rule": "oldSelf.a == self.a", "optionalOldSelf": True}]) == [
        (RULE, "compilation failed: ERROR: <input>:1:11: found no matching overload for '_==_' applied to "
               "'(optional_type(int), int)'\n | oldSelf.a == self.a\n | ..........^"),
        (f"{P}.properties[spec].x-kubernetes-validations[0].optionalOldSelf",
         "may not be set if oldSelf is not used in rule")]


def test_libraries_follow_the_version_of_the_environment() -> None:
    """New rules get the compatibility version's environment (the minor before the
    server's): Kubernetes 1.34 compiles them as 1.33, which has no lists v3 library."""
    rule = "lists.range(3).size() == 3 && [3, 1].sort() == [1, 3]"
    assert errors(PROBE_PROPS, [{"rule": rule}], version="1.35") == []
    assert errors(PROBE_PROPS, [{"rule": rule}], version="1.34") == [(RULE, (
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'lists' (in container '')\n"
        " | lists.range(3).size() == 3 && [3, 1].sort() == [1, 3]\n | ^\n"
        "ERROR: <input>:1:12: undeclared reference to 'range' (in container '')\n"
        " | lists.range(3).size() == 3 && [3, 1].sort() == [1, 3]\n | ...........^\n"
        "ERROR: <input>:1:42: undeclared reference to 'sort' (in container '')\n"
        " | lists.range(3).size() == 3 && [3, 1].sort() == [1, 3]\n | .........................................^"))]


def test_rules_on_values_kubernetes_cannot_type_check_at_run_time() -> None:
    """int-or-string and unknown fields are ``dyn``: every operation is accepted."""
    assert errors({"v": {"x-kubernetes-int-or-string": True}},
                  [{"rule": "self.v > 1 || self.v.startsWith('a') || self.v.foo.bar == [1]"}]) == []
