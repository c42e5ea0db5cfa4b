"""The review APIs: access reviews, rules reviews, SelfSubjectReview and TokenReview.

Upstream serves these from REST storages that compute an answer and store nothing
(``pkg/registry/authorization/*``, ``pkg/registry/authentication/*``). They answer from
the cluster's authorization mode (:mod:`fakekube.api.auth.authorizer`): with
``AlwaysAllow`` (the default) every access review is allowed and the rules review grants
``*``; with ``RBAC`` the answers come from the roles and bindings in the store. The
asking user comes in on the write context. Validation follows
``pkg/apis/authorization/validation`` (1.31–1.33), including its quirk of naming no kind
in the 422 (``.authorization.k8s.io``).
"""

from __future__ import annotations

from typing import Any

from fakekube.api.auth import identity, tokens
from fakekube.api.auth.attributes import Attributes
from fakekube.api.auth.authorizer import RBAC, authorize
from fakekube.api.auth.identity import ADMIN, UserInfo
from fakekube.api.auth.rbac import RuleResolver, aggregate
from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FieldError
from fakekube.api.registry import CREATE_ONLY, ResourceType, Strategy, WriteContext
from fakekube.api.types._util import GoLiteral
from fakekube.api.types.core_pods import zero_creation_timestamp
from fakekube.clock import format_rfc3339
from fakekube.objects.syntax import go_quote

Obj = dict[str, Any]

EXACTLY_ONE = "exactly one of nonResourceAttributes or resourceAttributes must be specified"
ALL_RESOURCE_RULES = [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]
ALL_NON_RESOURCE_RULES = [{"verbs": ["*"], "nonResourceURLs": ["*"]}]


def _go_non_resource_attributes(value: Any) -> GoLiteral:
    """The internal ``authorization.NonResourceAttributes`` a field error shows: ``%#v`` up to
    1.33, its ``json.Marshal`` (Go's field names) from 1.34."""
    value = value if isinstance(value, dict) else {}
    path, verb = str(value.get("path") or ""), str(value.get("verb") or "")
    return GoLiteral(f"authorization.NonResourceAttributes{{Path:{go_quote(path)}, Verb:{go_quote(verb)}}}",
                     errors.go_json_struct([("Path", path), ("Verb", verb)]))


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


def _echo(obj: Obj, ctx: WriteContext) -> Obj:
    """Upstream returns the decoded request; its zero creationTimestamp encodes as null up
    to 1.33 and is left out from 1.34."""
    zero_creation_timestamp(obj.setdefault("metadata", {}), ctx.release)
    return obj


def asker(ctx: WriteContext) -> UserInfo:
    """The user making the request (None on the context: the admin)."""
    return ctx.user if isinstance(ctx.user, UserInfo) else ADMIN


def review_attributes(user: UserInfo, spec: Obj) -> Attributes:
    """``ResourceAttributesFrom``/``NonResourceAttributesFrom``."""
    resource = spec.get("resourceAttributes")
    if isinstance(resource, dict):
        return Attributes(user, resource.get("verb") or "", True, resource.get("namespace") or "",
                          resource.get("group") or "", resource.get("version") or "", resource.get("resource") or "",
                          resource.get("subresource") or "", resource.get("name") or "")
    non_resource = spec.get("nonResourceAttributes") or {}
    return Attributes(user, non_resource.get("verb") or "", False, path=non_resource.get("path") or "")


def spec_user(spec: Obj) -> UserInfo:
    """The user a SubjectAccessReview asks about."""
    extra = spec.get("extra") or {}
    return UserInfo(spec.get("user") or "", tuple(spec.get("groups") or ()), spec.get("uid") or "",
                    tuple((key, tuple(extra[key] or ())) for key in sorted(extra)))


class _AccessReviewStrategy(Strategy):
    """``SubjectAccessReviewStatus`` from the authorizer: allowed, and its reason."""

    def invalid_kind(self, kind: str) -> str:
        return ""

    def subject(self, obj: Obj, ctx: WriteContext) -> UserInfo:
        return asker(ctx)

    def review(self, obj: Obj, ctx: WriteContext) -> Obj:
        decision = authorize(ctx.authorization_mode, ctx.store, review_attributes(self.subject(obj, ctx), _spec(obj)))
        status: Obj = {"allowed": decision.allowed}
        if decision.reason:
            status["reason"] = decision.reason
        obj["status"] = status
        return _echo(obj, ctx)


class SelfSubjectAccessReviewStrategy(_AccessReviewStrategy):
    def validate(self, obj: Obj) -> list[FieldError]:
        spec = _spec(obj)
        return attributes_errors(spec) + selector_errors(spec)


SELF_SUBJECT_ACCESS_REVIEWS = ResourceType(
    "authorization.k8s.io", "v1", "SelfSubjectAccessReview", "selfsubjectaccessreviews", namespaced=False,
    verbs=CREATE_ONLY, strategy=SelfSubjectAccessReviewStrategy(), persisted=False,
)


class SubjectAccessReviewStrategy(_AccessReviewStrategy):
    def subject(self, obj: Obj, ctx: WriteContext) -> UserInfo:
        return spec_user(_spec(obj))

    def validate(self, obj: Obj) -> list[FieldError]:
        spec = _spec(obj)
        return attributes_errors(spec) + subject_errors(spec) + selector_errors(spec)


SUBJECT_ACCESS_REVIEWS = ResourceType(
    "authorization.k8s.io", "v1", "SubjectAccessReview", "subjectaccessreviews", namespaced=False, verbs=CREATE_ONLY,
    strategy=SubjectAccessReviewStrategy(), persisted=False,
)


class LocalSubjectAccessReviewStrategy(_AccessReviewStrategy):
    def subject(self, obj: Obj, ctx: WriteContext) -> UserInfo:
        return spec_user(_spec(obj))

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
    """The asker's rules in a namespace: everything while authorization is off, else RBAC's."""

    def invalid_kind(self, kind: str) -> str:
        return ""

    def review(self, obj: Obj, ctx: WriteContext) -> Obj:
        namespace = _spec(obj).get("namespace")
        if not namespace:
            raise errors.bad_request("no namespace on request")
        # Upstream answers with a new object: the request's spec is not echoed.
        status: Obj = {"resourceRules": ALL_RESOURCE_RULES, "nonResourceRules": ALL_NON_RESOURCE_RULES,
                       "incomplete": False}
        if ctx.authorization_mode == RBAC:
            status = rules_status(*RuleResolver(ctx.store).rules_for(asker(ctx), namespace))
        return {"metadata": {"creationTimestamp": None} if ctx.release.null_creation_timestamp else {}, "spec": {},
                "status": status}


def rules_status(rules: list[Obj], problems: list[str]) -> Obj:
    """``SubjectRulesReviewStatus``: resource rules, then non-resource rules, in visit order."""
    resource_rules: list[Obj] = []
    non_resource_rules: list[Obj] = []
    for rule in rules:
        if rule.get("resources"):
            converted = {"verbs": list(rule.get("verbs") or ()), "apiGroups": list(rule.get("apiGroups") or ()),
                         "resources": list(rule["resources"])}
            if rule.get("resourceNames"):
                converted["resourceNames"] = list(rule["resourceNames"])
            resource_rules.append(converted)
        if rule.get("nonResourceURLs"):
            non_resource_rules.append({"verbs": list(rule.get("verbs") or ()),
                                       "nonResourceURLs": list(rule["nonResourceURLs"])})
    status: Obj = {"resourceRules": resource_rules, "nonResourceRules": non_resource_rules, "incomplete": False}
    if problems:
        status["evaluationError"] = aggregate(problems)
    return status


SELF_SUBJECT_RULES_REVIEWS = ResourceType(
    "authorization.k8s.io", "v1", "SelfSubjectRulesReview", "selfsubjectrulesreviews", namespaced=False,
    verbs=CREATE_ONLY, strategy=SelfSubjectRulesReviewStrategy(), persisted=False,
)


class SelfSubjectReviewStrategy(Strategy):
    """``kubectl auth whoami``: the authenticated (or impersonated) caller."""

    def review(self, obj: Obj, ctx: WriteContext) -> Obj:
        return {"metadata": {"creationTimestamp": format_rfc3339(ctx.now)},
                "status": {"userInfo": asker(ctx).to_json()}}


SELF_SUBJECT_REVIEWS = ResourceType(
    "authentication.k8s.io", "v1", "SelfSubjectReview", "selfsubjectreviews", namespaced=False, verbs=CREATE_ONLY,
    strategy=SelfSubjectReviewStrategy(), persisted=False,
)


class TokenReviewStrategy(Strategy):
    """Authenticate a bearer token: the kubeconfig's, a static one, or a service-account token we issued."""

    def review(self, obj: Obj, ctx: WriteContext) -> Obj:
        spec = _spec(obj)
        token = spec.get("token") or ""
        if not token:
            raise errors.bad_request("token is required for TokenReview in authentication")
        audiences = list(spec.get("audiences") or identity.API_AUDIENCES)
        static = ctx.static_tokens.get(token)
        if isinstance(static, UserInfo):
            outcome = tokens.Outcome(static.with_authenticated().to_json(), audiences)
        elif ctx.token_cache is not None:
            outcome = ctx.token_cache.examine(ctx, token, audiences)
        else:
            outcome = tokens.examine(ctx, token, audiences)
        if outcome.user is None:
            # The union of request authenticators: the loopback token's bearer authenticator
            # refuses first, then the service-account one's error, if any (an aggregate).
            error = f"[{INVALID_BEARER_TOKEN}, {outcome.error}]" if outcome.error else INVALID_BEARER_TOKEN
            obj["status"] = {"user": {}, "error": error}
        else:
            obj["status"] = {"authenticated": True, "user": outcome.user, "audiences": outcome.audiences}
        return _echo(obj, ctx)


#: ``bearertoken``'s error for a token no authenticator accepted without saying why.
INVALID_BEARER_TOKEN = "invalid bearer token"


TOKEN_REVIEWS = ResourceType(
    "authentication.k8s.io", "v1", "TokenReview", "tokenreviews", namespaced=False, verbs=CREATE_ONLY,
    strategy=TokenReviewStrategy(), persisted=False,
)
