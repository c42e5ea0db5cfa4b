"""Resource names as the store keys them: one constant per resource the cluster's own parts touch.

A :class:`Resource` is the (group, plural) pair the store indexes objects by; being a
named tuple it *is* that store key, so it can be passed wherever a key is expected.
Scheduler, controllers and kubelets name resources only through these constants, and the
controller runtime resolves each to its served type once (a typo fails at registration,
not in the middle of a reconcile).
"""

from __future__ import annotations

from typing import NamedTuple


class Resource(NamedTuple):
    """A resource by API group ("" for core) and plural name, e.g. ``Resource("apps", "deployments")``."""

    group: str
    plural: str

    def __str__(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural


NAMESPACES = Resource("", "namespaces")
NODES = Resource("", "nodes")
PODS = Resource("", "pods")
SERVICES = Resource("", "services")
SERVICE_ACCOUNTS = Resource("", "serviceaccounts")
EVENTS = Resource("", "events")
ENDPOINTS = Resource("", "endpoints")
CONFIGMAPS = Resource("", "configmaps")
SECRETS = Resource("", "secrets")
REPLICATION_CONTROLLERS = Resource("", "replicationcontrollers")
PERSISTENT_VOLUME_CLAIMS = Resource("", "persistentvolumeclaims")
PERSISTENT_VOLUMES = Resource("", "persistentvolumes")
LEASES = Resource("coordination.k8s.io", "leases")
PRIORITY_CLASSES = Resource("scheduling.k8s.io", "priorityclasses")
STORAGE_CLASSES = Resource("storage.k8s.io", "storageclasses")
VOLUME_ATTRIBUTES_CLASSES = Resource("storage.k8s.io", "volumeattributesclasses")
DEPLOYMENTS = Resource("apps", "deployments")
CLUSTER_ROLES = Resource("rbac.authorization.k8s.io", "clusterroles")
REPLICA_SETS = Resource("apps", "replicasets")
DAEMON_SETS = Resource("apps", "daemonsets")
STATEFUL_SETS = Resource("apps", "statefulsets")
CONTROLLER_REVISIONS = Resource("apps", "controllerrevisions")
JOBS = Resource("batch", "jobs")
CRON_JOBS = Resource("batch", "cronjobs")
ENDPOINT_SLICES = Resource("discovery.k8s.io", "endpointslices")
POD_DISRUPTION_BUDGETS = Resource("policy", "poddisruptionbudgets")
CUSTOM_RESOURCE_DEFINITIONS = Resource("apiextensions.k8s.io", "customresourcedefinitions")
CERTIFICATE_SIGNING_REQUESTS = Resource("certificates.k8s.io", "certificatesigningrequests")


class APIResource(NamedTuple):
    """A stored resource as API discovery describes it, for the controllers that walk every
    type (the garbage collector, the namespace controller): upstream reads this from
    discovery; fakekube's set of types is fixed, so the cluster hands it over once."""

    #: The resource clients write through (group, plural).
    resource: Resource
    api_version: str
    kind: str
    namespaced: bool
    verbs: tuple[str, ...]
    #: Where its objects are kept: ``resource`` itself, or the one it is a view of
    #: (events.k8s.io Events are core Events).
    storage: Resource

    def supports(self, *verbs: str) -> bool:
        return all(verb in self.verbs for verb in verbs)
