"""LimitRange rules for pods and claims: the pure part of upstream's LimitRanger admission
plugin (``plugin/pkg/admission/limitranger/admission.go``).

``apply_defaults`` is its mutating half (``PodMutateLimitFunc``: each container and init
container gets the Container-type ``default`` limits and ``defaultRequest`` requests it
does not set, recorded in the ``kubernetes.io/limit-ranger`` annotation);
``pod_problems`` and ``pvc_problems`` its validating half (min, max and
maxLimitRequestRatio per Container and per Pod; storage min/max per claim), with
upstream's messages. Upstream walks Go maps here, so the order of several problems is
random there; fakekube takes resource names in sorted order.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from fakekube.objects import resourcelist as rl
from fakekube.objects.quota import pod_limits, pod_requests
from fakekube.objects.resourcelist import Amount, ResourceList

Obj = dict[str, Any]

ANNOTATION = "kubernetes.io/limit-ranger"
#: ``resource.MaxMilliValue``: above it upstream compares whole units instead of thousandths.
MAX_MILLI_VALUE = (2**63 - 1) // 1000

Constraint = Callable[[str, str, Amount, ResourceList, ResourceList], str | None]


def _items(limit_range: Mapping[str, Any], kind: str) -> list[Obj]:
    return [item for item in (limit_range.get("spec") or {}).get("limits") or [] if item.get("type") == kind]


# -- mutating ----------------------------------------------------------------------------

def container_defaults(limit_range: Mapping[str, Any]) -> tuple[Obj, Obj]:
    """``defaultContainerResourceRequirements``: (requests, limits) from the Container items."""
    requests: Obj = {}
    limits: Obj = {}
    for item in _items(limit_range, "Container"):
        requests.update(item.get("defaultRequest") or {})
        limits.update(item.get("default") or {})
    return requests, limits


def apply_defaults(pod: Obj, limit_range: Mapping[str, Any]) -> None:
    """``PodMutateLimitFunc``: fill what each container leaves unset, edit ``pod`` in place."""
    requests, limits = container_defaults(limit_range)
    if not requests and not limits:
        return
    spec = pod.get("spec") or {}
    notes: list[str] = []
    for field, label in (("containers", "container"), ("initContainers", "init container")):
        for container in spec.get(field) or []:
            notes += _merge_container(container, requests, limits, label)
    if notes:
        meta = pod.setdefault("metadata", {})
        meta["annotations"] = dict(meta.get("annotations") or {})
        meta["annotations"][ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)


def _merge_container(container: Obj, requests: Obj, limits: Obj, label: str) -> list[str]:
    """``mergeContainerResources``: the defaults a container lacks, and the annotation's notes."""
    resources = container["resources"] = dict(container.get("resources") or {})
    have_limits = resources["limits"] = dict(resources.get("limits") or {})
    have_requests = resources["requests"] = dict(resources.get("requests") or {})
    set_limits = sorted(name for name in limits if name not in have_limits)
    set_requests = sorted(name for name in requests if name not in have_requests)
    for name in set_limits:
        have_limits[name] = limits[name]
    for name in set_requests:
        have_requests[name] = requests[name]
    for field in ("limits", "requests"):
        if not resources[field]:
            del resources[field]
    notes = []
    if set_requests:
        notes.append(f"{', '.join(set_requests)} request for {label} {container.get('name', '')}")
    if set_limits:
        notes.append(f"{', '.join(set_limits)} limit for {label} {container.get('name', '')}")
    return notes


# -- validating --------------------------------------------------------------------------

def _values(request: Amount | None, limit: Amount | None, enforced: Amount) -> tuple[int, int, int]:
    """``requestLimitEnforcedValues``: thousandths when all fit, else whole units (rounded up)."""
    def whole(a: Amount | None) -> int:
        return rl.ceil_int(a.value) if a is not None else 0

    def milli(a: Amount | None) -> int:
        return rl.ceil_int(a.value * 1000) if a is not None else 0

    values = (whole(request), whole(limit), whole(enforced))
    if all(v <= MAX_MILLI_VALUE for v in values):
        return milli(request), milli(limit), milli(enforced)
    return values


def min_constraint(kind: str, name: str, enforced: Amount, requests: ResourceList, limits: ResourceList) -> str | None:
    req, lim = requests.get(name), limits.get(name)
    observed_req, observed_lim, bound = _values(req, lim, enforced)
    if req is None:
        return f"minimum {name} usage per {kind} is {enforced}.  No request is specified"
    if observed_req < bound:
        return f"minimum {name} usage per {kind} is {enforced}, but request is {req}"
    if lim is not None and observed_lim < bound:
        return f"minimum {name} usage per {kind} is {enforced}, but limit is {lim}"
    return None


def max_constraint(kind: str, name: str, enforced: Amount, requests: ResourceList, limits: ResourceList) -> str | None:
    req, lim = requests.get(name), limits.get(name)
    observed_req, observed_lim, bound = _values(req, lim, enforced)
    if lim is None:
        return f"maximum {name} usage per {kind} is {enforced}.  No limit is specified"
    if observed_lim > bound:
        return f"maximum {name} usage per {kind} is {enforced}, but limit is {lim}"
    if req is not None and observed_req > bound:
        return f"maximum {name} usage per {kind} is {enforced}, but request is {req}"
    return None


def max_request_constraint(kind: str, name: str, enforced: Amount, requests: ResourceList,
                           limits: ResourceList) -> str | None:
    """``maxRequestConstraint``: for claims, whose limits are not user input."""
    req = requests.get(name)
    observed_req, _, bound = _values(req, None, enforced)
    if req is None:
        return f"maximum {name} usage per {kind} is {enforced}.  No request is specified"
    if observed_req > bound:
        return f"maximum {name} usage per {kind} is {enforced}, but request is {req}"
    return None


def ratio_constraint(kind: str, name: str, enforced: Amount, requests: ResourceList,
                     limits: ResourceList) -> str | None:
    """``limitRequestRatioConstraint``; the ratio prints as Go's ``%f``."""
    req, lim = requests.get(name), limits.get(name)
    observed_req, observed_lim, _ = _values(req, lim, enforced)
    if req is None or observed_req == 0:
        return f"{name} max limit to request ratio per {kind} is {enforced}, but no request is specified or request is 0"
    if lim is None or observed_lim == 0:
        return f"{name} max limit to request ratio per {kind} is {enforced}, but no limit is specified or limit is 0"
    ratio = observed_lim / observed_req
    enforced_whole = rl.ceil_int(enforced.value)
    exceeded = (ratio * 1000 > rl.ceil_int(enforced.value * 1000) if enforced_whole <= MAX_MILLI_VALUE
                else ratio > enforced_whole)
    if exceeded:
        return f"{name} max limit to request ratio per {kind} is {enforced}, but provided ratio is {ratio:f}"
    return None


_CHECKS: tuple[tuple[str, Constraint], ...] = (
    ("min", min_constraint), ("max", max_constraint), ("maxLimitRequestRatio", ratio_constraint))


def _check(item: Mapping[str, Any], kind: str, requests: ResourceList, limits: ResourceList) -> list[str]:
    found = []
    for field, constraint in _CHECKS:
        for name, enforced in sorted(rl.parse_list(item.get(field)).items()):
            problem = constraint(kind, name, enforced, requests, limits)
            if problem:
                found.append(problem)
    return found


def pod_problems(pod: Mapping[str, Any], limit_range: Mapping[str, Any]) -> list[str]:
    """``PodValidateLimitFunc``: every container against the Container items, the pod's totals
    (``podRequests``/``podLimits``) against the Pod items."""
    spec = pod.get("spec") or {}
    found: list[str] = []
    for item in (limit_range.get("spec") or {}).get("limits") or []:
        if item.get("type") == "Container":
            for container in list(spec.get("containers") or []) + list(spec.get("initContainers") or []):
                resources = container.get("resources") or {}
                found += _check(item, "Container", rl.parse_list(resources.get("requests")),
                                rl.parse_list(resources.get("limits")))
        elif item.get("type") == "Pod":
            found += _check(item, "Pod", _without_overhead(pod, pod_requests), _without_overhead(pod, pod_limits))
    return found


def _without_overhead(pod: Mapping[str, Any], total: Callable[[Mapping[str, Any]], ResourceList]) -> ResourceList:
    """LimitRanger's own podRequests/podLimits leave ``spec.overhead`` out."""
    spec = dict(pod.get("spec") or {})
    spec.pop("overhead", None)
    return total(dict(pod, spec=spec))


def pvc_problems(pvc: Mapping[str, Any], limit_range: Mapping[str, Any]) -> list[str]:
    """``PersistentVolumeClaimValidateLimitFunc``: storage requests against min and max."""
    requests = rl.parse_list(((pvc.get("spec") or {}).get("resources") or {}).get("requests"))
    found: list[str] = []
    for item in _items(limit_range, "PersistentVolumeClaim"):
        for name, enforced in sorted(rl.parse_list(item.get("min")).items()):
            problem = min_constraint("PersistentVolumeClaim", name, enforced, requests, {})
            if problem:
                found.append(problem)
        for name, enforced in sorted(rl.parse_list(item.get("max")).items()):
            problem = max_request_constraint("PersistentVolumeClaim", name, enforced, requests, {})
            if problem:
                found.append(problem)
    return found


def aggregate(problems: list[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one message as is, several as ``[a, b]``
    (repeats dropped)."""
    unique = list(dict.fromkeys(problems))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"
