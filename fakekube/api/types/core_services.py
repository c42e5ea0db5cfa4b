"""Services: defaults, ClusterIP and NodePort allocation, validation, update rules.

Allocation draws from the cluster's seeded generator and checks the store for IPs and
ports in use, so the same seed gives the same IPs. Like upstream's allocators, random
picks come from the upper ("dynamic") part of each range first, leaving the lower
part for addresses users ask for explicitly.
"""

from __future__ import annotations

import ipaddress
from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FieldError
from fakekube.api.machinery.validation import name_is_dns1035_label
from fakekube.api.registry import STATUS, ResourceType, Strategy, WriteContext
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

SERVICE_CIDR = ipaddress.ip_network("10.96.0.0/12")
NODE_PORT_MIN = 30000
NODE_PORT_MAX = 32767
SERVICE_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]
SESSION_AFFINITIES = ["ClientIP", "None"]
PROTOCOLS = ["SCTP", "TCP", "UDP"]
TRAFFIC_POLICIES = ["Cluster", "Local"]
_ALLOCATION_ATTEMPTS = 64


def _externally_accessible(spec: Obj) -> bool:
    return spec.get("type") in ("NodePort", "LoadBalancer") or bool(spec.get("externalIPs"))


def _needs_node_ports(spec: Obj) -> bool:
    if spec.get("type") == "NodePort":
        return True
    return spec.get("type") == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts", True) is not False


def _is_headless(spec: Obj) -> bool:
    return spec.get("clusterIP") == "None" or (spec.get("clusterIPs") or [None])[0] == "None"


def default_service(svc: Obj) -> None:
    """SetDefaults_Service plus the IP-family fields the REST layer fills upstream."""
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
    if spec["type"] == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is None:
        spec["allocateLoadBalancerNodePorts"] = True
    _default_cluster_ips(spec)


def _default_cluster_ips(spec: Obj) -> None:
    """Keep clusterIP and clusterIPs in step and pick the (single-stack IPv4) families."""
    if spec["type"] == "ExternalName":
        return
    if spec.get("clusterIP") and not spec.get("clusterIPs"):
        spec["clusterIPs"] = [spec["clusterIP"]]
    elif spec.get("clusterIPs") and not spec.get("clusterIP"):
        spec["clusterIP"] = spec["clusterIPs"][0]
    headless = _is_headless(spec)
    if spec.get("ipFamilyPolicy") is None:
        selectorless_headless = headless and not spec.get("selector")
        spec["ipFamilyPolicy"] = "RequireDualStack" if selectorless_headless else "SingleStack"
    if not spec.get("ipFamilies"):
        families = ["IPv4"]
        if headless and spec["ipFamilyPolicy"] != "SingleStack":
            families.append("IPv6")
        spec["ipFamilies"] = families


def _used_cluster_ips(ctx: WriteContext) -> set[str]:
    used = set()
    for svc in ctx.store.list_objects("", "services"):
        for ip in (svc.get("spec") or {}).get("clusterIPs") or []:
            used.add(ip)
    return used


def _used_node_ports(ctx: WriteContext) -> set[int]:
    used = set()
    for svc in ctx.store.list_objects("", "services"):
        for port in (svc.get("spec") or {}).get("ports") or []:
            if port.get("nodePort"):
                used.add(port["nodePort"])
        hc = (svc.get("spec") or {}).get("healthCheckNodePort")
        if hc:
            used.add(hc)
    return used


def _pick(ctx: WriteContext, low: int, high: int, dynamic_from: int, used: set) -> int:
    """A random free value in [low, high]; the dynamic band first, then anywhere, then a scan."""
    for start in (dynamic_from, low):
        for _ in range(_ALLOCATION_ATTEMPTS):
            value = ctx.rng.randrange(start, high + 1)
            if value not in used:
                return value
    for value in range(low, high + 1):
        if value not in used:
            return value
    raise errors.internal_error("range is full")


def allocate_cluster_ip(ctx: WriteContext, used: set[str]) -> str:
    """An unused IP in 10.96.0.0/12; offsets 0 (network), 1 (kubernetes) and the broadcast are skipped."""
    size = SERVICE_CIDR.num_addresses
    static_band = min(max(16, size // 16), 256)
    used_offsets = {int(ipaddress.ip_address(ip)) - int(SERVICE_CIDR.network_address)
                    for ip in used if _in_cidr(ip)}
    offset = _pick(ctx, 2, size - 2, static_band, used_offsets)
    return str(SERVICE_CIDR.network_address + offset)


def _in_cidr(ip: str) -> bool:
    try:
        return ipaddress.ip_address(ip) in SERVICE_CIDR
    except ValueError:
        return False


def allocate_node_port(ctx: WriteContext, used: set[int]) -> int:
    size = NODE_PORT_MAX - NODE_PORT_MIN + 1
    static_band = min(max(16, size // 32), 128)
    return _pick(ctx, NODE_PORT_MIN, NODE_PORT_MAX, NODE_PORT_MIN + static_band, used)


def _allocate(svc: Obj, ctx: WriteContext) -> None:
    """Fill clusterIP(s), node ports and the health-check port where the spec needs them."""
    spec = svc.get("spec") or {}
    if spec.get("type") != "ExternalName" and not spec.get("clusterIP"):
        ip = allocate_cluster_ip(ctx, _used_cluster_ips(ctx))
        spec["clusterIP"] = ip
        spec["clusterIPs"] = [ip]
    if _needs_node_ports(spec):
        used = _used_node_ports(ctx) | {p.get("nodePort") for p in spec.get("ports") or [] if p.get("nodePort")}
        for port in spec.get("ports") or []:
            if not port.get("nodePort"):
                port["nodePort"] = allocate_node_port(ctx, used)
                used.add(port["nodePort"])
    if spec.get("type") == "LoadBalancer" and spec.get("externalTrafficPolicy") == "Local" \
            and not spec.get("healthCheckNodePort"):
        used = _used_node_ports(ctx) | {p.get("nodePort") for p in spec.get("ports") or []}
        spec["healthCheckNodePort"] = allocate_node_port(ctx, used)


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
    if _needs_node_ports(old_spec) and _needs_node_ports(new_spec):
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
            and new_spec.get("type") == "LoadBalancer" and new_spec.get("externalTrafficPolicy") == "Local":
        new_spec["healthCheckNodePort"] = old_spec["healthCheckNodePort"]


def _drop_type_dependent_fields(new_spec: Obj, old_spec: Obj) -> None:
    """Upstream's ``dropTypeDependentFields``: when the type changes, values that only
    made sense for the old type are cleared if the client left them untouched, so
    ``kubectl apply`` can switch NodePort → ClusterIP or ClusterIP → ExternalName."""
    if new_spec.get("type") == old_spec.get("type"):
        return
    if new_spec.get("type") == "ExternalName" and old_spec.get("type") != "ExternalName":
        for name in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
            if name in new_spec and new_spec.get(name) == old_spec.get(name):
                new_spec.pop(name)
    if _needs_node_ports(old_spec) and not _needs_node_ports(new_spec):
        old_by_key = {(p.get("port"), p.get("protocol")): p.get("nodePort") for p in old_spec.get("ports") or []}
        for port in new_spec.get("ports") or []:
            if port.get("nodePort") and old_by_key.get((port.get("port"), port.get("protocol"))) == port["nodePort"]:
                port.pop("nodePort")
    if old_spec.get("healthCheckNodePort") and new_spec.get("type") != "LoadBalancer" \
            and new_spec.get("healthCheckNodePort") == old_spec.get("healthCheckNodePort"):
        new_spec.pop("healthCheckNodePort", None)
    if new_spec.get("type") != "LoadBalancer":
        if new_spec.get("allocateLoadBalancerNodePorts") == old_spec.get("allocateLoadBalancerNodePorts"):
            new_spec.pop("allocateLoadBalancerNodePorts", None)
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
                f'TargetPort:intstr.IntOrString{{Type:0, IntVal:0, StrVal:""}}, NodePort:0}}')))
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


def validate_service(svc: Obj) -> list[FieldError]:
    spec = svc.get("spec") or {}
    return _validate_type_rules(spec) + _validate_ports(spec) + _validate_policies(spec) + _validate_cluster_ips(spec)


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


class ServiceStrategy(Strategy):
    """Services: defaults, IP/port allocation on create and on type changes, immutable IPs."""

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        default_service(obj)

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        obj["status"] = {"loadBalancer": {}}
        if not validate_service(obj):
            _allocate(obj, ctx)

    def prepare_for_update(self, new: Obj, old: Obj, ctx: WriteContext) -> None:
        new_spec = ensure_dict(new, "spec")
        old_spec = old.get("spec") or {}
        _drop_type_dependent_fields(new_spec, old_spec)
        _keep_allocated(new_spec, old_spec)
        _default_cluster_ips(new_spec)
        if not validate_service(new) and not validate_cluster_ip_update(new_spec, old_spec):
            _allocate(new, ctx)

    def validate(self, obj: Obj) -> list[FieldError]:
        return validate_service(obj)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        new_spec = new.get("spec") or {}
        old_spec = old.get("spec") or {}
        errs = validate_cluster_ip_update(new_spec, old_spec)
        if old_spec.get("type") == "LoadBalancer" and new_spec.get("type") == "LoadBalancer" \
                and old_spec.get("externalTrafficPolicy") == "Local" and new_spec.get("externalTrafficPolicy") == "Local" \
                and old_spec.get("healthCheckNodePort") != new_spec.get("healthCheckNodePort"):
            errs.append(errors.forbidden("spec.healthCheckNodePort", "field is immutable"))
        return errs + validate_service(new)


SERVICES = ResourceType(
    "", "v1", "Service", "services", namespaced=True, short_names=("svc",), categories=("all",),
    subresources=(STATUS,), strategy=ServiceStrategy(), table=SERVICE_TABLE, field_set=SERVICE_FIELD_SET,
    name_rule=name_is_dns1035_label, create_on_update=True, returns_deleted_object=True,
)
