"""What a Service's EndpointSlices should become: upstream's reconciler, as a pure plan.

Source: staging/src/k8s.io/endpointslice/reconciler.go and utils.go (Kubernetes 1.33).
For each address type the Service serves (its ``ipFamilies``), the pods that belong in
its endpoints (terminating ones too: they are published with ``terminating: true``) are
grouped by the ports they resolve to; for each group:

1. endpoints already in an existing slice stay in it (updated when their conditions,
   node, zone or pod changed); gone ones are removed; a slice left empty is deleted;
2. the remaining endpoints fill the slices marked for update, fullest first, up to
   ``maxEndpointsPerSlice`` (100);
3. what is still left goes into the unchanged slice that would be closest to full, or
   into new slices (``generateName: <service>-``, a controller reference to the Service,
   labels ``kubernetes.io/service-name`` and ``endpointslice.kubernetes.io/managed-by``).

A Service with no endpoints keeps one empty placeholder slice. Creates and deletes are
then paired into updates (:func:`finalize_plan`), so a slice is replaced in place rather
than deleted and created.

Upstream walks maps (Go's random order); here everything follows the pods' order (their
store order) and the slices' order, so one seed gives the same slices on every run.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable, Mapping

from fakekube.objects._json import deep_copy
from fakekube.objects.constants import (
    ENDPOINTSLICE_CONTROLLER_NAME,
    LABEL_ENDPOINTSLICE_MANAGED_BY,
    LABEL_SERVICE_HEADLESS,
    LABEL_SERVICE_NAME,
    LABEL_TOPOLOGY_ZONE,
)
from fakekube.objects.endpoints import (
    find_port,
    is_ipv6,
    is_service_ip_set,
    pod_ips,
    should_pod_be_in_endpoints,
    should_set_hostname,
)
from fakekube.objects.owners import owner_reference
from fakekube.objects.pods import is_pod_ready

Obj = dict[str, Any]

#: kube-controller-manager's ``--max-endpoints-per-slice`` default.
MAX_ENDPOINTS_PER_SLICE = 100
IPV4, IPV6 = "IPv4", "IPv6"
RESERVED_LABELS = (LABEL_SERVICE_NAME, LABEL_ENDPOINTSLICE_MANAGED_BY, LABEL_SERVICE_HEADLESS)

NodeLookup = Callable[[str], Obj | None]


class Plan:
    """The writes one address type needs, in upstream's order (creates, updates, deletes),
    and the problems met (a pod on a missing node), which make the sync fail and retry."""

    __slots__ = ("address_type", "creates", "updates", "deletes", "errors")

    def __init__(self, address_type: str, creates: list[Obj] | None = None, updates: list[Obj] | None = None,
                 deletes: list[Obj] | None = None, errors: list[str] | None = None) -> None:
        self.address_type = address_type
        self.creates: list[Obj] = [] if creates is None else creates
        self.updates: list[Obj] = [] if updates is None else updates
        self.deletes: list[Obj] = [] if deletes is None else deletes
        self.errors: list[str] = [] if errors is None else errors


def address_types(service: Mapping[str, Any]) -> list[str]:
    """``getAddressTypesForService``: from ``ipFamilies``; without them, the ClusterIP's
    family, or both for a headless Service."""
    spec = service.get("spec") or {}
    types = [t for t in (IPV4 if f == "IPv4" else IPV6 if f == "IPv6" else None for f in spec.get("ipFamilies") or [])
             if t is not None]
    if types:
        return list(dict.fromkeys(types))
    if is_service_ip_set(service):
        return [IPV6 if is_ipv6(spec.get("clusterIP") or "") else IPV4]
    return [IPV4, IPV6]


def plan(service: Obj, pods: Iterable[Obj], node_of: NodeLookup, existing: list[Obj],
         max_per_slice: int = MAX_ENDPOINTS_PER_SLICE) -> tuple[list[Plan], list[Obj]]:
    """``Reconcile``: a plan per address type the Service serves, and the slices of
    address types it no longer serves (deleted last)."""
    supported = address_types(service)
    stale = [s for s in existing if s.get("addressType") not in supported]
    pods = list(pods)
    plans = [_plan_address_type(service, pods, node_of, [s for s in existing if s.get("addressType") == address_type],
                                address_type, max_per_slice)
             for address_type in supported]
    return plans, stale


def _plan_address_type(service: Obj, pods: list[Obj], node_of: NodeLookup, existing: list[Obj], address_type: str,
                       max_per_slice: int) -> Plan:
    result = Plan(address_type)
    existing_by_ports: dict[str, list[Obj]] = {}
    for endpoint_slice in existing:
        if owned_by(endpoint_slice, service):
            existing_by_ports.setdefault(port_key(endpoint_slice.get("ports")), []).append(endpoint_slice)
        else:
            result.deletes.append(endpoint_slice)
    desired, ports_of = _desired_endpoints(service, pods, node_of, address_type, result.errors)
    for key, endpoints in desired.items():
        creates, updates, deletes = _plan_ports(service, existing_by_ports.get(key, []), endpoints, ports_of[key],
                                                address_type, max_per_slice)
        result.creates += creates
        result.updates += updates
        result.deletes += deletes
    for key, slices in existing_by_ports.items():
        if key not in desired:
            result.deletes += slices
    if len(existing) == len(result.deletes) and not result.creates:
        placeholder = new_slice(service, [], address_type)
        if len(result.deletes) == 1 and _same_placeholder(result.deletes[0], placeholder):
            result.deletes = []
        else:
            result.creates.append(placeholder)
    return result


def _desired_endpoints(service: Obj, pods: list[Obj], node_of: NodeLookup, address_type: str,
                       errors: list[str]) -> tuple[dict[str, dict[str, Obj]], dict[str, list[Obj]]]:
    """The endpoints each port group should have, keyed by endpoint identity, in pod order."""
    spec = service.get("spec") or {}
    meta = service["metadata"]
    desired: dict[str, dict[str, Obj]] = {}
    ports_of: dict[str, list[Obj]] = {}
    for pod in pods:
        if not should_pod_be_in_endpoints(pod, True):
            continue
        ports = endpoint_ports(service, pod)
        key = port_key(ports)
        endpoints = desired.setdefault(key, {})
        ports_of.setdefault(key, ports)
        node_name = (pod.get("spec") or {}).get("nodeName") or ""
        node = node_of(node_name) if node_name else None
        if node is None and not spec.get("publishNotReadyAddresses"):
            errors.append(f"skipping Pod {pod['metadata']['name']} for Service {meta['namespace']}/{meta['name']}: "
                          f"Node {node_name} Not Found")
            continue
        endpoint = pod_to_endpoint(pod, node, service, address_type)
        if endpoint["addresses"]:
            endpoints[endpoint_identity(endpoint)] = endpoint
    return desired, ports_of


def _plan_ports(service: Obj, existing: list[Obj], desired: dict[str, Obj], ports: list[Obj], address_type: str,
                max_per_slice: int) -> tuple[list[Obj], list[Obj], list[Obj]]:
    """``reconcileByPortMapping`` for one group of slices sharing a port set."""
    by_name: dict[str, Obj] = {}
    unchanged: dict[str, None] = {}
    to_update: dict[str, None] = {}
    to_delete: dict[str, None] = {}
    for endpoint_slice in existing:
        name = endpoint_slice["metadata"]["name"]
        by_name[name] = endpoint_slice
        kept, updated = _keep_desired(endpoint_slice.get("endpoints") or [], desired)
        labels, labels_changed = slice_labels(endpoint_slice, service)
        if updated or len(endpoint_slice.get("endpoints") or []) != len(kept):
            if not kept:
                to_delete[name] = None
                continue
            copy = _with(endpoint_slice, kept, labels)
        elif labels_changed:
            copy = _with(endpoint_slice, endpoint_slice.get("endpoints") or [], labels)
        else:
            unchanged[name] = None
            continue
        by_name[name] = copy
        to_update[name] = None
    if desired and to_update:
        for endpoint_slice in sorted((by_name[n] for n in to_update), key=lambda s: -len(s.get("endpoints") or [])):
            _fill(endpoint_slice, desired, max_per_slice)
    creates: list[Obj] = []
    while desired:
        target = None
        if len(desired) < max_per_slice and unchanged:
            target = slice_to_fill([by_name[n] for n in unchanged], len(desired), max_per_slice)
        if target is None:
            target = new_slice(service, ports, address_type)
        else:
            target = deep_copy(target)
            by_name[target["metadata"]["name"]] = target
        _fill(target, desired, max_per_slice)
        name = target["metadata"].get("name")
        if name:
            to_update[name] = None
            unchanged.pop(name, None)
        else:
            creates.append(target)
    return creates, [by_name[n] for n in to_update], [by_name[n] for n in to_delete]


def _keep_desired(endpoints: list[Obj], desired: dict[str, Obj]) -> tuple[list[Obj], bool]:
    """The slice's endpoints that are still desired (their desired version), and whether
    any of them changed; each one found is taken out of ``desired``."""
    kept, updated = [], False
    for endpoint in endpoints:
        identity = endpoint_identity(endpoint)
        wanted = desired.pop(identity, None)
        if wanted is not None:
            kept.append(wanted)
            updated = updated or not equal_beyond_identity(wanted, endpoint)
    return kept, updated


def _with(endpoint_slice: Obj, endpoints: list[Obj], labels: dict[str, str]) -> Obj:
    copy: Obj = deep_copy(endpoint_slice)
    copy["endpoints"] = list(endpoints)
    copy["metadata"]["labels"] = labels
    return copy


def _fill(endpoint_slice: Obj, desired: dict[str, Obj], max_per_slice: int) -> None:
    endpoints = endpoint_slice.get("endpoints")
    if endpoints is None:  # a stored empty slice reads back as null (Go's nil slice)
        endpoints = endpoint_slice["endpoints"] = []
    while desired and len(endpoints) < max_per_slice:
        identity = next(iter(desired))
        endpoints.append(desired.pop(identity))


def slice_to_fill(slices: list[Obj], count: int, max_per_slice: int) -> Obj | None:
    """``getSliceToFill``: the slice that ``count`` more endpoints bring closest to full."""
    closest, best = None, max_per_slice
    for endpoint_slice in slices:
        room = max_per_slice - (count + len(endpoint_slice.get("endpoints") or []))
        if 0 <= room < best:
            closest, best = endpoint_slice, room
            if room == 0:
                break
    return closest


# -- building blocks --------------------------------------------------------------------

def endpoint_ports(service: Mapping[str, Any], pod: Mapping[str, Any]) -> list[Obj]:
    """``getEndpointPorts``: each service port the pod resolves, in the Service's order."""
    spec = service.get("spec") or {}
    if not spec.get("ports") and spec.get("clusterIP") == "None":
        return []
    ports = []
    for service_port in spec.get("ports") or []:
        number = find_port(pod, service_port)
        if number is None:
            continue
        port: Obj = {"name": service_port.get("name") or "", "protocol": service_port.get("protocol") or "TCP",
                     "port": number}
        if service_port.get("appProtocol"):
            port["appProtocol"] = service_port["appProtocol"]
        ports.append(port)
    return ports


def port_key(ports: list[Obj] | None) -> str:
    """``NewPortMapKey``: slices and pods with the same port set (in any order) group together."""
    normalized = sorted(json.dumps(p, sort_keys=True, separators=(",", ":")) for p in ports or [])
    return "\x00".join(normalized)


def pod_to_endpoint(pod: Obj, node: Obj | None, service: Obj, address_type: str) -> Obj:
    """``podToEndpoint``: serving is Ready; ready is serving and not terminating (always
    with ``publishNotReadyAddresses``); node name, zone and hostname when known."""
    serving = is_pod_ready(pod)
    terminating = bool((pod.get("metadata") or {}).get("deletionTimestamp"))
    ready = bool((service.get("spec") or {}).get("publishNotReadyAddresses")) or (serving and not terminating)
    meta = pod["metadata"]
    endpoint: Obj = {
        "addresses": [ip for ip in pod_ips(pod) if is_ipv6(ip) == (address_type == IPV6)],
        "conditions": {"ready": ready, "serving": serving, "terminating": terminating},
    }
    if should_set_hostname(pod, service):
        endpoint["hostname"] = pod["spec"]["hostname"]
    endpoint["targetRef"] = {"kind": "Pod", "namespace": meta.get("namespace"), "name": meta.get("name"),
                             "uid": meta.get("uid")}
    node_name = (pod.get("spec") or {}).get("nodeName")
    if node_name:
        endpoint["nodeName"] = node_name
    zone = (((node or {}).get("metadata") or {}).get("labels") or {}).get(LABEL_TOPOLOGY_ZONE)
    if zone:
        endpoint["zone"] = zone
    return endpoint


def endpoint_identity(endpoint: Mapping[str, Any]) -> str:
    """``hashEndpoint``: addresses (sorted), hostname and the target's namespace/name."""
    ref = endpoint.get("targetRef") or {}
    return json.dumps([sorted(endpoint.get("addresses") or []), endpoint.get("hostname") or "",
                       ref.get("namespace") or "", ref.get("name") or ""], separators=(",", ":"))


def equal_beyond_identity(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """``EndpointsEqualBeyondHash``: same node, zone, conditions and target (ignoring its
    resourceVersion)."""
    def ref(endpoint: Mapping[str, Any]) -> Obj:
        return {k: v for k, v in (endpoint.get("targetRef") or {}).items() if k != "resourceVersion"}
    conditions = ("ready", "serving", "terminating")
    return a.get("nodeName") == b.get("nodeName") and a.get("zone") == b.get("zone") \
        and all((a.get("conditions") or {}).get(c) == (b.get("conditions") or {}).get(c) for c in conditions) \
        and ref(a) == ref(b)


def owned_by(endpoint_slice: Mapping[str, Any], service: Mapping[str, Any]) -> bool:
    """``ownedBy``: a reference to the Service (by uid) of kind Service, apiVersion v1."""
    uid = (service.get("metadata") or {}).get("uid")
    return any(ref.get("uid") == uid and ref.get("kind") == "Service" and ref.get("apiVersion") == "v1"
               for ref in (endpoint_slice.get("metadata") or {}).get("ownerReferences") or [])


def slice_labels(endpoint_slice: Mapping[str, Any], service: Mapping[str, Any]) -> tuple[dict[str, str], bool]:
    """``setEndpointSliceLabels``: the Service's labels (reserved ones excepted) plus the
    headless, service-name and managed-by labels; and whether the non-reserved ones differ."""
    current = {k: v for k, v in ((endpoint_slice.get("metadata") or {}).get("labels") or {}).items()
               if k not in RESERVED_LABELS}
    labels = {k: v for k, v in ((service.get("metadata") or {}).get("labels") or {}).items()
              if k not in RESERVED_LABELS}
    changed = current != labels
    if not is_service_ip_set(service):
        labels[LABEL_SERVICE_HEADLESS] = ""
    labels[LABEL_SERVICE_NAME] = service["metadata"]["name"]
    labels[LABEL_ENDPOINTSLICE_MANAGED_BY] = ENDPOINTSLICE_CONTROLLER_NAME
    return labels, changed


def new_slice(service: Obj, ports: list[Obj], address_type: str) -> Obj:
    """``newEndpointSlice``: named ``<service>-<random>``, controlled by the Service."""
    meta = service["metadata"]
    labels, _ = slice_labels({}, service)
    return {
        "metadata": {"generateName": f"{meta['name']}-", "namespace": meta["namespace"], "labels": labels,
                     "ownerReferences": [owner_reference(service, "v1", "Service")]},
        "addressType": address_type,
        "endpoints": [],
        "ports": deep_copy(ports),
    }


def _same_placeholder(existing: Mapping[str, Any], placeholder: Mapping[str, Any]) -> bool:
    """``placeholderSliceCompare``: namespace, labels, address type, and no endpoints or ports."""
    meta, other = existing.get("metadata") or {}, placeholder["metadata"]
    return meta.get("namespace") == other["namespace"] and (meta.get("labels") or {}) == other["labels"] \
        and existing.get("addressType") == placeholder["addressType"] \
        and not existing.get("endpoints") and not existing.get("ports")


def finalize_plan(service: Mapping[str, Any], result: Plan) -> None:
    """``finalize``'s first step: a create and a delete of the same address type become an
    update of the slice that would have been deleted (it keeps its name)."""
    i = 0
    while i < len(result.deletes) and result.creates:
        doomed = result.deletes[i]
        created = result.creates[-1]
        if doomed.get("addressType") == created["addressType"] and owned_by(doomed, service):
            created["metadata"]["name"] = doomed["metadata"]["name"]
            result.creates.pop()
            result.updates.append(created)
            result.deletes.pop(i)
        else:
            i += 1
