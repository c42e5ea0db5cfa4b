"""The conformance harness itself: masks that keep consistency, scenario files that load,
the comparison and the entry matching the replay relies on."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from tools.conformance import golden, normalize
from tools.conformance.runner import cluster_objects, fill_path
from tools.conformance.scenario import load, load_all, substitute

HERE = Path(__file__).parent
UID_A = "11111111-2222-3333-4444-555555555555"
UID_B = "66666666-7777-8888-9999-000000000000"


def _obj(name: str, uid: str, rv: str, **extra: object) -> dict:
    return {"metadata": {"name": name, "uid": uid, "resourceVersion": rv}, **extra}


def test_an_objects_uid_and_versions_are_named_after_it_everywhere() -> None:
    masker = normalize.Masker({})
    first = masker.value(_obj("a", UID_A, "10"))
    owner = masker.value(_obj("b", UID_B, "11", spec={"owner": UID_A}))
    later = masker.value({"items": [_obj("a", UID_A, "12"), _obj("b", UID_B, "11")], "metadata": {"resourceVersion": "12"}})
    assert first["metadata"] == {"name": "a", "uid": "<uid:a>", "resourceVersion": "<rv:a.1>"}
    assert owner["spec"] == {"owner": "<uid:a>"}
    assert [i["metadata"]["resourceVersion"] for i in later["items"]] == ["<rv:a.2>", "<rv:b.1>"]
    assert later["metadata"]["resourceVersion"] == "<rv>"  # a list's is the store's revision


def test_another_objects_uid_still_differs() -> None:
    """A fake answering b's uid in a's metadata does not normalize to a's placeholder."""
    recorded, replayed = normalize.Masker({}), normalize.Masker({})
    recorded.value(_obj("b", UID_B, "1"))
    replayed.value(_obj("b", UID_B, "1"))
    right = recorded.value(_obj("a", UID_A, "2"))
    wrong = replayed.value(_obj("a", UID_B, "2"))
    assert right["metadata"]["uid"] == "<uid:a>" and wrong["metadata"]["uid"] == "<uid:b>"


def test_the_same_name_twice_is_two_objects() -> None:
    masker = normalize.Masker({})
    assert masker.value(_obj("x", UID_A, "1"))["metadata"]["uid"] == "<uid:x>"
    assert masker.value(_obj("x", UID_B, "2"))["metadata"]["uid"] == "<uid:x~2>"


def test_times_keep_their_format() -> None:
    masker = normalize.Masker({})
    assert masker.text("2025-01-01T00:00:00Z") == "<time>"
    assert masker.text("2025-01-01T00:00:00.123456Z") == "<microtime>"
    assert masker.text("at 2025-01-01T00:00:00.5Z") == "at <time.f1>"


def test_generated_names_are_masked_per_prefix_and_only_in_upstreams_alphabet() -> None:
    masker = normalize.Masker({})
    masker.note_request({"metadata": {"generateName": "web-"}})
    assert masker.text("web-bcdfg web-bcdfg kube-api-access-x2z4b") == "web-<gen:1> web-<gen:1> kube-api-access-<gen:1>"
    assert masker.text("web-aeiou") == "web-aeiou"  # vowels: not a suffix upstream would make


def test_jwt_claims_are_kept_with_times_masked() -> None:
    def part(value: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")
    token = f"{part({'alg': 'RS256', 'kid': 'abc'})}.{part({'iat': 100, 'exp': 3707, 'sub': 'system:serviceaccount:a:b'})}.c2ln"
    shown = normalize.Masker({}).text(token)
    claims = json.loads(shown[len("<jwt "):-1])
    assert claims["header"] == {"alg": "RS256", "kid": "<kid>"}
    assert claims["claims"] == {"iat": "<iat>", "exp": "<exp>", "exp-iat": 3607, "sub": "system:serviceaccount:a:b"}


def test_service_addresses_are_named_after_the_service() -> None:
    masker = normalize.Masker({})
    svc = masker.value({"metadata": {"name": "web"}, "spec": {"clusterIP": "10.96.7.7", "clusterIPs": ["10.96.7.7"],
                                                             "ports": [{"port": 80, "nodePort": 31234}]}})
    assert svc["spec"] == {"clusterIP": "<ip:web>", "clusterIPs": ["<ip:web>"], "ports": [{"port": 80, "nodePort": "<port:web:80>"}]}
    assert masker.text("IP 10.96.7.7 is taken, 80:31234/TCP") == "IP <ip:web> is taken, 80:<port:web:80>/TCP"


def test_table_ages_are_masked_also_in_later_watch_events() -> None:
    masker = normalize.Masker({})
    first = masker.value({"kind": "Table", "columnDefinitions": [{"name": "Name"}, {"name": "Age"}], "rows": [{"cells": ["a", "5s"]}]})
    later = masker.value({"kind": "Table", "columnDefinitions": None, "rows": [{"cells": ["a", "6s"]}]})
    assert first["rows"][0]["cells"] == ["a", "<age>"] and later["rows"][0]["cells"] == ["a", "<age>"]


def test_run_literals_are_put_back_as_templates() -> None:
    assert normalize.Masker({"k3x9q": "${tok}"}).text('namespaces "ns-k3x9q" not found') == 'namespaces "ns-${tok}" not found'


def test_every_scenario_file_loads() -> None:
    scenarios = load_all(HERE / "scenarios")
    assert len(scenarios) >= 30 and all(s.steps for s in scenarios)


def test_crud_expands_into_the_verbs(tmp_path: Path) -> None:
    path = tmp_path / "one.yaml"
    path.write_text("steps:\n  - crud: {path: \"/api/v1/namespaces/${ns}/configmaps\", object: {apiVersion: v1, kind: ConfigMap, metadata: {name: m}}}\n")
    steps = load(path).steps
    assert [s.name for s in steps] == ["create", "get", "list", "get table", "list table", "patch merge", "patch strategic",
                                       "patch json", "patch apply", "replace", "watch since create", "delete", "get after delete"]
    assert steps[8].headers["Content-Type"] == "application/apply-patch+yaml"


def test_invalid_cases_get_their_own_names(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("steps:\n  - invalid: {path: /x, object: {metadata: {name: bad}}, cases: [{$name: one}, {metadata: {name: Named}}]}\n")
    bodies = [s.body for s in load(path).steps]
    assert [b["metadata"]["name"] for b in bodies] == ["bad1", "Named"]


def test_a_scenario_with_an_unknown_key_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "typo.yaml"
    path.write_text("steps:\n  - GET: /api\n    captur: {a: b}\n")
    with pytest.raises(ValueError, match="captur"):
        load(path)


def test_templates_fill_values_objects_and_query_strings() -> None:
    variables = {"ns": "ns-abcde", "obj": {"metadata": {"name": "a"}}, "cont": "a+b/c="}
    assert substitute({"$from": "obj", "$merge": {"data": {"k": "${ns}"}}}, variables) == {"metadata": {"name": "a"}, "data": {"k": "ns-abcde"}}
    assert fill_path("/api/v1/namespaces/${ns}/configmaps?continue=${cont}", variables) == \
        "/api/v1/namespaces/ns-abcde/configmaps?continue=a%2Bb%2Fc%3D"


def test_cluster_scoped_objects_are_found_for_cleanup(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("steps:\n  - POST: /api/v1/nodes\n    body: {metadata: {name: n1}}\n"
                    "  - POST: /api/v1/namespaces/${ns}/configmaps\n    body: {metadata: {name: c}}\n"
                    "  - POST: /apis/authorization.k8s.io/v1/subjectaccessreviews\n    body: {metadata: {name: r}}\n")
    assert cluster_objects(load(path), {"ns": "ns-x"}) == ["/api/v1/nodes/n1"]


def test_comparison_ignores_key_order_but_not_list_order() -> None:
    assert list(golden.differences({"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1})) == []
    assert [d[0] for d in golden.differences({"b": [1, 2]}, {"b": [2, 1]})] == ["b[0]", "b[1]"]
    assert list(golden.differences({"x": None}, {})) == [("x", None, golden.ABSENT)]


def test_globs_treat_brackets_literally_except_any_index() -> None:
    assert golden.glob_match("*columnDefinitions[*].type", "body.columnDefinitions[3].type")
    assert golden.glob_match('*fieldsV1*["."]', 'body.metadata.managedFields[0].fieldsV1["f:spec"]["."]')
    assert not golden.glob_match("body.details", "body.details.causes")


def test_entries_match_by_step_path_and_values(tmp_path: Path) -> None:
    path = tmp_path / "known.yaml"
    path.write_text("- what: x\n  scenario: [s]\n  step: ['create*', 7]\n  path: 'body.*'\n  got: '^null$'\n  versions: ['1.33']\n")
    entry = golden.load_entries(path, "what")[0]
    assert entry.matches("s", "1.33", golden.Difference(7, "other", "body.a", 1, None))
    assert entry.matches("s", "1.33", golden.Difference(2, "create it", "body.a", 1, None))
    assert not entry.matches("s", "1.36", golden.Difference(7, "", "body.a", 1, None))
    assert not entry.matches("s", "1.33", golden.Difference(7, "", "status", 1, None))
    assert not entry.matches("s", "1.33", golden.Difference(7, "", "body.a", 1, 2))


def test_a_drop_entry_removes_the_reference_only_items_of_a_list(tmp_path: Path) -> None:
    """An item only the reference has (an OpenShift artifact) would shift every item after it."""
    path = tmp_path / "ignore.yaml"
    path.write_text("- why: x\n  scenario: s\n  step: 3\n  path: body.items\n  drop: 'openshift'\n")
    [entry] = golden.load_entries(path, "why")
    recorded = [{"index": 3, "request": {"name": "list"}, "response": {"body": {"items": ["a", "openshift-b", "c"]}}},
                {"index": 4, "request": {}, "response": {"body": {"items": ["openshift-b"]}}}]
    kept = golden.without_dropped(recorded, [entry], "s", "1.36")
    assert [e["response"]["body"]["items"] for e in kept] == [["a", "c"], ["openshift-b"]]
    assert recorded[0]["response"]["body"]["items"] == ["a", "openshift-b", "c"]  # the golden is not changed
    assert not golden.compare(kept[:1], [{**recorded[0], "response": {"body": {"items": ["a", "c"]}}}])
    assert not entry.matches("s", "1.36", golden.Difference(3, "list", "body.items[1]", "openshift-b", "c"))


def test_managed_fields_order_is_not_compared() -> None:
    """Upstream orders managedFields written in the same second as a Go map iterates."""
    a = {"manager": "m", "operation": "Update", "subresource": "status"}
    b = {"manager": "m", "operation": "Update", "subresource": "ephemeralcontainers"}
    left = normalize.Masker({}).value({"metadata": {"managedFields": [a, b]}})
    right = normalize.Masker({}).value({"metadata": {"managedFields": [b, a]}})
    assert left == right
