"""The ReplicaSet and ReplicationController controllers: keep ``spec.replicas`` pods running.

One implementation for both kinds, as upstream's ``pkg/controller/replicaset`` (1.33) —
an RC is a ReplicaSet whose selector is a label map (:mod:`.workload`). A sync of one
ReplicaSet:

1. lists the namespace's active pods it could own (those it controls, and orphans) and
   claims them: adopts matching orphans, releases pods that stopped matching (:mod:`.claim`);
2. unless the ReplicaSet is being deleted, creates or deletes pods to match
   ``spec.replicas`` (:mod:`.manage`);
3. writes the status (replicas, fullyLabeledReplicas, readyReplicas, availableReplicas,
   observedGeneration, the ReplicaFailure condition) when it changed (:mod:`.status`);
4. with ``minReadySeconds``, comes back the instant the next ready pod becomes available.

A failed create, delete, adoption or release retries the key with the runtime's
rate-limited back-off (5 ms doubling), as upstream's ``AddRateLimited``.

Upstream's expectations (waiting to observe its own creates and deletes) are not needed:
the runtime's reads are never stale.

Work keys: ``<namespace>/<name>`` for a ReplicaSet; ``pod:<namespace>/<name>`` for an
orphan pod that appeared or changed, which wakes every ReplicaSet of the namespace whose
selector matches it (upstream's ``getPodReplicaSets``). Namespaces and names cannot hold
a colon, so the two never collide.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from fakekube.engine import Context
from fakekube.objects.indexes import ORPHANS_BY_NAMESPACE, orphan_namespace
from fakekube.objects.kinds import PODS
from fakekube.objects.labels import LabelMatcher, compile_selector
from fakekube.objects.owners import controller_of
from fakekube.objects.pods import is_pod_active, is_pod_terminal
from fakekube.store import ADDED, DELETED, Change
from fakekube.controllers.replicaset import claim, manage, status
from fakekube.controllers.replicaset.workload import Workload

Obj = dict[str, Any]

ORPHAN_KEY_PREFIX = "pod:"


class ReplicaSetController:
    """Creates, adopts, releases and deletes pods so each ReplicaSet (or RC) has its replicas."""

    def __init__(self, workload: Workload, terminating_replicas: bool = False) -> None:
        """``terminating_replicas``: report ``status.terminatingReplicas`` (ReplicaSets, with the
        release's DeploymentReplicaSetTerminatingReplicas gate; never ReplicationControllers)."""
        self.workload = workload
        self.terminating_replicas = terminating_replicas
        self.name = workload.controller_name
        self.resources = (workload.resource, PODS)
        self.indexes = ((PODS, ORPHANS_BY_NAMESPACE, orphan_namespace),)

    # -- routing (pure) ------------------------------------------------------------------
    def keys_for(self, change: Change) -> Iterable[str]:
        if change.resource == self.workload.resource.plural and change.group == self.workload.resource.group:
            return [f"{change.namespace}/{change.name}"]
        if change.resource != PODS.plural or change.group != PODS.group:
            return []
        return self._pod_keys(change)

    def _pod_keys(self, change: Change) -> list[str]:
        """Upstream's addPod/updatePod/deletePod: the owner (old and new), or for an orphan
        that appeared or whose labels or owner changed, the orphan key."""
        pod, old = change.obj, change.prev
        keys = []
        ref = controller_of(pod)
        if change.type == ADDED or change.type == DELETED or old is None:
            owned = self._owner_key(pod, ref)
            if owned:
                return [owned]
            if change.type == DELETED or ref is not None or pod["metadata"].get("deletionTimestamp"):
                return []
            return [_orphan_key(pod)]
        old_ref = controller_of(old)
        if old_ref != ref and old_ref is not None:
            keys += [key for key in [self._owner_key(old, old_ref)] if key]
        if ref is not None:
            keys += [key for key in [self._owner_key(pod, ref)] if key]
        elif not pod["metadata"].get("deletionTimestamp") and (
                old_ref != ref or _labels(pod) != _labels(old)):
            keys.append(_orphan_key(pod))
        return keys

    def _owner_key(self, pod: Mapping[str, Any], ref: Mapping[str, Any] | None) -> str | None:
        if ref is None or ref.get("kind") != self.workload.kind or not ref.get("name"):
            return None
        return f"{pod['metadata'].get('namespace') or ''}/{ref['name']}"

    # -- work ----------------------------------------------------------------------------
    def reconcile(self, key: str, ctx: Context) -> None:
        if key.startswith(ORPHAN_KEY_PREFIX):
            self._wake_selecting(key[len(ORPHAN_KEY_PREFIX):], ctx)
            return
        namespace, name = key.split("/", 1)
        rs = ctx.get(self.workload.resource, name, namespace)
        if rs is not None:
            self._sync(key, rs, ctx)

    def _wake_selecting(self, pod_key: str, ctx: Context) -> None:
        """An orphan changed: sync every ReplicaSet of its namespace that selects it."""
        namespace, name = pod_key.split("/", 1)
        pod = ctx.get(PODS, name, namespace)
        if pod is None or controller_of(pod) is not None:
            return
        labels = _labels(pod)
        for rs in ctx.list(self.workload.resource, namespace):
            matcher = _matcher(self.workload, rs)
            if matcher is not None and not matcher.everything and matcher.matches(labels):
                ctx.enqueue(f"{namespace}/{rs['metadata']['name']}")

    def _sync(self, key: str, rs: Obj, ctx: Context) -> None:
        matcher = _matcher(self.workload, rs)
        if matcher is None:
            return  # an invalid selector: upstream logs it and waits for the next change
        claimer = claim.Claim(self.workload, rs, matcher, ctx)
        pods = claimer.claim(self._candidates(rs, ctx))
        if claimer.errors:
            ctx.requeue_rate_limited()
            return
        error = None if rs["metadata"].get("deletionTimestamp") else self._manage(rs, pods, ctx)
        self._write_status(rs, pods, error, ctx, self._terminating(rs, matcher, ctx))
        if error is not None:
            ctx.requeue_rate_limited()
            return
        min_ready_s = int((rs.get("spec") or {}).get("minReadySeconds") or 0)
        when = status.next_availability(pods, min_ready_s, ctx.now)
        if when is not None:
            ctx.enqueue_at(key, when)

    def _candidates(self, rs: Obj, ctx: Context) -> list[Obj]:
        """The namespace's active pods this ReplicaSet could claim, in name order: those
        with an owner reference to it and the orphans (pods another object controls are
        never claimed, so they are not read)."""
        meta = rs["metadata"]
        found = {pod["metadata"]["name"]: pod for pod in ctx.owned_by(PODS, meta["uid"])
                 if pod["metadata"].get("namespace") == meta["namespace"]}
        for pod in ctx.by_index(PODS, ORPHANS_BY_NAMESPACE, meta["namespace"]):
            found.setdefault(pod["metadata"]["name"], pod)
        return [found[name] for name in sorted(found) if is_pod_active(found[name])]

    def _manage(self, rs: Obj, pods: list[Obj], ctx: Context) -> str | None:
        diff = len(pods) - int((rs.get("spec") or {}).get("replicas") or 0)
        if diff < 0:
            return manage.create_pods(self.workload, rs, -diff, ctx)
        if diff > 0:
            count = min(diff, manage.BURST_REPLICAS)
            doomed = manage.pods_to_delete(pods, self._related_pods(rs, ctx), count, ctx)
            return manage.delete_pods(self.workload, rs, doomed, ctx)
        return None

    def _related_pods(self, rs: Obj, ctx: Context) -> list[Obj]:
        """``getIndirectlyRelatedPods``: the pods selected by every ReplicaSet controlled by
        this one's controller (none for a ReplicaSet without one), each pod once."""
        ref = controller_of(rs)
        if ref is None:
            return []
        seen: dict[str, Obj] = {}
        siblings = [other for other in ctx.owned_by(self.workload.resource, ref.get("uid") or "")
                    if (controller_of(other) or {}).get("uid") == ref.get("uid")]
        for sibling in siblings:
            matcher = _matcher(self.workload, sibling)
            if matcher is None:
                continue
            for pod in self._selected(sibling, matcher, ctx):
                seen.setdefault(pod["metadata"].get("uid") or pod["metadata"]["name"], pod)
        return list(seen.values())

    def _selected(self, rs: Obj, matcher: LabelMatcher, ctx: Context) -> list[Obj]:
        """The pods ``rs`` selects among those it owns and the orphans (pods of other
        controllers that match are left out: see docs/controllers.md)."""
        meta = rs["metadata"]
        pods = ctx.owned_by(PODS, meta["uid"]) + ctx.by_index(PODS, ORPHANS_BY_NAMESPACE, meta["namespace"])
        return [pod for pod in pods
                if pod["metadata"].get("namespace") == meta["namespace"] and matcher.matches(_labels(pod))]

    def _terminating(self, rs: Obj, matcher: LabelMatcher, ctx: Context) -> int | None:
        """``FilterTerminatingPods`` of its claimed pods: controlled by ``rs``, selected, being
        deleted and not finished (None when not reported)."""
        if not self.terminating_replicas:
            return None
        meta = rs["metadata"]
        return sum(1 for pod in ctx.owned_by(PODS, meta["uid"])
                   if (controller_of(pod) or {}).get("uid") == meta["uid"] and matcher.matches(_labels(pod))
                   and pod["metadata"].get("deletionTimestamp") and not is_pod_terminal(pod))

    def _write_status(self, rs: Obj, pods: list[Obj], error: str | None, ctx: Context,
                      terminating: int | None = None) -> None:
        new = status.with_observed_generation(rs, status.calculate_status(rs, pods, error, ctx.now, terminating))
        if new is not None:
            ctx.client.update_status(self.workload.resource, dict(rs, status=new))


def _matcher(workload: Workload, rs: Mapping[str, Any]) -> LabelMatcher | None:
    try:
        return compile_selector(workload.selector_of(rs))
    except ValueError:
        return None


def _labels(pod: Mapping[str, Any]) -> Mapping[str, str]:
    return (pod.get("metadata") or {}).get("labels") or {}


def _orphan_key(pod: Mapping[str, Any]) -> str:
    meta = pod.get("metadata") or {}
    return f"{ORPHAN_KEY_PREFIX}{meta.get('namespace') or ''}/{meta.get('name') or ''}"
