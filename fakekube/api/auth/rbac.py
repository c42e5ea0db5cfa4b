"""RBAC: Roles, ClusterRoles and their bindings decide what a user may do.

Upstream's evaluation (``plugin/pkg/auth/authorizer/rbac/rbac.go``,
``pkg/registry/rbac/validation/rule.go``, ``pkg/apis/rbac/v1/evaluation_helpers.go``),
read from the store on every call, so a binding written a moment ago counts at once:

- the ClusterRoleBindings whose subjects include the user, then (for a namespaced
  request) the namespace's RoleBindings, each resolved to its role's rules;
- a rule allows a resource request when verb, API group, resource (``pods/log`` names
  a subresource, ``*/log`` any resource's, ``*`` everything) and resourceNames (empty:
  any) all match; a non-resource request when verb and path match (``/apis/*`` is a
  prefix);
- a binding whose role is missing adds an error (``role.rbac.authorization.k8s.io "x"
  not found``) that a denial reports after ``RBAC: ``.

Bindings are visited in name order (upstream: informer order, i.e. unordered).
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

from fakekube.api.auth.attributes import Attributes
from fakekube.api.auth.identity import UserInfo, service_account_username
from fakekube.api.registry import StoreReader

Obj = dict[str, Any]
GROUP = "rbac.authorization.k8s.io"
#: A rule source's description and the rule, or an error resolving a binding.
Visit = Callable[["Source | None", "Obj | None", "str | None"], bool]


class Decision(NamedTuple):
    """``authorizer.Decision`` with its reason (shown after a 403's message, in reviews)."""

    allowed: bool
    reason: str = ""


class Source(NamedTuple):
    """Which binding granted a rule (``roleBindingDescriber``/``clusterRoleBindingDescriber``)."""

    binding: Obj
    subject: Obj

    def describe(self) -> str:
        meta = self.binding["metadata"]
        ref = self.binding.get("roleRef") or {}
        namespace = meta.get("namespace") or ""
        if namespace:
            head = f'RoleBinding "{meta["name"]}/{namespace}"'
        else:
            head = f'ClusterRoleBinding "{meta["name"]}"'
        return f'{head} of {ref.get("kind", "")} "{ref.get("name", "")}" to {_describe_subject(self.subject, namespace)}'


def _describe_subject(subject: Obj, binding_namespace: str) -> str:
    kind, name = subject.get("kind", ""), subject.get("name", "")
    if kind == "ServiceAccount":
        return f'{kind} "{name}/{subject.get("namespace") or binding_namespace}"'
    return f'{kind} "{name}"'


# -- rule matching (pure) --------------------------------------------------------------

def verb_matches(rule: Obj, verb: str) -> bool:
    verbs = rule.get("verbs") or ()
    return "*" in verbs or verb in verbs


def api_group_matches(rule: Obj, group: str) -> bool:
    groups = rule.get("apiGroups") or ()
    return "*" in groups or group in groups


def resource_matches(rule: Obj, combined: str, subresource: str) -> bool:
    for resource in rule.get("resources") or ():
        if resource == "*" or resource == combined:
            return True
        if subresource and resource == f"*/{subresource}":
            return True
    return False


def resource_name_matches(rule: Obj, name: str) -> bool:
    names = rule.get("resourceNames") or ()
    return not names or name in names


def non_resource_url_matches(rule: Obj, path: str) -> bool:
    for url in rule.get("nonResourceURLs") or ():
        if url == "*" or url == path:
            return True
        if url.endswith("*") and path.startswith(url.rstrip("*")):
            return True
    return False


def rule_allows(attrs: Attributes, rule: Obj) -> bool:
    """``RuleAllows``."""
    if not verb_matches(rule, attrs.verb):
        return False
    if attrs.resource_request:
        return (api_group_matches(rule, attrs.api_group)
                and resource_matches(rule, attrs.combined_resource, attrs.subresource)
                and resource_name_matches(rule, attrs.name))
    return non_resource_url_matches(rule, attrs.path)


def applies_to(user: UserInfo, subject: Obj, namespace: str) -> bool:
    """``appliesToUser``: a ServiceAccount subject without a namespace means the binding's."""
    kind, name = subject.get("kind"), subject.get("name") or ""
    if kind == "User":
        return user.username == name
    if kind == "Group":
        return name in user.groups
    if kind == "ServiceAccount":
        sa_namespace = subject.get("namespace") or namespace
        return bool(sa_namespace) and user.username == service_account_username(sa_namespace, name)
    return False


# -- the store-backed resolver -----------------------------------------------------------

class RuleResolver:
    """Rules of a user, from the bindings and roles in the store (``DefaultRuleResolver``)."""

    def __init__(self, store: StoreReader, missing_as: str = "") -> None:
        self.store = store
        #: The RBAC storages' escalation checks read roles through the registry, whose
        #: NotFound names the resource of the request being served (``roles``,
        #: ``rolebindings``...): ``missing_as`` is that plural. Empty: the authorizer's
        #: listers' words (``role.rbac.authorization.k8s.io``, ``clusterrole.…``).
        self.missing_as = missing_as

    def visit_rules_for(self, user: UserInfo, namespace: str, visit: Visit) -> None:
        """Call ``visit(source, rule, None)`` per rule and ``visit(None, None, error)`` per
        unresolvable binding, until ``visit`` returns False."""
        bindings = self.store.list_objects(GROUP, "clusterrolebindings")
        if not self._visit_bindings(bindings, user, "", visit):
            return
        if namespace:
            self._visit_bindings(self.store.list_objects(GROUP, "rolebindings", namespace), user, namespace, visit)

    def _visit_bindings(self, bindings: list[Obj], user: UserInfo, namespace: str, visit: Visit) -> bool:
        for binding in sorted(bindings, key=lambda b: b["metadata"]["name"]):
            subject = _applying_subject(user, binding, namespace)
            if subject is None:
                continue
            rules, error = self.role_rules(binding.get("roleRef") or {}, namespace)
            if error is not None:
                if not visit(None, None, error):
                    return False
                continue
            source = Source(binding, subject)
            for rule in rules:
                if not visit(source, rule, None):
                    return False
        return True

    def role_rules(self, ref: Obj, namespace: str) -> tuple[list[Obj], str | None]:
        """``GetRoleReferenceRules``: the rules of a binding's role, or the error finding it."""
        kind, name = ref.get("kind"), ref.get("name") or ""
        if kind == "Role":
            role = self.store.get_object(GROUP, "roles", namespace, name)
            if role is None:
                return [], f'{self.missing_as or "role"}.{GROUP} "{name}" not found'
        elif kind == "ClusterRole":
            role = self.store.get_object(GROUP, "clusterroles", "", name)
            if role is None:
                return [], f'{self.missing_as or "clusterrole"}.{GROUP} "{name}" not found'
        else:
            return [], f'unsupported role reference kind: "{kind}"'
        return list(role.get("rules") or ()), None

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[Obj], list[str]]:
        """Every rule the user holds in ``namespace`` (cluster-wide ones included), and the errors."""
        rules: list[Obj] = []
        problems: list[str] = []

        def collect(_: Source | None, rule: Obj | None, error: str | None) -> bool:
            if error is not None:
                problems.append(error)
            elif rule is not None:
                rules.append(rule)
            return True

        self.visit_rules_for(user, namespace, collect)
        return rules, problems


def _applying_subject(user: UserInfo, binding: Obj, namespace: str) -> Obj | None:
    for subject in binding.get("subjects") or ():
        if applies_to(user, subject, namespace):
            return subject
    return None


def aggregate(problems: list[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one message as is, several (deduplicated) in brackets."""
    unique = list(dict.fromkeys(problems))
    if len(unique) == 1:
        return unique[0]
    return "[" + ", ".join(unique) + "]"


class RBACAuthorizer:
    """``RBACAuthorizer.Authorize``: allowed by the first matching rule, else no opinion."""

    def __init__(self, store: StoreReader) -> None:
        self.resolver = RuleResolver(store)

    def authorize(self, attrs: Attributes) -> Decision:
        found: list[str] = []
        problems: list[str] = []

        def check(source: Source | None, rule: Obj | None, error: str | None) -> bool:
            if error is not None:
                problems.append(error)
                return True
            if rule is not None and source is not None and rule_allows(attrs, rule):
                found.append(f"RBAC: allowed by {source.describe()}")
                return False
            return True

        self.resolver.visit_rules_for(attrs.user, attrs.namespace, check)
        if found:
            return Decision(True, found[0])
        return Decision(False, f"RBAC: {aggregate(problems)}" if problems else "")

