"""The immutability guard: stored objects refuse in-place edits; copies are plain."""

import copy
import json
import pickle
from typing import Any, Callable

import pytest
import yaml

from fakekube.api.machinery.jsonutil import deep_copy
from fakekube.store import FrozenDict, FrozenList, Store, StoredObjectMutated

PODS = ("", "pods")
DEPLOYMENTS = ("apps", "deployments")


def pod(name: str = "web-1") -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "default", "name": name, "labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}]}],
                     "tolerations": [{"key": "k"}, {"key": "j"}]}}


@pytest.fixture
def stored() -> dict:
    store = Store(guard=True)
    store.create(PODS, pod())
    return store.replace(PODS, pod())  # resourceVersion 2


DICT_EDITS: dict[str, Callable[[dict], Any]] = {
    "__setitem__": lambda d: d.__setitem__("x", 1),
    "__delitem__": lambda d: d.__delitem__("a"),
    "setdefault": lambda d: d.setdefault("x", 1),
    "pop": lambda d: d.pop("a"),
    "popitem": lambda d: d.popitem(),
    "clear": lambda d: d.clear(),
    "update": lambda d: d.update(x=1),
    "|=": lambda d: d.__ior__({"x": 1}),
}

LIST_EDITS: dict[str, Callable[[list], Any]] = {
    "append": lambda lst: lst.append({}),
    "extend": lambda lst: lst.extend([{}]),
    "insert": lambda lst: lst.insert(0, {}),
    "remove": lambda lst: lst.remove(lst[0]),
    "pop": lambda lst: lst.pop(),
    "clear": lambda lst: lst.clear(),
    "sort": lambda lst: lst.sort(key=str),
    "reverse": lambda lst: lst.reverse(),
    "__setitem__": lambda lst: lst.__setitem__(0, {}),
    "__delitem__": lambda lst: lst.__delitem__(0),
    "+=": lambda lst: lst.__iadd__([{}]),
    "*=": lambda lst: lst.__imul__(2),
}


@pytest.mark.parametrize("operation", DICT_EDITS)
def test_every_dict_edit_raises_naming_the_object_and_operation(stored: dict, operation: str) -> None:
    labels = stored["metadata"]["labels"]
    with pytest.raises(StoredObjectMutated) as error:
        DICT_EDITS[operation](labels)
    assert "pods default/web-1 at resourceVersion 2" in str(error.value)
    assert operation in str(error.value)
    assert labels == {"a": "b"}


@pytest.mark.parametrize("operation", LIST_EDITS)
def test_every_list_edit_raises_naming_the_object_and_operation(stored: dict, operation: str) -> None:
    tolerations = stored["spec"]["tolerations"]
    with pytest.raises(StoredObjectMutated) as error:
        LIST_EDITS[operation](tolerations)
    assert "pods default/web-1 at resourceVersion 2" in str(error.value)
    assert operation in str(error.value)
    assert tolerations == [{"key": "k"}, {"key": "j"}]


def test_the_statement_forms_raise_too(stored: dict) -> None:
    with pytest.raises(StoredObjectMutated):
        stored["spec"]["nodeName"] = "node-1"
    with pytest.raises(StoredObjectMutated):
        del stored["spec"]
    containers = stored["spec"]["containers"]
    with pytest.raises(StoredObjectMutated):
        containers += [{}]
    with pytest.raises(StoredObjectMutated):
        containers[0]["ports"][0]["containerPort"] = 81
    assert isinstance(StoredObjectMutated("x"), TypeError)


def test_a_grouped_resource_is_named_with_its_group() -> None:
    store = Store(guard=True)
    obj = store.create(DEPLOYMENTS, {"metadata": {"namespace": "ns", "name": "d"}, "spec": {}})
    with pytest.raises(StoredObjectMutated, match="deployments.apps ns/d at resourceVersion 1"):
        obj["spec"]["replicas"] = 3


def test_copies_are_plain_and_mutable(stored: dict) -> None:
    copies = [deep_copy(stored), copy.deepcopy(stored), pickle.loads(pickle.dumps(stored)),
              json.loads(json.dumps(stored)), yaml.safe_load(yaml.safe_dump(stored)), yaml.safe_load(yaml.dump(stored))]
    for result in copies:
        assert result == stored
        assert type(result) is dict and type(result["spec"]["containers"]) is list
        assert type(result["spec"]["containers"][0]) is dict
        result["spec"]["containers"][0]["ports"].append({"containerPort": 443})
        result["metadata"]["labels"]["new"] = "yes"
    assert stored["metadata"]["labels"] == {"a": "b"}
    assert len(stored["spec"]["containers"][0]["ports"]) == 1


def test_shallow_copies_are_plain_at_the_top_only(stored: dict) -> None:
    for shallow in (dict(stored), stored.copy(), copy.copy(stored), {**stored}):
        assert type(shallow) is dict
        shallow["spec"] = {}  # a new top level is the caller's own
        with pytest.raises(StoredObjectMutated):
            shallow["metadata"]["labels"]["x"] = "y"  # but what it shares is still stored
    tolerations = stored["spec"]["tolerations"]
    for shallow_list in (list(tolerations), tolerations.copy(), tolerations[:], tolerations + []):
        assert type(shallow_list) is list
        shallow_list.append({"key": "new"})
    assert len(tolerations) == 2


def test_yaml_dumps_frozen_objects_as_plain_yaml(stored: dict) -> None:
    assert yaml.safe_dump(stored) == yaml.safe_dump(deep_copy(stored))
    assert "!!python" not in yaml.dump(stored)


def test_guard_off_hands_out_plain_dicts() -> None:
    store = Store()
    created = store.create(PODS, pod())
    got = store.get(PODS, ("default", "web-1"))
    assert got is created
    assert type(got) is dict and type(got["metadata"]) is dict and type(got["spec"]["containers"]) is list
    assert not store.guard


def test_a_write_then_a_read_returns_equal_content() -> None:
    store = Store(guard=True)
    original = pod()
    created = store.create(PODS, original)
    assert isinstance(created, FrozenDict) and isinstance(created["spec"]["containers"], FrozenList)
    expected = deep_copy(original)
    expected["metadata"]["resourceVersion"] = "1"
    assert store.get(PODS, ("default", "web-1")) == expected
    assert store.list(PODS)[0] == [expected]
    assert json.loads(json.dumps(created)) == expected
    assert "resourceVersion" not in original["metadata"]  # the caller's dict is untouched


def test_everything_the_store_hands_out_is_frozen() -> None:
    store = Store(guard=True)
    store.add_index(PODS, "image", lambda obj: [c["image"] for c in obj["spec"]["containers"]])
    created = store.create(PODS, pod())
    store.replace(PODS, dict(created, spec=dict(created["spec"], nodeName="node-1")))
    store.remove(PODS, ("default", "web-1"))
    changes = store.changes_since(0)
    handed_out = [c.obj for c in changes] + [c.prev for c in changes if c.prev is not None]
    handed_out += store.list_at(PODS, "", 2)
    store.create(PODS, pod("web-2"))
    handed_out += store.list(PODS)[0] + store.by_index(PODS, "image", "nginx")
    handed_out += [store.get(PODS, ("default", "web-2"))]
    assert len(handed_out) == 9
    for obj in handed_out:
        assert isinstance(obj, FrozenDict) and isinstance(obj["metadata"], FrozenDict)
        assert isinstance(obj["spec"]["tolerations"], FrozenList)
    with pytest.raises(StoredObjectMutated, match="resourceVersion 3"):
        changes[2].obj["metadata"]["labels"]["x"] = "y"  # the tombstone names the delete's rv


def test_replacing_with_a_modified_shallow_copy_keeps_history_intact() -> None:
    store = Store(guard=True)
    first = store.create(PODS, pod())
    second = store.replace(PODS, dict(first, metadata=dict(first["metadata"], labels={"a": "c"})))
    assert second["metadata"]["labels"] == {"a": "c"}
    assert store.changes_since(0)[0].obj["metadata"]["labels"] == {"a": "b"}
    assert store.changes_since(1)[0].prev is first


# -- regressions: in-place edits of stored objects the guard found ---------------------
def make_api(guard: bool):  # type: ignore[no-untyped-def]
    from fakekube.api.verbs.apiserver import APIServer, WriteOptions
    from fakekube.api.types import builtin_registry
    from fakekube.clock import VirtualClock
    from fakekube.random import SeededRandom

    api = APIServer(builtin_registry(), Store(guard=guard), VirtualClock(), SeededRandom(0))
    internal = WriteOptions(internal=True)
    namespaces = api.registry.lookup("", "v1", "namespaces")
    api.create(namespaces, "", {"metadata": {"name": "default"}}, internal)
    accounts = api.registry.lookup("", "v1", "serviceaccounts")  # no controller makes it here
    api.create(accounts, "default", {"metadata": {"name": "default", "namespace": "default"}}, internal)
    return api, internal


def deployment() -> dict:
    labels = {"app": "web"}
    return {"metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "x"}]}}}}


@pytest.mark.parametrize("guard", [False, True])
def test_an_update_from_a_shallow_copy_leaves_the_stored_object_alone(guard: bool) -> None:
    # objectmeta.carry_over, bump_generation and check_namespace wrote into the body's
    # metadata, which an internal caller's dict(stored, spec=...) shares with the stored
    # object: the stored object's (and the watch history's) generation went up in place.
    api, internal = make_api(guard)
    deployments = api.registry.lookup("apps", "v1", "deployments")
    created = api.create(deployments, "default", deployment(), internal).obj
    stored = api.store.get(deployments.key, ("default", "web"))
    before = deep_copy(stored)
    updated = api.update(deployments, "default", "web", dict(stored, spec=dict(stored["spec"], replicas=3)),
                         internal).obj
    assert updated["metadata"]["generation"] == created["metadata"]["generation"] + 1
    assert stored == before
    assert api.store.changes_since(0)[-1].prev == before


@pytest.mark.parametrize("guard", [False, True])
def test_a_status_update_from_a_shallow_copy_leaves_the_stored_object_alone(guard: bool) -> None:
    api, internal = make_api(guard)
    pods = api.registry.lookup("", "v1", "pods")
    api.create(pods, "default", pod(), internal)
    stored = api.store.get(pods.key, ("default", "web-1"))
    before = deep_copy(stored)
    api.update(pods, "default", "web-1", dict(stored, status={"phase": "Running"}), internal, "status")
    assert stored == before
    assert api.store.get(pods.key, ("default", "web-1"))["status"]["phase"] == "Running"


def test_a_create_leaves_the_callers_body_alone() -> None:
    api, internal = make_api(guard=False)
    configmaps = api.registry.lookup("", "v1", "configmaps")
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "b"}}
    api.create(configmaps, "default", body, internal)
    assert body == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "b"}}


@pytest.mark.parametrize("guard", [False, True])
def test_a_create_embedding_a_stored_template_leaves_the_template_alone(guard: bool) -> None:
    # Pod defaulting (enableServiceLinks, priority, serviceAccountName, ...) ran on the
    # spec an internal caller took from a stored workload's template, adding those fields
    # to the stored Deployment in place.
    api, internal = make_api(guard)
    deployments, pods = api.registry.lookup("apps", "v1", "deployments"), api.registry.lookup("", "v1", "pods")
    api.create(deployments, "default", deployment(), internal)
    stored = api.store.get(deployments.key, ("default", "web"))
    before = deep_copy(stored)
    template = stored["spec"]["template"]
    created = api.create(pods, "default", {"metadata": {"name": "web-1", "labels": template["metadata"]["labels"]},
                                           "spec": template["spec"]}, internal).obj
    assert created["spec"]["enableServiceLinks"] is True
    assert stored == before
    assert "enableServiceLinks" not in api.store.get(deployments.key, ("default", "web"))["spec"]["template"]["spec"]
