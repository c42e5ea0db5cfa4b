"""``/openapi/v3`` over HTTP as kube-apiserver answers it: the index (plain text, as the
aggregator writes it without a Content-Type), a group-version nobody serves (a bare 404)
and a stale hash (a bare 301 to the current one)."""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

from fakekube import Cluster


def get(cluster: Cluster, path: str) -> tuple[int, bytes, dict[str, str]]:
    url = urlsplit(cluster.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read(), dict(response.getheaders())
    finally:
        connection.close()


def test_the_index_is_plain_text(fakekube: Cluster) -> None:
    code, data, headers = get(fakekube, "/openapi/v3")
    assert (code, headers["Content-Type"]) == (200, "text/plain; charset=utf-8")
    assert b'"apis/apps/v1":{"serverRelativeURL":"/openapi/v3/apis/apps/v1?hash=' in data.replace(b" ", b"")


def test_an_unknown_group_version_is_a_bare_404(fakekube: Cluster) -> None:
    code, data, headers = get(fakekube, "/openapi/v3/apis/nope.example.com/v1")
    assert (code, data, "Content-Type" in headers) == (404, b"", False)


def test_a_stale_hash_redirects_with_no_body(fakekube: Cluster) -> None:
    code, data, headers = get(fakekube, "/openapi/v3/apis/apps/v1?hash=0000")
    assert (code, data, headers["Content-Type"]) == (301, b"", "application/json")
    assert headers["Location"].startswith("/openapi/v3/apis/apps/v1?hash=")
    assert headers["ETag"] == '"' + headers["Location"].rsplit("=", 1)[1] + '"'


def test_the_index_lists_the_documents_that_are_not_a_group_versions(fakekube: Cluster) -> None:
    """kube-apiserver's discovery, /version and service-account issuer handlers have their
    own documents: ``api``, ``apis``, one per group, ``version`` and the OIDC two."""
    code, data, _ = get(fakekube, "/openapi/v3")
    paths = json.loads(data)["paths"]
    for path in (".well-known/openid-configuration", "api", "apis", "apis/apps", "apis/rbac.authorization.k8s.io",
                 "openid/v1/jwks", "version"):
        code, body, _ = get(fakekube, paths[path]["serverRelativeURL"])
        assert code == 200, path
    code, body, _ = get(fakekube, "/openapi/v3/apis/rbac.authorization.k8s.io")
    document = json.loads(body)
    operation = document["paths"]["/apis/rbac.authorization.k8s.io/"]["get"]
    assert (operation["operationId"], operation["tags"], operation["description"]) == (
        "getRbacAuthorizationAPIGroup", ["rbacAuthorization"], "get information of a group")
    assert sorted(document["components"]["schemas"]) == [
        "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup", "io.k8s.apimachinery.pkg.apis.meta.v1.GroupVersionForDiscovery",
        "io.k8s.apimachinery.pkg.apis.meta.v1.ServerAddressByClientCIDR"]
    code, body, _ = get(fakekube, "/openapi/v3/version")
    info = json.loads(body)["components"]["schemas"]["io.k8s.apimachinery.pkg.version.Info"]["properties"]
    assert (info["gitVersion"]["default"], "default" in info["emulationMajor"]) == ("", False)
    code, body, _ = get(fakekube, "/openapi/v3/openid/v1/jwks")
    content = json.loads(body)["paths"]["/openid/v1/jwks/"]["get"]["responses"]["200"]["content"]
    assert content == {"application/jwk-set+json": {"schema": {"type": "string"}}}


def test_v2_carries_the_discovery_and_version_paths(fakekube: Cluster) -> None:
    code, body, _ = get(fakekube, "/openapi/v2")
    document = json.loads(body)
    assert document["paths"]["/version/"]["get"]["operationId"] == "getCodeVersion"
    assert document["paths"]["/api/"]["get"]["responses"]["200"]["schema"] == {
        "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions"}
    assert "io.k8s.apimachinery.pkg.version.Info" in document["definitions"]


def test_group_version_documents_carry_what_upstream_publishes_beside_the_schema_source(fakekube: Cluster) -> None:
    """The bearer-token security scheme; Quantity's and IntOrString's own descriptions;
    apiextensions' JSON (JSONSchemaProps' ``default``); a defaulted ref wrapped in allOf;
    and only the definitions the document's operations reach (a create-only group has no
    DeleteOptions, WatchEvent or Status)."""
    documents = {}
    for path in ("api/v1", "apis/apiextensions.k8s.io/v1", "apis/certificates.k8s.io/v1",
                 "apis/authentication.k8s.io/v1"):
        code, body, _ = get(fakekube, "/openapi/v3/" + path)
        documents[path] = json.loads(body)["components"]
    assert documents["api/v1"]["securitySchemes"] == {"BearerToken": {
        "type": "apiKey", "description": "Bearer Token authentication", "name": "authorization", "in": "header"}}
    core = documents["api/v1"]["schemas"]
    assert core["io.k8s.apimachinery.pkg.api.resource.Quantity"]["description"].startswith(
        "Quantity is a fixed-point representation of a number.")
    assert core["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["description"].startswith(
        "IntOrString is a type that can hold an int32 or a string.")
    assert documents["apis/apiextensions.k8s.io/v1"]["schemas"][
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON"]["description"].startswith("JSON represents any valid")
    csr = documents["apis/certificates.k8s.io/v1"]["schemas"]["io.k8s.api.certificates.v1.CertificateSigningRequest"]
    assert csr["properties"]["metadata"] == {
        "allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}], "default": {}}
    authentication = set(documents["apis/authentication.k8s.io/v1"]["schemas"])
    assert not authentication & {"io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
                                 "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent",
                                 "io.k8s.apimachinery.pkg.apis.meta.v1.Status"}
    code, body, _ = get(fakekube, "/openapi/v2")
    definitions = json.loads(body)["definitions"]
    assert definitions["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["description"] == core[
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["description"]
    assert definitions["io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON"] != {}


def v3_paths(cluster: Cluster, path: str) -> dict:
    code, body, _ = get(cluster, "/openapi/v3/" + path)
    assert code == 200
    return json.loads(body)["paths"]


def names(params: list[dict]) -> list[str]:
    return [param["name"] for param in params]


def test_operations_are_laid_out_as_upstreams_route_builder_does(fakekube: Cluster) -> None:
    """A parameter every operation of a path has is the path's, each list sorted by name;
    articles as GetArticleForNoun; a DELETE documents what it answers; pods/log offers the
    serializers too; a type without watch is only listed."""
    core = v3_paths(fakekube, "api/v1")
    exec_path = core["/api/v1/namespaces/{namespace}/pods/{name}/exec"]
    assert names(exec_path["parameters"]) == ["command", "container", "name", "namespace", "stderr", "stdin",
                                              "stdout", "tty"]
    assert "parameters" not in exec_path["get"]
    all_namespaces = core["/api/v1/configmaps"]
    assert "parameters" not in all_namespaces["get"] and "pretty" in names(all_namespaces["parameters"])
    reviews = v3_paths(fakekube, "apis/authentication.k8s.io/v1")["/apis/authentication.k8s.io/v1/tokenreviews"]
    assert names(reviews["parameters"]) == ["dryRun", "fieldManager", "fieldValidation", "pretty"]
    assert core["/api/v1/namespaces/{namespace}/events"]["post"]["description"] == "create an Event"
    assert core["/api/v1/namespaces/{namespace}/endpoints"]["post"]["description"] == "create Endpoints"
    assert core["/api/v1/componentstatuses"]["get"]["description"] == "list objects of kind ComponentStatus"
    claim = core["/api/v1/namespaces/{namespace}/persistentvolumeclaims/{name}"]["delete"]["responses"]["200"]
    assert claim["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/io.k8s.api.core.v1.PersistentVolumeClaim"}
    namespace = core["/api/v1/namespaces/{name}"]["delete"]["responses"]["200"]
    assert namespace["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Status"}
    log = core["/api/v1/namespaces/{namespace}/pods/{name}/log"]
    assert "pretty" in names(log["parameters"])
    assert sorted(log["get"]["responses"]["200"]["content"]) == [
        "application/json", "application/vnd.kubernetes.protobuf", "application/yaml", "text/plain"]


def test_list_options_gain_the_shard_selector_in_1_36(fakekube: Cluster) -> None:
    listing = v3_paths(fakekube, "apis/apps/v1")["/apis/apps/v1/namespaces/{namespace}/deployments"]
    assert "shardSelector" in names(listing["get"]["parameters"])
    assert "shardSelector" in names(listing["delete"]["parameters"])
    with Cluster(kubernetes_version="1.35") as older:
        listing = v3_paths(older, "apis/apps/v1")["/apis/apps/v1/namespaces/{namespace}/deployments"]
    assert "shardSelector" not in names(listing["get"]["parameters"])


def test_documents_are_written_as_kube_openapi_marshals_them(fakekube: Cluster) -> None:
    """Go structs' field order, maps sorted, Go's HTML-safe escapes, an operation's kind as
    a GroupVersionKind struct; DeleteOptions lists its kinds of the core group and of this
    group-version only (v2 keeps the whole list); the index has no trailing newline. The
    replay (api-openapi #0) holds the 1.36 hashes equal to a real apiserver's."""
    code, body, _ = get(fakekube, "/openapi/v3/apis/apps/v1")
    assert body.startswith(b'{"openapi":"3.0.0","info":{"title":"Kubernetes","version":"1.36"},"paths":{"/apis/apps/v1/":')
    assert b'"minReadySeconds":{"description":"Minimum number of seconds' in body
    assert b'"x-kubernetes-group-version-kind":{"group":"apps","version":"v1","kind":"Deployment"}' in body
    schemas = json.loads(body)["components"]["schemas"]
    assert schemas["io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"]["x-kubernetes-group-version-kind"] == [
        {"group": "", "kind": "DeleteOptions", "version": "v1"}, {"group": "apps", "kind": "DeleteOptions", "version": "v1"}]
    code, body, _ = get(fakekube, "/openapi/v3/api/v1")
    assert b"0 \\u003c x \\u003c 65536" in body
    code, body, _ = get(fakekube, "/openapi/v2")
    kinds = json.loads(body)["definitions"]["io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"]["x-kubernetes-group-version-kind"]
    assert len(kinds) > 2
    code, body, _ = get(fakekube, "/openapi/v3")
    assert body.endswith(b"}}}")
