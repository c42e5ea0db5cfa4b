"""Error texts as kube-apiserver 1.36 writes them (each measured against it): bad values
quoted as Go's ``%q``, a patched object shown as the patch library marshals it, YAML
syntax errors in go-yaml's words, go-yaml's booleans, apply's typed conversion, and the
label length unit by release."""

from __future__ import annotations

import pytest

from fakekube import Cluster
from tests.integration.test_request_semantics import assert_status, request

CM = "/api/v1/namespaces/default/configmaps"
MERGE = "application/merge-patch+json"
APPLY = "application/apply-patch+yaml"


def configmap(name: str, **extra: object) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **extra}}


def test_a_bad_string_value_is_quoted_as_go_quotes_it(fakekube: Cluster) -> None:
    _, answer, _ = request(fakekube, "POST", f"{CM}?fieldManager=%00bad", configmap("a"))
    assert_status(answer, 422, "Invalid")
    assert answer["message"].startswith('CreateOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: '
                                        '"\\x00bad": ')


def test_a_strictly_refused_merge_patch_shows_the_object_as_the_patch_library_writes_it(fakekube: Cluster) -> None:
    """Top-level keys sorted (a Go map); untouched nodes as the Go struct writes them
    (ObjectMeta's field order, map keys sorted); a node the patch merged into sorted."""
    request(fakekube, "POST", CM, {**configmap("real", labels={"b": "2", "a": "1"}), "data": {"k": "v"}})
    _, answer, _ = request(fakekube, "PATCH", f"{CM}/real?fieldValidation=Strict", {"extra": 1}, MERGE)
    assert_status(answer, 422, "Invalid")
    shown = answer["message"].split('patch: Invalid value: "', 1)[1]
    assert shown.startswith('{\\"apiVersion\\":\\"v1\\",\\"data\\":{\\"k\\":\\"v\\"},\\"extra\\":1,\\"kind\\":'
                            '\\"ConfigMap\\",\\"metadata\\":{\\"name\\":\\"real\\",\\"namespace\\":\\"default\\",'
                            '\\"uid\\":')
    assert '\\"labels\\":{\\"a\\":\\"1\\",\\"b\\":\\"2\\"},\\"managedFields\\":[{\\"manager\\":' in shown
    assert shown.endswith('": strict decoding error: unknown field "extra"')


def test_two_controller_owner_references_show_as_json(fakekube: Cluster) -> None:
    refs = [{"apiVersion": "v1", "kind": "ConfigMap", "name": n, "uid": f"u-{n}", "controller": True} for n in "ab"]
    _, answer, _ = request(fakekube, "POST", CM, configmap("owned", ownerReferences=refs))
    assert answer["message"] == (
        'ConfigMap "owned" is invalid: metadata.ownerReferences: Invalid value: '
        '[{"apiVersion":"v1","kind":"ConfigMap","name":"a","uid":"u-a","controller":true},'
        '{"apiVersion":"v1","kind":"ConfigMap","name":"b","uid":"u-b","controller":true}]: Only one reference can '
        'have Controller set to true. Found "true" in references for ConfigMap/a and ConfigMap/b')


def test_a_finalizer_added_while_deleting_is_one_message_and_two_causes(fakekube: Cluster) -> None:
    request(fakekube, "POST", CM, configmap("fin", finalizers=["example.com/hold"]))
    request(fakekube, "DELETE", f"{CM}/fin")
    _, answer, _ = request(fakekube, "PATCH", f"{CM}/fin",
                           {"metadata": {"finalizers": ["example.com/hold", "example.com/more"]}}, MERGE)
    text = ('no new finalizers can be added if the object is being deleted, found new finalizers '
            '[]string{"example.com/more"}')
    assert answer["message"] == f'ConfigMap "fin" is invalid: metadata.finalizers: Forbidden: {text}'
    assert [cause["message"] for cause in answer["details"]["causes"]] == [f"Forbidden: {text}"] * 2


@pytest.mark.parametrize("version,unit", [("1.36", "bytes"), ("1.33", "characters")])
def test_a_label_value_s_length_unit_follows_the_release(version: str, unit: str) -> None:
    with Cluster(kubernetes_version=version, system_pods=False) as cluster:
        _, answer, _ = request(cluster, "POST", CM, configmap("long", labels={"a": "a" * 64}))
    assert answer["message"].endswith(f": must be no more than 63 {unit}")


def test_an_api_version_nobody_serves_names_upstream_s_scheme(fakekube: Cluster) -> None:
    _, answer, _ = request(fakekube, "POST", CM, {**configmap("a"), "apiVersion": "v2"})
    assert answer["message"].endswith('in scheme "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"')


@pytest.mark.parametrize("body,problem", [
    (b"apiVersion: v1\nkind: [ConfigMap\n", "yaml: line 2: did not find expected ',' or ']'"),
    (b"a: b\n\tc: d\n", "yaml: line 2: found a tab character that violates indentation"),
    (b'a: "x\n', "yaml: line 2: found unexpected end of stream"),
    (b"a: b\nc\n", "yaml: line 3: could not find expected ':'"),
])
def test_yaml_syntax_errors_are_go_yaml_s(fakekube: Cluster, body: bytes, problem: str) -> None:
    _, created, _ = request(fakekube, "POST", CM, body, "application/yaml")
    assert created["message"].startswith(f"the object provided is unrecognized (must be of type ConfigMap): {problem} (")
    _, applied, _ = request(fakekube, "PATCH", f"{CM}/a?fieldManager=m", body, APPLY)
    assert applied["message"] == f"error decoding YAML: error converting YAML to JSON: {problem}"


def test_an_apply_body_that_is_not_a_map(fakekube: Cluster) -> None:
    _, answer, _ = request(fakekube, "PATCH", f"{CM}/a?fieldManager=m", b"- a\n", APPLY)
    assert answer["message"] == ("error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot "
                                 "unmarshal array into Go value of type map[string]interface {}")


def test_apply_converts_to_the_type_and_go_yaml_reads_y_as_true(fakekube: Cluster) -> None:
    """go-yaml v2 reads ``y`` as a boolean: applied as a ConfigMap's data value, the typed
    conversion refuses it (a 500, as upstream), and nothing is stored."""
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml\ndata:\n  x: y\n"
    status, answer, _ = request(fakekube, "PATCH", f"{CM}/yaml?fieldManager=m", body, APPLY)
    assert status == 500
    assert answer["message"] == ("failed to create typed patch object (/yaml; /v1, Kind=ConfigMap): .data.x: "
                                 "expected string, got &value.valueUnstructured{Value:true}")
    assert request(fakekube, "GET", f"{CM}/yaml")[0] == 404
    status, answer, _ = request(fakekube, "PATCH", f"{CM}/yaml?fieldManager=m", body.replace(b"x: y", b'x: "y"'),
                                APPLY)
    assert (status, answer["data"]) == (201, {"x": "y"})
