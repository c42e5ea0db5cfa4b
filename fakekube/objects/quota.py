"""What an object costs against a ResourceQuota, and whether a quota lets it in: the pure
part of upstream's quota evaluators (``pkg/quota/v1/evaluator/core``: pods, services,
persistentvolumeclaims; ``pkg/quota/v1/generic``: object counts) and of quota admission's
``checkRequest`` (``staging/.../admission/plugin/resourcequota/controller.go``).

Shared by the ResourceQuota admission plugin (charge one write) and the
resourcequota-controller (recompute ``status.used`` from a namespace's objects), so both
count alike. No I/O: callers hand in objects and the time.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from fractions import Fraction
from typing import Any, Iterable, Mapping, Sequence

from fakekube.clock import parse_time
from fakekube.objects import resourcelist as rl
from fakekube.objects.kinds import (CONFIGMAPS, PERSISTENT_VOLUME_CLAIMS, PODS, REPLICATION_CONTROLLERS,
                                    SECRETS, SERVICES, Resource)
from fakekube.objects.pods import is_restartable_init_container
from fakekube.objects.resourcelist import ONE, ZERO, Amount, ResourceList

Obj = dict[str, Any]

RESOURCE_QUOTAS = Resource("", "resourcequotas")
STORAGE_CLASS_SUFFIX = ".storageclass.storage.k8s.io/"
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"

#: The quota names that existed before ``count/<resource>``; each evaluator charges both.
LEGACY_COUNTS: dict[Resource, str] = {
    PODS: "pods", SERVICES: "services", CONFIGMAPS: "configmaps", SECRETS: "secrets",
    REPLICATION_CONTROLLERS: "replicationcontrollers", RESOURCE_QUOTAS: "resourcequotas",
    PERSISTENT_VOLUME_CLAIMS: "persistentvolumeclaims",
}

#: ``podResources``: what the pod evaluator tracks (plus the hugepages and extended-resource forms).
POD_RESOURCES = ("count/pods", "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory",
                 "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods")
#: ``validationSet``: quota on these makes every container say them (``Constraints``).
POD_VALIDATION = frozenset(("cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"))
SERVICE_RESOURCES = ("services", "count/services", "services.loadbalancers", "services.nodeports")
PVC_RESOURCES = ("persistentvolumeclaims", "count/persistentvolumeclaims", "requests.storage")

#: The resources whose updates can change usage (the evaluators' ``Handles``); the rest count on create.
UPDATE_CHARGED = frozenset((SERVICES, PERSISTENT_VOLUME_CLAIMS))


class QuotaRefused(Exception):
    """A write the quotas refuse; the message is upstream's (the apiserver wraps it in a 403)."""


def count_name(resource: Resource) -> str:
    """``ObjectCountQuotaResourceNameFor``: ``count/<resource>`` or ``count/<resource>.<group>``."""
    return f"count/{resource.plural}.{resource.group}" if resource.group else f"count/{resource.plural}"


# -- usage ------------------------------------------------------------------------------

def usage(resource: Resource, obj: Obj, now: datetime) -> ResourceList:
    """What ``obj`` of ``resource`` charges (the evaluator's ``Usage``)."""
    if resource == PODS:
        return pod_usage(obj, now)
    if resource == SERVICES:
        return service_usage(obj)
    if resource == PERSISTENT_VOLUME_CLAIMS:
        return pvc_usage(obj)
    result = {count_name(resource): ONE}
    legacy = LEGACY_COUNTS.get(resource)
    if legacy:
        result[legacy] = ONE
    return result


def matching_resources(resource: Resource, names: Iterable[str]) -> list[str]:
    """The quota resource names (of ``names``) that ``resource``'s evaluator tracks, sorted."""
    return sorted(name for name in names if _tracks(resource, name))


def _tracks(resource: Resource, name: str) -> bool:
    if resource == PODS:
        return (name in POD_RESOURCES or name.startswith(("hugepages-", "requests.hugepages-"))
                or _is_extended_request(name))
    if resource == SERVICES:
        return name in SERVICE_RESOURCES
    if resource == PERSISTENT_VOLUME_CLAIMS:
        return name in PVC_RESOURCES or (STORAGE_CLASS_SUFFIX in name and name.endswith(
            ("/requests.storage", "/persistentvolumeclaims")))
    return name == count_name(resource) or name == LEGACY_COUNTS.get(resource)


def _is_extended_request(name: str) -> bool:
    """``requests.<domain>/<name>`` outside kubernetes.io: an extended resource's quota name."""
    rest = name[len("requests."):] if name.startswith("requests.") else ""
    return "/" in rest and not rest.split("/", 1)[0].endswith("kubernetes.io")


def is_pod_charged(pod: Mapping[str, Any], now: datetime) -> bool:
    """``QuotaV1Pod``: a terminal pod, or one past its deletion grace, costs no compute."""
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return False
    meta = pod.get("metadata") or {}
    deleting, grace = meta.get("deletionTimestamp"), meta.get("deletionGracePeriodSeconds")
    if not deleting or grace is None:
        return True
    deleted_at = parse_time(deleting)
    return deleted_at is None or now <= deleted_at + timedelta(seconds=float(grace))


def pod_usage(pod: Obj, now: datetime) -> ResourceList:
    """``PodUsageFunc``: ``count/pods`` always; the compute resources while the pod is charged."""
    result: ResourceList = {"count/pods": ONE}
    if not is_pod_charged(pod, now):
        return result
    return rl.add(result, compute_usage(pod_requests(pod), pod_limits(pod)))


def compute_usage(requests: Mapping[str, Amount], limits: Mapping[str, Amount]) -> ResourceList:
    """``podComputeUsageHelper``: a pod's (or a container's) requests and limits under quota names."""
    result: ResourceList = {"pods": ONE}
    for name in ("cpu", "memory", "ephemeral-storage"):
        if name in requests:
            result[name] = result[f"requests.{name}"] = requests[name]
        if name in limits:
            result[f"limits.{name}"] = limits[name]
    for name, value in requests.items():
        if name.startswith("hugepages-"):
            result[name] = result[f"requests.{name}"] = value
        elif "/" in name and not name.split("/", 1)[0].endswith("kubernetes.io"):
            result[f"requests.{name}"] = value
    return result


def _container_list(container: Mapping[str, Any], field: str) -> ResourceList:
    return rl.parse_list((container.get("resources") or {}).get(field))


def _pod_totals(pod: Mapping[str, Any], field: str) -> ResourceList:
    """``PodRequests``/``PodLimits``: app containers and sidecars summed, raised to any init
    container's peak (itself plus the sidecars before it), plus overhead (for limits, only on
    resources that have a limit)."""
    spec = pod.get("spec") or {}
    total: ResourceList = {}
    for container in spec.get("containers") or []:
        total = rl.add(total, _container_list(container, field))
    sidecars: ResourceList = {}
    peak: ResourceList = {}
    for container in spec.get("initContainers") or []:
        own = _container_list(container, field)
        if is_restartable_init_container(container):
            total, sidecars = rl.add(total, own), rl.add(sidecars, own)
            running = sidecars
        else:
            running = rl.add(own, sidecars)
        peak = rl.take_max(peak, running)
    total = rl.take_max(total, peak)
    overhead = rl.parse_list(spec.get("overhead"))
    if field == "limits":
        overhead = rl.mask(overhead, total)
    return rl.add(total, overhead)


def pod_requests(pod: Mapping[str, Any]) -> ResourceList:
    return _pod_totals(pod, "requests")


def pod_limits(pod: Mapping[str, Any]) -> ResourceList:
    return _pod_totals(pod, "limits")


def service_usage(service: Obj) -> ResourceList:
    """The service evaluator: one service; node ports for NodePort and LoadBalancer types
    (only explicit ones when ``allocateLoadBalancerNodePorts`` is false); one load balancer."""
    spec = service.get("spec") or {}
    ports = spec.get("ports") or []
    result: ResourceList = {"count/services": ONE, "services": ONE, "services.loadbalancers": ZERO,
                            "services.nodeports": ZERO}
    kind = spec.get("type")
    if kind == "NodePort":
        result["services.nodeports"] = Amount(Fraction(len(ports)))
    elif kind == "LoadBalancer":
        explicit = spec.get("allocateLoadBalancerNodePorts") is False
        count = sum(1 for port in ports if port.get("nodePort")) if explicit else len(ports)
        result["services.nodeports"] = Amount(Fraction(count))
        result["services.loadbalancers"] = ONE
    return result


def storage_class_of(pvc: Mapping[str, Any]) -> str:
    """``GetPersistentVolumeClaimClass``: the beta annotation, else ``spec.storageClassName``."""
    annotation = ((pvc.get("metadata") or {}).get("annotations") or {}).get(BETA_STORAGE_CLASS_ANNOTATION)
    return annotation if annotation is not None else (pvc.get("spec") or {}).get("storageClassName") or ""


def pvc_usage(pvc: Obj) -> ResourceList:
    """The claim evaluator: one claim, its storage request (or the allocated size when larger),
    both charged again under the claim's storage class."""
    result: ResourceList = {"persistentvolumeclaims": ONE, "count/persistentvolumeclaims": ONE}
    storage_class = storage_class_of(pvc)
    if storage_class:
        result[f"{storage_class}{STORAGE_CLASS_SUFFIX}persistentvolumeclaims"] = ONE
    requested = rl.parse_list(((pvc.get("spec") or {}).get("resources") or {}).get("requests")).get("storage")
    allocated = rl.parse_list((pvc.get("status") or {}).get("allocatedResources")).get("storage")
    if allocated is not None and (requested is None or allocated.value > requested.value):
        requested = allocated
    if requested is not None:
        result["requests.storage"] = requested
        if storage_class:
            result[f"{storage_class}{STORAGE_CLASS_SUFFIX}requests.storage"] = requested
    return result


# -- scopes ------------------------------------------------------------------------------

def scope_selectors(quota: Mapping[str, Any]) -> list[Obj]:
    """``getScopeSelectorsFromQuota``: ``spec.scopes`` as Exists requirements, then ``scopeSelector``."""
    spec = quota.get("spec") or {}
    found = [{"scopeName": scope, "operator": "Exists"} for scope in spec.get("scopes") or []]
    return found + list((spec.get("scopeSelector") or {}).get("matchExpressions") or [])


def matches_scope(resource: Resource, selector: Mapping[str, Any], obj: Mapping[str, Any]) -> bool:
    """The pod evaluator's ``podMatchesScopeFunc``; other evaluators match no scope."""
    if resource != PODS:
        return False
    scope, spec = selector.get("scopeName"), obj.get("spec") or {}
    if scope == "Terminating":
        return spec.get("activeDeadlineSeconds") is not None and spec["activeDeadlineSeconds"] >= 0
    if scope == "NotTerminating":
        return not (spec.get("activeDeadlineSeconds") is not None and spec["activeDeadlineSeconds"] >= 0)
    if scope in ("BestEffort", "NotBestEffort"):
        return _is_best_effort(obj) == (scope == "BestEffort")
    if scope == "PriorityClass":
        return _matches_values(selector, spec.get("priorityClassName") or "")
    return False


def _is_best_effort(pod: Mapping[str, Any]) -> bool:
    spec = pod.get("spec") or {}
    for container in list(spec.get("containers") or []) + list(spec.get("initContainers") or []):
        resources = container.get("resources") or {}
        for field in ("requests", "limits"):
            for name in ("cpu", "memory"):
                value = rl.parse_list(resources.get(field)).get(name)
                if value is not None and value.value != 0:
                    return False
    return True


def _matches_values(selector: Mapping[str, Any], value: str) -> bool:
    """A PriorityClass requirement as a label selector requirement over the class name."""
    operator, values = selector.get("operator"), selector.get("values") or []
    if operator == "In":
        return value in values
    if operator == "NotIn":
        return value not in values
    if operator == "Exists":
        return bool(value)
    if operator == "DoesNotExist":
        return not value
    return False


def quota_matches(resource: Resource, quota: Mapping[str, Any], obj: Mapping[str, Any]) -> bool:
    """``Matches``: the quota's ``status.hard`` tracks something of ``resource`` and every scope matches."""
    hard = (quota.get("status") or {}).get("hard") or {}
    if not matching_resources(resource, hard):
        return False
    return all(matches_scope(resource, selector, obj) for selector in scope_selectors(quota))


# -- admission ---------------------------------------------------------------------------

def pod_constraints(required: Iterable[str], pod: Mapping[str, Any]) -> str | None:
    """The pod evaluator's ``Constraints``: with cpu/memory under quota every container must
    say them; the message names what is missing and for which containers."""
    wanted = set(required) & POD_VALIDATION
    missing: dict[str, set[str]] = {}
    spec = pod.get("spec") or {}
    for container in list(spec.get("containers") or []) + list(spec.get("initContainers") or []):
        has = compute_usage(_container_list(container, "requests"), _container_list(container, "limits"))
        for name in wanted - has.keys():
            missing.setdefault(name, set()).add(container.get("name") or "")
    if not missing:
        return None
    parts = [f"{name} for: {','.join(sorted(missing[name]))}" for name in sorted(missing)]
    return "must specify " + "; ".join(parts)


def charge(resource: Resource, quotas: Sequence[Obj], new: Obj, old: Obj | None,
           now: datetime) -> list[tuple[Obj, ResourceList]]:
    """``checkRequest``: the quotas (of one namespace, in name order) a write of ``new``
    (``old``: the stored object of an update) changes, each with its new ``status.used``;
    raises :class:`QuotaRefused` with upstream's message when one would be exceeded, a pod
    lacks what a quota requires, or a quota's usage is not known yet."""
    interesting = []
    for quota in quotas:
        if not quota_matches(resource, quota, new):
            continue
        status = quota.get("status") or {}
        restricted = matching_resources(resource, status.get("hard") or {})
        name = quota["metadata"]["name"]
        problem = pod_constraints(restricted, new) if resource == PODS else None
        if problem:
            raise QuotaRefused(f"failed quota: {name}: {problem}")
        unknown = [r for r in restricted if r not in (status.get("used") or {})]
        if unknown:
            raise QuotaRefused(f"status unknown for quota: {name}, resources: {','.join(restricted)}")
        interesting.append(quota)
    if not interesting:
        return []
    delta = usage(resource, new, now)
    if old is not None:
        delta = rl.subtract_non_negative(delta, usage(resource, old, now))
    delta = rl.remove_zeros(delta)
    if not delta:
        return []
    return [_charged(quota, delta) for quota in interesting]


def _charged(quota: Obj, delta: ResourceList) -> tuple[Obj, ResourceList]:
    status = quota.get("status") or {}
    hard, used = rl.parse_list(status.get("hard")), rl.parse_list(status.get("used"))
    requested = rl.mask(delta, hard)
    new_used = rl.add(used, requested)
    over = rl.exceeded(rl.mask(new_used, requested), hard)
    if over:
        raise QuotaRefused(f"exceeded quota: {quota['metadata']['name']}, requested: "
                           f"{rl.pretty(rl.mask(requested, over))}, used: {rl.pretty(rl.mask(used, over))}, "
                           f"limited: {rl.pretty(rl.mask(hard, over))}")
    return quota, new_used


# -- the controller's recount ----------------------------------------------------------

def calculate_used(quota: Mapping[str, Any], hard: Mapping[str, Amount],
                   objects: Mapping[Resource, Sequence[Obj]], now: datetime) -> ResourceList:
    """``CalculateUsage``: for each evaluator tracking something in ``hard``, zero for each
    tracked name, plus the usage of every object of the namespace its scopes match."""
    used: ResourceList = {}
    selectors = scope_selectors(quota)
    for resource, items in objects.items():
        tracked = matching_resources(resource, hard)
        if not tracked:
            continue
        total: ResourceList = {name: ZERO for name in tracked}
        for obj in items:
            if all(matches_scope(resource, selector, obj) for selector in selectors):
                total = rl.add(total, usage(resource, obj, now))
        used.update(rl.mask(total, tracked))
    return used


def tracked_resource(name: str) -> Resource | None:
    """The resource a ``count/<resource>[.<group>]`` quota name counts (None for other names)."""
    if not name.startswith("count/"):
        return None
    plural, _, group = name[len("count/"):].partition(".")
    return Resource(group, plural)
