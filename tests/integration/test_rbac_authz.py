"""RBAC on (``authorization_mode="RBAC"``): who may do what, through the official client.

Expected messages are kube-apiserver 1.33's: ``forbiddenMessage`` and ``NewForbidden``
(``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go``),
the RBAC authorizer's reasons (``plugin/pkg/auth/authorizer/rbac/rbac.go``), the
request attributes of ``RequestInfoFactory``.
"""

from __future__ import annotations

import http.client
import json
from typing import Any, Callable, Iterator
from urllib.parse import urlsplit

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from fakekube import Cluster
from fakekube.api.auth import ADMIN_TOKEN, UserInfo

Obj = dict[str, Any]
RBAC_GROUP = "rbac.authorization.k8s.io"
SA_USER = "system:serviceaccount:apps:operator"


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    # Plain HTTP (tls=False): the raw requests below need no CA; tests/integration/test_rbac_tls.py covers TLS.
    with Cluster(authorization_mode="RBAC", tls=False,
                 static_tokens={"alice-token": UserInfo("alice", ("devs",), "u-1")}) as running:
        yield running


@pytest.fixture
def rbac(cluster: Cluster) -> Iterator[Cluster]:
    cluster.reset()
    yield cluster


def forbidden(message: str, kind: str, name: str = "", group: str = "") -> Obj:
    details: Obj = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    details["kind"] = kind
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": "Forbidden", "details": details, "code": 403}


def denied(call: Callable[[], Any]) -> tuple[int, Obj]:
    with pytest.raises(ApiException) as raised:
        call()
    return raised.value.status, json.loads(raised.value.body)


def raw(cluster: Cluster, method: str, path: str, token: str | None = None,
        headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    url = urlsplit(cluster.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    sent = dict(headers or {})
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    try:
        connection.request(method, path, headers=sent)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def setup_operator(cluster: Cluster, rules: list[Obj], namespace: str = "apps") -> str:
    """A namespace, a ServiceAccount ``operator`` bound to a Role with ``rules``; its token."""
    core = client.CoreV1Api(cluster.client())
    core.create_namespace({"metadata": {"name": namespace}})
    core.create_namespaced_service_account(namespace, {"metadata": {"name": "operator"}})
    api = client.RbacAuthorizationV1Api(cluster.client())
    api.create_namespaced_role(namespace, {"metadata": {"name": "operator"}, "rules": rules})
    api.create_namespaced_role_binding(namespace, {
        "metadata": {"name": "operator"},
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "Role", "name": "operator"},
        "subjects": [{"kind": "ServiceAccount", "name": "operator", "namespace": namespace}]})
    request = {"spec": {"audiences": [], "expirationSeconds": 3600}}
    return core.create_namespaced_service_account_token("operator", namespace, request).status.token


CONFIGMAP_RULES = [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch", "create"]}]


def test_a_service_account_is_denied_exactly_the_verbs_its_role_lacks(rbac: Cluster) -> None:
    token = setup_operator(rbac, CONFIGMAP_RULES)
    core = client.CoreV1Api(rbac.client(token))
    created = core.create_namespaced_config_map("apps", {"metadata": {"name": "state"}, "data": {"a": "1"}})
    assert created.metadata.name == "state"
    assert [item.metadata.name for item in core.list_namespaced_config_map("apps").items] == ["kube-root-ca.crt", "state"]
    assert core.read_namespaced_config_map("state", "apps").data == {"a": "1"}

    def refused(verb: str, name: str = "") -> Obj:
        subject = f'configmaps "{name}"' if name else "configmaps"
        return forbidden(f'{subject} is forbidden: User "{SA_USER}" cannot {verb} resource "configmaps" '
                         f'in API group "" in the namespace "apps"', "configmaps", name)

    body = {"metadata": {"name": "state"}, "data": {"a": "2"}}
    assert denied(lambda: core.replace_namespaced_config_map("state", "apps", body)) == (403, refused("update", "state"))
    assert denied(lambda: core.patch_namespaced_config_map("state", "apps", {"data": {"a": "3"}})) == (403, refused("patch", "state"))
    assert denied(lambda: core.delete_namespaced_config_map("state", "apps")) == (403, refused("delete", "state"))
    assert denied(lambda: core.delete_collection_namespaced_config_map("apps")) == (403, refused("deletecollection"))
    # Another namespace: no binding there.
    assert denied(lambda: core.list_namespaced_config_map("default")) == (403, forbidden(
        f'configmaps is forbidden: User "{SA_USER}" cannot list resource "configmaps" in API group "" '
        f'in the namespace "default"', "configmaps"))
    assert rbac.get("v1", "ConfigMap", "state", "apps")["data"] == {"a": "1"}  # nothing was written


def test_cluster_scope_and_api_group_in_the_message(rbac: Cluster) -> None:
    token = setup_operator(rbac, CONFIGMAP_RULES)
    assert denied(lambda: client.CoreV1Api(rbac.client(token)).list_node()) == (403, forbidden(
        f'nodes is forbidden: User "{SA_USER}" cannot list resource "nodes" in API group "" at the cluster scope', "nodes"))
    assert denied(lambda: client.AppsV1Api(rbac.client(token)).read_namespaced_deployment("web", "apps")) == (403, forbidden(
        f'deployments.apps "web" is forbidden: User "{SA_USER}" cannot get resource "deployments" in API group "apps" '
        f'in the namespace "apps"', "deployments", "web", "apps"))


def test_resource_names_allow_only_the_named_objects(rbac: Cluster) -> None:
    token = setup_operator(rbac, [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"],
                                   "resourceNames": ["mine"]}])
    for name in ("mine", "theirs"):
        rbac.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "apps"}})
    core = client.CoreV1Api(rbac.client(token))
    assert core.read_namespaced_config_map("mine", "apps").metadata.name == "mine"
    status, body = denied(lambda: core.read_namespaced_config_map("theirs", "apps"))
    assert status == 403 and body["details"] == {"name": "theirs", "kind": "configmaps"}
    status, body = denied(lambda: core.list_namespaced_config_map("apps"))
    assert status == 403 and body["message"].endswith('cannot list resource "configmaps" in API group "" in the namespace "apps"')
    # A list narrowed to the name by a field selector names it (RequestInfoFactory).
    listed = core.list_namespaced_config_map("apps", field_selector="metadata.name=mine")
    assert [item.metadata.name for item in listed.items] == ["mine"]


def test_subresources_are_separate_resources(rbac: Cluster) -> None:
    token = setup_operator(rbac, [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}])
    rbac.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "apps"},
                 "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
    core = client.CoreV1Api(rbac.client(token))
    assert core.read_namespaced_pod("web", "apps").metadata.name == "web"
    assert denied(lambda: core.read_namespaced_pod_log("web", "apps")) == (403, forbidden(
        f'pods "web" is forbidden: User "{SA_USER}" cannot get resource "pods/log" in API group "" '
        f'in the namespace "apps"', "pods", "web"))
    api = client.RbacAuthorizationV1Api(rbac.client())
    api.patch_namespaced_role("operator", "apps", {"rules": [
        {"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get"]}]})
    assert core.read_namespaced_pod_log("web", "apps") is None  # allowed: 204, the pod runs nowhere yet


def test_a_binding_to_a_missing_role_is_named_in_the_denial(rbac: Cluster) -> None:
    token = setup_operator(rbac, CONFIGMAP_RULES)
    client.RbacAuthorizationV1Api(rbac.client()).create_namespaced_role_binding("apps", {
        "metadata": {"name": "ghost"}, "roleRef": {"apiGroup": RBAC_GROUP, "kind": "Role", "name": "ghost"},
        "subjects": [{"kind": "ServiceAccount", "name": "operator"}]})
    assert denied(lambda: client.CoreV1Api(rbac.client(token)).list_namespaced_secret("apps")) == (403, forbidden(
        f'secrets is forbidden: User "{SA_USER}" cannot list resource "secrets" in API group "" in the namespace '
        f'"apps": RBAC: role.rbac.authorization.k8s.io "ghost" not found', "secrets"))
    # The roles storage's escalation check reads roles through the registry: its NotFound names
    # the request's resource (reference: kube-apiserver 1.36).
    grab = {"metadata": {"name": "grab"}, "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]}
    operator = client.RbacAuthorizationV1Api(rbac.client(token))
    client.RbacAuthorizationV1Api(rbac.client()).patch_namespaced_role("operator", "apps", {"rules": CONFIGMAP_RULES + [
        {"apiGroups": [RBAC_GROUP], "resources": ["roles"], "verbs": ["create"]}]})
    status, body = denied(lambda: operator.create_namespaced_role("apps", grab))
    assert status == 403 and body["message"].endswith(
        '; resolution errors: [roles.rbac.authorization.k8s.io "ghost" not found]')


def test_cluster_roles_aggregate_by_label(rbac: Cluster) -> None:
    api = client.RbacAuthorizationV1Api(rbac.client())
    core = client.CoreV1Api(rbac.client())
    core.create_namespace({"metadata": {"name": "apps"}})
    core.create_namespaced_service_account("apps", {"metadata": {"name": "operator"}})
    api.create_cluster_role({"metadata": {"name": "monitoring"}, "aggregationRule": {"clusterRoleSelectors": [
        {"matchLabels": {"example.com/aggregate-to-monitoring": "true"}}]}})
    api.create_cluster_role_binding({"metadata": {"name": "operator-monitoring"},
                                     "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "monitoring"},
                                     "subjects": [{"kind": "ServiceAccount", "name": "operator", "namespace": "apps"}]})
    assert api.read_cluster_role("monitoring").rules is None
    api.create_cluster_role({"metadata": {"name": "nodes-reader", "labels": {"example.com/aggregate-to-monitoring": "true"}},
                             "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}]})
    rules = api.read_cluster_role("monitoring").rules
    assert [(r.api_groups, r.resources, r.verbs) for r in rules] == [([""], ["nodes"], ["list"])]
    token = core.create_namespaced_service_account_token("operator", "apps", {"spec": {}}).status.token
    assert client.CoreV1Api(rbac.client(token)).list_node().items == []
    api.delete_cluster_role("nodes-reader")
    assert api.read_cluster_role("monitoring").rules is None  # rules has no omitempty: an empty list is null


def test_view_aggregates_what_is_labelled_for_it(rbac: Cluster) -> None:
    api = client.RbacAuthorizationV1Api(rbac.client())
    api.create_cluster_role({"metadata": {"name": "widgets-view", "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
                             "rules": [{"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get"]}]})
    for role in ("view", "edit", "admin"):
        rules = api.read_cluster_role(role).rules
        assert any(r.resources == ["widgets"] and r.api_groups == ["example.com"] for r in rules), role


def test_anonymous_requests_see_public_info_only(rbac: Cluster) -> None:
    assert raw(rbac, "GET", "/version")[0] == 200
    assert raw(rbac, "GET", "/healthz") == (200, b"ok")
    code, body = raw(rbac, "GET", "/api")
    assert code == 403
    assert body == (b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"forbidden: '
                    b'User \\"system:anonymous\\" cannot get path \\"/api\\"","reason":"Forbidden","details":{},"code":403}\n')
    code, body = raw(rbac, "GET", "/api/v1/namespaces/default/pods")
    assert code == 403 and json.loads(body)["message"] == (
        'pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" in the namespace "default"')


def test_a_bad_token_is_401_and_an_authenticated_user_may_discover(rbac: Cluster) -> None:
    code, body = raw(rbac, "GET", "/api", token="not-a-token")
    assert (code, json.loads(body)) == (401, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                              "message": "Unauthorized", "reason": "Unauthorized", "code": 401})
    assert raw(rbac, "GET", "/api", token="alice-token")[0] == 200
    assert raw(rbac, "GET", "/apis/apps/v1", token="alice-token")[0] == 200


def test_static_token_users_and_their_groups(rbac: Cluster) -> None:
    review = client.AuthenticationV1Api(rbac.client("alice-token")).create_self_subject_review(
        {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    assert review.status.user_info.to_dict() == {"username": "alice", "uid": "u-1",
                                                 "groups": ["devs", "system:authenticated"], "extra": None}
    client.RbacAuthorizationV1Api(rbac.client()).create_cluster_role_binding({
        "metadata": {"name": "devs-view"}, "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "view"},
        "subjects": [{"kind": "Group", "apiGroup": RBAC_GROUP, "name": "devs"}]})
    alice = client.CoreV1Api(rbac.client("alice-token"))
    assert [ns.metadata.name for ns in alice.list_namespace().items][:2] == ["default", "kube-node-lease"]
    assert denied(lambda: alice.list_namespaced_secret("default"))[0] == 403


def test_a_token_of_a_deleted_service_account_is_refused(rbac: Cluster) -> None:
    token = setup_operator(rbac, CONFIGMAP_RULES)
    assert raw(rbac, "GET", "/api/v1/namespaces/apps/configmaps", token=token)[0] == 200
    client.CoreV1Api(rbac.client()).delete_namespaced_service_account("operator", "apps")
    # kube-apiserver's token cache keeps the success for 10 s of cluster time.
    assert raw(rbac, "GET", "/api/v1/namespaces/apps/configmaps", token=token)[0] == 200
    rbac.advance(10)
    assert raw(rbac, "GET", "/api/v1/namespaces/apps/configmaps", token=token)[0] == 401


def test_impersonation_needs_the_impersonate_verb(rbac: Cluster) -> None:
    """1.36 (ConstrainedImpersonation): a refused impersonation reports the constrained mode's
    ``impersonate-on:<mode>:<verb>`` check of the request itself (reference: kube-apiserver 1.36)."""
    headers = {"Impersonate-User": "bob", "Accept": "application/json"}
    code, body = raw(rbac, "GET", "/api/v1/namespaces/default/configmaps", token="alice-token", headers=headers)
    assert code == 403 and json.loads(body) == forbidden(
        'configmaps is forbidden: User "alice" cannot impersonate-on:user-info:list resource "configmaps" in API group '
        '"" in the namespace "default"', "configmaps")
    # The admin may; bob may not list configmaps.
    code, body = raw(rbac, "GET", "/api/v1/namespaces/default/configmaps", token="fakekube", headers=headers)
    assert code == 403 and json.loads(body)["message"] == (
        'configmaps is forbidden: User "bob" cannot list resource "configmaps" in API group "" in the namespace "default"')
    sa_headers = {"Impersonate-User": "system:serviceaccount:apps:operator", "Impersonate-Group": "ops"}
    code, body = raw(rbac, "GET", "/api/v1/namespaces/default/configmaps", token="alice-token", headers=sa_headers)
    assert code == 403 and json.loads(body) == forbidden(
        'configmaps is forbidden: User "alice" cannot impersonate-on:serviceaccount:list resource "configmaps" in API '
        'group "" in the namespace "default"', "configmaps")


def test_constrained_impersonation_lets_alice_act_as_bob_for_one_verb(rbac: Cluster) -> None:
    """KEP-5284's user-info mode: ``impersonate-on:user-info:list`` on the resource and
    ``impersonate:user-info`` on the user; the legacy ``impersonate`` verb is not needed."""
    api = client.RbacAuthorizationV1Api(rbac.client())
    api.create_cluster_role({"metadata": {"name": "as-bob"}, "rules": [
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["impersonate-on:user-info:list"]},
        {"apiGroups": [""], "resources": ["users"], "verbs": ["impersonate:user-info"], "resourceNames": ["bob"]},
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}]})
    subject = {"kind": "User", "apiGroup": RBAC_GROUP, "name": "alice"}
    api.create_cluster_role_binding({"metadata": {"name": "as-bob"}, "subjects": [subject],
                                     "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "as-bob"}})
    api.create_cluster_role_binding({"metadata": {"name": "bob-lists"}, "subjects": [{**subject, "name": "bob"}],
                                     "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "as-bob"}})
    headers = {"Impersonate-User": "bob", "Accept": "application/json"}
    code, _ = raw(rbac, "GET", "/api/v1/namespaces/default/configmaps", token="alice-token", headers=headers)
    assert code == 200
    code, body = raw(rbac, "GET", "/api/v1/namespaces/default/secrets", token="alice-token", headers=headers)
    assert code == 403 and json.loads(body)["message"].startswith(
        'secrets is forbidden: User "alice" cannot impersonate-on:user-info:list resource "secrets"')


def test_before_1_36_a_refused_impersonation_names_the_impersonate_check() -> None:
    with Cluster(kubernetes_version="1.35", authorization_mode="RBAC", tls=False, nodes=0,
                 static_tokens={"alice-token": UserInfo("alice", ("devs",), "u-1")}) as older:
        headers = {"Impersonate-User": "bob", "Accept": "application/json"}
        code, body = raw(older, "GET", "/api/v1/namespaces/default/configmaps", token="alice-token", headers=headers)
        assert code == 403 and json.loads(body) == forbidden(
            'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster '
            'scope', "users", "bob")


def test_impersonated_whoami(rbac: Cluster) -> None:
    api = client.AuthenticationV1Api(rbac.client())
    api.api_client.default_headers["Impersonate-User"] = "system:serviceaccount:apps:operator"
    review = api.create_self_subject_review({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    assert review.status.user_info.username == SA_USER
    assert review.status.user_info.groups == ["system:serviceaccounts", "system:serviceaccounts:apps", "system:authenticated"]


def test_each_impersonate_group_header_line_is_one_group(rbac: Cluster) -> None:
    """Go reads each header line as one value, commas and all (kube-apiserver 1.36 answers
    the groups ``g1`` and ``g2,g3``); WSGI would join repeated lines with commas. An extra's
    values keep the order of their lines (``scopes: [view, edit]``)."""
    url = urlsplit(rbac.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    body = b'{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}'
    try:
        connection.putrequest("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews")
        for name, value in (("Authorization", "Bearer fakekube"), ("Impersonate-User", "bob"),
                            ("Impersonate-Group", "g1"), ("Impersonate-Group", "g2,g3"),
                            ("Impersonate-Extra-Scopes", "view"), ("Impersonate-Extra-Scopes", "edit"),
                            ("Content-Type", "application/json"), ("Content-Length", str(len(body)))):
            connection.putheader(name, value)
        connection.endheaders(body)
        response = connection.getresponse()
        review = json.loads(response.read())
    finally:
        connection.close()
    assert response.status == 201
    assert review["status"]["userInfo"] == {"username": "bob", "groups": ["g1", "g2,g3", "system:authenticated"],
                                            "extra": {"scopes": ["view", "edit"]}}


def test_access_reviews_answer_from_rbac(rbac: Cluster) -> None:
    token = setup_operator(rbac, CONFIGMAP_RULES)
    authz = client.AuthorizationV1Api(rbac.client(token))

    def can(verb: str, resource: str, namespace: str = "apps") -> Any:
        return authz.create_self_subject_access_review({"spec": {"resourceAttributes": {
            "verb": verb, "resource": resource, "namespace": namespace}}}).status
    assert can("list", "configmaps").allowed is True
    assert can("list", "configmaps").reason == (
        'RBAC: allowed by RoleBinding "operator/apps" of Role "operator" to ServiceAccount "operator/apps"')
    assert can("delete", "configmaps").allowed is False
    sar = client.AuthorizationV1Api(rbac.client()).create_subject_access_review({"spec": {
        "user": "alice", "groups": ["system:authenticated"],
        "nonResourceAttributes": {"path": "/healthz", "verb": "get"}}}).status
    # Bindings are visited in name order: system:discovery comes before system:public-info-viewer.
    assert (sar.allowed, sar.reason) == (True, 'RBAC: allowed by ClusterRoleBinding "system:discovery" of '
                                               'ClusterRole "system:discovery" to Group "system:authenticated"')
    rules = authz.create_self_subject_rules_review({"spec": {"namespace": "apps"}}).status
    assert rules.incomplete is False
    assert [r.to_dict() for r in rules.resource_rules][-1] == {
        "verbs": ["get", "list", "watch", "create"], "api_groups": [""], "resources": ["configmaps"], "resource_names": None}
    assert any(r.non_resource_urls == ["/healthz", "/livez", "/readyz", "/version", "/version/"]
               for r in rules.non_resource_rules)


def test_roles_and_bindings_cannot_grant_more_than_the_writer_holds(rbac: Cluster) -> None:
    admin = client.RbacAuthorizationV1Api(rbac.client())
    client.CoreV1Api(rbac.client()).create_namespace({"metadata": {"name": "apps"}})
    admin.create_namespaced_role_binding("apps", {
        "metadata": {"name": "alice-admin"}, "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "admin"},
        "subjects": [{"kind": "User", "apiGroup": RBAC_GROUP, "name": "alice"}]})
    alice = client.RbacAuthorizationV1Api(rbac.client("alice-token"))
    alice.create_namespaced_role("apps", {"metadata": {"name": "cm-reader"}, "rules": [
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]})
    grab = {"metadata": {"name": "grab"}, "rules": [
        {"apiGroups": [""], "resources": ["nodes", "configmaps"], "verbs": ["list", "escalate"]}]}
    assert denied(lambda: alice.create_namespaced_role("apps", grab)) == (403, forbidden(
        'roles.rbac.authorization.k8s.io "grab" is forbidden: user "alice" (groups=["devs" "system:authenticated"]) '
        'is attempting to grant RBAC permissions not currently held:\n'
        '{APIGroups:[""], Resources:["configmaps"], Verbs:["escalate"]}\n'
        '{APIGroups:[""], Resources:["nodes"], Verbs:["list" "escalate"]}', "roles", "grab", RBAC_GROUP))
    alice.create_namespaced_role_binding("apps", {
        "metadata": {"name": "bob-view"}, "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "view"},
        "subjects": [{"kind": "User", "apiGroup": RBAC_GROUP, "name": "bob"}]})
    to_admin = {"metadata": {"name": "bob-root"}, "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "cluster-admin"},
                "subjects": [{"kind": "User", "apiGroup": RBAC_GROUP, "name": "bob"}]}
    status, body = denied(lambda: alice.create_namespaced_role_binding("apps", to_admin))
    assert status == 403 and body["message"].startswith(
        'rolebindings.rbac.authorization.k8s.io "bob-root" is forbidden: user "alice" (groups=["devs" "system:authenticated"]) '
        'is attempting to grant RBAC permissions not currently held:\n{APIGroups:["*"], Resources:["*"], Verbs:["*"]}')
    missing = {**to_admin, "metadata": {"name": "ghost"}, "roleRef": {**to_admin["roleRef"], "name": "ghost"}}
    status, body = denied(lambda: alice.create_namespaced_role_binding("apps", missing))
    # The storage reads the role through the registry, whose NotFound names the request's resource
    # (reference: kube-apiserver 1.36).
    assert (status, body["reason"], body["message"]) == (
        404, "NotFound", 'rolebindings.rbac.authorization.k8s.io "ghost" not found')
    # The bind verb on that role lets her.
    admin.create_cluster_role({"metadata": {"name": "bind-cluster-admin"}, "rules": [
        {"apiGroups": [RBAC_GROUP], "resources": ["clusterroles"], "verbs": ["bind"], "resourceNames": ["cluster-admin"]}]})
    admin.create_cluster_role_binding({"metadata": {"name": "alice-bind"},
                                       "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "bind-cluster-admin"},
                                       "subjects": [{"kind": "User", "apiGroup": RBAC_GROUP, "name": "alice"}]})
    assert alice.create_namespaced_role_binding("apps", to_admin).metadata.name == "bob-root"


def test_token_review_knows_static_tokens(rbac: Cluster) -> None:
    review = client.AuthenticationV1Api(rbac.client()).create_token_review({"spec": {"token": "alice-token"}}).status
    assert (review.authenticated, review.user.username, review.user.groups) == (
        True, "alice", ["devs", "system:authenticated"])


def test_a_watch_needs_the_watch_verb(rbac: Cluster) -> None:
    token = setup_operator(rbac, [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}])
    code, body = raw(rbac, "GET", "/api/v1/namespaces/apps/configmaps?watch=true", token=token)
    assert (code, json.loads(body)["message"]) == (403, f'configmaps is forbidden: User "{SA_USER}" cannot watch '
                                                        f'resource "configmaps" in API group "" in the namespace "apps"')


def test_a_token_bound_to_a_deleted_pod_is_refused(rbac: Cluster) -> None:
    setup_operator(rbac, CONFIGMAP_RULES)
    pod = rbac.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "op", "namespace": "apps"},
                       "spec": {"serviceAccountName": "operator", "containers": [{"name": "c", "image": "nginx"}]}})
    request = {"spec": {"boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "op",
                                           "uid": pod["metadata"]["uid"]}}}
    token = client.CoreV1Api(rbac.client()).create_namespaced_service_account_token(
        "operator", "apps", request).status.token
    assert raw(rbac, "GET", "/api/v1/namespaces/apps/configmaps", token=token)[0] == 200
    client.CoreV1Api(rbac.client()).delete_namespaced_pod("op", "apps", grace_period_seconds=0)
    rbac.advance(10)  # past the token cache's memory of its success
    assert raw(rbac, "GET", "/api/v1/namespaces/apps/configmaps", token=token)[0] == 401


def test_always_allow_with_static_tokens_authenticates_as_kube_apiserver() -> None:
    """With a token file, authentication is upstream's even under AlwaysAllow: a bad token is a
    401 and so is no token (kube-apiserver turns anonymous authentication off with AlwaysAllow);
    a good token is its user, who may do anything."""
    with Cluster(tls=False, static_tokens={"alice-token": UserInfo("alice", ("devs",), "u-1")}) as strict:
        unauthorized = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                        "message": "Unauthorized", "reason": "Unauthorized", "code": 401}
        for token in ("not-a-token", None):
            code, body = raw(strict, "GET", "/api/v1/namespaces/default/configmaps", token=token)
            assert (code, json.loads(body)) == (401, unauthorized)
        assert raw(strict, "GET", "/api/v1/namespaces/default/secrets", token="alice-token")[0] == 200


def test_always_allow_without_tokens_takes_any_request_as_the_admin() -> None:
    """fakekube's convenience (docs/api.md): with no token file, no credential or a bad one is the admin."""
    with Cluster(tls=False) as lenient:
        for token in ("not-a-token", None):
            assert raw(lenient, "GET", "/api/v1/namespaces/default/secrets", token=token)[0] == 200


@pytest.mark.parametrize(("version", "code", "message"), [
    ("1.34", 500, 'Internal Server Error: "/api/v1/namespaces/default/configmaps": requested '
                  '[{Group  team-a    } {UID  x  authentication.k8s.io/v1  }] without impersonating a user\n'),
    ("1.35", 400, "requested [{Group  team-a    } {UID  x  authentication.k8s.io/v1  }] without impersonating a user"),
    ("1.36", 400, 'requested &user.DefaultInfo{Name:"", UID:"x", Groups:[]string{"team-a"}, '
                  'Extra:map[string][]string(nil)} without impersonating a user name'),
])
def test_impersonating_a_group_without_a_user_is_refused_as_the_release_does(version: str, code: int,
                                                                             message: str) -> None:
    headers = {"Impersonate-Group": "team-a", "Impersonate-Uid": "x"}
    with Cluster(tls=False, kubernetes_version=version) as cluster:
        status, body = raw(cluster, "GET", "/api/v1/namespaces/default/configmaps", headers=headers)
    assert status == code
    if code == 500:
        assert body.decode() == message
    else:
        assert json.loads(body) == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                    "message": message, "reason": "BadRequest", "code": 400}


def test_each_impersonate_group_header_is_one_group(rbac: Cluster) -> None:
    # kubectl --as-group=group2 --as-group=,,,chameleon sends one header per flag; a value's
    # commas are its own (kubectl's test/cmd run_impersonation_tests checks the four groups).
    url = urlsplit(rbac.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        connection.putrequest("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews")
        for name, value in [("Authorization", f"Bearer {ADMIN_TOKEN}"),
                            ("Impersonate-User", "user1"), ("Impersonate-Group", "group2"),
                            ("Impersonate-Group", "group1"), ("Impersonate-Group", ",,,chameleon"),
                            ("Content-Type", "application/json"), ("Content-Length", "2")]:
            connection.putheader(name, value)
        connection.endheaders(b"{}")
        response = connection.getresponse()
        status, review = response.status, json.loads(response.read())
    finally:
        connection.close()
    assert status == 201, review
    assert review["status"]["userInfo"] == {"username": "user1",
                                            "groups": ["group2", "group1", ",,,chameleon", "system:authenticated"]}
