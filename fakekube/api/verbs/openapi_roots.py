"""The OpenAPI v3 documents that are not a group-version's: ``api``, ``apis``, one per group
(``apis/apps``), ``version``, ``.well-known/openid-configuration`` and ``openid/v1/jwks``.

kube-apiserver registers these handlers (legacy and group discovery, ``/version``, the
service-account issuer's discovery) in its OpenAPI too, so ``/openapi/v3`` lists them beside
the group-versions and ``/openapi/v2`` carries their paths and the discovery types
(APIVersions, APIGroupList, APIGroup, version.Info). Each document is one GET operation
answering 200 with its type (or a string), 401 otherwise, as upstream's.
"""

from __future__ import annotations

from typing import Any

Doc = dict[str, Any]

META = "io.k8s.apimachinery.pkg.apis.meta.v1."
VERSION_INFO = "io.k8s.apimachinery.pkg.version.Info"
DISCOVERY_CONTENT_TYPES = ("application/json", "application/vnd.kubernetes.protobuf", "application/yaml")
SECURITY_SCHEMES = {"BearerToken": {"type": "apiKey", "description": "Bearer Token authentication",
                                    "name": "authorization", "in": "header"}}
#: Path → (URL, tag, description, operationId, answer: a definition or a media type of a string).
_FIXED: dict[str, tuple[str, str, str, str, str]] = {
    ".well-known/openid-configuration": (
        "/.well-known/openid-configuration/", "WellKnown",
        "get service account issuer OpenID configuration, also known as the 'OIDC discovery doc'",
        "getServiceAccountIssuerOpenIDConfiguration", "application/json"),
    "api": ("/api/", "core", "get available API versions", "getCoreAPIVersions", META + "APIVersions"),
    "apis": ("/apis/", "apis", "get available API versions", "getAPIVersions", META + "APIGroupList"),
    "openid/v1/jwks": (
        "/openid/v1/jwks/", "openid",
        "get service account issuer OpenID JSON Web Key Set (contains public token verification keys)",
        "getServiceAccountIssuerOpenIDKeyset", "application/jwk-set+json"),
    "version": ("/version/", "version", "get the version information for this server", "getCodeVersion", VERSION_INFO),
}


def root_paths(groups: list[str]) -> list[str]:
    """The non-group-version documents of a server whose built-in named groups are ``groups``."""
    return sorted([*_FIXED, *(f"apis/{group}" for group in groups)])


def _group_camel(group: str) -> str:
    """``rbac.authorization.k8s.io`` → ``rbacAuthorization``: upstream's tag of a group."""
    parts = group.removesuffix(".k8s.io").split(".")
    camel = "".join(p[:1].upper() + p[1:] for p in parts)
    return camel[:1].lower() + camel[1:]


def _operation(tag: str, description: str, operation_id: str, answer: str) -> Doc:
    if answer.startswith("io.k8s."):
        types = ("application/json",) if answer == VERSION_INFO else DISCOVERY_CONTENT_TYPES
        content = {media: {"schema": {"$ref": "#/components/schemas/" + answer}} for media in types}
    else:
        content = {answer: {"schema": {"type": "string"}}}
    return {"tags": [tag], "description": description, "operationId": operation_id,
            "responses": {"200": {"description": "OK", "content": content}, "401": {"description": "Unauthorized"}}}


def root_paths_item(path: str) -> tuple[Doc, str | None] | None:
    """(the ``paths`` of non-group-version document ``path``, the definition it answers with
    or None), or None when ``path`` is not one; :mod:`.openapi` adds the definitions."""
    if path in _FIXED:
        url, tag, description, operation_id, answer = _FIXED[path]
    elif path.startswith("apis/") and path.count("/") == 1:
        group = path[len("apis/"):]
        camel = _group_camel(group)
        url, tag, description = f"/apis/{group}/", camel, "get information of a group"
        operation_id, answer = f"get{camel[:1].upper()}{camel[1:]}APIGroup", META + "APIGroup"
    else:
        return None
    paths = {url: {"get": _operation(tag, description, operation_id, answer)}}
    return paths, (answer if answer.startswith("io.k8s.") else None)
