"""The EndpointSlice controller: a selector Service's pods, published as EndpointSlices.

Upstream: kube-controller-manager 1.33's pkg/controller/endpointslice/endpointslice_controller.go
with the reconciler of k8s.io/endpointslice (:mod:`.reconciler`). Timings as upstream's
defaults: a Service or pod change is synced at once (``--endpointslice-updates-batch-period``
0); a change to a managed slice that this controller did not make (its generation is newer
than the one it wrote, or it was deleted unexpectedly) syncs the Service 1 s later
(``endpointSliceChangeMinSyncDelay``); a failed sync records a Warning
FailedToUpdateEndpointSlices event on the Service and is retried after 1 s, doubling to
1000 s, at most 15 times.

The Service's slices are found by their ``kubernetes.io/service-name`` and
``endpointslice.kubernetes.io/managed-by`` labels (an index); a deleted Service's slices
go with it through the garbage collector (they are owned by it). Each sync stamps the
``endpoints.kubernetes.io/last-change-trigger-time`` annotation on the slices it writes.

Bounded state: the generations written per slice (one entry per managed slice, at most
:data:`MAX_TRACKED_SERVICES` Services), the trigger times
(:class:`~fakekube.objects.endpoints.TriggerTimeTracker`) and the retry counts (one per
failing Service, dropped on success).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Iterable

from fakekube.api.machinery.errors import ApiError
from fakekube.clock import format_rfc3339
from fakekube.controllers.endpointslice import reconciler
from fakekube.controllers.endpointslice.reconciler import MAX_ENDPOINTS_PER_SLICE, Plan, finalize_plan
from fakekube.engine import Context
from fakekube.objects.constants import (
    ANNOTATION_ENDPOINTS_LAST_CHANGE_TRIGGER_TIME,
    ENDPOINTSLICE_CONTROLLER_NAME,
    LABEL_ENDPOINTSLICE_MANAGED_BY,
    LABEL_SERVICE_NAME,
)
from fakekube.objects.endpoints import PodProjection, TriggerTimeTracker, pod_projection, selects, service_selector
from fakekube.objects.endpoints import services_to_update
from fakekube.objects.kinds import ENDPOINT_SLICES, NODES, PODS, SERVICES
from fakekube.store import ADDED, DELETED, MODIFIED, Change

Obj = dict[str, Any]

#: ``endpointSliceChangeMinSyncDelay``: a foreign change to a managed slice is synced this much later.
SLICE_CHANGE_DELAY_S = 1.0
#: The controller's own retry back-off (``defaultSyncBackOff`` doubling to ``maxSyncBackOff``).
SYNC_BACKOFF_S = 1.0
MAX_SYNC_BACKOFF_S = 1000.0
#: ``maxRetries``: a Service failing this many times in a row is dropped until it changes.
MAX_RETRIES = 15
MAX_TRACKED_SERVICES = 100_000
EVENT_COMPONENT = "endpoint-slice-controller"
#: The index of managed slices by "namespace/service".
SLICES_BY_SERVICE = "endpointslice-controller/service"
DELETION_EXPECTED = -1

_SLICE, _GONE, _LATER = "slice\x00", "gone\x00", "later\x00"


def managed_slice_service(endpoint_slice: Obj) -> list[str]:
    """Index function: "namespace/service" of a slice this controller manages."""
    meta = endpoint_slice.get("metadata") or {}
    labels = meta.get("labels") or {}
    if labels.get(LABEL_ENDPOINTSLICE_MANAGED_BY) != ENDPOINTSLICE_CONTROLLER_NAME or not labels.get(LABEL_SERVICE_NAME):
        return []
    return [f"{meta.get('namespace')}/{labels[LABEL_SERVICE_NAME]}"]


class SliceTracker:
    """``EndpointSliceTracker``: the generation this controller last wrote for each managed
    slice (or that it deleted it), per Service — so it can tell its own writes from others'."""

    def __init__(self, limit: int = MAX_TRACKED_SERVICES) -> None:
        self.limit = limit
        self._services: OrderedDict[str, dict[str, int]] = OrderedDict()

    def _slices(self, service_key: str) -> dict[str, int]:
        slices = self._services.pop(service_key, None) or {}
        self._services[service_key] = slices
        while len(self._services) > self.limit:
            self._services.popitem(last=False)
        return slices

    def update(self, service_key: str, endpoint_slice: Obj) -> None:
        meta = endpoint_slice.get("metadata") or {}
        self._slices(service_key)[meta.get("uid") or ""] = int(meta.get("generation") or 0)

    def expect_deletion(self, service_key: str, endpoint_slice: Obj) -> None:
        self._slices(service_key)[(endpoint_slice.get("metadata") or {}).get("uid") or ""] = DELETION_EXPECTED

    def should_sync(self, service_key: str, uid: str, generation: int) -> bool:
        known = self._services.get(service_key, {}).get(uid)
        return known is None or generation > known

    def unexpected_deletion(self, service_key: str, uid: str) -> bool:
        """``Has`` and not ``HandleDeletion``: a slice it tracked went, and not by its hand."""
        slices = self._services.get(service_key)
        if not slices or uid not in slices:
            return False
        return slices.pop(uid) != DELETION_EXPECTED

    def forget(self, service_key: str) -> None:
        self._services.pop(service_key, None)


class EndpointSliceController:
    """Keeps each selector Service's EndpointSlices in step with its pods."""

    name = "endpointslice-controller"
    resources = (SERVICES, PODS, ENDPOINT_SLICES)
    indexes = ((ENDPOINT_SLICES, SLICES_BY_SERVICE, managed_slice_service),)

    def __init__(self, max_endpoints_per_slice: int = MAX_ENDPOINTS_PER_SLICE) -> None:
        self.max_endpoints_per_slice = max_endpoints_per_slice
        self._triggers = TriggerTimeTracker()
        self._slices = SliceTracker()
        self._failures: OrderedDict[str, int] = OrderedDict()

    # -- routing ------------------------------------------------------------------------
    def keys_for(self, change: Change) -> Iterable[str]:
        if change.resource == SERVICES.plural:
            return [f"{change.namespace}/{change.name}"]
        if change.resource == ENDPOINT_SLICES.plural:
            return _slice_keys(change)
        old = change.obj if change.type == DELETED else change.prev if change.type == MODIFIED else None
        projection = pod_projection(old, change.obj if change.type != DELETED else None)
        return [projection.key()] if projection is not None else []

    def reconcile(self, key: str, ctx: Context) -> None:
        if PodProjection.is_key(key):
            projection = PodProjection.from_key(key)
            for service_key in services_to_update(ctx.list(SERVICES, projection.namespace), projection):
                ctx.enqueue(service_key)
        elif key.startswith(_SLICE):
            service_key, uid, generation = key[len(_SLICE):].split("\x00")
            if self._slices.should_sync(service_key, uid, int(generation)):
                ctx.enqueue_after(service_key, SLICE_CHANGE_DELAY_S)
        elif key.startswith(_GONE):
            service_key, uid = key[len(_GONE):].split("\x00")
            if self._slices.unexpected_deletion(service_key, uid):
                ctx.enqueue_after(service_key, SLICE_CHANGE_DELAY_S)
        elif key.startswith(_LATER):
            ctx.enqueue_after(key[len(_LATER):], SLICE_CHANGE_DELAY_S)
        else:
            self._sync_with_retries(key, ctx)

    # -- the sync -----------------------------------------------------------------------
    def _sync_with_retries(self, key: str, ctx: Context) -> None:
        try:
            self._sync(key, ctx)
        except SyncFailed as failure:
            self._retry(key, ctx, failure)
        else:
            self._failures.pop(key, None)

    def _retry(self, key: str, ctx: Context, failure: "SyncFailed") -> None:
        namespace, name = key.split("/", 1)
        service = ctx.get(SERVICES, name, namespace)
        if service is not None:
            ctx.record_event(service, "Service", "Warning", "FailedToUpdateEndpointSlices",
                             f"Error updating Endpoint Slices for Service {namespace}/{name}: {failure}", EVENT_COMPONENT)
        count = self._failures.pop(key, 0)
        if count >= MAX_RETRIES:
            return  # upstream's retry budget: dropped until the Service or its pods change
        self._failures[key] = count + 1
        while len(self._failures) > MAX_TRACKED_SERVICES:
            self._failures.popitem(last=False)
        ctx.enqueue_after(key, min(SYNC_BACKOFF_S * 2 ** count, MAX_SYNC_BACKOFF_S))

    def _sync(self, key: str, ctx: Context) -> None:
        namespace, name = key.split("/", 1)
        service = ctx.get(SERVICES, name, namespace)
        if service is None:
            self._triggers.forget(namespace, name)
            self._slices.forget(key)
            return
        selector = service_selector(service)
        if (service.get("spec") or {}).get("type") == "ExternalName" or selector is None:
            return
        pods = [pod for pod in ctx.list(PODS, namespace) if selects(selector, (pod.get("metadata") or {}).get("labels"))]
        existing = [s for s in ctx.by_index(ENDPOINT_SLICES, SLICES_BY_SERVICE, key)
                    if not (s.get("metadata") or {}).get("deletionTimestamp")]
        trigger = self._triggers.compute(service, pods)
        plans, stale = reconciler.plan(service, pods, lambda node: ctx.get(NODES, node), existing,
                                       self.max_endpoints_per_slice)
        problems: list[str] = []
        for one in plans:
            problems += one.errors
            problems += self._finalize(ctx, key, service, one, trigger)
        for endpoint_slice in stale:
            problems += self._delete(ctx, key, endpoint_slice)
        if problems:
            raise SyncFailed(problems)

    def _finalize(self, ctx: Context, key: str, service: Obj, plan: Plan, trigger: Any) -> list[str]:
        """Write one address type's plan (``finalize``); returns the first failure, if any."""
        finalize_plan(service, plan)
        namespace, name = key.split("/", 1)
        if not (service.get("metadata") or {}).get("deletionTimestamp"):
            for endpoint_slice in plan.creates:
                _annotate(endpoint_slice, trigger)
                try:
                    self._slices.update(key, ctx.client.create(ENDPOINT_SLICES, endpoint_slice))
                except ApiError as error:
                    if _namespace_terminating(error):
                        return []
                    return [f"failed to create EndpointSlice for Service {namespace}/{name}: {error.message}"]
        for endpoint_slice in plan.updates:
            _annotate(endpoint_slice, trigger)
            try:
                self._slices.update(key, ctx.client.update(ENDPOINT_SLICES, endpoint_slice))
            except ApiError as error:
                return [f"failed to update {endpoint_slice['metadata']['name']} EndpointSlice for Service "
                        f"{namespace}/{name}: {error.message}"]
        for endpoint_slice in plan.deletes:
            failed = self._delete(ctx, key, endpoint_slice)
            if failed:
                return [f"failed to delete {endpoint_slice['metadata']['name']} EndpointSlice for Service "
                        f"{namespace}/{name}: {failed[0]}"]
        return []

    def _delete(self, ctx: Context, key: str, endpoint_slice: Obj) -> list[str]:
        meta = endpoint_slice["metadata"]
        try:
            ctx.client.delete(ENDPOINT_SLICES, meta["name"], meta["namespace"])
        except ApiError as error:
            return [] if error.code == 404 else [error.message]
        self._slices.expect_deletion(key, endpoint_slice)
        return []


class SyncFailed(Exception):
    """A sync that met problems; its text is upstream's aggregate of them."""

    def __init__(self, problems: list[str]) -> None:
        unique = list(dict.fromkeys(problems))
        super().__init__(unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]")


def _slice_keys(change: Change) -> list[str]:
    """A managed slice's change: checked against the generations written (``slice``/``gone``);
    a slice moved between Services or in or out of management: those Services, 1 s later."""
    meta = change.obj.get("metadata") or {}
    labels = meta.get("labels") or {}
    service = labels.get(LABEL_SERVICE_NAME) or ""
    managed = labels.get(LABEL_ENDPOINTSLICE_MANAGED_BY) == ENDPOINTSLICE_CONTROLLER_NAME
    namespace = change.namespace
    if change.type == MODIFIED and change.prev is not None:
        old_labels = (change.prev.get("metadata") or {}).get("labels") or {}
        old_service = old_labels.get(LABEL_SERVICE_NAME) or ""
        if old_service != service:
            return [f"{_LATER}{namespace}/{s}" for s in (service, old_service) if s]
        if (old_labels.get(LABEL_ENDPOINTSLICE_MANAGED_BY) == ENDPOINTSLICE_CONTROLLER_NAME) != managed:
            return [f"{_LATER}{namespace}/{service}"] if service else []
    if not managed or not service:
        return []
    uid = meta.get("uid") or ""
    if change.type == DELETED:
        return [f"{_GONE}{namespace}/{service}\x00{uid}"]
    if change.type == ADDED or change.type == MODIFIED:
        return [f"{_SLICE}{namespace}/{service}\x00{uid}\x00{int(meta.get('generation') or 0)}"]
    return []


def _annotate(endpoint_slice: Obj, trigger: Any) -> None:
    """``addTriggerTimeAnnotation``: set the trigger time, or remove it when there is none."""
    meta = endpoint_slice["metadata"]
    annotations = dict(meta.get("annotations") or {})
    if trigger is not None:
        annotations[ANNOTATION_ENDPOINTS_LAST_CHANGE_TRIGGER_TIME] = format_rfc3339(trigger)
    else:
        annotations.pop(ANNOTATION_ENDPOINTS_LAST_CHANGE_TRIGGER_TIME, None)
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)


def _namespace_terminating(error: ApiError) -> bool:
    causes = (error.details or {}).get("causes") or []
    return error.code == 403 and any(cause.get("reason") == "NamespaceTerminating" for cause in causes)
