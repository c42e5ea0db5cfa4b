"""A CRD's schema at work over HTTP: the CRD itself is refused with upstream's causes when
its schema is not structural; its custom resources are pruned, defaulted and validated
(OpenAPI and CEL rules) with upstream's 422 messages."""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests

Obj = dict[str, Any]
GROUP = "stable.example.com"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WIDGETS = f"/apis/{GROUP}/v1/namespaces/default/widgets"

SCHEMA: Obj = {"type": "object", "properties": {
    "spec": {"type": "object", "required": ["image"],
             "x-kubernetes-validations": [
                 {"rule": "self.replicas <= self.maxReplicas", "message": "replicas may not exceed maxReplicas"},
                 {"rule": "!has(self.paused) || !self.paused || self.replicas == 0",
                  # string(int) has no size bound, so upstream refuses a concatenation with it for its
                  # estimated cost; a lookup in a list of literals keeps the message's size known.
                  "messageExpression": "'a paused widget runs 0 replicas, not ' + ['0', '1', '2', '3'][self.replicas]",
                  "reason": "FieldValueForbidden", "fieldPath": ".replicas"}],
             "properties": {
                 "image": {"type": "string", "minLength": 1},
                 "replicas": {"type": "integer", "minimum": 0, "default": 1},
                 "maxReplicas": {"type": "integer", "default": 5},
                 "paused": {"type": "boolean"},
                 "mode": {"type": "string", "enum": ["fast", "slow"], "default": "fast"},
                 "zone": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "zone is immutable"}]},
                 "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                           "items": {"type": "object", "required": ["name"], "properties": {
                               "name": {"type": "string"}, "port": {"type": "integer", "default": 80}}}},
                 "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}},
    "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}}}


class Http:
    def __init__(self, url: str) -> None:
        self.url = url
        self.session = requests.Session()
        self.session.headers.update({"Authorization": "Bearer fakekube", "Accept": "application/json"})

    def send(self, method: str, path: str, body: Any = None, content_type: str = "application/json",
             query: str = "") -> tuple[int, list[str], Obj]:
        answer = self.session.request(method, self.url + path + (f"?{query}" if query else ""),
                                      data=None if body is None else json.dumps(body),
                                      headers={"Content-Type": content_type})
        warnings = answer.raw.headers.getlist("Warning")
        return answer.status_code, warnings, answer.json()


def crd(schema: Obj) -> Obj:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"widgets.{GROUP}"},
            "spec": {"group": GROUP, "scope": "Namespaced",
                     "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": schema}, "subresources": {"status": {}}}]}}


def widget(name: str = "w", **spec: Any) -> Obj:
    return {"apiVersion": f"{GROUP}/v1", "kind": "Widget", "metadata": {"name": name}, "spec": {"image": "nginx", **spec}}


@pytest.fixture
def http(fakekube) -> Http:
    server = Http(fakekube.url)
    code, _, body = server.send("POST", CRDS, crd(SCHEMA))
    assert code == 201, body
    return server


def causes(status: Obj) -> list[tuple[str, str, str]]:
    return [(c["reason"], c.get("field", ""), c["message"]) for c in status["details"]["causes"]]


def test_a_crd_whose_schema_is_not_structural_is_refused(fakekube) -> None:
    server = Http(fakekube.url)
    bad = {"type": "object", "properties": {"spec": {"properties": {"size": {"type": "integer", "default": "big"}}},
                                            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}}}
    code, _, status = server.send("POST", CRDS, crd(bad))
    assert code == 422
    p = "spec.validation.openAPIV3Schema"
    assert causes(status) == [
        ("FieldValueRequired", f"{p}.properties[spec].type", "Required value: must not be empty for specified object fields"),
        ("FieldValueForbidden", f"{p}.properties[tags].uniqueItems",
         "Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic"),
    ]
    assert server.send("GET", f"{CRDS}/widgets.{GROUP}")[0] == 404


def test_a_crd_with_a_rule_that_does_not_compile_is_refused(fakekube) -> None:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "x-kubernetes-validations": [{"rule": "self.size >"}]}}}
    code, _, status = Http(fakekube.url).send("POST", CRDS, crd(schema))
    assert code == 422
    ((reason, field, message),) = causes(status)
    assert (reason, field) == ("FieldValueInvalid", "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule")
    assert message.startswith('Invalid value: {"Rule":"self.size \\u003e","Message":"","MessageExpression":"",'
                              '"Reason":null,"FieldPath":"","OptionalOldSelf":null}: ')
    assert "compilation failed: ERROR: <input>:1:12: Syntax error:" in message


def test_defaults_are_stored(http: Http) -> None:
    code, _, created = http.send("POST", WIDGETS, widget(ports=[{"name": "http"}]))
    assert code == 201, created
    assert created["spec"] == {"image": "nginx", "replicas": 1, "maxReplicas": 5, "mode": "fast",
                               "ports": [{"name": "http", "port": 80}]}
    assert http.send("GET", f"{WIDGETS}/w")[2]["spec"] == created["spec"]


def test_unknown_fields_are_pruned_with_a_warning(http: Http) -> None:
    body = widget(bogus=1, extra={"anything": {"goes": True}})
    body["topLevel"] = "x"
    code, warnings, created = http.send("POST", WIDGETS, body)
    assert code == 201
    assert warnings == ['299 - "unknown field \\"spec.bogus\\""', '299 - "unknown field \\"topLevel\\""']
    stored = http.send("GET", f"{WIDGETS}/w")[2]
    assert "bogus" not in stored["spec"] and "topLevel" not in stored
    assert stored["spec"]["extra"] == {"anything": {"goes": True}}


def test_strict_field_validation_refuses_unknown_fields(http: Http) -> None:
    code, _, status = http.send("POST", WIDGETS, widget(bogus=1), query="fieldValidation=Strict")
    assert code == 400
    assert status["message"].endswith('strict decoding error: unknown field "spec.bogus"')


def test_openapi_violations_are_one_422_with_causes(http: Http) -> None:
    code, _, status = http.send("POST", WIDGETS, widget(image="", replicas=-1, mode="medium", paused="yes"))
    assert code == 422
    assert status["reason"] == "Invalid"
    assert causes(status) == [
        ("FieldValueInvalid", "spec.image", 'Invalid value: "": spec.image in body should be at least 1 chars long'),
        ("FieldValueNotSupported", "spec.mode", 'Unsupported value: "medium": supported values: "fast", "slow"'),
        ("FieldValueTypeInvalid", "spec.paused", 'Invalid value: "string": spec.paused in body must be of type boolean: "string"'),
        ("FieldValueInvalid", "spec.replicas", "Invalid value: -1: spec.replicas in body should be greater than or equal to 0"),
        ("FieldValueInvalid", "<nil>", 'Invalid value: null: some validation rules were not checked because the object '
                                       "was invalid; correct the existing errors to complete validation"),
    ]
    assert status["message"].startswith(f'Widget.{GROUP} "w" is invalid: [spec.image: Invalid value: "": ')


def test_cel_rules_report_their_messages(http: Http) -> None:
    code, _, status = http.send("POST", WIDGETS, widget(replicas=7, maxReplicas=5))
    assert code == 422
    assert status["message"] == (f'Widget.{GROUP} "w" is invalid: spec: Invalid value: '
                                 "replicas may not exceed maxReplicas")
    code, _, status = http.send("POST", WIDGETS, widget(replicas=2, paused=True))
    assert code == 422
    assert causes(status) == [("FieldValueForbidden", "spec.replicas", "Forbidden: a paused widget runs 0 replicas, not 2")]


def test_transition_rules_and_ratcheting_on_update(http: Http) -> None:
    assert http.send("POST", WIDGETS, widget(zone="a"))[0] == 201
    code, _, status = http.send("PATCH", f"{WIDGETS}/w", {"spec": {"zone": "b"}}, content_type="application/merge-patch+json")
    assert code == 422
    assert causes(status) == [("FieldValueInvalid", "spec.zone", 'Invalid value: "b": zone is immutable')]
    code, _, patched = http.send("PATCH", f"{WIDGETS}/w", {"spec": {"replicas": 3}}, content_type="application/merge-patch+json")
    assert code == 200 and patched["spec"]["zone"] == "a"


def test_map_lists_refuse_duplicate_keys(http: Http) -> None:
    code, _, status = http.send("POST", WIDGETS, widget(ports=[{"name": "http"}, {"name": "http", "port": 81}]))
    assert code == 422
    assert causes(status) == [("FieldValueDuplicate", "spec.ports[1]", 'Duplicate value: {"name":"http"}')]


def test_what_every_version_shares_is_validated_at_the_top_as_upstream_converts_it(fakekube) -> None:
    """v1's conversion moves a schema, subresources or columns every version sets alike to
    spec.validation, spec.subresources, spec.additionalPrinterColumns: errors carry those
    paths, once; parts that differ by version keep theirs (recorded against 1.36)."""
    server = Http(fakekube.url)
    bad = {"openAPIV3Schema": {"type": "object", "properties": {"a": {"type": "foo"}}}}
    good = {"openAPIV3Schema": {"type": "object", "properties": {"a": {"type": "string"}}}}
    columns = [{"name": "A", "type": "bogus", "jsonPath": ".a"}]
    scale = {"scale": {"specReplicasPath": "spec.x", "statusReplicasPath": ".status.x"}}

    def version(name: str, schema: Obj, **extra: Any) -> Obj:
        return {"name": name, "served": True, "storage": name == "v1", "schema": schema, **extra}

    def refused(*versions: Obj) -> list[tuple[str, str, str]]:
        body = crd(SCHEMA)
        body["spec"]["versions"] = list(versions)
        code, _, status = server.send("POST", CRDS, body)
        assert code == 422, status
        return [(field, message) for _, field, message in causes(status)]

    unsupported = 'Unsupported value: "foo": supported values: "array", "boolean", "integer", "number", "object", "string"'
    assert refused(version("v1", bad), version("v2", bad)) == [
        ("spec.validation.openAPIV3Schema.properties[a].type", unsupported)]
    assert refused(version("v1", bad), version("v2", good)) == [
        ("spec.versions[0].schema.openAPIV3Schema.properties[a].type", unsupported)]
    assert refused(version("v1", good, additionalPrinterColumns=columns),
                   version("v2", good, additionalPrinterColumns=columns)) == [
        ("spec.additionalPrinterColumns[0].type", 'Invalid value: "bogus": must be one of boolean,date,integer,number,string')]
    assert refused(version("v1", good, subresources=scale)) == [
        ("spec.subresources.scale.specReplicasPath", 'Invalid value: "spec.x": must be a simple json path starting with .')]


def test_a_custom_resources_causes_come_schema_then_scale_paths_then_list_types_then_rules(fakekube) -> None:
    """Upstream's order (the customresource strategy): the OpenAPI errors, the scale
    subresource's accessor errors, embedded resources and list types, then the rules —
    or, after a blocking error, the cause saying they were not checked."""
    server = Http(fakekube.url)
    schema = {"type": "object", "properties": {
        "spec": {"type": "object", "x-kubernetes-validations": [{"rule": "self.label != 'bad'"}], "properties": {
            "replicas": {"type": "integer"}, "label": {"type": "string", "maxLength": 3},
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}}},
        "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}
    body = crd(schema)
    body["spec"]["versions"][0]["subresources"] = {
        "status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}
    assert server.send("POST", CRDS, body)[0] == 201
    code, _, status = server.send("POST", WIDGETS, widget(replicas=-1, label="bad", tags=["a", "a"]))
    assert code == 422
    assert [(field, reason) for reason, field, _ in causes(status)] == [
        (".spec.replicas", "FieldValueInvalid"), ("spec.tags[1]", "FieldValueDuplicate"), ("spec", "FieldValueInvalid")]
    code, _, status = server.send("POST", WIDGETS, widget(replicas=-1, label="toolong"))
    assert [(field, reason) for reason, field, _ in causes(status)] == [
        ("spec.label", "FieldValueTooLong"), (".spec.replicas", "FieldValueInvalid"), ("<nil>", "FieldValueInvalid")]


def scaled_widgets(server: Http) -> None:
    """Widgets with a status and a scale subresource (replicas at .spec.replicas and
    .status.replicas), and a rule on spec."""
    schema = {"type": "object", "properties": {
        "spec": {"type": "object", "x-kubernetes-validations": [{"rule": "!has(self.label) || self.label != 'bad'"}],
                 "properties": {"replicas": {"type": "integer"}, "label": {"type": "string"}}},
        "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}
    body = crd(schema)
    body["spec"]["versions"][0]["subresources"] = {
        "status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}
    assert server.send("POST", CRDS, body)[0] == 201


def test_a_scale_path_through_a_value_that_is_not_an_object_is_an_accessor_error(fakekube) -> None:
    """unstructured.NestedInt64 stops where the walk meets a string: the error names the path
    up to the field it could not look up, after the schema's own error."""
    server = Http(fakekube.url)
    scaled_widgets(server)
    code, _, status = server.send("POST", WIDGETS, {**widget(), "spec": "text"})
    assert code == 422
    assert causes(status) == [
        ("FieldValueTypeInvalid", "spec", 'Invalid value: "string": spec in body must be of type object: "string"'),
        ("FieldValueInvalid", ".spec.replicas",
         "Invalid value: 0: .spec.replicas accessor error: text is of the type string, expected map[string]interface{}"),
        ("FieldValueInvalid", "<nil>", "Invalid value: null: some validation rules were not checked because the object "
                                       "was invalid; correct the existing errors to complete validation")]


def test_a_status_write_is_checked_against_the_status_schema(fakekube) -> None:
    """The status subresource validates ``status`` with the status schema alone: the field is
    status.replicas, the text names the path below status (``replicas in body``)."""
    server = Http(fakekube.url)
    scaled_widgets(server)
    assert server.send("POST", WIDGETS, widget())[0] == 201
    code, _, status = server.send("PATCH", f"{WIDGETS}/w/status", {"status": {"replicas": "three"}},
                                  content_type="application/merge-patch+json")
    assert code == 422
    assert causes(status)[:2] == [
        ("FieldValueTypeInvalid", "status.replicas",
         'Invalid value: "string": replicas in body must be of type integer: "string"'),
        ("FieldValueInvalid", ".status.replicas",
         "Invalid value: 0: .status.replicas accessor error: three is of the type string, expected int64")]


def test_a_version_without_a_schema_is_required_without_a_detail(fakekube) -> None:
    body = crd(SCHEMA)
    del body["spec"]["versions"][0]["schema"]
    code, _, status = Http(fakekube.url).send("POST", CRDS, body)
    assert code == 422
    assert causes(status) == [("FieldValueRequired", "spec.versions[0].schema.openAPIV3Schema", "Required value")]
