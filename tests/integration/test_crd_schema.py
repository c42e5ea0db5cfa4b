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
    p = "spec.versions[0].schema.openAPIV3Schema"
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
    assert (reason, field) == ("FieldValueInvalid", "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule")
    assert message.startswith('Invalid value: apiextensions.ValidationRule{Rule:"self.size >", ')
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
        ("FieldValueInvalid", "<nil>", 'Invalid value: "null": some validation rules were not checked because the object '
                                       "was invalid; correct the existing errors to complete validation"),
    ]
    assert status["message"].startswith(f'Widget.{GROUP} "w" is invalid: [spec.image: Invalid value: "": ')


def test_cel_rules_report_their_messages(http: Http) -> None:
    code, _, status = http.send("POST", WIDGETS, widget(replicas=7, maxReplicas=5))
    assert code == 422
    assert status["message"] == (f'Widget.{GROUP} "w" is invalid: spec: Invalid value: "object": '
                                 "replicas may not exceed maxReplicas")
    code, _, status = http.send("POST", WIDGETS, widget(replicas=2, paused=True))
    assert code == 422
    assert causes(status) == [("FieldValueForbidden", "spec.replicas", "Forbidden: a paused widget runs 0 replicas, not 2")]


def test_transition_rules_and_ratcheting_on_update(http: Http) -> None:
    assert http.send("POST", WIDGETS, widget(zone="a"))[0] == 201
    code, _, status = http.send("PATCH", f"{WIDGETS}/w", {"spec": {"zone": "b"}}, content_type="application/merge-patch+json")
    assert code == 422
    assert causes(status) == [("FieldValueInvalid", "spec.zone", 'Invalid value: "string": zone is immutable')]
    code, _, patched = http.send("PATCH", f"{WIDGETS}/w", {"spec": {"replicas": 3}}, content_type="application/merge-patch+json")
    assert code == 200 and patched["spec"]["zone"] == "a"


def test_map_lists_refuse_duplicate_keys(http: Http) -> None:
    code, _, status = http.send("POST", WIDGETS, widget(ports=[{"name": "http"}, {"name": "http", "port": 81}]))
    assert code == 422
    assert causes(status) == [("FieldValueDuplicate", "spec.ports[1]", 'Duplicate value: {"name":"http"}')]
