"""autoscaling/v1 HorizontalPodAutoscalers: a view of the autoscaling/v2 ones (one store).

Upstream stores HPAs once (as autoscaling/v2) and serves v1 by conversion
(``pkg/apis/autoscaling/v1/conversion.go``): v1's ``targetCPUUtilizationPercentage`` is v2's
Resource ``cpu`` metric with a Utilization target, and ``currentCPUUtilizationPercentage``
its current average utilization. Defaulting and validation are v2's (a v1 HPA without a CPU
target reads back with v2's default, 80 %). Simplified: upstream also carries the metrics,
current metrics, conditions and behavior v1 cannot express in ``autoscaling.alpha.kubernetes.io/*``
annotations; fakekube does not, so a v1 write keeps only the CPU metric.
"""

from __future__ import annotations

from typing import Any

from fakekube.api.registry import STATUS, ResourceType
from fakekube.api.table import HORIZONTAL_POD_AUTOSCALER_TABLE, TableSpec
from fakekube.api.types._util import Obj
from fakekube.api.types.other import HorizontalPodAutoscalerStrategy

HPA_STORAGE = ("autoscaling", "horizontalpodautoscalers")


def _is_cpu_utilization(metric: Obj) -> bool:
    resource = metric.get("resource") or {}
    return (metric.get("type") == "Resource" and resource.get("name") == "cpu"
            and (resource.get("target") or {}).get("type") == "Utilization")


def _put(out: Obj, name: str, value: Any) -> None:
    if value is not None:
        out[name] = value


def v2_to_v1(hpa: Obj) -> Obj:
    """A stored (autoscaling/v2) HPA as autoscaling/v1 shows it."""
    spec, status = hpa.get("spec") or {}, hpa.get("status")
    v1_spec: Obj = {"scaleTargetRef": spec.get("scaleTargetRef") or {}}
    _put(v1_spec, "minReplicas", spec.get("minReplicas"))
    v1_spec["maxReplicas"] = spec.get("maxReplicas", 0)
    cpu = next((m for m in spec.get("metrics") or [] if _is_cpu_utilization(m)), None)
    if cpu is not None:
        _put(v1_spec, "targetCPUUtilizationPercentage", cpu["resource"]["target"].get("averageUtilization"))
    out: Obj = {"metadata": hpa.get("metadata") or {}, "spec": v1_spec}
    if status is not None:
        out["status"] = _v1_status(status)
    return out


def _v1_status(status: Obj) -> Obj:
    out: Obj = {}
    _put(out, "observedGeneration", status.get("observedGeneration"))
    _put(out, "lastScaleTime", status.get("lastScaleTime"))
    out["currentReplicas"] = status.get("currentReplicas", 0)
    out["desiredReplicas"] = status.get("desiredReplicas", 0)
    for metric in status.get("currentMetrics") or []:
        resource = metric.get("resource") or {}
        if metric.get("type") == "Resource" and resource.get("name") == "cpu":
            _put(out, "currentCPUUtilizationPercentage", (resource.get("current") or {}).get("averageUtilization"))
    return out


def v1_to_v2(hpa: Obj) -> Obj:
    """An autoscaling/v1 HPA in the stored (autoscaling/v2) shape."""
    spec = hpa.get("spec") or {}
    v2_spec: Obj = {"scaleTargetRef": spec.get("scaleTargetRef") or {}}
    _put(v2_spec, "minReplicas", spec.get("minReplicas"))
    v2_spec["maxReplicas"] = spec.get("maxReplicas", 0)
    target = spec.get("targetCPUUtilizationPercentage")
    if target is not None:
        v2_spec["metrics"] = [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": target}}}]
    out: Obj = {"metadata": hpa.get("metadata") or {}, "spec": v2_spec}
    status = hpa.get("status")
    if status is not None:
        out["status"] = _v2_status(status)
    return out


def _v2_status(status: Obj) -> Obj:
    out: Obj = {}
    _put(out, "observedGeneration", status.get("observedGeneration"))
    _put(out, "lastScaleTime", status.get("lastScaleTime"))
    out["currentReplicas"] = status.get("currentReplicas", 0)
    out["desiredReplicas"] = status.get("desiredReplicas", 0)
    current = status.get("currentCPUUtilizationPercentage")
    if current is not None:
        out["currentMetrics"] = [{"type": "Resource", "resource": {
            "name": "cpu", "current": {"averageUtilization": current}}}]
    return out


class HorizontalPodAutoscalerV1Strategy(HorizontalPodAutoscalerStrategy):
    """v2's rules, converting at the API's edge."""

    def to_storage(self, obj: Obj) -> Obj:
        return v1_to_v2(obj)

    def from_storage(self, obj: Obj) -> Obj:
        return v2_to_v1(obj)


#: kubectl's columns, computed from the v2 shape as upstream's printer reads the internal type.
V1_TABLE = TableSpec(HORIZONTAL_POD_AUTOSCALER_TABLE.columns,
                     lambda hpa, now: HORIZONTAL_POD_AUTOSCALER_TABLE.cells(v1_to_v2(hpa), now))

HORIZONTAL_POD_AUTOSCALERS_V1 = ResourceType(
    "autoscaling", "v1", "HorizontalPodAutoscaler", "horizontalpodautoscalers", namespaced=True, short_names=("hpa",),
    categories=("all",), subresources=(STATUS,), strategy=HorizontalPodAutoscalerV1Strategy(),
    table=V1_TABLE, stored_as=HPA_STORAGE,
)
