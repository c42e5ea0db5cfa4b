"""No way around RBAC: the legacy ``/watch/`` prefix, the control API and the query parse.

A ServiceAccount allowed only to *watch* pods, serviceaccounts and deployments must get
nothing else through a ``/watch/`` path (upstream keeps the subresource in the request's
attributes for ``watch`` and routes ``/watch/`` for GETs of collections and objects only),
through an odd spelling of ``watch=false``, or through the control API, which with RBAC on
is authenticated and authorized like every other path.
"""

from __future__ import annotations

import http.client
import json
from typing import Any, Iterator
from urllib.parse import urlsplit

import pytest
from kubernetes import client

from fakekube import Cluster
from fakekube.api.auth import UserInfo
from fakekube.control import attach as attach_control

Obj = dict[str, Any]
RBAC_GROUP = "rbac.authorization.k8s.io"
WATCH_ONLY = [{"apiGroups": ["", "apps"], "resources": ["pods", "serviceaccounts", "deployments"],
               "verbs": ["watch"]}]


@pytest.fixture(scope="module")
def served() -> Iterator[Cluster]:
    with Cluster(authorization_mode="RBAC", tls=False, nodes=1,
                 static_tokens={"alice-token": UserInfo("alice", ("devs",), "u-1")}) as running:
        attach_control(running)
        yield running


@pytest.fixture
def cluster(served: Cluster) -> Iterator[Cluster]:
    served.reset()
    yield served


def send(cluster: Cluster, method: str, path: str, token: str | None = None, body: Obj | None = None,
         content_type: str = "application/json") -> tuple[int, Obj]:
    url = urlsplit(cluster.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    headers = {"Content-Type": content_type}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    try:
        connection.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        response = connection.getresponse()
        raw = response.read()
        return response.status, json.loads(raw) if raw.startswith(b"{") else {"text": raw.decode()}
    finally:
        connection.close()


def watcher_token(cluster: Cluster) -> str:
    """Namespace ``team`` with pod ``p``, deployment ``d``, ServiceAccount ``power`` bound to
    cluster-admin, and the token of ``watcher``, who may only watch."""
    api = cluster.client()
    core, apps, rbac = client.CoreV1Api(api), client.AppsV1Api(api), client.RbacAuthorizationV1Api(api)
    core.create_namespace({"metadata": {"name": "team"}})
    for name in ("power", "watcher"):
        core.create_namespaced_service_account("team", {"metadata": {"name": name}})
    rbac.create_cluster_role_binding({
        "metadata": {"name": "power"}, "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"kind": "ServiceAccount", "name": "power", "namespace": "team"}]})
    rbac.create_cluster_role({"metadata": {"name": "watch-only"}, "rules": WATCH_ONLY})
    rbac.create_cluster_role_binding({
        "metadata": {"name": "watcher"}, "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "watch-only"},
        "subjects": [{"kind": "ServiceAccount", "name": "watcher", "namespace": "team"}]})
    core.create_namespaced_pod("team", {"metadata": {"name": "p"},
                                        "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
    apps.create_namespaced_deployment("team", {
        "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"app": "d"}},
                 "template": {"metadata": {"labels": {"app": "d"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
    request = {"spec": {"audiences": [], "expirationSeconds": 3600}}
    return core.create_namespaced_service_account_token("watcher", "team", request).status.token


TOKEN_REQUEST = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"audiences": []}}

#: (method, path under the /watch/ prefix, body, content type): each was allowed as "watch" before.
WATCH_PREFIX_WRITES = [
    ("POST", "/api/v1/watch/namespaces/team/serviceaccounts/power/token", TOKEN_REQUEST, "application/json"),
    ("PATCH", "/api/v1/watch/namespaces/team/pods/p/status", {"status": {"phase": "Failed"}},
     "application/merge-patch+json"),
    ("PATCH", "/apis/apps/v1/watch/namespaces/team/deployments/d/scale", {"spec": {"replicas": 9}},
     "application/merge-patch+json"),
    ("POST", "/api/v1/watch/namespaces/team/pods/p/eviction",
     {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p", "namespace": "team"}},
     "application/json"),
    ("GET", "/api/v1/watch/namespaces/team/pods/p/log", None, "application/json"),
    ("GET", "/api/v1/watch/namespaces/team/pods/p/exec?command=id&stdout=1", None, "application/json"),
]


@pytest.mark.parametrize("method, path, body, content_type", WATCH_PREFIX_WRITES,
                         ids=[f"{m} {p.split('/watch/')[1]}" for m, p, _, _ in WATCH_PREFIX_WRITES])
def test_a_watch_prefix_grants_nothing_but_watch(cluster: Cluster, method: str, path: str, body: Obj | None,
                                                  content_type: str) -> None:
    token = watcher_token(cluster)
    direct = path.replace("/watch/", "/", 1)
    assert send(cluster, method, direct, token, body, content_type)[0] == 403
    code, answer = send(cluster, method, path, token, body, content_type)
    assert (code, answer["reason"]) == (403, "Forbidden")
    parts = path.split("?")[0].split("/")
    assert f'cannot watch resource "{parts[-3]}/{parts[-1]}"' in answer["message"]
    # Nothing happened: the pod is still there, unscaled deployment, no token minted.
    assert cluster.get("v1", "Pod", "p", "team")["status"].get("phase") != "Failed"
    assert cluster.get("apps/v1", "Deployment", "d", "team")["spec"]["replicas"] == 1


@pytest.mark.parametrize("method, path, body, content_type", WATCH_PREFIX_WRITES,
                         ids=[f"{m} {p.split('/watch/')[1]}" for m, p, _, _ in WATCH_PREFIX_WRITES])
def test_the_watch_prefix_routes_no_subresource_even_for_an_admin(cluster: Cluster, method: str, path: str,
                                                                  body: Obj | None, content_type: str) -> None:
    watcher_token(cluster)
    code, answer = send(cluster, method, path, admin_token(cluster), body, content_type)
    assert (code, answer["reason"], answer["message"]) == (404, "NotFound",
                                                           "the server could not find the requested resource")
    assert cluster.get("v1", "Pod", "p", "team")["metadata"]["name"] == "p"


def admin_token(cluster: Cluster) -> str:
    configuration = cluster.client().configuration
    return configuration.api_key["authorization"].split(" ", 1)[1]


def test_a_watch_only_token_gets_no_list_through_an_odd_spelling_of_false(cluster: Cluster) -> None:
    token = watcher_token(cluster)
    # "falſe" (a long s) is false to Go's EqualFold: upstream's authorizer and handler both
    # read a list here, which watch-only may not do.
    code, answer = send(cluster, "GET", "/api/v1/namespaces/team/pods?watch=fal%C5%BFe", token)
    assert (code, answer["reason"]) == (403, "Forbidden")
    assert 'cannot list resource "pods"' in answer["message"]
    code, answer = send(cluster, "GET", "/api/v1/namespaces/team/pods?watch=FALSE", token)
    assert (code, answer["reason"]) == (403, "Forbidden")


#: Every control endpoint (method, path, body).
CONTROL_ENDPOINTS = [
    ("GET", "/fakekube/v1/clock", None),
    ("POST", "/fakekube/v1/clock/advance", {"seconds": 60}),
    ("POST", "/fakekube/v1/settle", None),
    ("POST", "/fakekube/v1/reset", None),
    ("GET", "/fakekube/v1/errors", None),
    ("GET", "/fakekube/v1/webhook-addresses", None),
    ("PUT", "/fakekube/v1/webhook-addresses", {"hooks.default.svc:443": "127.0.0.1:9"}),
    ("GET", "/fakekube/v1/nodes/node-1", None),
    ("POST", "/fakekube/v1/nodes/node-1/fail", None),
    ("POST", "/fakekube/v1/nodes/node-1/recover", None),
    ("POST", "/fakekube/v1/nodes/node-1/partition", None),
    ("POST", "/fakekube/v1/nodes/node-1/heal", None),
    ("POST", "/fakekube/v1/nodes/node-1/restart", None),
    ("POST", "/fakekube/v1/nodes/node-1/conditions", {"type": "MemoryPressure", "status": "True"}),
    ("DELETE", "/fakekube/v1/nodes/node-1/conditions/MemoryPressure", None),
    ("GET", "/fakekube/v1/scheduling/team/p", None),
    ("POST", "/fakekube/v1/snapshots", None),
    ("GET", "/fakekube/v1/snapshots", None),
]
CONTROL_IDS = [f"{method} {path[len('/fakekube/v1/'):]}" for method, path, _ in CONTROL_ENDPOINTS]


def untouched(cluster: Cluster) -> None:
    """What a refused control call would have changed is as it was."""
    assert cluster.now.isoformat() == "2025-01-01T00:00:00+00:00"
    assert cluster.kubelet_state("node-1")["heartbeats"] == "running"
    assert cluster.webhook_addresses == {}
    assert cluster.get("v1", "Namespace", "team", "")["metadata"]["name"] == "team"


@pytest.mark.parametrize("method, path, body", CONTROL_ENDPOINTS, ids=CONTROL_IDS)
def test_the_control_api_needs_credentials(cluster: Cluster, method: str, path: str, body: Obj | None) -> None:
    watcher_token(cluster)
    for token in (None, "not-a-token"):
        code, answer = send(cluster, method, path, token, body)
        assert (code, answer["kind"], answer["reason"], answer["message"]) == (401, "Status", "Unauthorized",
                                                                                "Unauthorized")
    untouched(cluster)


@pytest.mark.parametrize("method, path, body", CONTROL_ENDPOINTS, ids=CONTROL_IDS)
def test_the_control_api_is_for_its_role_only(cluster: Cluster, method: str, path: str, body: Obj | None) -> None:
    token = watcher_token(cluster)
    for who in (token, "alice-token"):
        code, answer = send(cluster, method, path, who, body)
        assert (code, answer["reason"]) == (403, "Forbidden")
        assert f'cannot {method.lower()} path "{path}"' in answer["message"]
    untouched(cluster)


@pytest.mark.parametrize("method, path, body", CONTROL_ENDPOINTS, ids=CONTROL_IDS)
def test_admins_and_holders_of_fakekube_control_may_drive_the_cluster(cluster: Cluster, method: str, path: str,
                                                                       body: Obj | None) -> None:
    watcher_token(cluster)
    assert send(cluster, method, path, admin_token(cluster), body)[0] == 200
    cluster.reset()
    watcher_token(cluster)
    client.RbacAuthorizationV1Api(cluster.client()).create_cluster_role_binding({
        "metadata": {"name": "alice-drives"},
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "fakekube:control"},
        "subjects": [{"kind": "User", "apiGroup": RBAC_GROUP, "name": "alice"}]})
    assert send(cluster, method, path, "alice-token", body)[0] == 200


def test_the_control_role_is_bound_to_system_masters(cluster: Cluster) -> None:
    role = cluster.get("rbac.authorization.k8s.io/v1", "ClusterRole", "fakekube:control", "")
    assert role["rules"] == [{"verbs": ["get", "post", "put", "delete"], "nonResourceURLs": ["/fakekube/*"]}]
    binding = cluster.get("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "fakekube:control", "")
    assert binding["subjects"] == [{"kind": "Group", "apiGroup": RBAC_GROUP, "name": "system:masters"}]


def test_without_rbac_the_control_api_is_open_and_has_no_role() -> None:
    with Cluster() as open_cluster:
        attach_control(open_cluster)
        code, answer = send(open_cluster, "POST", "/fakekube/v1/clock/advance", None, {"seconds": 5})
        assert (code, answer["now"]) == (200, "2025-01-01T00:00:05Z")
        assert open_cluster.list("rbac.authorization.k8s.io/v1", "ClusterRole", field_selector="metadata.name=fakekube:control") == []


@pytest.mark.parametrize("target", ["10.0.0.8:443", "example.com:443", "[2001:db8::1]:443", "0.0.0.0:80"])
def test_webhook_addresses_point_at_loopback_only(cluster: Cluster, target: str) -> None:
    code, answer = send(cluster, "PUT", "/fakekube/v1/webhook-addresses", admin_token(cluster),
                        {"hooks.default.svc:443": target})
    assert (code, answer["reason"]) == (400, "BadRequest")
    assert "is not a loopback address" in answer["message"] and "remoteWebhookAddresses" in answer["message"]
    assert cluster.webhook_addresses == {}
    for loopback in ("127.0.0.1:8443", "127.9.9.9:1", "localhost:8443", "[::1]:8443"):
        code, answer = send(cluster, "PUT", "/fakekube/v1/webhook-addresses", admin_token(cluster),
                            {"hooks.default.svc:443": loopback})
        assert (code, answer) == (200, {"hooks.default.svc:443": loopback})


def test_the_config_may_allow_remote_webhook_addresses() -> None:
    with Cluster(remote_webhook_addresses=True) as open_cluster:
        attach_control(open_cluster)
        code, answer = send(open_cluster, "PUT", "/fakekube/v1/webhook-addresses", None,
                            {"hooks.default.svc:443": "10.0.0.8:443"})
        assert (code, answer) == (200, {"hooks.default.svc:443": "10.0.0.8:443"})
