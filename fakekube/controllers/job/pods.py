"""The pods a Job creates and how it reads them (upstream ``pkg/controller/job``, 1.33).

A Job's pod is its template with ``generateName`` ``<job>-`` (``<job>-<index>-`` for an
Indexed Job), the Job as controller owner, and the ``batch.kubernetes.io/job-tracking``
finalizer: the controller counts a pod as succeeded or failed once it is terminal, then
removes the finalizer, so no finished pod is lost to deletion before it was counted.
An Indexed Job's pod also carries its completion index (annotation and label), the
``JOB_COMPLETION_INDEX`` variable read from that annotation, and hostname ``<job>-<index>``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Mapping

from fakekube.clock import parse_time
from fakekube.objects._json import deep_copy
from fakekube.objects.owners import owner_reference
from fakekube.objects.pods import PHASE_SUCCEEDED, is_pod_terminal

Obj = dict[str, Any]

TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
INDEX_ENV = "JOB_COMPLETION_INDEX"
INDEXED = "Indexed"


def new_pod(job: Obj, index: int | None) -> Obj:
    """The pod ``job`` creates next (``index``: its completion index, Indexed Jobs only)."""
    meta = job["metadata"]
    template = (job.get("spec") or {}).get("template") or {}
    template_meta = template.get("metadata") or {}
    labels = dict(template_meta.get("labels") or {})
    annotations = dict(template_meta.get("annotations") or {})
    spec = deep_copy(template.get("spec") or {})
    prefix = f"{meta['name']}-"
    if index is not None:
        prefix = f"{meta['name']}-{index}-"
        labels[COMPLETION_INDEX] = annotations[COMPLETION_INDEX] = str(index)
        spec.setdefault("hostname", f"{meta['name']}-{index}")
        for kind in ("initContainers", "containers"):
            for container in spec.get(kind) or []:
                _add_index_env(container)
    pod_meta: Obj = {"generateName": prefix, "namespace": meta["namespace"], "labels": labels,
                     "ownerReferences": [owner_reference(job, "batch/v1", "Job")],
                     "finalizers": list(template_meta.get("finalizers") or []) + [TRACKING_FINALIZER]}
    if annotations:
        pod_meta["annotations"] = annotations
    return {"metadata": pod_meta, "spec": spec}


def _add_index_env(container: Obj) -> None:
    env = container.setdefault("env", [])
    if not any(var.get("name") == INDEX_ENV for var in env):
        env.append({"name": INDEX_ENV, "valueFrom": {"fieldRef": {
            "apiVersion": "v1", "fieldPath": f"metadata.annotations['{COMPLETION_INDEX}']"}}})


def completion_index(pod: Mapping[str, Any]) -> int | None:
    """The pod's completion index from its annotation, or None when it has none valid."""
    raw = ((pod.get("metadata") or {}).get("annotations") or {}).get(COMPLETION_INDEX)
    return int(raw) if isinstance(raw, str) and raw.isdigit() else None


def is_tracked(pod: Mapping[str, Any]) -> bool:
    return TRACKING_FINALIZER in ((pod.get("metadata") or {}).get("finalizers") or [])


def is_deleting(pod: Mapping[str, Any]) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def succeeded(pod: Mapping[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") == PHASE_SUCCEEDED


def finished(pod: Mapping[str, Any]) -> bool:
    """Counted as succeeded or failed: terminal (a deleted pod counts once it is terminal)."""
    return is_pod_terminal(pod)


def finished_at(pod: Mapping[str, Any], default: datetime) -> datetime:
    """When the pod's last container finished (its failure time, for the back-off)."""
    times = [parse_time(((status.get("state") or {}).get("terminated") or {}).get("finishedAt"))
             for status in (pod.get("status") or {}).get("containerStatuses") or []]
    known = [moment for moment in times if moment is not None]
    return max(known) if known else default
