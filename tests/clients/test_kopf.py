"""A kopf operator against a served fakekube: handlers, status patches, finalizers.

The operator runs in-process (``tests/clients/operators/kopf_runner.py``), standalone,
watching the ``default`` namespace. Tests observe what a user observes: handlers fire
(create/update/delete, in order), kopf's writes land (annotations, status through the
status subresource or the main resource), and deletion waits for the delete handler
because kopf's finalizer holds the object.
"""

from __future__ import annotations

import copy
import threading
from typing import Any

import kopf
import pytest
from kubernetes import client

from fakekube import Cluster
from tests.clients.conftest import crd_established, eventually, widget, widget_crd
from tests.clients.operators.kopf_runner import KopfThread

FINALIZER = "kopf.zalando.org/KopfFinalizerMarker"
#: Wall-clock limit of a blocked delete handler (the test releases it long before).
RELEASE_TIMEOUT_S = 20.0


class Recorder:
    """What the handlers saw, and a gate that holds the delete handler until released."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.release_delete = threading.Event()
        self.deleting = threading.Event()


def operator_for(recorder: Recorder, *resource: str, **filters: Any) -> kopf.OperatorRegistry:
    """A registry with create/update/delete handlers on ``resource`` that record calls."""
    registry = kopf.OperatorRegistry()

    @kopf.on.create(*resource, id="created", registry=registry, **filters)
    def created(name: str, patch: kopf.Patch, **_: Any) -> dict[str, str]:
        recorder.calls.append(("create", name))
        patch.metadata.annotations["shop.example.com/seen"] = "yes"
        patch.status["phase"] = "Ready"
        return {"message": f"hello {name}"}

    @kopf.on.update(*resource, id="updated", registry=registry, field="spec", **filters)
    def updated(name: str, old: Any, new: Any, **_: Any) -> None:
        recorder.calls.append(("update", name))

    @kopf.on.delete(*resource, id="deleted", registry=registry, **filters)
    def deleted(name: str, **_: Any) -> None:
        recorder.deleting.set()
        recorder.release_delete.wait(RELEASE_TIMEOUT_S)
        recorder.calls.append(("delete", name))

    return registry


@pytest.mark.parametrize("initial_streaming", [False, True], ids=["list-then-watch", "watch-list"])
def test_configmap_operator(fakekube: Cluster, initial_streaming: bool) -> None:
    """On a built-in (no status subresource, no schema): handlers, annotations, finalizer."""
    recorder = Recorder()
    core = client.CoreV1Api(fakekube.client())
    core.create_namespaced_config_map("default", {"metadata": {"name": "before", "labels": {"shop": "yes"}}})
    with KopfThread(operator_for(recorder, "configmaps", labels={"shop": "yes"}), initial_streaming=initial_streaming):
        eventually(lambda: ("create", "before") in recorder.calls)
        core.create_namespaced_config_map("default", {"metadata": {"name": "cm", "labels": {"shop": "yes"}},
                                                      "data": {"k": "v"}})
        core.create_namespaced_config_map("default", {"metadata": {"name": "ignored"}, "data": {"k": "v"}})
        stored = eventually(lambda: _annotated(fakekube.get("v1", "ConfigMap", "cm")))
        assert stored["metadata"]["finalizers"] == [FINALIZER]
        assert recorder.calls == [("create", "before"), ("create", "cm")]

        core.delete_namespaced_config_map("cm", "default")
        assert recorder.deleting.wait(RELEASE_TIMEOUT_S)
        held = fakekube.get("v1", "ConfigMap", "cm")
        assert held["metadata"]["deletionTimestamp"] and held["metadata"]["finalizers"] == [FINALIZER]
        recorder.release_delete.set()
        eventually(lambda: not fakekube.list("v1", "ConfigMap", "default", field_selector="metadata.name=cm"))
    assert recorder.calls == [("create", "before"), ("create", "cm"), ("delete", "cm")]
    assert "finalizers" not in fakekube.get("v1", "ConfigMap", "ignored")["metadata"]


def _annotated(obj: dict[str, Any]) -> dict[str, Any] | None:
    annotations = obj["metadata"].get("annotations", {})
    return obj if annotations.get("shop.example.com/seen") == "yes" and obj["metadata"].get("finalizers") else None


def gizmo_crd() -> dict[str, Any]:
    """Like the Widget CRD but without a status subresource: kopf patches status on the object."""
    crd = copy.deepcopy(widget_crd())
    crd["metadata"]["name"] = "gizmos.shop.example.com"
    crd["spec"]["names"] = {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"}
    del crd["spec"]["versions"][0]["subresources"]
    return crd


@pytest.mark.parametrize("crd", [widget_crd(), gizmo_crd()], ids=["status-subresource", "status-on-object"])
def test_custom_resource_operator(fakekube: Cluster, crd: dict[str, Any]) -> None:
    plural, kind = crd["spec"]["names"]["plural"], crd["spec"]["names"]["kind"]
    fakekube.create(crd)
    eventually(lambda: crd_established(fakekube, crd["metadata"]["name"]))
    custom = client.CustomObjectsApi(fakekube.client())
    where = ("shop.example.com", "v1", "default", plural)
    recorder = Recorder()
    with KopfThread(operator_for(recorder, "shop.example.com", "v1", plural)):
        custom.create_namespaced_custom_object(*where, {**widget("one", size=2), "kind": kind})

        def handled() -> dict[str, Any] | None:
            obj = fakekube.get("shop.example.com/v1", kind, "one")
            return obj if obj.get("status", {}).get("created") else None
        stored = eventually(handled)
        assert stored["status"]["phase"] == "Ready"
        assert stored["status"]["created"] == {"message": "hello one"}
        assert stored["metadata"]["finalizers"] == [FINALIZER]
        assert stored["metadata"]["annotations"]["shop.example.com/seen"] == "yes"

        custom.patch_namespaced_custom_object(*where, "one", {"spec": {"size": 3}})
        eventually(lambda: ("update", "one") in recorder.calls)

        custom.delete_namespaced_custom_object(*where, "one")
        assert recorder.deleting.wait(RELEASE_TIMEOUT_S)
        assert fakekube.get("shop.example.com/v1", kind, "one")["metadata"]["deletionTimestamp"]
        recorder.release_delete.set()
        eventually(lambda: not fakekube.list("shop.example.com/v1", kind, "default"))
    assert recorder.calls == [("create", "one"), ("update", "one"), ("delete", "one")]
