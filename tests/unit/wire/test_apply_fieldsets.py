"""Field sets in FieldsV1 form: element encoding, path text and the set algebra."""

from __future__ import annotations

from fakekube.api.wire.apply import fieldsets as fs


def test_elements_are_encoded_as_fieldsv1_keys() -> None:
    assert fs.field_key("replicas") == "f:replicas"
    assert fs.keys_key([("protocol", "TCP"), ("containerPort", 80)]) == 'k:{"containerPort":80,"protocol":"TCP"}'
    assert fs.value_key("example.com/finalizer") == 'v:"example.com/finalizer"'
    assert fs.index_key(3) == "i:3"


def test_paths_print_as_upstream_fieldpath() -> None:
    path = ("f:spec", "f:template", "f:spec", "f:containers", 'k:{"name":"web"}', "f:image")
    assert fs.path_string(path) == '.spec.template.spec.containers[name="web"].image'
    assert fs.path_string(("f:spec", "f:ports", 'k:{"port":80,"protocol":"TCP"}')) == '.spec.ports[port=80,protocol="TCP"]'
    assert fs.path_string(("f:metadata", "f:finalizers", 'v:"a"')) == '.metadata.finalizers[="a"]'


def test_a_node_with_children_is_a_member_only_with_a_dot() -> None:
    built: fs.FieldSet = {}
    fs.insert(built, ("f:metadata", "f:labels", "f:app"))
    assert built == {"f:metadata": {"f:labels": {"f:app": {}}}}
    fs.insert(built, ("f:metadata", "f:labels"))
    assert built == {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}
    assert fs.has(built, ("f:metadata", "f:labels")) and not fs.has(built, ("f:metadata",))


def test_union_difference_intersection() -> None:
    a = {"f:spec": {"f:replicas": {}, "f:paused": {}}}
    b = {"f:spec": {"f:replicas": {}, "f:selector": {}}}
    assert fs.union(a, b) == {"f:spec": {"f:replicas": {}, "f:paused": {}, "f:selector": {}}}
    assert fs.difference(a, b) == {"f:spec": {"f:paused": {}}}
    assert fs.intersection(a, b) == {"f:spec": {"f:replicas": {}}}
    assert fs.difference(a, a) == {}


def test_difference_is_not_recursive_but_recursive_difference_is() -> None:
    owned = {"f:status": {"f:replicas": {}}, "f:spec": {"f:replicas": {}}}
    assert fs.difference(owned, {"f:status": {}}) == owned  # a member removes only itself
    assert fs.recursive_difference(owned, {"f:status": {}}) == {"f:spec": {"f:replicas": {}}}


def test_a_leaf_gaining_children_keeps_its_membership_in_a_union() -> None:
    assert fs.union({"f:data": {}}, {"f:data": {"f:k": {}}}) == {"f:data": {".": {}, "f:k": {}}}


def test_canonical_order_puts_dot_first_then_fields_keys_values() -> None:
    messy = {'k:{"name":"b"}': {}, "f:z": {}, ".": {}, "f:a": {}, 'v:"x"': {}}
    assert list(fs.canonical(messy)) == [".", "f:a", "f:z", 'k:{"name":"b"}', 'v:"x"']


def test_validate_rejects_malformed_fieldsv1() -> None:
    assert fs.validate({"f:a": {".": {}, "k:{\"n\":1}": {}}})
    assert not fs.validate({"x:a": {}})
    assert not fs.validate({"k:{broken": {}})
    assert not fs.validate({"f:a": []})
