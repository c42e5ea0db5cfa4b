"""OpenAPI v3 documents: structure kubectl relies on, converted schemas, caching."""

import hashlib
import json

import pytest

from fakekube.api.verbs import openapi as o
from fakekube.api.types import builtin_registry
from fakekube.api.wire.schema import load

REG = builtin_registry()
SCHEMAS = load()


@pytest.fixture(scope="module")
def service():
    return o.OpenAPIV3(REG, SCHEMAS)


@pytest.fixture(scope="module")
def core(service):
    data, _ = service.document("api/v1")
    return json.loads(data)


def test_index_lists_every_group_version_with_sha512_hash(service):
    index = service.index()
    roots = {".well-known/openid-configuration", "api", "apis", "openid/v1/jwks", "version"}
    groups = {"apis/" + g for g, _ in REG.group_versions() if g}
    assert set(index["paths"]) == {o.gv_path(g, v) for g, v in REG.group_versions()} | roots | groups
    data, tag = service.document("apis/apps/v1")
    assert tag == hashlib.sha512(data).hexdigest().upper()
    assert index["paths"]["apis/apps/v1"]["serverRelativeURL"] == f"/openapi/v3/apis/apps/v1?hash={tag}"


def test_documents_are_cached_and_deterministic(service):
    assert service.document("api/v1") is service.document("/api/v1/")
    fresh = o.OpenAPIV3(REG, SCHEMAS).document("api/v1")
    assert fresh == service.document("api/v1")
    assert service.document("apis/nope/v1") is None


def test_document_header(core):
    assert core["openapi"] == "3.0.0"
    assert core["info"]["title"] == "Kubernetes"


def test_patch_operation_has_field_validation_and_gvk(core):
    patch = core["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"]
    assert "fieldValidation" in [p["name"] for p in patch["parameters"]]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "", "kind": "Pod", "version": "v1"}
    assert patch["x-kubernetes-action"] == "patch"
    assert patch["operationId"] == "patchCoreV1NamespacedPod"
    assert "application/strategic-merge-patch+json" in patch["requestBody"]["content"]


def test_operations_and_subresources(core):
    paths = core["paths"]
    coll = paths["/api/v1/namespaces/{namespace}/pods"]
    assert {k for k in coll if k != "parameters"} == {"get", "post", "delete"}
    assert coll["get"]["x-kubernetes-action"] == "list" and coll["delete"]["x-kubernetes-action"] == "deletecollection"
    evict = paths["/api/v1/namespaces/{namespace}/pods/{name}/eviction"]["post"]
    assert evict["x-kubernetes-group-version-kind"] == {"group": "policy", "kind": "Eviction", "version": "v1"}
    assert "/api/v1/pods" in paths and "/api/v1/nodes/{name}/status" in paths
    assert paths["/api/v1/watch/namespaces/{namespace}/pods"]["get"]["x-kubernetes-action"] == "watchlist"


def test_scale_subresource_in_apps(service):
    doc = json.loads(service.document("apis/apps/v1")[0])
    scale = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]
    assert scale["patch"]["x-kubernetes-group-version-kind"]["kind"] == "Scale"
    assert "io.k8s.api.autoscaling.v1.Scale" in doc["components"]["schemas"]
    assert scale["get"]["operationId"] == "readAppsV1NamespacedDeploymentScale"


def test_every_ref_resolves(core):
    schemas = core["components"]["schemas"]
    text = json.dumps(core)
    for ref in set(part.split('"')[0] for part in text.split('"#/components/schemas/')[1:]):
        assert ref in schemas, ref
    for name in ("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
                 "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions", "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"):
        assert name in schemas


def test_schema_conversion_matches_upstream_v3_shape(core):
    schemas = core["components"]["schemas"]
    pod = schemas["io.k8s.api.core.v1.Pod"]
    assert pod["type"] == "object"
    assert pod["x-kubernetes-group-version-kind"] == [{"group": "", "kind": "Pod", "version": "v1"}]
    assert pod["properties"]["kind"] == {"description": pod["properties"]["kind"]["description"], "type": "string"}
    assert pod["properties"]["spec"]["allOf"] == [{"$ref": "#/components/schemas/io.k8s.api.core.v1.PodSpec"}]
    containers = schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert containers["type"] == "array"
    assert containers["items"] == {"$ref": "#/components/schemas/io.k8s.api.core.v1.Container"}
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert containers["x-kubernetes-patch-strategy"] == "merge"
    assert schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["format"] == "int-or-string"
    assert not list(_list_types(schemas))


def _list_types(node):
    """Every ``type`` that is still a JSON-schema list (upstream v3 never has one)."""
    if isinstance(node, dict):
        if isinstance(node.get("type"), list):
            yield node["type"]
        for key, value in node.items():
            if key != "enum":
                yield from _list_types(value)
    elif isinstance(node, list):
        for item in node:
            yield from _list_types(item)


def test_convert_schema_rules():
    assert o.convert_schema({"type": ["integer", "null"], "format": "int32"}) == {"type": "integer", "format": "int32"}
    assert o.convert_schema({"$ref": "#/$defs/a.B"}) == {"$ref": "#/components/schemas/a.B"}
    assert o.convert_schema({"$ref": "#/$defs/a.B", "description": "x"}) == {
        "allOf": [{"$ref": "#/components/schemas/a.B"}], "description": "x"}
    assert o.convert_schema({"type": "object", "additionalProperties": {"type": ["string", "null"]}}) == {
        "type": "object", "additionalProperties": {"type": "string"}}


def test_index_function_hashes_given_documents():
    index = o.openapi_v3_index(REG, {"api/v1": b"abc"})
    assert index == {"paths": {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=" + hashlib.sha512(b"abc").hexdigest().upper()}}}
    assert json.loads(o.openapi_v3_document(REG, SCHEMAS, "coordination.k8s.io", "v1"))["paths"]
    assert o.openapi_v3_document(REG, SCHEMAS, "nope", "v1") is None


def test_token_subresource_and_create_only_reviews_in_openapi():
    from fakekube.api.wire import schema as schema_module
    from fakekube.api.verbs.openapi import build_document
    from fakekube.api.types import builtin_registry

    registry, schemas = builtin_registry(), schema_module.load("1.33")
    core = build_document(registry, schemas, "", "v1")
    post = core["paths"]["/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token"]["post"]
    assert post["operationId"] == "createCoreV1NamespacedServiceAccountToken"
    assert post["x-kubernetes-group-version-kind"] == {"group": "authentication.k8s.io", "kind": "TokenRequest", "version": "v1"}
    authz = build_document(registry, schemas, "authorization.k8s.io", "v1")
    assert set(authz["paths"]["/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"]) == {"parameters", "post"}
    assert not any(path.endswith("selfsubjectaccessreviews/{name}") for path in authz["paths"])


def test_properties_carry_the_defaults_upstreams_generator_gives(service):
    """kube-apiserver's v3 documents give a non-pointer struct property ``default: {}``, a
    non-pointer scalar without omitempty its zero, and a ``+default=`` marker its value;
    pointers, slices, maps and types with their own JSON (Time, Quantity) get none."""
    apps = json.loads(service.document("apis/apps/v1")[0])["components"]["schemas"]
    deployment = apps["io.k8s.api.apps.v1.Deployment"]["properties"]
    assert [deployment[name].get("default") for name in ("metadata", "spec", "status")] == [{}, {}, {}]
    assert "default" not in deployment["apiVersion"]
    assert "default" not in apps["io.k8s.api.apps.v1.DeploymentStrategy"]["properties"]["rollingUpdate"]
    core = json.loads(service.document("api/v1")[0])["components"]["schemas"]
    assert core["io.k8s.api.core.v1.Container"]["properties"]["name"]["default"] == ""
    assert "default" not in core["io.k8s.api.core.v1.Container"]["properties"]["image"]  # omitempty
    assert core["io.k8s.api.core.v1.ContainerPort"]["properties"]["protocol"]["default"] == "TCP"  # +default
    assert core["io.k8s.api.core.v1.ContainerPort"]["properties"]["containerPort"]["default"] == 0
    assert core["io.k8s.api.core.v1.ConfigMapEnvSource"]["properties"]["name"]["default"] == ""  # embedded
    assert "default" not in core["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]["properties"]["creationTimestamp"]
    assert "default" not in core["io.k8s.apimachinery.pkg.apis.meta.v1.APIResource"]["properties"]["verbs"]


def test_info_and_parameters_read_as_upstreams(core):
    assert core["info"] == {"title": "Kubernetes", "version": "1.33"}  # the release, as upstream writes it
    item = core["paths"]["/api/v1/namespaces/{namespace}/configmaps/{name}"]
    pretty = next(p for p in item["parameters"] if p["name"] == "pretty")
    assert pretty["description"] == ("If 'true', then the output is pretty printed. Defaults to 'false' unless the "
                                     "user-agent indicates a browser or command-line HTTP tool (curl and wget).")
    patch_manager = next(p for p in item["patch"]["parameters"] if p["name"] == "fieldManager")
    assert patch_manager["description"].endswith("but optional for non-apply patch types (JsonPatch, MergePatch, "
                                                 "StrategicMergePatch).")
    assert "required" not in item["delete"]["requestBody"]  # a DELETE may send no options
