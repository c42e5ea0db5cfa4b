"""The ``/openapi/v2`` document: v3 → v2 conversion and gnostic's protobuf encoding, read
back field by field with the wire reader (what kubectl 1.27/1.28 decode)."""

from __future__ import annotations

import yaml

from fakekube.api.verbs.openapi_v2 import swagger, v2_schema, wants_protobuf
from fakekube.api.wire.protobuf.openapiv2 import encode_document
from fakekube.api.wire.protobuf.wire import iter_fields

GVK = {"group": "apps", "kind": "Deployment", "version": "v1"}
V3 = {
    "components": {"schemas": {
        "io.k8s.api.apps.v1.Deployment": {"type": "object", "properties": {
            "spec": {"allOf": [{"$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec"}],
                     "description": "Specification."},
            "port": {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.util.intstr.IntOrString"}},
            "x-kubernetes-group-version-kind": [GVK]},
        "io.k8s.api.apps.v1.DeploymentSpec": {"type": "object", "required": ["selector"],
                                              "properties": {"replicas": {"type": "integer", "format": "int32"}}},
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"format": "int-or-string",
                                                            "oneOf": [{"type": "integer"}, {"type": "string"}]},
    }},
    "paths": {"/apis/apps/v1/namespaces/{namespace}/deployments/{name}": {
        "parameters": [{"in": "path", "name": "name", "required": True, "description": "name",
                        "schema": {"type": "string", "uniqueItems": True}}],
        "patch": {"operationId": "patchAppsV1NamespacedDeployment", "tags": ["apps_v1"],
                  "parameters": [{"in": "query", "name": "fieldValidation", "description": "how",
                                  "schema": {"type": "string", "uniqueItems": True}}],
                  "requestBody": {"content": {"application/merge-patch+json": {
                      "schema": {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}}},
                      "required": True},
                  "responses": {"200": {"description": "OK", "content": {"application/json": {
                      "schema": {"$ref": "#/components/schemas/io.k8s.api.apps.v1.Deployment"}}}}},
                  "x-kubernetes-action": "patch", "x-kubernetes-group-version-kind": GVK}}},
}


def fields(data: bytes) -> list[tuple[int, object]]:
    return [(number, value) for number, _, value in iter_fields(data)]


def field(data: bytes, number: int) -> list[object]:
    return [value for n, value in fields(data) if n == number]


def test_v3_schemas_become_v2_ones() -> None:
    assert v2_schema(V3["components"]["schemas"]["io.k8s.api.apps.v1.Deployment"]["properties"]["spec"]) == {
        "$ref": "#/definitions/io.k8s.api.apps.v1.DeploymentSpec", "description": "Specification."}
    assert v2_schema(V3["components"]["schemas"]["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]) == {
        "format": "int-or-string", "type": "string"}


def test_operations_get_body_parameters_produces_and_schemes() -> None:
    doc = swagger([V3], "1.33")
    assert doc["info"] == {"title": "Kubernetes", "version": "v1.33.0"}
    patch = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert patch["consumes"] == ["application/merge-patch+json"] and patch["produces"] == ["application/json"]
    assert patch["parameters"][0] == {"in": "body", "name": "body", "required": True,
                                      "schema": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}}
    assert patch["parameters"][1] == {"description": "how", "in": "query", "name": "fieldValidation", "type": "string",
                                      "uniqueItems": True}
    assert patch["responses"]["200"]["schema"] == {"$ref": "#/definitions/io.k8s.api.apps.v1.Deployment"}
    assert doc["definitions"]["io.k8s.apimachinery.pkg.apis.meta.v1.Patch"] == {}  # no such schema: arbitrary


def test_the_protobuf_document_reads_back() -> None:
    data = encode_document(swagger([V3], "1.33"))
    assert field(data, 1) == [b"2.0"]
    [info] = field(data, 2)
    assert fields(info) == [(1, b"Kubernetes"), (2, b"v1.33.0")]
    [paths] = field(data, 8)
    [named_path] = field(paths, 2)
    assert field(named_path, 1) == [b"/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]
    [item] = field(named_path, 2)
    [operation] = field(item, 8)  # PathItem.patch
    assert field(operation, 5) == [b"patchAppsV1NamespacedDeployment"]
    query = [field(field(field(p, 1)[0], 2)[0], 3) for p in field(operation, 8)[1:]]  # ParametersItem → Parameter → NonBody → query
    assert field(query[0][0], 4) == [b"fieldValidation"] and field(query[0][0], 6) == [b"string"]
    extensions = {field(e, 1)[0]: yaml.safe_load(field(field(e, 2)[0], 2)[0]) for e in field(operation, 13)}
    assert extensions == {b"x-kubernetes-action": "patch", b"x-kubernetes-group-version-kind": GVK}
    [definitions] = field(data, 9)
    names = [field(named, 1)[0] for named in field(definitions, 1)]
    assert names == sorted(names) and b"io.k8s.api.apps.v1.DeploymentSpec" in names
    spec = next(field(named, 2)[0] for named in field(definitions, 1) if field(named, 1) == [b"io.k8s.api.apps.v1.DeploymentSpec"])
    assert field(spec, 19) == [b"selector"]  # required
    assert fields(field(spec, 22)[0]) == [(1, b"object")]  # TypeItem


def test_protobuf_is_served_only_when_asked_for_first() -> None:
    assert wants_protobuf("application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
    assert wants_protobuf("application/com.github.proto-openapi.spec.v2.v1.0+protobuf, application/json")
    assert not wants_protobuf("application/json, application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
    assert not wants_protobuf("")
