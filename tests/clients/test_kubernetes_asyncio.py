"""kubernetes_asyncio (the official client's asyncio twin) against a served fakekube.

CRUD, selectors, watch (order, resume), merge/strategic/JSON patches, server-side apply
and custom resources through ``CustomObjectsApi``, as an asyncio operator would.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Awaitable, Callable

import pytest
from kubernetes_asyncio import client, config, watch
from kubernetes_asyncio.client.api_client import ApiClient
from kubernetes_asyncio.client.rest import ApiException

from fakekube import Cluster
from tests.clients.conftest import widget, widget_crd

#: Wall-clock safety net of a watch (server side timeoutSeconds); events arrive at once.
WATCH_TIMEOUT_S = 10
APPLY = "application/apply-patch+yaml"
MERGE = "application/merge-patch+json"


def run(cluster: Cluster, scenario: Callable[[ApiClient], Awaitable[Any]]) -> Any:
    """Run ``scenario`` with an ApiClient configured from the cluster's kubeconfig."""
    async def main() -> Any:
        configuration = client.Configuration()
        await config.load_kube_config(config_file=cluster.kubeconfig, client_configuration=configuration)
        async with ApiClient(configuration) as api:
            return await scenario(api)
    return asyncio.run(main())


def configmap(name: str, labels: dict[str, str] | None = None, data: dict[str, str] | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if labels:
        metadata["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data or {"k": "v"}}


async def api_error(call: Awaitable[Any]) -> tuple[int, dict[str, Any]]:
    with pytest.raises(ApiException) as info:
        await call
    return info.value.status, json.loads(info.value.body)


def test_crud_and_errors(fakekube: Cluster) -> None:
    async def scenario(api: ApiClient) -> None:
        core = client.CoreV1Api(api)
        created = await core.create_namespaced_config_map("default", configmap("one"))
        read = await core.read_namespaced_config_map("one", "default")
        read.data = {"k": "changed"}
        replaced = await core.replace_namespaced_config_map("one", "default", read)
        assert int(replaced.metadata.resource_version) > int(created.metadata.resource_version)
        code, body = await api_error(core.create_namespaced_config_map("default", configmap("one")))
        assert (code, body["reason"], body["message"]) == (409, "AlreadyExists", 'configmaps "one" already exists')
        assert body["details"] == {"name": "one", "kind": "configmaps"}
        status = await core.delete_namespaced_config_map("one", "default")
        assert status.status == "Success"
        code, body = await api_error(core.read_namespaced_config_map("one", "default"))
        assert (code, body["reason"], body["message"]) == (404, "NotFound", 'configmaps "one" not found')

    run(fakekube, scenario)


def test_list_with_selectors_and_pages(fakekube: Cluster) -> None:
    async def scenario(api: ApiClient) -> None:
        core = client.CoreV1Api(api)
        for name, tier in [("a", "web"), ("b", "db"), ("c", "web")]:
            await core.create_namespaced_config_map("default", configmap(name, {"tier": tier}))

        async def names(**query: Any) -> list[str]:
            return [cm.metadata.name for cm in (await core.list_namespaced_config_map("default", **query)).items]

        assert await names(label_selector="tier=web") == ["a", "c"]
        assert await names(label_selector="tier notin (web)") == ["b", "kube-root-ca.crt"]  # no label: not in
        assert await names(field_selector="metadata.name!=a", label_selector="tier") == ["b", "c"]
        page = await core.list_namespaced_config_map("default", label_selector="tier", limit=2)
        assert [cm.metadata.name for cm in page.items] == ["a", "b"] and page.metadata._continue
        rest = await core.list_namespaced_config_map("default", label_selector="tier", limit=2,
                                                     _continue=page.metadata._continue)
        assert [cm.metadata.name for cm in rest.items] == ["c"] and not rest.metadata._continue

    run(fakekube, scenario)


def test_watch_in_order_and_resume(fakekube: Cluster) -> None:
    async def scenario(api: ApiClient) -> None:
        core = client.CoreV1Api(api)
        start = (await core.create_namespaced_config_map("default", configmap("w"))).metadata.resource_version
        for value in ("1", "2", "3"):
            await core.patch_namespaced_config_map("w", "default", {"data": {"k": value}})
        await core.delete_namespaced_config_map("w", "default")

        async def events(resource_version: str, count: int) -> list[tuple[str, str, str]]:
            seen: list[tuple[str, str, str]] = []
            async with watch.Watch() as w:
                async for event in w.stream(core.list_namespaced_config_map, "default",
                                            resource_version=resource_version, timeout_seconds=WATCH_TIMEOUT_S):
                    obj = event["object"]
                    seen.append((event["type"], obj.data["k"], obj.metadata.resource_version))
                    if len(seen) == count:
                        w.stop()
            return seen

        first = await events(start, 2)
        assert [(kind, value) for kind, value, _ in first] == [("MODIFIED", "1"), ("MODIFIED", "2")]
        rest = await events(first[-1][2], 2)
        assert [(kind, value) for kind, value, _ in rest] == [("MODIFIED", "3"), ("DELETED", "3")]

    run(fakekube, scenario)


@pytest.mark.fakekube(history_limit=20)
def test_watch_from_a_compacted_resource_version_is_410(fakekube: Cluster) -> None:
    """The watch answers an ERROR event with a 410 Status; the client raises it (informers relist)."""
    async def scenario(api: ApiClient) -> None:
        core = client.CoreV1Api(api)
        start = (await core.create_namespaced_config_map("default", configmap("old"))).metadata.resource_version
        for value in range(25):
            await core.patch_namespaced_config_map("old", "default", {"data": {"k": str(value)}})
        with pytest.raises(ApiException) as gone:
            async with watch.Watch() as w:
                async for _ in w.stream(core.list_namespaced_config_map, "default", resource_version=start,
                                        timeout_seconds=WATCH_TIMEOUT_S):
                    pass
        assert gone.value.status == 410
        assert gone.value.reason.startswith(f"Expired: too old resource version: {start} (")

    run(fakekube, scenario)


def test_patch_merge_strategic_and_json(fakekube: Cluster) -> None:
    async def scenario(api: ApiClient) -> None:
        apps = client.AppsV1Api(api)
        labels = {"app": "web"}
        await apps.create_namespaced_deployment("default", {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
                "containers": [{"name": "web", "image": "nginx:1.27"}, {"name": "log", "image": "busybox"}]}}}})
        merged = await apps.patch_namespaced_deployment("web", "default", {"metadata": {"labels": {"team": "a"}}},
                                                        _content_type="application/merge-patch+json")
        assert merged.metadata.labels == {"team": "a"}
        strategic = await apps.patch_namespaced_deployment(
            "web", "default", {"spec": {"template": {"spec": {"containers": [{"name": "log", "image": "alpine"}]}}}},
            _content_type="application/strategic-merge-patch+json")
        assert [(c.name, c.image) for c in strategic.spec.template.spec.containers] == [
            ("web", "nginx:1.27"), ("log", "alpine")]
        # a list body goes as a JSON patch
        patched = await apps.patch_namespaced_deployment("web", "default", [
            {"op": "replace", "path": "/spec/replicas", "value": 2}])
        assert patched.spec.replicas == 2
        scale = await apps.read_namespaced_deployment_scale("web", "default")
        assert scale.spec.replicas == 2

    run(fakekube, scenario)


def test_server_side_apply(fakekube: Cluster) -> None:
    async def scenario(api: ApiClient) -> None:
        core = client.CoreV1Api(api)
        applied = await core.patch_namespaced_config_map("applied", "default", configmap("applied", data={"a": "1"}),
                                                         field_manager="team-a", _content_type=APPLY)
        assert applied.data == {"a": "1"}
        assert [m.manager for m in applied.metadata.managed_fields] == ["team-a"]
        code, body = await api_error(core.patch_namespaced_config_map(
            "applied", "default", configmap("applied", data={"a": "2"}), field_manager="team-b", _content_type=APPLY))
        assert (code, body["reason"]) == (409, "Conflict")
        forced = await core.patch_namespaced_config_map("applied", "default", configmap("applied", data={"a": "2"}),
                                                        field_manager="team-b", force=True, _content_type=APPLY)
        assert forced.data == {"a": "2"}

    run(fakekube, scenario)


def test_custom_resources(fakekube: Cluster) -> None:
    async def scenario(api: ApiClient) -> None:
        extensions = client.ApiextensionsV1Api(api)
        await extensions.create_custom_resource_definition(widget_crd())
        async with watch.Watch() as w:
            async for event in w.stream(extensions.list_custom_resource_definition,
                                        field_selector="metadata.name=widgets.shop.example.com",
                                        timeout_seconds=WATCH_TIMEOUT_S):
                conditions = (event["object"].status.conditions or []) if event["object"].status else []
                if any(c.type == "Established" and c.status == "True" for c in conditions):
                    w.stop()

        custom = client.CustomObjectsApi(api)
        group = ("shop.example.com", "v1", "default", "widgets")
        created = await custom.create_namespaced_custom_object(*group, widget("w1", size=2, labels={"tier": "web"}))
        await custom.create_namespaced_custom_object(*group, widget("w2", size=3))
        listed = await custom.list_namespaced_custom_object(*group, label_selector="tier=web")
        assert [item["metadata"]["name"] for item in listed["items"]] == ["w1"]
        # a dict body goes as the first type the client lists, a JSON patch: upstream's 400
        code, body = await api_error(custom.patch_namespaced_custom_object(*group[:4], "w1", {"spec": {"size": 4}}))
        assert (code, body["message"]) == (400, "error decoding patch: json: cannot unmarshal object into Go value "
                                                "of type []handlers.jsonPatchOp")
        patched = await custom.patch_namespaced_custom_object(*group[:4], "w1", {"spec": {"size": 4}},
                                                              _content_type=MERGE)
        assert patched["spec"] == {"size": 4}
        status = await custom.patch_namespaced_custom_object_status(*group[:4], "w1", {"status": {"ready": True}},
                                                                    _content_type=MERGE)
        assert status["status"] == {"ready": True}

        events = []
        async with watch.Watch() as w:
            async for event in w.stream(custom.list_namespaced_custom_object, *group,
                                        resource_version=created["metadata"]["resourceVersion"],
                                        timeout_seconds=WATCH_TIMEOUT_S):
                events.append((event["type"], event["object"]["metadata"]["name"]))
                if len(events) == 3:
                    w.stop()
        assert events == [("ADDED", "w2"), ("MODIFIED", "w1"), ("MODIFIED", "w1")]
        await custom.delete_namespaced_custom_object(*group[:4], "w2")
        code, body = await api_error(custom.get_namespaced_custom_object(*group[:4], "w2"))
        assert (code, body["message"]) == (404, 'widgets.shop.example.com "w2" not found')

    run(fakekube, scenario)


def test_apply_custom_resource(fakekube: Cluster) -> None:
    async def scenario(api: ApiClient) -> None:
        extensions = client.ApiextensionsV1Api(api)
        await extensions.patch_custom_resource_definition("widgets.shop.example.com", widget_crd(),
                                                          field_manager="installer", _content_type=APPLY)
        for _ in range(100):
            crd = await extensions.read_custom_resource_definition("widgets.shop.example.com")
            if any(c.type == "Established" and c.status == "True" for c in crd.status.conditions or []):
                break
        custom = client.CustomObjectsApi(api)
        # An apply that creates answers 201, which this generated method does not map (only 200,
        # as upstream's OpenAPI lists): it returns None, as against a real apiserver.
        created = await custom.patch_namespaced_custom_object(
            "shop.example.com", "v1", "default", "widgets", "wa", widget("wa", size=2),
            field_manager="team-a", _content_type=APPLY)
        assert created is None
        applied = await custom.patch_namespaced_custom_object(
            "shop.example.com", "v1", "default", "widgets", "wa", widget("wa", size=3),
            field_manager="team-a", _content_type=APPLY)
        assert applied["spec"] == {"size": 3}
        assert [m["manager"] for m in applied["metadata"]["managedFields"]] == ["team-a"]

    run(fakekube, scenario)
