"""The metav1.LabelSelector matcher: nil vs empty, the four operators, upstream's errors."""

import pytest

from fakekube.objects import MATCH_EVERYTHING, MATCH_NOTHING, compile_selector, selector_matches
from fakekube.objects.syntax import is_plain_label, is_plain_qualified_name, label_value_errors, qualified_name_errors


def test_nil_selector_matches_nothing():
    assert compile_selector(None) is MATCH_NOTHING
    assert not selector_matches(None, {})
    assert not selector_matches(None, {"app": "web"})


@pytest.mark.parametrize("selector", [{}, {"matchLabels": {}}, {"matchLabels": None, "matchExpressions": []}])
def test_empty_selector_matches_everything(selector):
    assert compile_selector(selector) == MATCH_EVERYTHING
    assert compile_selector(selector).everything
    assert selector_matches(selector, {})
    assert selector_matches(selector, None)
    assert selector_matches(selector, {"app": "web"})


def test_match_labels_need_every_pair():
    sel = {"matchLabels": {"app": "web", "tier": "fe"}}
    assert selector_matches(sel, {"app": "web", "tier": "fe", "extra": "x"})
    assert not selector_matches(sel, {"app": "web"})
    assert not selector_matches(sel, {"app": "web", "tier": "be"})
    assert not selector_matches(sel, None)


@pytest.mark.parametrize("operator,values,labels,expected", [
    ("In", ["a", "b"], {"k": "a"}, True),
    ("In", ["a", "b"], {"k": "c"}, False),
    ("In", ["a"], {}, False),
    ("NotIn", ["a", "b"], {"k": "c"}, True),
    ("NotIn", ["a", "b"], {"k": "a"}, False),
    ("NotIn", ["a"], {}, True),  # a missing key is "not in"
    ("Exists", None, {"k": ""}, True),
    ("Exists", None, {}, False),
    ("DoesNotExist", None, {}, True),
    ("DoesNotExist", None, {"k": "x"}, False),
])
def test_expression_operators(operator, values, labels, expected):
    expr = {"key": "k", "operator": operator}
    if values is not None:
        expr["values"] = values
    assert selector_matches({"matchExpressions": [expr]}, labels) is expected


def test_labels_and_expressions_are_anded():
    sel = compile_selector({
        "matchLabels": {"app": "web"},
        "matchExpressions": [{"key": "canary", "operator": "DoesNotExist"},
                             {"key": "env", "operator": "In", "values": ["prod", "stage"]}],
    })
    assert sel.matches({"app": "web", "env": "prod"})
    assert not sel.matches({"app": "web", "env": "prod", "canary": "1"})
    assert not sel.matches({"app": "db", "env": "prod"})


def test_compiled_requirements_are_sorted_by_key_with_upstream_operators():
    sel = compile_selector({"matchLabels": {"z": "1"},
                            "matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["x"]}]})
    assert [(r.key, r.operator, r.values) for r in sel.requirements] == [("a", "notin", ("x",)), ("z", "=", ("1",))]


def test_compiling_does_not_change_the_selector():
    sel = {"matchExpressions": [{"key": "a", "operator": "In", "values": ["2", "1"]}]}
    compile_selector(sel)
    assert sel == {"matchExpressions": [{"key": "a", "operator": "In", "values": ["2", "1"]}]}


@pytest.mark.parametrize("expr,message", [
    ({"key": "a", "operator": "Gt", "values": ["1"]}, '"Gt" is not a valid label selector operator'),
    ({"key": "a", "operator": "in", "values": ["1"]}, '"in" is not a valid label selector operator'),
    ({"key": "a"}, '"" is not a valid label selector operator'),
    ({"key": "a", "operator": "In"},
     "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty"),
    ({"key": "a", "operator": "NotIn", "values": []},
     "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty"),
    ({"key": "a", "operator": "Exists", "values": ["x"]},
     'values: Invalid value: []string{"x"}: values set must be empty for exists and does not exist'),
    ({"key": "a", "operator": "DoesNotExist", "values": ["x", "y"]},
     'values: Invalid value: []string{"x", "y"}: values set must be empty for exists and does not exist'),
])
def test_invalid_expressions_raise_upstream_messages(expr, message):
    with pytest.raises(ValueError) as info:
        compile_selector({"matchExpressions": [expr]})
    assert str(info.value) == message
    with pytest.raises(ValueError):
        selector_matches({"matchExpressions": [expr]}, {})


def test_invalid_key_and_value_messages():
    with pytest.raises(ValueError) as info:
        compile_selector({"matchLabels": {"a b": "x"}})
    assert str(info.value).startswith('key: Invalid value: "a b": name part must consist of alphanumeric characters')
    with pytest.raises(ValueError) as info:
        compile_selector({"matchLabels": {"app": "-bad"}})
    assert str(info.value).startswith('values[0][app]: Invalid value: "-bad": a valid label must be an empty string')


def test_several_problems_in_one_term_are_aggregated():
    with pytest.raises(ValueError) as info:
        compile_selector({"matchExpressions": [{"key": "a b", "operator": "In"}]})
    text = str(info.value)
    assert text.startswith('[key: Invalid value: "a b": ')
    assert text.endswith(", values: Invalid value: []string(nil): for 'in', 'notin' operators, "
                         "values set can't be empty]")


def test_first_bad_term_wins_match_labels_before_expressions():
    with pytest.raises(ValueError) as info:
        compile_selector({"matchLabels": {"a b": "x"}, "matchExpressions": [{"key": "k", "operator": "Bogus"}]})
    assert str(info.value).startswith("key: Invalid value")


_LABEL_KEYS = ["app", "a", "A-b_c.d", "app.kubernetes.io/name", "example.com/x", "a" * 63, "a" * 64,
               "b" * 253 + "/n", "b" * 254 + "/n", "/name", "prefix/", "a/b/c", "Example.com/x", "ex_ample.com/x",
               "-app", "app-", "ap p", "é", "app\n", ".x", "x.", "example.com./x", "9", "1.2/x", ""]
_LABEL_VALUES = ["", "v", "value-1", "a" * 63, "a" * 64, "-v", "v-", "v v", "é", "v\n", "a.b_c-D", "_"]


@pytest.mark.parametrize("key", _LABEL_KEYS)
@pytest.mark.parametrize("value", _LABEL_VALUES)
def test_the_plain_label_check_agrees_with_the_messages(key, value):
    """Validation takes ``is_plain_label`` as its fast path: it must pass exactly the labels
    that the checks building upstream's messages find nothing wrong with."""
    assert is_plain_label(key, value) == (not qualified_name_errors(key) and not label_value_errors(value))


@pytest.mark.parametrize("key", _LABEL_KEYS)
def test_the_plain_qualified_name_check_agrees_with_the_messages(key):
    """Annotations' keys take ``is_plain_qualified_name`` as their fast path."""
    assert is_plain_qualified_name(key) == (not qualified_name_errors(key))
