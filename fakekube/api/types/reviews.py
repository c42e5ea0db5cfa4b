"""The review APIs: access reviews, rules reviews, SelfSubjectReview and TokenReview.

Upstream serves these from REST storages that compute an answer and store nothing
(``pkg/registry/authorization/*``, ``pkg/registry/authentication/*``). fakekube
authorizes everything (docs/api.md), so access reviews answer ``allowed: true`` and the
rules review grants ``*``; validation follows ``pkg/apis/authorization/validation``
(1.31–1.33), including its quirk of naming no kind in the 422 (``.authorization.k8s.io``).
"""

from __future__ import annotations

from typing import Any

from fakekube.api.auth import identity, tokens
from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FieldError
from fakekube.api.registry import CREATE_ONLY, ResourceType, Strategy, WriteContext
from fakekube.api.types._util import GoLiteral
from fakekube.clock import format_rfc3339

Obj = dict[str, Any]

EXACTLY_ONE = "exactly one of nonResourceAttributes or resourceAttributes must be specified"
ALL_RESOURCE_RULES = [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]
ALL_NON_RESOURCE_RULES = [{"verbs": ["*"], "nonResourceURLs": ["*"]}]


def _go_non_resource_attributes(value: Any) -> GoLiteral:
    """``%#v`` of the internal ``authorization.NonResourceAttributes`` a field error shows."""
    value = value if isinstance(value, dict) else {}
    return GoLiteral(f'authorization.NonResourceAttributes{{Path:"{value.get("path", "")}", '
                     f'Verb:"{value.get("verb", "")}"}}')


def _spec(obj: Obj) -> Obj:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def attributes_errors(spec: Obj) -> list[FieldError]:
    """``ValidateSelfSubjectAccessReviewSpec``: exactly one of the two attribute sets."""
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    problems: list[FieldError] = []
    if resource is not None and non_resource is not None:
        problems.append(errors.invalid("spec.nonResourceAttributes", _go_non_resource_attributes(non_resource),
                                       "cannot be specified in combination with resourceAttributes"))
    if resource is None and non_resource is None:
        # Upstream passes the nil NonResourceAttributes pointer, which renders as "null".
        problems.append(errors.invalid("spec.resourceAttributes", "null", EXACTLY_ONE))
    return problems


def selector_errors(spec: Obj) -> list[FieldError]:
    """``validateResourceAttributes``: a field or label selector needs exactly one form."""
    resource = spec.get("resourceAttributes")
    if not isinstance(resource, dict):
        return []
    problems: list[FieldError] = []
    for name in ("fieldSelector", "labelSelector"):
        selector = resource.get(name)
        if not isinstance(selector, dict):
            continue
        path = f"spec.resourceAttributes.{name}"
        raw, requirements = selector.get("rawSelector") or "", selector.get("requirements") or []
        if raw and requirements:
            problems.append(errors.invalid(f"{path}.rawSelector", raw, "may not specified at the same time as requirements"))
        if not raw and not requirements:
            problems.append(errors.required(f"{path}.requirements",
                                            f"when {path} is specified, requirements or rawSelector is required"))
    return problems


def subject_errors(spec: Obj) -> list[FieldError]:
    """``ValidateSubjectAccessReviewSpec``'s extra rule: a user or a group to ask about."""
    if not spec.get("user") and not spec.get("groups"):
        return [errors.invalid("spec.user", spec.get("user") or "", "at least one of user or group must be specified")]
    return []


def _echo(obj: Obj) -> Obj:
    """Upstream returns the decoded request; its zero creationTimestamp encodes as null (1.33)."""
    obj.setdefault("metadata", {}).setdefault("creationTimestamp", None)
    return obj


class _AccessReviewStrategy(Strategy):
    """Every access review is allowed: fakekube has no authorizer (``system:masters``)."""

    def invalid_kind(self, kind: str) -> str:
        return ""

    def review(self, obj: Obj, ctx: WriteContext) -> Obj:
        obj["status"] = {"allowed": True}
        return _echo(obj)


class SelfSubjectAccessReviewStrategy(_AccessReviewStrategy):
    def validate(self, obj: Obj) -> list[FieldError]:
        spec = _spec(obj)
        return attributes_errors(spec) + selector_errors(spec)


SELF_SUBJECT_ACCESS_REVIEWS = ResourceType(
    "authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews", namespaced=False,
    verbs=CREATE_ONLY, strategy=SelfSubjectAccessReviewStrategy(), persisted=False,
)


class SubjectAccessReviewStrategy(_AccessReviewStrategy):
    def validate(self, obj: Obj) -> list[FieldError]:
        spec = _spec(obj)
        return attributes_errors(spec) + subject_errors(spec) + selector_errors(spec)


SUBJECT_ACCESS_REVIEWS = ResourceType(
    "authorization.k8s.io", "v1", "SubjectAccessReview", "subjectaccessreviews", namespaced=False, verbs=CREATE_ONLY,
    strategy=SubjectAccessReviewStrategy(), persisted=False,
)


class LocalSubjectAccessReviewStrategy(_AccessReviewStrategy):
    def validate(self, obj: Obj) -> list[FieldError]:
        spec = _spec(obj)
        problems = attributes_errors(spec) + subject_errors(spec) + selector_errors(spec)
        namespace = (obj.get("metadata") or {}).get("namespace") or ""
        resource = spec.get("resourceAttributes")
        if isinstance(resource, dict) and (resource.get("namespace") or "") != namespace:
            problems.append(errors.invalid("spec.resourceAttributes.namespace", resource.get("namespace") or "",
                                           "must match metadata.namespace"))
        if spec.get("nonResourceAttributes") is not None:
            problems.append(errors.invalid("spec.nonResourceAttributes",
                                           _go_non_resource_attributes(spec["nonResourceAttributes"]),
                                           "disallowed on this kind of request"))
        return problems


LOCAL_SUBJECT_ACCESS_REVIEWS = ResourceType(
    "authorization.k8s.io", "v1", "LocalSubjectAccessReview", "localsubjectaccessreviews", namespaced=True,
    verbs=CREATE_ONLY, strategy=LocalSubjectAccessReviewStrategy(), persisted=False,
)


class SelfSubjectRulesReviewStrategy(Strategy):
    """The rules of a cluster admin: everything, on every resource and URL."""

    def invalid_kind(self, kind: str) -> str:
        return ""

    def review(self, obj: Obj, ctx: WriteContext) -> Obj:
        if not _spec(obj).get("namespace"):
            raise errors.bad_request("no namespace on request")
        # Upstream answers with a new object: the request's spec is not echoed.
        return {"metadata": {"creationTimestamp": None}, "spec": {},
                "status": {"resourceRules": ALL_RESOURCE_RULES, "nonResourceRules": ALL_NON_RESOURCE_RULES,
                           "incomplete": False}}


SELF_SUBJECT_RULES_REVIEWS = ResourceType(
    "authorization.k8s.io", "v1", "SelfSubjectRulesReview", "selfsubjectrulesreviews", namespaced=False,
    verbs=CREATE_ONLY, strategy=SelfSubjectRulesReviewStrategy(), persisted=False,
)


class SelfSubjectReviewStrategy(Strategy):
    """``kubectl auth whoami``: the caller is always the kubeconfig's admin."""

    def review(self, obj: Obj, ctx: WriteContext) -> Obj:
        return {"metadata": {"creationTimestamp": format_rfc3339(ctx.now)},
                "status": {"userInfo": identity.admin_user_info()}}


SELF_SUBJECT_REVIEWS = ResourceType(
    "authentication.k8s.io", "v1", "SelfSubjectReview", "selfsubjectreviews", namespaced=False, verbs=CREATE_ONLY,
    strategy=SelfSubjectReviewStrategy(), persisted=False,
)


class TokenReviewStrategy(Strategy):
    """Authenticate a bearer token: the kubeconfig's, or a service-account token we issued."""

    def review(self, obj: Obj, ctx: WriteContext) -> Obj:
        spec = _spec(obj)
        token = spec.get("token") or ""
        if not token:
            raise errors.bad_request("token is required for TokenReview in authentication")
        audiences = list(spec.get("audiences") or identity.API_AUDIENCES)
        found = tokens.authenticate(ctx, token, audiences)
        if found is None:
            obj["status"] = {"user": {}, "error": "invalid bearer token"}
        else:
            user, valid_for = found
            obj["status"] = {"authenticated": True, "user": user, "audiences": valid_for}
        return _echo(obj)


TOKEN_REVIEWS = ResourceType(
    "authentication.k8s.io", "v1", "TokenReview", "tokenreviews", namespaced=False, verbs=CREATE_ONLY,
    strategy=TokenReviewStrategy(), persisted=False,
)
