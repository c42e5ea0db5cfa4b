"""The disruption controller: every PodDisruptionBudget's status, kept current.

kube-controller-manager 1.33 (``pkg/controller/disruption/disruption.go``) recomputes a
budget whenever it or one of its pods changes:

* ``currentHealthy``: Ready pods that are not being deleted and not listed in
  ``disruptedPods`` (pods the eviction subresource let go within the last 2 minutes,
  ``DeletionTimeout``); an entry whose pod was not deleted in time is dropped with a
  ``NotDeleted`` event, at a recheck 2 minutes after it was written (plus the work
  queue's 5 ms rate-limited delay);
* ``expectedPods`` and ``desiredHealthy``: an integer ``minAvailable`` expects the matching
  pods; ``maxUnavailable`` and a percentage ``minAvailable`` expect the sum of the pods'
  controllers' scale (ReplicationController, Deployment through its ReplicaSet, ReplicaSet,
  StatefulSet, else any served kind with a scale subresource), percentages rounded up;
* ``disruptionsAllowed`` = currentHealthy − desiredHealthy (never below 0, 0 while no pods
  are expected), ``observedGeneration``, and the ``DisruptionAllowed`` condition
  (SufficientPods / InsufficientPods; SyncFailed with the error when the computation
  fails, which also sets ``disruptionsAllowed`` to 0 — the "fail safe").

It also resets a ``DisruptionTarget`` condition that stayed True for 2 minutes on a pod
nobody deleted (not for the kubelet's own reason, not on finished pods).

Events (source ``controllermanager``): NoPods, UnmanagedPods,
CalculateExpectedPodCountFailed on the budget; NotDeleted and MultiplePodDisruptionBudgets
on pods — upstream's texts, including its quirks (NotDeleted names the budget's namespace
twice). The pure rules are :mod:`fakekube.objects.disruption`, shared with the eviction
subresource.

Keys: ``pdb/<ns>/<name>`` (a sync), ``pod/<ns>/<name>`` (a pod changed in a way a budget
reads: its budget is synced), ``ns/<ns>`` (a pod was deleted: every budget of its
namespace is synced, as the deleted pod's labels are gone), ``stale/<ns>/<name>`` (a
DisruptionTarget condition to check). No state is kept between reconciles.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Collection, Iterable, Mapping

from fakekube.api.registry import SCALE
from fakekube.clock import parse_time
from fakekube.engine import Context
from fakekube.objects import disruption as rules
from fakekube.objects.kinds import (
    DEPLOYMENTS,
    POD_DISRUPTION_BUDGETS,
    PODS,
    REPLICA_SETS,
    REPLICATION_CONTROLLERS,
    STATEFUL_SETS,
    Resource,
)
from fakekube.objects.labels import compile_selector
from fakekube.objects.owners import controller_of
from fakekube.objects.pods import DISRUPTION_TARGET, is_pod_terminal, pod_condition, update_pod_condition
from fakekube.store import DELETED, Change

Obj = dict[str, Any]

#: Events are recorded as kube-controller-manager's disruption controller records them.
COMPONENT = "controllermanager"
#: ``stalePodDisruptionTimeout``: how long a DisruptionTarget condition may stay True on a
#: pod that is not being deleted.
STALE_POD_DISRUPTION_TIMEOUT_S = 120.0
#: The work queue's first rate-limited delay: a recheck reaches the sync this much after
#: its deadline (upstream's recheck queue hands the key on with ``AddRateLimited``).
RECHECK_DELAY_S = 0.005
#: The kubelet's own DisruptionTarget reason, never considered stale.
TERMINATION_BY_KUBELET = "TerminationByKubelet"


class SyncFailed(Exception):
    """What made a budget's status uncomputable; its text becomes the SyncFailed message."""


class DisruptionController:
    """Computes PodDisruptionBudget status from the pods each budget selects."""

    name = "disruption-controller"
    resources = (PODS, POD_DISRUPTION_BUDGETS)

    def keys_for(self, change: Change) -> Iterable[str]:
        where = f"{change.namespace}/{change.name}"
        if (change.group, change.resource) == POD_DISRUPTION_BUDGETS:
            return [f"pdb/{where}"]
        if change.type == DELETED:
            return [f"ns/{change.namespace}"] if _labels(change.obj) else []
        if change.prev is not None and _budget_view(change.prev) == _budget_view(change.obj):
            return []  # nothing a budget or the stale-condition check reads changed
        return [f"pod/{where}"]

    def reconcile(self, key: str, ctx: Context) -> None:
        kind, _, rest = key.partition("/")
        namespace, _, name = rest.partition("/")
        if kind == "pdb":
            self._sync(namespace, name, ctx)
        elif kind == "pod":
            self._pod_changed(namespace, name, ctx)
        elif kind == "ns":
            for pdb in ctx.list(POD_DISRUPTION_BUDGETS, namespace):
                ctx.enqueue(f"pdb/{namespace}/{pdb['metadata']['name']}")
        elif kind == "stale":
            self._clear_stale_condition(namespace, name, ctx)

    # -- pods ---------------------------------------------------------------------------
    def _pod_changed(self, namespace: str, name: str, ctx: Context) -> None:
        """``addPod``/``updatePod``: sync the pod's budget (the first, when several guard it —
        upstream's "arbitrary" pick is the first by name here) and watch its condition."""
        pod = ctx.get(PODS, name, namespace)
        if pod is None:
            ctx.enqueue(f"ns/{namespace}")
            return
        pdbs = rules.budgets_for_pod(ctx.list(POD_DISRUPTION_BUDGETS, namespace), pod) if _labels(pod) else []
        if len(pdbs) > 1:
            chosen = pdbs[0]["metadata"]["name"]
            ctx.record_event(pod, "Pod", "Warning", "MultiplePodDisruptionBudgets",
                             f'Pod "{namespace}"/"{name}" matches multiple PodDisruptionBudgets.  '
                             f'Chose "{chosen}" arbitrarily.', COMPONENT)
        if pdbs:
            ctx.enqueue(f"pdb/{namespace}/{pdbs[0]['metadata']['name']}")
        wait_s = _stale_condition_wait_s(pod, ctx.now)
        if wait_s is not None:
            ctx.enqueue_after(f"stale/{namespace}/{name}", wait_s)

    def _clear_stale_condition(self, namespace: str, name: str, ctx: Context) -> None:
        """``syncStalePodDisruption``: DisruptionTarget True for 2 minutes on a pod nobody
        deleted becomes False (reason and message cleared)."""
        pod = ctx.get(PODS, name, namespace)
        wait_s = None if pod is None else _stale_condition_wait_s(pod, ctx.now)
        if pod is None or wait_s is None:
            return
        if wait_s > 0:
            ctx.requeue_after(wait_s)
            return
        updated = update_pod_condition(pod, {"type": DISRUPTION_TARGET, "status": "False"}, ctx.now)
        if updated is not None:
            ctx.client.update_status(PODS, updated)

    # -- budgets ------------------------------------------------------------------------
    def _sync(self, namespace: str, name: str, ctx: Context) -> None:
        pdb = ctx.get(POD_DISRUPTION_BUDGETS, name, namespace)
        if pdb is None:
            return
        try:
            self._try_sync(pdb, ctx)
        except SyncFailed as failure:
            status = rules.with_sync_failed(pdb.get("status") or {}, str(failure), ctx.now)
            ctx.client.update_status(POD_DISRUPTION_BUDGETS, {**pdb, "status": status})

    def _try_sync(self, pdb: Obj, ctx: Context) -> None:
        pods = self._pods_for(pdb, ctx)
        if not pods:
            self._event(pdb, "Normal", "NoPods", "No matching pods found", ctx)
        expected, desired = self._expected_and_desired(pdb, pods, ctx)
        disruptions = rules.live_disruptions(pods, (pdb.get("status") or {}).get("disruptedPods"), ctx.now)
        meta = pdb["metadata"]
        for pod in (pod for pod in pods if pod["metadata"]["name"] in disruptions.expired):
            ctx.record_event(pod, "Pod", "Warning", "NotDeleted",
                             f"Pod was expected by PDB {meta['namespace']}/{meta['namespace']} to be deleted "
                             "but it wasn't", COMPONENT)
        healthy = rules.count_healthy(pods, disruptions.kept, ctx.now)
        self._write_status(pdb, healthy, desired, expected, disruptions.kept, ctx)
        if disruptions.recheck_at is not None:
            recheck_at = disruptions.recheck_at + timedelta(seconds=RECHECK_DELAY_S)
            ctx.enqueue_at(f"pdb/{meta['namespace']}/{meta['name']}", recheck_at)

    def _pods_for(self, pdb: Obj, ctx: Context) -> list[Obj]:
        """``getPodsForPdb``: the namespace's pods the selector matches, in name order."""
        try:
            matcher = compile_selector((pdb.get("spec") or {}).get("selector"))
        except ValueError as problem:
            self._event(pdb, "Warning", "NoPods", f"Failed to get pods: {problem}", ctx)
            raise SyncFailed(str(problem)) from None
        return [pod for pod in ctx.list(PODS, pdb["metadata"]["namespace"]) if matcher.matches(_labels(pod))]

    def _expected_and_desired(self, pdb: Obj, pods: list[Obj], ctx: Context) -> tuple[int, int]:
        """``getExpectedPodCount``, with its events."""
        spec = pdb.get("spec") or {}
        try:
            scale, unmanaged = self._expected_scale(pods, ctx) if rules.needs_scale(spec) else (0, [])
            expected_and_desired = rules.healthy_target(spec, len(pods), scale)
        except (SyncFailed, ValueError) as problem:
            self._event(pdb, "Warning", "CalculateExpectedPodCountFailed",
                        f"Failed to calculate the number of expected pods: {problem}", ctx)
            raise SyncFailed(str(problem)) from None
        if unmanaged:
            selector = rules.selector_go_string(spec.get("selector"))
            self._event(pdb, "Warning", "UnmanagedPods",
                        f"Pods selected by this PodDisruptionBudget (selector: {selector}) were found to be "
                        "unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may "
                        "result in undefined behavior. To account for these pods please set \".spec.minAvailable\" "
                        "field of the PDB to an integer value.", ctx)
        return expected_and_desired

    def _expected_scale(self, pods: list[Obj], ctx: Context) -> tuple[int, list[str]]:
        """``getExpectedScale``: the sum of the scale of the pods' controllers (each counted
        once) and the names of the pods that have no controller."""
        scales: dict[str, int] = {}
        unmanaged: list[str] = []
        for pod in pods:
            ref = controller_of(pod)
            if ref is None:
                unmanaged.append(pod["metadata"]["name"])
                continue
            if ref.get("uid") in scales:
                continue
            found = _controller_scale(ref, pod["metadata"]["namespace"], ctx)
            if found is None:
                raise SyncFailed(f'found no controllers for pod "{pod["metadata"]["name"]}"')
            scales[found[0]] = found[1]
        return sum(scales.values()), unmanaged

    def _write_status(self, pdb: Obj, healthy: int, desired: int, expected: int, disrupted: dict[str, str],
                      ctx: Context) -> None:
        """``updatePdbStatus``: write only when a number, the disrupted pods, the observed
        generation or the condition is out of date."""
        status = pdb.get("status") or {}
        generation = pdb["metadata"].get("generation") or 0
        allowed = rules.disruptions_allowed(healthy, desired, expected)
        current = (status.get("currentHealthy"), status.get("desiredHealthy"), status.get("expectedPods"),
                   status.get("disruptionsAllowed"), dict(status.get("disruptedPods") or {}),
                   status.get("observedGeneration") or 0)
        if current == (healthy, desired, expected, allowed, disrupted, generation) and \
                rules.conditions_up_to_date(pdb):
            return
        new_status = rules.pdb_status(healthy, desired, expected, allowed, disrupted, generation,
                                      status.get("conditions"))
        new_status = rules.with_allowed_condition(new_status, ctx.now)
        ctx.client.update_status(POD_DISRUPTION_BUDGETS, {**pdb, "status": new_status})

    def _event(self, pdb: Obj, event_type: str, reason: str, message: str, ctx: Context) -> None:
        ctx.record_event(pdb, "PodDisruptionBudget", event_type, reason, message, COMPONENT, "policy/v1")


# -- the pods' controllers ----------------------------------------------------------------

#: The API groups upstream's typed finders accept for ReplicaSets and Deployments.
_APPS_GROUPS = frozenset({"apps", "extensions"})


def _controller_scale(ref: Mapping[str, Any], namespace: str, ctx: Context) -> tuple[str, int] | None:
    """The controller ``ref`` names and its scale, as upstream's finders look it up
    (``getPodReplicationController``, ``getPodDeployment``, ``getPodReplicaSet``,
    ``getPodStatefulSet``, ``getScaleController``); None when none finds it."""
    for finder in (_replication_controller, _deployment, _replica_set, _stateful_set, _scale_controller):
        found = finder(ref, namespace, ctx)
        if found is not None:
            return found
    return None


def _group_of(ref: Mapping[str, Any]) -> str:
    """The group of an ownerReference's apiVersion (``schema.ParseGroupVersion``)."""
    api_version = ref.get("apiVersion") or ""
    if api_version.count("/") > 1:
        raise SyncFailed(f"unexpected GroupVersion string: {api_version}")
    return api_version.split("/")[0] if "/" in api_version else ""


def _is_kind(ref: Mapping[str, Any], kind: str, groups: Collection[str]) -> bool:
    """``verifyGroupKind``."""
    group = _group_of(ref)
    return ref.get("kind") == kind and group in groups


def _owned(resource: Resource, ref: Mapping[str, Any], namespace: str, ctx: Context) -> Obj | None:
    """The object ``ref`` names, if it exists with that uid."""
    obj = ctx.get(resource, ref.get("name") or "", namespace)
    return obj if obj is not None and obj["metadata"].get("uid") == ref.get("uid") else None


def _replicas(obj: Mapping[str, Any]) -> int:
    replicas = (obj.get("spec") or {}).get("replicas")
    return 1 if replicas is None else int(replicas)


def _replication_controller(ref: Mapping[str, Any], namespace: str, ctx: Context) -> tuple[str, int] | None:
    if not _is_kind(ref, "ReplicationController", ("",)):
        return None
    rc = _owned(REPLICATION_CONTROLLERS, ref, namespace, ctx)
    return None if rc is None else (rc["metadata"]["uid"], _replicas(rc))


def _deployment(ref: Mapping[str, Any], namespace: str, ctx: Context) -> tuple[str, int] | None:
    if not _is_kind(ref, "ReplicaSet", _APPS_GROUPS):
        return None
    rs = _owned(REPLICA_SETS, ref, namespace, ctx)
    rs_ref = None if rs is None else controller_of(rs)
    if rs_ref is None or not _is_kind(rs_ref, "Deployment", _APPS_GROUPS):
        return None
    deployment = _owned(DEPLOYMENTS, rs_ref, namespace, ctx)
    return None if deployment is None else (deployment["metadata"]["uid"], _replicas(deployment))


def _replica_set(ref: Mapping[str, Any], namespace: str, ctx: Context) -> tuple[str, int] | None:
    if not _is_kind(ref, "ReplicaSet", _APPS_GROUPS):
        return None
    rs = _owned(REPLICA_SETS, ref, namespace, ctx)
    rs_ref = None if rs is None else controller_of(rs)
    if rs is None or (rs_ref is not None and rs_ref.get("kind") == "Deployment"):
        return None  # a Deployment's ReplicaSet counts through its Deployment
    return rs["metadata"]["uid"], _replicas(rs)


def _stateful_set(ref: Mapping[str, Any], namespace: str, ctx: Context) -> tuple[str, int] | None:
    if not _is_kind(ref, "StatefulSet", ("apps",)):
        return None
    sts = _owned(STATEFUL_SETS, ref, namespace, ctx)
    return None if sts is None else (sts["metadata"]["uid"], _replicas(sts))


def _scale_controller(ref: Mapping[str, Any], namespace: str, ctx: Context) -> tuple[str, int] | None:
    """Any served kind with a scale subresource: its Scale's ``spec.replicas``."""
    api_version, kind = ref.get("apiVersion") or "", ref.get("kind") or ""
    _group_of(ref)
    rt = ctx.client.resource_for_kind(api_version, kind)
    if rt is None:
        raise SyncFailed(f'no matches for kind "{kind}" in version "{api_version}"')
    if SCALE not in rt.subresources:
        raise SyncFailed(f"{Resource(rt.group, rt.plural)} does not implement the scale subresource")
    obj = _owned(Resource(rt.group, rt.plural), ref, namespace, ctx)
    return None if obj is None else (obj["metadata"]["uid"], int((obj.get("spec") or {}).get("replicas") or 0))


# -- pods as budgets read them -------------------------------------------------------------

def _labels(pod: Mapping[str, Any]) -> Mapping[str, str]:
    return (pod.get("metadata") or {}).get("labels") or {}


def _budget_view(pod: Mapping[str, Any]) -> tuple[Any, ...]:
    """What of a pod the controller reads: a change elsewhere (a container restart count, a
    probe time) makes no work."""
    meta = pod.get("metadata") or {}
    ready = pod_condition(pod, "Ready") or {}
    target = pod_condition(pod, DISRUPTION_TARGET) or {}
    return (meta.get("labels"), meta.get("deletionTimestamp"), meta.get("ownerReferences"), ready.get("status"),
            target.get("status"), target.get("reason"), target.get("lastTransitionTime"), is_pod_terminal(pod))


def _stale_condition_wait_s(pod: Mapping[str, Any], now: datetime) -> float | None:
    """``nonTerminatingPodHasStaleDisruptionCondition``: None when the pod has no such
    condition to watch, else how long until it is stale (0: now)."""
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return None
    target = pod_condition(pod, DISRUPTION_TARGET)
    if target is None or target.get("status") != "True" or target.get("reason") == TERMINATION_BY_KUBELET \
            or is_pod_terminal(pod):
        return None
    since = parse_time(target.get("lastTransitionTime"))
    if since is None:
        return 0.0
    return max(0.0, STALE_POD_DISRUPTION_TIMEOUT_S - (now - since).total_seconds())
