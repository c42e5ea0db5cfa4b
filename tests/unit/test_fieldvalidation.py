"""Tests for fakekube.api.wire.fieldvalidation: fieldValidation=Strict/Warn detection and texts.

Expected paths and messages follow sigs.k8s.io/json's strict decoding tests
(``unknown field "b.a.unknown"``, ``duplicate field "e[0].g"``) and apiserver's
handlers (create's transformDecodeError, the Warning header format).
"""

from __future__ import annotations

import json

import pytest

from fakekube.api.wire import schema
from fakekube.api.wire.fieldvalidation import (
    duplicate_fields,
    key_count,
    patch_strict_error,
    strict_error,
    strict_messages,
    unknown_fields,
    warnings,
)
from fakekube.api.machinery.warning import header as warning_header


@pytest.fixture(scope="module")
def k8s():
    return schema.load()


def _deployment(**spec) -> dict:
    template = {"metadata": {"labels": {"app": "a"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]}}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "a"}}, "template": template, **spec}}


def test_known_object_has_no_unknown_fields(k8s):
    obj = _deployment(strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}})
    obj["metadata"]["annotations"] = {"any/key": "v"}
    obj["status"] = {"replicas": 1, "conditions": [{"type": "Available", "status": "True"}]}
    assert unknown_fields(obj, k8s, "apps", "v1", "Deployment") == []


def test_unknown_fields_are_reported_with_upstream_paths_in_document_order(k8s):
    obj = _deployment(foo=1)
    obj["bogus"] = True
    obj["spec"]["template"]["spec"]["containers"][0]["bar"] = {"nested": 1}
    obj["spec"]["template"]["spec"]["containers"].append({"name": "d", "image": "i", "ports": [{"containerPort": 1, "x": 2}]})
    assert unknown_fields(obj, k8s, "apps", "v1", "Deployment") == [
        "spec.template.spec.containers[0].bar",
        "spec.template.spec.containers[1].ports[0].x",
        "spec.foo",
        "bogus",
    ]


def test_maps_and_free_form_fields_take_any_key(k8s):
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "p", "labels": {"a": "b"},
                        "managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {"f:x": {}}}}]},
           "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "1", "example.com/gpu": 2}}}],
                    "nodeSelector": {"anything": "goes"}}}
    assert unknown_fields(pod, k8s, "", "v1", "Pod") == []


def test_preserve_unknown_fields_and_raw_json_are_not_checked(k8s):
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "x"},
           "spec": {"group": "g", "names": {"kind": "K", "plural": "ks"}, "scope": "Namespaced",
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": {"type": "object", "default": {"free": {"form": 1}},
                                                                 "x-kubernetes-preserve-unknown-fields": True}}}]}}
    assert unknown_fields(crd, k8s, "apiextensions.k8s.io", "v1", "CustomResourceDefinition") == []


def test_int_or_string_fields_accept_both(k8s):
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
           "spec": {"ports": [{"port": 80, "targetPort": "http"}, {"port": 81, "targetPort": 8080}]}}
    assert unknown_fields(svc, k8s, "", "v1", "Service") == []


def test_unknown_kind_reports_nothing(k8s):
    assert unknown_fields({"spec": {"x": 1}}, k8s, "example.com", "v1", "Widget") == []


def test_case_matters(k8s):
    assert unknown_fields({"Spec": {}}, k8s, "", "v1", "ConfigMap") == ["Spec"]


def test_duplicate_fields_follow_sigs_k8s_io_json():
    raw = b'{"a":"","b":"","a":"","b":"","c":{"c":"","c":""},"d":{"e":{"f":1,"f":1}},"e":[{"g":1,"g":1}]}'
    assert duplicate_fields(raw) == ["a", "b", "c.c", "d.e.f", "e[0].g"]


def test_triplicate_reported_once_and_invalid_json_ignored():
    assert duplicate_fields(b'{"a":1,"a":2,"a":3}') == ["a"]
    assert duplicate_fields(b"{not json") == []
    assert duplicate_fields(b'{"a":{"b":1},"c":[1,2]}') == []


@pytest.mark.parametrize("raw", [
    b'{"a":1,"a":2}',
    b'{"a" :1, "b"\t:{"c":1,"c" : 2}}',  # spaces before colons: counted exactly
    b'{"a":"x\\":","a":1}',  # a quote and colon inside a value, and a repeat
    b'{"a":"x\\":","b":1}',  # the same mark inside a value, no repeat
    b'{"a\\":":1,"a\\":":2}',  # keys that end in an escaped quote and colon
    b'{"a":[{"k":1},{"k":1,"k":2}]}',
    b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"b"}}',
    b'{"d":{"\\ud800":1,"\\ud801":2}}',
])
def test_the_parsed_key_count_shortcut_gives_the_full_checks_answer(raw):
    """With the key count of the request's own parse, the check skips its second parse
    only when no key can have been dropped: the answer is always the full check's."""
    parsed_keys = key_count(json.loads(raw))
    assert duplicate_fields(raw, parsed_keys) == duplicate_fields(raw)


def test_key_count_counts_object_keys_at_every_depth():
    assert key_count({"a": {"b": 1, "c": [{"d": 1}, [{"e": {}}]]}, "f": []}) == 6
    assert key_count([1, "x", None]) == 0


def test_strict_error_for_create_matches_upstream_text():
    err = strict_error(["spec.foo"], ["metadata.name"], kind="Deployment", version="v1")
    assert (err.code, err.reason) == (400, "BadRequest")
    assert err.message == ('Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: '
                           'unknown field "spec.foo", duplicate field "metadata.name"')


def test_strict_error_without_kind_is_the_decoding_error():
    assert strict_error(["x"], []).message == 'strict decoding error: unknown field "x"'


def test_patch_strict_error_is_invalid_patch_field():
    err = patch_strict_error(["spec.foo"], [], "map[spec:map[foo:1]]")
    assert (err.code, err.reason) == (422, "Invalid")
    assert err.message == (' "" is invalid: patch: Invalid value: "map[spec:map[foo:1]]": '
                           'strict decoding error: unknown field "spec.foo"')


def test_warnings_and_header_format():
    texts = warnings(["spec.foo"], ["a"])
    assert texts == ['unknown field "spec.foo"', 'duplicate field "a"']
    assert texts == strict_messages(["spec.foo"], ["a"])
    assert warning_header(texts[0]) == '299 - "unknown field \\"spec.foo\\""'
