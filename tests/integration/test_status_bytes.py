"""Status error bodies byte for byte, and ``watch=`` parsed as upstream parses it.

Clients that compare bytes (golden files, recorded fixtures) see what Go's encoding/json
writes for ``metav1.Status``: fields in struct order — ``kind, apiVersion, metadata,
status, message, reason, details, code`` — with ``details`` in ``name, group, kind, uid,
causes, retryAfterSeconds`` order and causes in ``reason, message, field`` order, empty
``omitempty`` fields left out, one compact line ending in a newline.
"""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

import pytest

from fakekube import Cluster
from fakekube.api.machinery import errors

CM = "/api/v1/namespaces/default/configmaps"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
RFC1123 = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
           "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
           "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


def raw(cluster: Cluster, method: str, path: str, body: Any = None) -> tuple[int, bytes, http.client.HTTPResponse]:
    """One request; the answer's status, its exact body bytes and the response."""
    url = urlsplit(cluster.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    headers = {"Accept": "application/json"}
    data = None
    if body is not None:
        headers["Content-Type"] = "application/json"
        data = json.dumps(body).encode()
    try:
        connection.request(method, path, body=data, headers=headers)
        response = connection.getresponse()
        return response.status, response.read(), response
    finally:
        connection.close()


def configmap(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}


def deployment(name: str) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 0, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}}


def test_404_is_upstreams_bytes(fakekube: Cluster) -> None:
    code, body, _ = raw(fakekube, "GET", f"{CM}/missing")
    assert code == 404
    assert body == (b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
                    b'"message":"configmaps \\"missing\\" not found","reason":"NotFound",'
                    b'"details":{"name":"missing","kind":"configmaps"},"code":404}\n')


def test_409_details_are_name_group_kind(fakekube: Cluster) -> None:
    fakekube.create(deployment("web"))
    code, body, _ = raw(fakekube, "POST", DEPLOYMENTS, deployment("web"))
    assert code == 409
    assert body == (b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
                    b'"message":"deployments.apps \\"web\\" already exists","reason":"AlreadyExists",'
                    b'"details":{"name":"web","group":"apps","kind":"deployments"},"code":409}\n')


def test_422_causes_are_reason_message_field(fakekube: Cluster) -> None:
    code, body, _ = raw(fakekube, "POST", CM, configmap("Bad_Name"))
    assert code == 422
    expected = ('{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
                f'"message":"ConfigMap \\"Bad_Name\\" is invalid: metadata.name: Invalid value: \\"Bad_Name\\": {RFC1123}",'
                '"reason":"Invalid","details":{"name":"Bad_Name","kind":"ConfigMap","causes":[{"reason":"FieldValueInvalid",'
                f'"message":"Invalid value: \\"Bad_Name\\": {RFC1123}","field":"metadata.name"}}]}},"code":422}}\n')
    assert body.decode() == expected


@pytest.mark.fakekube(history_limit=5)
def test_410_watch_error_event_is_upstreams_bytes(fakekube: Cluster) -> None:
    for i in range(12):
        fakekube.create(configmap(f"n{i}"))
    code, body, _ = raw(fakekube, "GET", f"{CM}?watch=true&resourceVersion=2&timeoutSeconds=5")
    assert code == 200
    line, = body.splitlines(keepends=True)
    prefix = (b'{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
              b'"message":"too old resource version: 2 (')
    assert line.startswith(prefix)
    assert line.endswith(b')","reason":"Expired","code":410}}\n')
    assert list(json.loads(line)["object"]) == ["kind", "apiVersion", "metadata", "status", "message", "reason", "code"]


def test_python_api_error_status_has_upstreams_key_order() -> None:
    """Call sites may build details in any order; the Status puts them in struct order
    and drops empty fields, as Go's omitempty does."""
    error = errors.ApiError(429, "TooManyRequests", "slow down", {
        "retryAfterSeconds": 3, "causes": [{"field": "spec", "message": "m", "reason": "R"}, {"message": "only"}],
        "uid": "u-1", "kind": "pods", "group": "", "name": "p"}, metadata={"continue": "x"})
    status = error.status()
    assert list(status) == ["kind", "apiVersion", "metadata", "status", "message", "reason", "details", "code"]
    assert json.dumps(status["details"], separators=(",", ":")) == (
        '{"name":"p","kind":"pods","uid":"u-1","causes":[{"reason":"R","message":"m","field":"spec"},'
        '{"message":"only"}],"retryAfterSeconds":3}')
    assert status["metadata"] == {"continue": "x"}
    assert list(errors.ApiError(500, "", "boom").status()) == ["kind", "apiVersion", "metadata", "status", "message",
                                                               "code"]


# --- watch= ------------------------------------------------------------------------

def _answer_kind(cluster: Cluster, path: str) -> str:
    """``watch`` if the GET opened a stream of events, else the kind it returned."""
    url = urlsplit(cluster.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        connection.request("GET", path, headers={"Accept": "application/json"})
        response = connection.getresponse()
        assert response.status == 200
        first = json.loads(response.readline())
        return "watch" if set(first) == {"type", "object"} else first["kind"]
    finally:
        connection.close()


@pytest.mark.parametrize("query, expected", [
    ("watch=true", "watch"),
    ("watch=", "watch"),  # an empty value is true: only absent, 0 and false are false
    ("watch", "watch"),
    ("watch=1", "watch"),
    ("watch=yes", "watch"),
    ("watch=no", "watch"),
    ("watch=f", "watch"),  # not strconv.ParseBool: "f" is not false here
    ("watch=%20false", "watch"),
    ("watch=00", "watch"),
    ("watch=0", "ConfigMapList"),
    ("watch=false", "ConfigMapList"),
    ("watch=FALSE", "ConfigMapList"),
    ("watch=fAlSe", "ConfigMapList"),
    ("watch=fal%C5%BFe", "ConfigMapList"),  # strings.EqualFold folds U+017F (long s) to s
    ("watch=false&watch=true", "ConfigMapList"),  # the first value counts
    ("watch=1&watch=0", "watch"),
    ("", "ConfigMapList"),
])
def test_watch_parameter_is_parsed_as_upstream(fakekube: Cluster, query: str, expected: str) -> None:
    fakekube.create(configmap("cm"))
    assert _answer_kind(fakekube, f"{CM}?{query}&timeoutSeconds=5") == expected


def test_a_named_get_ignores_watch(fakekube: Cluster) -> None:
    """Upstream routes GET on an object to GetResource, which reads GetOptions only."""
    fakekube.create(configmap("cm"))
    assert _answer_kind(fakekube, f"{CM}/cm?watch=true") == "ConfigMap"
