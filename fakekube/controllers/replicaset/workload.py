"""The two kinds the ReplicaSet logic serves: apps/v1 ReplicaSets and v1 ReplicationControllers.

Upstream runs one implementation for both (``pkg/controller/replicaset``; the replication
manager in ``pkg/controller/replication`` converts an RC to a ReplicaSet on the way in and
back on the way out). Here the conversion is this small description: where the selector
lives and what the kind, API version, controller name and event source are.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple

from fakekube.objects.kinds import REPLICA_SETS, REPLICATION_CONTROLLERS, Resource

Obj = dict[str, Any]


def _replica_set_selector(obj: Mapping[str, Any]) -> Obj | None:
    return (obj.get("spec") or {}).get("selector")


def _replication_controller_selector(obj: Mapping[str, Any]) -> Obj | None:
    """An RC's map selector as the LabelSelector its conversion makes (``matchLabels``)."""
    return {"matchLabels": dict((obj.get("spec") or {}).get("selector") or {})}


class Workload(NamedTuple):
    """One kind the controller keeps replicas for."""

    resource: Resource
    kind: str
    api_version: str
    #: The controller's upstream name (cmd/kube-controller-manager/names).
    controller_name: str
    #: The event source component upstream's recorder uses.
    component: str
    #: The object's selector as a metav1.LabelSelector dict (None: matches nothing).
    selector_of: Callable[[Mapping[str, Any]], Obj | None]


REPLICA_SET = Workload(REPLICA_SETS, "ReplicaSet", "apps/v1", "replicaset-controller", "replicaset-controller",
                       _replica_set_selector)
REPLICATION_CONTROLLER = Workload(REPLICATION_CONTROLLERS, "ReplicationController", "v1",
                                  "replicationcontroller-controller", "replication-controller",
                                  _replication_controller_selector)
