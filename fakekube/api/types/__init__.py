"""Per-type strategies: upstream's defaults, validation and update rules, by resource.

``STRATEGIES`` maps "group/plural" (core group is "") to a :class:`Strategy`; the
registry in ``fakekube.api.resources`` attaches them to the declared types. Types
missing here use the generic strategy.
"""

from __future__ import annotations

from fakekube.api.registry import Strategy
from fakekube.api.types.apps import (
    ControllerRevisionStrategy,
    DaemonSetStrategy,
    DeploymentStrategy,
    ReplicaSetStrategy,
    StatefulSetStrategy,
)
from fakekube.api.types.batch import CronJobStrategy, JobStrategy
from fakekube.api.types.core import (
    ConfigMapStrategy,
    CoreEventStrategy,
    EndpointsStrategy,
    LimitRangeStrategy,
    NamespaceStrategy,
    NodeStrategy,
    PersistentVolumeClaimStrategy,
    PersistentVolumeStrategy,
    ReplicationControllerStrategy,
    ResourceQuotaStrategy,
    SecretStrategy,
    ServiceAccountStrategy,
)
from fakekube.api.types.core_pods import PodStrategy
from fakekube.api.types.core_services import ServiceStrategy
from fakekube.api.types.reviews import (
    LocalSubjectAccessReviewStrategy,
    SelfSubjectAccessReviewStrategy,
    SelfSubjectReviewStrategy,
    SelfSubjectRulesReviewStrategy,
    SubjectAccessReviewStrategy,
    TokenReviewStrategy,
)
from fakekube.api.types.other import (
    EndpointSliceStrategy,
    EventsV1Strategy,
    HorizontalPodAutoscalerStrategy,
    IngressStrategy,
    LeaseStrategy,
    NetworkPolicyStrategy,
    PodDisruptionBudgetStrategy,
    PriorityClassStrategy,
    RoleBindingStrategy,
    RoleStrategy,
    StorageClassStrategy,
)

STRATEGIES: dict[str, Strategy] = {
    "/configmaps": ConfigMapStrategy(),
    "/endpoints": EndpointsStrategy(),
    "/events": CoreEventStrategy(),
    "/limitranges": LimitRangeStrategy(),
    "/namespaces": NamespaceStrategy(),
    "/nodes": NodeStrategy(),
    "/persistentvolumeclaims": PersistentVolumeClaimStrategy(),
    "/persistentvolumes": PersistentVolumeStrategy(),
    "/pods": PodStrategy(),
    "/replicationcontrollers": ReplicationControllerStrategy(),
    "/resourcequotas": ResourceQuotaStrategy(),
    "/secrets": SecretStrategy(),
    "/serviceaccounts": ServiceAccountStrategy(),
    "/services": ServiceStrategy(),
    "apps/controllerrevisions": ControllerRevisionStrategy(),
    "apps/daemonsets": DaemonSetStrategy(),
    "apps/deployments": DeploymentStrategy(),
    "apps/replicasets": ReplicaSetStrategy(),
    "apps/statefulsets": StatefulSetStrategy(),
    "events.k8s.io/events": EventsV1Strategy(),
    "authentication.k8s.io/selfsubjectreviews": SelfSubjectReviewStrategy(),
    "authentication.k8s.io/tokenreviews": TokenReviewStrategy(),
    "authorization.k8s.io/localsubjectaccessreviews": LocalSubjectAccessReviewStrategy(),
    "authorization.k8s.io/selfsubjectaccessreviews": SelfSubjectAccessReviewStrategy(),
    "authorization.k8s.io/selfsubjectrulesreviews": SelfSubjectRulesReviewStrategy(),
    "authorization.k8s.io/subjectaccessreviews": SubjectAccessReviewStrategy(),
    "autoscaling/horizontalpodautoscalers": HorizontalPodAutoscalerStrategy(),
    "batch/cronjobs": CronJobStrategy(),
    "batch/jobs": JobStrategy(),
    "networking.k8s.io/ingresses": IngressStrategy(),
    "networking.k8s.io/networkpolicies": NetworkPolicyStrategy(),
    "policy/poddisruptionbudgets": PodDisruptionBudgetStrategy(),
    "rbac.authorization.k8s.io/clusterrolebindings": RoleBindingStrategy(namespaced=False),
    "rbac.authorization.k8s.io/clusterroles": RoleStrategy(namespaced=False),
    "rbac.authorization.k8s.io/rolebindings": RoleBindingStrategy(namespaced=True),
    "rbac.authorization.k8s.io/roles": RoleStrategy(namespaced=True),
    "storage.k8s.io/storageclasses": StorageClassStrategy(),
    "scheduling.k8s.io/priorityclasses": PriorityClassStrategy(),
    "coordination.k8s.io/leases": LeaseStrategy(),
    "discovery.k8s.io/endpointslices": EndpointSliceStrategy(),
}

__all__ = ["STRATEGIES"]
