"""Services: defaults, ClusterIP and NodePort allocation, validation, update rules.

Allocation (:mod:`.service_alloc`) follows kube-apiserver 1.33's allocators from the
cluster's seeded generator and checks the store for IPs and ports in use, so the same seed
gives the same IPs. The ranges come from the cluster's :class:`ServiceNetwork` (the
strategy is built per cluster: :func:`services_type`).
"""

from __future__ import annotations

import ipaddress

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FieldError, go_json_struct
from fakekube.api.machinery.validation import NameRule, name_is_dns1035_label, name_is_dns_label, validate_labels
from fakekube.api.registry import PROXY, STATUS, ResourceType, Strategy, WriteContext
from fakekube.api.selectors import SERVICE_FIELD_SET
from fakekube.api.table import SERVICE_TABLE
from fakekube.api.types._util import (
    GoLiteral,
    Obj,
    child,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    ensure_dict,
    go_string_slice,
    index,
    port_errors,
    required_one_of,
)
from fakekube.api.types.core_pods import port_name_errors
from fakekube.api.types.service_alloc import (
    ServiceNetwork,
    allocate_cluster_ips,
    allocate_health_check_port,
    allocate_node_ports,
    init_ip_family_fields,
    needs_health_check,
    needs_node_ports,
    used_cluster_ips,
    used_node_ports,
)

SERVICE_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]
SESSION_AFFINITIES = ["ClientIP", "None"]
PROTOCOLS = ["SCTP", "TCP", "UDP"]
TRAFFIC_POLICIES = ["Cluster", "Local"]


def _externally_accessible(spec: Obj) -> bool:
    return spec.get("type") in ("NodePort", "LoadBalancer") or bool(spec.get("externalIPs"))


def _is_headless(spec: Obj) -> bool:
    return spec.get("clusterIP") == "None" or (spec.get("clusterIPs") or [None])[0] == "None"


def default_service(svc: Obj) -> None:
    """SetDefaults_Service (the IP-family fields are the REST layer's: ``init_ip_family_fields``)."""
    spec = ensure_dict(svc, "spec")
    if not spec.get("sessionAffinity"):
        spec["sessionAffinity"] = "None"
    if spec["sessionAffinity"] == "None":
        spec.pop("sessionAffinityConfig", None)
    elif spec["sessionAffinity"] == "ClientIP":
        client_ip = ensure_dict(ensure_dict(spec, "sessionAffinityConfig"), "clientIP")
        client_ip.setdefault("timeoutSeconds", 10800)
    if not spec.get("type"):
        spec["type"] = "ClusterIP"
    for port in spec.get("ports") or []:
        if not isinstance(port, dict):
            continue
        if not port.get("protocol"):
            port["protocol"] = "TCP"
        if port.get("targetPort") in (None, 0, ""):
            port["targetPort"] = port.get("port")
    if _externally_accessible(spec) and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
    if spec.get("internalTrafficPolicy") is None and spec["type"] != "ExternalName":
        spec["internalTrafficPolicy"] = "Cluster"
    if spec["type"] == "LoadBalancer":
        if spec.get("allocateLoadBalancerNodePorts") is None:
            spec["allocateLoadBalancerNodePorts"] = True
        _default_ip_mode(svc)


def _default_ip_mode(svc: Obj) -> None:
    """A load balancer ingress with an IP and no ``ipMode`` is a VIP (LoadBalancerIPMode, GA)."""
    for ingress in ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []:
        if isinstance(ingress, dict) and ingress.get("ip") and ingress.get("ipMode") is None:
            ingress["ipMode"] = "VIP"


def _sync_cluster_ips(spec: Obj) -> None:
    """Keep clusterIP and clusterIPs in step (a client that sets only one of them).

    Upstream's REST layer does this (``normalizeClusterIPs``) after the field manager
    ran, so a headless Service's ``clusterIPs: [None]`` is not the creator's field."""
    if spec["type"] == "ExternalName":
        return
    if spec.get("clusterIP") and not spec.get("clusterIPs"):
        spec["clusterIPs"] = [spec["clusterIP"]]
    elif spec.get("clusterIPs") and not spec.get("clusterIP"):
        spec["clusterIP"] = spec["clusterIPs"][0]


def _allocate(svc: Obj, old_spec: Obj | None, ctx: WriteContext, network: ServiceNetwork) -> None:
    """The REST layer's ``allocateCreate``/``allocateUpdate``: IP families, then ClusterIPs
    (on create, or leaving ExternalName), then node ports and the health-check port."""
    name = (svc.get("metadata") or {}).get("name") or ""
    spec = svc["spec"]
    init_ip_family_fields(name, spec, old_spec, network)
    services = ctx.store.list_objects("", "services")
    if old_spec is None or (old_spec.get("type") == "ExternalName" and spec.get("type") != "ExternalName"):
        allocate_cluster_ips(name, spec, network, used_cluster_ips(services), ctx.rng)
    ports_in_use = used_node_ports(services)
    allocate_node_ports(name, spec, old_spec, network, ports_in_use, ctx.rng)
    allocate_health_check_port(spec, old_spec, network, ports_in_use, ctx.rng)


def _normalize_cluster_ips(new_spec: Obj, old_spec: Obj) -> None:
    """``normalizeClusterIPs`` on update, before validation: what a client that changed
    only one of clusterIP and clusterIPs meant. A new clusterIP with clusterIPs as they were
    carries into clusterIPs (so validation says ``clusterIPs[0]: may not change once set``);
    clusterIP cleared with clusterIPs as they were clears both; clusterIPs left out with
    clusterIP unchanged keeps the stored ones."""
    old_ip, new_ip = old_spec.get("clusterIP") or "", new_spec.get("clusterIP") or ""
    old_ips = list(old_spec.get("clusterIPs") or [])
    if old_ips and not new_spec.get("clusterIPs") and old_ip == new_ip:
        new_spec["clusterIPs"] = old_ips
    if old_ip == new_ip:
        return
    same_ips = list(new_spec.get("clusterIPs") or []) == old_ips
    if old_ip and not new_ip:
        if same_ips:
            new_spec.pop("clusterIPs", None)
    elif same_ips:
        new_spec["clusterIPs"] = [new_ip]


def _keep_allocated(new_spec: Obj, old_spec: Obj) -> None:
    """Upstream's ``patchAllocatedValues``: an update that omits allocated values keeps them."""
    same_kind = new_spec.get("type") != "ExternalName" and old_spec.get("type") != "ExternalName"
    if same_kind and not new_spec.get("clusterIP") and old_spec.get("clusterIP"):
        new_spec["clusterIP"] = old_spec["clusterIP"]
        if not new_spec.get("clusterIPs"):
            new_spec["clusterIPs"] = list(old_spec.get("clusterIPs") or [old_spec["clusterIP"]])
    if same_kind and not new_spec.get("clusterIPs") and old_spec.get("clusterIPs") \
            and new_spec.get("clusterIP") == old_spec.get("clusterIP"):
        new_spec["clusterIPs"] = list(old_spec["clusterIPs"])
    if needs_node_ports(old_spec) and needs_node_ports(new_spec):
        old_ports = old_spec.get("ports") or []
        for port in new_spec.get("ports") or []:
            if port.get("nodePort"):
                continue
            for old_port in old_ports:
                if old_port.get("port") == port.get("port") and old_port.get("protocol") == port.get("protocol") \
                        and old_port.get("nodePort"):
                    port["nodePort"] = old_port["nodePort"]
                    break
    if not new_spec.get("healthCheckNodePort") and old_spec.get("healthCheckNodePort") \
            and needs_health_check(new_spec) and needs_health_check(old_spec):
        new_spec["healthCheckNodePort"] = old_spec["healthCheckNodePort"]


def _drop_type_dependent_fields(new: Obj, old_spec: Obj) -> None:
    """Upstream's ``dropTypeDependentFields``: when the type changes, values that only
    made sense for the old type are cleared if the client left them untouched, so
    ``kubectl apply`` can switch NodePort → ClusterIP or ClusterIP → ExternalName; and a
    Service that is no longer a LoadBalancer loses its load balancer status."""
    new_spec = ensure_dict(new, "spec")
    if new_spec.get("type") != "LoadBalancer" and isinstance(new.get("status"), dict):
        new["status"] = dict(new["status"], loadBalancer={})
    if new_spec.get("type") == old_spec.get("type") and needs_health_check(new_spec) == needs_health_check(old_spec):
        return
    if new_spec.get("type") == "ExternalName" and old_spec.get("type") != "ExternalName":
        for name in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
            if name in new_spec and new_spec.get(name) == old_spec.get(name):
                new_spec.pop(name)
    if needs_node_ports(old_spec) and not needs_node_ports(new_spec):
        old_by_key = {(p.get("port"), p.get("protocol")): p.get("nodePort") for p in old_spec.get("ports") or []}
        for port in new_spec.get("ports") or []:
            if port.get("nodePort") and old_by_key.get((port.get("port"), port.get("protocol"))) == port["nodePort"]:
                port.pop("nodePort")
    if needs_health_check(old_spec) and not needs_health_check(new_spec) \
            and new_spec.get("healthCheckNodePort") == old_spec.get("healthCheckNodePort"):
        new_spec.pop("healthCheckNodePort", None)
    if new_spec.get("type") != "LoadBalancer":
        if new_spec.get("allocateLoadBalancerNodePorts") == old_spec.get("allocateLoadBalancerNodePorts"):
            new_spec.pop("allocateLoadBalancerNodePorts", None)
        if new_spec.get("loadBalancerClass") == old_spec.get("loadBalancerClass"):
            new_spec.pop("loadBalancerClass", None)
    if new_spec.get("type") == "ExternalName" and old_spec.get("type") != "ExternalName" \
            and new_spec.get("internalTrafficPolicy") == old_spec.get("internalTrafficPolicy"):
        new_spec.pop("internalTrafficPolicy", None)  # only a Service with a cluster IP has one
    if not _externally_accessible(new_spec) and new_spec.get("externalTrafficPolicy") \
            and new_spec.get("externalTrafficPolicy") == old_spec.get("externalTrafficPolicy"):
        new_spec.pop("externalTrafficPolicy")


# --- validation -------------------------------------------------------------------

def _validate_ports(spec: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    ports = spec.get("ports") or []
    names: set[str] = set()
    seen: set[tuple] = set()
    seen_node: set[tuple] = set()
    for i, port in enumerate(ports):
        p = index("spec.ports", i)
        name = port.get("name") or ""
        if len(ports) > 1 and not name:
            errs.append(errors.required(child(p, "name")))
        elif name:
            errs += dns1123_label_errors(name, child(p, "name"))
            if name in names:
                errs.append(errors.duplicate(child(p, "name"), name))
            names.add(name)
        errs += port_errors(port.get("port"), child(p, "port"))
        protocol = port.get("protocol")
        errs += required_one_of(protocol, child(p, "protocol"), PROTOCOLS)
        target = port.get("targetPort")
        if isinstance(target, int) and not isinstance(target, bool):
            errs += port_errors(target, child(p, "targetPort"))
        elif isinstance(target, str):
            errs += port_name_errors(target, child(p, "targetPort"))
        if spec.get("type") == "ClusterIP" and port.get("nodePort"):
            errs.append(errors.forbidden(child(p, "nodePort"), "may not be used when `type` is 'ClusterIP'"))
        if port.get("nodePort"):
            node_key = (protocol, port["nodePort"])
            if node_key in seen_node:
                errs.append(errors.duplicate(child(p, "nodePort"), port["nodePort"]))
            seen_node.add(node_key)
        port_key = (protocol, port.get("port"))
        if port_key in seen:
            errs.append(errors.duplicate(p, GoLiteral(
                f'core.ServicePort{{Name:"", Protocol:"{protocol}", AppProtocol:(*string)(nil), Port:{port.get("port")}, '
                f'TargetPort:intstr.IntOrString{{Type:0, IntVal:0, StrVal:""}}, NodePort:0}}',
                go_json_struct([("Name", ""), ("Protocol", protocol), ("AppProtocol", None), ("Port", port.get("port")),
                                ("TargetPort", 0), ("NodePort", 0)]))))
        seen.add(port_key)
    return errs


def _validate_type_rules(spec: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    svc_type = spec.get("type")
    headless = _is_headless(spec)
    if not spec.get("ports") and not headless and svc_type != "ExternalName":
        errs.append(errors.required("spec.ports"))
    if svc_type in ("LoadBalancer", "NodePort") and headless:
        errs.append(errors.invalid("spec.clusterIPs[0]", "None", f"may not be set to 'None' for {svc_type} services"))
    if svc_type == "ExternalName":
        if spec.get("clusterIPs"):
            errs.append(errors.forbidden("spec.clusterIPs", "may not be set for ExternalName services"))
        if spec.get("ipFamilies"):
            errs.append(errors.forbidden("spec.ipFamilies", "may not be set for ExternalName services"))
        if spec.get("ipFamilyPolicy") is not None:
            errs.append(errors.forbidden("spec.ipFamilyPolicy", "may not be set for ExternalName services"))
        cname = (spec.get("externalName") or "").removesuffix(".")
        if cname:
            errs += dns1123_subdomain_errors(cname, "spec.externalName")
        else:
            errs.append(errors.required("spec.externalName"))
    errs += required_one_of(svc_type, "spec.type", SERVICE_TYPES)
    return errs


def _validate_policies(spec: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    errs += required_one_of(spec.get("sessionAffinity"), "spec.sessionAffinity", SESSION_AFFINITIES)
    etp = spec.get("externalTrafficPolicy")
    if not _externally_accessible(spec):
        if etp:
            errs.append(errors.invalid("spec.externalTrafficPolicy", etp, "may only be set for externally-accessible services"))
    elif etp not in TRAFFIC_POLICIES:
        errs.append(errors.not_supported("spec.externalTrafficPolicy", etp, TRAFFIC_POLICIES))
    itp = spec.get("internalTrafficPolicy")
    if itp is not None and itp not in TRAFFIC_POLICIES:
        errs.append(errors.not_supported("spec.internalTrafficPolicy", itp, TRAFFIC_POLICIES))
    if spec.get("allocateLoadBalancerNodePorts") is not None and spec.get("type") != "LoadBalancer":
        errs.append(errors.forbidden("spec.allocateLoadBalancerNodePorts", "may only be used when `type` is 'LoadBalancer'"))
    return errs


def _validate_cluster_ips(spec: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    ips = spec.get("clusterIPs") or []
    if spec.get("clusterIP") and ips and spec["clusterIP"] != ips[0]:
        errs.append(errors.invalid("spec.clusterIPs", go_string_slice(ips), "first value must match `clusterIP`"))
    for i, ip in enumerate(ips):
        if ip == "None":
            if i > 0 or len(ips) > 1:
                errs.append(errors.invalid(index("spec.clusterIPs", i), ip, "'None' must be the first and only value"))
            continue
        try:
            ipaddress.ip_address(ip)
        except ValueError:
            errs.append(errors.invalid(index("spec.clusterIPs", i), ip,
                                       "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"))
    return errs


def _check_cluster_ips_related_fields(svc: Obj) -> None:
    """The REST layer's loose pre-validation (``initIPFamilyFields`` calls
    ``ValidateServiceClusterIPsRelatedFields`` before allocating, ahead of the strategy's
    validation): clusterIPs that disagree with clusterIP are a 422 with that cause alone."""
    spec = svc["spec"]
    if spec.get("type") == "ExternalName":
        return
    problems = _validate_cluster_ips(spec)
    if problems:
        raise errors.invalid_object("", "Service", (svc.get("metadata") or {}).get("name") or "", problems)


def validate_service(svc: Obj) -> list[FieldError]:
    spec = svc.get("spec") or {}
    selector = spec.get("selector")
    selector_errors = validate_labels(selector, "spec.selector") if isinstance(selector, dict) else []
    return (_validate_type_rules(spec) + _validate_ports(spec) + selector_errors + _validate_policies(spec)
            + _validate_cluster_ips(spec))


def _load_balancer_status_errors(new: Obj, old: Obj) -> list[FieldError]:
    """``ValidateLoadBalancerStatus``: ingress only for a LoadBalancer; each ``ip`` an IP
    address (one the old status held may stay), ``ipMode`` with an ``ip`` and only then,
    each ``hostname`` a DNS name."""
    path = "status.loadBalancer.ingress"
    ingress = ((new.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    if ingress and (new.get("spec") or {}).get("type") != "LoadBalancer":
        return [errors.forbidden(path, "may only be used when `spec.type` is 'LoadBalancer'")]
    existing = {i.get("ip") for i in ((old.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
                if isinstance(i, dict) and i.get("ip")}
    errs: list[FieldError] = []
    for i, entry in enumerate(e if isinstance(e, dict) else {} for e in ingress):
        here = index(path, i)
        ip, mode, hostname = entry.get("ip") or "", entry.get("ipMode"), entry.get("hostname") or ""
        if ip and ip not in existing and not _is_ip(ip):
            errs.append(errors.invalid(child(here, "ip"), ip, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"))
        if mode is None:
            if ip:
                errs.append(errors.required(child(here, "ipMode"), "must be specified when `ip` is set"))
        elif not ip:
            errs.append(errors.forbidden(child(here, "ipMode"), "may not be specified when `ip` is not set"))
        elif mode not in IP_MODES:
            errs.append(errors.not_supported(child(here, "ipMode"), mode, list(IP_MODES)))
        if hostname:
            errs += dns1123_subdomain_errors(hostname, child(here, "hostname"))
            if _is_ip(hostname):
                errs.append(errors.invalid(child(here, "hostname"), hostname, "must be a DNS name, not an IP address"))
    return errs


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def validate_cluster_ip_update(new_spec: Obj, old_spec: Obj) -> list[FieldError]:
    """``validateUpgradeDowngradeClusterIPs`` for single-stack clusters."""
    if "ExternalName" in (new_spec.get("type"), old_spec.get("type")):
        return []
    if _is_headless(new_spec) and _is_headless(old_spec):
        return []
    old_ips = old_spec.get("clusterIPs") or []
    new_ips = new_spec.get("clusterIPs") or []
    shown = go_string_slice(new_ips if new_ips else None)
    if len(old_ips) == len(new_ips):
        return [errors.invalid("spec.clusterIPs[0]", shown, "may not change once set")
                for old_ip, new_ip in zip(old_ips, new_ips) if old_ip != new_ip]
    if len(old_ips) > len(new_ips):
        if not new_ips:
            return [errors.invalid("spec.clusterIPs[0]", shown, "primary clusterIP can not be unset")]
        if new_ips[0] != old_ips[0]:
            return [errors.invalid("spec.clusterIPs[0]", shown, "may not change once set")]
        return []
    if old_ips and new_ips[0] != old_ips[0]:
        return [errors.invalid("spec.clusterIPs[0]", shown, "may not change once set")]
    return []


#: A load balancer ingress's ``ipMode`` values (sorted, as upstream lists them).
IP_MODES = ("Proxy", "VIP")


class ServiceStrategy(Strategy):
    """Services: defaults, IP/port allocation on create and on type changes, immutable IPs.

    One per cluster: it carries the cluster's Service ranges (:class:`ServiceNetwork`)."""

    def __init__(self, network: ServiceNetwork = ServiceNetwork()) -> None:
        self.network = network

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        default_service(obj)

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        _sync_cluster_ips(obj["spec"])
        _check_cluster_ips_related_fields(obj)
        obj["status"] = {"loadBalancer": {}}
        if not validate_service(obj):
            _allocate(obj, None, ctx, self.network)

    def prepare_for_update(self, new: Obj, old: Obj, ctx: WriteContext) -> None:
        old_spec = old.get("spec") or {}
        _drop_type_dependent_fields(new, old_spec)
        new_spec = new["spec"]
        _keep_allocated(new_spec, old_spec)
        _normalize_cluster_ips(new_spec, old_spec)
        _sync_cluster_ips(new_spec)
        _check_cluster_ips_related_fields(new)
        if not validate_service(new) and not validate_cluster_ip_update(new_spec, old_spec):
            _allocate(new, old_spec, ctx, self.network)

    def validate(self, obj: Obj) -> list[FieldError]:
        return validate_service(obj)

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return _load_balancer_status_errors(new, old)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        new_spec = new.get("spec") or {}
        old_spec = old.get("spec") or {}
        errs = validate_cluster_ip_update(new_spec, old_spec)
        if needs_health_check(old_spec) and needs_health_check(new_spec) \
                and old_spec.get("healthCheckNodePort") != new_spec.get("healthCheckNodePort"):
            errs.append(errors.forbidden("spec.healthCheckNodePort", "field is immutable"))
        return errs + validate_service(new)


def _services(strategy: ServiceStrategy, name_rule: NameRule = name_is_dns1035_label) -> ResourceType:
    return ResourceType(
        "", "v1", "Service", "services", namespaced=True, short_names=("svc",), categories=("all",),
        subresources=(STATUS, PROXY), strategy=strategy, table=SERVICE_TABLE, field_set=SERVICE_FIELD_SET,
        name_rule=name_rule, create_on_update=True, returns_deleted_object=True,
    )


#: The default release's (1.36) declaration: names are DNS-1123 labels.
SERVICES = _services(ServiceStrategy(), name_is_dns_label)


def services_type(network: ServiceNetwork | None = None, relaxed_names: bool = True) -> ResourceType:
    """The Services declaration of a cluster whose Service ranges are ``network`` (None: kind's).
    ``relaxed_names``: RelaxedServiceNameValidation (on from 1.36): a name is a DNS-1123 label
    (it may start with a digit; a dotted one is told ``must not contain dots``), not DNS-1035."""
    strategy = ServiceStrategy(network) if network is not None else ServiceStrategy()
    return _services(strategy, name_is_dns_label if relaxed_names else name_is_dns1035_label)
