"""Strategies for the small API groups: autoscaling, networking, policy, RBAC,
storage, scheduling, coordination, discovery and apiregistration."""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FieldError, go_json_struct
from fakekube.api.machinery.validation import (
    is_dns1035_label,
    go_strings,
    is_dns1123_subdomain,
    validate_label_name,
    is_wildcard_dns1123_subdomain,
    name_is_path_segment,
    validate_label_selector,
)
from fakekube.api.registry import STATUS, ResourceType, Strategy, WriteContext
from fakekube.api.table import (
    API_SERVICE_TABLE,
    CLUSTER_ROLE_BINDING_TABLE,
    ROLE_BINDING_TABLE,
    ENDPOINT_SLICE_TABLE,
    HORIZONTAL_POD_AUTOSCALER_TABLE,
    INGRESS_TABLE,
    LEASE_TABLE,
    NETWORK_POLICY_TABLE,
    POD_DISRUPTION_BUDGET_TABLE,
    PRIORITY_CLASS_TABLE,
    ROLE_TABLE,
    STORAGE_CLASS_TABLE,
)
from fakekube.api.types._net import (
    endpoint_ip_errors,
    legacy_cidr_errors,
    legacy_ip_errors,
    parse_cidr_sloppy,
    parse_ip_sloppy,
)
from fakekube.api.types._resources import nonnegative_quantity
from fakekube.api.types._util import (
    GoLiteral,
    Obj,
    ensure_dict,
    immutable,
    label_selector_json,
    non_negative,
    parse_quantity,
    port_errors,
    required_one_of,
)
from fakekube.clock import format_rfc3339
from fakekube.api.types.core_pods import port_name_errors
from fakekube.objects.priority import SYSTEM_PRIORITY_CLASSES
from fakekube.objects.resourcelist import canonical

RBAC_GROUP = "rbac.authorization.k8s.io"
MAX_USER_PRIORITY = 1_000_000_000
_PERCENT_RE = re.compile(r"^[0-9]+%$")


class LeaseStrategy(Strategy):
    """Leases: positive durations, non-negative transitions."""

    allow_unconditional_update = False  # AllowUnconditionalUpdate: a PUT needs a resourceVersion

    def validate(self, obj: Obj) -> list[FieldError]:
        spec = obj.get("spec") or {}
        errs: list[FieldError] = []
        duration = spec.get("leaseDurationSeconds")
        if duration is not None and duration <= 0:
            errs.append(errors.invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
        if spec.get("leaseTransitions") is not None:
            errs += non_negative(spec["leaseTransitions"], "spec.leaseTransitions")
        return errs


LEASES = ResourceType(
    "coordination.k8s.io", "v1", "Lease", "leases", namespaced=True, strategy=LeaseStrategy(), table=LEASE_TABLE,
    create_on_update=True,
)


def _int_or_percent_errors(value: Any, path: str) -> list[FieldError]:
    if isinstance(value, int) and not isinstance(value, bool):
        return non_negative(value, path)
    if isinstance(value, str) and not _PERCENT_RE.match(value):
        return [errors.invalid(path, value, "a valid percent string must be a numeric string followed by an ending '%' "
                                            "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")]
    if isinstance(value, str) and int(value[:-1]) > 100:
        return [errors.invalid(path, value, "must not be greater than 100%")]
    return []


class PodDisruptionBudgetStrategy(Strategy):
    """PDBs: minAvailable xor maxUnavailable; status counters start at zero."""

    allow_unconditional_update = False  # AllowUnconditionalUpdate: a PUT needs a resourceVersion
    tracks_generation = True

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        obj["status"] = {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}

    def validate(self, obj: Obj) -> list[FieldError]:
        spec = obj.get("spec") or {}
        errs: list[FieldError] = []
        if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
            errs.append(errors.invalid("spec", _pdb_spec(spec), "minAvailable and maxUnavailable cannot be both set"))
        for name in ("minAvailable", "maxUnavailable"):
            if spec.get(name) is not None:
                errs += _int_or_percent_errors(spec[name], f"spec.{name}")
        policy = spec.get("unhealthyPodEvictionPolicy")
        if policy is not None and policy not in ("AlwaysAllow", "IfHealthyBudget"):
            errs.append(errors.not_supported("spec.unhealthyPodEvictionPolicy", policy, ["AlwaysAllow", "IfHealthyBudget"]))
        return errs


POD_DISRUPTION_BUDGETS = ResourceType(
    "policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", namespaced=True, short_names=("pdb",),
    subresources=(STATUS,), strategy=PodDisruptionBudgetStrategy(), table=POD_DISRUPTION_BUDGET_TABLE,
)


def _system_class_problem(name: str, value: Any, global_default: bool) -> str:
    """``IsKnownSystemPriorityClass``: a ``system-`` class must be one of the two, as they are."""
    known = next((c for c in SYSTEM_PRIORITY_CLASSES if c["metadata"]["name"] == name), None)
    if known is None:
        return f"{name} is not a known system priority class"
    if value != known["value"]:
        return f"value of {name} PriorityClass must be {known['value']}"
    if global_default != bool(known.get("globalDefault")):
        return f"globalDefault of {name} PriorityClass must be {str(bool(known.get('globalDefault'))).lower()}"
    return ""


class PriorityClassStrategy(Strategy):
    """PriorityClasses: value fixed after create; user values capped at one billion."""

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        if not obj.get("preemptionPolicy"):
            obj["preemptionPolicy"] = "PreemptLowerPriority"

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        """Upstream's strategy sets generation 1 on create and never bumps it after."""
        obj.setdefault("metadata", {})["generation"] = 1

    def validate(self, obj: Obj) -> list[FieldError]:
        name = (obj.get("metadata") or {}).get("name") or ""
        errs: list[FieldError] = []
        value = obj.get("value", 0)
        if name.startswith("system-"):
            problem = _system_class_problem(name, value, bool(obj.get("globalDefault")))
            if problem:
                errs.append(errors.forbidden("metadata.name", "priority class names with 'system-' prefix are reserved "
                                                              f"for system use only. error: {problem}"))
        elif isinstance(value, int) and value > MAX_USER_PRIORITY:
            errs.append(errors.forbidden("value", f"maximum allowed value of a user defined priority is {MAX_USER_PRIORITY}"))
        policy = obj.get("preemptionPolicy")
        if policy not in ("Never", "PreemptLowerPriority"):
            errs.append(errors.not_supported("preemptionPolicy", policy, ["Never", "PreemptLowerPriority"]))
        return errs

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs: list[FieldError] = []
        if new.get("value") != old.get("value"):
            errs.append(errors.forbidden("value", "may not be changed in an update."))
        errs += immutable(new.get("preemptionPolicy"), old.get("preemptionPolicy"), "preemptionPolicy")
        return errs + self.validate(new)


PRIORITY_CLASSES = ResourceType(
    "scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", namespaced=False, short_names=("pc",),
    strategy=PriorityClassStrategy(), table=PRIORITY_CLASS_TABLE,
)


class StorageClassStrategy(Strategy):
    """StorageClasses: provisioner required; provisioner, parameters, reclaim policy fixed."""

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        if not obj.get("reclaimPolicy"):
            obj["reclaimPolicy"] = "Delete"
        if not obj.get("volumeBindingMode"):
            obj["volumeBindingMode"] = "Immediate"

    def validate(self, obj: Obj) -> list[FieldError]:
        errs: list[FieldError] = []
        if not obj.get("provisioner"):
            errs.append(errors.required("provisioner"))
        policy = obj.get("reclaimPolicy")
        if policy not in ("Delete", "Retain"):
            errs.append(errors.not_supported("reclaimPolicy", policy, ["Delete", "Retain"]))
        mode = obj.get("volumeBindingMode")
        if mode not in ("Immediate", "WaitForFirstConsumer"):
            errs.append(errors.not_supported("volumeBindingMode", mode, ["Immediate", "WaitForFirstConsumer"]))
        return errs + _allowed_topology_errors(obj.get("allowedTopologies") or [])

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs: list[FieldError] = []
        if (new.get("parameters") or {}) != (old.get("parameters") or {}):
            errs.append(errors.forbidden("parameters", "updates to parameters are forbidden."))
        if new.get("provisioner") != old.get("provisioner"):
            errs.append(errors.forbidden("provisioner", "updates to provisioner are forbidden."))
        if new.get("reclaimPolicy") != old.get("reclaimPolicy"):
            errs.append(errors.forbidden("reclaimPolicy", "updates to reclaimPolicy are forbidden."))
        errs += immutable(new.get("volumeBindingMode"), old.get("volumeBindingMode"), "volumeBindingMode")
        return errs + self.validate(new)


def _allowed_topology_errors(terms: list[Any]) -> list[FieldError]:
    """``validateAllowedTopologies``: each requirement has values (no repeats) and a label key;
    keys are unique within a term and no two terms are the same."""
    errs: list[FieldError] = []
    seen_terms: list[dict[str, frozenset[str]]] = []
    for i, term in enumerate(terms):
        expressions: dict[str, frozenset[str]] = {}
        for j, requirement in enumerate(term.get("matchLabelExpressions") or []):
            path = f"allowedTopologies[{i}].matchLabelExpressions[{j}]"
            values = [str(v) for v in requirement.get("values") or []]
            if not values:
                errs.append(errors.required(f"{path}.values"))
            errs += [errors.duplicate(f"{path}.values[{k}]", v) for k, v in enumerate(values) if v in values[:k]]
            key = str(requirement.get("key") or "")
            errs += validate_label_name(key, f"{path}.key")
            if key in expressions:
                errs.append(errors.duplicate(f"{path}.key", key))
            expressions[key] = frozenset(values)
        if expressions in seen_terms:
            errs.append(errors.duplicate(f"allowedTopologies[{i}].matchLabelExpressions", ""))
        seen_terms.append(expressions)
    return errs


STORAGE_CLASSES = ResourceType(
    "storage.k8s.io", "v1", "StorageClass", "storageclasses", returns_deleted_object=True, namespaced=False, short_names=("sc",),
    strategy=StorageClassStrategy(), table=STORAGE_CLASS_TABLE,
)


# --- networking -------------------------------------------------------------------

def _backend_errors(backend: Any, path: str) -> list[FieldError]:
    if not isinstance(backend, dict) or (not backend.get("service") and not backend.get("resource")):
        return [errors.invalid(path, GoLiteral("networking.IngressBackend{...}"), "one backend must be specified")]
    if backend.get("service") and backend.get("resource"):
        return [errors.invalid(path, GoLiteral("networking.IngressBackend{...}"), "cannot set both resource and service backends")]
    service = backend.get("service")
    if not service:
        return []
    errs: list[FieldError] = []
    if not service.get("name"):
        errs.append(errors.required(f"{path}.service.name"))
    port = service.get("port") or {}
    if port.get("name") and port.get("number"):
        errs.append(errors.invalid(path, "", "cannot set both port name & port number"))
    elif not port.get("name") and not port.get("number"):
        errs.append(errors.required(path, "port name or number is required"))
    return errs


def _ingress_host_errors(host: str, path: str) -> list[FieldError]:
    """``validateIngressRules``' host: a DNS name (``*.`` first for a wildcard), not an IP."""
    if not host:
        return []
    errs = []
    if parse_ip_sloppy(host) is not None:
        errs.append(errors.invalid(path, host, "must be a DNS name, not an IP address"))
    check = is_wildcard_dns1123_subdomain if "*" in host else is_dns1123_subdomain
    return errs + [errors.invalid(path, host, m) for m in check(host)]


class IngressStrategy(Strategy):
    """Ingresses: every path needs a pathType and a backend; absolute paths."""

    tracks_generation = True

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        obj["status"] = {"loadBalancer": {}}

    def validate(self, obj: Obj) -> list[FieldError]:
        spec = obj.get("spec") or {}
        errs: list[FieldError] = []
        if not spec.get("rules") and not spec.get("defaultBackend"):
            errs.append(errors.invalid("spec", GoLiteral("[]networking.IngressRule(nil)", "null"),
                                       "either `defaultBackend` or `rules` must be specified"))
        if spec.get("defaultBackend"):
            errs += _backend_errors(spec["defaultBackend"], "spec.defaultBackend")
        for i, rule in enumerate(spec.get("rules") or []):
            errs += _ingress_host_errors(rule.get("host") or "", f"spec.rules[{i}].host")
            paths = (rule.get("http") or {}).get("paths")
            if rule.get("http") is not None and not paths:
                errs.append(errors.required(f"spec.rules[{i}].http.paths"))
            for j, path in enumerate(paths or []):
                errs += self._path_errors(path, f"spec.rules[{i}].http.paths[{j}]")
        return errs

    @staticmethod
    def _path_errors(path: Obj, where: str) -> list[FieldError]:
        errs: list[FieldError] = []
        path_type = path.get("pathType")
        if not path_type:
            errs.append(errors.required(f"{where}.pathType", "pathType must be specified"))
        elif path_type not in ("Exact", "ImplementationSpecific", "Prefix"):
            errs.append(errors.not_supported(f"{where}.pathType", path_type, ["Exact", "ImplementationSpecific", "Prefix"]))
        value = path.get("path") or ""
        if path_type in ("Exact", "Prefix") and not value.startswith("/"):
            errs.append(errors.invalid(f"{where}.path", value, "must be an absolute path"))
        return errs + _backend_errors(path.get("backend"), f"{where}.backend")


INGRESSES = ResourceType(
    "networking.k8s.io", "v1", "Ingress", "ingresses", namespaced=True, short_names=("ing",), subresources=(STATUS,),
    strategy=IngressStrategy(), table=INGRESS_TABLE,
)


class NetworkPolicyStrategy(Strategy):
    """NetworkPolicies: policyTypes default from the rules present; TCP ports."""

    tracks_generation = True

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        spec = ensure_dict(obj, "spec")
        for direction in ("ingress", "egress"):
            for rule in spec.get(direction) or []:
                for port in rule.get("ports") or []:
                    if not port.get("protocol"):
                        port["protocol"] = "TCP"
        if not spec.get("policyTypes"):
            types = ["Ingress"]
            if spec.get("egress"):
                types.append("Egress")
            spec["policyTypes"] = types

    def validate(self, obj: Obj) -> list[FieldError]:
        spec = obj.get("spec") or {}
        errs: list[FieldError] = []
        if "podSelector" not in spec:
            errs.append(errors.required("spec.podSelector"))
        for direction, peers in (("ingress", "from"), ("egress", "to")):
            for i, rule in enumerate(spec.get(direction) or []):
                for j, port in enumerate(rule.get("ports") or []):
                    errs += _network_policy_port_errors(port, f"spec.{direction}[{i}].ports[{j}]")
                for j, peer in enumerate(rule.get(peers) or []):
                    errs += _network_policy_peer_errors(peer, f"spec.{direction}[{i}].{peers}[{j}]")
        allowed = ["Ingress", "Egress"]  # upstream's list, in its order (the reference)
        for i, policy_type in enumerate(spec.get("policyTypes") or []):
            if policy_type not in allowed:
                errs.append(errors.not_supported(f"spec.policyTypes[{i}]", policy_type, allowed))
        return errs


_POLICY_PROTOCOLS = ["TCP", "UDP", "SCTP"]


def _network_policy_port_errors(port: Obj, path: str) -> list[FieldError]:
    """``ValidateNetworkPolicyPort``: a known protocol; a port number or name; an end port
    only after a numeric port, not below it."""
    errs: list[FieldError] = []
    protocol = port.get("protocol")
    if protocol is not None and protocol not in _POLICY_PROTOCOLS:
        errs.append(errors.not_supported(f"{path}.protocol", protocol, _POLICY_PROTOCOLS))
    number, end = port.get("port"), port.get("endPort")
    if isinstance(number, int):
        errs += port_errors(number, f"{path}.port")
        if end is not None:
            if end < number:
                errs.append(errors.invalid(f"{path}.endPort", number, "must be greater than or equal to `port`"))
            errs += port_errors(end, f"{path}.endPort")
    elif number is not None:
        if end is not None:
            errs.append(errors.invalid(f"{path}.endPort", end, "may not be specified when `port` is non-numeric"))
        errs += port_name_errors(str(number), f"{path}.port")
    elif end is not None:
        errs.append(errors.invalid(f"{path}.endPort", end, "may not be specified when `port` is not specified"))
    return errs


def _network_policy_peer_errors(peer: Obj, path: str) -> list[FieldError]:
    """``ValidateNetworkPolicyPeer``: selectors, or one IP block alone."""
    errs: list[FieldError] = []
    given = 0
    for selector in ("podSelector", "namespaceSelector"):
        if peer.get(selector) is not None:
            given += 1
            errs += validate_label_selector(peer[selector], f"{path}.{selector}")
    block = peer.get("ipBlock")
    if block is not None:
        given += 1
        errs += _ip_block_errors(block, f"{path}.ipBlock")
    if not given:
        errs.append(errors.required(path, "must specify a peer"))
    elif given > 1 and block is not None:
        errs.append(errors.forbidden(path, "may not specify both ipBlock and another peer"))
    return errs


def _ip_block_errors(block: Obj, path: str) -> list[FieldError]:
    """``ValidateIPBlock``: a CIDR, and exceptions strictly inside it."""
    cidr = block.get("cidr") or ""
    if not cidr:
        return [errors.required(f"{path}.cidr")]
    errs = legacy_cidr_errors(cidr, f"{path}.cidr")
    network = parse_cidr_sloppy(cidr)
    if network is None:
        return errs
    for i, text in enumerate(block.get("except") or []):
        errs += legacy_cidr_errors(text, f"{path}.except[{i}]")
        excepted = parse_cidr_sloppy(text)
        if excepted is None:
            continue
        if excepted.version != network.version or excepted.network_address not in network \
                or network.prefixlen >= excepted.prefixlen:
            errs.append(errors.invalid(f"{path}.except[{i}]", text, "must be a strict subset of `cidr`"))
    return errs


NETWORK_POLICIES = ResourceType(
    "networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", namespaced=True, short_names=("netpol",),
    strategy=NetworkPolicyStrategy(), table=NETWORK_POLICY_TABLE,
)


#: ``SetDefaults_HorizontalPodAutoscalerBehavior``: a given behavior's missing rule fields.
_DEFAULT_SCALING_RULES: dict[str, Obj] = {
    "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]},
    "scaleDown": {"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]},
}
_METRIC_SOURCES = ["ContainerResource", "External", "Object", "Pods", "Resource"]
_METRIC_FIELDS = {"Object": "object", "External": "external", "Pods": "pods", "Resource": "resource",
                  "ContainerResource": "containerResource"}
_SELECT_POLICIES = ["Disabled", "Max", "Min"]
MAX_HPA_PERIOD_S = 1800
MAX_HPA_STABILIZATION_WINDOW_S = 3600


def _metric_errors(metric: Obj, path: str) -> list[FieldError]:
    """``validateMetricSpec``: a known type whose source (and only it) is filled in."""
    errs: list[FieldError] = []
    kind = metric.get("type") or ""
    if not kind:
        errs.append(errors.required(f"{path}.type", "must specify a metric source type"))
    if kind not in _METRIC_SOURCES:
        errs.append(errors.not_supported(f"{path}.type", kind, _METRIC_SOURCES))
    present = [f for f in ("object", "external", "pods", "resource", "containerResource") if metric.get(f) is not None]
    if present:
        errs += _metric_source_errors(present[0], metric[present[0]], f"{path}.{present[0]}")
    expected = _METRIC_FIELDS.get(kind)
    if expected is None:
        errs.append(errors.not_supported(f"{path}.type", kind, _METRIC_SOURCES))
    elif metric.get(expected) is None:
        errs.append(errors.required(f"{path}.{expected}", "must populate information for the given metric source"))
    if len(present) != 1:
        errs += [errors.forbidden(f"{path}.{f}", "must populate the given metric source only")
                 for f in sorted(present) if f != expected]
    return errs


def _metric_source_errors(kind: str, source: Obj, path: str) -> list[FieldError]:
    """The source's name or metric, its target, and the target values the source needs."""
    target = source.get("target") or {}
    errs: list[FieldError] = []
    if kind in ("resource", "containerResource") and not source.get("name"):
        errs.append(errors.required(f"{path}.name", "must specify a resource name"))
    if kind == "containerResource" and not source.get("container"):
        errs.append(errors.required(f"{path}.container", "must specify a container"))
    if kind in ("object", "external", "pods"):
        if not (source.get("metric") or {}).get("name"):
            errs.append(errors.required(f"{path}.metric.name", "must specify a metric name"))
    errs += _metric_target_errors(target, f"{path}.target")
    value, average, utilization = target.get("value"), target.get("averageValue"), target.get("averageUtilization")
    if kind in ("resource", "containerResource"):
        if utilization is None and average is None:
            errs.append(errors.required(f"{path}.target.averageUtilization",
                                        "must set either a target raw value or a target utilization"))
        if utilization is not None and average is not None:
            errs.append(errors.forbidden(f"{path}.target.averageValue",
                                         "may not set both a target raw value and a target utilization"))
    elif kind == "pods" and average is None:
        errs.append(errors.required(f"{path}.target.averageValue", "must specify a positive target averageValue"))
    elif kind == "object" and value is None and average is None:
        errs.append(errors.required(f"{path}.target.averageValue", "must set either a target value or averageValue"))
    elif kind == "external":
        if value is None and average is None:
            errs.append(errors.required(f"{path}.target.averageValue",
                                        "must set either a target value for metric or a per-pod target"))
        if value is not None and average is not None:
            errs.append(errors.forbidden(f"{path}.target.value",
                                         "may not set both a target value for metric and a per-pod target"))
    return errs


def _metric_target_errors(target: Obj, path: str) -> list[FieldError]:
    """``validateMetricTarget``."""
    errs: list[FieldError] = []
    kind = target.get("type") or ""
    if not kind:
        errs.append(errors.required(f"{path}.type", "must specify a metric target type"))
    if kind not in ("Utilization", "Value", "AverageValue"):
        errs.append(errors.invalid(f"{path}.type", kind, "must be either Utilization, Value, or AverageValue"))
    for name in ("value", "averageValue"):
        quantity = parse_quantity(target.get(name)) if target.get(name) is not None else None
        if target.get(name) is not None and (quantity is None or quantity <= 0):
            errs.append(errors.invalid(f"{path}.{name}", canonical(target[name]), "must be positive"))
    utilization = target.get("averageUtilization")
    if utilization is not None and utilization < 1:
        errs.append(errors.invalid(f"{path}.averageUtilization", utilization, "must be greater than 0"))
    return errs


def _scaling_rule_errors(rules: Obj, path: str) -> list[FieldError]:
    """``validateScalingRules`` on defaulted rules."""
    errs: list[FieldError] = []
    window = rules.get("stabilizationWindowSeconds")
    if window is not None and window < 0:
        errs.append(errors.invalid(f"{path}.stabilizationWindowSeconds", window, "must be greater than or equal to zero"))
    if window is not None and window > MAX_HPA_STABILIZATION_WINDOW_S:
        errs.append(errors.invalid(f"{path}.stabilizationWindowSeconds", window,
                                   f"must be less than or equal to {MAX_HPA_STABILIZATION_WINDOW_S}"))
    select = rules.get("selectPolicy")
    if select is not None and select not in _SELECT_POLICIES:
        errs.append(errors.not_supported(f"{path}.selectPolicy", select, _SELECT_POLICIES))
    if not rules.get("policies"):
        errs.append(errors.required(f"{path}.policies", "must specify at least one Policy"))
    for i, policy in enumerate(rules.get("policies") or []):
        at = f"{path}.policies[{i}]"
        if policy.get("type") not in ("Pods", "Percent"):
            errs.append(errors.not_supported(f"{at}.type", policy.get("type") or "", ["Percent", "Pods"]))
        for name in ("value", "periodSeconds"):
            if (policy.get(name) or 0) <= 0:
                errs.append(errors.invalid(f"{at}.{name}", policy.get(name) or 0, "must be greater than zero"))
            if name == "periodSeconds" and (policy.get(name) or 0) > MAX_HPA_PERIOD_S:
                errs.append(errors.invalid(f"{at}.{name}", policy[name], f"must be less than or equal to {MAX_HPA_PERIOD_S}"))
    if rules.get("tolerance") is not None:
        errs += nonnegative_quantity(rules["tolerance"], f"{path}.tolerance")
    return errs


class HorizontalPodAutoscalerStrategy(Strategy):
    """HPAs (autoscaling/v2): minReplicas 1 and the 80 % CPU metric by default."""

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        spec = ensure_dict(obj, "spec")
        if spec.get("minReplicas") is None:
            spec["minReplicas"] = 1
        if not spec.get("metrics"):
            spec["metrics"] = [{"type": "Resource", "resource": {
                "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]
        behavior = spec.get("behavior")
        if isinstance(behavior, dict):
            for direction, defaults in _DEFAULT_SCALING_RULES.items():
                behavior[direction] = {**defaults, **(behavior.get(direction) or {})}

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        obj["status"] = {"desiredReplicas": 0}

    def validate(self, obj: Obj) -> list[FieldError]:
        spec = obj.get("spec") or {}
        errs: list[FieldError] = []
        ref = spec.get("scaleTargetRef") or {}
        if not ref.get("kind"):
            errs.append(errors.required("spec.scaleTargetRef.kind"))
        if not ref.get("name"):
            errs.append(errors.required("spec.scaleTargetRef.name"))
        min_replicas = spec.get("minReplicas")
        max_replicas = spec.get("maxReplicas", 0)
        if min_replicas is not None and min_replicas < 1:
            errs.append(errors.invalid("spec.minReplicas", min_replicas, "must be greater than or equal to 1"))
        if max_replicas == 0:
            errs.append(errors.required("spec.maxReplicas", "must be set and greater than 0"))
        elif max_replicas < 0:
            errs.append(errors.invalid("spec.maxReplicas", max_replicas, "must be greater than or equal to 1"))
        if min_replicas is not None and max_replicas < min_replicas:
            errs.append(errors.invalid("spec.maxReplicas", max_replicas, "must be greater than or equal to `minReplicas`"))
        for i, metric in enumerate(spec.get("metrics") or []):
            errs += _metric_errors(metric, f"spec.metrics[{i}]")
        behavior = spec.get("behavior")
        for direction in ("scaleUp", "scaleDown"):
            if isinstance(behavior, dict) and isinstance(behavior.get(direction), dict):
                errs += _scaling_rule_errors(behavior[direction], f"spec.behavior.{direction}")
        return errs


HORIZONTAL_POD_AUTOSCALERS = ResourceType(
    "autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", namespaced=True, short_names=("hpa",),
    categories=("all",), subresources=(STATUS,), strategy=HorizontalPodAutoscalerStrategy(),
    table=HORIZONTAL_POD_AUTOSCALER_TABLE,
)


# --- RBAC ---------------------------------------------------------------------------

def _rule_errors(rules: Any, namespaced: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, rule in enumerate(rules or []):
        path = f"rules[{i}]"
        if not rule.get("verbs"):
            errs.append(errors.required(f"{path}.verbs", "verbs must contain at least one value"))
        if rule.get("nonResourceURLs"):
            if namespaced:
                errs.append(errors.invalid(f"{path}.nonResourceURLs", go_strings([str(u) for u in rule["nonResourceURLs"]]),
                                           "namespaced rules cannot apply to non-resource URLs"))
            if rule.get("apiGroups") or rule.get("resources"):
                errs.append(errors.invalid(f"{path}.nonResourceURLs", go_strings([str(u) for u in rule["nonResourceURLs"]]),
                                           "rules cannot apply to both regular resources and non-resource URLs"))
            continue
        if not rule.get("apiGroups"):
            errs.append(errors.required(f"{path}.apiGroups", "resource rules must supply at least one api group"))
        if not rule.get("resources"):
            errs.append(errors.required(f"{path}.resources", "resource rules must supply at least one resource"))
    return errs


class RoleStrategy(Strategy):
    """Roles: each rule needs verbs and either resources or (cluster-wide) URLs."""

    def __init__(self, namespaced: bool) -> None:
        self.namespaced = namespaced

    def validate(self, obj: Obj) -> list[FieldError]:
        errs = _rule_errors(obj.get("rules"), self.namespaced)
        rule = obj.get("aggregationRule")
        if not self.namespaced and isinstance(rule, dict):
            errs += _aggregation_rule_errors(rule)
        return errs


def _aggregation_rule_errors(rule: Obj) -> list[FieldError]:
    """``ValidateClusterRole``'s aggregation rule: selectors, each valid and convertible."""
    path = "aggregationRule.clusterRoleSelectors"
    selectors = rule.get("clusterRoleSelectors") or []
    errs: list[FieldError] = []
    if not selectors:
        errs.append(errors.required(path, "at least one clusterRoleSelector required if aggregationRule is non-nil"))
    for i, selector in enumerate(selectors):
        problems = validate_label_selector(selector, f"{path}[{i}]")
        if problems:  # LabelSelectorAsSelector refuses what validation refused; its nil result is shown
            errs += problems + [errors.invalid(f"{path}[{i}]", None, "invalid label selector.")]
    return errs


CLUSTER_ROLES = ResourceType(
    "rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", namespaced=False,
    strategy=RoleStrategy(namespaced=False), table=ROLE_TABLE, name_rule=name_is_path_segment, create_on_update=True,
)

ROLES = ResourceType(
    "rbac.authorization.k8s.io", "v1", "Role", "roles", namespaced=True, strategy=RoleStrategy(namespaced=True),
    table=ROLE_TABLE, name_rule=name_is_path_segment, create_on_update=True,
)


def _go_role_ref(ref: Obj) -> GoLiteral:
    """The internal ``rbac.RoleRef`` (no JSON tags: its Go field names from 1.34)."""
    group, kind, name = (str(ref.get(k, "")) for k in ("apiGroup", "kind", "name"))
    return GoLiteral(f'rbac.RoleRef{{APIGroup:"{group}", Kind:"{kind}", Name:"{name}"}}',
                     go_json_struct([("APIGroup", group), ("Kind", kind), ("Name", name)]))


def _pdb_spec(spec: Obj) -> GoLiteral:
    """The internal ``policy.PodDisruptionBudgetSpec`` (an IntOrString marshals as its number or
    string; the selector is the external LabelSelector)."""
    selector = spec.get("selector")
    return GoLiteral("policy.PodDisruptionBudgetSpec{...}", go_json_struct([
        ("MinAvailable", spec.get("minAvailable")),
        ("Selector", label_selector_json(selector) if isinstance(selector, dict) else None),
        ("MaxUnavailable", spec.get("maxUnavailable")),
        ("UnhealthyPodEvictionPolicy", spec.get("unhealthyPodEvictionPolicy"))]))


class RoleBindingStrategy(Strategy):
    """Role bindings: a valid roleRef that never changes; subjects get their apiGroup."""

    def __init__(self, namespaced: bool) -> None:
        self.namespaced = namespaced

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        for subject in obj.get("subjects") or []:
            if not subject.get("apiGroup"):
                # apiGroup is omitempty: a ServiceAccount's defaulted "" never shows (else
                # every re-apply of a binding would look changed to kubectl).
                subject.pop("apiGroup", None)
                if subject.get("kind") in ("User", "Group"):
                    subject["apiGroup"] = RBAC_GROUP

    def validate(self, obj: Obj) -> list[FieldError]:
        ref = obj.get("roleRef") or {}
        errs: list[FieldError] = []
        if ref.get("apiGroup") != RBAC_GROUP:
            errs.append(errors.not_supported("roleRef.apiGroup", ref.get("apiGroup", ""), [RBAC_GROUP]))
        kinds = ["Role", "ClusterRole"] if self.namespaced else ["ClusterRole"]
        if ref.get("kind") not in kinds:
            errs.append(errors.not_supported("roleRef.kind", ref.get("kind", ""), kinds))
        if not ref.get("name"):
            errs.append(errors.required("roleRef.name"))
        for i, subject in enumerate(obj.get("subjects") or []):
            errs += self._subject_errors(subject, f"subjects[{i}]")
        return errs

    def _subject_errors(self, subject: Obj, path: str) -> list[FieldError]:
        errs: list[FieldError] = []
        if not subject.get("name"):
            errs.append(errors.required(f"{path}.name"))
        kind = subject.get("kind")
        if kind == "ServiceAccount":
            if subject.get("apiGroup"):
                errs.append(errors.not_supported(f"{path}.apiGroup", subject["apiGroup"], [""]))
            if not self.namespaced and not subject.get("namespace"):
                errs.append(errors.required(f"{path}.namespace"))
        elif kind in ("User", "Group"):
            if subject.get("apiGroup") != RBAC_GROUP:
                errs.append(errors.not_supported(f"{path}.apiGroup", subject.get("apiGroup", ""), [RBAC_GROUP]))
        else:
            errs.append(errors.not_supported(f"{path}.kind", kind or "", ["ServiceAccount", "User", "Group"]))
        return errs

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs: list[FieldError] = []
        if new.get("roleRef") != old.get("roleRef"):
            errs.append(errors.invalid("roleRef", _go_role_ref(new.get("roleRef") or {}), "cannot change roleRef"))
        return errs + self.validate(new)


CLUSTER_ROLE_BINDINGS = ResourceType(
    "rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", namespaced=False,
    strategy=RoleBindingStrategy(namespaced=False), table=CLUSTER_ROLE_BINDING_TABLE, name_rule=name_is_path_segment,
    create_on_update=True,
)

ROLE_BINDINGS = ResourceType(
    "rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", namespaced=True,
    strategy=RoleBindingStrategy(namespaced=True), table=ROLE_BINDING_TABLE, name_rule=name_is_path_segment,
    create_on_update=True,
)


# --- discovery ----------------------------------------------------------------------

ADDRESS_TYPES = ["FQDN", "IPv4", "IPv6"]


def _slice_address_errors(address: str, address_type: Any, path: str, i: int) -> list[FieldError]:
    """``validateEndpoints``' addresses of the IP types (strict parsing for IPv6, as upstream's
    ``IsValidIP``, is not modelled: its sloppy parse is used for both families)."""
    if address_type not in ("IPv4", "IPv6"):
        return []
    problems = legacy_ip_errors(address, f"{path}[{i}]")
    if problems:
        return problems
    ip = parse_ip_sloppy(address)
    if ip is not None and ip.version != int(address_type[-1]):
        problems.append(errors.invalid(path, address, f"must be an {address_type} address"))
    return problems + endpoint_ip_errors(address, f"{path}[{i}]")


class EndpointSliceStrategy(Strategy):
    """EndpointSlices: addressType required and fixed; ports named "" and TCP by default;
    a generation that grows when the endpoints, ports, address type or labels change."""

    tracks_generation = True
    generation_metadata = ("labels",)

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        for port in obj.get("ports") or []:
            if port.get("name") is None:
                port["name"] = ""
            if not port.get("protocol"):
                port["protocol"] = "TCP"

    def validate(self, obj: Obj) -> list[FieldError]:
        errs: list[FieldError] = []
        errs += required_one_of(obj.get("addressType"), "addressType", ADDRESS_TYPES)
        for i, endpoint in enumerate(obj.get("endpoints") or []):
            path = f"endpoints[{i}].addresses"
            if not endpoint.get("addresses"):
                errs.append(errors.required(path, "must contain at least 1 address"))
            for j, address in enumerate(endpoint.get("addresses") or []):
                errs += _slice_address_errors(str(address), obj.get("addressType"), path, j)
        return errs

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return immutable(new.get("addressType"), old.get("addressType"), "addressType") + self.validate(new)


ENDPOINT_SLICES = ResourceType(
    "discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", namespaced=True, strategy=EndpointSliceStrategy(),
    table=ENDPOINT_SLICE_TABLE, create_on_update=True,
)


class CSIStorageCapacityStrategy(Strategy):
    """CSIStorageCapacities: a storage class name is required; the rest is the driver's."""

    allow_unconditional_update = False  # AllowUnconditionalUpdate: a PUT needs a resourceVersion

    def validate(self, obj: Obj) -> list[FieldError]:
        if not obj.get("storageClassName"):
            return [errors.required("storageClassName")]
        return []


CSI_STORAGE_CAPACITIES = ResourceType(
    "storage.k8s.io", "v1", "CSIStorageCapacity", "csistoragecapacities", namespaced=True,
    strategy=CSIStorageCapacityStrategy(),  # upstream registers the default table convertor
)


def local_available_status(now: str) -> Obj:
    """The status of a local APIService (no ``spec.service``): kube-aggregator marks it
    Available at once and its availability controller keeps it so."""
    return {"conditions": [{"type": "Available", "status": "True", "lastTransitionTime": now, "reason": "Local",
                            "message": "Local APIServices are always available"}]}


class APIServiceStrategy(Strategy):
    """APIServices (kube-aggregator's): spec with a status subresource, validated as
    ``ValidateAPIService``; the availability controller (fakekube/controllers/apiservices.py)
    writes the Available condition of one that names a service."""

    allow_unconditional_update = False  # AllowUnconditionalUpdate: a PUT needs a resourceVersion

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        """As upstream's strategy: a new APIService starts with an empty status, and a local
        one (no ``spec.service``) is Available on create."""
        service = (obj.get("spec") or {}).get("service") if isinstance(obj.get("spec"), dict) else None
        obj["status"] = {} if service is not None else local_available_status(format_rfc3339(ctx.now))

    def validate(self, obj: Obj) -> list[FieldError]:
        spec = obj.get("spec") or {}
        group, version = spec.get("group") or "", spec.get("version") or ""
        name = (obj.get("metadata") or {}).get("name") or ""
        errs: list[FieldError] = []
        required = f"{version}.{group}"
        if name and not name_is_path_segment(name) and name != required:  # the name rule's second check
            errs.append(errors.invalid("metadata.name", name, f"must be `spec.version+\".\"+spec.group`: "
                                                              f"{json.dumps(required)}"))
        if not group and version != "v1":
            errs.append(errors.required("spec.group", "only v1 may have an empty group and it better be legacy kube"))
        if group:
            errs += [errors.invalid("spec.group", group, why) for why in is_dns1123_subdomain(group)]
        errs += [errors.invalid("spec.version", version, why) for why in is_dns1035_label(version)]
        for field, limit in (("groupPriorityMinimum", 20000), ("versionPriority", 1000)):
            value = spec.get(field)
            number = value if isinstance(value, int) else 0
            if number <= 0 or number > limit:
                errs.append(errors.invalid(f"spec.{field}", number, f"must be positive and less than {limit}"))
        return errs + _api_service_endpoint_errors(spec)


def _api_service_endpoint_errors(spec: Obj) -> list[FieldError]:
    """``ValidateAPIService``'s rules on where the APIService is served: a local one has no CA
    and no insecureSkipTLSVerify; a service needs a namespace, a name and a valid port."""
    ca_bytes = _base64_length(spec.get("caBundle"))
    insecure = spec.get("insecureSkipTLSVerify") is True
    service = spec.get("service")
    if not isinstance(service, dict):
        errs: list[FieldError] = []
        if ca_bytes:
            errs.append(errors.invalid("spec.caBundle", f"{ca_bytes} bytes", "local APIServices may not have a caBundle"))
        if insecure:
            errs.append(errors.invalid("spec.insecureSkipTLSVerify", True, "local APIServices may not have insecureSkipTLSVerify"))
        return errs
    errs = []
    if not service.get("namespace"):
        errs.append(errors.required("spec.service.namespace", ""))
    if not service.get("name"):
        errs.append(errors.required("spec.service.name", ""))
    port = service.get("port", 443)
    if not isinstance(port, int) or not 1 <= port <= 65535:
        errs.append(errors.invalid("spec.service.port", port, "port is not valid: must be between 1 and 65535, inclusive"))
    if insecure and ca_bytes:
        errs.append(errors.invalid("spec.insecureSkipTLSVerify", True, "may not be true if caBundle is present"))
    return errs


def _base64_length(value: Any) -> int:
    """How many bytes a ``[]byte`` field's base64 text holds (0 for none or undecodable)."""
    if not isinstance(value, str) or not value:
        return 0
    try:
        return len(base64.b64decode(value, validate=False))
    except (ValueError, binascii.Error):
        return 0


API_SERVICES = ResourceType(
    "apiregistration.k8s.io", "v1", "APIService", "apiservices", namespaced=False, categories=("api-extensions",),
    subresources=(STATUS,), strategy=APIServiceStrategy(), table=API_SERVICE_TABLE, name_rule=name_is_path_segment,
)
