"""The review APIs and ``serviceaccounts/token`` over HTTP: exact answers, upstream's
errors, nothing stored, deterministic tokens on cluster time.

Expected bodies follow Kubernetes 1.33's REST storages (``pkg/registry/authorization/*``,
``pkg/registry/authentication/*``, ``pkg/registry/core/serviceaccount/storage/token.go``)
and validation (``pkg/apis/authorization/validation``, ``pkg/apis/authentication/validation``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from fakekube import Cluster
from fakekube.api.auth import tokens

from .test_bad_input import request, snapshot

Obj = dict[str, Any]
AUTHZ = "/apis/authorization.k8s.io/v1"
AUTHN = "/apis/authentication.k8s.io/v1"
TOKEN = "/api/v1/namespaces/default/serviceaccounts/robot/token"
ISSUER = "https://kubernetes.default.svc.cluster.local"
#: A review's metadata: Go's zero creationTimestamp is left out from 1.34 (the reference, 1.36;
#: ``null`` up to 1.33). The reference also echoes a managedFields entry for the asker's SSAR.
NULL: Obj = {}


def post(cluster: Cluster, path: str, body: Obj) -> tuple[int, Any]:
    return request(cluster, "POST", path, json.dumps(body).encode(), "application/json")


def service_account(cluster: Cluster, name: str = "robot") -> Obj:
    return cluster.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": "default"}})


def payload(token: str) -> Obj:
    return json.loads(tokens.b64url_decode(token.split(".")[1]))


# --- access reviews ---------------------------------------------------------------------------


SSAR = {"kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1", "metadata": {"creationTimestamp": None},
        "spec": {"resourceAttributes": {"namespace": "default", "verb": "create", "resource": "pods"}},
        "status": {"allowed": False}}


def test_self_subject_access_review_is_allowed_and_nothing_is_stored(fakekube: Cluster) -> None:
    """The create handler's field manager runs for a review too: the echoed request carries
    its managedFields (kube-apiserver 1.36 answers the same, without the 1.33 null timestamp)."""
    before = snapshot(fakekube)
    managed = [{"manager": "unknown", "operation": "Update", "apiVersion": "authorization.k8s.io/v1",
                "time": "2025-01-01T00:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:resourceAttributes": {
                    ".": {}, "f:namespace": {}, "f:resource": {}, "f:verb": {}}}}}]
    for query in ("", "?dryRun=All"):
        code, body = post(fakekube, f"{AUTHZ}/selfsubjectaccessreviews{query}", SSAR)
        assert code == 201
        assert body == {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                        "metadata": {**NULL, "managedFields": managed}, "spec": SSAR["spec"], "status": {"allowed": True}}
    assert snapshot(fakekube) == before


@pytest.mark.parametrize("path, body", [
    ("/subjectaccessreviews", {"spec": {"user": "bob", "nonResourceAttributes": {"path": "/healthz", "verb": "get"}}}),
    ("/namespaces/default/localsubjectaccessreviews",
     {"spec": {"groups": ["g"], "resourceAttributes": {"namespace": "default", "verb": "get", "resource": "pods"}}}),
])
def test_subject_access_reviews_are_allowed(fakekube: Cluster, path: str, body: Obj) -> None:
    code, answer = post(fakekube, AUTHZ + path, body)
    assert code == 201 and answer["status"] == {"allowed": True} and answer["spec"] == body["spec"]


def test_self_subject_rules_review_grants_everything(fakekube: Cluster) -> None:
    code, body = post(fakekube, f"{AUTHZ}/selfsubjectrulesreviews", {"spec": {"namespace": "default"}})
    assert code == 201
    assert body == {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "metadata": NULL,
                    "spec": {}, "status": {
                        "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                        "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}], "incomplete": False}}
    code, body = post(fakekube, f"{AUTHZ}/selfsubjectrulesreviews", {"spec": {}})
    assert (code, body["reason"], body["message"]) == (400, "BadRequest", "no namespace on request")


EXACTLY_ONE = "exactly one of nonResourceAttributes or resourceAttributes must be specified"


@pytest.mark.parametrize("path, spec, message, causes", [
    ("/selfsubjectaccessreviews", {},
     f'.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": {EXACTLY_ONE}',
     [{"reason": "FieldValueInvalid", "message": f'Invalid value: "null": {EXACTLY_ONE}', "field": "spec.resourceAttributes"}]),
    ("/selfsubjectaccessreviews", {"resourceAttributes": {"verb": "get"}, "nonResourceAttributes": {"path": "/x", "verb": "get"}},
     '.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value: '
     '{"Path":"/x","Verb":"get"}: cannot be specified in combination with resourceAttributes',
     None),
    ("/subjectaccessreviews", {"resourceAttributes": {"verb": "get"}},
     '.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified', None),
    ("/namespaces/default/localsubjectaccessreviews", {"user": "u", "resourceAttributes": {"namespace": "other"}},
     '.authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "other": must match metadata.namespace',
     None),
    ("/selfsubjectaccessreviews", {"resourceAttributes": {"labelSelector": {}}},
     '.authorization.k8s.io "" is invalid: spec.resourceAttributes.labelSelector.requirements: Required value: '
     "when spec.resourceAttributes.labelSelector is specified, requirements or rawSelector is required", None),
])
def test_invalid_access_reviews_are_422_like_upstream(fakekube: Cluster, path: str, spec: Obj, message: str,
                                                      causes: list[Obj] | None) -> None:
    before = snapshot(fakekube)
    code, body = post(fakekube, AUTHZ + path, {"spec": spec})
    assert (code, body["reason"], body["message"]) == (422, "Invalid", message)
    assert body["details"]["group"] == "authorization.k8s.io" and "kind" not in body["details"]
    if causes is not None:
        assert body["details"]["causes"] == causes
    assert snapshot(fakekube) == before


def test_reviews_have_no_other_verbs(fakekube: Cluster) -> None:
    code, body = request(fakekube, "GET", f"{AUTHZ}/selfsubjectaccessreviews")
    assert (code, body["reason"]) == (405, "MethodNotAllowed")


# --- authentication ---------------------------------------------------------------------------


def test_self_subject_review_is_the_admin(fakekube: Cluster) -> None:
    fakekube.advance(90)
    code, body = post(fakekube, f"{AUTHN}/selfsubjectreviews", {"status": {"userInfo": {}}})
    assert code == 201
    assert body == {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview",
                    "metadata": {"creationTimestamp": "2025-01-01T00:01:30Z"},
                    "status": {"userInfo": {"username": "fakekube-admin",
                                            "groups": ["system:masters", "system:authenticated"]}}}


def test_token_review_of_admin_token_service_account_token_and_junk(fakekube: Cluster) -> None:
    sa = service_account(fakekube)
    _, issued = post(fakekube, TOKEN, {"spec": {}})
    token = issued["status"]["token"]
    code, admin = post(fakekube, f"{AUTHN}/tokenreviews", {"spec": {"token": "fakekube"}})
    assert code == 201 and admin["status"] == {
        "authenticated": True, "user": {"username": "fakekube-admin", "groups": ["system:masters", "system:authenticated"]},
        "audiences": [ISSUER]}
    _, review = post(fakekube, f"{AUTHN}/tokenreviews", {"spec": {"token": token}})
    assert review["status"] == {"authenticated": True, "audiences": [ISSUER], "user": {
        "username": "system:serviceaccount:default:robot", "uid": sa["metadata"]["uid"],
        "groups": ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"],
        "extra": {"authentication.kubernetes.io/credential-id": [f"JTI={payload(token)['jti']}"]}}}
    # Upstream's union of authenticators: the loopback one's "invalid bearer token", then the
    # service-account authenticator's own error where it has one (reference: kube-apiserver 1.36).
    for junk, error in (("nope", "invalid bearer token"),
                        (token[:-4] + "AAAA", "[invalid bearer token, go-jose/go-jose: error in cryptographic primitive]")):
        _, refused = post(fakekube, f"{AUTHN}/tokenreviews", {"spec": {"token": junk}})
        assert refused["status"] == {"user": {}, "error": error}
    _, other_audience = post(fakekube, f"{AUTHN}/tokenreviews", {"spec": {"token": token, "audiences": ["vault"]}})
    assert other_audience["status"] == {"user": {}, "error": (
        '[invalid bearer token, token audiences ["https://kubernetes.default.svc.cluster.local"] is invalid for the '
        'target audiences ["vault"]]')}
    code, body = post(fakekube, f"{AUTHN}/tokenreviews", {"spec": {}})
    assert (code, body["message"]) == (400, "token is required for TokenReview in authentication")


def test_token_review_honours_cluster_time_and_deleted_service_accounts(fakekube: Cluster) -> None:
    service_account(fakekube)
    _, issued = post(fakekube, TOKEN, {"spec": {"expirationSeconds": 600}})
    token = issued["status"]["token"]
    fakekube.advance(600 + 60)  # go-jose's one-minute leeway
    assert post(fakekube, f"{AUTHN}/tokenreviews", {"spec": {"token": token}})[1]["status"].get("authenticated")
    fakekube.advance(10)  # past the token cache's 10 s too
    assert post(fakekube, f"{AUTHN}/tokenreviews", {"spec": {"token": token}})[1]["status"] == {
        "user": {}, "error": "[invalid bearer token, service account token has expired]"}
    _, fresh = post(fakekube, TOKEN, {"spec": {}})
    fakekube.delete("v1", "ServiceAccount", "robot")
    assert post(fakekube, f"{AUTHN}/tokenreviews", {"spec": {"token": fresh["status"]["token"]}})[1]["status"] == {
        "user": {}, "error": '[invalid bearer token, serviceaccounts "robot" not found]'}


def test_a_token_that_authenticated_keeps_working_for_10_s_of_cluster_time(fakekube: Cluster) -> None:
    """kube-apiserver caches a successful token authentication for 10 s (TokenSuccessCacheTTL),
    requests and TokenReviews alike: a deleted account's token still works until it expires."""
    service_account(fakekube)
    _, issued = post(fakekube, TOKEN, {"spec": {}})
    token = issued["status"]["token"]
    assert post(fakekube, f"{AUTHN}/tokenreviews", {"spec": {"token": token}})[1]["status"]["authenticated"]
    fakekube.delete("v1", "ServiceAccount", "robot")
    fakekube.advance(9)
    review = post(fakekube, f"{AUTHN}/tokenreviews", {"spec": {"token": token}})[1]["status"]
    assert review["authenticated"] and review["user"]["username"] == "system:serviceaccount:default:robot"
    assert review["audiences"] == [ISSUER]
    fakekube.advance(1)
    assert post(fakekube, f"{AUTHN}/tokenreviews", {"spec": {"token": token}})[1]["status"] == {
        "user": {}, "error": '[invalid bearer token, serviceaccounts "robot" not found]'}


# --- serviceaccounts/token --------------------------------------------------------------------


def test_token_request_answers_a_jwt_on_cluster_time_and_stores_nothing(fakekube: Cluster) -> None:
    sa = service_account(fakekube)
    fakekube.advance(30)
    before = snapshot(fakekube)
    body = {"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1", "metadata": {"creationTimestamp": None},
            "spec": {"audiences": None, "expirationSeconds": None, "boundObjectRef": None},
            "status": {"token": "", "expirationTimestamp": None}}  # what kubectl 1.29 sends
    code, answer = post(fakekube, TOKEN, body)
    assert code == 201
    token = answer["status"]["token"]
    # The create handler's field manager saw the request as decoded and defaulted (kube-apiserver 1.36).
    managed = [{"manager": "unknown", "operation": "Update", "apiVersion": "authentication.k8s.io/v1",
                "time": "2025-01-01T00:00:30Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:expirationSeconds": {}}},
                "subresource": "token"}]
    assert answer == {"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
                      "metadata": {"name": "robot", "namespace": "default", "uid": sa["metadata"]["uid"],
                                   "creationTimestamp": "2025-01-01T00:00:30Z", "managedFields": managed},
                      "spec": {"audiences": [ISSUER], "expirationSeconds": 3600, "boundObjectRef": None},
                      "status": {"token": token, "expirationTimestamp": "2025-01-01T01:00:30Z"}}
    header, claims, signature = token.split(".")
    assert json.loads(tokens.b64url_decode(header))["alg"] == "RS256" and len(tokens.b64url_decode(signature)) == 256
    assert "=" not in token
    issued_at = 1735689630
    assert json.loads(tokens.b64url_decode(claims)) == {
        "aud": [ISSUER], "exp": issued_at + 3600, "iat": issued_at, "iss": ISSUER, "jti": payload(token)["jti"],
        "kubernetes.io": {"namespace": "default", "serviceaccount": {"name": "robot", "uid": sa["metadata"]["uid"]}},
        "nbf": issued_at, "sub": "system:serviceaccount:default:robot"}
    assert snapshot(fakekube) == before
    _, dry = post(fakekube, TOKEN + "?dryRun=All", body)
    assert dry["status"]["token"] != token  # a new jti: every request is a new token
    assert snapshot(fakekube) == before


@pytest.mark.parametrize("version, carries_uid", [("1.33", False), ("1.34", True), ("1.36", True)])
def test_token_request_carries_the_service_accounts_uid_from_1_34(version: str, carries_uid: bool) -> None:
    """kubernetes/kubernetes#132803: the answer names the ServiceAccount's uid, and a request
    naming another uid is a 409 (TokenRequestServiceAccountUIDValidation); 1.33 cleared it."""
    with Cluster(kubernetes_version=version, nodes=0) as cluster:
        uid = service_account(cluster)["metadata"]["uid"]
        _, answer = post(cluster, TOKEN, {"spec": {}})
        assert answer["metadata"].get("uid") == (uid if carries_uid else None)
        code, other = post(cluster, TOKEN, {"metadata": {"uid": "abc"}, "spec": {}})
        if carries_uid:
            assert (code, other["message"], other["details"]) == (
                409, 'Operation cannot be fulfilled on TokenRequest.authentication.k8s.io "robot": the UID in the token '
                     f"request (abc) does not match the UID of the service account ({uid})",
                {"name": "robot", "group": "authentication.k8s.io", "kind": "TokenRequest"})
        else:
            assert (code, other["metadata"].get("uid")) == (201, None)


def test_token_bound_to_a_pod_names_pod_and_node(fakekube: Cluster) -> None:
    service_account(fakekube)
    pod = fakekube.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                           "spec": {"serviceAccountName": "robot", "nodeName": "gone",
                                    "containers": [{"name": "c", "image": "busybox"}]}})
    ref = {"kind": "Pod", "apiVersion": "v1", "name": "p"}
    code, answer = post(fakekube, TOKEN, {"spec": {"audiences": ["vault"], "boundObjectRef": ref}})
    assert code == 201 and answer["spec"]["audiences"] == ["vault"] and answer["spec"]["boundObjectRef"] == ref
    assert answer["metadata"]["managedFields"][0]["fieldsV1"] == {"f:spec": {
        "f:audiences": {}, "f:boundObjectRef": {"f:apiVersion": {}, "f:kind": {}, "f:name": {}}, "f:expirationSeconds": {}}}
    private = payload(answer["status"]["token"])["kubernetes.io"]
    assert private["pod"] == {"name": "p", "uid": pod["metadata"]["uid"]} and private["node"] == {"name": "gone"}


@pytest.mark.parametrize("spec, code, reason, message", [
    ({"expirationSeconds": 599}, 422, "Invalid",
     'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 599: '
     "may not specify a duration less than 10 minutes"),
    ({"expirationSeconds": 2**32 + 1}, 422, "Invalid",
     'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 4294967297: '
     "may not specify a duration larger than 2^32 seconds"),
    ({"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "missing"}}, 404, "NotFound", 'pods "missing" not found'),
    ({"boundObjectRef": {"kind": "ConfigMap", "apiVersion": "v1", "name": "x"}}, 400, "BadRequest",
     "cannot bind token to object of type /v1, Kind=ConfigMap"),
    ({"expirationSeconds": "1h"}, 400, "BadRequest", None),
])
def test_bad_token_requests(fakekube: Cluster, spec: Obj, code: int, reason: str, message: str | None) -> None:
    service_account(fakekube)
    before = snapshot(fakekube)
    got, body = post(fakekube, TOKEN, {"spec": spec})
    assert (got, body["reason"]) == (code, reason)
    if message is not None:
        assert body["message"] == message
    assert snapshot(fakekube) == before


def test_token_request_names_must_match_and_the_account_must_exist(fakekube: Cluster) -> None:
    code, body = post(fakekube, TOKEN, {"spec": {}})
    assert (code, body["reason"], body["message"]) == (404, "NotFound", 'serviceaccounts "robot" not found')
    service_account(fakekube)
    code, body = post(fakekube, TOKEN, {"metadata": {"name": "other"}, "spec": {}})
    assert (code, body["message"]) == (422, 'TokenRequest.authentication.k8s.io "robot" is invalid: metadata.name: '
                                             'Invalid value: "other": must match the service account name if specified')


def test_tokens_are_deterministic_per_seed() -> None:
    def first_token(seed: int) -> str:
        with Cluster(seed=seed) as cluster:
            service_account(cluster)
            return post(cluster, TOKEN, {"spec": {}})[1]["status"]["token"]

    assert first_token(7) == first_token(7)
    assert first_token(7) != first_token(8)


def test_the_attributes_of_a_review_show_as_go_s_struct_up_to_1_33() -> None:
    with Cluster(kubernetes_version="1.33") as cluster:
        code, body = post(cluster, f"{AUTHZ}/subjectaccessreviews", {"spec": {
            "user": "bob", "resourceAttributes": {"verb": "get"}, "nonResourceAttributes": {"path": "/x", "verb": "get"}}})
    assert code == 422
    assert body["details"]["causes"][0]["message"] == (
        'Invalid value: authorization.NonResourceAttributes{Path:"/x", Verb:"get"}: '
        "cannot be specified in combination with resourceAttributes")
