"""The deprecated server-side rollback (upstream's ``pkg/controller/deployment/rollback.go``).

``kubectl rollout undo`` rolls back client-side (it patches the old ReplicaSet's template
into the Deployment); this is the older path, still in kube-controller-manager 1.33: a
``deprecated.deployment.rollback.to`` annotation naming a revision (0: the previous one).
"""

from __future__ import annotations

from fakekube.controllers.deployment.sync import Obj, Sync, rollback_to, working_copy
from fakekube.objects.deployments import (
    ANNOTATIONS_TO_SKIP,
    ROLLBACK_TO_ANNOTATION,
    equal_ignore_hash,
    last_revision,
    revision,
    without_hash_label,
)
from fakekube.objects.kinds import DEPLOYMENTS

ROLLBACK_REVISION_NOT_FOUND = "DeploymentRollbackRevisionNotFound"
ROLLBACK_TEMPLATE_UNCHANGED = "DeploymentRollbackTemplateUnchanged"
ROLLBACK_DONE = "DeploymentRollback"


def rollback(sync: Sync) -> None:
    """``rollback``: copy the asked revision's template into the Deployment, then clear the request."""
    new_rs, old_rss = sync.all_replica_sets(create=True)
    all_rss = [rs for rs in [*old_rss, new_rs] if rs is not None]
    wanted = rollback_to(sync.d) or 0
    if wanted == 0:
        wanted = last_revision(all_rss)
        if wanted == 0:
            sync.event("Warning", ROLLBACK_REVISION_NOT_FOUND, "Unable to find last revision.")
            _clear(sync)
            return
    for rs in all_rss:
        if revision(rs) == wanted:
            if _to_template(sync, rs):
                sync.event("Normal", ROLLBACK_DONE,
                           f'Rolled back deployment "{sync.name}" to revision {wanted}')
            return
    sync.event("Warning", ROLLBACK_REVISION_NOT_FOUND, "Unable to find the revision to rollback to.")
    _clear(sync)


def _to_template(sync: Sync, rs: Obj) -> bool:
    """``rollbackToTemplate``: True when the template changed."""
    template = rs["spec"].get("template")
    if equal_ignore_hash(sync.d["spec"]["template"], template):
        sync.event("Warning", ROLLBACK_TEMPLATE_UNCHANGED,
                   f"The rollback revision contains the same template as current deployment \"{sync.name}\"")
        _clear(sync)
        return False
    sync.d["spec"]["template"] = without_hash_label(template)
    # SetDeploymentAnnotationsTo: the ReplicaSet's annotations become the Deployment's.
    _clear(sync, from_rs=rs)
    return True


def _clear(sync: Sync, from_rs: Obj | None = None) -> None:
    """``updateDeploymentAndClearRollbackTo``: an Update of the whole Deployment."""
    meta = sync.d["metadata"]
    found = dict(meta.get("annotations") or {})
    if from_rs is not None:
        found = _annotations_from(found, from_rs)
    found.pop(ROLLBACK_TO_ANNOTATION, None)
    meta["annotations"] = found
    sync.d = working_copy(sync.ctx.client.update(DEPLOYMENTS, sync.d))


def _annotations_from(current: Obj, rs: Obj) -> Obj:
    """``SetDeploymentAnnotationsTo``: the ReplicaSet's copyable annotations, with the
    Deployment's own skipped ones (revision, last-applied…) kept."""
    kept = {k: v for k, v in current.items() if k in ANNOTATIONS_TO_SKIP}
    copied = {k: v for k, v in ((rs.get("metadata") or {}).get("annotations") or {}).items()
              if k not in ANNOTATIONS_TO_SKIP}
    return {**kept, **copied}
