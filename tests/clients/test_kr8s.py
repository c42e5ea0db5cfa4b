"""kr8s (sync and asyncio) against a served fakekube: CRUD, selectors, watch, patch, wait.

kr8s 0.20 has no server-side apply (its objects patch with merge or JSON patches only),
so apply is not tested here; lightkube and kubernetes_asyncio test it.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import kr8s
import kr8s.asyncio
import pytest
from kr8s.objects import ConfigMap, CustomResourceDefinition, Deployment, new_class

from fakekube import Cluster
from tests.clients.conftest import widget, widget_crd

#: Wall-clock limit of a kr8s ``wait`` (virtual time moves by auto-advance meanwhile).
WAIT_TIMEOUT_S = 30

Widget = new_class("Widget", version="shop.example.com/v1", namespaced=True)


@pytest.fixture
def api(fakekube: Cluster) -> Any:
    return kr8s.api(kubeconfig=fakekube.kubeconfig)


def configmap(api: Any, name: str, labels: dict[str, str] | None = None) -> ConfigMap:
    metadata: dict[str, Any] = {"name": name, "namespace": "default"}
    if labels:
        metadata["labels"] = labels
    return ConfigMap({"metadata": metadata, "data": {"k": "v"}}, api=api)


def deployment(api: Any, name: str, replicas: int = 1) -> Deployment:
    labels = {"app": name}
    return Deployment({
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels}, "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}},
    }, api=api)


def test_crud_and_errors(api: Any) -> None:
    created = configmap(api, "one")
    created.create()
    assert created.metadata.uid and created.metadata.resourceVersion
    assert created.exists()
    read = ConfigMap.get("one", namespace="default", api=api)
    assert read.raw["data"] == {"k": "v"}
    read.label(team="a")
    read.annotate({"note": "x"})
    created.refresh()
    assert (created.labels, created.annotations) == ({"team": "a"}, {"note": "x"})

    with pytest.raises(kr8s.ServerError) as duplicate:
        configmap(api, "one").create()
    assert duplicate.value.status["reason"] == "AlreadyExists"
    assert str(duplicate.value) == 'configmaps "one" already exists'

    created.delete()
    assert not created.exists()
    with pytest.raises(kr8s.NotFoundError):  # timeout: kr8s retries a missing object for 2 s by default
        ConfigMap.get("one", namespace="default", api=api, timeout=0)


def test_list_with_label_and_field_selectors(api: Any) -> None:
    for name, tier in [("a", "web"), ("b", "db"), ("c", "web")]:
        configmap(api, name, {"tier": tier}).create()

    def names(**selectors: Any) -> list[str]:
        return [cm.name for cm in api.get("configmaps", namespace="default", **selectors)]

    assert names(label_selector={"tier": "web"}) == ["a", "c"]
    assert names(label_selector="tier in (db, cache)") == ["b"]
    assert names(label_selector="tier!=web,tier") == ["b"]
    assert names(field_selector={"metadata.name": "c"}) == ["c"]
    # the short name goes through discovery
    assert [cm.name for cm in api.get("cm", namespace="default", label_selector={"tier": "db"})] == ["b"]


def test_watch_in_order_and_resume(api: Any) -> None:
    cm = configmap(api, "w")
    cm.create()
    start = cm.metadata.resourceVersion
    for value in ("1", "2", "3"):
        cm.patch({"data": {"k": value}})
    cm.delete()

    seen = []
    for kind, obj in api.watch("configmaps", namespace="default", since=start):
        seen.append((kind, obj.raw["data"]["k"], obj.metadata.resourceVersion))
        if len(seen) == 2:
            break
    assert [(kind, value) for kind, value, _ in seen] == [("MODIFIED", "1"), ("MODIFIED", "2")]
    resumed = []
    for kind, obj in api.watch("configmaps", namespace="default", since=seen[-1][2]):
        resumed.append((kind, obj.raw["data"]["k"]))
        if kind == "DELETED":
            break
    assert resumed == [("MODIFIED", "3"), ("DELETED", "3")]


def test_patch_merge_and_json(api: Any) -> None:
    web = deployment(api, "web")
    web.create()
    web.patch({"metadata": {"labels": {"team": "a"}}})
    assert web.labels == {"team": "a"}
    web.patch([{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "nginx:1.28"}],
              type="json")
    assert web.raw["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.28"
    with pytest.raises(kr8s.ServerError) as bad:
        web.patch([{"op": "test", "path": "/spec/replicas", "value": 9}], type="json")
    assert bad.value.response is not None and bad.value.response.status_code == 422


@pytest.mark.fakekube(nodes=2, auto_advance=True)
def test_wait_for_a_deployment_to_become_available(api: Any, fakekube: Cluster) -> None:
    """kr8s waits on a watch; the controllers and kubelets move on auto-advanced time."""
    web = deployment(api, "web", replicas=3)
    web.create()
    web.wait("condition=Available=True", timeout=WAIT_TIMEOUT_S)
    web.refresh()
    assert web.raw["status"]["availableReplicas"] == 3
    pods = list(api.get("pods", namespace="default", label_selector={"app": "web"}))
    assert len(pods) == 3 and all(pod.status.phase == "Running" for pod in pods)
    pods[0].wait("condition=Ready", timeout=WAIT_TIMEOUT_S)


def test_asyncio_api(fakekube: Cluster) -> None:
    async def scenario() -> list[tuple[str, str]]:
        api = await kr8s.asyncio.api(kubeconfig=fakekube.kubeconfig)
        cm = await kr8s.asyncio.objects.ConfigMap({"metadata": {"name": "async", "namespace": "default"},
                                                   "data": {"k": "1"}}, api=api)
        await cm.create()
        start = cm.metadata.resourceVersion
        await cm.patch({"data": {"k": "2"}})
        assert [c.name async for c in api.async_get("configmaps", "async", namespace="default")] == ["async"]
        await cm.delete()
        events = []
        # closed here, in this event loop, not by the garbage collector after it ended
        async with contextlib.aclosing(api.async_watch("configmaps", namespace="default", since=start)) as stream:
            async for kind, obj in stream:
                events.append((kind, obj.raw["data"]["k"]))
                if kind == "DELETED":
                    break
        return events

    assert asyncio.run(scenario()) == [("MODIFIED", "2"), ("DELETED", "2")]


def test_custom_resources(api: Any) -> None:
    crd = CustomResourceDefinition(widget_crd(), api=api)
    crd.create()
    crd.wait("condition=Established", timeout=WAIT_TIMEOUT_S)

    first = Widget(widget("w1", size=2, labels={"tier": "web"}), api=api)
    first.create()
    start = first.metadata.resourceVersion
    Widget(widget("w2", size=3), api=api).create()
    assert [w.name for w in api.get(Widget, namespace="default", label_selector={"tier": "web"})] == ["w1"]
    first.patch({"spec": {"size": 5}})
    first.patch({"status": {"ready": True}}, subresource="status")
    first.refresh()
    assert (first.raw["spec"], first.raw["status"]) == ({"size": 5}, {"ready": True})

    events = []
    for kind, obj in api.watch(Widget, namespace="default", since=start):
        events.append((kind, obj.name))
        if len(events) == 3:
            break
    assert events == [("ADDED", "w2"), ("MODIFIED", "w1"), ("MODIFIED", "w1")]
    first.delete()
    assert not first.exists()
    crd.delete()
