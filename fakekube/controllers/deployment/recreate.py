"""Recreate (upstream's ``pkg/controller/deployment/recreate.go``): old and new pods never
overlap. Old ReplicaSets go to 0; the new one is created and scaled up only once no old
pod is left that is not terminal (a terminating pod still counts until it is gone).
"""

from __future__ import annotations

from fakekube.controllers.deployment.progress import sync_rollout_status
from fakekube.controllers.deployment.sync import Obj, Sync
from fakekube.engine import Context
from fakekube.objects.deployments import actual_replica_count, filter_active, spec_replicas
from fakekube.engine import Context
from fakekube.objects.deploymentstatus import deployment_complete
from fakekube.objects.kinds import PODS
from fakekube.objects.owners import controller_of
from fakekube.objects.pods import PHASE_FAILED, PHASE_SUCCEEDED


def rollout_recreate(sync: Sync) -> None:
    """``rolloutRecreate``."""
    new_rs, old_rss = sync.all_replica_sets(create=False)
    all_rss = [*old_rss, new_rs]
    scaled_down = False
    for rs in filter_active(old_rss):
        scaled_down = sync.scale_and_record(rs, 0)[0] or scaled_down
    if scaled_down or old_pods_running(sync, old_rss):
        sync_rollout_status(sync, all_rss, new_rs)
        return
    if new_rs is None:
        new_rs, old_rss = sync.all_replica_sets(create=True)
        all_rss = [*old_rss, new_rs]
    assert new_rs is not None
    sync.scale_and_record(new_rs, spec_replicas(sync.d))
    if deployment_complete(sync.d, sync.d.get("status") or {}):
        sync.cleanup(old_rss)
    sync_rollout_status(sync, all_rss, new_rs)


def old_pods_running(sync: Sync, old_rss: list[Obj]) -> bool:
    """``oldPodsRunning``: an old ReplicaSet still reports pods, or one of its pods (matching
    the Deployment's selector) is not Succeeded or Failed — terminating ones included."""
    if actual_replica_count(old_rss) > 0:
        return True
    return any(not _terminal(pod) for pod in deployment_pods(sync.ctx, old_rss))


def deployment_pods(ctx: Context, rss: list[Obj]) -> list[Obj]:
    """``getPodMapForDeployment`` flattened: pods controlled by one of ``rss``."""
    pods: list[Obj] = []
    for rs in rss:
        uid = rs["metadata"]["uid"]
        pods += [pod for pod in ctx.owned_by(PODS, uid) if (controller_of(pod) or {}).get("uid") == uid]
    return pods


def _terminal(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in (PHASE_SUCCEEDED, PHASE_FAILED)
