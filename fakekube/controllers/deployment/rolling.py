"""RollingUpdate (upstream's ``pkg/controller/deployment/rolling.go``).

Each sync takes one step: scale the new ReplicaSet up within maxSurge, or else scale old
ones down within maxUnavailable (unhealthy old pods first), then report progress. The
next step comes with the next ReplicaSet status change (pods created, ready, available).
As upstream, the status written after a step counts the ReplicaSets as they were before
it (``unavailableReplicas`` catches up at the next sync).
"""

from __future__ import annotations

from fakekube.controllers.deployment.progress import sync_rollout_status
from fakekube.controllers.deployment.sync import Obj, Sync
from fakekube.objects.deployments import (
    available_replica_count,
    by_creation,
    filter_active,
    max_unavailable,
    new_rs_new_replicas,
    replica_count,
    spec_replicas,
)
from fakekube.objects.deploymentstatus import deployment_complete


def rollout_rolling(sync: Sync) -> None:
    """``rolloutRolling``."""
    new_rs, old_rss = sync.all_replica_sets(create=True)
    assert new_rs is not None  # created or an error raised
    if _reconcile_new(sync, [*old_rss, new_rs], new_rs):
        sync_rollout_status(sync, [*old_rss, new_rs], new_rs)
        return
    if _reconcile_old(sync, [*old_rss, new_rs], filter_active(old_rss), new_rs):
        sync_rollout_status(sync, [*old_rss, new_rs], new_rs)
        return
    if deployment_complete(sync.d, sync.d.get("status") or {}):
        sync.cleanup(old_rss)
    sync_rollout_status(sync, [*old_rss, new_rs], new_rs)


def _reconcile_new(sync: Sync, all_rss: list[Obj], new_rs: Obj) -> bool:
    """``reconcileNewReplicaSet``: the new ReplicaSet grows within the surge (or shrinks to
    ``replicas`` when a scale-down left it too big)."""
    replicas = spec_replicas(sync.d)
    if spec_replicas(new_rs) == replicas:
        return False
    if spec_replicas(new_rs) > replicas:
        return sync.scale_and_record(new_rs, replicas)[0]
    return sync.scale_and_record(new_rs, new_rs_new_replicas(sync.d, all_rss, new_rs))[0]


def _reconcile_old(sync: Sync, all_rss: list[Obj], old_rss: list[Obj], new_rs: Obj) -> bool:
    """``reconcileOldReplicaSets``: shrink old ReplicaSets as far as availability allows."""
    if replica_count(old_rss) == 0:
        return False
    min_available = spec_replicas(sync.d) - max_unavailable(sync.d)
    new_unavailable = spec_replicas(new_rs) - int((new_rs.get("status") or {}).get("availableReplicas") or 0)
    max_scaled_down = replica_count(all_rss) - min_available - new_unavailable
    if max_scaled_down <= 0:
        return False
    old_rss, cleaned = _cleanup_unhealthy(sync, old_rss, max_scaled_down)
    scaled = _scale_down_old(sync, [*old_rss, new_rs], old_rss)
    return cleaned + scaled > 0


def _available(rs: Obj) -> int:
    return int((rs.get("status") or {}).get("availableReplicas") or 0)


def _cleanup_unhealthy(sync: Sync, old_rss: list[Obj], max_cleanup: int) -> tuple[list[Obj], int]:
    """``cleanupUnhealthyReplicas``: drop old pods that are not available, oldest ReplicaSet first."""
    ordered = sorted(old_rss, key=by_creation)
    total = 0
    for i, rs in enumerate(ordered):
        if total >= max_cleanup:
            break
        replicas = spec_replicas(rs)
        if replicas == 0 or replicas == _available(rs):
            continue
        count = min(max_cleanup - total, replicas - _available(rs))
        ordered[i] = sync.scale_and_record(rs, replicas - count)[1]
        total += count
    return ordered, total


def _scale_down_old(sync: Sync, all_rss: list[Obj], old_rss: list[Obj]) -> int:
    """``scaleDownOldReplicaSetsForRollingUpdate``: as many old pods as availability allows."""
    min_available = spec_replicas(sync.d) - max_unavailable(sync.d)
    available = available_replica_count(all_rss)
    if available <= min_available:
        return 0
    wanted = available - min_available
    total = 0
    for rs in sorted(old_rss, key=by_creation):
        if total >= wanted:
            break
        if spec_replicas(rs) == 0:
            continue
        count = min(spec_replicas(rs), wanted - total)
        sync.scale_and_record(rs, spec_replicas(rs) - count)
        total += count
    return total
