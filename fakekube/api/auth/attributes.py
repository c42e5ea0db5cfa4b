"""What a request asks to do, as an authorizer sees it (upstream's ``RequestInfoFactory``).

An authorizer decides on attributes, not on URLs: the verb (``get``/``list``/``watch``/
``create``/``update``/``patch``/``delete``/``deletecollection``, from the method and the
path), the namespace, API group, resource, subresource and name — or, outside
``/api`` and ``/apis``, the path and the lower-cased method (a non-resource request).
The quirks are upstream's (``staging/src/k8s.io/apiserver/pkg/endpoints/request/requestinfo.go``):
``/api/v1`` and ``/apis/apps/v1`` are non-resource requests; ``/api/v1/namespaces/foo``
names namespace ``foo`` in namespace ``foo``; a collection GET or DELETE with
``fieldSelector=metadata.name=x`` names ``x`` (so a DELETE of it is ``delete``, not
``deletecollection``).
"""

from __future__ import annotations

from typing import Mapping

from fakekube.api.auth.identity import UserInfo
from fakekube.api.machinery.params import query_bool

API_PREFIXES = ("api", "apis")
SPECIAL_VERBS = ("proxy", "watch")
#: The special verbs whose path carries no subresource (``specialVerbsNoSubresources``):
#: only ``proxy``. A ``/watch/`` path keeps its subresource, so ``…/watch/…/pods/p/log``
#: is authorized as watch of ``pods/log``, never as watch of ``pods``.
SPECIAL_VERBS_NO_SUBRESOURCES = ("proxy",)
NAMESPACE_SUBRESOURCES = ("status", "finalize")
METHOD_VERBS = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


class Attributes:
    """``authorizer.AttributesRecord``: who asks to do what. One per authorized request,
    read and never changed."""

    __slots__ = ("user", "verb", "resource_request", "namespace", "api_group", "api_version", "resource",
                 "subresource", "name", "path")

    def __init__(self, user: UserInfo, verb: str, resource_request: bool = True, namespace: str = "",
                 api_group: str = "", api_version: str = "", resource: str = "", subresource: str = "",
                 name: str = "", path: str = "") -> None:
        self.user = user
        self.verb = verb
        self.resource_request = resource_request
        self.namespace = namespace
        self.api_group = api_group
        self.api_version = api_version
        self.resource = resource
        self.subresource = subresource
        self.name = name
        self.path = path

    @property
    def combined_resource(self) -> str:
        """``pods/log``: resource and subresource as RBAC rules name them."""
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


def request_attributes(user: UserInfo, method: str, path: str, query: Mapping[str, str]) -> Attributes:
    """The attributes of an HTTP request (``RequestInfoFactory.NewRequestInfo``).

    ``query`` is the request's parameters as the handlers read them (first value of each
    name): the one parse both sides share."""
    parts = [part for part in path.strip("/").split("/") if part] if path.strip("/") else []
    non_resource = Attributes(user, method.lower(), resource_request=False, path=path)
    if len(parts) < 3 or parts[0] not in API_PREFIXES:
        return non_resource
    group = ""
    rest = parts[1:]
    if parts[0] == "apis":
        if len(rest) < 3:
            return non_resource
        group, rest = rest[0], rest[1:]
    version, rest = rest[0], rest[1:]
    if rest and rest[0] in SPECIAL_VERBS:
        if len(rest) < 2:
            return non_resource  # upstream: an error, and the request is treated as non-resource
        verb, rest = rest[0], rest[1:]
    else:
        verb = METHOD_VERBS.get(method, "")
    namespace = ""
    if rest and rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0] if rest else ""
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 and verb not in SPECIAL_VERBS_NO_SUBRESOURCES else ""
    if not name and verb == "get":
        verb = "watch" if query_bool(query.get("watch")) else "list"
    if not name and verb in ("get", "list", "watch", "delete"):
        name = _exact_name(query.get("fieldSelector") or "")
    if not name and verb == "delete":
        verb = "deletecollection"
    return Attributes(user, verb, True, namespace, group, version, resource, subresource, name, path)


def _exact_name(field_selector: str) -> str:
    """``fieldSelector.RequiresExactMatch("metadata.name")``, when the name is a valid path segment."""
    for term in field_selector.split(","):
        key, op, value = _split_term(term.strip())
        if key == "metadata.name" and op in ("=", "==") and value not in (".", "..") \
                and "/" not in value and "%" not in value:
            return value
    return ""


def _split_term(term: str) -> tuple[str, str, str]:
    for op in ("!=", "==", "="):
        key, found, value = term.partition(op)
        if found:
            return key.strip(), op, value.strip()
    return term, "", ""
