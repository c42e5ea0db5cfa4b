"""The default ClusterRoles and ClusterRoleBindings a 1.33 apiserver creates at start.

kube-apiserver's RBAC post-start hook reconciles upstream's bootstrap policy
(``plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go``; its testdata lists every
object): ``cluster-admin``, the user-facing ``admin``/``edit``/``view`` (aggregated from
the ``system:aggregate-to-*`` roles by their labels), ``system:discovery``,
``system:basic-user``, ``system:public-info-viewer``, the component roles and their
bindings. Each carries ``kubernetes.io/bootstrapping: rbac-defaults`` and the
``rbac.authorization.kubernetes.io/autoupdate: "true"`` annotation. They exist whether
RBAC is on or off, as on a real cluster.

Cheap at start: the objects are built once per process (the aggregated roles' rules
computed as the clusterrole-aggregation controller would), then each cluster stores
copies with UIDs from its own forked random stream (so they shift no other identifier).
So are kube-system's bootstrap Roles (``extension-apiserver-authentication-reader``, the
leader-locking ones) and their RoleBindings. The controllers' roles and bindings and the
roles nothing binds are fakekube/cluster/rbacroles.py's, by release.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from fakekube.api.registry import Registry
from fakekube.cluster import bootstrapfields, rbacroles
from fakekube.cluster.rbacroles import rule, urls
from fakekube.clock import format_rfc3339
from fakekube.controllers.clusterroleaggregation import aggregated_rules
from fakekube.random import SeededRandom
from fakekube.store import Store

Obj = dict[str, Any]
GROUP = "rbac.authorization.k8s.io"
LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}
ANNOTATIONS = {"rbac.authorization.kubernetes.io/autoupdate": "true"}
READ = "get list watch"
WRITE = "create delete deletecollection patch update"


EVENTS_WRITER = rule("create patch update", "- events.k8s.io", "events")

CLUSTER_ROLES: tuple[tuple[str, dict[str, str], list[Obj], str], ...] = (
    # (name, extra labels, rules, aggregated-to label key)
    ("admin", {}, [], "rbac.authorization.k8s.io/aggregate-to-admin"),
    ("cluster-admin", {}, [rule("*", "*", "*"), urls("*", "*")], ""),
    ("edit", {"rbac.authorization.k8s.io/aggregate-to-admin": "true"}, [], "rbac.authorization.k8s.io/aggregate-to-edit"),
    ("system:aggregate-to-admin", {"rbac.authorization.k8s.io/aggregate-to-admin": "true"}, [
        rule("create", "authorization.k8s.io", "localsubjectaccessreviews"),
        rule(f"{WRITE} get list watch", "rbac.authorization.k8s.io", "rolebindings roles"),
    ], ""),
    ("system:aggregate-to-edit", {"rbac.authorization.k8s.io/aggregate-to-edit": "true"}, [
        rule(READ, "-", "pods/attach pods/exec pods/portforward pods/proxy secrets services/proxy"),
        rule("impersonate", "-", "serviceaccounts"),
        rule(WRITE, "-", "pods pods/attach pods/exec pods/portforward pods/proxy"),
        rule("create", "-", "pods/eviction"),
        rule(WRITE, "-", "configmaps events persistentvolumeclaims replicationcontrollers replicationcontrollers/scale "
                         "secrets serviceaccounts services services/proxy"),
        rule("create", "-", "serviceaccounts/token"),
        rule(WRITE, "apps", "daemonsets deployments deployments/rollback deployments/scale replicasets "
                            "replicasets/scale statefulsets statefulsets/scale"),
        rule(WRITE, "autoscaling", "horizontalpodautoscalers"),
        rule(WRITE, "batch", "cronjobs jobs"),
        rule(WRITE, "extensions", "daemonsets deployments deployments/rollback deployments/scale ingresses "
                                  "networkpolicies replicasets replicasets/scale replicationcontrollers/scale"),
        rule(WRITE, "policy", "poddisruptionbudgets"),
        rule(WRITE, "networking.k8s.io", "ingresses networkpolicies"),
        rule(f"{WRITE} get list watch", "coordination.k8s.io", "leases"),
    ], ""),
    ("system:aggregate-to-view", {"rbac.authorization.k8s.io/aggregate-to-view": "true"}, [
        rule(READ, "-", "configmaps endpoints persistentvolumeclaims persistentvolumeclaims/status pods "
                        "replicationcontrollers replicationcontrollers/scale serviceaccounts services services/status"),
        rule(READ, "-", "bindings events limitranges namespaces/status pods/log pods/status "
                        "replicationcontrollers/status resourcequotas resourcequotas/status"),
        rule(READ, "-", "namespaces"),
        rule(READ, "discovery.k8s.io", "endpointslices"),
        rule(READ, "apps", "controllerrevisions daemonsets daemonsets/status deployments deployments/scale "
                           "deployments/status replicasets replicasets/scale replicasets/status statefulsets "
                           "statefulsets/scale statefulsets/status"),
        rule(READ, "autoscaling", "horizontalpodautoscalers horizontalpodautoscalers/status"),
        rule(READ, "batch", "cronjobs cronjobs/status jobs jobs/status"),
        rule(READ, "extensions", "daemonsets daemonsets/status deployments deployments/scale deployments/status "
                                 "ingresses ingresses/status networkpolicies replicasets replicasets/scale "
                                 "replicasets/status replicationcontrollers/scale"),
        rule(READ, "policy", "poddisruptionbudgets poddisruptionbudgets/status"),
        rule(READ, "networking.k8s.io", "ingresses ingresses/status networkpolicies"),
    ], ""),
    ("system:auth-delegator", {}, [
        rule("create", "authentication.k8s.io", "tokenreviews"),
        rule("create", "authorization.k8s.io", "subjectaccessreviews"),
    ], ""),
    ("system:basic-user", {}, [
        rule("create", "authorization.k8s.io", "selfsubjectaccessreviews selfsubjectrulesreviews"),
        rule("create", "authentication.k8s.io", "selfsubjectreviews"),
    ], ""),
    ("system:discovery", {}, [
        urls("get", "/api /api/* /apis /apis/* /healthz /livez /openapi /openapi/* /readyz /version /version/"),
    ], ""),
    ("system:kube-controller-manager", {}, [
        EVENTS_WRITER,
        rule("create", "coordination.k8s.io", "leases"),
        rule("get update", "coordination.k8s.io", "leases", "kube-controller-manager"),
        rule("create", "-", "secrets serviceaccounts"),
        rule("delete", "-", "secrets"),
        rule("get", "-", "configmaps namespaces secrets serviceaccounts"),
        rule("update", "-", "secrets serviceaccounts"),
        rule("create", "authentication.k8s.io", "tokenreviews"),
        rule("create", "authorization.k8s.io", "subjectaccessreviews"),
        rule("list watch", "*", "*"),
        rule("create", "-", "serviceaccounts/token"),
    ], ""),
    ("system:kube-dns", {}, [rule("list watch", "-", "endpoints services")], ""),
    ("system:kube-scheduler", {}, [
        EVENTS_WRITER,
        rule("create", "coordination.k8s.io", "leases"),
        rule("get update", "coordination.k8s.io", "leases", "kube-scheduler"),
        rule(READ, "-", "nodes"),
        rule("delete get list watch", "-", "pods"),
        rule("create", "-", "bindings pods/binding"),
        rule("patch update", "-", "pods/status"),
        rule(READ, "-", "replicationcontrollers services"),
        rule(READ, "apps extensions", "replicasets"),
        rule(READ, "apps", "statefulsets"),
        rule(READ, "policy", "poddisruptionbudgets"),
        rule(READ, "-", "persistentvolumeclaims persistentvolumes"),
        rule("create", "authentication.k8s.io", "tokenreviews"),
        rule("create", "authorization.k8s.io", "subjectaccessreviews"),
        rule(READ, "storage.k8s.io", "csinodes"),
        rule(READ, "-", "namespaces"),
        rule(READ, "storage.k8s.io", "csidrivers"),
        rule(READ, "storage.k8s.io", "csistoragecapacities"),
    ], ""),
    ("system:monitoring", {}, [
        urls("get", "/healthz /healthz/* /livez /livez/* /metrics /metrics/slis /readyz /readyz/*"),
    ], ""),
    ("system:node", {}, [
        rule("create", "authentication.k8s.io", "tokenreviews"),
        rule("create", "authorization.k8s.io", "localsubjectaccessreviews subjectaccessreviews"),
        rule(READ, "-", "services"),
        rule("create get list watch", "-", "nodes"),
        rule("patch update", "-", "nodes/status"),
        rule("patch update", "-", "nodes"),
        rule("create patch update", "-", "events"),
        rule(READ, "-", "pods"),
        rule("create delete", "-", "pods"),
        rule("patch update", "-", "pods/status"),
        rule("create", "-", "pods/eviction"),
        rule(READ, "-", "configmaps secrets"),
        rule("get", "-", "persistentvolumeclaims persistentvolumes"),
        rule("get", "-", "endpoints"),
        rule("create get list watch", "certificates.k8s.io", "certificatesigningrequests"),
        rule("create delete get patch update", "coordination.k8s.io", "leases"),
        rule("get", "storage.k8s.io", "volumeattachments"),
        rule("create", "-", "serviceaccounts/token"),
        rule("get patch update", "-", "persistentvolumeclaims/status"),
        rule(READ, "storage.k8s.io", "csidrivers"),
        rule("create delete get patch update", "storage.k8s.io", "csinodes"),
        rule(READ, "node.k8s.io", "runtimeclasses"),
    ], ""),
    ("system:node-proxier", {}, [
        rule("list watch", "-", "endpoints services"),
        rule(READ, "-", "nodes"),
        EVENTS_WRITER,
        rule("list watch", "discovery.k8s.io", "endpointslices"),
    ], ""),
    ("system:public-info-viewer", {}, [urls("get", "/healthz /livez /readyz /version /version/")], ""),
    ("system:service-account-issuer-discovery", {}, [
        urls("get", "/.well-known/openid-configuration /openid/v1/jwks"),
    ], ""),
    ("system:volume-scheduler", {}, [
        rule("get list patch update watch", "-", "persistentvolumes"),
        rule(READ, "storage.k8s.io", "storageclasses"),
        rule("get list patch update watch", "-", "persistentvolumeclaims"),
    ], ""),
    ("view", {"rbac.authorization.k8s.io/aggregate-to-edit": "true"}, [], "rbac.authorization.k8s.io/aggregate-to-view"),
)


def _group(name: str) -> Obj:
    return {"kind": "Group", "apiGroup": GROUP, "name": name}


def _user(name: str) -> Obj:
    return {"kind": "User", "apiGroup": GROUP, "name": name}


CLUSTER_ROLE_BINDINGS: tuple[tuple[str, list[Obj]], ...] = (
    # (name = the ClusterRole's name, subjects)
    ("cluster-admin", [_group("system:masters")]),
    ("system:basic-user", [_group("system:authenticated")]),
    ("system:discovery", [_group("system:authenticated")]),
    ("system:kube-controller-manager", [_user("system:kube-controller-manager")]),
    ("system:kube-dns", [{"kind": "ServiceAccount", "name": "kube-dns", "namespace": "kube-system"}]),
    ("system:kube-scheduler", [_user("system:kube-scheduler")]),
    ("system:monitoring", [_group("system:monitoring")]),
    ("system:node", []),
    ("system:node-proxier", [_user("system:kube-proxy")]),
    ("system:public-info-viewer", [_group("system:authenticated"), _group("system:unauthenticated")]),
    ("system:service-account-issuer-discovery", [_group("system:serviceaccounts")]),
    ("system:volume-scheduler", [_user("system:kube-scheduler")]),
)


#: fakekube's own: who may use the control API (``/fakekube/v1/...``: move the clock, fail
#: nodes, reset) when RBAC is on. Bound to ``system:masters``; bind it to anyone else who
#: should drive the cluster. Created only with RBAC (with AlwaysAllow everyone may).
CONTROL_ROLE = "fakekube:control"
CONTROL_RULES = (urls("get post put delete", "/fakekube/*"),)

#: kube-system's bootstrap Roles (``NamespaceRoles``) and their RoleBindings: who may read the
#: front-proxy CA (extension apiservers such as metrics-server bind to the first).
KUBE_SYSTEM_ROLES: tuple[tuple[str, list[Obj]], ...] = (
    ("extension-apiserver-authentication-reader",
     [rule(READ, "-", "configmaps", "extension-apiserver-authentication")]),
    ("system::leader-locking-kube-controller-manager",
     [rule("watch", "-", "configmaps"), rule("get update", "-", "configmaps", "kube-controller-manager")]),
    ("system::leader-locking-kube-scheduler",
     [rule("watch", "-", "configmaps"), rule("get update", "-", "configmaps", "kube-scheduler")]),
)
KUBE_SYSTEM_ROLE_BINDINGS: tuple[tuple[str, str, list[Obj]], ...] = (
    # (binding name, Role name, subjects)
    ("system::extension-apiserver-authentication-reader", "extension-apiserver-authentication-reader",
     [_user("system:kube-controller-manager"), _user("system:kube-scheduler")]),
    ("system::leader-locking-kube-controller-manager", "system::leader-locking-kube-controller-manager",
     [_user("system:kube-controller-manager"),
      {"kind": "ServiceAccount", "name": "kube-controller-manager", "namespace": "kube-system"}]),
    ("system::leader-locking-kube-scheduler", "system::leader-locking-kube-scheduler",
     [_user("system:kube-scheduler"), {"kind": "ServiceAccount", "name": "kube-scheduler", "namespace": "kube-system"}]),
)


def _meta(name: str, labels: dict[str, str], namespace: str = "") -> Obj:
    placed = {"name": name, "namespace": namespace} if namespace else {"name": name}
    return {**placed, "labels": {**LABELS, **labels}, "annotations": dict(ANNOTATIONS)}


def _by_name(objects: list[Obj]) -> tuple[Obj, ...]:
    return tuple(sorted(objects, key=lambda obj: (obj["metadata"].get("namespace", ""), obj["metadata"]["name"])))


@functools.lru_cache(maxsize=4)
def cluster_roles(minor: int = 36) -> tuple[Obj, ...]:
    """The bootstrap ClusterRoles of release 1.``minor`` (no uid, no timestamps), in name
    order, aggregated roles filled in."""
    roles: list[Obj] = []
    for name, labels, rules, aggregates in CLUSTER_ROLES:
        role: Obj = {"metadata": _meta(name, labels), "rules": copy.deepcopy(rules)}
        if aggregates:
            role["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {aggregates: "true"}}]}
        roles.append(role)
    roles += [{"metadata": _meta(name, {}), "rules": copy.deepcopy(list(rules))}
              for name, rules in rbacroles.cluster_roles(minor)]
    for name in ("view", "edit", "admin"):  # each aggregates the one before
        role = next(r for r in roles if r["metadata"]["name"] == name)
        role["rules"] = aggregated_rules(role, roles)
    return _by_name(roles)


@functools.lru_cache(maxsize=4)
def cluster_role_bindings(minor: int = 36) -> tuple[Obj, ...]:
    bindings = []
    controllers = [(name, [rbacroles.controller_account(name)]) for name, _ in rbacroles.cluster_roles(minor)
                   if name.startswith(rbacroles.CONTROLLER_PREFIX)]
    for name, subjects in list(CLUSTER_ROLE_BINDINGS) + controllers:
        binding: Obj = {"metadata": _meta(name, {}),
                        "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": name}}
        if subjects:
            binding["subjects"] = copy.deepcopy(subjects)
        bindings.append(binding)
    return _by_name(bindings)


@functools.lru_cache(maxsize=1)
def namespace_roles() -> tuple[Obj, ...]:
    own = [{"metadata": _meta(name, {}, "kube-system"), "rules": copy.deepcopy(rules)} for name, rules in KUBE_SYSTEM_ROLES]
    controllers = [{"metadata": _meta(name, {}, namespace), "rules": copy.deepcopy(list(rules))}
                   for namespace, name, rules in rbacroles.NAMESPACE_ROLES]
    return _by_name(own + controllers)


@functools.lru_cache(maxsize=1)
def namespace_role_bindings() -> tuple[Obj, ...]:
    own = [{"metadata": _meta(name, {}, "kube-system"), "roleRef": {"apiGroup": GROUP, "kind": "Role", "name": role},
            "subjects": copy.deepcopy(subjects)} for name, role, subjects in KUBE_SYSTEM_ROLE_BINDINGS]
    controllers = [{"metadata": _meta(name, {}, namespace), "roleRef": {"apiGroup": GROUP, "kind": "Role", "name": name},
                    "subjects": [rbacroles.controller_account(name)]} for namespace, name, _ in rbacroles.NAMESPACE_ROLES]
    return _by_name(own + controllers)


@functools.lru_cache(maxsize=1)
def control_policy() -> tuple[Obj, Obj]:
    """The ``fakekube:control`` ClusterRole and its binding to ``system:masters``."""
    meta = {"name": CONTROL_ROLE, "labels": {"app.kubernetes.io/managed-by": "fakekube"}}
    role = {"metadata": meta, "rules": copy.deepcopy(list(CONTROL_RULES))}
    binding = {"metadata": copy.deepcopy(meta), "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": CONTROL_ROLE},
               "subjects": [_group("system:masters")]}
    return role, binding


def _as_created(obj: Obj) -> Obj:
    """What kube-apiserver creates: an aggregated role without rules (kube-controller-manager's
    aggregation controller fills them; fakekube stores them filled)."""
    if "aggregationRule" in obj:
        return {key: value for key, value in obj.items() if key != "rules"}
    return obj


def populate(store: Store, registry: Registry, rng: SeededRandom, now_rfc3339: str, control: bool = False,
             minor: int = 36) -> None:
    """Store the bootstrap policy of release 1.``minor``: known-good objects, written without
    the create path's checks; with ``control``, also fakekube's control API role
    (:func:`control_policy`). Each carries the managedFields of kube-apiserver's create (its
    RBAC bootstrap controller creates them through its loopback client)."""
    stream = rng.fork("rbac-bootstrap-policy")
    groups = [("clusterroles", cluster_roles(minor)), ("clusterrolebindings", cluster_role_bindings(minor)),
              ("roles", namespace_roles()), ("rolebindings", namespace_role_bindings())]
    if control:  # last: the bootstrap objects keep the uids they have without it
        role, binding = control_policy()
        groups += [("clusterroles", (role,)), ("clusterrolebindings", (binding,))]
    for plural, objects in groups:
        rt = registry.lookup(GROUP, "v1", plural)
        for template in objects:  # stored objects are never edited, so they may share the templates' rules
            meta = template["metadata"]
            first = {key: meta[key] for key in ("name", "namespace") if key in meta}
            stored = {**template, "metadata": {**first, "uid": stream.uid(), "creationTimestamp": now_rfc3339, **meta}}
            entries = bootstrapfields.managed_fields(rt.api_version, rt.kind, _as_created(stored), now_rfc3339)
            if entries:
                stored["metadata"]["managedFields"] = entries
            store.create(rt.key, stored)
