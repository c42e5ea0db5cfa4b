"""A CRD version's openAPIV3Schema checked as apiextensions-apiserver 1.33 checks it."""

from __future__ import annotations

from typing import Any

from fakekube.api.machinery.errors import emulating
from fakekube.objects.versions import release
from fakekube.api.wire.structural import validate_crd_schema

P = "spec.versions[0].schema.openAPIV3Schema"


def check(schema: dict[str, Any]) -> list[str]:
    return [e.message() for e in validate_crd_schema(schema, P)]


def spec(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": properties}}}


def test_a_good_schema_passes() -> None:
    assert check({"type": "object", "properties": {
        "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 10}}},
        "spec": {"type": "object", "x-kubernetes-validations": [{"rule": "self.a <= self.b", "message": "a ≤ b"}],
                 "properties": {"a": {"type": "integer", "default": 1}, "b": {"type": "integer"},
                                "port": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                                "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                                          "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}},
                                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}},
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}) == []


def test_every_position_needs_a_type() -> None:
    assert check({"properties": {"spec": {"properties": {"a": {}}}, "list": {"type": "array", "items": {}}}}) == [
        f"{P}.properties[list].items.type: Required value: must not be empty for specified array items",
        f"{P}.properties[spec].properties[a].type: Required value: must not be empty for specified object fields",
        f"{P}.properties[spec].type: Required value: must not be empty for specified object fields",
        f"{P}.type: Required value: must not be empty at the root",
    ]


def test_root_rules() -> None:
    assert check({"type": "string", "nullable": True}) == [
        f"{P}.nullable: Forbidden: nullable cannot be true at the root",
        f'{P}.type: Invalid value: "string": must be object at the root',
    ]
    assert check({"type": "object", "additionalProperties": {"type": "string"}}) == [
        f"{P}.additionalProperties: Forbidden: must not be used at the root"]


def test_metadata_may_only_constrain_name_and_generate_name() -> None:
    assert check({"type": "object", "properties": {"metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}}}) == [
        f"{P}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, "
        "but metadata is implicitly specified"]


def test_forbidden_keywords() -> None:
    assert check(spec(a={"type": "array", "items": {"type": "string"}, "uniqueItems": True},
                      b={"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": {"type": "string"}},
                      c={"type": "string", "x-kubernetes-preserve-unknown-fields": False})) == [
        f"{P}.properties[spec].properties[a].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        f"{P}.properties[spec].properties[b].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive",
        f"{P}.properties[spec].properties[c].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined",
    ]


def test_ref_is_not_supported() -> None:
    assert check(spec(a={"type": "string", "$ref": "#/definitions/x"})) == [
        f"{P}.properties[spec].properties[a].$ref: Forbidden: $ref is not supported"]


def test_value_validations_stay_off_the_spine() -> None:
    assert check(spec(a={"type": "string", "anyOf": [{"type": "string", "default": "x"}]})) == [
        f"{P}.properties[spec].properties[a].anyOf[0].default: Forbidden: must be undefined to be structural",
        f"{P}.properties[spec].properties[a].anyOf[0].type: Forbidden: must be empty to be structural",
    ]
    # Completeness is checked for the root's value validations (upstream looks no deeper).
    assert check({"type": "object", "allOf": [{"properties": {"c": {"maxLength": 1}}}]}) == [
        f"{P}.properties[c]: Required value: because it is defined in {P}.allOf[0].properties[c]"]


def test_list_and_map_types() -> None:
    assert check(spec(a={"type": "string", "x-kubernetes-list-type": "set"},
                      b={"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "map"},
                      c={"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}},
                         "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k", "missing"]},
                      d={"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "bag"},
                      e={"type": "string", "x-kubernetes-map-type": "granular"})) == [
        f'{P}.properties[spec].properties[a].type: Invalid value: "string": must be array if x-kubernetes-list-type is specified',
        f"{P}.properties[spec].properties[b].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map",
        f'{P}.properties[spec].properties[b].items.type: Invalid value: "string": must be object if parent array\'s x-kubernetes-list-type is map',
        f'{P}.properties[spec].properties[c].x-kubernetes-list-map-keys: Invalid value: ["k","missing"]: entries must all be names of item properties',
        f"{P}.properties[spec].properties[c].items.properties[k].default: Required value: this property is in "
        "x-kubernetes-list-map-keys, so it must have a default or be a required property",
        f'{P}.properties[spec].properties[d].x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "set", "map"',
        f'{P}.properties[spec].properties[e].type: Invalid value: "string": must be object if x-kubernetes-map-type is specified',
    ]


def test_defaults_must_validate_and_be_pruned() -> None:
    # kube-openapi names the default's root "", so its text starts " in body" (two spaces after the colon).
    schema = spec(a={"type": "integer", "default": "one"},
                  b={"type": "object", "properties": {"x": {"type": "string"}}, "default": {"x": "1", "y": 2}})
    assert check(schema) == [  # a decoded object shows as JSON from 1.34
        f'{P}.properties[spec].properties[a].default: Invalid value: "string":  in body must be of type integer: "string"',
        f'{P}.properties[spec].properties[b].default: Invalid value: {{"x":"1","y":2}}: must not have unknown fields',
    ]
    with emulating(release("1.33")):
        assert check(schema)[1] == (f'{P}.properties[spec].properties[b].default: Invalid value: '
                                    'map[string]interface {}{"x":"1", "y":2}: must not have unknown fields')


def test_defaults_are_forbidden_in_top_level_metadata() -> None:
    assert check({"type": "object", "properties": {"metadata": {"type": "object", "default": {}},
                                                   "kind": {"type": "string", "default": "X"}}}) == [
        f"{P}.properties[kind].default: Forbidden: must not be set in top-level kind",
        f"{P}.properties[metadata].default: Forbidden: must not be set in top-level metadata",
    ]


def test_rules_are_checked_and_compiled() -> None:
    assert check(spec(a={"type": "string", "x-kubernetes-validations": [
        {"rule": ""}, {"rule": "self.size() > 1", "message": "  "}, {"rule": "self == 'a'", "reason": "Bad"},
        {"rule": "self == 'a'", "fieldPath": ".nope"}]})) == [
        f"{P}.properties[spec].properties[a].x-kubernetes-validations[0].rule: Required value: rule is not specified",
        f'{P}.properties[spec].properties[a].x-kubernetes-validations[1].message: Invalid value: "  ": message must be non-empty if specified',
        f'{P}.properties[spec].properties[a].x-kubernetes-validations[2].reason: Unsupported value: "Bad": supported values: '
        '"FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"',
        f'{P}.properties[spec].properties[a].x-kubernetes-validations[3].fieldPath: Invalid value: ".nope": fieldPath must be a valid path',
    ]


def test_a_rule_that_does_not_compile_shows_the_rule_as_json_from_1_34() -> None:
    """From 1.34 field errors render a struct as json.Marshal does: the internal ValidationRule
    has no JSON tags (Go's field names), pointers are null or their value, ``>`` is escaped."""
    rules = [{"rule": "self.a > 'x'", "reason": "FieldValueForbidden", "optionalOldSelf": True}]
    message = check(spec(a={"type": "object", "properties": {"a": {"type": "integer"}},
                             "x-kubernetes-validations": rules}))[0]
    assert message.startswith(
        f"{P}.properties[spec].properties[a].x-kubernetes-validations[0].rule: Invalid value: "
        '{"Rule":"self.a \\u003e \'x\'",'
        '"Message":"","MessageExpression":"","Reason":"FieldValueForbidden","FieldPath":"","OptionalOldSelf":true}: '
        "compilation failed: ERROR: <input>:1:8: found no matching overload for '_>_' applied to '(int, string)'")


def test_a_rule_that_does_not_compile_up_to_1_33() -> None:
    with emulating(release("1.33")):
        messages = check(spec(a={"type": "string", "x-kubernetes-validations": [{"rule": "self.a +"}, {"rule": "foo == 1"}]}))
    assert messages == [
        f'{P}.properties[spec].properties[a].x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule'
        '{Rule:"self.a +", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), '
        'FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:9: Syntax error: '
        "mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, "
        "NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | self.a +\n | ........^",
        f'{P}.properties[spec].properties[a].x-kubernetes-validations[1].rule: Invalid value: apiextensions.ValidationRule'
        '{Rule:"foo == 1", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), '
        "FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:1: undeclared reference "
        "to 'foo' (in container '')\n | foo == 1\n | ^",
    ]


def test_old_self_only_where_values_correlate() -> None:
    # Bounded: unbounded, the rule would also be refused for its estimated cost (as upstream refuses it).
    bounded_items = {"type": "string", "maxLength": 10, "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}
    assert check(spec(a={"type": "array", "maxItems": 10, "items": bounded_items})) == [
        f'{P}.properties[spec].properties[a].items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": '
        f"oldSelf cannot be used on the uncorrelatable portion of the schema within {P}.properties[spec].properties[a]"]
    assert check(spec(a={"type": "string", "x-kubernetes-validations": [{"rule": "self == 'x'", "optionalOldSelf": True}]})) == [
        f"{P}.properties[spec].properties[a].x-kubernetes-validations[0].optionalOldSelf: Invalid value: true: "
        "may not be set if oldSelf is not used in rule"]


def test_map_list_keys_must_be_required_or_defaulted() -> None:
    assert check(spec(ports={"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "proto"],
                             "items": {"type": "object", "required": ["name"], "nullable": True, "properties": {
                                 "name": {"type": "string"}, "proto": {"type": "string", "nullable": True}}}})) == [
        f"{P}.properties[spec].properties[ports].items.nullable: Forbidden: cannot be nullable when x-kubernetes-list-type is map",
        f"{P}.properties[spec].properties[ports].items.properties[proto].default: Required value: this property is in "
        "x-kubernetes-list-map-keys, so it must have a default or be a required property",
        f"{P}.properties[spec].properties[ports].items.properties[proto].nullable: Forbidden: this property is in "
        "x-kubernetes-list-map-keys, so it cannot be nullable",
    ]
