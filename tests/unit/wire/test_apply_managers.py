"""Field managers: updates, applies, removal of unapplied fields, conflicts, the cap."""

from __future__ import annotations

import pytest

from fakekube.api.wire import schema
from fakekube.api.wire.apply import managers as mf
from fakekube.api.wire.apply.types import builtin_root

CONFIGMAP = builtin_root(schema.load(), "", "v1", "ConfigMap")
T0, T1 = "2025-01-01T00:00:00Z", "2025-01-01T00:01:00Z"


def cm(data: dict, labels: dict | None = None) -> dict:
    meta: dict = {"name": "c", "namespace": "default"}
    if labels:
        meta["labels"] = labels
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}
    if data:
        obj["data"] = data
    return obj


def apply(live: dict, config: dict, managers: mf.Managers, who: str, force: bool = False, now: str = T0):
    return mf.apply(live, config, CONFIGMAP, managers, who, "v1", "", force, now, None)


def fields_of(managers: mf.Managers, who: str, operation: str = mf.APPLY) -> dict:
    return managers[mf.identifier(who, operation, "v1", "")].fields


def test_create_owns_what_the_client_set_without_server_metadata() -> None:
    assert mf.create_fields(cm({"a": "1"}, {"app": "x"}), CONFIGMAP, None) == {
        "f:data": {".": {}, "f:a": {}}, "f:metadata": {"f:labels": {".": {}, "f:app": {}}}}


def test_consecutive_updates_of_one_manager_merge_and_time_moves_only_on_change() -> None:
    first = mf.update(cm({}), cm({"a": "1"}), CONFIGMAP, {}, "editor", "v1", "", T0, None)
    second = mf.update(cm({"a": "1"}), cm({"a": "1", "b": "2"}), CONFIGMAP, first, "editor", "v1", "", T1, None)
    entry = second[mf.identifier("editor", mf.UPDATE, "v1", "")]
    assert entry.fields == {"f:data": {".": {}, "f:a": {}, "f:b": {}}} and entry.time == T1
    same = mf.update(cm({"a": "1", "b": "2"}), cm({"a": "1", "b": "2"}), CONFIGMAP, second, "editor", "v1", "", "later",
                     None)
    assert same == second


def test_an_update_takes_changed_fields_from_other_managers() -> None:
    _, owners, _ = apply(cm({}), cm({"a": "1", "b": "1"}), {}, "alice")
    after = mf.update(cm({"a": "1", "b": "1"}), cm({"a": "2", "b": "1"}), CONFIGMAP, owners, "bob", "v1", "", T1, None)
    assert fields_of(after, "alice") == {"f:data": {"f:b": {}}}
    assert fields_of(after, "bob", mf.UPDATE) == {"f:data": {"f:a": {}}}


def test_apply_conflicts_with_another_owner_unless_forced() -> None:
    live, owners, _ = apply(cm({}), cm({"a": "1"}), {}, "alice")
    with pytest.raises(mf.Conflicts) as caught:
        apply(live, cm({"a": "2"}), owners, "bob")
    assert caught.value.conflicts == [(mf.identifier("alice", mf.APPLY, "v1", ""), ("f:data", "f:a"))]
    merged, forced, _ = apply(live, cm({"a": "2"}), owners, "bob", force=True)
    assert merged["data"] == {"a": "2"}
    assert mf.identifier("alice", mf.APPLY, "v1", "") not in forced  # alice owned nothing else


def test_two_appliers_of_the_same_value_share_the_field() -> None:
    live, owners, _ = apply(cm({}), cm({"a": "1"}), {}, "alice")
    live, owners, changed = apply(live, cm({"a": "1"}), owners, "bob")
    assert not changed
    assert fields_of(owners, "alice") == fields_of(owners, "bob") == {"f:data": {"f:a": {}}}


def test_a_field_no_longer_applied_is_removed_only_when_nobody_else_owns_it() -> None:
    live, owners, _ = apply(cm({}), cm({"a": "1", "b": "1"}), {}, "alice")
    live, owners, _ = apply(live, cm({"b": "1"}), owners, "bob")
    live, owners, _ = apply(live, cm({}), owners, "alice")
    assert live["data"] == {"b": "1"}  # a went; b stays, bob owns it
    assert mf.identifier("alice", mf.APPLY, "v1", "") not in owners


def test_fields_an_updater_owns_survive_an_apply_that_drops_its_neighbours() -> None:
    owners = mf.update(cm({}), cm({"server": "x"}), CONFIGMAP, {}, "controller", "v1", "", T0, None)
    live, owners, _ = apply(cm({"server": "x"}), cm({"a": "1"}), owners, "alice")
    live, owners, _ = apply(live, cm({}), owners, "alice")
    assert live["data"] == {"server": "x"}
    _, owners, _ = apply(live, {**cm({}), "data": {}}, owners, "carol")
    assert fields_of(owners, "carol") == {"f:data": {}}  # an empty map applied is owned whole


def test_update_managers_are_capped_at_ten_with_the_oldest_merged() -> None:
    owners: mf.Managers = {}
    obj = cm({})
    for i in range(12):
        new = cm({**obj.get("data", {}), f"k{i}": "v"})
        owners = mf.update(obj, new, CONFIGMAP, owners, f"m{i:02d}", "v1", "", f"2025-01-01T00:00:{i:02d}Z", None)
        obj = new
    names = sorted(ident[0] for ident in owners)
    assert len(owners) == 10 and "ancient-changes" in names and "m00" not in names and "m02" not in names
    bucket = owners[mf.identifier("ancient-changes", mf.UPDATE, "v1", "")]
    assert bucket.fields == {"f:data": {".": {}, "f:k0": {}, "f:k1": {}, "f:k2": {}}}
    assert bucket.time == "2025-01-01T00:00:02Z"  # the newest merged update's


def test_decode_refuses_malformed_entries_and_encode_sorts_them() -> None:
    assert mf.decode([{"manager": "x", "operation": "Patch", "apiVersion": "v1", "fieldsType": "FieldsV1"}]) is None
    assert mf.decode([{"manager": "x", "operation": "Update", "apiVersion": "v1"}]) is None
    assert mf.is_reset([{}]) and mf.is_reset([]) and not mf.is_reset(None)
    entries = [
        {"manager": "b", "operation": "Update", "apiVersion": "v1", "time": T1, "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {}}},
        {"manager": "a", "operation": "Update", "apiVersion": "v1", "time": T1, "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {}}},
        {"manager": "z", "operation": "Apply", "apiVersion": "v1", "time": T1, "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {}}},
    ]
    decoded = mf.decode(entries)
    assert decoded is not None
    assert [e["manager"] for e in mf.encode(decoded)] == ["z", "a", "b"]


def test_kubectl_takes_over_what_its_last_applied_annotation_set() -> None:
    annotation = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"default"},"data":{"a":"1"}}'
    live = cm({"a": "1"})
    live["metadata"]["annotations"] = {mf.LAST_APPLIED: annotation}
    owners = mf.update(cm({}), live, CONFIGMAP, {}, "kubectl-client-side-apply", "v1", "", T0, None)
    merged, after, _ = apply(live, cm({"a": "2"}), owners, "kubectl")
    assert merged["data"] == {"a": "2"}
    assert '"a":"2"' in merged["metadata"]["annotations"][mf.LAST_APPLIED]
    with pytest.raises(mf.Conflicts):
        apply(live, cm({"a": "2"}), owners, "someone-else")
