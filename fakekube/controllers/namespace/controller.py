"""The namespace controller: a deleted namespace is emptied, then finalized and gone
(kube-controller-manager 1.33's ``namespace-controller``, pkg/controller/namespace).

Upstream's timing, on the virtual clock:

* every add or update of a namespace with a deletionTimestamp queues it 5 s later
  (``namespaceDeletionGracePeriod``), and so does the resync every 5 minutes
  (``--namespace-sync-period``); one timer per namespace, the earliest wins;
* a pass (:func:`~fakekube.controllers.namespace.deleter.delete_all_content`) writes the
  five deletion conditions when they change; content still going after it (pods in their
  grace period, objects held by finalizers) brings the namespace back
  ``estimate / 2 + 1`` seconds later; a failure retries with the controller's own limiter
  (5 ms doubling, at most 60 s: ``nsControllerRateLimiter``);
* an empty namespace loses the ``kubernetes`` finalizer through ``namespaces/finalize``,
  which removes it.

The controller does not watch the content itself (nor does upstream's): a finalizer
removed at 00:00:20 ends a namespace at its next pass.
"""

from __future__ import annotations

from typing import Any, Iterable, NamedTuple, Sequence

from fakekube.api.machinery.errors import ApiError
from fakekube.api.registry import FINALIZE
from fakekube.clock import format_rfc3339
from fakekube.controllers.namespace.deleter import Pass, delete_all_content
from fakekube.engine import Context
from fakekube.engine.ratelimit import ControllerRateLimiter, RateLimits
from fakekube.objects import Resource
from fakekube.objects.kinds import NAMESPACES, APIResource
from fakekube.objects.versions import Release
from fakekube.store import DELETED, Change

Obj = dict[str, Any]

NAME = "namespace-controller"
#: The finalizer this controller owns in ``spec.finalizers``.
FINALIZER = "kubernetes"
TERMINATING = "Terminating"
#: Work keys that are not namespace names (those are DNS labels: no "/" or "~").
EVENT = "event/"
RESYNC = "~resync"


class NamespaceConfig(NamedTuple):
    """kube-controller-manager's namespace controller settings (upstream's defaults)."""

    #: ``namespaceDeletionGracePeriod``: an observed change is processed this much later.
    deletion_grace_period_s: float = 5.0
    #: ``--namespace-sync-period``: every namespace is looked at again this often.
    sync_period_s: float = 300.0
    #: OrderedNamespaceDeletion (on in every supported release): pods go before anything else.
    ordered_deletion: bool = True
    #: ``nsControllerRateLimiter``: failures retry after 5 ms doubling, at most 60 s.
    max_retry_delay_s: float = 60.0

    @classmethod
    def for_release(cls, release: Release) -> "NamespaceConfig":
        """Upstream's defaults in ``release``: its OrderedNamespaceDeletion gate."""
        return cls(ordered_deletion=release.enabled("OrderedNamespaceDeletion"))


class NamespaceController:
    """Empties terminating namespaces and removes them."""

    name = NAME
    resources = (NAMESPACES,)

    def __init__(self, served: Sequence[APIResource], config: NamespaceConfig = NamespaceConfig()) -> None:
        """``served``: every stored resource (discovery); its namespaced deletable ones are content."""
        self.config = config
        self.served_changed(served)
        self.periodic = ((RESYNC, config.sync_period_s),)
        #: Failing namespaces' retry counts (one per namespace failing now; bounded by the
        #: limiter's MAX_TRACKED_KEYS, past which the oldest count is forgotten).
        self._limiter = ControllerRateLimiter(RateLimits(max_delay_s=config.max_retry_delay_s))

    def served_changed(self, served: Sequence[APIResource]) -> None:
        """The served resources changed (a CRD came or went): a namespace's content is every
        namespaced deletable resource served now, one version each."""
        content: dict[Resource, APIResource] = {}
        for r in served:
            if r.namespaced and r.supports("delete"):
                content.setdefault(r.resource, r)
        self._content = tuple(content.values())

    def keys_for(self, change: Change) -> Iterable[str]:
        """A namespace being deleted (upstream's Add/Update handlers: ``enqueueNamespace``)."""
        if change.type == DELETED or not (change.obj.get("metadata") or {}).get("deletionTimestamp"):
            return ()
        return (EVENT + change.name,)

    def reconcile(self, key: str, ctx: Context) -> None:
        if key == RESYNC:
            for namespace in ctx.list(NAMESPACES):
                if namespace["metadata"].get("deletionTimestamp"):
                    ctx.enqueue_after(namespace["metadata"]["name"], self.config.deletion_grace_period_s)
        elif key.startswith(EVENT):
            ctx.enqueue_after(key[len(EVENT):], self.config.deletion_grace_period_s)
        else:
            self._sync(key, ctx)

    def _sync(self, name: str, ctx: Context) -> None:
        """``namespacedResourcesDeleter.Delete`` and the worker's requeue rules."""
        namespace = ctx.get(NAMESPACES, name)
        if namespace is None or not namespace["metadata"].get("deletionTimestamp"):
            self._limiter.forget(name)
            return
        if (namespace.get("status") or {}).get("phase") != TERMINATING:
            namespace = ctx.client.update_status(
                NAMESPACES, dict(namespace, status=dict(namespace.get("status") or {}, phase=TERMINATING)))
        if not (namespace.get("spec") or {}).get("finalizers"):
            self._limiter.forget(name)
            return
        result = delete_all_content(namespace, self._content, self.config.ordered_deletion, ctx)
        self._write_conditions(name, result, ctx)
        if result.errors:
            ctx.requeue_after(self._limiter.when(name, ctx.now.timestamp()))
        elif result.estimate_s > 0:
            ctx.requeue_after(result.estimate_s // 2 + 1)
        else:
            self._finalize(name, ctx)
            self._limiter.forget(name)

    def _write_conditions(self, name: str, result: Pass, ctx: Context) -> None:
        """The pass's conditions, written only when they change (a failed write is dropped,
        as upstream only logs it)."""
        namespace = ctx.get(NAMESPACES, name)
        if namespace is None:
            return
        status = namespace.get("status") or {}
        conditions = result.conditions.conditions(list(status.get("conditions") or []), format_rfc3339(ctx.now))
        if conditions is None:
            return
        try:
            ctx.client.update_status(NAMESPACES, dict(namespace, status=dict(status, conditions=conditions)))
        except ApiError:
            pass

    def _finalize(self, name: str, ctx: Context) -> None:
        """``finalizeNamespace``: ``spec.finalizers`` without ours (a sorted set), through
        ``namespaces/finalize``; with none left the apiserver removes the namespace."""
        namespace = ctx.get(NAMESPACES, name)
        if namespace is None:
            return
        spec = namespace.get("spec") or {}
        rest = sorted({f for f in spec.get("finalizers") or [] if f != FINALIZER})
        try:
            ctx.client.update(NAMESPACES, dict(namespace, spec=dict(spec, finalizers=rest)), subresource=FINALIZE)
        except ApiError as err:
            if err.code != 404:  # removed meanwhile: nothing left to do
                raise
