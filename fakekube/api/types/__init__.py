"""The built-in resource types: one declaration each, next to its strategy.

Each module declares, for every type it holds, a :class:`~fakekube.api.registry.ResourceType`
right after the type's :class:`~fakekube.api.registry.Strategy`: its names, scope, verbs,
subresources, strategy, printer columns, field selectors, name rule and special cases,
all in one place. :data:`BUILTIN_TYPES` lists them in the order upstream's discovery
documents do (core first, then by group), which is the order
discovery and OpenAPI are served in.

Adding a type: declare it next to its strategy, then add it to :data:`BUILTIN_TYPES`
(``tests/unit/test_type_declarations.py`` fails on a declaration missing here).

- :mod:`.core`: namespaces, config maps and secrets, nodes, volumes, endpoints, core
  events, quotas and limit ranges, replication controllers, service accounts.
- :mod:`.core_pods` and :mod:`.core_services`: pods and services.
- :mod:`.apps`, :mod:`.batch`: workloads and jobs.
- :mod:`.events`: events.k8s.io/v1 Events, a view of the core/v1 ones (one store).
- :mod:`.other`: the small groups (autoscaling, networking, policy, RBAC,
  storage, scheduling, coordination, discovery, apiregistration).
- :mod:`.reviews`: access and token reviews, answered and never stored.
- :mod:`.admissionregistration`: webhook configurations, ValidatingAdmissionPolicies and
  their bindings.
- :mod:`.core_misc`: core/v1 bindings, componentstatuses (computed) and podtemplates.
- :mod:`.autoscaling`: autoscaling/v1 HPAs, a view of the v2 ones (one store).
- :mod:`.certificates`, :mod:`.flowcontrol`, :mod:`.networking` (IngressClass, ServiceCIDR,
  IPAddress), :mod:`.node` (RuntimeClass), :mod:`.storage` (CSIDriver, CSINode,
  VolumeAttachment, VolumeAttributesClass), :mod:`.resource` (DRA, from 1.34): one module
  per group for the rest of the built-in API.
- :mod:`.metrics`: metrics-server's ``metrics.k8s.io`` (:data:`METRICS_TYPES`), an add-on
  a registry serves only when asked (``builtin_registry(metrics_server=True)``).
"""

from __future__ import annotations

from fakekube.api.registry import Registry, ResourceType
from fakekube.objects import versions
from fakekube.objects.versions import Release
from fakekube.api.types.admissionregistration import (
    MUTATING_ADMISSION_POLICIES,
    MUTATING_ADMISSION_POLICY_BINDINGS,
    MUTATING_WEBHOOK_CONFIGURATIONS,
    VALIDATING_ADMISSION_POLICIES,
    VALIDATING_ADMISSION_POLICY_BINDINGS,
    VALIDATING_WEBHOOK_CONFIGURATIONS,
)
from fakekube.api.types.apiextensions import CUSTOM_RESOURCE_DEFINITIONS
from fakekube.api.types.autoscaling import HORIZONTAL_POD_AUTOSCALERS_V1
from fakekube.api.types.certificates import CERTIFICATE_SIGNING_REQUESTS
from fakekube.api.types.core_misc import BINDINGS, COMPONENT_STATUSES, POD_TEMPLATES
from fakekube.api.types.flowcontrol import FLOW_SCHEMAS, PRIORITY_LEVEL_CONFIGURATIONS
from fakekube.api.types.networking import INGRESS_CLASSES, IP_ADDRESSES, SERVICE_CIDRS
from fakekube.api.types.node import RUNTIME_CLASSES
from fakekube.api.types.resource import DEVICE_CLASSES, RESOURCE_CLAIMS, RESOURCE_CLAIM_TEMPLATES, RESOURCE_SLICES
from fakekube.api.types.storage import CSI_DRIVERS, CSI_NODES, VOLUME_ATTACHMENTS, VOLUME_ATTRIBUTES_CLASSES
from fakekube.api.types.apps import CONTROLLER_REVISIONS, DAEMON_SETS, DEPLOYMENTS, REPLICA_SETS, STATEFUL_SETS
from fakekube.api.types.batch import CRON_JOBS, JOBS
from fakekube.api.types.core import (
    CONFIG_MAPS,
    CORE_EVENTS,
    ENDPOINTS,
    LIMIT_RANGES,
    NAMESPACES,
    NODES,
    PERSISTENT_VOLUMES,
    PERSISTENT_VOLUME_CLAIMS,
    REPLICATION_CONTROLLERS,
    RESOURCE_QUOTAS,
    SECRETS,
    SERVICE_ACCOUNTS,
)
from fakekube.api.types.core_pods import PODS
from fakekube.api.types.core_services import SERVICES, services_type
from fakekube.api.types.metrics import METRICS_GROUP, METRICS_TYPES, NODE_METRICS, POD_METRICS
from fakekube.api.types.service_alloc import ServiceNetwork
from fakekube.api.types.events import EVENTS_V1
from fakekube.api.types.other import (
    API_SERVICES,
    CSI_STORAGE_CAPACITIES,
    CLUSTER_ROLES,
    CLUSTER_ROLE_BINDINGS,
    ENDPOINT_SLICES,
    HORIZONTAL_POD_AUTOSCALERS,
    INGRESSES,
    LEASES,
    NETWORK_POLICIES,
    POD_DISRUPTION_BUDGETS,
    PRIORITY_CLASSES,
    ROLES,
    ROLE_BINDINGS,
    STORAGE_CLASSES,
)
from fakekube.api.types.reviews import (
    LOCAL_SUBJECT_ACCESS_REVIEWS,
    SELF_SUBJECT_ACCESS_REVIEWS,
    SELF_SUBJECT_REVIEWS,
    SELF_SUBJECT_RULES_REVIEWS,
    SUBJECT_ACCESS_REVIEWS,
    TOKEN_REVIEWS,
)

#: Every built-in type of every supported release, in upstream's discovery order; a
#: release serves those its row of fakekube/objects/versions.py lists (``builtin_registry``).
BUILTIN_TYPES: tuple[ResourceType, ...] = (
    # core/v1, alphabetical by plural as upstream's discovery lists them
    BINDINGS, COMPONENT_STATUSES, CONFIG_MAPS, ENDPOINTS, CORE_EVENTS, LIMIT_RANGES, NAMESPACES, NODES,
    PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, PODS, POD_TEMPLATES, REPLICATION_CONTROLLERS, RESOURCE_QUOTAS,
    SECRETS, SERVICE_ACCOUNTS, SERVICES,
    # apiregistration.k8s.io/v1 (kube-aggregator's group, first in upstream's /apis)
    API_SERVICES,
    # apps/v1
    CONTROLLER_REVISIONS, DAEMON_SETS, DEPLOYMENTS, REPLICA_SETS, STATEFUL_SETS,
    # events.k8s.io/v1
    EVENTS_V1,
    # authentication.k8s.io/v1 and authorization.k8s.io/v1: reviews, answered and never stored
    SELF_SUBJECT_REVIEWS, TOKEN_REVIEWS, LOCAL_SUBJECT_ACCESS_REVIEWS, SELF_SUBJECT_ACCESS_REVIEWS,
    SELF_SUBJECT_RULES_REVIEWS, SUBJECT_ACCESS_REVIEWS,
    # autoscaling/v2 (preferred) and v1, batch/v1, certificates.k8s.io/v1, networking.k8s.io/v1, policy/v1
    HORIZONTAL_POD_AUTOSCALERS, HORIZONTAL_POD_AUTOSCALERS_V1, CRON_JOBS, JOBS, CERTIFICATE_SIGNING_REQUESTS,
    INGRESS_CLASSES, INGRESSES, IP_ADDRESSES, NETWORK_POLICIES, SERVICE_CIDRS, POD_DISRUPTION_BUDGETS,
    # rbac.authorization.k8s.io/v1
    CLUSTER_ROLE_BINDINGS, CLUSTER_ROLES, ROLE_BINDINGS, ROLES,
    # storage.k8s.io (after the webhooks' group and apiextensions in upstream's order, kept together here),
    # admissionregistration.k8s.io/v1, apiextensions.k8s.io/v1, scheduling.k8s.io, coordination.k8s.io,
    # node.k8s.io, discovery.k8s.io, flowcontrol.apiserver.k8s.io (all v1)
    CSI_DRIVERS, CSI_NODES, CSI_STORAGE_CAPACITIES, STORAGE_CLASSES, VOLUME_ATTACHMENTS, VOLUME_ATTRIBUTES_CLASSES,
    MUTATING_ADMISSION_POLICIES, MUTATING_ADMISSION_POLICY_BINDINGS,
    MUTATING_WEBHOOK_CONFIGURATIONS, VALIDATING_ADMISSION_POLICIES, VALIDATING_ADMISSION_POLICY_BINDINGS,
    VALIDATING_WEBHOOK_CONFIGURATIONS,
    CUSTOM_RESOURCE_DEFINITIONS, PRIORITY_CLASSES, LEASES, RUNTIME_CLASSES, ENDPOINT_SLICES,
    # resource.k8s.io/v1 (from 1.34), then flowcontrol.apiserver.k8s.io/v1
    DEVICE_CLASSES, RESOURCE_CLAIMS, RESOURCE_CLAIM_TEMPLATES, RESOURCE_SLICES,
    FLOW_SCHEMAS, PRIORITY_LEVEL_CONFIGURATIONS,
)


def builtin_types(release: Release) -> tuple[ResourceType, ...]:
    """The built-in types a kube-apiserver of ``release`` serves by default, in discovery order."""
    return tuple(rt for rt in BUILTIN_TYPES if release.serves(rt.group, rt.version, rt.plural))


def builtin_registry(service_network: ServiceNetwork | None = None, metrics_server: bool = False,
                     release: Release | None = None) -> Registry:
    """The registry of every built-in type ``release`` serves (default: fakekube's default
    release); Services allocate from ``service_network`` (default: kind's 10.96.0.0/16 and
    node ports 30000-32767). ``metrics_server`` adds metrics-server's ``metrics.k8s.io``
    types, served after every other group."""
    release = release if release is not None else versions.release(versions.DEFAULT_VERSION)
    aggregated = METRICS_TYPES if metrics_server else ()
    served = builtin_types(release)
    relaxed_names = release.enabled("RelaxedServiceNameValidation")
    if service_network is None and relaxed_names:  # SERVICES is the default release's declaration
        return Registry(served, aggregated, release)
    services = services_type(service_network, relaxed_names)
    return Registry((services if rt is SERVICES else rt for rt in served), aggregated, release)


__all__ = [
    "BINDINGS", "CERTIFICATE_SIGNING_REQUESTS", "COMPONENT_STATUSES", "CSI_DRIVERS", "CSI_NODES", "FLOW_SCHEMAS",
    "HORIZONTAL_POD_AUTOSCALERS_V1", "INGRESS_CLASSES", "IP_ADDRESSES", "POD_TEMPLATES", "PRIORITY_LEVEL_CONFIGURATIONS",
    "RUNTIME_CLASSES", "SERVICE_CIDRS", "VOLUME_ATTACHMENTS",
    "BUILTIN_TYPES", "ServiceNetwork", "builtin_registry", "builtin_types", "DEVICE_CLASSES", "RESOURCE_CLAIMS",
    "RESOURCE_CLAIM_TEMPLATES", "RESOURCE_SLICES", "VOLUME_ATTRIBUTES_CLASSES", "MUTATING_ADMISSION_POLICIES",
    "MUTATING_ADMISSION_POLICY_BINDINGS", "METRICS_GROUP", "METRICS_TYPES", "NODE_METRICS", "POD_METRICS", "API_SERVICES", "CSI_STORAGE_CAPACITIES",
    "CLUSTER_ROLES", "CLUSTER_ROLE_BINDINGS", "CONFIG_MAPS", "CONTROLLER_REVISIONS", "CUSTOM_RESOURCE_DEFINITIONS", "CORE_EVENTS", "CRON_JOBS",
    "DAEMON_SETS", "DEPLOYMENTS", "ENDPOINTS", "ENDPOINT_SLICES", "EVENTS_V1", "HORIZONTAL_POD_AUTOSCALERS",
    "INGRESSES", "JOBS", "LEASES", "LIMIT_RANGES", "LOCAL_SUBJECT_ACCESS_REVIEWS", "NAMESPACES", "NETWORK_POLICIES",
    "NODES", "PERSISTENT_VOLUMES", "PERSISTENT_VOLUME_CLAIMS", "PODS", "POD_DISRUPTION_BUDGETS", "PRIORITY_CLASSES",
    "REPLICATION_CONTROLLERS", "REPLICA_SETS", "RESOURCE_QUOTAS", "ROLES", "ROLE_BINDINGS", "SECRETS",
    "SELF_SUBJECT_ACCESS_REVIEWS", "SELF_SUBJECT_REVIEWS", "SELF_SUBJECT_RULES_REVIEWS", "SERVICES",
    "SERVICE_ACCOUNTS", "STATEFUL_SETS", "STORAGE_CLASSES", "SUBJECT_ACCESS_REVIEWS", "TOKEN_REVIEWS",
    "MUTATING_WEBHOOK_CONFIGURATIONS", "VALIDATING_ADMISSION_POLICIES", "VALIDATING_ADMISSION_POLICY_BINDINGS",
    "VALIDATING_WEBHOOK_CONFIGURATIONS",
]
