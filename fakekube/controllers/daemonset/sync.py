"""One sync of one DaemonSet, in upstream's order (``syncDaemonSet``, 1.33):

1. history: claim the ControllerRevisions, find or create the current one (its hash labels
   new pods), renumber it, drop duplicates;
2. the core loop (``manage``): per node, create or delete daemon pods (:mod:`.manage`),
   creates in slow-start batches, at most ``burstReplicas`` creates and deletes per sync;
3. the rolling update (:mod:`.rollout`) when the core loop wrote nothing this sync (upstream
   waits for its expectations, i.e. for its own writes to come back, before it rolls);
4. history clean-up beyond ``revisionHistoryLimit``;
5. status (:mod:`.status`), written only when a count or the observed generation changed.

A failed write does not stop the sync's status; the DaemonSet is retried with the rate
limiter's back-off, as upstream's work queue does.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Callable, Iterator, Mapping, Sequence

from fakekube.api.machinery.errors import ApiError
from fakekube.controllers.daemonset import history
from fakekube.controllers.daemonset.backoff import FailedPodBackoff
from fakekube.controllers.daemonset.claim import Claim
from fakekube.controllers.daemonset.manage import NodeFacts, plan_node, unscheduled_without_node
from fakekube.controllers.daemonset.placement import Placement, daemon_pod_tolerations, pinned_affinity, target_node_name
from fakekube.controllers.daemonset.rollout import ROLLING_UPDATE, RolloutInput, plan_rolling_update
from fakekube.controllers.daemonset.status import count, new_status, status_unchanged
from fakekube.engine import Context
from fakekube.engine.client import MERGE_PATCH
from fakekube.objects._json import deep_copy
from fakekube.objects.constants import (
    ANNOTATION_DAEMONSET_TEMPLATE_GENERATION,
    LABEL_CONTROLLER_REVISION_HASH,
    LABEL_DAEMONSET_TEMPLATE_GENERATION,
)
from fakekube.objects.indexes import ORPHANS_BY_NAMESPACE
from fakekube.objects.kinds import CONTROLLER_REVISIONS, DAEMON_SETS, NODES, PODS, Resource
from fakekube.objects.labels import compile_selector
from fakekube.objects.owners import owner_reference
from fakekube.objects.pods import is_pod_terminal
from fakekube.objects.slowstart import SLOW_START_INITIAL_BATCH_SIZE, slow_start_batch
from fakekube.objects.templatehash import compute_hash

Obj = dict[str, Any]

COMPONENT = "daemonset-controller"
#: ``daemon.BurstReplicas``: the most pods one sync creates, and the most it deletes.
BURST_REPLICAS = 250
#: The longest generateName prefix (a pod name is a DNS subdomain).
MAX_PREFIX_CHARS = 253
NAMESPACE_TERMINATING_CAUSE = "NamespaceTerminating"
DEFAULT_REVISION_HISTORY_LIMIT = 10


class DaemonSetSync:
    """The state of one sync: the DaemonSet as read at its start, fresh reads for the rest."""

    def __init__(self, ds: Obj, ctx: Context, backoff: FailedPodBackoff) -> None:
        self.ds = ds
        self.ctx = ctx
        self.backoff = backoff
        self.meta: Obj = ds["metadata"]
        self.namespace: str = self.meta["namespace"]
        selector = compile_selector((ds.get("spec") or {}).get("selector"))
        self.claim = Claim(ds, selector, ctx)
        self.placement = Placement(ds)
        self.nodes = ctx.list(NODES)
        self.placements = {node["metadata"]["name"]: self.placement.should_run(node) for node in self.nodes}
        self.template_generation = _template_generation(ds)
        self.errors: list[ApiError] = []
        #: Whether this sync created or deleted pods (upstream's unsatisfied expectations).
        self.wrote = False
        self._node_pods: tuple[tuple[int, bool], dict[str, list[Obj]]] | None = None

    def run(self) -> None:
        hash_, old = self.construct_history()
        if self.manage(hash_):
            if not self.wrote and _strategy(self.ds) == ROLLING_UPDATE:
                self.rolling_update(hash_)
            self.cleanup_history(old)
        self.update_status(hash_)
        self.errors += self.claim.errors
        if self.errors:
            self.ctx.requeue_rate_limited()

    # -- pods ---------------------------------------------------------------------
    def candidates(self, resource: Resource) -> list[Obj]:
        """What the DaemonSet may own: objects referencing it and its namespace's orphans."""
        found = {obj["metadata"]["name"]: obj for obj in self.ctx.owned_by(resource, self.meta["uid"])
                 if obj["metadata"].get("namespace") == self.namespace}
        for obj in self.ctx.by_index(resource, ORPHANS_BY_NAMESPACE, self.namespace):
            found.setdefault(obj["metadata"]["name"], obj)
        return [found[name] for name in sorted(found)]

    def node_pods(self, include_deleted_terminal: bool = False) -> dict[str, list[Obj]]:
        """``getNodesToDaemonPods``: the claimed pods by the node they are bound or pinned to.

        Upstream claims afresh at each step of a sync; a step that follows another with no
        write in between (the store's resourceVersion unchanged) reuses its answer."""
        cache_key = (self.ctx.resource_version, include_deleted_terminal)
        if self._node_pods is not None and self._node_pods[0] == cache_key:
            return {node: list(pods) for node, pods in self._node_pods[1].items()}
        result = self._claim_node_pods(include_deleted_terminal)
        self._node_pods = ((self.ctx.resource_version, include_deleted_terminal), result)
        return {node: list(pods) for node, pods in result.items()}

    def _claim_node_pods(self, include_deleted_terminal: bool) -> dict[str, list[Obj]]:
        result: dict[str, list[Obj]] = {}
        for pod in self.claim.claim(PODS, self.candidates(PODS)):
            if not include_deleted_terminal and is_pod_terminal(pod) and pod["metadata"].get("deletionTimestamp"):
                continue  # the kubelet or PodGC removes it; nothing left to do here
            node = target_node_name(pod)
            if node is not None:
                result.setdefault(node, []).append(pod)
        return result

    def manage(self, hash_: str) -> bool:
        """The core loop; False when a write failed (the rolling update then waits)."""
        node_pods = self.node_pods()
        creates: list[str] = []
        deletes: list[str] = []
        for node in self.nodes:
            name = node["metadata"]["name"]
            should_run, keep_running = self.placements[name]
            plan = plan_node(NodeFacts(name, should_run, keep_running, node_pods.get(name, [])), self.ds, hash_,
                             self.backoff, self.ctx.now)
            for event_type, reason, message in plan.events:
                self.event(event_type, reason, message)
            if plan.retry_after_s is not None:
                self.ctx.requeue_after(plan.retry_after_s)
            creates += [name] if plan.create else []
            deletes += plan.delete
        deletes += unscheduled_without_node(node_pods, set(self.placements))
        errors_before = len(self.errors)
        self.sync_nodes(deletes, creates, hash_)
        return len(self.errors) == errors_before

    def sync_nodes(self, deletes: Sequence[str], creates: Sequence[str], hash_: str) -> None:
        """``syncNodes``: create on ``creates`` (slow start), then delete ``deletes``."""
        template = self.pod_template(hash_)
        nodes: Iterator[str] = iter(creates[:BURST_REPLICAS])
        _, error = slow_start_batch(min(len(creates), BURST_REPLICAS), SLOW_START_INITIAL_BATCH_SIZE,
                                    lambda: self.create_pod(template, next(nodes)))
        if error is not None:
            self.errors.append(error)
        for name in deletes[:BURST_REPLICAS]:
            self.delete_pod(name)

    def pod_template(self, hash_: str) -> Obj:
        """``CreatePodTemplate``: the template with the daemon tolerations, the template
        generation and the revision hash labels."""
        template: Obj = deep_copy((self.ds.get("spec") or {}).get("template") or {})
        spec = template.setdefault("spec", {})
        spec["tolerations"] = daemon_pod_tolerations(spec)
        labels = template.setdefault("metadata", {}).get("labels") or {}
        if self.template_generation is not None:
            labels = {**labels, LABEL_DAEMONSET_TEMPLATE_GENERATION: str(self.template_generation)}
        if hash_:
            labels = {**labels, LABEL_CONTROLLER_REVISION_HASH: hash_}
        template["metadata"]["labels"] = labels
        return template

    def create_pod(self, template: Mapping[str, Any], node: str) -> ApiError | None:
        """One create (``RealPodControl.CreatePods``), pinned to ``node``; the error, if any."""
        try:
            pod = self.ctx.client.create(PODS, self.pod_for(template, node))
        except ApiError as error:
            if _namespace_terminating(error):
                return None
            self.event("Warning", "FailedCreate", f"Error creating: {error.message}")
            return error
        self.wrote = True
        self.event("Normal", "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}")
        return None

    def pod_for(self, template: Mapping[str, Any], node: str) -> Obj:
        """``GetPodFromTemplate`` with the node pinned by ``ReplaceDaemonSetPodNodeNameNodeAffinity``."""
        name = self.meta["name"]
        template_meta = template.get("metadata") or {}
        meta: Obj = {"generateName": f"{name}-" if len(name) < MAX_PREFIX_CHARS else name,
                     "namespace": self.namespace}
        for field in ("labels", "annotations"):
            if template_meta.get(field):
                meta[field] = dict(template_meta[field])
        meta["ownerReferences"] = [owner_reference(self.ds, history.DS_API_VERSION, history.DS_KIND)]
        if template_meta.get("finalizers"):
            meta["finalizers"] = list(template_meta["finalizers"])
        spec = deep_copy(template.get("spec") or {})
        spec["affinity"] = pinned_affinity(spec.get("affinity"), node)
        return {"metadata": meta, "spec": spec}

    def delete_pod(self, name: str) -> None:
        """``RealPodControl.DeletePod`` (gone already is fine, and says nothing)."""
        try:
            self.ctx.client.delete(PODS, name, self.namespace)
        except ApiError as error:
            if error.code != 404:
                self.event("Warning", "FailedDelete", f"Error deleting: {error.message}")
                self.errors.append(error)
            return
        self.wrote = True
        self.event("Normal", "SuccessfulDelete", f"Deleted pod: {name}")

    def rolling_update(self, hash_: str) -> None:
        node_pods = self.node_pods()
        desired = 0
        for name, (should_run, _) in self.placements.items():
            if should_run:
                desired += 1
                node_pods.setdefault(name, [])
        should_run_on: Callable[[str], bool] = lambda node: self.placements.get(node, (False, False))[0]
        plan = plan_rolling_update(RolloutInput(self.ds, node_pods, hash_, self.template_generation, self.ctx.now,
                                                desired, should_run_on))
        self.sync_nodes(plan.delete, plan.create, hash_)

    # -- history ------------------------------------------------------------------
    def construct_history(self) -> tuple[str, list[Obj]]:
        """``constructHistory``: (the current revision's hash, the old revisions)."""
        revisions = [self.labelled(r) for r in self.claim.claim(CONTROLLER_REVISIONS, self.candidates(CONTROLLER_REVISIONS))]
        current, old = history.split_current(self.ds, revisions)
        number = max((history.revision_number(r) for r in old), default=0) + 1
        if not current:
            cur = self.snapshot(number)
        else:
            cur = self.dedup(current)
            if history.revision_number(cur) < number:
                self.ctx.client.update(CONTROLLER_REVISIONS, dict(cur, revision=number))
        return history.revision_hash(cur), old

    def labelled(self, revision: Obj) -> Obj:
        """A revision without the hash label gets its name as the label (older controllers)."""
        labels = revision["metadata"].get("labels") or {}
        if LABEL_CONTROLLER_REVISION_HASH in labels:
            return revision
        meta = dict(revision["metadata"], labels={**labels, LABEL_CONTROLLER_REVISION_HASH: revision["metadata"]["name"]})
        return self.ctx.client.update(CONTROLLER_REVISIONS, dict(revision, metadata=meta))

    def snapshot(self, number: int) -> Obj:
        """``snapshot``: create the revision of the current template (a name taken by another
        template bumps ``collisionCount`` and fails this sync, so the next one hashes anew)."""
        collision_count = (self.ds.get("status") or {}).get("collisionCount")
        hash_ = compute_hash((self.ds.get("spec") or {}).get("template"), collision_count)
        revision = history.new_revision(self.ds, hash_, number)
        try:
            return self.ctx.client.create(CONTROLLER_REVISIONS, revision)
        except ApiError as error:
            if error.code != 409:
                raise
            existing = self.ctx.get(CONTROLLER_REVISIONS, revision["metadata"]["name"], self.namespace)
            if existing is not None and history.matches(self.ds, existing):
                return existing
            self.bump_collision_count(collision_count)
            raise

    def bump_collision_count(self, seen: int | None) -> None:
        fresh = self.ctx.get(DAEMON_SETS, self.meta["name"], self.namespace)
        if fresh is None or (fresh.get("status") or {}).get("collisionCount") != seen:
            return  # a stale count: the next sync hashes with the current one
        status = dict(fresh.get("status") or {}, collisionCount=(seen or 0) + 1)
        self.ctx.client.update_status(DAEMON_SETS, dict(fresh, status=status))

    def dedup(self, current: Sequence[Obj]) -> Obj:
        """``dedupCurHistories``: keep the newest of several current revisions, relabel the
        pods to its hash, delete the others."""
        keep = history.newest(current)
        if len(current) == 1:
            return keep
        keep_hash = history.revision_hash(keep)
        for pod in self.claim.claim(PODS, self.candidates(PODS)):
            if (pod["metadata"].get("labels") or {}).get(LABEL_CONTROLLER_REVISION_HASH) != keep_hash:
                patch = {"metadata": {"labels": {LABEL_CONTROLLER_REVISION_HASH: keep_hash}}}
                self.ctx.client.patch(PODS, pod["metadata"]["name"], patch, self.namespace, MERGE_PATCH)
        for revision in current:
            if revision["metadata"]["name"] != keep["metadata"]["name"]:
                self.ctx.client.delete(CONTROLLER_REVISIONS, revision["metadata"]["name"], self.namespace)
        return keep

    def cleanup_history(self, old: Sequence[Obj]) -> None:
        """``cleanupHistory``: the oldest unused revisions beyond the limit go."""
        limit = (self.ds.get("spec") or {}).get("revisionHistoryLimit")
        limit = DEFAULT_REVISION_HISTORY_LIMIT if limit is None else int(limit)
        if len(old) <= limit:
            return
        live = {(pod["metadata"].get("labels") or {}).get(LABEL_CONTROLLER_REVISION_HASH) or ""
                for pods in self.node_pods(include_deleted_terminal=True).values() for pod in pods}
        for revision in history.revisions_to_delete(old, live - {""}, limit):
            try:
                self.ctx.client.delete(CONTROLLER_REVISIONS, revision["metadata"]["name"], self.namespace)
            except ApiError as error:
                self.errors.append(error)
                return

    # -- status -------------------------------------------------------------------
    def update_status(self, hash_: str) -> None:
        """``updateDaemonSetStatus``; with minReadySeconds, a look when the next ready pod
        turns available (upstream's resync after minReadySeconds, and the second it adds
        after a pod turns ready)."""
        node_pods = self.node_pods()
        facts = [(name, should_run, node_pods.get(name, [])) for name, (should_run, _) in self.placements.items()]
        min_ready_s = int((self.ds.get("spec") or {}).get("minReadySeconds") or 0)
        counts = count(facts, min_ready_s, hash_, self.template_generation, self.ctx.now)
        if not status_unchanged(self.ds, counts):
            fresh = self.ctx.get(DAEMON_SETS, self.meta["name"], self.namespace)
            if fresh is None or fresh["metadata"].get("uid") != self.meta.get("uid"):
                return
            status = new_status(dict(fresh, metadata=self.meta), counts, observe_generation=True)
            try:
                self.ctx.client.update_status(DAEMON_SETS, dict(fresh, status=status))
            except ApiError as error:
                self.errors.append(error)
        if min_ready_s > 0 and counts.numberReady != counts.numberAvailable:
            self.ctx.requeue_after(min_ready_s)
            if counts.next_available_at is not None:
                self.ctx.enqueue_at(self.ctx.key, counts.next_available_at + timedelta(seconds=1))

    def event(self, event_type: str, reason: str, message: str) -> None:
        self.ctx.record_event(self.ds, history.DS_KIND, event_type, reason, message, COMPONENT,
                              history.DS_API_VERSION)


def _strategy(ds: Mapping[str, Any]) -> str:
    return str(((ds.get("spec") or {}).get("updateStrategy") or {}).get("type") or "")


def _template_generation(ds: Mapping[str, Any]) -> int | None:
    """``GetTemplateGeneration``: the annotation as a number, None when absent or unparsable."""
    value = ((ds.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION_DAEMONSET_TEMPLATE_GENERATION)
    try:
        return int(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _namespace_terminating(error: ApiError) -> bool:
    causes = (error.details or {}).get("causes") or []
    return any(cause.get("reason") == NAMESPACE_TERMINATING_CAUSE for cause in causes)
