"""A deleted CRD's objects go before it does: upstream's CRDFinalizer
(apiextensions-apiserver ``pkg/controller/finalizer/crd_finalizer.go``).

A CRD being deleted that still has the ``customresourcecleanup.apiextensions.k8s.io``
finalizer is marked ``Terminating`` (``InstanceDeletionInProgress``); if it was ever
established every one of its objects is deleted (through the apiserver, so their own
finalizers and the garbage collector are honoured), and once none is left the condition
turns ``InstanceDeletionCompleted`` and the finalizer goes — the CRD is then removed and
its types are no longer served. Objects that linger (finalizers of their own) are looked
at again every 5 s, upstream's poll; upstream gives up after a minute and retries with
back-off, fakekube keeps polling every 5 s.
"""

from __future__ import annotations

from typing import Any, Iterable

from fakekube.api.machinery.errors import ApiError
from fakekube.api.types.apiextensions import CLEANUP_FINALIZER, condition_true, set_condition
from fakekube.clock import format_rfc3339
from fakekube.engine import Context
from fakekube.objects import Resource
from fakekube.objects.kinds import CUSTOM_RESOURCE_DEFINITIONS
from fakekube.store import DELETED, Change

Obj = dict[str, Any]

NAME = "crd-finalizer-controller"
#: Upstream's poll for the last objects to go (``wait.PollImmediate(5*time.Second, ...)``).
POLL_S = 5.0


class CRDFinalizerController:
    """Deletes a deleting CRD's objects, then lets it go."""

    name = NAME
    resources = (CUSTOM_RESOURCE_DEFINITIONS,)

    def keys_for(self, change: Change) -> Iterable[str]:
        if change.type == DELETED or not (change.obj or {}).get("metadata", {}).get("deletionTimestamp"):
            return ()
        return [change.name]

    def reconcile(self, key: str, ctx: Context) -> None:
        crd = ctx.get(CUSTOM_RESOURCE_DEFINITIONS, key)
        meta = (crd or {}).get("metadata") or {}
        if crd is None or not meta.get("deletionTimestamp") or CLEANUP_FINALIZER not in (meta.get("finalizers") or []):
            return
        now = format_rfc3339(ctx.now)
        in_progress = set_condition(crd, "Terminating", "True", "InstanceDeletionInProgress",
                                    "CustomResource deletion is in progress", now)
        if in_progress != crd:
            crd = ctx.client.update_status(CUSTOM_RESOURCE_DEFINITIONS, in_progress)
        if condition_true(crd, "Established"):
            if not self._delete_instances(crd, ctx):
                ctx.requeue_after(POLL_S)
                return
            done = set_condition(crd, "Terminating", "False", "InstanceDeletionCompleted", "removed all instances", now)
        else:
            done = set_condition(crd, "Terminating", "False", "NeverEstablished", "resource was never established", now)
        meta = dict(done["metadata"], finalizers=[f for f in meta.get("finalizers") or [] if f != CLEANUP_FINALIZER])
        try:  # the CRD's status strategy writes metadata too: the finalizer goes with the condition
            ctx.client.update_status(CUSTOM_RESOURCE_DEFINITIONS, dict(done, metadata=meta))
        except ApiError as exc:
            if exc.code not in (404, 409):  # deleted or changed meanwhile: the change brings us back
                raise

    def _delete_instances(self, crd: Obj, ctx: Context) -> bool:
        """Delete every object of the CRD; True when none is left."""
        group = (crd.get("spec") or {}).get("group") or ""
        plural = ((crd.get("status") or {}).get("acceptedNames") or {}).get("plural") or ""
        resource = Resource(group, plural)
        left = 0
        for obj in ctx.list(resource):
            left += 1
            obj_meta = obj["metadata"]
            if obj_meta.get("deletionTimestamp"):
                continue
            try:
                ctx.client.delete(resource, obj_meta["name"], obj_meta.get("namespace") or "")
            except ApiError as exc:
                if exc.code != 404:
                    raise
        return left == 0 or not ctx.list(resource)


