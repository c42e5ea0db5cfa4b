"""The ``/openapi/v2`` document: v3 → v2 conversion and gnostic's protobuf encoding, read
back field by field with the wire reader (what kubectl 1.27/1.28 decode); documents
spliced from cached pieces equal from-scratch ones, within their memory bounds."""

from __future__ import annotations

import functools
import json
from typing import Callable, NamedTuple

import yaml

from fakekube.api.machinery import SizedLRU
from fakekube.api.verbs import openapi, openapi_v2
from fakekube.api.verbs.openapi_v2 import OpenAPIV2, swagger, v2_schema, wants_protobuf
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
    assert doc["info"] == {"title": "Kubernetes", "version": "1.33"}
    patch = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert patch["consumes"] == ["application/merge-patch+json"] and patch["produces"] == ["application/json"]
    # a generic body is shared: one entry of the document's parameters, named by its hash
    assert patch["parameters"][0] == {"$ref": "#/parameters/body-78PwaGsr"}
    assert doc["parameters"]["body-78PwaGsr"] == {"in": "body", "name": "body", "required": True,
                                                  "schema": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}}
    assert patch["parameters"][1] == {"description": "how", "in": "query", "name": "fieldValidation", "type": "string",
                                      "uniqueItems": True}
    assert patch["responses"]["200"]["schema"] == {"$ref": "#/definitions/io.k8s.api.apps.v1.Deployment"}
    assert doc["definitions"]["io.k8s.apimachinery.pkg.apis.meta.v1.Patch"] == {}  # no such schema: arbitrary


def test_the_protobuf_document_reads_back() -> None:
    data = encode_document(swagger([V3], "1.33"))
    assert field(data, 1) == [b"2.0"]
    [info] = field(data, 2)
    assert fields(info) == [(1, b"Kubernetes"), (2, b"1.33")]
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


def documents_of(*docs: dict) -> list[tuple[str, str, Callable[[], bytes]]]:
    """Sources for OpenAPIV2: a path, an ETag and the bytes of each v3 document."""
    sources = []
    for doc in docs:
        data = openapi.encode(doc)
        path = next(iter(doc["paths"])).split("/namespaces/")[0].strip("/")
        sources.append((path, openapi.etag(data), functools.partial(bytes, data)))
    return sources


def with_kind(kind: str, group: str) -> dict:
    """V3 with its Deployment renamed: another group-version's document."""
    text = json.dumps(V3).replace("Deployment", kind).replace("apps", group)
    return json.loads(text)


def test_assembled_documents_equal_from_scratch_ones() -> None:
    """Two group-versions share their IntOrString definition (converted once), refer to a
    definition neither has (an empty one is added), and are spliced in path order."""
    first, second = with_kind("Widget", "a.example.com"), with_kind("Gadget", "b.example.com")
    v2 = OpenAPIV2()
    served, data = v2.document("1.33", documents_of(second, first))
    wanted_json, wanted_protobuf, wanted_etag = openapi_v2.served(swagger([first, second], "1.33"))
    assert data == served.json() == wanted_json
    assert served.protobuf() == wanted_protobuf and served.etag == wanted_etag
    assert json.loads(wanted_json)["definitions"]["io.k8s.apimachinery.pkg.apis.meta.v1.Patch"] == {}
    assert v2.document("1.33", documents_of(first, second)) == (served, None)  # kept: no assembly


def test_pieces_past_the_budget_are_converted_again() -> None:
    """At the limit the least recently used pieces and documents are dropped: documents
    stay right, their pieces are converted again when needed."""
    docs = [with_kind(f"Kind{i}", f"g{i}.example.com") for i in range(3)]
    bounded, roomy = OpenAPIV2(max_piece_bytes=1, max_documents=1), OpenAPIV2()
    for state in (docs[:2], docs[1:], docs[:2], docs[1:]):
        wanted = openapi_v2.served(swagger(state, "1.33"))[0]
        assert bounded.document("1.33", documents_of(*state))[0].json() == wanted
        assert roomy.document("1.33", documents_of(*state))[0].json() == wanted
    assert roomy.pieces_built == 3  # each group-version once
    assert bounded.pieces_built == 6  # one piece is kept: only the last converted is found again


def test_a_sized_cache_drops_the_least_recently_used() -> None:
    class Value(NamedTuple):
        size_bytes: int

    cache: SizedLRU[str, Value] = SizedLRU(max_bytes=10, max_entries=3)
    for key, size in (("a", 4), ("b", 4), ("c", 1)):
        cache.put(key, Value(size))
    assert cache.get("a") == Value(4)  # now the most recently used
    cache.put("d", Value(4))  # 13 bytes: b goes
    assert (cache.get("b"), len(cache), cache.bytes) == (None, 3, 9)
    cache.put("e", Value(1))  # four entries: c, the least recently used, goes
    assert cache.get("c") is None and cache.get("a") is not None
    cache.put("huge", Value(100))  # larger than the budget: kept alone
    assert (len(cache), cache.get("huge"), cache.bytes) == (1, Value(100), 100)


#: A custom resource's v3 spec schema, and what kube-apiserver 1.36 publishes of it in
#: /openapi/v2 (recorded): what v2 cannot say is left out, as apiextensions'
#: ToStructuralOpenAPIV2 leaves it out.
CUSTOM_SPEC_V3 = {"type": "object", "required": ["n", "a"], "properties": {
    "n": {"type": "string", "nullable": True}, "a": {"type": "string"},
    "ios": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
    "arr": {"type": "array", "items": {"type": "object", "nullable": True, "properties": {"x": {"type": "string"}}}},
    "one": {"type": "object", "properties": {"x": {"type": "string"}}, "oneOf": [{"required": ["x"]}],
            "not": {"required": ["y"]}},
    "m": {"type": "object", "additionalProperties": {"type": "string", "nullable": True}, "required": ["k"]},
    "loose": {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": {"a": {"type": "string"}}},
    "embp": {"type": "object", "x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True,
             "properties": {"kind": {"type": "string"}}, "required": ["kind", "apiVersion"]},
}}
CUSTOM_SPEC_V2 = {"type": "object", "required": ["a"], "properties": {
    "n": {}, "a": {"type": "string"}, "ios": {"x-kubernetes-int-or-string": True},
    "arr": {"type": "array", "items": {}},
    "one": {"type": "object", "properties": {"x": {"type": "string"}}},
    "m": {"type": "object", "additionalProperties": {}},
    "loose": {"x-kubernetes-preserve-unknown-fields": True},
    "embp": {"x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True},
}}


def test_a_custom_resource_schema_keeps_in_v2_only_what_v2_can_say() -> None:
    assert v2_schema(CUSTOM_SPEC_V3) == CUSTOM_SPEC_V2


def test_a_custom_resource_whose_root_preserves_unknown_fields_is_an_open_object_in_v2() -> None:
    gvk = [{"group": "p.example.com", "kind": "Loose", "version": "v1"}]
    root = {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "x-kubernetes-group-version-kind": gvk,
            "properties": {"apiVersion": {"type": "string"}, "spec": {"type": "object"}}}
    document = swagger([{"components": {"schemas": {"com.example.p.v1.Loose": root}}}], "1.36")
    assert document["definitions"]["com.example.p.v1.Loose"] == {"type": "object", "x-kubernetes-group-version-kind": gvk}
