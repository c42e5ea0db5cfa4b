"""Typed walks: the field set of an object, comparison and merge by list and map type."""

from __future__ import annotations

from fakekube.api.wire import schema
from fakekube.api.wire.apply.typed import compare, field_set, merge, remove_items
from fakekube.api.wire.apply.types import DEDUCED_NODE, builtin_root, custom_root

SCHEMAS = schema.load()
DEPLOYMENT = builtin_root(SCHEMAS, "apps", "v1", "Deployment")
POD = builtin_root(SCHEMAS, "", "v1", "Pod")
SERVICE = builtin_root(SCHEMAS, "", "v1", "Service")


def deployment(**spec: object) -> dict:
    base = {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {**base, **spec}}


def test_field_set_of_an_applied_deployment() -> None:
    assert field_set(deployment(), DEPLOYMENT) == {
        "f:apiVersion": {}, "f:kind": {}, "f:metadata": {"f:name": {}},
        "f:spec": {"f:replicas": {}, "f:selector": {},  # LabelSelector is an atomic map
                   "f:template": {"f:metadata": {"f:labels": {"f:app": {}}},
                                  "f:spec": {"f:containers": {'k:{"name":"web"}': {".": {}, "f:image": {}, "f:name": {}}}}}},
    }


def test_list_map_keys_take_schema_defaults_and_patch_merge_keys_without_list_type() -> None:
    pod = {"spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80}], "args": ["a", "b"]}]}}
    containers = field_set(pod, POD)["f:spec"]["f:containers"]['k:{"name":"c"}']
    assert containers["f:ports"] == {'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:containerPort": {}}}
    assert containers["f:args"] == {}  # atomic: one field
    finalizers = field_set({"metadata": {"finalizers": ["a", "b"]}}, POD)["f:metadata"]["f:finalizers"]
    assert finalizers == {'v:"a"': {}, 'v:"b"': {}}  # a set


def test_compare_with_the_empty_object_marks_new_maps_but_not_go_zero_structs() -> None:
    result = compare({}, deployment(strategy={"rollingUpdate": {"maxSurge": 1}}), DEPLOYMENT)
    added = result.added["f:spec"]
    assert "." not in added["f:strategy"]  # a struct value: present in Go's zero Deployment
    assert "." in added["f:strategy"]["f:rollingUpdate"]  # a pointer: new
    assert "." in added["f:template"]["f:metadata"]["f:labels"]


def test_compare_reports_modified_and_removed() -> None:
    old, new = deployment(replicas=1, paused=True), deployment(replicas=3)
    result = compare(old, new, DEPLOYMENT)
    assert result.modified == {"f:spec": {"f:replicas": {}}}
    assert result.removed == {"f:spec": {"f:paused": {}}}
    assert not result.added


def test_merge_keyed_list_items_by_key_and_replace_atomic_lists() -> None:
    live = {"spec": {"containers": [{"name": "a", "image": "x", "args": ["1"]}, {"name": "b", "image": "y"}]}}
    config = {"spec": {"containers": [{"name": "b", "image": "z"}, {"name": "c", "image": "w"}]}}
    merged = merge(live, config, POD)
    assert merged["spec"]["containers"] == [{"name": "a", "image": "x", "args": ["1"]}, {"name": "b", "image": "z"},
                                            {"name": "c", "image": "w"}]
    replaced = merge(live, {"spec": {"containers": [{"name": "a", "args": ["2", "3"]}]}}, POD)
    assert replaced["spec"]["containers"][0]["args"] == ["2", "3"]


def test_merge_sets_by_value_and_atomic_maps_whole() -> None:
    merged = merge({"metadata": {"finalizers": ["a"]}}, {"metadata": {"finalizers": ["b", "a"]}}, POD)
    assert sorted(merged["metadata"]["finalizers"]) == ["a", "b"]
    svc = merge({"spec": {"selector": {"app": "a", "tier": "x"}}}, {"spec": {"selector": {"app": "b"}}}, SERVICE)
    assert svc["spec"]["selector"] == {"app": "b"}  # x-kubernetes-map-type: atomic


def test_remove_items_drops_members_and_emptied_maps() -> None:
    obj = {"metadata": {"labels": {"a": "1"}, "name": "x"}, "spec": {"replicas": 2}}
    gone = remove_items(obj, {"f:metadata": {"f:labels": {"f:a": {}}}, "f:spec": {"f:replicas": {}}}, DEPLOYMENT)
    assert gone == {"metadata": {"name": "x"}}


def test_custom_resources_are_typed_by_their_schema_and_deduced_without_one() -> None:
    schema_v3 = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["id"],
                  "items": {"type": "object", "properties": {"id": {"type": "string"}, "v": {"type": "integer"}}}},
        "tags": {"type": "array", "items": {"type": "string"}}}}}}
    node = custom_root(schema_v3, SCHEMAS)
    fields = field_set({"spec": {"items": [{"id": "a", "v": 1}], "tags": ["x"]}}, node)
    assert fields == {"f:spec": {"f:items": {'k:{"id":"a"}': {".": {}, "f:id": {}, "f:v": {}}}, "f:tags": {}}}
    deduced = field_set({"spec": {"list": [1, 2], "map": {"k": "v"}}}, DEDUCED_NODE)
    assert deduced == {"f:spec": {".": {}, "f:list": {}, "f:map": {".": {}, "f:k": {}}}}
