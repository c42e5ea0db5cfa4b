"""What kube-apiserver 1.36 answers, measured against it, for representations nobody
offers (discovery as a Table, an aggregated discovery version it does not serve,
PartialObjectMetadata of a list), the service-account issuer's OIDC documents, a bad
``timeoutSeconds`` and a watch of a kind without a list route."""

from __future__ import annotations

import base64
import json

import pytest

from fakekube import Cluster
from tests.integration.test_request_semantics import assert_status, request

ONLY = ("only the following media types are accepted: "
        "application/json, application/yaml, application/vnd.kubernetes.protobuf")
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


@pytest.mark.parametrize("path,accept", [
    ("/api/v1", TABLE),
    ("/apis/apps", TABLE),
    ("/api", TABLE),
    ("/apis", "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"),
    ("/apis", "application/json;g=apidiscovery.k8s.io;v=v9;as=APIGroupDiscoveryList"),
])
def test_discovery_offers_no_conversion(fakekube: Cluster, path: str, accept: str) -> None:
    status, answer, _ = request(fakekube, "GET", path, accept=accept)
    assert status == 406
    assert_status(answer, 406, "NotAcceptable", ONLY)
    assert answer["message"] == ONLY
    # with a plain clause besides, the legacy document
    assert request(fakekube, "GET", path, accept=accept + ",application/json")[0] == 200


def test_the_core_resource_list_has_no_api_version(fakekube: Cluster) -> None:
    _, core, _ = request(fakekube, "GET", "/api/v1")
    assert (core["kind"], "apiVersion" in core) == ("APIResourceList", False)
    _, apps, _ = request(fakekube, "GET", "/apis/apps/v1")
    assert (apps["kind"], apps["apiVersion"]) == ("APIResourceList", "v1")


def test_a_table_of_an_unknown_version_names_the_built_in_serializers(fakekube: Cluster) -> None:
    _, answer, _ = request(fakekube, "GET", "/api/v1/namespaces/default/configmaps",
                           accept="application/json;as=Table;v=v9;g=meta.k8s.io")
    assert_status(answer, 406, "NotAcceptable")
    assert answer["message"] == ONLY


def test_partial_object_metadata_is_one_object_s_and_the_list_kind_a_list_s(fakekube: Cluster) -> None:
    pom = "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"
    pom_list = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"
    _, answer, _ = request(fakekube, "GET", "/api/v1/namespaces/default/configmaps", accept=pom)
    assert_status(answer, 406, "NotAcceptable")
    assert answer["message"] == ("you requested PartialObjectMetadata, but the requested object is a list "
                                 "(*core.ConfigMapList)")
    _, answer, _ = request(fakekube, "GET", "/apis/apps/v1/namespaces/default/deployments", accept=pom)
    assert answer["message"].endswith("is a list (*apps.DeploymentList)")
    _, answer, _ = request(fakekube, "GET", "/api/v1/namespaces/default/configmaps/kube-root-ca.crt",
                           accept=pom_list)
    assert answer["message"] == ("you requested PartialObjectMetadataList, but the requested object is not a list "
                                 "(*core.ConfigMap)")
    status, listed, _ = request(fakekube, "GET", "/api/v1/namespaces/default/configmaps", accept=pom_list)
    assert (status, listed["kind"]) == (200, "PartialObjectMetadataList")


def test_the_oidc_discovery_document_and_signing_keys(fakekube: Cluster) -> None:
    status, config, response = request(fakekube, "GET", "/.well-known/openid-configuration")
    assert (status, response.getheader("Content-Type"), response.getheader("Cache-Control")) == (
        200, "application/json", "public, max-age=3600")
    assert config == {"issuer": "https://kubernetes.default.svc.cluster.local",
                      "jwks_uri": fakekube.url.rstrip("/") + "/openid/v1/jwks",
                      "response_types_supported": ["id_token"], "subject_types_supported": ["public"],
                      "id_token_signing_alg_values_supported": ["RS256"]}
    # the keys are served as a JWK set only: a client asking for JSON gets go-restful's 406
    _, refused, _ = request(fakekube, "GET", "/openid/v1/jwks")
    assert_status(refused, 406, "NotAcceptable", "406: Not Acceptable\n\nAvailable representations: "
                                                 "application/jwk-set+json")
    status, keys, response = request(fakekube, "GET", "/openid/v1/jwks", accept="application/jwk-set+json")
    assert (status, response.getheader("Content-Type")) == (200, "application/jwk-set+json")
    [key] = keys["keys"]
    assert (key["use"], key["kty"], key["alg"], key["e"]) == ("sig", "RSA", "RS256", "AQAB")
    _, issued, _ = request(fakekube, "POST", "/api/v1/namespaces/default/serviceaccounts/default/token",
                           {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}})
    header = issued["status"]["token"].split(".")[0]
    assert json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))["kid"] == key["kid"]


def test_a_bad_timeout_seconds_is_the_parameter_codec_s_400(fakekube: Cluster) -> None:
    _, answer, _ = request(fakekube, "GET", "/api/v1/namespaces/default/configmaps?timeoutSeconds=abc")
    assert_status(answer, 400, "BadRequest")
    assert answer["message"] == 'strconv.ParseInt: parsing "abc": invalid syntax'


def test_a_watch_of_a_kind_with_no_list_route_is_405(fakekube: Cluster) -> None:
    _, answer, _ = request(fakekube, "GET", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews?watch=1")
    assert_status(answer, 405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
    assert answer["details"] == {}
