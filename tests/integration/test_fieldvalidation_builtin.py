"""Built-in objects lose unknown fields as upstream's typed decoding loses them, on every
write verb, whatever ``fieldValidation`` says; Warn (the default) says so in a
``Warning`` header, Strict refuses the write, Ignore stays silent."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest
from kubernetes import dynamic

pytestmark = pytest.mark.fakekube(nodes=1)

CM_PATH = "/api/v1/namespaces/default/configmaps"


class Http:
    """Raw requests, to see status codes, warning headers and bodies as sent."""

    def __init__(self, url: str) -> None:
        self.url = url

    def send(self, method: str, path: str, body: Any = None, content_type: str = "application/json",
             query: str = "") -> tuple[int, list[str], dict[str, Any]]:
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        request = urllib.request.Request(self.url + path + (f"?{query}" if query else ""), data=data, method=method,
                                         headers={"Content-Type": content_type, "Accept": "application/json",
                                                  "Authorization": "Bearer fakekube"})
        try:
            with urllib.request.urlopen(request) as answer:
                return answer.status, answer.headers.get_all("Warning") or [], json.loads(answer.read())
        except urllib.error.HTTPError as failed:
            return failed.code, failed.headers.get_all("Warning") or [], json.loads(failed.read())


@pytest.fixture
def http(fakekube) -> Http:
    return Http(fakekube.url)


def configmap(name: str, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}, **extra}


def stored(http: Http, path: str) -> dict[str, Any]:
    code, _, body = http.send("GET", path)
    assert code == 200
    return body


def test_create_under_warn_drops_the_field_and_warns(http: Http) -> None:
    body = configmap("cm", foo="bar")
    body["metadata"]["bogus"] = 1
    code, warnings, created = http.send("POST", CM_PATH, body)
    assert code == 201
    # in document order: metadata comes before the body's trailing "foo"
    assert warnings == ['299 - "unknown field \\"metadata.bogus\\""', '299 - "unknown field \\"foo\\""']
    assert "foo" not in created and "bogus" not in created["metadata"]
    kept = stored(http, f"{CM_PATH}/cm")
    assert "foo" not in kept and "bogus" not in kept["metadata"] and kept["data"] == {"k": "v"}


def test_create_under_strict_is_a_bad_request(http: Http) -> None:
    code, _, status = http.send("POST", CM_PATH, configmap("cm", foo="bar"), query="fieldValidation=Strict")
    assert code == 400
    assert status["reason"] == "BadRequest"
    assert status["message"] == ('ConfigMap in version "v1" cannot be handled as a ConfigMap: '
                                 'strict decoding error: unknown field "foo"')
    assert http.send("GET", f"{CM_PATH}/cm")[0] == 404


def test_create_under_ignore_drops_the_field_silently(http: Http) -> None:
    code, warnings, created = http.send("POST", CM_PATH, configmap("cm", foo="bar"), query="fieldValidation=Ignore")
    assert (code, warnings) == (201, [])
    assert "foo" not in created and "foo" not in stored(http, f"{CM_PATH}/cm")


def test_update_drops_nested_unknown_fields(http: Http) -> None:
    path = "/apis/apps/v1/namespaces/default/deployments"
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                  "spec": {"selector": {"matchLabels": {"app": "web"}},
                           "template": {"metadata": {"labels": {"app": "web"}},
                                        "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    assert http.send("POST", path, deployment)[0] == 201
    current = stored(http, f"{path}/web")
    current["spec"]["template"]["spec"]["containers"][0]["bogus"] = True
    code, warnings, updated = http.send("PUT", f"{path}/web", current)
    assert code == 200
    assert warnings == ['299 - "unknown field \\"spec.template.spec.containers[0].bogus\\""']
    assert "bogus" not in stored(http, f"{path}/web")["spec"]["template"]["spec"]["containers"][0]


@pytest.mark.parametrize(("content_type", "patch"), [
    ("application/merge-patch+json", {"extra": {"a": 1}}),
    ("application/strategic-merge-patch+json", {"extra": {"a": 1}}),
    ("application/json-patch+json", [{"op": "add", "path": "/extra", "value": {"a": 1}}]),
])
def test_every_patch_drops_the_field(http: Http, content_type: str, patch: Any) -> None:
    assert http.send("POST", CM_PATH, configmap("cm"))[0] == 201
    code, warnings, patched = http.send("PATCH", f"{CM_PATH}/cm", patch, content_type=content_type)
    assert code == 200
    assert warnings == ['299 - "unknown field \\"extra\\""']
    assert "extra" not in patched and "extra" not in stored(http, f"{CM_PATH}/cm")


def test_a_strict_patch_is_refused_as_invalid(http: Http) -> None:
    assert http.send("POST", CM_PATH, configmap("cm"))[0] == 201
    code, _, status = http.send("PATCH", f"{CM_PATH}/cm", {"extra": 1}, content_type="application/merge-patch+json",
                                query="fieldValidation=Strict")
    assert code == 422
    assert status["details"]["causes"][0]["field"] == "patch"
    assert status["details"]["causes"][0]["message"].endswith('strict decoding error: unknown field "extra"')
    assert "extra" not in stored(http, f"{CM_PATH}/cm")


def test_a_status_write_drops_the_field(http: Http) -> None:
    path = "/api/v1/namespaces/default/pods"
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    assert http.send("POST", path, pod)[0] == 201
    code, warnings, _ = http.send("PATCH", f"{path}/p/status", {"status": {"madeUp": "x"}},
                                  content_type="application/merge-patch+json")
    assert code == 200
    assert warnings == ['299 - "unknown field \\"status.madeUp\\""']
    assert "madeUp" not in stored(http, f"{path}/p").get("status", {})


def test_the_python_clients_dynamic_api_gets_the_object_back_without_it(fakekube) -> None:
    """The typed client refuses unknown fields itself; its dynamic client sends them."""
    configmaps = dynamic.DynamicClient(fakekube.client()).resources.get(api_version="v1", kind="ConfigMap")
    created = configmaps.create(body=configmap("cm", foo="bar"), namespace="default")
    assert "foo" not in created.to_dict()
    assert "foo" not in configmaps.get(name="cm", namespace="default").to_dict()
