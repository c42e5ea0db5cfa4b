"""The DaemonSet controller on the engine: which changes wake which DaemonSet.

Upstream's informer handlers (``pkg/controller/daemon/daemon_controller.go``, 1.33), as
pure ``keys_for``:

* a DaemonSet change syncs it;
* a pod change syncs the DaemonSet that controls it (and the previous controller when the
  reference changed); an orphan pod that appears, or whose labels or controller changed,
  wakes the DaemonSets of its namespace that select it (``orphan-pod:`` keys);
* ControllerRevisions alike, except that a new controlled revision wakes nobody (the
  DaemonSet made it);
* a node that appears, or whose labels or taints changed (not its status heartbeats),
  wakes every DaemonSet (one ``nodes`` key however many nodes changed at an instant);
  a deleted node wakes nobody: PodGC removes its pods, and their deletion does.

Each DaemonSet sync is :class:`~fakekube.controllers.daemonset.sync.DaemonSetSync`.
Memory: the failed-pod back-off (bounded, :mod:`.backoff`); nothing else is kept.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from fakekube.controllers.daemonset.backoff import FailedPodBackoff
from fakekube.controllers.daemonset.history import DS_KIND
from fakekube.controllers.daemonset.sync import COMPONENT, DaemonSetSync
from fakekube.engine import Context
from fakekube.objects.indexes import ORPHANS_BY_NAMESPACE, orphan_namespace
from fakekube.objects.kinds import CONTROLLER_REVISIONS, DAEMON_SETS, NODES, PODS, Resource
from fakekube.objects.labels import compile_selector
from fakekube.objects.owners import controller_of
from fakekube.store import ADDED, DELETED, MODIFIED, Change

Obj = dict[str, Any]

NODES_KEY = "nodes"
ORPHAN_POD = "orphan-pod:"
ORPHAN_REVISION = "orphan-revision:"
#: kube-controller-manager's SelectingAll warning, for a DaemonSet whose selector is ``{}``.
SELECTING_ALL = "This daemon set is selecting all pods. A non-empty selector is required."


class DaemonSetController:
    """kube-controller-manager's daemonset controller."""

    name = "daemonset-controller"
    resources = (DAEMON_SETS, PODS, CONTROLLER_REVISIONS, NODES)
    #: A node heartbeat keeps its labels and taints: no key (engine/routing.py).
    keyless_heartbeats = True
    indexes = ((PODS, ORPHANS_BY_NAMESPACE, orphan_namespace),
               (CONTROLLER_REVISIONS, ORPHANS_BY_NAMESPACE, orphan_namespace))

    def __init__(self, backoff: FailedPodBackoff | None = None) -> None:
        self.backoff = backoff or FailedPodBackoff()

    # -- routing (pure) -----------------------------------------------------------
    def keys_for(self, change: Change) -> Iterable[str]:
        resource = (change.group, change.resource)
        if resource == DAEMON_SETS:
            return [f"{change.namespace}/{change.name}"]
        if resource == NODES:
            return [NODES_KEY] if _node_placement_changed(change) else []
        if resource == PODS:
            return _owned_keys(change, ORPHAN_POD, wake_on_add=True)
        return _owned_keys(change, ORPHAN_REVISION, wake_on_add=False)

    # -- work ---------------------------------------------------------------------
    def reconcile(self, key: str, ctx: Context) -> None:
        if key == NODES_KEY:
            for ds in ctx.list(DAEMON_SETS):
                ctx.enqueue(f"{ds['metadata']['namespace']}/{ds['metadata']['name']}")
        elif key.startswith(ORPHAN_POD):
            self._wake_selecting(PODS, key[len(ORPHAN_POD):], ctx)
        elif key.startswith(ORPHAN_REVISION):
            self._wake_selecting(CONTROLLER_REVISIONS, key[len(ORPHAN_REVISION):], ctx)
        else:
            namespace, _, name = key.partition("/")
            self._sync(namespace, name, ctx)

    def _wake_selecting(self, resource: Resource, ref: str, ctx: Context) -> None:
        """``GetPodDaemonSets`` / ``GetHistoryDaemonSets``: an orphan wakes the DaemonSets
        of its namespace whose (non-empty) selector selects it."""
        namespace, _, name = ref.partition("/")
        obj = ctx.get(resource, name, namespace)
        if obj is None or controller_of(obj) is not None:
            return
        labels = (obj.get("metadata") or {}).get("labels")
        for ds in ctx.list(DAEMON_SETS, namespace):
            try:
                selector = compile_selector((ds.get("spec") or {}).get("selector"))
            except ValueError:
                continue
            if not selector.everything and selector.matches(labels):
                ctx.enqueue(f"{namespace}/{ds['metadata']['name']}")

    def _sync(self, namespace: str, name: str, ctx: Context) -> None:
        ds = ctx.get(DAEMON_SETS, name, namespace)
        if ds is None:
            return
        self.backoff.gc(ctx.now)
        if (ds.get("spec") or {}).get("selector") == {}:
            ctx.record_event(ds, DS_KIND, "Warning", "SelectingAll", SELECTING_ALL, COMPONENT, "apps/v1")
            return
        if ds["metadata"].get("deletionTimestamp"):
            return  # its revisions may be going: no status can be trusted (upstream)
        DaemonSetSync(ds, ctx, self.backoff).run()


def _labels(obj: Mapping[str, Any] | None) -> Any:
    return ((obj or {}).get("metadata") or {}).get("labels")


def _node_placement_changed(change: Change) -> bool:
    """``addNode`` / ``shouldIgnoreNodeUpdate``: a new node, or new labels or taints."""
    if change.type == ADDED:
        return True
    if change.type != MODIFIED or change.prev is None:
        return False
    taints = ((change.obj.get("spec") or {}).get("taints"), (change.prev.get("spec") or {}).get("taints"))
    return _labels(change.obj) != _labels(change.prev) or taints[0] != taints[1]


def _daemonset_ref(obj: Mapping[str, Any] | None) -> Obj | None:
    ref = controller_of(obj) if obj is not None else None
    return ref if ref is not None and ref.get("kind") == DS_KIND else None


def _owned_keys(change: Change, orphan_prefix: str, wake_on_add: bool) -> list[str]:
    """The DaemonSets a pod's (or revision's) change concerns, as upstream's handlers pick them."""
    obj, prev = change.obj, change.prev
    keys: list[str] = []
    ref, prev_ref = controller_of(obj), controller_of(prev) if prev is not None else None
    moved = change.type == MODIFIED and ref != prev_ref
    if moved and _daemonset_ref(prev) is not None:
        keys.append(f"{change.namespace}/{prev_ref['name']}")  # type: ignore[index]
    deleting = change.type == DELETED or bool(obj["metadata"].get("deletionTimestamp"))
    if _daemonset_ref(obj) is not None:
        if change.type != ADDED or wake_on_add or deleting:
            keys.append(f"{change.namespace}/{ref['name']}")  # type: ignore[index]
    elif ref is None and not deleting:
        if change.type == ADDED or moved or _labels(obj) != _labels(prev):
            keys.append(f"{orphan_prefix}{change.namespace}/{change.name}")
    return keys
