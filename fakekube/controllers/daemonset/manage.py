"""The core loop's decision for one node: create a daemon pod, delete some, or nothing.

Upstream's ``podsShouldBeOnNode`` and ``getUnscheduledPodsWithoutNode``
(``pkg/controller/daemon/daemon_controller.go``, 1.33):

* the node should run the pod and has none: create one;
* it may keep running one: a Failed pod is deleted (``FailedDaemonPod`` warning) unless
  the node's failed-pod back-off holds it (the DaemonSet is then looked at again when the
  window ends), a Succeeded pod is deleted (``SucceededDaemonPod``); of the pods left, all
  but the oldest go — or, when surge is allowed, the oldest new and the oldest old pod may
  stay together until the new one is available (or the old one not ready);
* it may not keep one: every daemon pod on it is deleted;
* an unscheduled pod pinned to a node that no longer exists is deleted (PodGC only
  collects bound pods).

Pods being deleted are left alone throughout.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Mapping, NamedTuple, Sequence

from fakekube.clock import parse_time
from fakekube.controllers.daemonset.backoff import FailedPodBackoff
from fakekube.controllers.daemonset.rollout import allows_surge
from fakekube.objects.constants import LABEL_CONTROLLER_REVISION_HASH
from fakekube.objects.pods import PHASE_FAILED, PHASE_SUCCEEDED, is_pod_available, is_pod_ready

Obj = dict[str, Any]

FAILED_DAEMON_POD = "FailedDaemonPod"
SUCCEEDED_DAEMON_POD = "SucceededDaemonPod"
WARNING = "Warning"
NORMAL = "Normal"


class NodePlan:
    """What the core loop does on one node; ``events`` are (type, reason, message) about
    the DaemonSet; ``retry_after_s`` asks for a look after a failed pod's back-off."""

    __slots__ = ("create", "delete", "events", "retry_after_s")

    def __init__(self, create: bool = False, delete: list[str] | None = None,
                 events: list[tuple[str, str, str]] | None = None, retry_after_s: float | None = None) -> None:
        self.create = create
        self.delete: list[str] = [] if delete is None else delete
        self.events: list[tuple[str, str, str]] = [] if events is None else events
        self.retry_after_s = retry_after_s


def _never() -> datetime:
    return datetime.max


def creation_order(pods: Sequence[Obj]) -> list[Obj]:
    """``podByCreationTimestampAndPhase``: bound pods first, then oldest, then by name."""
    if len(pods) < 2:
        return list(pods)  # the usual node: one pod, nothing to parse
    def key(pod: Obj) -> tuple[bool, datetime, str]:
        meta = pod.get("metadata") or {}
        created = parse_time(meta.get("creationTimestamp")) or _never()
        return not (pod.get("spec") or {}).get("nodeName"), created.replace(tzinfo=None), meta.get("name") or ""
    return sorted(pods, key=key)


class NodeFacts(NamedTuple):
    """One node's situation: what the placement says and the daemon pods pinned to it."""

    node: str
    should_run: bool
    should_continue_running: bool
    pods: Sequence[Obj]


def plan_node(facts: NodeFacts, ds: Mapping[str, Any], hash_: str, backoff: FailedPodBackoff,
              now: datetime) -> NodePlan:
    """``podsShouldBeOnNode`` (the back-off is updated as upstream's is)."""
    plan = NodePlan()
    if facts.should_run and not facts.pods:
        plan.create = True
    elif facts.should_continue_running:
        running = _handle_finished(facts, ds, backoff, now, plan)
        if not allows_surge(ds):
            plan.delete += [p["metadata"]["name"] for p in creation_order(running)[1:]]
        elif not running:
            plan.create = facts.should_run  # surging: keep one live pod on the node
        else:
            plan.delete += _surge_excess(running, ds, hash_, now)
    elif facts.pods:
        plan.delete += [p["metadata"]["name"] for p in facts.pods if not p["metadata"].get("deletionTimestamp")]
    return plan


def _handle_finished(facts: NodeFacts, ds: Mapping[str, Any], backoff: FailedPodBackoff, now: datetime,
                     plan: NodePlan) -> list[Obj]:
    """Delete Failed (with back-off) and Succeeded pods; returns the pods still running."""
    meta = ds["metadata"]
    running: list[Obj] = []
    for pod in facts.pods:
        pod_meta = pod["metadata"]
        if pod_meta.get("deletionTimestamp"):
            continue
        phase = (pod.get("status") or {}).get("phase")
        where = f"{pod_meta['namespace']}/{pod_meta['name']} on node {facts.node}"
        if phase == PHASE_FAILED:
            key = f"{meta.get('uid')}/{(ds.get('status') or {}).get('observedGeneration') or 0}/{facts.node}"
            if backoff.in_backoff(key, now):
                plan.retry_after_s = backoff.delay_s(key)
                continue
            backoff.next(key, now)
            plan.events.append((WARNING, FAILED_DAEMON_POD, f"Found failed daemon pod {where}, will try to kill it"))
            plan.delete.append(pod_meta["name"])
        elif phase == PHASE_SUCCEEDED:
            plan.events.append((NORMAL, SUCCEEDED_DAEMON_POD,
                                f"Found succeeded daemon pod {where}, will try to delete it"))
            plan.delete.append(pod_meta["name"])
        else:
            running.append(pod)
    return running


def _surge_excess(running: Sequence[Obj], ds: Mapping[str, Any], hash_: str, now: datetime) -> list[str]:
    """With surge: keep the oldest new and the oldest old pod; the old one goes once the new
    one is available (or at once if the old one is not ready)."""
    doomed: list[str] = []
    oldest_new = oldest_old = None
    for pod in creation_order(running):
        current = ((pod["metadata"].get("labels") or {}).get(LABEL_CONTROLLER_REVISION_HASH) == hash_)
        if current and oldest_new is None:
            oldest_new = pod
        elif not current and oldest_old is None:
            oldest_old = pod
        else:
            doomed.append(pod["metadata"]["name"])
    if oldest_new is not None and oldest_old is not None:
        min_ready_s = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
        if not is_pod_ready(oldest_old) or is_pod_available(oldest_new, min_ready_s, now):
            doomed.append(oldest_old["metadata"]["name"])
    return doomed


def unscheduled_without_node(node_pods: Mapping[str, Sequence[Obj]], nodes: set[str]) -> list[str]:
    """``getUnscheduledPodsWithoutNode``: unbound pods pinned to nodes that do not exist."""
    return [pod["metadata"]["name"]
            for node in sorted(node_pods) if node not in nodes
            for pod in node_pods[node] if not (pod.get("spec") or {}).get("nodeName")]
