"""Printers of the remaining groups: RBAC, autoscaling, policy, scheduling, coordination."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fakekube.api.table.cells import NONE, UNSET, age_cell, created_at_cell, get, meta, name_cell, simple
from fakekube.api.table.columns import AGE, CREATED_AT, NAME, Cells, Obj, TableSpec, col, doc
from fakekube.api.table.duration import UNKNOWN


def _int_or_string(value: Any) -> str:
    """An ``intstr.IntOrString`` pointer: "N/A" when nil."""
    return "N/A" if value is None else str(value)


def _subjects(binding: Obj) -> Cells:
    """USERS, GROUPS and SERVICEACCOUNTS (``namespace:name``) of a binding."""
    users, groups, sas = [], [], []
    for subject in binding.get("subjects") or []:
        kind = subject.get("kind")
        if kind == "User":
            users.append(subject.get("name", ""))
        elif kind == "Group":
            groups.append(subject.get("name", ""))
        elif kind == "ServiceAccount":
            sas.append(f"{subject.get('namespace', '')}:{subject.get('name', '')}")
    return [", ".join(users), ", ".join(groups), ", ".join(sas)]


def _binding_cells(binding: Obj, now: datetime) -> Cells:
    ref = binding.get("roleRef") or {}
    return [meta(binding, "name", ""), f"{ref.get('kind', '')}/{ref.get('name', '')}", age_cell(binding, now),
            *_subjects(binding)]


def _hpa_cells(hpa: Obj, now: datetime) -> Cells:
    spec, st = hpa.get("spec") or {}, hpa.get("status") or {}
    ref = spec.get("scaleTargetRef") or {}
    min_pods = spec.get("minReplicas")
    return [meta(hpa, "name", ""), f"{ref.get('kind', '')}/{ref.get('name', '')}", hpa_targets(hpa),
            UNSET if min_pods is None else str(min_pods), spec.get("maxReplicas", 0), st.get("currentReplicas", 0),
            age_cell(hpa, now)]


def _resource_metric(metric: Obj, current: Obj) -> str:
    """One Resource metric: "cpu: 50%/80%" for utilization, "cpu: 200m/500m" for values."""
    resource = metric.get("resource") or {}
    target = resource.get("target") or {}
    cur = (current.get("resource") or {}).get("current", {})
    if target.get("averageUtilization") is not None:
        now_text = f"{cur['averageUtilization']}%" if cur.get("averageUtilization") is not None else UNKNOWN
        return f"{resource.get('name', '')}: {now_text}/{target['averageUtilization']}%"
    return f"{resource.get('name', '')}: {cur.get('averageValue', UNKNOWN)}/{target.get('averageValue', '')}"


def hpa_targets(hpa: Obj) -> str:
    """A simplified formatHPAMetrics: resource metrics as "cpu: 50%/80%"; others "<current>/<target>"."""
    specs = get(hpa, "spec", "metrics", default=[])
    if not specs:
        return NONE
    current = get(hpa, "status", "currentMetrics", default=[])
    parts = []
    for index, metric in enumerate(specs[:3]):
        if metric.get("type") == "Resource":
            parts.append(_resource_metric(metric, current[index] if index < len(current) else {}))
        else:
            parts.append(f"{UNKNOWN}/{UNKNOWN}")
    text = ", ".join(parts)
    return text + (f" + {len(specs) - 3} more..." if len(specs) > 3 else "")


ROLE_BINDING_TABLE = TableSpec((
    NAME,
    col("Role", description="RoleRef can reference a Role in the current namespace or a ClusterRole in the global "
                            "namespace. If the RoleRef cannot be resolved, the Authorizer must return an error."),
    AGE,
    col("Users", description="Users in the roleBinding", priority=1),
    col("Groups", description="Groups in the roleBinding", priority=1),
    col("ServiceAccounts", description="ServiceAccounts in the roleBinding", priority=1),
), _binding_cells)
CLUSTER_ROLE_BINDING_TABLE = TableSpec((
    NAME,
    col("Role", description="RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef "
                            "cannot be resolved, the Authorizer must return an error."),
    AGE,
    col("Users", description="Users in the clusterRoleBinding", priority=1),
    col("Groups", description="Groups in the clusterRoleBinding", priority=1),
    col("ServiceAccounts", description="ServiceAccounts in the clusterRoleBinding", priority=1),
), _binding_cells)
ROLE_TABLE = TableSpec((NAME, CREATED_AT), simple(name_cell, created_at_cell))

HORIZONTAL_POD_AUTOSCALER_TABLE = TableSpec((
    NAME,
    doc("Reference", "autoscaling.v2.HorizontalPodAutoscalerSpec", "scaleTargetRef"),
    doc("Targets", "autoscaling.v2.HorizontalPodAutoscalerSpec", "metrics"),
    doc("MinPods", "autoscaling.v2.HorizontalPodAutoscalerSpec", "minReplicas"),
    doc("MaxPods", "autoscaling.v2.HorizontalPodAutoscalerSpec", "maxReplicas"),
    doc("Replicas", "autoscaling.v2.HorizontalPodAutoscalerStatus", "currentReplicas"),
    AGE,
), _hpa_cells)

POD_DISRUPTION_BUDGET_TABLE = TableSpec((
    NAME,
    col("Min Available", description="The minimum number of pods that must be available."),
    col("Max Unavailable", description="The maximum number of pods that may be unavailable."),
    col("Allowed Disruptions", "integer", "Calculated number of pods that may be disrupted at this time."),
    AGE,
), simple(name_cell, lambda o, n: _int_or_string(get(o, "spec", "minAvailable")),
          lambda o, n: _int_or_string(get(o, "spec", "maxUnavailable")),
          lambda o, n: get(o, "status", "disruptionsAllowed", default=0), age_cell))

PRIORITY_CLASS_TABLE = TableSpec((
    NAME,
    doc("Value", "scheduling.v1.PriorityClass", "value", "integer"),
    doc("Global-Default", "scheduling.v1.PriorityClass", "globalDefault", "boolean"),
    AGE,
    doc("PreemptionPolicy", "scheduling.v1.PriorityClass", "preemptionPolicy"),
), simple(name_cell, lambda o, n: o.get("value", 0), lambda o, n: bool(o.get("globalDefault")), age_cell,
          lambda o, n: o.get("preemptionPolicy") or UNSET))

LEASE_TABLE = TableSpec((
    NAME,
    doc("Holder", "coordination.v1.LeaseSpec", "holderIdentity"),
    AGE,
), simple(name_cell, lambda o, n: get(o, "spec", "holderIdentity", default=""), age_cell))


def _apiservice_service(obj: Obj) -> str:
    """SERVICE: ``Local`` for a group served by this apiserver, else ``namespace/name``."""
    service = get(obj, "spec", "service")
    return f"{service.get('namespace', '')}/{service.get('name', '')}" if service else "Local"


def _apiservice_available(obj: Obj) -> str:
    """AVAILABLE as kube-aggregator prints it: ``True``, ``False (Reason)``, or ``Unknown``."""
    for condition in get(obj, "status", "conditions", default=None) or []:
        if condition.get("type") == "Available":
            status = condition.get("status", "")
            return status if status == "True" else f"{status} ({condition.get('reason', '')})"
    return "Unknown"


API_SERVICE_TABLE = TableSpec((
    NAME,
    col("Service", description="The reference to the service that hosts this API endpoint."),
    col("Available", description="Whether this service is available."),
    AGE,
), simple(name_cell, lambda o, n: _apiservice_service(o), lambda o, n: _apiservice_available(o), age_cell))
