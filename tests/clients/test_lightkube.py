"""lightkube (sync and asyncio) against a served fakekube: CRUD, selectors, watch, patch, apply.

lightkube sends what its users write: typed models from lightkube-models 1.33, label
selectors built from its operators, and ``application/apply-patch+yaml`` for ``apply``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lightkube import ApiError, AsyncClient, Client, KubeConfig
from lightkube.generic_resource import create_namespaced_resource
from lightkube.models.apps_v1 import DeploymentSpec
from lightkube.models.core_v1 import Container, PodSpec, PodTemplateSpec
from lightkube.models.meta_v1 import LabelSelector, ObjectMeta
from lightkube.operators import exists, in_, not_in
from lightkube.resources.apiextensions_v1 import CustomResourceDefinition
from lightkube.resources.apps_v1 import Deployment
from lightkube.resources.core_v1 import ConfigMap
from lightkube.types import PatchType

from fakekube import Cluster
from tests.clients.conftest import widget, widget_crd

#: Wall-clock safety net of a watch (server side timeoutSeconds); events arrive at once.
WATCH_TIMEOUT_S = 10

Widget = create_namespaced_resource("shop.example.com", "v1", "Widget", "widgets")


@pytest.fixture
def client(fakekube: Cluster) -> Client:
    return Client(config=KubeConfig.from_file(fakekube.kubeconfig), field_manager="lightkube-test")


def configmap(name: str, labels: dict[str, str] | None = None, data: dict[str, str] | None = None) -> ConfigMap:
    return ConfigMap(metadata=ObjectMeta(name=name, namespace="default", labels=labels), data=data or {"k": "v"})


def deployment(name: str, image: str = "nginx:1.27") -> Deployment:
    labels = {"app": name}
    return Deployment(
        metadata=ObjectMeta(name=name, namespace="default"),
        spec=DeploymentSpec(replicas=1, selector=LabelSelector(matchLabels=labels), template=PodTemplateSpec(
            metadata=ObjectMeta(labels=labels),
            spec=PodSpec(containers=[Container(name="web", image=image), Container(name="log", image="busybox")]))))


def api_error(call: Any) -> ApiError:
    with pytest.raises(ApiError) as info:
        call()
    return info.value


def test_crud_and_errors(client: Client) -> None:
    created = client.create(configmap("one"))
    assert created.metadata.uid and created.metadata.resourceVersion
    read = client.get(ConfigMap, "one", namespace="default")
    read.data = {"k": "changed"}
    replaced = client.replace(read)
    assert int(replaced.metadata.resourceVersion) > int(created.metadata.resourceVersion)

    duplicate = api_error(lambda: client.create(configmap("one")))
    assert (duplicate.status.code, duplicate.status.reason) == (409, "AlreadyExists")
    assert duplicate.status.message == 'configmaps "one" already exists'
    stale = api_error(lambda: client.replace(created))
    assert (stale.status.code, stale.status.reason) == (409, "Conflict")
    assert stale.status.message == ('Operation cannot be fulfilled on configmaps "one": the object has been '
                                    'modified; please apply your changes to the latest version and try again')

    client.delete(ConfigMap, "one", namespace="default")
    missing = api_error(lambda: client.get(ConfigMap, "one", namespace="default"))
    assert (missing.status.code, missing.status.reason, missing.status.message) == (
        404, "NotFound", 'configmaps "one" not found')


def test_list_with_label_selectors(client: Client) -> None:
    for name, tier in [("a", "web"), ("b", "db"), ("c", "cache")]:
        client.create(configmap(name, {"tier": tier, "shop": "yes"}))
    client.create(configmap("d", {"shop": "yes"}))

    def names(labels: dict[str, Any]) -> list[str]:
        return [cm.metadata.name for cm in client.list(ConfigMap, namespace="default", labels=labels)]

    assert names({"tier": "web"}) == ["a"]
    assert names({"tier": in_(["web", "db"])}) == ["a", "b"]
    assert names({"shop": "yes", "tier": not_in(["web"])}) == ["b", "c", "d"]
    assert names({"tier": exists()}) == ["a", "b", "c"]
    # chunked: lightkube follows the continue token
    assert [cm.metadata.name for cm in client.list(ConfigMap, namespace="default", labels={"shop": "yes"},
                                                     chunk_size=1)] == ["a", "b", "c", "d"]


def test_watch_in_order_and_resume_from_a_resource_version(client: Client) -> None:
    start = client.create(configmap("w")).metadata.resourceVersion
    for value in ("1", "2", "3"):
        client.patch(ConfigMap, "w", {"data": {"k": value}}, namespace="default")
    client.delete(ConfigMap, "w", namespace="default")

    seen: list[tuple[str, str, str]] = []
    for kind, obj in client.watch(ConfigMap, namespace="default", resource_version=start,
                                  server_timeout=WATCH_TIMEOUT_S):
        seen.append((kind, obj.data["k"], obj.metadata.resourceVersion))
        if len(seen) == 2:
            break
    assert [(kind, value) for kind, value, _ in seen] == [("MODIFIED", "1"), ("MODIFIED", "2")]

    resumed: list[tuple[str, str]] = []
    for kind, obj in client.watch(ConfigMap, namespace="default", resource_version=seen[-1][2],
                                  server_timeout=WATCH_TIMEOUT_S):
        resumed.append((kind, obj.data["k"]))
        if kind == "DELETED":
            break
    assert resumed == [("MODIFIED", "3"), ("DELETED", "3")]


@pytest.mark.fakekube(history_limit=20)
def test_watch_from_a_compacted_resource_version_is_410(client: Client) -> None:
    start = client.create(configmap("old")).metadata.resourceVersion
    for value in range(25):
        client.patch(ConfigMap, "old", {"data": {"k": str(value)}}, namespace="default")
    gone = api_error(lambda: next(iter(client.watch(ConfigMap, namespace="default", resource_version=start,
                                                    server_timeout=WATCH_TIMEOUT_S))))
    assert (gone.status.code, gone.status.reason) == (410, "Expired")
    assert gone.status.message.startswith(f"too old resource version: {start} (")


def test_patch_merge_strategic_and_json(client: Client) -> None:
    client.create(deployment("web"))
    merged = client.patch(Deployment, "web", {"metadata": {"labels": {"team": "a"}}}, namespace="default",
                          patch_type=PatchType.MERGE)
    assert merged.metadata.labels == {"team": "a"}
    # strategic: containers merge by name, the other container stays
    strategic = client.patch(Deployment, "web", {"spec": {"template": {"spec": {"containers": [
        {"name": "web", "image": "nginx:1.28"}]}}}}, namespace="default", patch_type=PatchType.STRATEGIC)
    assert [(c.name, c.image) for c in strategic.spec.template.spec.containers] == [
        ("web", "nginx:1.28"), ("log", "busybox")]
    json_patched = client.patch(Deployment, "web", [{"op": "replace", "path": "/spec/replicas", "value": 3}],
                                namespace="default", patch_type=PatchType.JSON)
    assert json_patched.spec.replicas == 3
    bad = api_error(lambda: client.patch(Deployment, "web", [{"op": "test", "path": "/spec/replicas", "value": 9}],
                                         namespace="default", patch_type=PatchType.JSON))
    assert bad.status.code == 422


def test_server_side_apply(client: Client) -> None:
    applied = client.apply(configmap("applied", data={"a": "1"}), field_manager="team-a")
    assert applied.data == {"a": "1"}
    assert [m.manager for m in applied.metadata.managedFields] == ["team-a"]
    conflict = api_error(lambda: client.apply(configmap("applied", data={"a": "2"}), field_manager="team-b"))
    assert conflict.status.code == 409
    forced = client.apply(configmap("applied", data={"a": "2"}), field_manager="team-b", force=True)
    assert forced.data == {"a": "2"}


def test_asyncio_client_crud_and_watch(fakekube: Cluster) -> None:
    async def scenario() -> list[tuple[str, str]]:
        client = AsyncClient(config=KubeConfig.from_file(fakekube.kubeconfig))
        try:
            start = (await client.create(configmap("async"))).metadata.resourceVersion
            await client.patch(ConfigMap, "async", {"data": {"k": "2"}}, namespace="default")
            assert [cm.metadata.name async for cm in client.list(ConfigMap, namespace="default",
                                                                 labels={"missing": exists()})] == []
            await client.delete(ConfigMap, "async", namespace="default")
            events = []
            async for kind, obj in client.watch(ConfigMap, namespace="default", resource_version=start,
                                                server_timeout=WATCH_TIMEOUT_S):
                events.append((kind, obj.data["k"]))
                if kind == "DELETED":
                    break
            return events
        finally:
            await client.close()

    assert asyncio.run(scenario()) == [("MODIFIED", "2"), ("DELETED", "2")]


def test_custom_resources(client: Client) -> None:
    client.create(CustomResourceDefinition.from_dict(widget_crd()))
    client.wait(CustomResourceDefinition, "widgets.shop.example.com", for_conditions=["Established"])

    created = client.create(Widget.from_dict(widget("w1", size=2, labels={"tier": "web"})))
    client.create(Widget.from_dict(widget("w2", size=3)))
    assert created.spec == {"size": 2}
    assert [w.metadata.name for w in client.list(Widget, namespace="default", labels={"tier": "web"})] == ["w1"]

    # lightkube's default patch is strategic, which custom resources refuse as upstream does
    refused = api_error(lambda: client.patch(Widget, "w1", {"spec": {"size": 5}}, namespace="default"))
    assert (refused.status.code, refused.status.message) == (415, (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"))
    client.patch(Widget, "w1", {"spec": {"size": 5}}, namespace="default", patch_type=PatchType.MERGE)
    status = client.patch(Widget.Status, "w1", {"status": {"ready": True}}, namespace="default",
                          patch_type=PatchType.MERGE)
    assert status.status == {"ready": True} and status.spec == {"size": 5}
    # the main resource ignores status; the status subresource ignores spec
    assert client.patch(Widget, "w1", {"status": {"ready": False}}, namespace="default",
                        patch_type=PatchType.MERGE).status == {"ready": True}

    events = []
    for kind, obj in client.watch(Widget, namespace="default", resource_version=created.metadata.resourceVersion,
                                  server_timeout=WATCH_TIMEOUT_S):
        events.append((kind, obj.metadata.name))
        if len(events) == 3:
            break
    assert events == [("ADDED", "w2"), ("MODIFIED", "w1"), ("MODIFIED", "w1")]

    client.delete(Widget, "w2", namespace="default")
    missing = api_error(lambda: client.get(Widget, "w2", namespace="default"))
    assert (missing.status.code, missing.status.message) == (404, 'widgets.shop.example.com "w2" not found')


def test_apply_custom_resource(client: Client) -> None:
    client.apply(CustomResourceDefinition.from_dict(widget_crd()), field_manager="installer")
    client.wait(CustomResourceDefinition, "widgets.shop.example.com", for_conditions=["Established"])
    applied = client.apply(Widget.from_dict(widget("wa", size=2)), field_manager="team-a")
    assert applied.spec == {"size": 2}
    again = client.apply(Widget.from_dict({**widget("wa", size=2), "spec": {"size": 2, "color": "red"}}),
                         field_manager="team-a")
    assert again.spec == {"size": 2, "color": "red"}
    assert [m.manager for m in again.metadata.managedFields] == ["team-a"]
