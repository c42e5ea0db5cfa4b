"""RBAC's pure parts: request attributes (upstream's RequestInfoFactory), rule matching, and
the escalation check's breakdown, compaction and wording."""

from __future__ import annotations

import pytest

from fakekube.api.auth.attributes import request_attributes
from fakekube.api.auth.escalation import breakdown, compact, compact_string, covers
from fakekube.api.auth.identity import ADMIN
from fakekube.api.auth.rbac import aggregate, rule_allows


@pytest.mark.parametrize("method, path, query, expected", [
    ("GET", "/api/v1/namespaces/ns/pods", {}, ("list", "ns", "", "pods", "", "")),
    ("GET", "/api/v1/namespaces/ns/pods", {"watch": "1"}, ("watch", "ns", "", "pods", "", "")),
    ("GET", "/api/v1/namespaces/ns/pods", {"watch": "false"}, ("list", "ns", "", "pods", "", "")),
    ("GET", "/api/v1/watch/namespaces/ns/pods/web", {}, ("watch", "ns", "", "pods", "", "web")),
    # The watch prefix keeps the subresource (only proxy drops it), whatever the method.
    ("POST", "/api/v1/watch/namespaces/ns/serviceaccounts/sa/token", {},
     ("watch", "ns", "", "serviceaccounts", "token", "sa")),
    ("GET", "/api/v1/watch/namespaces/ns/pods/web/log", {}, ("watch", "ns", "", "pods", "log", "web")),
    ("GET", "/api/v1/watch/namespaces/ns/status", {}, ("watch", "ns", "", "namespaces", "status", "ns")),
    ("GET", "/api/v1/proxy/namespaces/ns/pods/web/healthz", {}, ("proxy", "ns", "", "pods", "", "web")),
    # watch= as Go's parameter codec reads it: EqualFold("falſe", "false"), anything else true.
    ("GET", "/api/v1/namespaces/ns/pods", {"watch": "fal\u017fe"}, ("list", "ns", "", "pods", "", "")),
    ("GET", "/api/v1/namespaces/ns/pods", {"watch": "FaLsE"}, ("list", "ns", "", "pods", "", "")),
    ("GET", "/api/v1/namespaces/ns/pods", {"watch": ""}, ("watch", "ns", "", "pods", "", "")),
    ("GET", "/api/v1/namespaces/ns/pods/web/log", {}, ("get", "ns", "", "pods", "log", "web")),
    ("POST", "/apis/apps/v1/namespaces/ns/deployments", {}, ("create", "ns", "apps", "deployments", "", "")),
    ("PATCH", "/apis/apps/v1/namespaces/ns/deployments/web/scale", {}, ("patch", "ns", "apps", "deployments", "scale", "web")),
    ("DELETE", "/api/v1/namespaces/ns/pods", {}, ("deletecollection", "ns", "", "pods", "", "")),
    # A field selector on the name names the object; a DELETE of it is then a delete.
    ("DELETE", "/api/v1/namespaces/ns/pods", {"fieldSelector": "metadata.name=web"}, ("delete", "ns", "", "pods", "", "web")),
    ("GET", "/api/v1/namespaces/ns/pods", {"fieldSelector": "metadata.name==web"}, ("list", "ns", "", "pods", "", "web")),
    # The namespace object is in its own namespace.
    ("GET", "/api/v1/namespaces/ns", {}, ("get", "ns", "", "namespaces", "", "ns")),
    ("PUT", "/api/v1/namespaces/ns/finalize", {}, ("update", "ns", "", "namespaces", "finalize", "ns")),
    ("GET", "/api/v1/namespaces", {}, ("list", "", "", "namespaces", "", "")),
    ("GET", "/api/v1/nodes/n1", {}, ("get", "", "", "nodes", "", "n1")),
])
def test_resource_attributes(method: str, path: str, query: dict[str, str], expected: tuple[str, ...]) -> None:
    attrs = request_attributes(ADMIN, method, path, query)
    assert attrs.resource_request
    assert (attrs.verb, attrs.namespace, attrs.api_group, attrs.resource, attrs.subresource, attrs.name) == expected


@pytest.mark.parametrize("method, path, verb", [
    ("GET", "/api", "get"), ("GET", "/api/v1", "get"), ("GET", "/apis/apps/v1", "get"), ("GET", "/healthz", "get"),
    ("POST", "/version", "post"), ("GET", "/openapi/v3/apis/apps/v1", "get"),
])
def test_non_resource_attributes(method: str, path: str, verb: str) -> None:
    attrs = request_attributes(ADMIN, method, path, {})
    assert (attrs.resource_request, attrs.verb, attrs.path) == (False, verb, path)


def test_rule_matching() -> None:
    def allows(rule: dict, method: str, path: str, query: dict[str, str] | None = None) -> bool:
        return rule_allows(request_attributes(ADMIN, method, path, query or {}), rule)
    pods = {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}
    assert allows(pods, "GET", "/api/v1/namespaces/ns/pods/web")
    assert not allows(pods, "GET", "/api/v1/namespaces/ns/pods/web/log")
    assert allows({**pods, "resources": ["*/log"]}, "GET", "/api/v1/namespaces/ns/pods/web/log")
    assert not allows({**pods, "resources": ["*/log"]}, "GET", "/api/v1/namespaces/ns/pods/web")
    assert allows({**pods, "resourceNames": ["web"]}, "GET", "/api/v1/namespaces/ns/pods/web")
    assert not allows({**pods, "resourceNames": ["web"]}, "GET", "/api/v1/namespaces/ns/pods/db")
    assert not allows({**pods, "verbs": ["list"], "resourceNames": ["web"]}, "GET", "/api/v1/namespaces/ns/pods")
    assert not allows(pods, "GET", "/apis/apps/v1/namespaces/ns/pods/web")
    urls = {"verbs": ["get"], "nonResourceURLs": ["/apis/*", "/healthz"]}
    assert allows(urls, "GET", "/apis/apps/v1") and allows(urls, "GET", "/healthz")
    assert not allows(urls, "GET", "/healthz/ping") and not allows(urls, "POST", "/healthz")


def test_escalation_breakdown_and_wording() -> None:
    rule = {"verbs": ["get", "list"], "apiGroups": ["", "apps"], "resources": ["pods"], "resourceNames": ["a"]}
    assert len(breakdown(rule)) == 4
    owner = {"verbs": ["*"], "apiGroups": [""], "resources": ["pods", "*/log"]}
    assert covers(owner, {"verbs": ["get"], "apiGroups": [""], "resources": ["deployments/log"]})
    assert not covers(owner, {"verbs": ["get"], "apiGroups": ["apps"], "resources": ["pods"]})
    assert not covers({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]},
                      {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]})
    merged = compact([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]},
                      {"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]},
                      {"verbs": ["get"], "nonResourceURLs": ["/x"]}])
    assert [compact_string(r) for r in merged] == ['{NonResourceURLs:["/x"], Verbs:["get"]}',
                                                   '{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}']
    assert aggregate(["a", "b", "a"]) == "[a, b]" and aggregate(["a"]) == "a"
