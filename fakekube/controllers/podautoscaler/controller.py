"""The HorizontalPodAutoscaler controller (upstream ``pkg/controller/podautoscaler``, 1.33).

Every 15 s of cluster time (``--horizontal-pod-autoscaler-sync-period``), and when the HPA
changes, a sync:

1. reads the target's Scale (``scaleTargetRef`` through the scale subresource): replicas
   and the pod selector; a target it cannot read is ``AbleToScale=False FailedGetScale``;
2. outside ``[minReplicas, maxReplicas]`` scales back inside; a target scaled to 0 is left
   alone (``ScalingActive=False ScalingDisabled``); otherwise asks each metric for a count
   (Resource and ContainerResource metrics, from the usage metrics-server reports: the
   containers' behaviour, docs/time-and-faults.md) and takes the highest;
3. applies the stabilization windows and scaling policies (:mod:`.behavior`), sets the
   three conditions (AbleToScale, ScalingActive, ScalingLimited) with upstream's texts;
4. writes the Scale when the count changes (``SuccessfulRescale`` "New size: N; reason: …")
   and the status (currentReplicas, desiredReplicas, currentMetrics, conditions, lastScaleTime).

Pods, Object and External metrics need a custom or external metrics API, which a fakekube
cluster does not serve: they fail as upstream fails without an adapter.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Iterable, Mapping

from fakekube.api.machinery.errors import ApiError
from fakekube.api.registry import SCALE
from fakekube.api.selectors.label_parser import parse_label_selector
from fakekube.clock import format_rfc3339
from fakekube.controllers.podautoscaler import behavior
from fakekube.controllers.podautoscaler.replicas import MetricError, Recommendation, resource_replicas
from fakekube.engine import Context
from fakekube.objects.conditions import condition, set_condition
from fakekube.objects.kinds import PODS, Resource
from fakekube.objects.quantity import format_decimal_si, milli_value
from fakekube.store import Change

Obj = dict[str, Any]

HPAS = Resource("autoscaling", "horizontalpodautoscalers")
COMPONENT = "horizontal-pod-autoscaler"
#: ``--horizontal-pod-autoscaler-sync-period``.
SYNC_PERIOD_S = 15.0
#: The API's default metric when ``spec.metrics`` is empty.
DEFAULT_METRIC: Obj = {"type": "Resource", "resource": {"name": "cpu", "target": {
    "type": "Utilization", "averageUtilization": 80}}}
NO_RESOURCE_METRICS = ("unable to fetch metrics from resource metrics API: the server could not find the "
                       "requested resource (get pods.metrics.k8s.io)")
_CUSTOM_METRICS = {"Pods": ("FailedGetPodsMetric", "pods", "custom.metrics.k8s.io"),
                   "Object": ("FailedGetObjectMetric", "object", "custom.metrics.k8s.io"),
                   "External": ("FailedGetExternalMetric", "external", "external.metrics.k8s.io")}


class HorizontalController:
    """Scales each HPA's target to what its metrics ask for.

    Upstream queues HPAs through a fixed-interval rate limiter: a new or changed HPA is
    synced one period after it was queued, then every period. Here each HPA is synced
    :data:`SYNC_PERIOD_S` after it is first seen, then every :data:`SYNC_PERIOD_S`; changes
    in between wait for that tick."""

    name = "horizontal-pod-autoscaler-controller"
    resources = (HPAS,)

    def __init__(self) -> None:
        #: Per ``namespace/name``: the HPA's uid, its next sync and its recent recommendations
        #: and scale changes (bounded: :mod:`.behavior`); dropped when the HPA goes.
        self._state: dict[str, tuple[str, datetime, behavior.History]] = {}

    def keys_for(self, change: Change) -> Iterable[str]:
        return [f"{change.namespace}/{change.name}"]

    def reconcile(self, key: str, ctx: Context) -> None:
        namespace, name = key.split("/", 1)
        hpa = ctx.get(HPAS, name, namespace)
        if hpa is None:
            self._state.pop(key, None)
            return
        uid = hpa["metadata"]["uid"]
        known = self._state.get(key)
        if known is None or known[0] != uid:
            history = behavior.History()  # maybeInitScaleDownStabilizationWindow
            history.recommendations.append((ctx.now, int((hpa.get("status") or {}).get("desiredReplicas") or 0)))
            known = self._state[key] = (uid, ctx.now + timedelta(seconds=SYNC_PERIOD_S), history)
        _, due, history = known
        if ctx.now < due:
            ctx.enqueue_at(key, due)
            return
        _Sync(hpa, history, ctx).run()
        self._state[key] = (uid, ctx.now + timedelta(seconds=SYNC_PERIOD_S), history)
        ctx.requeue_after(SYNC_PERIOD_S)


class _Sync:
    """One reconcile of one HPA (see the module docstring)."""

    def __init__(self, hpa: Obj, history: behavior.History, ctx: Context) -> None:
        self.hpa, self.history, self.ctx = hpa, history, ctx
        self.spec: Mapping[str, Any] = hpa.get("spec") or {}
        self.old: Mapping[str, Any] = hpa.get("status") or {}
        self.conditions: list[Obj] = [dict(c) for c in self.old.get("conditions") or []]
        self.metrics: list[Obj] = []
        self.last_scale: str | None = self.old.get("lastScaleTime")

    def run(self) -> None:
        ref = self.spec.get("scaleTargetRef") or {}
        rt = self.ctx.client.resource_for_kind(str(ref.get("apiVersion") or ""), str(ref.get("kind") or ""))
        try:
            if rt is None or SCALE not in rt.subresources:
                raise MetricError(f'no matches for kind "{ref.get("kind")}" in version "{ref.get("apiVersion")}"')
            scale = self.ctx.client.get_scale(rt, str(ref.get("name") or ""), self.hpa["metadata"]["namespace"])
        except (ApiError, MetricError) as error:
            text = error.message if isinstance(error, ApiError) else str(error)
            self._event("Warning", "FailedGetScale", text)
            self._condition("AbleToScale", "False", "FailedGetScale",
                            f"the HPA controller was unable to get the target's current scale: {text}")
            self.metrics = list(self.old.get("currentMetrics") or [])  # upstream changes only the condition
            self._write(int(self.old.get("currentReplicas") or 0), int(self.old.get("desiredReplicas") or 0))
            return
        self._condition("AbleToScale", "True", "SucceededGetScale",
                        "the HPA controller was able to get the target's current scale")
        current = int((scale.get("spec") or {}).get("replicas") or 0)
        desired = self._desired(current, str((scale.get("status") or {}).get("selector") or ""))
        if desired is None:
            self._write(current, int(self.old.get("desiredReplicas") or 0))
            return
        replicas, reason = desired
        if replicas != current:
            self._rescale(rt, str(ref.get("name") or ""), current, replicas, reason)
        self._write(current, replicas)

    # -- deciding --------------------------------------------------------------------------
    def _desired(self, current: int, selector: str) -> tuple[int, str] | None:
        """(replicas wanted, the rescale reason), or None when the metrics cannot say."""
        minimum, maximum = int(self.spec.get("minReplicas", 1) or 0), int(self.spec.get("maxReplicas") or 0)
        if current == 0 and minimum != 0:
            self._condition("ScalingActive", "False", "ScalingDisabled",
                            "scaling is disabled since the replica count of the target is zero")
            return 0, ""
        if current > maximum:
            return maximum, "Current number of replicas above Spec.MaxReplicas"
        if current < minimum:
            return minimum, "Current number of replicas below Spec.MinReplicas"
        proposal = self._from_metrics(current, selector)
        if proposal is None:
            return None
        wanted, metric_name = proposal
        replicas = self._normalized(current, wanted, minimum, maximum)
        return replicas, (f"{metric_name} above target" if replicas > current else "All metrics below target")

    def _from_metrics(self, current: int, selector: str) -> tuple[int, str] | None:
        """``computeReplicasForMetrics``: the highest proposal of the valid metrics."""
        specs = list(self.spec.get("metrics") or [DEFAULT_METRIC])
        best, best_name, errors = 0, "", []
        for spec in specs:
            try:
                replicas, name = self._metric(spec, current, selector)
            except _MetricFailure as failure:
                errors.append(failure)
                continue
            if best == 0 or replicas > best:
                best, best_name = replicas, name
        if errors and (len(errors) >= len(specs) or best < current):
            first = errors[0]
            self._condition("ScalingActive", "False", first.reason,
                            f"the HPA was unable to compute the replica count: {first.detail}")
            self._event("Warning", "FailedComputeMetricsReplicas",
                        f"invalid metrics ({len(errors)} invalid out of {len(specs)}), first error is: {first}")
            return None
        self._condition("ScalingActive", "True", "ValidMetricFound",
                        f"the HPA was able to successfully calculate a replica count from {best_name}")
        return best, best_name

    def _metric(self, spec: Mapping[str, Any], current: int, selector: str) -> tuple[int, str]:
        kind = spec.get("type")
        if kind in _CUSTOM_METRICS:
            reason, what, api = _CUSTOM_METRICS[str(kind)]
            source = spec.get(str(kind)[0].lower() + str(kind)[1:]) or {}
            name = ((source.get("metric") or {}).get("name")) or ""
            detail = f"unable to get {what} metric {name}: no {api} API registered"
            self._event("Warning", reason, detail)
            raise _MetricFailure(reason, detail, f"failed to get {what} metric value: {detail}")
        container = None
        source = spec.get("resource") or {}
        if kind == "ContainerResource":
            source = spec.get("containerResource") or {}
            container = str(source.get("container") or "")
        resource, target = str(source.get("name") or ""), source.get("target") or {}
        label = f"{resource} container resource" if container is not None else f"{resource} resource"
        try:
            found = self._resource(current, resource, target, selector, container)
        except MetricError as error:
            utilization = target.get("type") == "Utilization"
            detail = f"failed to get {resource} utilization: {error}" if utilization else str(error)
            reason = "FailedGetContainerResourceMetric" if container is not None else "FailedGetResourceMetric"
            self._event("Warning", reason, detail)
            raise _MetricFailure(reason, detail, f"failed to get {label} metric value: {detail}") from None
        self._metric_status(kind or "Resource", resource, container, found)
        if found.utilization is not None:
            return found.replicas, f"{label} utilization (percentage of request)"
        return found.replicas, label

    def _resource(self, current: int, resource: str, target: Mapping[str, Any], selector: str,
                  container: str | None) -> Recommendation:
        usage_reader = self.ctx.usage
        if usage_reader is None:
            raise MetricError(f"unable to get metrics for resource {resource}: {NO_RESOURCE_METRICS}")
        namespace = self.hpa["metadata"]["namespace"]
        matcher = parse_label_selector(selector) if selector else None
        pods = [pod for pod in self.ctx.list(PODS, namespace)
                if matcher is not None and matcher.matches((pod["metadata"].get("labels") or {}))]
        usage = usage_reader.pod_usage([(namespace, pod["metadata"]["name"]) for pod in pods])
        if not usage:
            raise MetricError(f"unable to get metrics for resource {resource}: no metrics returned from resource "
                              f"metrics API")
        utilization = target.get("averageUtilization") if target.get("type") == "Utilization" else None
        average = target.get("averageValue")
        average_milli = milli_value(average) if average is not None else None
        return resource_replicas(current, utilization, average_milli, resource, pods, usage, self.ctx.now, container)

    def _normalized(self, current: int, wanted: int, minimum: int, maximum: int) -> int:
        """``normalizeDesiredReplicasWithBehaviors``."""
        rules = self.spec.get("behavior")
        stable, reason, message = behavior.stabilized(self.history, rules, current, wanted, self.ctx.now)
        if stable != wanted:
            self._condition("AbleToScale", "True", reason, message)
        else:
            self._condition("AbleToScale", "True", "ReadyForNewScale", "recommended size matches current size")
        limited = behavior.rate_limited(self.history, rules, current, stable, minimum, maximum, self.ctx.now)
        self._condition("ScalingLimited", "False" if limited.replicas == stable else "True", limited.reason,
                        limited.message)
        return limited.replicas

    # -- writing ---------------------------------------------------------------------------
    def _rescale(self, rt: Any, name: str, current: int, replicas: int, reason: str) -> None:
        try:
            self.ctx.client.update_scale(rt, name, self.hpa["metadata"]["namespace"], replicas)
        except ApiError as error:
            self._condition("AbleToScale", "False", "FailedUpdateScale",
                            f"the HPA controller was unable to update the target scale: {error.message}")
            self._event("Warning", "FailedRescale", f"New size: {replicas}; reason: {reason}; error: {error.message}")
            return
        self._condition("AbleToScale", "True", "SucceededRescale",
                        f"the HPA controller was able to update the target scale to {replicas}")
        self._event("Normal", "SuccessfulRescale", f"New size: {replicas}; reason: {reason}")
        behavior.record_scale(self.history, current, replicas, self.ctx.now)
        self.last_scale = format_rfc3339(self.ctx.now)

    def _metric_status(self, kind: str, resource: str, container: str | None, found: Recommendation) -> None:
        current: Obj = {"averageValue": format_decimal_si(found.average_milli, -3)}
        if found.utilization is not None:
            current["averageUtilization"] = found.utilization
        if container is not None:
            self.metrics.append({"type": kind, "containerResource": {"name": resource, "container": container,
                                                                     "current": current}})
        else:
            self.metrics.append({"type": kind, "resource": {"name": resource, "current": current}})

    def _condition(self, kind: str, status: str, reason: str, message: str) -> None:
        """``setCondition``: the transition time moves only when the status changes (an HPA
        condition is a metav1.Condition without observedGeneration)."""
        self.conditions, _ = set_condition(self.conditions, condition(kind, status, reason, message), self.ctx.now)

    def _write(self, current: int, desired: int) -> None:
        status: Obj = {}
        if self.hpa["metadata"].get("generation"):
            status["observedGeneration"] = self.hpa["metadata"]["generation"]
        if self.last_scale:
            status["lastScaleTime"] = self.last_scale
        if current:
            status["currentReplicas"] = current
        status["desiredReplicas"] = desired
        if self.metrics:
            status["currentMetrics"] = self.metrics
        order = {"AbleToScale": 0, "ScalingActive": 1, "ScalingLimited": 2}
        status["conditions"] = sorted(self.conditions, key=lambda c: order.get(str(c.get("type")), 3))
        if status != self.old:
            self.ctx.client.update_status(HPAS, dict(self.hpa, status=status))

    def _event(self, event_type: str, reason: str, message: str) -> None:
        self.ctx.record_event(self.hpa, "HorizontalPodAutoscaler", event_type, reason, message, COMPONENT,
                              "autoscaling/v2")


class _MetricFailure(Exception):
    """A metric that could not be computed: its ScalingActive reason, the condition's detail,
    and ``str()`` the text the FailedComputeMetricsReplicas event quotes."""

    def __init__(self, reason: str, detail: str, text: str) -> None:
        super().__init__(text)
        self.reason, self.detail = reason, detail


