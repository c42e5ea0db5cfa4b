"""The API's two selector-object helpers now mean what fakekube.objects says."""

import pytest

from fakekube.api.selectors import EVERYTHING, NOTHING, SelectorError, label_selector_from_object, selector_to_string
from fakekube.api.types._util import selector_matches as strategy_selector_matches


def test_api_selector_object_nil_and_empty():
    assert label_selector_from_object(None) is NOTHING
    assert label_selector_from_object({}) == EVERYTHING
    assert selector_to_string(None) == "<none>"  # FormatLabelSelector(nil): Nothing prints as ""
    assert selector_to_string({}) == "<none>"


def test_api_selector_object_renders_like_upstream():
    sel = label_selector_from_object({"matchLabels": {"b": "2", "a": "1"},
                                      "matchExpressions": [{"key": "c", "operator": "NotIn", "values": ["y", "x"]},
                                                           {"key": "d", "operator": "DoesNotExist"}]})
    assert str(sel) == "a=1,b=2,c notin (x,y),!d"
    assert sel.matches({"a": "1", "b": "2"})
    assert not sel.matches({"a": "1", "b": "2", "d": ""})


def test_api_selector_object_errors_are_selector_errors():
    with pytest.raises(SelectorError) as info:
        label_selector_from_object({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["v"]}]})
    assert str(info.value) == 'values: Invalid value: []string{"v"}: values set must be empty for exists and does not exist'


def test_strategy_helper_nil_matches_nothing_and_invalid_selects_nothing():
    # Callers check for a missing or empty selector first (upstream skips the template
    # check for an empty selector and reports Nothing's mismatch for a nil one).
    assert not strategy_selector_matches(None, {"app": "web"})
    assert strategy_selector_matches({}, {"app": "web"})
    assert strategy_selector_matches({"matchLabels": {"app": "web"}}, {"app": "web"})
    assert not strategy_selector_matches({"matchExpressions": [{"key": "app", "operator": "Bogus"}]}, {"app": "web"})


def _deployment(selector):
    spec = {"replicas": 1, "template": {"metadata": {"labels": {"app": "web"}},
                                        "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
    if selector is not ...:
        spec["selector"] = selector
    return spec


def test_deployment_validation_keeps_its_selector_errors():
    from fakekube.api.types.apps import validate_selector_and_template

    def messages(selector):
        return [str(e) for e in validate_selector_and_template(_deployment(selector), "deployment")]

    assert not any("does not match" in m for m in messages({"matchLabels": {"app": "web"}}))
    assert any("does not match" in m for m in messages({"matchLabels": {"app": "db"}}))
    assert any("does not match" in m for m in messages(
        {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]}))
    empty = messages({})
    assert any("empty selector is invalid for deployment" in m for m in empty)
    assert not any("does not match" in m for m in empty)
    missing = messages(...)
    assert any("spec.selector" in m and "Required" in m for m in missing)
    assert any("does not match" in m for m in missing)  # a nil selector is labels.Nothing()
