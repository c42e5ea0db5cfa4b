"""The bounds on user-supplied rules, unit by unit: RE2 patterns with Go's errors, CEL
cost estimated as cel-go estimates it (checked against figures measured on the real
validator), the run-time limit and budget, enums by hash, validation that stops."""

from __future__ import annotations

from typing import Any

import pytest

from fakekube.api.wire import cel, regexp
from fakekube.api.wire.cel import syntax
from fakekube.api.wire.structural import compile_schema, validate_crd_schema
from fakekube.api.wire.structural import openapi
from fakekube.api.wire.structural.openapi import MAX_FIELD_ERRORS

P = "spec.versions[0].schema.openAPIV3Schema"
ADVICE = ("(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, "
          "and strings are declared)")


def check(schema: dict[str, Any]) -> list[str]:
    return [e.message() for e in validate_crd_schema(schema, P)]


def on_spec(spec: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": spec}}


# -- regular expressions -------------------------------------------------------------------------

@pytest.mark.parametrize("pattern, error", [
    ("+", "missing argument to repetition operator: `+`"),
    ("(abc", "missing closing ): `(abc`"),
    ("abc)", "unexpected ): `abc)`"),
    ("[a-", "missing closing ]: `[a-`"),
    ("a**", "invalid nested repetition operator: `**`"),
    ("x{1001}", "invalid repeat count: `{1001}`"),
    ("(?=a)", "invalid or unsupported Perl syntax: `(?=`"),
    (r"(a)\1", r"invalid escape sequence: `\1`"),
    ("[z-a]", "invalid character class range: `z-a`"),
    ("a\\", "trailing backslash at end of expression: ``"),
    (r"\C", r"invalid escape sequence: `\C`"),
])
def test_patterns_go_refuses_are_refused_with_go_s_text(pattern: str, error: str) -> None:
    with pytest.raises(regexp.RegexpError) as refused:
        regexp.compile(pattern)
    assert str(refused.value) == f"error parsing regexp: {error}"


def test_find_all_skips_an_empty_match_right_after_a_match_as_go_does() -> None:
    assert regexp.compile("a*").find_all("baaa") == ["", "aaa"]
    assert regexp.compile("a*").find_all("baaa", 1) == [""]
    assert regexp.compile("é|x*").find_all("éxé") == ["é", "x", "é"]
    assert regexp.compile("[0-9]+").find("ab12c34") == "12"


def test_a_catastrophic_pattern_is_no_slower_than_any_other() -> None:
    """RE2 cannot backtrack: this search is one pass (Python's re would take days)."""
    assert not regexp.compile("^(a+)+$").search("a" * 100_000 + "!")
    assert cel.compile("self.find('^(a+)+$')", ["self"]).evaluate({"self": "a" * 10_000 + "!"}) == ""


def test_cel_find_refuses_an_invalid_pattern_with_upstream_s_text() -> None:
    with pytest.raises(cel.EvaluationError, match=r"Illegal regex: error parsing regexp: missing closing \): `\(a`"):
        cel.compile("self.find(self)", ["self"]).evaluate({"self": "(a"})


# -- CEL cost at CRD create/update ----------------------------------------------------------------

# The largest maxItems the real validator (apiextensions, v0.36) accepts for
# self.all(x, x.contains('gpu')) over strings of a given maxLength: 10,000,000 / (4 + ceil(0.4 L)).
@pytest.mark.parametrize("max_length, largest", [(16, 909_090), (63, 333_333), (253, 94_339), (1024, 24_154)])
def test_the_estimate_admits_what_upstream_admits_and_no_more(max_length: int, largest: int) -> None:
    def schema(max_items: int) -> dict[str, Any]:
        return on_spec({"type": "object", "properties": {"tags": {
            "type": "array", "maxItems": max_items, "items": {"type": "string", "maxLength": max_length},
            "x-kubernetes-validations": [{"rule": "self.all(x, x.contains('gpu'))"}]}}})
    assert check(schema(largest)) == []
    assert check(schema(largest + 1)) == [
        f"{P}.properties[spec].properties[tags].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost "
        f"exceeds budget by factor of {(2 + (largest + 1) * (4 + -(-4 * max_length // 10))) / 10_000_000:f}x {ADVICE}"]


def test_a_loop_over_an_unbounded_list_of_numbers_is_admitted_and_of_lists_is_not() -> None:
    """Kubernetes' documentation: self.all(x, x == 5) fits on an unbounded []int."""
    assert check(on_spec({"type": "array", "items": {"type": "integer"},
                          "x-kubernetes-validations": [{"rule": "self.all(x, x == 5)"}]})) == []
    nested = check(on_spec({"type": "array", "items": {"type": "array", "items": {"type": "integer"},
                                                       "x-kubernetes-validations": [{"rule": "self.all(x, x == 5)"}]}}))
    assert nested[0] == (f"{P}.properties[spec].items.x-kubernetes-validations[0].rule: Forbidden: estimated rule "
                         f"cost exceeds budget by factor of more than 100x {ADVICE}")


def test_a_message_built_from_an_unbounded_string_conversion_is_refused() -> None:
    """string(int) has no size bound: upstream refuses the concatenation, maxLength or not."""
    assert check(on_spec({"type": "object", "properties": {"min": {"type": "integer"}},
                          "x-kubernetes-validations": [{"rule": "self.min >= 0",
                                                        "messageExpression": "'min is ' + string(self.min)"}]})) == [
        f"{P}.properties[spec].x-kubernetes-validations[0].messageExpression: Forbidden: estimated messageExpression "
        f"cost exceeds budget by factor of more than 100x {ADVICE}",
        f"{P}.properties[spec].x-kubernetes-validations[0].messageExpression: Forbidden: contributed to estimated "
        "rule cost total exceeding cost limit for entire OpenAPIv3 schema",
        f"{P}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds "
        f"budget by factor of more than 100x {ADVICE}",
    ]


def test_rules_repeated_under_a_bounded_list_count_once_per_item() -> None:
    """402 units a run (a field read, 4,000 bytes at 0.1, the call) times maxItems."""
    rule = {"rule": "self.name.contains('x')"}
    item = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 1000}}, "x-kubernetes-validations": [rule]}
    assert check(on_spec({"type": "array", "maxItems": 24_000, "items": item})) == []
    assert check(on_spec({"type": "array", "maxItems": 26_000, "items": item})) == [
        f"{P}.properties[spec].items.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget "
        f"by factor of {402 * 26_000 / 10_000_000:f}x {ADVICE}"]


def test_the_costs_of_a_whole_schema_add_up() -> None:
    """13 rules of 8,080,002 units each: every one admitted, together past 100 million."""
    rules = [{"rule": f"self.all(x, x.contains('{i}'))"} for i in range(13)]
    found = check(on_spec({"type": "array", "maxItems": 20_000, "items": {"type": "string", "maxLength": 1000},
                           "x-kubernetes-validations": rules}))
    assert found == [
        f"{P}.properties[spec].x-kubernetes-validations[{i}].rule: Forbidden: contributed to estimated rule cost "
        "total exceeding cost limit for entire OpenAPIv3 schema" for i in range(4)] + [
        f"{P}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds "
        f"budget by factor of {13 * 8_080_002 / 100_000_000:f}x {ADVICE}"]


def test_an_unchanged_schema_keeps_its_rules_but_not_past_the_total() -> None:
    schema = on_spec({"type": "array", "items": {"type": "integer"}, "maxItems": 200,
                      "x-kubernetes-validations": [{"rule": "self.all(a, self.all(b, self.all(c, a <= b)))"}]})
    assert len(validate_crd_schema(schema, P)) == 1
    assert validate_crd_schema(schema, P, unchanged=True) == []


# -- CEL cost at run time ---------------------------------------------------------------------

def test_a_run_past_the_per_call_limit_is_cancelled_before_it_starts() -> None:
    """40 items: 456,202 units; 100 items: 7,050,502, past the limit of 1,000,000."""
    program = cel.compile("self.all(a, self.all(b, self.all(c, a + c >= 0)))", ["self"])
    assert program.evaluate({"self": list(range(40))}) is True
    with pytest.raises(cel.CostLimitExceeded, match="^operation cancelled: actual cost limit exceeded$"):
        program.evaluate({"self": list(range(100))})


def test_python_library_functions_meter_their_own_work() -> None:
    """findAll on 200,000 one-character matches: estimated at 20,001 units, but 200,000
    strings built in Python (20 units each) is past the per-call limit."""
    program = cel.compile("self.findAll('.').size() > 0", ["self"])
    assert program.evaluate({"self": "x" * 1_000}) is True
    with pytest.raises(cel.CostLimitExceeded):
        program.evaluate({"self": "x" * 200_000})


def test_a_budget_is_shared_and_refuses_the_run_that_would_overdraw_it() -> None:
    """100 items at 5 units each, and 2 for the loop: 502 units a run."""
    budget = cel.CostBudget(1_000)
    program = cel.compile("self.all(x, x > 0)", ["self"]).with_budget(budget)
    assert program.evaluate({"self": list(range(1, 101))}) is True
    assert budget.remaining == 498
    with pytest.raises(cel.BudgetExhausted, match="no further validation rules will be run"):
        program.evaluate({"self": list(range(1, 101))})


def test_a_custom_resource_s_rules_stop_when_their_budget_is_spent() -> None:
    """12 rules on each of 100 strings, each rule estimated at 4,050,200 units (admitted);
    a run over 1,000 characters costs 10,203 (a 403-character pattern), so the 981st run
    (item 81, rule 8) would overdraw the 10 million: it reports, and nothing more runs."""
    pattern = "^(" + "x|" * 199 + "y)$"
    rules = [{"rule": f"!self.matches('{pattern}')", "message": "no"}] * 12
    item = {"type": "string", "maxLength": 1_000, "x-kubernetes-validations": rules}
    spec = {"type": "object", "properties": {"texts": {"type": "array", "maxItems": 100, "items": item}}}
    assert check(on_spec(spec)) == []
    errors = compile_schema(on_spec(spec)).validate({"apiVersion": "x/v1", "kind": "X", "spec": {"texts": ["z" * 1_000] * 100}})
    assert [e.message() for e in errors] == [
        'spec.texts[81]: Invalid value: "string": validation failed due to running out of cost budget, '
        "no further validation rules will be run"]


# -- parsing ------------------------------------------------------------------------------------

@pytest.mark.parametrize("source", [
    "self.a.b[0] == 'x' ? r'\\d+' : \"\"\"multi\nline\"\"\" != ''",
    "has(self.x) && !self.y || -self.z < 3 // a comment",
    "self.m.exists_one(k, self.m[k] > 0.5e3) && b'\\x00'.size() == 1",
    "self.l.map(x, x * 2).filter(y, y > 3).size() == 2",
    "{'a': 1}.exists(k, k == 'a') && [1, 2].map(x, x > 1, x * 2) == [4]",
])
def test_the_parser_reads_what_the_engine_accepts(source: str) -> None:
    program = cel.compile(source, ["self"])
    assert program.tree is not None and program.tree == syntax.parse(source)


@pytest.mark.parametrize("source", ["[1, 2, 3].all(i, v, i < v)", "self.`my-field`.?opt.orValue('') == 'x'",
                                    "cel.bind(v, self.l.map(x, x * 2), v.filter(y, y > 3).size() == 2)"])
def test_the_parser_reads_the_newer_syntax_too(source: str) -> None:
    assert syntax.parse(source) is not None


def test_nesting_past_cel_go_s_limit_does_not_compile() -> None:
    with pytest.raises(cel.CompileError, match="max recursion depth exceeded"):
        cel.compile("1" + " + 1" * 300, ["self"])


# -- enums and bounded validation --------------------------------------------------------------------

def resource(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "x/v1", "kind": "X", "spec": spec}


def enum_schema(values: list[Any]) -> Any:
    return compile_schema({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "v": {"type": "array", "items": {"enum": values, "x-kubernetes-preserve-unknown-fields": True}}}}}})


def test_enum_membership_compares_json_values() -> None:
    schema = enum_schema([1, "a", {"k": [True]}, None])
    assert schema.validate(resource({"v": [1.0, "a", {"k": [True]}, None]})) == []
    refused = schema.validate(resource({"v": [True, "1", {"k": [1]}]}))
    assert [e.path for e in refused] == ["spec.v[0]", "spec.v[1]", "spec.v[2]"]


def test_a_long_list_of_supported_values_is_cut() -> None:
    schema = enum_schema([f"value-{i}" for i in range(100_000)])
    (error,) = schema.validate(resource({"v": ["nope"]}))
    assert error.detail.endswith(", ... (100000 values in all, truncated)")
    assert len(error.detail) <= 16 * 1024 + 100


def test_validation_stops_after_a_thousand_errors() -> None:
    errors = enum_schema(["a"]).validate(resource({"v": ["b"] * 5_000}))
    assert len(errors) == MAX_FIELD_ERRORS + 1
    assert errors[-1].message() == "<nil>: Too many: validation stopped after 1000 errors (fakekube's bound)"


def test_validation_stops_after_too_many_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every item checked against 1,000 alternatives: schema size times data size."""
    monkeypatch.setattr(openapi, "MAX_CHECKS", 100_000)
    alternatives = [{"maxLength": 5} for _ in range(1_000)]
    schema = compile_schema({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "v": {"type": "array", "items": {"type": "string", "allOf": alternatives}}}}}})
    assert schema.validate(resource({"v": ["ok"] * 90})) == []
    errors = schema.validate(resource({"v": ["ok"] * 1_000}))
    assert [e.message() for e in errors] == ["<nil>: Too many: validation stopped after 100000 checks (fakekube's bound)"]
