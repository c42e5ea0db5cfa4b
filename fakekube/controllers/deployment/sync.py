"""One sync of one Deployment: its ReplicaSets, the new one found or created, scaling,
clean-up and the status write (upstream's ``pkg/controller/deployment/sync.go``).

A :class:`Sync` holds the working copy of the Deployment that upstream's sync carries
through its steps (annotations and conditions set on it are written by the next status
update) and the ReplicaSets the Deployment owns. ReplicaSets are stored objects: a
change is written as a copy and the stored answer replaces the old one in the lists.
"""

from __future__ import annotations

from typing import Any, Sequence

from fakekube.api.machinery.errors import ApiError
from fakekube.engine import Context
from fakekube.objects import owner_reference
from fakekube.objects._json import deep_copy
from fakekube.objects.deployments import (
    DESIRED_REPLICAS_ANNOTATION,
    POD_TEMPLATE_HASH_LABEL,
    ROLLBACK_TO_ANNOTATION,
    REVISION_ANNOTATION,
    annotations_of,
    equal_ignore_hash,
    filter_active,
    find_active_or_latest,
    find_new_replica_set,
    go_int,
    is_rolling_update,
    is_saturated,
    max_revision,
    max_surge,
    new_rs_new_replicas,
    old_replica_sets,
    proportion,
    replica_count,
    replicas_annotations_need_update,
    set_new_rs_annotations,
    set_replicas_annotations,
    sorted_by_revision,
    sorted_by_size_newer,
    sorted_by_size_older,
    spec_replicas,
)
from fakekube.objects.deploymentstatus import (
    FAILED_RS_CREATE,
    FOUND_NEW_RS,
    NEW_REPLICA_SET,
    PAUSED,
    PROGRESSING,
    RESUMED,
    TIMED_OUT,
    calculate_status,
    get_condition,
    has_progress_deadline,
    new_condition,
    set_condition,
)
from fakekube.objects.kinds import DEPLOYMENTS, REPLICA_SETS
from fakekube.objects.owners import controller_of
from fakekube.objects.templatehash import compute_hash

Obj = dict[str, Any]

COMPONENT = "deployment-controller"
SCALING_REPLICA_SET = "ScalingReplicaSet"
#: The status cause of a create refused because its namespace is terminating.
NAMESPACE_TERMINATING_CAUSE = "NamespaceTerminating"


def working_copy(obj: Obj) -> Obj:
    """A copy whose top level, metadata, annotations, spec and status may be replaced or
    set; deeper levels stay shared with the stored object (never edited: every change
    below replaces a whole value, and the immutability guard checks it under test)."""
    meta = dict(obj.get("metadata") or {})
    meta["annotations"] = dict(meta.get("annotations") or {})
    return {**obj, "metadata": meta, "spec": dict(obj.get("spec") or {}), "status": dict(obj.get("status") or {})}


class Sync:
    """The state of one Deployment's sync: ``d`` is the working copy, ``rss`` its ReplicaSets."""

    def __init__(self, ctx: Context, deployment: Obj, rss: list[Obj], terminating_replicas: bool = False) -> None:
        self.ctx = ctx
        #: DeploymentReplicaSetTerminatingReplicas: the status counts terminating pods too.
        self.terminating_replicas = terminating_replicas
        self.d: Obj = working_copy(deployment)
        self.rss = rss

    @property
    def name(self) -> str:
        return str(self.d["metadata"]["name"])

    @property
    def namespace(self) -> str:
        return str(self.d["metadata"]["namespace"])

    @property
    def status(self) -> Obj:
        return self.d.setdefault("status", {})

    # -- writes -----------------------------------------------------------------------
    def event(self, event_type: str, reason: str, message: str) -> None:
        self.ctx.record_event(self.d, "Deployment", event_type, reason, message, COMPONENT, "apps/v1")

    def write_status(self) -> None:
        """UpdateStatus with the working copy: its status and annotations (the Deployment
        status strategy keeps spec and labels only), guarded by its resourceVersion."""
        stored = self.ctx.client.update_status(DEPLOYMENTS, self.d)
        self.d = working_copy(stored)

    def update_replica_set(self, rs: Obj) -> Obj:
        """Write a changed copy of a ReplicaSet; the stored answer replaces it in ``rss``."""
        stored = self.ctx.client.update(REPLICA_SETS, rs)
        uid = stored["metadata"]["uid"]
        self.rss = [stored if r["metadata"]["uid"] == uid else r for r in self.rss]
        return stored

    # -- ReplicaSets ------------------------------------------------------------------
    def all_replica_sets(self, create: bool) -> tuple[Obj | None, list[Obj]]:
        """``getAllReplicaSetsAndSyncRevision``: the new ReplicaSet (created when ``create``
        and missing) with its revision synced, and every old one."""
        new_rs = find_new_replica_set(self.d, self.rss)
        old_rss = old_replica_sets(new_rs, self.rss)
        return self._new_replica_set(new_rs, old_rss, create), old_rss

    def _new_replica_set(self, existing: Obj | None, old_rss: list[Obj], create: bool) -> Obj | None:
        new_revision = max_revision(old_rss) + 1
        if existing is not None:
            return self._sync_existing(existing, new_revision)
        if not create:
            return None
        return self._create_new(old_rss, new_revision)

    def _sync_existing(self, existing: Obj, new_revision: int) -> Obj:
        """Annotations and minReadySeconds onto the new ReplicaSet; its revision onto the Deployment."""
        rs = working_copy(existing)
        changed = set_new_rs_annotations(self.d, rs, new_revision, exists=True)
        min_ready_s = (self.d["spec"]).get("minReadySeconds", 0)
        if changed or rs["spec"].get("minReadySeconds", 0) != min_ready_s:
            rs["spec"]["minReadySeconds"] = min_ready_s
            return self.update_replica_set(rs)
        needs_update = self._set_revision(annotations_of(rs).get(REVISION_ANNOTATION, ""))
        if has_progress_deadline(self.d) and get_condition(self.status, PROGRESSING) is None:
            message = f'Found new replica set "{rs["metadata"]["name"]}"'
            set_condition(self.status, new_condition(PROGRESSING, "True", FOUND_NEW_RS, message, self.ctx.now))
            needs_update = True
        if needs_update:
            self.write_status()
        return existing

    def _set_revision(self, revision: str) -> bool:
        """``SetDeploymentRevision`` on the working copy."""
        meta = self.d["metadata"]
        if (meta.get("annotations") or {}).get(REVISION_ANNOTATION) == revision:
            return False
        meta["annotations"] = {**(meta.get("annotations") or {}), REVISION_ANNOTATION: revision}
        return True

    def _template_for_new(self) -> tuple[str, Obj, Obj]:
        """The new ReplicaSet's (hash, template, selector): the Deployment's, hash label added."""
        spec = self.d["spec"]
        hash_ = compute_hash(spec["template"], self.status.get("collisionCount"))
        template = deep_copy(spec["template"])
        template.setdefault("metadata", {})["labels"] = {**(template["metadata"].get("labels") or {}),
                                                         POD_TEMPLATE_HASH_LABEL: hash_}
        selector = deep_copy(spec["selector"])
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), POD_TEMPLATE_HASH_LABEL: hash_}
        return hash_, template, selector

    def _create_new(self, old_rss: list[Obj], new_revision: int) -> Obj | None:
        hash_, template, selector = self._template_for_new()
        rs: Obj = {
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": f"{self.name}-{hash_}", "namespace": self.namespace,
                         "labels": dict(template["metadata"]["labels"]),
                         "ownerReferences": [owner_reference(self.d, "apps/v1", "Deployment")]},
            "spec": {"replicas": 0, "minReadySeconds": self.d["spec"].get("minReadySeconds", 0),
                     "selector": selector, "template": template},
        }
        replicas = new_rs_new_replicas(self.d, [*old_rss, rs], rs)
        rs["spec"]["replicas"] = replicas
        set_new_rs_annotations(self.d, rs, new_revision, exists=False)
        try:
            created = self.ctx.client.create(REPLICA_SETS, rs)
        except ApiError as error:
            return self._create_failed(rs, error)
        self.rss = [*self.rss, created]
        if replicas > 0:
            self.event("Normal", SCALING_REPLICA_SET,
                       f"Scaled up replica set {created['metadata']['name']} from 0 to {replicas}")
        needs_update = self._set_revision(str(new_revision))
        if has_progress_deadline(self.d):
            message = f'Created new replica set "{created["metadata"]["name"]}"'
            set_condition(self.status, new_condition(PROGRESSING, "True", NEW_REPLICA_SET, message, self.ctx.now))
            needs_update = True
        if needs_update:
            self.write_status()
        return created

    def _create_failed(self, rs: Obj, error: ApiError) -> Obj | None:
        """A name taken by a ReplicaSet we own with our template is ours (a retry); one with
        another template is a hash collision: collisionCount goes up and the sync retries."""
        name = rs["metadata"]["name"]
        if error.reason == "AlreadyExists":
            found = self.ctx.get(REPLICA_SETS, name, self.namespace)
            if found is not None:
                ref = controller_of(found)
                if ref is not None and ref.get("uid") == self.d["metadata"].get("uid") \
                        and equal_ignore_hash(self.d["spec"]["template"], found["spec"].get("template")):
                    return found
            self.status["collisionCount"] = (self.status.get("collisionCount") or 0) + 1
            self.write_status()
            raise error
        causes = (error.details or {}).get("causes") or []
        if any(c.get("type") == NAMESPACE_TERMINATING_CAUSE for c in causes):
            raise error
        message = f'Failed to create new replica set "{name}": {error.message}'
        if has_progress_deadline(self.d):
            set_condition(self.status, new_condition(PROGRESSING, "False", FAILED_RS_CREATE, message, self.ctx.now))
            try:
                self.write_status()
            except ApiError:
                pass  # upstream ignores this error: the bigger issue is reported
        self.event("Warning", FAILED_RS_CREATE, message)
        raise error

    # -- scaling ----------------------------------------------------------------------
    def scale_replica_set(self, rs: Obj, new_scale: int) -> tuple[bool, Obj]:
        """``scaleReplicaSet``: size and replica annotations; a ScalingReplicaSet event
        when the size changed."""
        replicas = spec_replicas(self.d)
        maximum = replicas + max_surge(self.d)
        old_scale = spec_replicas(rs)
        if old_scale == new_scale and not replicas_annotations_need_update(rs, replicas, maximum):
            return False, rs
        copy = working_copy(rs)
        copy["spec"]["replicas"] = new_scale
        set_replicas_annotations(copy, replicas, maximum)
        stored = self.update_replica_set(copy)
        if old_scale == new_scale:
            return False, stored
        direction = "up" if old_scale < new_scale else "down"
        self.event("Normal", SCALING_REPLICA_SET,
                   f"Scaled {direction} replica set {stored['metadata']['name']} from {old_scale} to {new_scale}")
        return True, stored

    def scale_and_record(self, rs: Obj, new_scale: int) -> tuple[bool, Obj]:
        """``scaleReplicaSetAndRecordEvent``: nothing at all when the size is already right."""
        if spec_replicas(rs) == new_scale:
            return False, rs
        return self.scale_replica_set(rs, new_scale)

    def scale(self, new_rs: Obj | None, old_rss: list[Obj]) -> None:
        """``scale``: a scaling event (or a paused Deployment) resizes its ReplicaSets —
        proportionally to their sizes while a rolling update is in flight."""
        target = find_active_or_latest(new_rs, old_rss)
        if target is not None:
            if spec_replicas(target) != spec_replicas(self.d):
                self.scale_and_record(target, spec_replicas(self.d))
            return
        if is_saturated(self.d, new_rs):
            for old in filter_active(old_rss):
                self.scale_and_record(old, 0)
            return
        if is_rolling_update(self.d):
            self._scale_proportionally(filter_active([*old_rss, new_rs]))

    def _scale_proportionally(self, active: list[Obj]) -> None:
        replicas = spec_replicas(self.d)
        allowed = replicas + max_surge(self.d) if replicas > 0 else 0
        to_add = allowed - replica_count(active)
        if to_add > 0:
            active = sorted_by_size_newer(active)
        elif to_add < 0:
            active = sorted_by_size_older(active)
        sizes: list[int] = []
        added = 0
        for rs in active:
            share = proportion(rs, self.d, to_add, added) if to_add else 0
            sizes.append(spec_replicas(rs) + share)
            added += share
        if active and to_add:
            sizes[0] = max(0, sizes[0] + to_add - added)  # leftovers go to the largest
        for rs, size in zip(active, sizes):
            self.scale_replica_set(rs, size)

    # -- clean-up and status ----------------------------------------------------------
    def cleanup(self, old_rss: Sequence[Obj]) -> None:
        """``cleanupDeployment``: delete the oldest idle ReplicaSets past revisionHistoryLimit."""
        limit = self.d["spec"].get("revisionHistoryLimit")
        if limit is None:
            return
        alive = [rs for rs in old_rss if not rs["metadata"].get("deletionTimestamp")]
        excess = len(alive) - limit
        for rs in sorted_by_revision(alive)[:max(0, excess)]:
            status = rs.get("status") or {}
            if status.get("replicas", 0) != 0 or spec_replicas(rs) != 0 \
                    or rs["metadata"].get("generation", 0) > status.get("observedGeneration", 0):
                continue
            try:
                self.ctx.client.delete(REPLICA_SETS, rs["metadata"]["name"], self.namespace)
            except ApiError as error:
                if error.code != 404:
                    raise

    def sync_deployment_status(self, all_rss: Sequence[Obj | None], new_rs: Obj | None) -> None:
        """``syncDeploymentStatus``: counts and Available, written when they changed."""
        status = calculate_status(all_rss, new_rs, self.d, self.ctx.now, self.terminating_replicas)
        if status != self.status:
            self.d["status"] = status
            self.write_status()

    def sync(self) -> None:
        """``sync``: scaling events and paused Deployments (no rollout)."""
        new_rs, old_rss = self.all_replica_sets(create=False)
        self.scale(new_rs, old_rss)
        if self.d["spec"].get("paused") and rollback_to(self.d) is None:
            self.cleanup(old_rss)
        self.sync_deployment_status([*old_rss, new_rs], new_rs)

    def sync_status_only(self) -> None:
        new_rs, old_rss = self.all_replica_sets(create=False)
        self.sync_deployment_status([*old_rss, new_rs], new_rs)

    def is_scaling_event(self) -> bool:
        """``isScalingEvent``: an active ReplicaSet was sized for another replica count."""
        new_rs, old_rss = self.all_replica_sets(create=False)
        for rs in filter_active([*old_rss, new_rs]):
            desired = go_int(annotations_of(rs).get(DESIRED_REPLICAS_ANNOTATION))
            if desired is not None and desired != spec_replicas(self.d):
                return True
        return False

    def check_paused_conditions(self) -> None:
        """``checkPausedConditions``: Progressing Unknown/DeploymentPaused while paused, then
        DeploymentResumed, so a pause never counts against the progress deadline."""
        if not has_progress_deadline(self.d):
            return
        current = get_condition(self.status, PROGRESSING)
        if current is not None and current.get("reason") == TIMED_OUT:
            return
        paused_shown = current is not None and current.get("reason") == PAUSED
        paused = bool(self.d["spec"].get("paused"))
        if paused and not paused_shown:
            condition = new_condition(PROGRESSING, "Unknown", PAUSED, "Deployment is paused", self.ctx.now)
        elif not paused and paused_shown:
            condition = new_condition(PROGRESSING, "Unknown", RESUMED, "Deployment is resumed", self.ctx.now)
        else:
            return
        set_condition(self.status, condition)
        self.write_status()


def rollback_to(deployment: Obj) -> int | None:
    """``getRollbackTo``: the revision the deprecated rollback annotation asks for (0: the
    previous one), None when there is none or it is not a number."""
    value = annotations_of(deployment).get(ROLLBACK_TO_ANNOTATION)
    return None if value is None else go_int(value)
