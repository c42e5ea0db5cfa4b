"""CRD webhook conversion over HTTP with the official client: a CRD stored as v1
(``spec.cronSpec``) and served as v2 too (``spec.schedule``), converted by a real HTTPS
webhook in the test; objects written in one version read back in the other, lists and
watch events in the requested version, and a failing webhook's upstream error."""

from __future__ import annotations

import json
from typing import Any, Iterator

import pytest
import requests
from kubernetes import client
from kubernetes.client.rest import ApiException

from fakekube import Cluster
from tests.integration.webhook_server import Answer, WebhookServer

Obj = dict[str, Any]
GROUP = "stable.example.com"
SERVICE_HOST = "convert.default.svc:443"


def _version_schema(field: str) -> Obj:
    return {"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {field: {"type": "string"}, "image": {"type": "string"}}}}}}


def crd_body(server: WebhookServer) -> Obj:
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"crontabs.{GROUP}"},
        "spec": {
            "group": GROUP, "scope": "Namespaced",
            "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab"},
            "versions": [
                {"name": "v1", "served": True, "storage": True, "schema": _version_schema("cronSpec")},
                {"name": "v2", "served": True, "storage": False, "schema": _version_schema("schedule")}],
            "conversion": {"strategy": "Webhook", "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {"service": {"namespace": "default", "name": "convert", "path": "/convert"},
                                 "caBundle": server.ca_bundle}}},
        },
    }


def convert(request: Obj) -> Obj:
    """The webhook: renames spec.cronSpec (v1) ⇄ spec.schedule (v2)."""
    desired = request["desiredAPIVersion"]
    converted = []
    for obj in request["objects"]:
        spec = dict(obj.get("spec") or {})
        if desired.endswith("/v2") and "cronSpec" in spec:
            spec["schedule"] = spec.pop("cronSpec")
        if desired.endswith("/v1") and "schedule" in spec:
            spec["cronSpec"] = spec.pop("schedule")
        converted.append({**obj, "apiVersion": desired, "spec": spec})
    return {"result": {"status": "Success"}, "convertedObjects": converted}


@pytest.fixture
def server() -> Iterator[WebhookServer]:
    webhook_server = WebhookServer(["convert.default.svc"], review=("apiextensions.k8s.io/v1", "ConversionReview"))
    webhook_server.handlers["/convert"] = convert
    yield webhook_server
    webhook_server.close()


@pytest.fixture
def custom(fakekube: Cluster, server: WebhookServer) -> client.CustomObjectsApi:
    fakekube.webhook_addresses[SERVICE_HOST] = server.address
    api = fakekube.client()
    client.ApiextensionsV1Api(api).create_custom_resource_definition(crd_body(server))
    return client.CustomObjectsApi(api)


def crontab(version: str, name: str, **spec: str) -> Obj:
    return {"apiVersion": f"{GROUP}/{version}", "kind": "CronTab", "metadata": {"name": name}, "spec": spec}


def test_created_in_v1_read_in_v2_and_back(custom: client.CustomObjectsApi, server: WebhookServer) -> None:
    custom.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs",
                                           crontab("v1", "nightly", cronSpec="0 3 * * *", image="cron"))
    assert server.reviews == []  # written in the storage version: nothing to convert
    v2 = custom.get_namespaced_custom_object(GROUP, "v2", "default", "crontabs", "nightly")
    assert v2["apiVersion"] == f"{GROUP}/v2"
    assert v2["spec"] == {"schedule": "0 3 * * *", "image": "cron"}
    review = server.reviews[-1]
    assert (review["apiVersion"], review["kind"]) == ("apiextensions.k8s.io/v1", "ConversionReview")
    assert review["request"]["desiredAPIVersion"] == f"{GROUP}/v2"
    assert [o["apiVersion"] for o in review["request"]["objects"]] == [f"{GROUP}/v1"]
    assert review["request"]["uid"]

    v2["spec"]["schedule"] = "0 4 * * *"
    custom.replace_namespaced_custom_object(GROUP, "v2", "default", "crontabs", "nightly", v2)
    v1 = custom.get_namespaced_custom_object(GROUP, "v1", "default", "crontabs", "nightly")
    assert v1["spec"] == {"cronSpec": "0 4 * * *", "image": "cron"}


def test_created_in_v2_is_stored_as_v1_and_listed_in_v2(fakekube: Cluster, custom: client.CustomObjectsApi,
                                                        server: WebhookServer) -> None:
    custom.create_namespaced_custom_object(GROUP, "v2", "default", "crontabs",
                                           crontab("v2", "hourly", schedule="0 * * * *"))
    custom.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs",
                                           crontab("v1", "daily", cronSpec="0 0 * * *"))
    stored = fakekube.api.store.get((GROUP, "crontabs"), ("default", "hourly"))
    assert stored is not None and stored["spec"] == {"cronSpec": "0 * * * *"}
    calls = len(server.reviews)
    listed = custom.list_namespaced_custom_object(GROUP, "v2", "default", "crontabs")
    assert len(server.reviews) == calls + 1  # one review for the whole list
    assert [o["metadata"]["name"] for o in server.reviews[-1]["request"]["objects"]] == ["daily", "hourly"]
    assert listed["apiVersion"] == f"{GROUP}/v2"
    assert [(o["apiVersion"], o["metadata"]["name"], o["spec"]) for o in listed["items"]] == [
        (f"{GROUP}/v2", "daily", {"schedule": "0 0 * * *"}), (f"{GROUP}/v2", "hourly", {"schedule": "0 * * * *"})]
    calls = len(server.reviews)
    selected = custom.list_namespaced_custom_object(GROUP, "v2", "default", "crontabs",
                                                    field_selector="metadata.name=hourly")
    assert [o["spec"] for o in selected["items"]] == [{"schedule": "0 * * * *"}]
    # metadata selects without converting: one review, for the selected item only
    assert [[o["metadata"]["name"] for o in r["request"]["objects"]] for r in server.reviews[calls:]] == [["hourly"]]


def test_a_failing_webhook_is_upstreams_500(custom: client.CustomObjectsApi, server: WebhookServer) -> None:
    custom.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs",
                                           crontab("v1", "nightly", cronSpec="0 3 * * *"))
    server.handlers["/convert"] = lambda request: {"result": {"status": "Failure", "message": "cannot convert"}}
    with pytest.raises(ApiException) as info:
        custom.get_namespaced_custom_object(GROUP, "v2", "default", "crontabs", "nightly")
    status = json.loads(info.value.body)
    assert (info.value.status, status.get("reason", "")) == (500, "")
    assert status["message"] == f"conversion webhook for {GROUP}/v1, Kind=CronTab failed: cannot convert"
    with pytest.raises(ApiException) as info:
        custom.create_namespaced_custom_object(GROUP, "v2", "default", "crontabs",
                                               crontab("v2", "hourly", schedule="0 * * * *"))
    assert info.value.status == 500
    assert json.loads(info.value.body)["message"] == \
        f"conversion webhook for {GROUP}/v2, Kind=CronTab failed: cannot convert"
    assert custom.list_namespaced_custom_object(GROUP, "v1", "default", "crontabs")["items"][0]["metadata"]["name"] \
        == "nightly"


def test_a_dripping_webhook_fails_at_the_conversion_deadline(fakekube: Cluster, custom: client.CustomObjectsApi,
                                                             server: WebhookServer) -> None:
    from tests.integration.test_admission_webhooks import served_while_pending
    custom.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs",
                                           crontab("v1", "nightly", cronSpec="0 3 * * *"))
    fakekube.api.conversion.timeout_s = 2  # upstream's 30 s, shortened for the test

    def dripped(request: Obj) -> Answer:
        body = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                "response": {"uid": request["uid"], **convert(request)}}
        return Answer(raw=json.dumps(body).encode(), drip_s=1.0)
    server.handlers["/convert"] = dripped
    outcome = served_while_pending(
        fakekube, server, lambda: custom.get_namespaced_custom_object(GROUP, "v2", "default", "crontabs", "nightly"))
    code, status = outcome["error"]
    assert (code, status.get("reason", ""), status["message"]) == (500, "", (
        f"conversion webhook for {GROUP}/v1, Kind=CronTab failed: unexpected error when reading response body. "
        "Please retry. Original error: context deadline exceeded"))


def test_a_webhook_changing_more_than_labels_is_refused(custom: client.CustomObjectsApi, server: WebhookServer) -> None:
    custom.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs",
                                           crontab("v1", "nightly", cronSpec="0 3 * * *"))

    def renaming(request: Obj) -> Obj:
        answer = convert(request)
        for obj in answer["convertedObjects"]:
            obj["metadata"] = {**obj["metadata"], "name": "other"}
        return answer

    server.handlers["/convert"] = renaming
    with pytest.raises(ApiException) as info:
        custom.get_namespaced_custom_object(GROUP, "v2", "default", "crontabs", "nightly")
    assert json.loads(info.value.body)["message"] == (
        f"conversion webhook for {GROUP}/v1, Kind=CronTab returned invalid object: must have the same name: "
        "nightly != other")
    server.handlers["/convert"] = lambda request: {**convert(request), "uid": "wrong"}
    with pytest.raises(ApiException) as info:
        custom.get_namespaced_custom_object(GROUP, "v2", "default", "crontabs", "nightly")
    uid = server.reviews[-1]["request"]["uid"]
    assert json.loads(info.value.body)["message"] == (
        f'conversion webhook for {GROUP}/v1, Kind=CronTab failed: expected response.uid="{uid}", got "wrong"')


def test_a_watch_in_v2_sees_converted_events(fakekube: Cluster, custom: client.CustomObjectsApi) -> None:
    url = f"{fakekube.url}/apis/{GROUP}/v2/namespaces/default/crontabs?watch=1&timeoutSeconds=1"
    response = requests.get(url, stream=True)
    custom.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs",
                                           crontab("v1", "nightly", cronSpec="0 3 * * *"))
    event = json.loads(next(response.iter_lines()))
    response.close()
    assert event["type"] == "ADDED"
    assert (event["object"]["apiVersion"], event["object"]["spec"]) == (f"{GROUP}/v2", {"schedule": "0 3 * * *"})


def test_a_list_names_the_list_kind_and_the_item_in_errors(custom: client.CustomObjectsApi,
                                                            server: WebhookServer) -> None:
    for name in ("a", "b"):
        custom.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs",
                                               crontab("v1", name, cronSpec="@daily"))
    server.handlers["/convert"] = lambda request: {"result": {"status": "Success"},
                                                   "convertedObjects": convert(request)["convertedObjects"][:1]}
    with pytest.raises(ApiException) as info:
        custom.list_namespaced_custom_object(GROUP, "v2", "default", "crontabs")
    assert json.loads(info.value.body)["message"] == \
        f"conversion webhook for {GROUP}/v1, Kind=CronTabList returned 1 objects, expected 2"

    def wrong_kind_b(request: Obj) -> Obj:
        answer = convert(request)
        answer["convertedObjects"][1]["kind"] = "Other"
        return answer

    server.handlers["/convert"] = wrong_kind_b
    with pytest.raises(ApiException) as info:
        custom.list_namespaced_custom_object(GROUP, "v2", "default", "crontabs")
    assert json.loads(info.value.body)["message"] == (
        f"conversion webhook for {GROUP}/v1, Kind=CronTabList returned invalid converted object at index 2: "
        "invalid kind (expected CronTab, received Other)")


def test_a_watch_ends_when_an_event_cannot_be_converted(fakekube: Cluster, custom: client.CustomObjectsApi,
                                                        server: WebhookServer) -> None:
    server.handlers["/convert"] = lambda request: {"result": {"status": "Failure", "message": "cannot convert"}}
    url = f"{fakekube.url}/apis/{GROUP}/v2/namespaces/default/crontabs?watch=1&timeoutSeconds=30"
    response = requests.get(url, stream=True)
    custom.create_namespaced_custom_object(GROUP, "v1", "default", "crontabs",
                                           crontab("v1", "nightly", cronSpec="0 3 * * *"))
    assert list(response.iter_lines()) == []  # the stream ends cleanly, as upstream's failed encode


def test_a_conversion_webhook_holds_no_lock_while_it_answers(fakekube: Cluster, custom: client.CustomObjectsApi,
                                                              server: WebhookServer) -> None:
    """A write in v2 is answered in v2 (its stored v1 object converted back): while that
    conversion waits on a slow webhook, other clients write."""
    import threading
    converting, release = threading.Event(), threading.Event()

    def slow(request: Obj) -> Obj:
        if request["desiredAPIVersion"].endswith("/v2"):  # the answer's conversion, after the write
            converting.set()
            release.wait(10)
        return convert(request)
    server.handlers["/convert"] = slow
    fakekube.api.conversion.timeout_s = 5  # held under the lock, the other writes would wait past it
    answer: dict[str, Any] = {}
    create = threading.Thread(target=lambda: answer.setdefault("obj", custom.create_namespaced_custom_object(
        GROUP, "v2", "default", "crontabs", crontab("v2", "slow", schedule="* * * * *"))))
    create.start()
    assert converting.wait(60)
    core = client.CoreV1Api(fakekube.client())
    core.create_namespaced_config_map("default", {"metadata": {"name": "meanwhile"}})  # not held up
    custom.patch_namespaced_custom_object(GROUP, "v1", "default", "crontabs", "slow", {"spec": {"image": "x"}})
    release.set()
    create.join(60)
    assert answer["obj"]["spec"] == {"schedule": "* * * * *"}
