"""The clusterrole-aggregation controller (``pkg/controller/clusterroleaggregation``).

A ClusterRole with an ``aggregationRule`` gets the rules of every other ClusterRole its
``clusterRoleSelectors`` match: roles in name order, each rule once (a rule equal to one
already taken is skipped), written only when the rules differ. Any ClusterRole change
re-checks every aggregated role, as upstream's handlers enqueue them all.
"""

from __future__ import annotations

from typing import Any, Iterable

from fakekube.engine import Context
from fakekube.store import Change
from fakekube.objects.kinds import CLUSTER_ROLES
from fakekube.objects.labels import compile_selector

Obj = dict[str, Any]


def selected_roles(role: Obj, roles: Iterable[Obj]) -> list[Obj]:
    """The ClusterRoles (not ``role`` itself) any of its selectors match, in name order."""
    name = role["metadata"]["name"]
    selectors = []
    for selector in (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or ():
        try:
            selectors.append(compile_selector(selector))
        except ValueError:  # validation refuses these; a stored one selects nothing
            continue
    chosen = {}
    for other in roles:
        other_name = other["metadata"]["name"]
        if other_name == name:
            continue
        labels = other["metadata"].get("labels") or {}
        if any(selector.matches(labels) for selector in selectors):
            chosen[other_name] = other
    return [chosen[key] for key in sorted(chosen)]


def aggregated_rules(role: Obj, roles: Iterable[Obj]) -> list[Obj]:
    """The rules ``role`` aggregates: each selected role's rules, each distinct rule once."""
    rules: list[Obj] = []
    for other in selected_roles(role, roles):
        for rule in other.get("rules") or ():
            if rule not in rules:
                rules.append(rule)
    return rules


class ClusterRoleAggregationController:
    name = "clusterrole-aggregation-controller"
    resources = (CLUSTER_ROLES,)

    def keys_for(self, change: Change) -> Iterable[str]:
        # Which roles aggregate is read in reconcile: any ClusterRole change may touch them all.
        return ["*"]

    def reconcile(self, key: str, ctx: Context) -> None:
        roles = ctx.list(CLUSTER_ROLES)
        for role in roles:
            if role.get("aggregationRule") is None:
                continue
            rules = aggregated_rules(role, roles)
            if rules != list(role.get("rules") or ()):
                ctx.client.update(CLUSTER_ROLES, {**role, "rules": rules})
