"""Privilege-escalation prevention on Role, ClusterRole and binding writes (RBAC on).

Upstream's policy-based storages (``pkg/registry/rbac/*/policybased/storage.go``,
``pkg/registry/rbac/validation/rule.go``, ``pkg/registry/rbac/escalation_check.go``):

- a Role/ClusterRole write passes when the writer is in ``system:masters`` (or is the
  cluster itself), holds ``escalate`` on it, or already holds every rule it grants (a
  ClusterRole with an ``aggregationRule`` grants everything);
- a binding write passes for ``system:masters``, for ``bind`` on the referenced role, or
  when the writer holds every rule of that role; a missing role is a 400;
- a refusal is a 403 on the object naming the missing rights, compacted and sorted:
  ``user "u" (groups=["g"]) is attempting to grant RBAC permissions not currently held:``
  then one ``{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`` per line.
"""

from __future__ import annotations

from typing import Any

from fakekube.api.auth.attributes import Attributes
from fakekube.api.auth.authorizer import RBAC, authorize
from fakekube.api.auth.identity import MASTERS, UserInfo
from fakekube.api.auth.rbac import GROUP, RuleResolver, aggregate
from fakekube.api.machinery.errors import bad_request, forbidden_error, not_found
from fakekube.api.registry import StoreReader

Obj = dict[str, Any]
ROLE_RESOURCES = ("roles", "clusterroles")
BINDING_RESOURCES = ("rolebindings", "clusterrolebindings")
FULL_AUTHORITY = [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}, {"verbs": ["*"], "nonResourceURLs": ["*"]}]
#: What the garbage collector may change without an escalation check (``IsOnlyMutatingGCFields``).
GC_FIELDS = ("ownerReferences", "finalizers")


def check_write(mode: str, store: StoreReader, group: str, plural: str, obj: Obj, old: Obj | None,
                user: UserInfo | None) -> None:
    """Raise the 403 (or 400) upstream's storage answers for this RBAC write, if any."""
    if mode != RBAC or group != GROUP or user is None or MASTERS in user.groups:
        return
    if old is not None and _only_gc_fields(obj, old):
        return
    namespace = (obj.get("metadata") or {}).get("namespace") or ""
    name = (obj.get("metadata") or {}).get("name") or ""
    resolver = RuleResolver(store, missing_as=plural)  # the storages' registry-backed role getters
    if plural in ROLE_RESOURCES:
        attrs = Attributes(user, "escalate", True, namespace, GROUP, "*", plural, "", name if old is not None else "")
        if authorize(mode, store, attrs).allowed:
            return
        rules = FULL_AUTHORITY if obj.get("aggregationRule") else list(obj.get("rules") or ())
    elif plural in BINDING_RESOURCES:
        ref = obj.get("roleRef") or {}
        resource = "roles" if ref.get("kind") == "Role" else "clusterroles"
        attrs = Attributes(user, "bind", True, namespace, GROUP, "*", resource, "", ref.get("name") or "")
        if authorize(mode, store, attrs).allowed:
            return
        rules, error = resolver.role_rules(ref, namespace)
        if error is not None and ref.get("kind") in ("Role", "ClusterRole"):
            raise not_found(GROUP, plural, ref.get("name") or "")  # the registry's, naming the request's resource
        if error is not None:
            raise bad_request(error)
    else:
        return
    problem = no_escalation_problem(resolver, user, namespace, rules)
    if problem:
        raise forbidden_error(GROUP, plural, name, problem)


def _only_gc_fields(new: Obj, old: Obj) -> bool:
    def stripped(obj: Obj) -> Obj:
        meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in GC_FIELDS}
        return {**{k: v for k, v in obj.items() if k not in ("metadata", "kind", "apiVersion")}, "metadata": meta}
    return stripped(new) == stripped(old)


def no_escalation_problem(resolver: RuleResolver, user: UserInfo, namespace: str, rules: list[Obj]) -> str:
    """``ConfirmNoEscalation``'s message, or "" when the user holds every rule."""
    owned, problems = resolver.rules_for(user, namespace)
    missing = [sub for rule in rules for sub in breakdown(rule) if not any(covers(o, sub) for o in owned)]
    if not missing:
        return ""
    lines = sorted({compact_string(rule) for rule in compact(missing)})
    groups = " ".join(f'"{g}"' for g in user.groups)
    message = (f'user "{user.username}" (groups=[{groups}]) is attempting to grant RBAC permissions not currently '
               f"held:\n" + "\n".join(lines))
    if problems:
        message += f"; resolution errors: [{aggregate(problems)}]"
    return message


def breakdown(rule: Obj) -> list[Obj]:
    """``BreakdownRule``: one rule per group × resource × verb (× name), URL × verb."""
    subs: list[Obj] = []
    verbs = rule.get("verbs") or []
    names = rule.get("resourceNames") or []
    for group in rule.get("apiGroups") or []:
        for resource in rule.get("resources") or []:
            for verb in verbs:
                if names:
                    subs.extend({"apiGroups": [group], "resources": [resource], "verbs": [verb], "resourceNames": [n]}
                                for n in names)
                else:
                    subs.append({"apiGroups": [group], "resources": [resource], "verbs": [verb]})
    for url in rule.get("nonResourceURLs") or []:
        subs.extend({"nonResourceURLs": [url], "verbs": [verb]} for verb in verbs)
    return subs


def covers(owner: Obj, sub: Obj) -> bool:
    """``ruleCovers``."""
    def has_all(have: list[str], want: list[str]) -> bool:
        return all(item in have for item in want)
    owner_verbs, owner_groups = owner.get("verbs") or [], owner.get("apiGroups") or []
    owner_names, sub_names = owner.get("resourceNames") or [], sub.get("resourceNames") or []
    verbs = "*" in owner_verbs or has_all(owner_verbs, sub.get("verbs") or [])
    groups = "*" in owner_groups or has_all(owner_groups, sub.get("apiGroups") or [])
    names = not owner_names if not sub_names else (not owner_names or has_all(owner_names, sub_names))
    return (verbs and groups and names and _resources_cover(owner.get("resources") or [], sub.get("resources") or [])
            and all(any(_url_covers(o, path) for o in owner.get("nonResourceURLs") or [])
                    for path in sub.get("nonResourceURLs") or []))


def _resources_cover(have: list[str], want: list[str]) -> bool:
    if "*" in have or all(item in have for item in want):
        return True
    for path in want:
        if path in have:
            continue
        if "/" not in path or f"*/{path.split('/', 1)[1]}" not in have:
            return False
    return True


def _url_covers(owner: str, path: str) -> bool:
    return owner == path or (owner.endswith("*") and path.startswith(owner.rstrip("*")))


def compact(rules: list[Obj]) -> list[Obj]:
    """``CompactRules``: simple rules (one group, one resource, at most one name) merge their verbs."""
    out: list[Obj] = []
    simple: dict[tuple[str, str, str], Obj] = {}
    for rule in rules:
        names = rule.get("resourceNames") or []
        if rule.get("nonResourceURLs") or len(names) > 1 or len(rule.get("apiGroups") or []) != 1 \
                or len(rule.get("resources") or []) != 1:
            out.append(rule)
            continue
        key = (rule["apiGroups"][0], rule["resources"][0], names[0] if names else "\x00")
        merged = simple.get(key)
        if merged is None:
            simple[key] = {**rule, "verbs": list(rule.get("verbs") or [])}
        else:
            merged["verbs"] += [verb for verb in rule.get("verbs") or [] if verb not in merged["verbs"]]
    return out + list(simple.values())


def compact_string(rule: Obj) -> str:
    """``CompactString``: ``{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}``."""
    parts = []
    for label, key in (("APIGroups", "apiGroups"), ("Resources", "resources"), ("NonResourceURLs", "nonResourceURLs"),
                       ("ResourceNames", "resourceNames"), ("Verbs", "verbs")):
        values = rule.get(key) or []
        if values:
            parts.append(f"{label}:[" + " ".join(f'"{v}"' for v in values) + "]")
    return "{" + ", ".join(parts) + "}"

