"""kube-aggregator's local APIServices: one per group-version the apiserver serves itself.

kube-apiserver registers an APIService ``<version>.<group>`` (``v1.`` for the core group)
for each built-in group-version it serves when it starts (kube-aggregator's autoregister,
label ``kube-aggregator.kubernetes.io/automanaged: onstart``, with the priorities of
cmd/kube-apiserver/app/aggregator.go), and keeps one for each group-version some CRD
serves (the crdregistration controller: label ``true``, group priority 1000, version
priority 100), removed once no CRD serves it. A local APIService has no ``service`` and
is always ``Available`` (``Local``).
"""

from __future__ import annotations

from typing import Any, Iterable

from fakekube.api.types.other import local_available_status
from fakekube.clock import format_rfc3339
from fakekube.engine import Context
from fakekube.objects import Resource
from fakekube.objects.kinds import CUSTOM_RESOURCE_DEFINITIONS
from fakekube.store import Change

Obj = dict[str, Any]

NAME = "crd-apiservice-registration-controller"
API_SERVICES = Resource("apiregistration.k8s.io", "apiservices")
AUTOMANAGED = "kube-aggregator.kubernetes.io/automanaged"
ON_START = "onstart"
CONTINUOUSLY = "true"
#: crdregistration's priorities of a CRD's group-version (getGroupPriorityMin: 1000).
CRD_GROUP_PRIORITY = 1000
CRD_VERSION_PRIORITY = 100

#: (group, version) → (groupPriorityMinimum, versionPriority): kube-apiserver's table
#: (DefaultGenericAPIServicePriorities plus cmd/kube-apiserver's). A served group-version
#: missing from it gets no APIService, as upstream's makeAPIService skips it.
PRIORITIES: dict[tuple[str, str], tuple[int, int]] = {
    ("", "v1"): (18000, 1),
    ("events.k8s.io", "v1"): (17750, 15), ("events.k8s.io", "v1beta1"): (17750, 5),
    ("authentication.k8s.io", "v1"): (17700, 15), ("authentication.k8s.io", "v1beta1"): (17700, 9),
    ("authentication.k8s.io", "v1alpha1"): (17700, 1),
    ("authorization.k8s.io", "v1"): (17600, 15),
    ("apps", "v1"): (17800, 15),
    ("autoscaling", "v1"): (17500, 15), ("autoscaling", "v2"): (17500, 30),
    ("autoscaling", "v2beta1"): (17500, 9), ("autoscaling", "v2beta2"): (17500, 1),
    ("batch", "v1"): (17400, 15), ("batch", "v1beta1"): (17400, 9), ("batch", "v2alpha1"): (17400, 9),
    ("certificates.k8s.io", "v1"): (17300, 15), ("certificates.k8s.io", "v1beta1"): (17300, 9),
    ("certificates.k8s.io", "v1alpha1"): (17300, 1),
    ("networking.k8s.io", "v1"): (17200, 15), ("networking.k8s.io", "v1beta1"): (17200, 9),
    ("policy", "v1"): (17100, 15), ("policy", "v1beta1"): (17100, 9),
    ("rbac.authorization.k8s.io", "v1"): (17000, 15),
    ("storage.k8s.io", "v1"): (16800, 15), ("storage.k8s.io", "v1beta1"): (16800, 9),
    ("storage.k8s.io", "v1alpha1"): (16800, 1),
    ("apiextensions.k8s.io", "v1"): (16700, 15),
    ("admissionregistration.k8s.io", "v1"): (16700, 15), ("admissionregistration.k8s.io", "v1beta1"): (16700, 12),
    ("admissionregistration.k8s.io", "v1alpha1"): (16700, 9),
    ("scheduling.k8s.io", "v1"): (16600, 15), ("scheduling.k8s.io", "v1alpha2"): (16600, 2),
    ("coordination.k8s.io", "v1"): (16500, 15), ("coordination.k8s.io", "v1beta1"): (16500, 13),
    ("coordination.k8s.io", "v1alpha2"): (16500, 12),
    ("node.k8s.io", "v1"): (16300, 15), ("node.k8s.io", "v1beta1"): (16300, 9), ("node.k8s.io", "v1alpha1"): (16300, 1),
    ("discovery.k8s.io", "v1"): (16200, 15), ("discovery.k8s.io", "v1beta1"): (16200, 12),
    ("resource.k8s.io", "v1"): (16200, 21), ("resource.k8s.io", "v1beta2"): (16200, 15),
    ("resource.k8s.io", "v1beta1"): (16200, 9), ("resource.k8s.io", "v1alpha3"): (16200, 1),
    ("flowcontrol.apiserver.k8s.io", "v1"): (16100, 21), ("flowcontrol.apiserver.k8s.io", "v1beta3"): (16100, 18),
    ("flowcontrol.apiserver.k8s.io", "v1beta2"): (16100, 15), ("flowcontrol.apiserver.k8s.io", "v1beta1"): (16100, 12),
    ("flowcontrol.apiserver.k8s.io", "v1alpha1"): (16100, 9),
    ("internal.apiserver.k8s.io", "v1alpha1"): (16000, 9),
    ("storagemigration.k8s.io", "v1beta1"): (15800, 9),
}


def api_service_name(group: str, version: str) -> str:
    return f"{version}.{group}"


def local_api_service(group: str, version: str, group_priority: int, version_priority: int,
                      managed: str) -> Obj:
    """A local APIService as the aggregator registers it (without status)."""
    spec: Obj = {"version": version, "groupPriorityMinimum": group_priority, "versionPriority": version_priority}
    if group:
        spec = {"group": group, **spec}
    return {"metadata": {"name": api_service_name(group, version), "labels": {AUTOMANAGED: managed}}, "spec": spec}


def managed_fields(obj: Obj, manager: str, now: str) -> Obj:
    """The managedFields entry of a registered APIService as upstream records it (its
    labels and spec fields; written out here rather than computed: the field manager's
    walk would cost every cluster's start ~2 ms for twenty fixed objects)."""
    spec: Obj = {f"f:{field}": {} for field in sorted(obj["spec"])}
    return {"manager": manager, "operation": "Update", "apiVersion": "apiregistration.k8s.io/v1", "time": now,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:labels": {".": {}, f"f:{AUTOMANAGED}": {}}}, "f:spec": spec}}


def available(now: str) -> Obj:
    """The status every local APIService gets (the aggregator's availability check)."""
    return local_available_status(now)


def _crd_group_versions(crd: Obj | None) -> list[tuple[str, str]]:
    spec = (crd or {}).get("spec") or {}
    group = spec.get("group") or ""
    return [(group, str(v.get("name") or "")) for v in spec.get("versions") or [] if isinstance(v, dict)]


class CRDAPIServiceController:
    """crdregistration: an APIService for each group-version some CRD serves, kept as it
    should be (re-created if deleted, spec restored if edited), deleted when no CRD serves
    it any more. A group-version the apiserver serves itself is left to the on-start ones."""

    name = NAME
    resources = (CUSTOM_RESOURCE_DEFINITIONS, API_SERVICES)

    def keys_for(self, change: Change) -> Iterable[str]:
        if (change.group, change.resource) == API_SERVICES:
            labels = ((change.obj or {}).get("metadata") or {}).get("labels") or {}
            return [change.name] if labels.get(AUTOMANAGED) == CONTINUOUSLY else ()
        versions = _crd_group_versions(change.obj) + _crd_group_versions(change.prev)
        return list(dict.fromkeys(api_service_name(g, v) for g, v in versions))

    def reconcile(self, key: str, ctx: Context) -> None:
        version, _, group = key.partition(".")
        if any(rt.custom is None for rt in ctx.client.api.registry.group_version_types(group, version)):
            return  # the apiserver's own group-version: its APIService is the on-start one
        served = any(group == (crd.get("spec") or {}).get("group") and any(
            isinstance(v, dict) and v.get("name") == version and v.get("served") for v in crd["spec"].get("versions") or [])
            for crd in ctx.list(CUSTOM_RESOURCE_DEFINITIONS))
        existing = ctx.get(API_SERVICES, key)
        if not served:
            if existing is not None and ((existing.get("metadata") or {}).get("labels") or {}).get(AUTOMANAGED) == CONTINUOUSLY:
                ctx.client.delete(API_SERVICES, key, uid=existing["metadata"].get("uid"))
            return
        wanted = local_api_service(group, version, CRD_GROUP_PRIORITY, CRD_VERSION_PRIORITY, CONTINUOUSLY)
        if existing is None:
            existing = ctx.client.create(API_SERVICES, wanted)
        elif existing.get("spec") != wanted["spec"] or ((existing.get("metadata") or {}).get("labels") or {}).get(
                AUTOMANAGED) != CONTINUOUSLY:
            labels = dict((existing.get("metadata") or {}).get("labels") or {}, **wanted["metadata"]["labels"])
            existing = ctx.client.update(API_SERVICES, dict(existing, metadata=dict(existing["metadata"], labels=labels),
                                                            spec=wanted["spec"]))
        if not any(c.get("type") == "Available" and c.get("status") == "True"
                   for c in (existing.get("status") or {}).get("conditions") or []):
            ctx.client.update_status(API_SERVICES, dict(existing, status=available(format_rfc3339(ctx.now))))


def on_start_api_services(group_versions: Iterable[tuple[str, str]]) -> list[Obj]:
    """autoregister's APIServices for the apiserver's own group-versions (those in
    :data:`PRIORITIES`), in name order."""
    found = [local_api_service(group, version, *PRIORITIES[(group, version)], ON_START)
             for group, version in dict.fromkeys(group_versions) if (group, version) in PRIORITIES]
    return sorted(found, key=lambda obj: obj["metadata"]["name"])


AVAILABILITY = "apiservice-availability-controller"
SERVICES = Resource("", "services")
ENDPOINT_SLICES = Resource("discovery.k8s.io", "endpointslices")
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
#: A key naming a Service (``service/<namespace>/<name>``): every APIService it backs is checked.
_SERVICE_KEY = "service/"


class APIServiceAvailabilityController:
    """kube-aggregator's AvailableConditionController (remote_available_controller.go): the
    Available condition of an APIService that names a service, as kube-apiserver writes it —
    the service must exist, a ClusterIP service must listen on the port and have a ready
    EndpointSlice address for that port's name; then ``Passed``. Simplification: the last
    check, a discovery request through the service, is not made (fakekube does not proxy to
    aggregated apiservers): an APIService whose service has ready endpoints is Available.
    A group-version fakekube serves itself (metrics-server's) keeps the status it has."""

    name = AVAILABILITY
    resources = (API_SERVICES, SERVICES, ENDPOINT_SLICES)

    def keys_for(self, change: Change) -> Iterable[str]:
        if (change.group, change.resource) == API_SERVICES:
            return [change.name]
        if (change.group, change.resource) == SERVICES:
            return [f"{_SERVICE_KEY}{change.namespace}/{change.name}"]
        owners = [((obj.get("metadata") or {}).get("labels") or {}).get(SERVICE_NAME_LABEL)
                  for obj in (change.obj, change.prev) if obj is not None]
        return list(dict.fromkeys(f"{_SERVICE_KEY}{change.namespace}/{name}" for name in owners if name))

    def reconcile(self, key: str, ctx: Context) -> None:
        if not key.startswith(_SERVICE_KEY):
            found = ctx.get(API_SERVICES, key)
            if found is not None:
                self._sync(found, ctx)
            return
        namespace, _, name = key[len(_SERVICE_KEY):].partition("/")
        for api_service in ctx.list(API_SERVICES):
            service = (api_service.get("spec") or {}).get("service") or {}
            if service.get("namespace") == namespace and service.get("name") == name:
                self._sync(api_service, ctx)

    def _sync(self, api_service: Obj, ctx: Context) -> None:
        spec = api_service.get("spec") or {}
        if not isinstance(spec.get("service"), dict):
            return  # a local one: Available from its create on
        if ctx.client.api.registry.group_version_types(spec.get("group") or "", spec.get("version") or ""):
            return  # served by fakekube itself (metrics-server's)
        status, reason, message = availability(spec["service"], ctx)
        conditions = [dict(c) for c in (api_service.get("status") or {}).get("conditions") or [] if isinstance(c, dict)]
        current = next((c for c in conditions if c.get("type") == "Available"), None)
        wanted: Obj = {"type": "Available", "status": status, "lastTransitionTime": format_rfc3339(ctx.now),
                       "reason": reason, "message": message}
        if current is None:
            conditions.append(wanted)
        elif (current.get("status"), current.get("reason"), current.get("message")) == (status, reason, message):
            return  # no change, no write (updateAPIServiceStatus)
        else:  # SetAPIServiceCondition: the transition time moves only with the status
            if current.get("status") == status:
                wanted["lastTransitionTime"] = current.get("lastTransitionTime")
            conditions[conditions.index(current)] = wanted
        ctx.client.update_status(API_SERVICES, dict(api_service, status={**(api_service.get("status") or {}),
                                                                         "conditions": conditions}))


def availability(service_ref: Obj, ctx: Context) -> tuple[str, str, str]:
    """(status, reason, message) of the Available condition for an APIService's service."""
    namespace, name = service_ref.get("namespace") or "", service_ref.get("name") or ""
    port = service_ref.get("port", 443)
    service = ctx.get(SERVICES, name, namespace)
    if service is None:
        return "False", "ServiceNotFound", f'service/{name} in "{namespace}" is not present'
    spec = service.get("spec") or {}
    if (spec.get("type") or "ClusterIP") == "ClusterIP":
        ports = [p for p in spec.get("ports") or [] if isinstance(p, dict) and p.get("port") == port]
        if not ports:
            return "False", "ServicePortError", f'service/{name} in "{namespace}" is not listening on port {port}'
        port_name = ports[0].get("name") or ""
        slices = [s for s in ctx.list(ENDPOINT_SLICES, namespace)
                  if ((s.get("metadata") or {}).get("labels") or {}).get(SERVICE_NAME_LABEL) == name]
        if not slices:
            return "False", "EndpointsNotFound", f'cannot find endpointslices for service/{name} in "{namespace}"'
        if not any(_serves(s, port_name) for s in slices):
            return ("False", "MissingEndpoints",
                    f'endpointslices for service/{name} in "{namespace}" have no addresses with port name "{port_name}"')
    return "True", "Passed", "all checks passed"


def _serves(endpoint_slice: Obj, port_name: str) -> bool:
    """``hasAvailableEndpoint``: a ready (or unknown) endpoint and a port of that name."""
    ready = any((e.get("conditions") or {}).get("ready") is not False for e in endpoint_slice.get("endpoints") or []
                if isinstance(e, dict))
    return ready and any(isinstance(p, dict) and (p.get("name") or "") == port_name and p.get("port") is not None
                         for p in endpoint_slice.get("ports") or [])
