"""Custom resources against their CRD schema: pruning, defaulting, OpenAPI validation,
list types, embedded resources and CEL rules, with upstream's paths and messages."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fakekube.api.machinery.errors import emulating
from fakekube.objects.versions import release
from fakekube.api.wire.structural import compile_schema

SCHEMA: dict[str, Any] = {"type": "object", "properties": {
    "spec": {
        "type": "object",
        "required": ["image"],
        "x-kubernetes-validations": [
            {"rule": "self.minReplicas <= self.replicas", "message": "replicas should be greater than or equal to minReplicas"},
        ],
        "properties": {
            "image": {"type": "string", "maxLength": 10, "minLength": 2, "pattern": "^[a-z-]+$"},
            "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
            "minReplicas": {"type": "integer", "default": 0},
            "ratio": {"type": "number", "exclusiveMaximum": True, "maximum": 1.5, "multipleOf": 0.5},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set", "maxItems": 3},
            "port": {"x-kubernetes-int-or-string": True},
            "when": {"type": "string", "format": "date-time"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 2},
            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                      "items": {"type": "object", "required": ["name"],
                                "properties": {"name": {"type": "string"}, "port": {"type": "integer", "default": 80}}}},
            "immutable": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "is immutable"}]},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                     "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}}},
            "template": {"type": "object", "x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True},
            "nullable": {"type": "string", "nullable": True},
        },
    },
    "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
}}

COMPILED = compile_schema(SCHEMA)


def cr(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "default"},
            "spec": {"image": "nginx", **spec}}


BLOCKED = ('<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; '
           "correct the existing errors to complete validation")


def messages(obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    """The errors of a write of ``obj``: defaulted first, as the write path does."""
    COMPILED.default(obj)
    if old is not None:
        COMPILED.default(old)
    errors = COMPILED.validate(obj) if old is None else COMPILED.validate_update(obj, old)
    return [e.message() for e in errors]


# -- pruning ---------------------------------------------------------------------------------------

def test_prune_drops_unknown_fields_and_reports_them_as_upstream_orders_them() -> None:
    obj = cr(zeta=1, alpha={"x": 1}, ports=[{"name": "a", "extra": True}],
             free={"anything": {"goes": 1}, "known": {"a": "x", "b": "dropped"}},
             template={"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "bogus": 1}, "spec": {"x": 1}})
    obj["metadata"]["unknownMeta"] = 1
    obj["topLevel"] = True
    assert COMPILED.prune(obj) == ["metadata.unknownMeta", "spec.alpha", "spec.free.known.b", "spec.ports[0].extra",
                                   "spec.zeta", "topLevel", "spec.template.metadata.bogus"]
    assert obj["spec"]["free"] == {"anything": {"goes": 1}, "known": {"a": "x"}}
    assert obj["spec"]["template"] == {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"x": 1}}
    assert obj["metadata"] == {"name": "w", "namespace": "default"}


def test_prune_removes_nulls_the_schema_cannot_hold_or_default() -> None:
    obj = cr(mode=None, nullable=None, replicas=None)
    COMPILED.prune(obj)
    assert "mode" not in obj["spec"]
    assert obj["spec"]["nullable"] is None and obj["spec"]["replicas"] is None


# -- defaulting ------------------------------------------------------------------------------------

def test_defaults_fill_missing_fields_nulls_and_list_items() -> None:
    obj = cr(replicas=None, ports=[{"name": "http"}, {"name": "grpc", "port": 9000}])
    COMPILED.prune(obj)
    COMPILED.default(obj)
    assert obj["spec"]["replicas"] == 1 and obj["spec"]["minReplicas"] == 0
    assert obj["spec"]["ports"] == [{"name": "http", "port": 80}, {"name": "grpc", "port": 9000}]


def test_a_default_object_is_defaulted_inside() -> None:
    compiled = compile_schema({"type": "object", "properties": {"spec": {
        "type": "object", "default": {},
        "properties": {"size": {"type": "integer", "default": 3}}}}})
    obj: dict[str, Any] = {"apiVersion": "a/v1", "kind": "A", "metadata": {"name": "a"}}
    compiled.default(obj)
    assert obj["spec"] == {"size": 3}


# -- OpenAPI validation -----------------------------------------------------------------------------

def test_a_valid_object_has_no_errors() -> None:
    obj = cr(replicas=3, minReplicas=1, tags=["a", "b"], port="http", when="2024-01-02T03:04:05Z",
             labels={"a": "b"}, ratio=0.5, template={"apiVersion": "v1", "kind": "Pod"})
    assert messages(obj) == []


@pytest.mark.parametrize(("spec", "expected"), [
    ({"replicas": "3"}, 'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"'),
    ({"replicas": 0}, "spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1"),
    ({"replicas": 11}, "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"),
    ({"ratio": 1.5}, "spec.ratio: Invalid value: 1.5: spec.ratio in body should be less than 1.5"),
    ({"ratio": 0.7}, "spec.ratio: Invalid value: 0.7: spec.ratio in body should be a multiple of 0.5"),
    ({"image": "a-very-long-name"}, "spec.image: Too long: may not be more than 10 bytes"),
    ({"image": "a"}, 'spec.image: Invalid value: "a": spec.image in body should be at least 2 chars long'),
    ({"image": "UPPER"}, "spec.image: Invalid value: \"UPPER\": spec.image in body should match '^[a-z-]+$'"),
    ({"mode": "medium"}, 'spec.mode: Unsupported value: "medium": supported values: "fast", "slow"'),
    ({"tags": ["a", "b", "c", "d"]}, "spec.tags: Too many: 4: must have at most 3 items"),
    ({"port": True}, 'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"'),
    ({"when": "yesterday"}, 'spec.when: Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday"'),
    ({"labels": {"a": "1", "b": "2", "c": "3"}}, "spec.labels: Too many: 3: must have at most 2 items"),
    ({"labels": {"a": 1}}, 'spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer"'),
    ({"ports": [{"port": 1}]}, "spec.ports[0].name: Required value"),
])
def test_openapi_errors(spec: dict[str, Any], expected: str) -> None:
    assert messages(cr(**spec))[0] == expected


def test_required_at_the_root_of_spec() -> None:
    obj = cr()
    del obj["spec"]["image"]
    assert messages(obj) == ["spec.image: Required value", BLOCKED]


def test_an_integral_float_is_an_integer() -> None:
    assert messages(cr(replicas=2.0)) == []


# -- list types and embedded resources ------------------------------------------------------------

def test_sets_and_map_lists_refuse_duplicates() -> None:
    obj = cr(tags=["a", "b", "a"], ports=[{"name": "http"}, {"name": "http", "port": 1}])
    assert messages(obj) == ['spec.tags[2]: Duplicate value: "a"', 'spec.ports[1]: Duplicate value: {"name":"http"}']
    with emulating(release("1.33")):
        assert messages(obj) == ['spec.tags[2]: Duplicate value: "a"',
                                 'spec.ports[1]: Duplicate value: map[string]interface {}{"name":"http"}']


def test_embedded_resources_need_api_version_and_kind() -> None:
    assert messages(cr(template={"metadata": {"name": "x"}})) == [
        "spec.template.apiVersion: Required value: must not be empty",
        "spec.template.kind: Required value: must not be empty", BLOCKED]
    assert messages(cr(template={"apiVersion": "v1", "kind": "Bad_Kind"})) == [
        'spec.template.kind: Invalid value: "Bad_Kind": may have mixed case, but should otherwise match: a DNS-1035 label '
        "must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with "
        "an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"]


# -- CEL rules ---------------------------------------------------------------------------------------

def test_a_failing_rule_reports_its_message_on_the_rule_node() -> None:
    assert messages(cr(replicas=2, minReplicas=5)) == [
        'spec: Invalid value: replicas should be greater than or equal to minReplicas']


def test_schema_errors_block_rules() -> None:
    assert messages(cr(replicas="2", minReplicas=5)) == [
        'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"', BLOCKED]


def test_transition_rules_run_only_on_update_with_an_old_value() -> None:
    new = cr(replicas=2, immutable="b")
    assert messages(new) == []
    old = cr(replicas=2, immutable="a")
    assert messages(new, old) == ['spec.immutable: Invalid value: "b": is immutable']
    assert messages(new, cr(replicas=2)) == []


def test_update_ratchets_what_did_not_change() -> None:
    bad = cr(replicas=2, minReplicas=5, mode="medium")
    assert messages(bad, copy.deepcopy(bad)) == []
    changed = copy.deepcopy(bad)
    changed["spec"]["image"] = "other"
    assert messages(changed, bad) == ['spec: Invalid value: replicas should be greater than or equal to minReplicas']


def rule_schema(*rules: dict[str, Any], field: dict[str, Any] | None = None) -> Any:
    return compile_schema({"type": "object", "properties": {"spec": {
        "type": "object", "x-kubernetes-validations": list(rules),
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}, "s": {"type": "string"}, **(field or {})}}}})


def rule_messages(compiled: Any, spec: dict[str, Any]) -> list[str]:
    obj = {"apiVersion": "a/v1", "kind": "A", "metadata": {"name": "x"}, "spec": spec}
    return [e.message() for e in compiled.validate(obj)]


def test_rule_without_message_reason_and_field_path() -> None:
    compiled = rule_schema(
        {"rule": "self.a < self.b"},
        {"rule": "has(self.s)", "reason": "FieldValueRequired", "fieldPath": ".s", "message": "s is required"},
        {"rule": "self.a != 3", "reason": "FieldValueForbidden", "messageExpression": "'a may not be ' + string(self.a)"},
        {"rule": "self.a != 3", "reason": "FieldValueDuplicate"})
    assert rule_messages(compiled, {"a": 3, "b": 1}) == [
        'spec: Invalid value: failed rule: self.a < self.b',
        "spec.s: Required value: s is required",
        "spec: Forbidden: a may not be 3",
        "spec: Duplicate value"]


def test_rule_evaluation_errors() -> None:
    compiled = rule_schema({"rule": "self.missing == 1"}, {"rule": "self.a / self.b > 0", "message": "ratio"})
    assert rule_messages(compiled, {"a": 1, "b": 0}) == [
        'spec: Invalid value: "object": no such key: missing evaluating rule: self.missing == 1',
        'spec: Invalid value: "object": division by zero evaluating rule: ratio']


def test_root_rules_see_only_name_and_generate_name_of_metadata() -> None:
    compiled = compile_schema({"type": "object", "x-kubernetes-validations": [
        {"rule": "self.metadata.name.startsWith('x')"}, {"rule": "!has(self.metadata.labels)"}]})
    obj = {"apiVersion": "a/v1", "kind": "A", "metadata": {"name": "a", "labels": {"k": "v"}}}
    errors = compiled.validate(obj)
    assert [e.message() for e in errors] == ["<nil>: Invalid value: failed rule: self.metadata.name.startsWith('x')"]
    assert errors[0].cause() == {"reason": "FieldValueInvalid", "field": "<nil>",
                                 "message": "Invalid value: failed rule: self.metadata.name.startsWith('x')"}


def test_rules_name_properties_as_cel_escapes_them() -> None:
    compiled = rule_schema(
        {"rule": "self.__namespace__ == 'prod'", "message": "namespace"},
        {"rule": "self.max__dash__size > 1", "message": "dash"},
        {"rule": "self.labels['app-name'] == 'web'", "message": "map keys stay"},
        field={"namespace": {"type": "string"}, "max-size": {"type": "integer"},
               "labels": {"type": "object", "additionalProperties": {"type": "string"}}})
    assert rule_messages(compiled, {"namespace": "prod", "max-size": 2, "labels": {"app-name": "web"}}) == []
    assert rule_messages(compiled, {"namespace": "dev", "max-size": 1, "labels": {"app-name": "db"}}) == [
        'spec: Invalid value: namespace', 'spec: Invalid value: dash',
        'spec: Invalid value: map keys stay']


def test_rules_that_read_the_whole_value_see_all_of_it() -> None:
    compiled = rule_schema({"rule": "size(self) == 2", "message": "two fields"},
                           {"rule": "self.all(k, k != 'c')", "message": "no c"})
    assert rule_messages(compiled, {"a": 1, "b": 2}) == []
    assert rule_messages(compiled, {"a": 1}) == ['spec: Invalid value: two fields']


def test_embedded_resources_metadata_is_object_meta() -> None:
    assert messages(cr(template={"apiVersion": "v1", "kind": "Pod", "metadata": {
        "labels": {"bad key!": "x"}, "generateName": "a/b"}})) == [
        'spec.template.metadata.generateName: Invalid value: "a/b": may not contain \'/\'',
        'spec.template.metadata.labels: Invalid value: "bad key!": name part must consist of alphanumeric characters, '
        "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
        "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"]


def test_optional_old_self_rules_run_on_create_too() -> None:
    compiled = rule_schema({"rule": "!oldSelf.hasValue() || self.a >= oldSelf.value().a", "optionalOldSelf": True,
                            "message": "a may not decrease"},
                           {"rule": "self.a == oldSelf.a", "message": "plain transition"})
    obj = {"apiVersion": "a/v1", "kind": "A", "metadata": {"name": "x"}, "spec": {"a": 1}}
    assert compiled.validate(obj) == []
    old = {"apiVersion": "a/v1", "kind": "A", "metadata": {"name": "x"}, "spec": {"a": 2}}
    assert [e.message() for e in compiled.validate_update(obj, old)] == [
        'spec: Invalid value: a may not decrease', 'spec: Invalid value: plain transition']


def test_rules_see_numbers_as_the_schema_types_them() -> None:
    compiled = rule_schema({"rule": "self.ratio + 0.5 == 1.5 && self.a * 2 == 4", "message": "numbers"},
                           field={"ratio": {"type": "number"}})
    assert rule_messages(compiled, {"ratio": 1, "a": 2.0}) == []


@pytest.mark.parametrize("version", ["1.33", "1.34", "1.35", "1.36"])
def test_a_failed_rule_shows_its_type_before_1_35_and_its_value_from_then(version: str) -> None:
    """kubernetes#132798 and #133832 (1.35): a failed rule's error shows the value it judged —
    a scalar as itself, an object or array not at all; before, the schema's type name. A nil
    value blocked rules are reported on renders as the release renders nil."""
    compiled = rule_schema({"rule": "self.a < 3", "message": "a below 3"},
                           field={"s": {"type": "string", "x-kubernetes-validations": [{"rule": "self != 'x'"}]}})
    with emulating(release(version)):
        shown = rule_messages(compiled, {"a": 3, "s": "x"})
        blocked = rule_messages(compiled, {"a": "three"})[-1]
    if version < "1.35":
        assert shown == ['spec: Invalid value: "object": a below 3',
                         "spec.s: Invalid value: \"string\": failed rule: self != 'x'"]
    else:
        assert shown == ["spec: Invalid value: a below 3", "spec.s: Invalid value: \"x\": failed rule: self != 'x'"]
    nil = '"null"' if version == "1.33" else "null"
    assert blocked == BLOCKED.replace("null", nil, 1)
