"""The endpoints controller: every Service with a selector has an Endpoints of its pods.

Upstream (kube-controller-manager 1.33, pkg/controller/endpoint/endpoints_controller.go;
``--endpoint-updates-batch-period`` 0, so a change is synced at the instant it happens):

* a Service without a selector, or of type ExternalName, is left alone (its Endpoints
  are someone else's, like the ``kubernetes`` Service's); a deleted Service's Endpoints
  are deleted;
* the pods matching the selector in the Service's namespace that are not terminal, have
  an IP and are not terminating (terminating ones too with ``publishNotReadyAddresses``)
  each give an address per service port whose targetPort resolves in the pod (numbers
  as is, names among the containers' ports of the same protocol): ``addresses`` when Ready
  (or ``publishNotReadyAddresses``), ``notReadyAddresses`` otherwise; the address carries
  ``nodeName``, a ``targetRef`` to the pod and, for a pod whose ``subdomain`` is the
  Service, its ``hostname``. Subsets are repacked: one subset per set of addresses
  offering the same ports;
* the Endpoints carry the Service's labels (plus ``service.kubernetes.io/headless`` for
  a headless Service), the ``endpoints.kubernetes.io/last-change-trigger-time``
  annotation, and past 1,000 addresses are truncated (ready ones first, proportionally
  per subset) with ``endpoints.kubernetes.io/over-capacity: truncated``;
* nothing is written when nothing changed; a failed write records a Warning
  FailedToCreateEndpoint / FailedToUpdateEndpoint event and is retried with back-off
  (5 ms doubling); a namespace being terminated is not retried.

Pods are mapped to Services with upstream's projection keys (:mod:`fakekube.objects.endpoints`):
a readiness flip, an IP, a deletion timestamp or a label change makes work for exactly
the Services concerned, at the same instant — so when the node lifecycle controller marks
a failed node's pods NotReady, their addresses move to ``notReadyAddresses`` at once.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any, Iterable, Mapping

from fakekube.api.machinery.errors import ApiError
from fakekube.clock import format_rfc3339
from fakekube.engine import Context
from fakekube.objects._json import deep_copy
from fakekube.objects.constants import (
    ANNOTATION_ENDPOINTS_LAST_CHANGE_TRIGGER_TIME,
    ANNOTATION_ENDPOINTS_OVER_CAPACITY,
    LABEL_SERVICE_HEADLESS,
)
from fakekube.objects.endpoints import (
    PodProjection,
    TriggerTimeTracker,
    find_port,
    is_ipv6,
    is_service_ip_set,
    pod_ips,
    pod_projection,
    selects,
    service_selector,
    services_to_update,
    should_pod_be_in_endpoints,
    should_set_hostname,
)
from fakekube.objects.kinds import ENDPOINTS, PODS, SERVICES
from fakekube.objects.pods import is_pod_ready
from fakekube.store import ADDED, DELETED, Change

Obj = dict[str, Any]

#: Upstream's ``maxCapacity``: addresses an Endpoints keeps before it is truncated.
MAX_CAPACITY = 1000
TRUNCATED = "truncated"
EVENT_COMPONENT = "endpoint-controller"


class EndpointsController:
    """Keeps each selector Service's Endpoints in step with its pods."""

    name = "endpoints-controller"
    resources = (SERVICES, PODS, ENDPOINTS)

    def __init__(self, max_capacity: int = MAX_CAPACITY) -> None:
        self.max_capacity = max_capacity
        self._triggers = TriggerTimeTracker()

    def keys_for(self, change: Change) -> Iterable[str]:
        """A Service's own changes, its Endpoints' deletion, and pods by projection key."""
        if change.resource == SERVICES.plural:
            return [f"{change.namespace}/{change.name}"]
        if change.resource == ENDPOINTS.plural:
            return [f"{change.namespace}/{change.name}"] if change.type == DELETED else []
        return _pod_keys(change)

    def reconcile(self, key: str, ctx: Context) -> None:
        if PodProjection.is_key(key):
            projection = PodProjection.from_key(key)
            for service_key in services_to_update(ctx.list(SERVICES, projection.namespace), projection):
                ctx.enqueue(service_key)
            return
        namespace, name = key.split("/", 1)
        self._sync(namespace, name, ctx)

    def _sync(self, namespace: str, name: str, ctx: Context) -> None:
        service = ctx.get(SERVICES, name, namespace)
        if service is None:
            self._triggers.forget(namespace, name)
            if ctx.get(ENDPOINTS, name, namespace) is not None:
                _delete_quietly(ctx, name, namespace)
            return
        selector = service_selector(service)
        if (service.get("spec") or {}).get("type") == "ExternalName" or selector is None:
            return
        pods = [pod for pod in ctx.list(PODS, namespace) if selects(selector, (pod.get("metadata") or {}).get("labels"))]
        trigger = self._triggers.compute(service, pods)
        subsets = build_subsets(service, pods)
        current = ctx.get(ENDPOINTS, name, namespace)
        if current is not None and _unchanged(current, service, subsets, self.max_capacity):
            return
        desired = _desired(current, service, subsets, trigger, self.max_capacity)
        self._write(ctx, service, current, desired)

    def _write(self, ctx: Context, service: Obj, current: Obj | None, desired: Obj) -> None:
        meta = service["metadata"]
        try:
            if current is None:
                ctx.client.create(ENDPOINTS, desired)
            else:
                ctx.client.update(ENDPOINTS, desired)
        except ApiError as error:
            if current is None and error.code == 403 and _namespace_terminating(error):
                return  # creates keep failing while the namespace goes: drop the key
            reason, text = (("FailedToCreateEndpoint", f"Failed to create endpoint for service {meta['namespace']}/{meta['name']}")
                            if current is None else
                            ("FailedToUpdateEndpoint", f"Failed to update endpoint {meta['namespace']}/{meta['name']}"))
            ctx.record_event(current or desired, "Endpoints", "Warning", reason, f"{text}: {error.message}", EVENT_COMPONENT)
            raise


def _pod_keys(change: Change) -> list[str]:
    old = change.prev if change.type != ADDED else None
    new = change.obj if change.type != DELETED else None
    if change.type == DELETED:
        old = change.obj
    projection = pod_projection(old, new)
    return [projection.key()] if projection is not None else []


def _delete_quietly(ctx: Context, name: str, namespace: str) -> None:
    try:
        ctx.client.delete(ENDPOINTS, name, namespace)
    except ApiError as error:
        if error.code != 404:
            raise


def _namespace_terminating(error: ApiError) -> bool:
    causes = (error.details or {}).get("causes") or []
    return any(cause.get("reason") == "NamespaceTerminating" for cause in causes)


# -- the desired Endpoints ------------------------------------------------------------

def build_subsets(service: Mapping[str, Any], pods: Iterable[Mapping[str, Any]]) -> list[Obj]:
    """The Endpoints subsets of ``service`` for the pods its selector matches."""
    spec = service.get("spec") or {}
    tolerate_unready = bool(spec.get("publishNotReadyAddresses"))
    headless_without_ports = not spec.get("ports") and spec.get("clusterIP") == "None"
    entries: list[tuple[Obj, Obj | None, bool]] = []  # (address, port or None, ready)
    for pod in pods:
        if not should_pod_be_in_endpoints(pod, tolerate_unready):
            continue
        address = _address(service, pod)
        if address is None:
            continue
        ready = tolerate_unready or is_pod_ready(pod)
        if headless_without_ports:
            entries.append((address, None, ready))
            continue
        for service_port in spec.get("ports") or []:
            number = find_port(pod, service_port)
            if number is not None:
                entries.append((address, _endpoint_port(service_port, number), ready))
    return repack(entries)


def _address(service: Mapping[str, Any], pod: Mapping[str, Any]) -> Obj | None:
    """``podToEndpointAddressForService``: the pod's IP of the Service's first family."""
    families = (service.get("spec") or {}).get("ipFamilies") or []
    want_ipv6 = families[0] == "IPv6" if families else is_ipv6((service.get("spec") or {}).get("clusterIP") or "")
    ip = next((ip for ip in pod_ips(pod) if is_ipv6(ip) == want_ipv6), None)
    if ip is None:
        return None
    meta = pod.get("metadata") or {}
    address: Obj = {"ip": ip}
    if should_set_hostname(pod, service):
        address["hostname"] = pod["spec"]["hostname"]
    address["nodeName"] = (pod.get("spec") or {}).get("nodeName") or ""
    address["targetRef"] = {"kind": "Pod", "namespace": meta.get("namespace"), "name": meta.get("name"),
                            "uid": meta.get("uid")}
    return address


def _endpoint_port(service_port: Mapping[str, Any], number: int) -> Obj:
    port: Obj = {}
    if service_port.get("name"):
        port["name"] = service_port["name"]
    port["port"] = number
    port["protocol"] = service_port.get("protocol") or "TCP"
    if service_port.get("appProtocol"):
        port["appProtocol"] = service_port["appProtocol"]
    return port


def repack(entries: list[tuple[Obj, Obj | None, bool]]) -> list[Obj]:
    """``RepackSubsets``: one subset per set of (address, ready) pairs that offer the same
    ports; an address both ready and not ready for a port counts as ready."""
    addresses: dict[tuple[str, str], Obj] = {}
    by_port: dict[str, tuple[Obj | None, dict[tuple[str, str], bool]]] = {}
    for address, port, ready in entries:
        key = (address["ip"], (address.get("targetRef") or {}).get("uid") or "")
        addresses.setdefault(key, address)
        port_key = _port_key(port)
        ready_by_address = by_port.setdefault(port_key, (port, {}))[1]
        ready_by_address[key] = ready_by_address.get(key, False) or ready
    groups: dict[tuple, tuple[list[Obj], dict[tuple[str, str], bool]]] = {}
    for port, ready_by_address in by_port.values():
        signature = tuple(sorted(ready_by_address.items()))
        ports, _ = groups.setdefault(signature, ([], ready_by_address))
        if port is not None:
            ports.append(port)
    subsets = [_subset(ports, ready_by_address, addresses) for ports, ready_by_address in groups.values()]
    return sorted(subsets, key=_subset_order)


def _port_key(port: Obj | None) -> str:
    if port is None:
        return ""
    return f"{port.get('name', '')}\x00{port['port']}\x00{port['protocol']}\x00{port.get('appProtocol', '')}"


def _subset(ports: list[Obj], ready_by_address: dict[tuple[str, str], bool], addresses: dict[tuple[str, str], Obj]) -> Obj:
    ready = [addresses[key] for key in sorted(ready_by_address) if ready_by_address[key]]
    not_ready = [addresses[key] for key in sorted(ready_by_address) if not ready_by_address[key]]
    subset: Obj = {}
    if ready:
        subset["addresses"] = ready
    if not_ready:
        subset["notReadyAddresses"] = not_ready
    if ports:
        subset["ports"] = sorted(ports, key=_port_key)
    return subset


def _subset_order(subset: Obj) -> tuple:
    ports = [_port_key(port) for port in subset.get("ports") or []]
    ips = [a["ip"] for a in (subset.get("addresses") or []) + (subset.get("notReadyAddresses") or [])]
    return ports, ips


def _unchanged(current: Obj, service: Obj, subsets: list[Obj], max_capacity: int) -> bool:
    labels = dict((current.get("metadata") or {}).get("labels") or {})
    labels.pop(LABEL_SERVICE_HEADLESS, None)
    return _without_rv(current.get("subsets") or []) == _without_rv(subsets) \
        and labels == ((service.get("metadata") or {}).get("labels") or {}) \
        and _capacity_annotation_right(current, subsets, max_capacity)


def _without_rv(subsets: list[Obj]) -> list[Obj]:
    """Subsets with no target resourceVersion (an older writer's), for comparison."""
    def strip(address: Obj) -> Obj:
        ref = address.get("targetRef")
        if isinstance(ref, dict) and "resourceVersion" in ref:
            return dict(address, targetRef={k: v for k, v in ref.items() if k != "resourceVersion"})
        return address
    return [{k: [strip(a) for a in v] if k in ("addresses", "notReadyAddresses") else v for k, v in subset.items()}
            for subset in subsets]


def _capacity_annotation_right(current: Obj, subsets: list[Obj], max_capacity: int) -> bool:
    """``capacityAnnotationSetCorrectly``: over capacity, never (truncation is due);
    else right when the over-capacity annotation is absent."""
    if _count(subsets) > max_capacity:
        return False
    return ANNOTATION_ENDPOINTS_OVER_CAPACITY not in ((current.get("metadata") or {}).get("annotations") or {})


def _count(subsets: list[Obj]) -> int:
    return sum(len(s.get("addresses") or []) + len(s.get("notReadyAddresses") or []) for s in subsets)


def _desired(current: Obj | None, service: Obj, subsets: list[Obj], trigger: datetime | None,
             max_capacity: int) -> Obj:
    meta = service["metadata"]
    desired: Obj = deep_copy(current) if current is not None else {"metadata": {"name": meta["name"],
                                                                                "namespace": meta["namespace"]}}
    labels = dict(meta.get("labels") or {})
    if is_service_ip_set(service):
        labels.pop(LABEL_SERVICE_HEADLESS, None)
    else:
        labels[LABEL_SERVICE_HEADLESS] = ""
    annotations = dict(desired["metadata"].get("annotations") or {})
    if trigger is not None:
        annotations[ANNOTATION_ENDPOINTS_LAST_CHANGE_TRIGGER_TIME] = format_rfc3339(trigger)
    else:
        annotations.pop(ANNOTATION_ENDPOINTS_LAST_CHANGE_TRIGGER_TIME, None)
    subsets, truncated = truncate(subsets, max_capacity)
    if truncated:
        annotations[ANNOTATION_ENDPOINTS_OVER_CAPACITY] = TRUNCATED
    else:
        annotations.pop(ANNOTATION_ENDPOINTS_OVER_CAPACITY, None)
    _set_or_drop(desired["metadata"], "labels", labels)
    _set_or_drop(desired["metadata"], "annotations", annotations)
    _set_or_drop(desired, "subsets", subsets)
    return desired


def _set_or_drop(obj: Obj, field: str, value: Any) -> None:
    """Go's ``omitempty``: an empty map or list is not written."""
    if value:
        obj[field] = value
    else:
        obj.pop(field, None)


def truncate(subsets: list[Obj], max_capacity: int = MAX_CAPACITY) -> tuple[list[Obj], bool]:
    """``truncateEndpoints``: past ``max_capacity`` addresses keep the ready ones first,
    each subset its proportional share (rounded up, the last ones getting what is left)."""
    total_ready = sum(len(s.get("addresses") or []) for s in subsets)
    total_not_ready = sum(len(s.get("notReadyAddresses") or []) for s in subsets)
    if total_ready + total_not_ready <= max_capacity:
        return subsets, False
    truncate_ready = total_ready > max_capacity
    limit, total = (max_capacity, total_ready) if truncate_ready else (max_capacity - total_ready, total_not_ready)
    room = limit
    result = []
    for subset in subsets:
        field = "addresses" if truncate_ready else "notReadyAddresses"
        present = len(subset.get(field) or [])
        share = min(math.ceil(present / total * limit) if total else 0, room)
        cut = dict(subset)
        kept = (subset.get(field) or [])[:share]
        _set_or_drop(cut, field, kept)
        if truncate_ready:
            cut.pop("notReadyAddresses", None)
        room -= len(kept)
        result.append(cut)
    return result, True
