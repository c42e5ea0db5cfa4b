"""The Deployment controller: rolls a Deployment's pod template out through ReplicaSets
(upstream's ``pkg/controller/deployment/deployment_controller.go``, 1.33).

A sync of one Deployment claims its ReplicaSets (adopting matching orphans, releasing
those that stopped matching), then, in upstream's order: status only while it is being
deleted; the paused conditions; a paused Deployment or a scaling event is resized
without rolling out (:meth:`Sync.sync`); the deprecated rollback annotation
(:mod:`.rollback`); otherwise one step of Recreate (:mod:`.recreate`) or RollingUpdate
(:mod:`.rolling`). ReplicaSets create the pods (the replicaset-controller); each change of
a ReplicaSet's status wakes its Deployment for the next step.

Work keys: ``<namespace>/<name>`` for a Deployment; ``rs:<namespace>/<name>`` for an
orphan ReplicaSet that appeared or changed, which wakes every Deployment of the namespace
selecting it (upstream's ``getDeploymentsForReplicaSet``); ``pods-of:<namespace>/<rs>``
when a pod of a Deployment's ReplicaSet is deleted, which wakes a Recreate Deployment
once its last pod is gone (upstream's ``deletePod``). Names hold no colon, so keys never
collide. Nothing is kept between reconciles.
"""

from __future__ import annotations

from typing import Any, Iterable

from fakekube.api.machinery.errors import ApiError
from fakekube.controllers.deployment.recreate import deployment_pods, rollout_recreate
from fakekube.controllers.deployment.rollback import rollback
from fakekube.controllers.deployment.rolling import rollout_rolling
from fakekube.controllers.deployment.sync import COMPONENT, Sync, rollback_to
from fakekube.engine import Context
from fakekube.objects.deployments import RECREATE, ROLLING_UPDATE
from fakekube.objects.indexes import ORPHANS_BY_NAMESPACE, orphan_namespace
from fakekube.objects.kinds import DEPLOYMENTS, PODS, REPLICA_SETS
from fakekube.objects.labels import LabelMatcher, compile_selector
from fakekube.objects.owners import adopted, controller_of, orphaned, owner_reference
from fakekube.store import ADDED, DELETED, Change

Obj = dict[str, Any]

ORPHAN_RS_PREFIX = "rs:"
POD_GONE_PREFIX = "pods-of:"
SELECTING_ALL_MESSAGE = "This deployment is selecting all pods. A non-empty selector is required."


class DeploymentController:
    """Rolls Deployments out through ReplicaSets, with upstream's strategies, conditions and events."""

    name = "deployment-controller"
    resources = (DEPLOYMENTS, REPLICA_SETS, PODS)
    indexes = ((REPLICA_SETS, ORPHANS_BY_NAMESPACE, orphan_namespace),)

    def __init__(self, terminating_replicas: bool = False) -> None:
        """``terminating_replicas``: the release's DeploymentReplicaSetTerminatingReplicas gate."""
        self.terminating_replicas = terminating_replicas

    # -- routing (pure) ------------------------------------------------------------------
    def keys_for(self, change: Change) -> Iterable[str]:
        if change.group != "apps" and change.resource != PODS.plural:
            return ()
        if change.resource == DEPLOYMENTS.plural:
            return () if change.type == DELETED else (f"{change.namespace}/{change.name}",)
        if change.resource == REPLICA_SETS.plural:
            return _replica_set_keys(change)
        if change.resource == PODS.plural and change.group == "" and change.type == DELETED:
            ref = controller_of(change.obj)
            if ref is not None and ref.get("kind") == "ReplicaSet" and ref.get("name"):
                return (f"{POD_GONE_PREFIX}{change.namespace}/{ref['name']}",)
        return ()

    # -- work ----------------------------------------------------------------------------
    def reconcile(self, key: str, ctx: Context) -> None:
        if key.startswith(ORPHAN_RS_PREFIX):
            _wake_selecting(key[len(ORPHAN_RS_PREFIX):], ctx)
        elif key.startswith(POD_GONE_PREFIX):
            _wake_recreate(key[len(POD_GONE_PREFIX):], ctx)
        else:
            namespace, name = key.split("/", 1)
            deployment = ctx.get(DEPLOYMENTS, name, namespace)
            if deployment is not None:
                sync_deployment(deployment, ctx, self.terminating_replicas)


def sync_deployment(deployment: Obj, ctx: Context, terminating_replicas: bool = False) -> None:
    """``syncDeployment``: one step toward the Deployment's spec."""
    spec = deployment.get("spec") or {}
    selector = spec.get("selector")
    if selector is not None and not selector.get("matchLabels") and not selector.get("matchExpressions"):
        _selecting_all(deployment, ctx)
        return
    try:
        matcher = compile_selector(selector)
    except ValueError:
        return  # an invalid selector: upstream's claim fails and it waits for a change
    sync = Sync(ctx, deployment, claim_replica_sets(deployment, matcher, ctx), terminating_replicas)
    if deployment["metadata"].get("deletionTimestamp"):
        sync.sync_status_only()
        return
    sync.check_paused_conditions()
    if sync.d["spec"].get("paused"):
        sync.sync()
    elif rollback_to(sync.d) is not None:
        rollback(sync)
    elif sync.is_scaling_event():
        sync.sync()
    elif (spec.get("strategy") or {}).get("type") == RECREATE:
        rollout_recreate(sync)
    elif (spec.get("strategy") or {}).get("type") == ROLLING_UPDATE:
        rollout_rolling(sync)


def _selecting_all(deployment: Obj, ctx: Context) -> None:
    """An empty selector would take every pod: warn, observe the generation, do nothing."""
    ctx.record_event(deployment, "Deployment", "Warning", "SelectingAll", SELECTING_ALL_MESSAGE, COMPONENT, "apps/v1")
    status = deployment.get("status") or {}
    generation = deployment["metadata"].get("generation", 0)
    if status.get("observedGeneration", 0) < generation:
        ctx.client.update_status(DEPLOYMENTS, {**deployment, "status": {**status, "observedGeneration": generation}})


def claim_replica_sets(deployment: Obj, matcher: LabelMatcher, ctx: Context) -> list[Obj]:
    """``getReplicaSetsForDeployment`` (``ClaimReplicaSets``): the ReplicaSets it controls
    that still match, matching orphans adopted; non-matching ones released. A Deployment
    being deleted neither adopts nor releases."""
    meta = deployment["metadata"]
    uid, namespace = meta["uid"], meta["namespace"]
    candidates = {rs["metadata"]["name"]: rs for rs in ctx.owned_by(REPLICA_SETS, uid)
                  if rs["metadata"].get("namespace") == namespace}
    for rs in ctx.by_index(REPLICA_SETS, ORPHANS_BY_NAMESPACE, namespace):
        candidates.setdefault(rs["metadata"]["name"], rs)
    deleting = bool(meta.get("deletionTimestamp"))
    claimed = []
    for name in sorted(candidates):
        rs = candidates[name]
        ref = controller_of(rs)
        matches = matcher.matches((rs["metadata"].get("labels") or {}))
        if ref is not None:
            if ref.get("uid") != uid:
                continue
            if matches or deleting:
                claimed.append(rs)
            else:
                _write_ignoring_gone(ctx, orphaned(rs, uid))
        elif matches and not deleting and not rs["metadata"].get("deletionTimestamp"):
            adopted_rs = _write_ignoring_gone(ctx, adopted(rs, owner_reference(deployment, "apps/v1", "Deployment")))
            if adopted_rs is not None:
                claimed.append(adopted_rs)
    return claimed


def _write_ignoring_gone(ctx: Context, rs: Obj) -> Obj | None:
    """Adopt or release: an object gone meanwhile is simply not claimed (upstream ignores 404)."""
    try:
        return ctx.client.update(REPLICA_SETS, rs)
    except ApiError as error:
        if error.code == 404:
            return None
        raise


def _replica_set_keys(change: Change) -> tuple[str, ...]:
    """Upstream's add/update/deleteReplicaSet: the controlling Deployment (old and new), or
    for an orphan that appeared or whose labels or owner changed, the orphan key."""
    rs, old = change.obj, change.prev
    keys = []
    ref = controller_of(rs)
    old_ref = controller_of(old) if old is not None else None
    if old_ref is not None and old_ref != ref:
        keys.append(_deployment_key(change.namespace, old_ref))
    if ref is not None:
        keys.append(_deployment_key(change.namespace, ref))
    elif change.type != DELETED and not rs["metadata"].get("deletionTimestamp") and (
            change.type == ADDED or old is None or old_ref is not None
            or (rs["metadata"].get("labels") or {}) != (old["metadata"].get("labels") or {})):
        keys.append(f"{ORPHAN_RS_PREFIX}{change.namespace}/{change.name}")
    return tuple(key for key in keys if key)


def _deployment_key(namespace: str, ref: Obj) -> str:
    if ref.get("kind") != "Deployment" or not ref.get("name"):
        return ""
    return f"{namespace}/{ref['name']}"


def _wake_selecting(rs_key: str, ctx: Context) -> None:
    """An orphan ReplicaSet changed: wake every Deployment of its namespace that selects it."""
    namespace, name = rs_key.split("/", 1)
    rs = ctx.get(REPLICA_SETS, name, namespace)
    if rs is None or controller_of(rs) is not None:
        return
    labels = rs["metadata"].get("labels") or {}
    for deployment in ctx.list(DEPLOYMENTS, namespace):
        try:
            matcher = compile_selector((deployment.get("spec") or {}).get("selector"))
        except ValueError:
            continue
        if not matcher.everything and matcher.matches(labels):
            ctx.enqueue(f"{namespace}/{deployment['metadata']['name']}")


def _wake_recreate(rs_key: str, ctx: Context) -> None:
    """A pod of ``rs_key`` was deleted: a Recreate Deployment with no pod left syncs now."""
    namespace, name = rs_key.split("/", 1)
    rs = ctx.get(REPLICA_SETS, name, namespace)
    ref = controller_of(rs) if rs is not None else None
    if ref is None or ref.get("kind") != "Deployment":
        return
    deployment = ctx.get(DEPLOYMENTS, ref.get("name") or "", namespace)
    if deployment is None or deployment["metadata"].get("uid") != ref.get("uid"):
        return
    if ((deployment.get("spec") or {}).get("strategy") or {}).get("type") != RECREATE:
        return
    owned = [r for r in ctx.owned_by(REPLICA_SETS, ref["uid"]) if (controller_of(r) or {}).get("uid") == ref["uid"]]
    if not deployment_pods(ctx, owned):
        ctx.enqueue(f"{namespace}/{deployment['metadata']['name']}")
