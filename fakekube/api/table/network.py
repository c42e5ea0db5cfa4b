"""Printers of the networking types: Services, Endpoints, EndpointSlices, Ingresses and
NetworkPolicies.

Long address lists are cut to three entries with "+ N more...", as upstream prints them.
"""

from __future__ import annotations

from datetime import datetime

from fakekube.api.table.cells import (
    NONE,
    UNSET,
    age_cell,
    format_label_selector,
    format_labels,
    get,
    meta,
    name_cell,
    simple,
)
from fakekube.api.table.columns import AGE, NAME, Cells, Obj, TableSpec, col, doc
from fakekube.api.table.duration import UNKNOWN, age


def _lb_ingress(status: Obj | None) -> str:
    """The load balancer's ingress IPs or hostnames, sorted and de-duplicated."""
    hosts = {i.get("ip") or i.get("hostname") for i in get(status, "loadBalancer", "ingress", default=[])}
    return ",".join(sorted(h for h in hosts if h))


def service_external_ip(svc: Obj) -> str:
    """getServiceExternalIP: per-type rules, "<pending>" for a load balancer without one."""
    spec = svc.get("spec") or {}
    external = spec.get("externalIPs") or []
    svc_type = spec.get("type", "ClusterIP")
    if svc_type in ("ClusterIP", "NodePort"):
        return ",".join(external) if external else NONE
    if svc_type == "LoadBalancer":
        lb = _lb_ingress(svc.get("status"))
        joined = ([lb] if lb else []) + external
        return ",".join(joined) if joined else "<pending>"
    if svc_type == "ExternalName":
        return spec.get("externalName", "")
    return UNKNOWN


def service_ports(ports: list[Obj] | None) -> str:
    """PORT(S): ``port/protocol``, or ``port:nodePort/protocol`` where a node port is set."""
    pieces = []
    for port in ports or []:
        protocol = port.get("protocol", "TCP")
        if port.get("nodePort"):
            pieces.append(f"{port.get('port')}:{port['nodePort']}/{protocol}")
        else:
            pieces.append(f"{port.get('port')}/{protocol}")
    return ",".join(pieces) or NONE


def _service_cells(svc: Obj, now: datetime) -> Cells:
    spec = svc.get("spec") or {}
    return [meta(svc, "name", ""), spec.get("type", "ClusterIP"), spec.get("clusterIP") or NONE,
            service_external_ip(svc), service_ports(spec.get("ports")), age(meta(svc, "creationTimestamp"), now),
            format_labels(spec.get("selector"))]


def _endpoints_cells(ep: Obj, now: datetime) -> Cells:
    """formatEndpoints: ready ``ip:port`` pairs (bare IPs for a subset without ports, as a
    headless Service without ports has), three at most."""
    addresses: list[str] = []
    count = 0
    for subset in ep.get("subsets") or []:
        ready = subset.get("addresses") or []
        if not subset.get("ports"):
            count += len(ready)
            addresses += [addr.get("ip", "") for addr in ready][:max(0, 3 - len(addresses))]
            continue
        for port in subset.get("ports") or []:
            for addr in ready:
                ip = addr.get("ip", "")
                host = f"[{ip}]" if ":" in ip else ip
                if len(addresses) < 3:
                    addresses.append(f"{host}:{port.get('port')}")
                count += 1
    text = ",".join(addresses) if addresses else NONE
    if count > 3:
        text = f"{text} + {count - 3} more..."
    return [meta(ep, "name", ""), text, age(meta(ep, "creationTimestamp"), now)]


def _endpointslice_cells(es: Obj, now: datetime) -> Cells:
    ports = es.get("ports")
    ports_text = UNSET if not ports else ",".join(
        str(p.get("port")) if p.get("port") is not None else UNSET for p in ports)
    addresses = [a for e in es.get("endpoints") or [] for a in e.get("addresses") or []]
    addr_text = ",".join(addresses[:3]) if addresses else UNSET
    if len(addresses) > 3:
        addr_text = f"{addr_text} + {len(addresses) - 3} more..."
    return [meta(es, "name", ""), es.get("addressType", ""), ports_text, addr_text, age_cell(es, now)]


def _ingress_cells(ing: Obj, now: datetime) -> Cells:
    spec = ing.get("spec") or {}
    rules = spec.get("rules") or []
    hosts = [r["host"] for r in rules if r.get("host")][:3]
    hosts_text = ",".join(hosts) if hosts else "*"
    if len(rules) > 3 and hosts:
        hosts_text = f"{hosts_text} + {len(rules) - 3} more..."
    return [meta(ing, "name", ""), spec.get("ingressClassName") or NONE, hosts_text, _lb_ingress(ing.get("status")),
            "80, 443" if spec.get("tls") else "80", age_cell(ing, now)]


SERVICE_TABLE = TableSpec((
    NAME,
    doc("Type", "core.v1.ServiceSpec", "type"),
    doc("Cluster-IP", "core.v1.ServiceSpec", "clusterIP"),
    doc("External-IP", "core.v1.ServiceSpec", "externalIPs"),
    doc("Port(s)", "core.v1.ServiceSpec", "ports"),
    AGE,
    doc("Selector", "core.v1.ServiceSpec", "selector", priority=1),
), _service_cells)

ENDPOINTS_TABLE = TableSpec((
    NAME,
    doc("Endpoints", "core.v1.Endpoints", "subsets"),
    AGE,
), _endpoints_cells)

ENDPOINT_SLICE_TABLE = TableSpec((
    NAME,
    doc("AddressType", "discovery.v1.EndpointSlice", "addressType"),
    doc("Ports", "discovery.v1.EndpointSlice", "ports"),
    doc("Endpoints", "discovery.v1.EndpointSlice", "endpoints"),
    AGE,
), _endpointslice_cells)

INGRESS_TABLE = TableSpec((
    NAME,
    col("Class", description="The name of the IngressClass resource that should be used for additional "
                             "configuration"),
    col("Hosts", description="Hosts that incoming requests are matched against before the ingress rule"),
    col("Address", description="Address is a list containing ingress points for the load-balancer"),
    col("Ports", description="Ports of TLS configurations that open"),
    AGE,
), _ingress_cells)

NETWORK_POLICY_TABLE = TableSpec((
    NAME,
    doc("Pod-Selector", "networking.v1.NetworkPolicySpec", "podSelector"),
    AGE,
), simple(name_cell, lambda o, n: format_label_selector(get(o, "spec", "podSelector", default={})), age_cell))


def _ingress_class_cells(ic: Obj, now: datetime) -> Cells:
    spec = ic.get("spec") or {}
    parameters = NONE
    ref = spec.get("parameters")
    if ref is not None:
        parameters = ref.get("kind", "") + (f".{ref['apiGroup']}" if ref.get("apiGroup") is not None else "")
        parameters += "/" + ref.get("name", "")
    return [meta(ic, "name", ""), spec.get("controller", ""), parameters, age_cell(ic, now)]


INGRESS_CLASS_TABLE = TableSpec((
    NAME,
    col("Controller", description="Controller that is responsible for handling this class"),
    col("Parameters", description="A reference to a resource with additional parameters"),
    AGE,
), _ingress_class_cells)

SERVICE_CIDR_TABLE = TableSpec((
    NAME,
    doc("CIDRs", "networking.v1.ServiceCIDRSpec", "cidrs"),
    AGE,
), lambda o, now: [meta(o, "name", ""), ",".join(get(o, "spec", "cidrs", default=[]) or []), age_cell(o, now)])


def _ip_address_parent(ip: Obj) -> str:
    """PARENTREF: ``resource[.group]/[namespace/]name`` (a GroupResource, lowercased)."""
    ref = get(ip, "spec", "parentRef")
    if ref is None:
        return NONE
    text = ref.get("resource", "") + (f".{ref['group']}" if ref.get("group") else "")
    text = text.lower()
    if ref.get("namespace"):
        text += "/" + ref["namespace"]
    return text + "/" + ref.get("name", "")


#: Two columns, three cells: upstream's printIPAddress appends the age with no column for it.
IP_ADDRESS_TABLE = TableSpec((
    NAME,
    doc("ParentRef", "networking.v1.IPAddressSpec", "parentRef"),
), lambda o, now: [meta(o, "name", ""), _ip_address_parent(o), age_cell(o, now)])
