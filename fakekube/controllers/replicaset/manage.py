"""Creating and deleting a ReplicaSet's pods (upstream's ``manageReplicas`` with
``RealPodControl``, ``pkg/controller/replicaset/replica_set.go`` and
``pkg/controller/controller_utils.go``, 1.33).

Too few pods: up to ``burstReplicas`` (500) are created in slow-start batches (1, 2, 4, …)
from the template — its labels, annotations, finalizers and spec, ``generateName``
``<name>-`` and the controller reference — each success recorded as ``SuccessfulCreate``
("Created pod: <name>"), a refusal as ``FailedCreate`` ("Error creating: <error>"); a
namespace being terminated is not an error. Too many: up to ``burstReplicas`` are deleted,
the first of upstream's deletion ranking first (:mod:`fakekube.objects.podranking`), each
recorded as ``SuccessfulDelete`` ("Deleted pod: <name>") or ``FailedDelete``.
"""

from __future__ import annotations

from typing import Any, Sequence

from fakekube.api.machinery.errors import ApiError
from fakekube.engine import Context
from fakekube.objects._json import deep_copy
from fakekube.objects.kinds import PODS
from fakekube.objects.owners import owner_reference
from fakekube.objects.podranking import colocation_ranks, rank_for_deletion
from fakekube.objects.slowstart import SLOW_START_INITIAL_BATCH_SIZE, slow_start_batch
from fakekube.controllers.replicaset.workload import Workload

Obj = dict[str, Any]

#: ``replicaset.BurstReplicas``: the most pods one sync creates or deletes.
BURST_REPLICAS = 500
#: The longest name a ``generateName`` prefix may have (a DNS subdomain, 253, with the
#: five random characters the apiserver adds dropped from it first).
MAX_PREFIX_CHARS = 253

NAMESPACE_TERMINATING_CAUSE = "NamespaceTerminating"


def pod_from_template(workload: Workload, rs: Obj) -> Obj:
    """``GetPodFromTemplate``: the pod a ReplicaSet creates (the apiserver names it)."""
    meta = rs["metadata"]
    template = (rs.get("spec") or {}).get("template") or {}
    template_meta = template.get("metadata") or {}
    name = meta["name"]
    pod_meta: Obj = {"generateName": f"{name}-" if len(name) < MAX_PREFIX_CHARS else name,
                     "namespace": meta["namespace"]}
    for field in ("labels", "annotations"):
        if template_meta.get(field):
            pod_meta[field] = dict(template_meta[field])
    pod_meta["ownerReferences"] = [owner_reference(rs, workload.api_version, workload.kind)]
    if template_meta.get("finalizers"):
        pod_meta["finalizers"] = list(template_meta["finalizers"])
    return {"metadata": pod_meta, "spec": deep_copy(template.get("spec") or {})}


def create_pods(workload: Workload, rs: Obj, count: int, ctx: Context) -> str | None:
    """Create ``count`` pods (at most the burst) in slow-start batches; the first error's
    message, or None."""
    def create_one() -> str | None:
        try:
            pod = ctx.client.create(PODS, pod_from_template(workload, rs))
        except ApiError as error:
            if _namespace_terminating(error):
                return None
            _record(workload, rs, ctx, "Warning", "FailedCreate", f"Error creating: {error.message}")
            return error.message
        _record(workload, rs, ctx, "Normal", "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}")
        return None

    _, error = slow_start_batch(min(count, BURST_REPLICAS), SLOW_START_INITIAL_BATCH_SIZE, create_one)
    return error


def pods_to_delete(pods: Sequence[Obj], related: Sequence[Obj], count: int, ctx: Context) -> list[Obj]:
    """``getPodsToDelete``: the first ``count`` pods of the deletion ranking (all of them,
    in the given order, when every pod goes)."""
    if count >= len(pods):
        return list(pods)[:count]
    return rank_for_deletion(pods, colocation_ranks(pods, related), ctx.now)[:count]


def delete_pods(workload: Workload, rs: Obj, pods: Sequence[Obj], ctx: Context) -> str | None:
    """Delete ``pods`` (gone already is fine); the first error's message, or None."""
    first_error = None
    for pod in pods[:BURST_REPLICAS]:
        name = pod["metadata"]["name"]
        try:
            ctx.client.delete(PODS, name, pod["metadata"]["namespace"])
        except ApiError as error:
            if error.code == 404:
                continue
            _record(workload, rs, ctx, "Warning", "FailedDelete", f"Error deleting: {error.message}")
            first_error = first_error or f"unable to delete pods: {error.message}"
            continue
        _record(workload, rs, ctx, "Normal", "SuccessfulDelete", f"Deleted pod: {name}")
    return first_error


def _namespace_terminating(error: ApiError) -> bool:
    causes = (error.details or {}).get("causes") or []
    return any(cause.get("reason") == NAMESPACE_TERMINATING_CAUSE for cause in causes)


def _record(workload: Workload, rs: Obj, ctx: Context, event_type: str, reason: str, message: str) -> None:
    ctx.record_event(rs, workload.kind, event_type, reason, message, workload.component, workload.api_version)
