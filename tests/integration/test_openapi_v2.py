"""``/openapi/v2`` over HTTP: JSON or gnostic protobuf by Accept, upstream's ETag and 304,
and a document that follows the registry (a CRD's schema appears once it is served)."""

from __future__ import annotations

import hashlib
import http.client
import json
from urllib.parse import urlsplit

from kubernetes import client

from fakekube import Cluster
from fakekube.api.wire.protobuf.wire import iter_fields
from tests.integration.test_crd_serving import crd_body
from tests.integration.test_request_semantics import request

PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"


def definition_names(protobuf: bytes) -> list[str]:
    [definitions] = [value for number, _, value in iter_fields(protobuf) if number == 9]
    assert isinstance(definitions, bytes)
    names = []
    for number, _, named in iter_fields(definitions):
        assert isinstance(named, bytes)
        names += [value.decode() for n, _, value in iter_fields(named) if n == 1 and isinstance(value, bytes)]
    return names


def get(cluster: Cluster, **headers: str) -> tuple[int, bytes, dict[str, str]]:
    """``GET /openapi/v2`` with ``headers`` (underscores for dashes): status, bytes, headers."""
    url = urlsplit(cluster.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        connection.request("GET", "/openapi/v2", headers={k.replace("_", "-"): v for k, v in headers.items()})
        response = connection.getresponse()
        return response.status, response.read(), dict(response.getheaders())
    finally:
        connection.close()


def test_json_and_protobuf_with_etag(fakekube: Cluster) -> None:
    code, data, headers = get(fakekube, Accept="application/json")
    assert code == 200 and headers["Content-Type"] == "application/json"
    doc = json.loads(data)
    assert doc["swagger"] == "2.0" and doc["info"] == {"title": "Kubernetes", "version": "1.36"}
    assert headers["ETag"] == '"' + hashlib.sha512(data).hexdigest().upper() + '"'
    patch = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert "fieldValidation" in [p.get("name") for p in patch["parameters"]]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "apps", "kind": "Deployment", "version": "v1"}
    assert doc["definitions"]["io.k8s.api.apps.v1.Deployment"]["properties"]["spec"] == {
        "$ref": "#/definitions/io.k8s.api.apps.v1.DeploymentSpec",
        "description": "Specification of the desired behavior of the Deployment."}

    code, pb, pb_headers = get(fakekube, Accept=PROTOBUF)
    assert code == 200 and pb_headers["Content-Type"] == "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    assert pb_headers["ETag"] == headers["ETag"]
    assert sorted(definition_names(pb)) == sorted(doc["definitions"])
    assert get(fakekube, Accept=PROTOBUF, If_None_Match=headers["ETag"])[0] == 304


def test_parameters_are_shared_under_upstreams_names(fakekube: Cluster) -> None:
    """kube-openapi shares every parameter but name, dryRun, fieldValidation and a kind's
    own body under ``<name>-<hash of its JSON>``; the names are kube-apiserver 1.36's."""
    doc = json.loads(get(fakekube, Accept="application/json")[1])
    post = doc["paths"]["/api/v1/namespaces/{namespace}/configmaps"]["post"]["parameters"]
    assert [p.get("name") or p["$ref"] for p in post] == [
        "body", "dryRun", "#/parameters/fieldManager-Qy4HdaTW", "fieldValidation"]
    assert doc["parameters"]["fieldManager-Qy4HdaTW"]["description"].startswith(
        "fieldManager is a name associated with the actor or entity that is making these changes. The value must")
    listing = doc["paths"]["/api/v1/namespaces/{namespace}/configmaps"]["get"]["parameters"]
    assert {"$ref": "#/parameters/labelSelector-5Zw57w4C"} in listing
    assert doc["parameters"]["namespace-vgWSWtn3"]["in"] == "path"
    deployment = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert deployment["consumes"] == ["application/json-patch+json", "application/merge-patch+json",
                                      "application/strategic-merge-patch+json", "application/apply-patch+yaml"]


def test_a_media_type_it_does_not_serve_is_406(fakekube: Cluster) -> None:
    code, data, headers = get(fakekube, Accept="application/xml")
    assert (code, data, "Content-Type" in headers) == (406, b"", False)
    assert get(fakekube, Accept="application/xml, */*;q=0.5")[0] == 200


def test_a_served_crd_appears_in_the_document(fakekube: Cluster) -> None:
    _, before, response = request(fakekube, "GET", "/openapi/v2")
    assert "com.example.stable.v1.CronTab" not in before["definitions"]
    client.ApiextensionsV1Api(fakekube.client()).create_custom_resource_definition(crd_body())
    fakekube.settle()
    _, after, changed = request(fakekube, "GET", "/openapi/v2")
    assert changed.getheader("ETag") != response.getheader("ETag")
    crontab = after["definitions"]["com.example.stable.v1.CronTab"]
    assert crontab["properties"]["spec"]["properties"]["cronSpec"] == {"type": "string"}
    assert "/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}" in after["paths"]


def test_operations_produce_and_consume_what_upstreams_routes_list(fakekube: Cluster) -> None:
    """Serializers in registration order (JSON, YAML, protobuf, then their watch streams),
    ``*/*`` consumed by a resource operation without a body, pods/log's plain text first,
    discovery and /version consuming what they produce, the OIDC documents consuming nothing."""
    code, body, _ = get(fakekube)
    paths = json.loads(body)["paths"]
    serializers = ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"]
    listing = paths["/api/v1/namespaces/{namespace}/configmaps"]["get"]
    assert (listing["consumes"], listing["produces"]) == (["*/*"], serializers + [
        "application/json;stream=watch", "application/vnd.kubernetes.protobuf;stream=watch"])
    assert paths["/api/v1/namespaces/{namespace}/configmaps"]["post"]["produces"] == serializers
    assert paths["/api/v1/namespaces/{namespace}/pods/{name}/log"]["get"]["produces"] == ["text/plain"] + serializers
    assert paths["/apis/apps/v1/"]["get"]["consumes"] == serializers
    assert paths["/version/"]["get"]["consumes"] == ["application/json"]
    assert "consumes" not in paths["/openid/v1/jwks/"]["get"]


def test_the_protobuf_writes_extensions_as_go_yaml_does(fakekube: Cluster) -> None:
    """The core group is ``group: ""`` (go-yaml), and kube-aggregator's own operations list
    their group-version-kind in its Go struct's field order."""
    code, data, _ = get(fakekube, Accept=PROTOBUF)
    assert code == 200
    assert b'group: ""\nkind: ConfigMap\nversion: v1\n' in data and b"group: ''" not in data
    assert b"group: apiregistration.k8s.io\nversion: v1\nkind: APIService\n" in data
    assert b"group: apps\nkind: Deployment\nversion: v1\n" in data
