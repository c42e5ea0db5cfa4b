"""The built-in resource types fakekube serves, as one declaration each.

Names, scope, short names, categories, verbs and subresources follow upstream's
discovery documents for Kubernetes 1.33. Type behaviour (defaults, validation,
immutability) is in the strategies under ``fakekube.api.types``.
"""

from __future__ import annotations

from dataclasses import replace

from fakekube.api.registry import (
    BINDING,
    EVICTION,
    LOG,
    SCALE,
    STATUS,
    TOKEN,
    Registry,
    ResourceType,
    Strategy,
)
from fakekube.api.types import STRATEGIES

NO_DELETECOLLECTION = ("create", "delete", "get", "list", "patch", "update", "watch")
CREATE_ONLY = ("create",)


def _strategies() -> dict[str, Strategy]:
    """Strategies by "group/plural"; types without an entry use the generic one."""
    return dict(STRATEGIES)


def review(group: str, kind: str, plural: str, namespaced: bool) -> ResourceType:
    """A review type: create only, answered by its strategy, never stored (upstream's
    non-registry REST storages)."""
    return ResourceType(group, "v1", kind, plural, namespaced, verbs=CREATE_ONLY, persisted=False)


def _declarations() -> list[ResourceType]:
    rt = ResourceType
    return [
        # core/v1, alphabetical by plural as upstream's discovery lists them
        rt("", "v1", "ConfigMap", "configmaps", True, ("cm",)),
        rt("", "v1", "Endpoints", "endpoints", True, ("ep",)),
        rt("", "v1", "Event", "events", True, ("ev",)),
        rt("", "v1", "LimitRange", "limitranges", True, ("limits",)),
        rt("", "v1", "Namespace", "namespaces", False, ("ns",), verbs=NO_DELETECOLLECTION, subresources=(STATUS,)),
        rt("", "v1", "Node", "nodes", False, ("no",), subresources=(STATUS,)),
        rt("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", True, ("pvc",), subresources=(STATUS,)),
        rt("", "v1", "PersistentVolume", "persistentvolumes", False, ("pv",), subresources=(STATUS,)),
        rt("", "v1", "Pod", "pods", True, ("po",), ("all",), subresources=(STATUS, BINDING, EVICTION, LOG)),
        rt("", "v1", "ReplicationController", "replicationcontrollers", True, ("rc",), ("all",), subresources=(STATUS, SCALE)),
        rt("", "v1", "ResourceQuota", "resourcequotas", True, ("quota",), subresources=(STATUS,)),
        rt("", "v1", "Secret", "secrets", True),
        rt("", "v1", "ServiceAccount", "serviceaccounts", True, ("sa",), subresources=(TOKEN,)),
        rt("", "v1", "Service", "services", True, ("svc",), ("all",), subresources=(STATUS,)),
        # apps/v1
        rt("apps", "v1", "ControllerRevision", "controllerrevisions", True),
        rt("apps", "v1", "DaemonSet", "daemonsets", True, ("ds",), ("all",), subresources=(STATUS,)),
        rt("apps", "v1", "Deployment", "deployments", True, ("deploy",), ("all",), subresources=(STATUS, SCALE)),
        rt("apps", "v1", "ReplicaSet", "replicasets", True, ("rs",), ("all",), subresources=(STATUS, SCALE)),
        rt("apps", "v1", "StatefulSet", "statefulsets", True, ("sts",), ("all",), subresources=(STATUS, SCALE)),
        # events.k8s.io/v1
        rt("events.k8s.io", "v1", "Event", "events", True, ("ev",)),
        # authentication.k8s.io/v1 and authorization.k8s.io/v1: reviews, answered and never stored
        review("authentication.k8s.io", "SelfSubjectReview", "selfsubjectreviews", False),
        review("authentication.k8s.io", "TokenReview", "tokenreviews", False),
        review("authorization.k8s.io", "LocalSubjectAccessReview", "localsubjectaccessreviews", True),
        review("authorization.k8s.io", "SelfSubjectAccessReview", "selfsubjectaccessreviews", False),
        review("authorization.k8s.io", "SelfSubjectRulesReview", "selfsubjectrulesreviews", False),
        review("authorization.k8s.io", "SubjectAccessReview", "subjectaccessreviews", False),
        # autoscaling/v2
        rt("autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", True, ("hpa",), ("all",), subresources=(STATUS,)),
        # batch/v1
        rt("batch", "v1", "CronJob", "cronjobs", True, ("cj",), ("all",), subresources=(STATUS,)),
        rt("batch", "v1", "Job", "jobs", True, (), ("all",), subresources=(STATUS,)),
        # networking.k8s.io/v1
        rt("networking.k8s.io", "v1", "Ingress", "ingresses", True, ("ing",), subresources=(STATUS,)),
        rt("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", True, ("netpol",)),
        # policy/v1
        rt("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", True, ("pdb",), subresources=(STATUS,)),
        # rbac.authorization.k8s.io/v1
        rt("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", False),
        rt("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", False),
        rt("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", True),
        rt("rbac.authorization.k8s.io", "v1", "Role", "roles", True),
        # storage.k8s.io/v1
        rt("storage.k8s.io", "v1", "StorageClass", "storageclasses", False, ("sc",)),
        # scheduling.k8s.io/v1
        rt("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", False, ("pc",)),
        # coordination.k8s.io/v1
        rt("coordination.k8s.io", "v1", "Lease", "leases", True),
        # discovery.k8s.io/v1
        rt("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", True),
    ]


#: Types whose PUT creates a missing object, as upstream's strategies allow.
CREATE_ON_UPDATE = {
    "/endpoints", "/events", "/limitranges", "/services", "events.k8s.io/events", "coordination.k8s.io/leases",
    "discovery.k8s.io/endpointslices", "rbac.authorization.k8s.io/roles", "rbac.authorization.k8s.io/rolebindings",
    "rbac.authorization.k8s.io/clusterroles", "rbac.authorization.k8s.io/clusterrolebindings",
}


def builtin_registry() -> Registry:
    """The registry of every built-in type, each with its strategy attached."""
    strategies = _strategies()
    return Registry(replace(decl, strategy=strategies.get(f"{decl.group}/{decl.plural}", decl.strategy),
                            create_on_update=f"{decl.group}/{decl.plural}" in CREATE_ON_UPDATE)
                    for decl in _declarations())
