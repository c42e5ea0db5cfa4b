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
DEPLOYMENTS = Resource("apps", "deployments")
REPLICA_SETS = Resource("apps", "replicasets")
DAEMON_SETS = Resource("apps", "daemonsets")
STATEFUL_SETS = Resource("apps", "statefulsets")
CONTROLLER_REVISIONS = Resource("apps", "controllerrevisions")
JOBS = Resource("batch", "jobs")
CRON_JOBS = Resource("batch", "cronjobs")
ENDPOINT_SLICES = Resource("discovery.k8s.io", "endpointslices")
POD_DISRUPTION_BUDGETS = Resource("policy", "poddisruptionbudgets")
