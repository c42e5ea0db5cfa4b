"""Printers of the pod controllers: Deployments, ReplicaSets, ReplicationControllers,
StatefulSets, DaemonSets and ControllerRevisions.

The ones with a pod template share the wide CONTAINERS / IMAGES / SELECTOR columns.
ReplicationControllers print their selector as a plain label map, the apps/v1 types as
a ``metav1.LabelSelector``.
"""

from __future__ import annotations

from datetime import datetime

from fakekube.api.table.cells import (
    NONE,
    age_cell,
    container_cells,
    format_label_selector,
    format_labels,
    get,
    meta,
    name_cell,
    simple,
    workload_wide,
)
from fakekube.api.table.columns import AGE, CONTAINERS, IMAGES, NAME, SELECTOR, Cells, Obj, TableSpec, col
from fakekube.api.table.duration import age


def _deployment_cells(obj: Obj, now: datetime) -> Cells:
    st = obj.get("status") or {}
    return [meta(obj, "name", ""), f"{st.get('readyReplicas', 0)}/{get(obj, 'spec', 'replicas', default=0)}",
            st.get("updatedReplicas", 0), st.get("availableReplicas", 0), age(meta(obj, "creationTimestamp"), now),
            *workload_wide(obj, format_label_selector(get(obj, "spec", "selector")))]


def _replicaset_cells(obj: Obj, now: datetime) -> Cells:
    st = obj.get("status") or {}
    return [meta(obj, "name", ""), get(obj, "spec", "replicas", default=0), st.get("replicas", 0),
            st.get("readyReplicas", 0), age(meta(obj, "creationTimestamp"), now),
            *workload_wide(obj, format_label_selector(get(obj, "spec", "selector")))]


def _rc_cells(obj: Obj, now: datetime) -> Cells:
    st = obj.get("status") or {}
    return [meta(obj, "name", ""), get(obj, "spec", "replicas", default=0), st.get("replicas", 0),
            st.get("readyReplicas", 0), age(meta(obj, "creationTimestamp"), now),
            *workload_wide(obj, format_labels(get(obj, "spec", "selector")))]


def _statefulset_cells(obj: Obj, now: datetime) -> Cells:
    names, images = container_cells(get(obj, "spec", "template", "spec"))
    ready = f"{get(obj, 'status', 'readyReplicas', default=0)}/{get(obj, 'spec', 'replicas', default=0)}"
    return [meta(obj, "name", ""), ready, age(meta(obj, "creationTimestamp"), now), names, images]


def _daemonset_cells(obj: Obj, now: datetime) -> Cells:
    st = obj.get("status") or {}
    return [meta(obj, "name", ""), st.get("desiredNumberScheduled", 0), st.get("currentNumberScheduled", 0),
            st.get("numberReady", 0), st.get("updatedNumberScheduled", 0), st.get("numberAvailable", 0),
            format_labels(get(obj, "spec", "template", "spec", "nodeSelector")),
            age(meta(obj, "creationTimestamp"), now),
            *workload_wide(obj, format_label_selector(get(obj, "spec", "selector")))]


def _controller_name(obj: Obj) -> str:
    """The controlling owner as ``kind.group/name`` (lower-case kind.group), "<none>" if none."""
    for ref in meta(obj, "ownerReferences") or []:
        if ref.get("controller"):
            api_version = ref.get("apiVersion", "")
            group = api_version.split("/")[0] if "/" in api_version else ""
            kind = ref.get("kind", "")
            group_kind = f"{kind}.{group}" if group else kind
            return f"{group_kind.lower()}/{ref.get('name', '')}"
    return NONE


_READY = col("Ready", description="Number of the pod with ready state")

REPLICATION_CONTROLLER_TABLE = TableSpec((
    NAME,
    col("Desired", "integer", "Replicas is the number of desired replicas."),
    col("Current", "integer", "Replicas is the most recently observed number of replicas."),
    col("Ready", "integer", "The number of ready replicas for this replication controller."),
    AGE, CONTAINERS, IMAGES, SELECTOR,
), _rc_cells)

DEPLOYMENT_TABLE = TableSpec((
    NAME,
    _READY,
    col("Up-to-date", "integer", "Total number of non-terminating pods targeted by this deployment that have the "
                                 "desired template spec."),
    col("Available", "integer", "Total number of available non-terminating pods (ready for at least "
                                "minReadySeconds) targeted by this deployment."),
    AGE, CONTAINERS, IMAGES, SELECTOR,
), _deployment_cells)

REPLICA_SET_TABLE = TableSpec((
    NAME,
    col("Desired", "integer", "Replicas is the number of desired pods."),
    col("Current", "integer", "Replicas is the most recently observed number of non-terminating pods."),
    col("Ready", "integer", "The number of non-terminating pods targeted by this ReplicaSet with a Ready "
                            "Condition."),
    AGE, CONTAINERS, IMAGES, SELECTOR,
), _replicaset_cells)

STATEFUL_SET_TABLE = TableSpec((NAME, _READY, AGE, CONTAINERS, IMAGES), _statefulset_cells)

DAEMON_SET_TABLE = TableSpec((
    NAME,
    col("Desired", "integer", "The total number of nodes that should be running the daemon pod."),
    col("Current", "integer", "The number of nodes that are running at least 1 daemon pod and are supposed to "
                              "run the daemon pod."),
    col("Ready", "integer", "numberReady is the number of nodes that should be running the daemon pod and have "
                            "one or more of the daemon pod running with a Ready Condition."),
    col("Up-to-date", "integer", "The total number of nodes that are running updated daemon pod"),
    col("Available", "integer", "The number of nodes that should be running the daemon pod and have one or more "
                                "of the daemon pod running and available (ready for at least "
                                "spec.minReadySeconds)"),
    col("Node Selector", description="NodeSelector is a selector which must be true for the pod to fit on a "
                                     "node."),
    AGE, CONTAINERS, IMAGES, SELECTOR,
), _daemonset_cells)

CONTROLLER_REVISION_TABLE = TableSpec((
    NAME,
    col("Controller", description="Controller of the object"),
    col("Revision", "integer", "Revision indicates the revision of the state represented by Data."),
    AGE,
), simple(name_cell, lambda o, n: _controller_name(o), lambda o, n: o.get("revision", 0), age_cell))
