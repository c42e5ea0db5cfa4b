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
from fakekube.api.table.columns import AGE, CONTAINERS, IMAGES, NAME, Cells, Obj, TableSpec, col, doc
from fakekube.api.table.duration import age
from fakekube.objects.constants import ANNOTATION_DAEMONSET_TEMPLATE_GENERATION


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
    doc("Desired", "core.v1.ReplicationControllerSpec", "replicas", "integer"),
    doc("Current", "core.v1.ReplicationControllerStatus", "replicas", "integer"),
    doc("Ready", "core.v1.ReplicationControllerStatus", "readyReplicas", "integer"),
    AGE, CONTAINERS, IMAGES, doc("Selector", "core.v1.ReplicationControllerSpec", "selector", priority=1),
), _rc_cells)

DEPLOYMENT_TABLE = TableSpec((
    NAME,
    _READY,
    doc("Up-to-date", "apps.v1.DeploymentStatus", "updatedReplicas"),
    doc("Available", "apps.v1.DeploymentStatus", "availableReplicas"),
    AGE, CONTAINERS, IMAGES, doc("Selector", "apps.v1.DeploymentSpec", "selector", priority=1),
), _deployment_cells)

REPLICA_SET_TABLE = TableSpec((
    NAME,
    doc("Desired", "apps.v1.ReplicaSetSpec", "replicas", "integer"),
    doc("Current", "apps.v1.ReplicaSetStatus", "replicas", "integer"),
    doc("Ready", "apps.v1.ReplicaSetStatus", "readyReplicas", "integer"),
    AGE, CONTAINERS, IMAGES, doc("Selector", "apps.v1.ReplicaSetSpec", "selector", priority=1),
), _replicaset_cells)

STATEFUL_SET_TABLE = TableSpec((NAME, _READY, AGE, CONTAINERS, IMAGES), _statefulset_cells)

DAEMON_SET_TABLE = TableSpec((
    NAME,
    doc("Desired", "apps.v1.DaemonSetStatus", "desiredNumberScheduled", "integer"),
    doc("Current", "apps.v1.DaemonSetStatus", "currentNumberScheduled", "integer"),
    doc("Ready", "apps.v1.DaemonSetStatus", "numberReady", "integer"),
    doc("Up-to-date", "apps.v1.DaemonSetStatus", "updatedNumberScheduled", "integer"),
    doc("Available", "apps.v1.DaemonSetStatus", "numberAvailable", "integer"),
    doc("Node Selector", "core.v1.PodSpec", "nodeSelector"),
    AGE, CONTAINERS, IMAGES, doc("Selector", "apps.v1.DaemonSetSpec", "selector", priority=1),
), _daemonset_cells, internal_annotations=(ANNOTATION_DAEMONSET_TEMPLATE_GENERATION,))

CONTROLLER_REVISION_TABLE = TableSpec((
    NAME,
    col("Controller", description="Controller of the object"),
    doc("Revision", "apps.v1.ControllerRevision", "revision"),
    AGE,
), simple(name_cell, lambda o, n: _controller_name(o), lambda o, n: o.get("revision", 0), age_cell))
