"""One sync of one StatefulSet, in upstream's order (``stateful_set_control.go``, 1.33).

1. revisions: the update revision is the set's current template (an equal older revision is
   renumbered, a new one created, a name collision bumps ``collisionCount``); the current
   revision is the one ``status.currentRevision`` names, else the update revision;
2. pods split into replicas (ordinals ``start`` .. ``start + replicas - 1``, missing ones
   planned at the current revision below the partition, the update revision from it) and
   condemned (other ordinals, highest first);
3. replicas in ordinal order: a Failed or Succeeded pod is deleted (its replacement comes
   with the sync after it is gone), a missing one created with its claims; OrderedReady
   stops at the first pod it created, or that is terminating, not Running and Ready, or not
   available for ``minReadySeconds``; identity, storage and claim owners are repaired;
4. condemned pods' claims get the retention policy's owners, then they are deleted one at a
   time from the highest ordinal, each once its predecessors are healthy (OrderedReady);
5. RollingUpdate (not OnDelete): the highest replica at or above the partition that is not
   at the update revision is deleted, once every higher one is healthy;
6. the status is written when it differs (a rollout whose replicas are all updated and
   ready makes the update revision current), then the history beyond
   ``revisionHistoryLimit`` is cut.

Parallel runs steps 3 and 4 for every pod (in slow-start batches: 1, 2, 4, … up to 500;
a batch with a failure ends the step) without waiting. A failed write stops the sync where
upstream's does; the status is still written and the set retried with back-off.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from fakekube.api.machinery.errors import ApiError
from fakekube.clock import parse_time
from fakekube.controllers.statefulset import history, identity
from fakekube.controllers.statefulset.podcontrol import PodControl, SyncError
from fakekube.engine import Context
from fakekube.objects.kinds import CONTROLLER_REVISIONS, STATEFUL_SETS
from fakekube.objects.pods import POD_READY, is_pod_ready, pod_condition

Obj = dict[str, Any]

PARALLEL = "Parallel"
ON_DELETE = "OnDelete"
ROLLING_UPDATE = "RollingUpdate"
#: ``MaxBatchSize``: the largest slow-start batch of a Parallel set.
MAX_BATCH_SIZE = 500
#: Pods a Parallel sync creates before it ends and queues the next sync at once (upstream
#: creates every missing pod in one sync; ours stays one bounded step of the engine).
MAX_CREATES_PER_SYNC = 500
DEFAULT_REVISION_HISTORY_LIMIT = 10
#: The second upstream's pod handler adds to minReadySeconds before it looks again.
AVAILABILITY_RECHECK_S = 1


class Revisions:
    """The current and update revisions of one sync and the collision count they used."""

    def __init__(self, current: Obj, update: Obj, collision_count: int) -> None:
        self.current, self.update, self.collision_count = current, update, collision_count

    @property
    def current_name(self) -> str:
        return str(self.current["metadata"]["name"])

    @property
    def update_name(self) -> str:
        return str(self.update["metadata"]["name"])


class StatefulSetSync:
    """``UpdateStatefulSet`` for one set and the pods it owns (see the module docstring)."""

    def __init__(self, sts: Obj, pods: Sequence[Obj], revisions: Sequence[Obj], ctx: Context) -> None:
        self.sts = sts
        self.pods = list(pods)
        self.revisions = history.sort_revisions(revisions)
        self.ctx = ctx
        self.spec: Mapping[str, Any] = sts.get("spec") or {}
        self.control = PodControl(sts, ctx)
        self.min_ready_s = int(self.spec.get("minReadySeconds") or 0)
        self.monotonic = self.spec.get("podManagementPolicy") != PARALLEL
        # Set by update(): the status as it goes, the pods by role, and what plans a missing pod.
        self.status: Obj = {}
        self.replicas = ReplicaSlots(0)
        self.condemned: list[Obj] = []
        self.plan: tuple[Obj, Obj, Revisions] | None = None

    def run(self) -> None:
        failed = False
        revisions: Revisions | None = None
        status: Obj | None = None
        try:
            revisions = self.get_revisions()
            status = self.update(revisions)
        except SyncError:
            failed = True
            status = self.status if revisions is not None else None
        if status is not None:
            failed = not self.write_status(status) or failed
        failed = not self.truncate_history(revisions) or failed
        if failed:
            self.ctx.requeue_rate_limited()
        if status is not None:
            self.recheck_availability(status)

    # -- revisions ------------------------------------------------------------------
    def get_revisions(self) -> Revisions:
        """``getStatefulSetRevisions``."""
        collision_count = int((self.sts.get("status") or {}).get("collisionCount") or 0)
        wanted = history.new_revision(self.sts, history.next_number(self.revisions), collision_count)
        equal = [r for r in self.revisions if history.equal(r, wanted)]
        try:
            if equal and history.equal(self.revisions[-1], equal[-1]):
                update = self.revisions[-1]
            elif equal:
                update = self.ctx.client.update(CONTROLLER_REVISIONS, dict(equal[-1], revision=wanted["revision"]))
            else:
                update, collision_count = self.create_revision(wanted, collision_count)
        except ApiError as error:
            raise SyncError(error.message) from None
        status_current = (self.sts.get("status") or {}).get("currentRevision")
        current = next((r for r in self.revisions if r["metadata"]["name"] == status_current), update)
        return Revisions(current, update, collision_count)

    def create_revision(self, revision: Obj, collision_count: int) -> tuple[Obj, int]:
        """``CreateControllerRevision``: a name taken by other data bumps the collision count
        and tries the next name (the hash label keeps the first hash, as upstream's does)."""
        name = self.sts["metadata"]["name"][:history.MAX_PREFIX_CHARS]
        while True:
            hash_ = history.revision_hash(revision["data"], collision_count)
            attempt = dict(revision, metadata=dict(revision["metadata"], name=f"{name}-{hash_}"))
            try:
                return self.ctx.client.create(CONTROLLER_REVISIONS, attempt), collision_count
            except ApiError as error:
                if error.reason != "AlreadyExists":
                    raise
            existing = self.ctx.get(CONTROLLER_REVISIONS, attempt["metadata"]["name"], self.sts["metadata"]["namespace"])
            if existing is not None and history.equal(existing, attempt):
                return existing, collision_count
            collision_count += 1

    def truncate_history(self, revisions: Revisions | None) -> bool:
        """``truncateHistory`` over the revisions listed at the sync's start; False on a failure."""
        live = {identity.pod_revision(pod) for pod in self.pods}
        if revisions is not None:
            live |= {revisions.current_name, revisions.update_name}
        limit = self.spec.get("revisionHistoryLimit")
        limit = DEFAULT_REVISION_HISTORY_LIMIT if limit is None else int(limit)
        for revision in history.to_truncate(self.revisions, live, limit):
            try:
                self.ctx.client.delete(CONTROLLER_REVISIONS, revision["metadata"]["name"], self.sts["metadata"]["namespace"])
            except ApiError as error:
                if error.code != 404:
                    return False
        return True

    # -- pods -----------------------------------------------------------------------
    def update(self, revisions: Revisions) -> Obj:
        """``updateStatefulSet``: the status to write (``self.status`` as it goes)."""
        current_set = self.with_template(history.template_of(revisions.current))
        update_set = self.with_template(history.template_of(revisions.update))
        self.plan = (current_set, update_set, revisions)
        self.status = {"observedGeneration": self.sts["metadata"].get("generation") or 0,
                            "currentRevision": revisions.current_name, "updateRevision": revisions.update_name,
                            "collisionCount": revisions.collision_count}
        self.count(self.pods)
        replicas, condemned = self.split()
        self.replicas, self.condemned = replicas, condemned
        first_unhealthy = first_unhealthy_condemned(replicas, condemned)
        if self.sts["metadata"].get("deletionTimestamp"):
            return self.status
        steps: list[Callable[[], bool]] = [
            lambda: self.run_for_all(len(replicas), lambda i: self.process_replica(update_set, i)),
            lambda: self.run_for_all(len(condemned), lambda i: self.fix_condemned_claims(update_set, i)),
            lambda: self.run_for_all(len(condemned), lambda i: self.process_condemned(first_unhealthy, i)),
        ]
        for step in steps:
            try:
                stop = step()
            except SyncError:
                self.count(replicas, condemned)
                raise
            if stop:
                self.count(replicas, condemned)
                return self.status
        self.count(replicas, condemned)
        if (self.spec.get("updateStrategy") or {}).get("type") == ON_DELETE:
            return self.status
        self.rolling_update(revisions)
        return self.status

    def with_template(self, template: Obj) -> Obj:
        """``ApplyRevision``: the set with a revision's template."""
        return dict(self.sts, spec=dict(self.spec, template=template))

    def split(self) -> tuple[ReplicaSlots, list[Obj]]:
        """Replicas by ordinal (None: missing) and condemned pods, highest ordinal first."""
        start, count = identity.start_ordinal(self.sts), identity.replicas_of(self.sts)
        slots = ReplicaSlots(count)
        condemned = []
        for pod in self.pods:
            ordinal = identity.ordinal_of(pod)
            if identity.in_ordinal_range(pod, self.sts):
                slots[ordinal - start] = pod
            elif ordinal >= 0:
                condemned.append(pod)
        condemned.sort(key=identity.ordinal_of, reverse=True)
        return slots, condemned

    def replica(self, index: int) -> Obj:
        """The replica at ``index``; a missing one is planned when first needed (upstream plans
        every missing one up front), so a sync that stops early builds no more than it uses."""
        pod = self.replicas[index]
        if pod is None:
            pod = self.replicas[index] = self.planned(identity.start_ordinal(self.sts) + index)
        return pod

    def planned(self, ordinal: int) -> Obj:
        """``newVersionedStatefulSetPod``: below the partition at the current revision."""
        assert self.plan is not None, "planned only during update()"
        current_set, update_set, revisions = self.plan
        strategy = self.spec.get("updateStrategy") or {}
        rolling = strategy.get("rollingUpdate")
        start = identity.start_ordinal(self.sts)
        if strategy.get("type") == ROLLING_UPDATE and rolling is None:
            below = ordinal < start + int((self.sts.get("status") or {}).get("currentReplicas") or 0)
        else:
            below = rolling is not None and ordinal < start + int(rolling.get("partition") or 0)
        if below:
            return identity.new_pod(current_set, current_set["spec"]["template"], ordinal, revisions.current_name)
        return identity.new_pod(update_set, update_set["spec"]["template"], ordinal, revisions.update_name)

    def run_for_all(self, count: int, process: Callable[[int], bool]) -> bool:
        """``runForAll``: in order, stopping at the first that says so (OrderedReady), or in
        slow-start batches (Parallel); True when the sync should end here."""
        if self.monotonic:
            return any(process(index) for index in range(count))
        done, batch = 0, min(count, 1)
        while batch > 0:
            errors = []
            for index in range(done, done + batch):
                try:
                    process(index)
                except SyncError as error:
                    errors.append(error)
            if errors:
                raise errors[0]
            done += batch
            if self.control.creates >= MAX_CREATES_PER_SYNC:  # the rest in the next sync, at once
                self.ctx.enqueue(self.ctx.key)
                return True
            batch = min(2 * batch, count - done, MAX_BATCH_SIZE)
        return False

    def process_replica(self, update_set: Obj, index: int) -> bool:
        """``processReplica``; True: OrderedReady waits here."""
        pod = self.replica(index)
        if identity.is_finished(pod):
            if not identity.is_terminating(pod):
                self.control.delete_pod(pod)
            return True  # the replacement is made once this one is gone
        if not identity.is_created(pod):
            if self.control.claim_is_stale(pod):
                return True
            self.control.create_pod(pod)
            if self.monotonic:
                return True
        if identity.is_pending(pod):
            self.control.create_claims(pod)
            self.control.fix_claims(pod, record_failure=True)
        if self.monotonic and (identity.is_terminating(pod) or not identity.is_running_and_ready(pod)
                               or not identity.is_running_and_available(pod, self.min_ready_s, self.ctx.now)):
            return True
        if not identity.is_created(pod):
            return False
        if (identity.identity_matches(self.sts, pod) and identity.storage_matches(self.sts, pod)
                and self.control.claims_match(pod, update_set)):
            return False
        self.control.update_pod(update_set, pod)
        return False

    def fix_condemned_claims(self, update_set: Obj, index: int) -> bool:
        """The retention policy's owners on a condemned pod's claims (``whenScaled: Delete``:
        the pod, so the claims go with it)."""
        pod = self.condemned[index]
        if not self.control.claims_match(pod, update_set):
            self.control.fix_claims(pod, record_failure=False, sts=update_set)
        return False

    def process_condemned(self, first_unhealthy: Obj | None, index: int) -> bool:
        """``processCondemned``: delete, once every lower ordinal is healthy (OrderedReady)."""
        pod = self.condemned[index]
        if identity.is_terminating(pod):
            return self.monotonic
        healthy = (identity.is_running_and_ready(pod)
                   and identity.is_running_and_available(pod, self.min_ready_s, self.ctx.now))
        if self.monotonic and not healthy and pod is not first_unhealthy:
            return True
        self.control.delete_pod(pod)
        return True

    def rolling_update(self, revisions: Revisions) -> None:
        """The rolling update (MaxUnavailableStatefulSet is alpha, off in 1.33: one at a time)."""
        rolling = (self.spec.get("updateStrategy") or {}).get("rollingUpdate") or {}
        partition = int(rolling.get("partition") or 0)
        for index in range(len(self.replicas) - 1, partition - 1, -1):
            pod = self.replica(index)
            if identity.pod_revision(pod) != revisions.update_name and not identity.is_terminating(pod):
                self.control.delete_pod(pod)
                self.status["currentReplicas"] -= 1
                return
            if not identity.is_healthy(pod):
                return

    # -- status ---------------------------------------------------------------------
    def count(self, *pod_lists: Iterable[Obj | None]) -> None:
        """``updateStatus``: the counts over ``pod_lists`` (planned pods count nowhere)."""
        counts = dict.fromkeys(("replicas", "readyReplicas", "availableReplicas", "currentReplicas",
                                "updatedReplicas"), 0)
        assert self.plan is not None, "counted only during update()"
        revisions = self.plan[2]
        for pods in pod_lists:
            for pod in pods:
                if pod is None:
                    continue
                created = identity.is_created(pod)
                counts["replicas"] += created
                if identity.is_running_and_ready(pod):
                    counts["readyReplicas"] += 1
                    counts["availableReplicas"] += identity.is_running_and_available(pod, self.min_ready_s,
                                                                                     self.ctx.now)
                if created and not identity.is_terminating(pod):
                    counts["currentReplicas"] += identity.pod_revision(pod) == revisions.current_name
                    counts["updatedReplicas"] += identity.pod_revision(pod) == revisions.update_name
        self.status.update(counts)

    def write_status(self, status: Obj) -> bool:
        """``updateStatefulSetStatus``: complete a finished rollout, write what differs.
        False when the write failed."""
        replicas = identity.replicas_of(self.sts)
        if ((self.spec.get("updateStrategy") or {}).get("type") == ROLLING_UPDATE
                and status["updatedReplicas"] == replicas and status["readyReplicas"] == replicas
                and status["replicas"] == replicas):
            status["currentReplicas"] = status["updatedReplicas"]
            status["currentRevision"] = status["updateRevision"]
        old = self.sts.get("status") or {}
        fields = ("replicas", "currentReplicas", "readyReplicas", "updatedReplicas", "currentRevision",
                  "availableReplicas", "updateRevision")
        if (status["observedGeneration"] <= int(old.get("observedGeneration") or 0)
                and all(status[field] == (old.get(field) or type(status[field])()) for field in fields)):
            return True
        try:
            self.ctx.client.update_status(STATEFUL_SETS, dict(self.sts, status=wire_status(status)))
        except ApiError:
            return False
        return True

    def recheck_availability(self, status: Obj) -> None:
        """With minReadySeconds, look again when pods may have turned available: upstream's
        resync after minReadySeconds, and a second after a ready pod's minReadySeconds."""
        if self.min_ready_s <= 0:
            return
        if status["availableReplicas"] != identity.replicas_of(self.sts):
            self.ctx.requeue_after(self.min_ready_s)
        for pod in self.pods:
            if not is_pod_ready(pod) or identity.is_running_and_available(pod, self.min_ready_s, self.ctx.now):
                continue
            since = parse_time((pod_condition(pod, POD_READY) or {}).get("lastTransitionTime"))
            if since is not None:
                self.ctx.enqueue_at(self.ctx.key, since + timedelta(seconds=self.min_ready_s + AVAILABILITY_RECHECK_S))


class ReplicaSlots:
    """The replicas by ordinal index, ``None`` where no pod exists yet — kept sparse: a set of
    2,147,483,647 replicas costs what its pods cost, not a slot per replica."""

    def __init__(self, count: int) -> None:
        self._count = count
        self._pods: dict[int, Obj] = {}

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: int) -> Obj | None:
        return self._pods.get(index)

    def __setitem__(self, index: int, pod: Obj) -> None:
        self._pods[index] = pod

    def __iter__(self) -> Iterator[Obj]:
        """The pods there are (created or planned), in ordinal order."""
        return (self._pods[index] for index in sorted(self._pods))

    @property
    def any_missing(self) -> bool:
        return len(self._pods) < self._count


def first_unhealthy_condemned(replicas: ReplicaSlots, condemned: Sequence[Obj]) -> Obj | None:
    """The condemned pod that is upstream's ``firstUnhealthyPod``: None when a replica (a
    missing one included) is unhealthy first, else the lowest unhealthy condemned ordinal."""
    if replicas.any_missing or any(not identity.is_healthy(pod) for pod in replicas):
        return None
    return next((pod for pod in reversed(condemned) if not identity.is_healthy(pod)), None)


def wire_status(status: Mapping[str, Any]) -> Obj:
    """The status in Go's field order, ``omitempty`` fields left out when empty;
    ``replicas``, ``collisionCount`` (a pointer upstream always sets) and
    ``availableReplicas`` are always written."""
    wire: Obj = {}
    if status["observedGeneration"]:
        wire["observedGeneration"] = status["observedGeneration"]
    wire["replicas"] = status["replicas"]
    for field in ("readyReplicas", "currentReplicas", "updatedReplicas", "currentRevision", "updateRevision"):
        if status[field]:
            wire[field] = status[field]
    wire["collisionCount"] = status["collisionCount"]
    wire["availableReplicas"] = status["availableReplicas"]
    return wire
