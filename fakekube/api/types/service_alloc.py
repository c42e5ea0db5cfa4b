"""Service ClusterIPs and NodePorts, allocated as kube-apiserver 1.33 allocates them.

1.33 hands out ClusterIPs with the IPAddress-based allocator (MultiCIDRServiceAllocator is
GA and locked on: pkg/registry/core/service/ipallocator/ipallocator.go behind the
MetaAllocator of cidrallocator.go, the bitmap allocator still written alongside because
DisableAllocatorDualWrite is off) and NodePorts with the bitmap port allocator
(portallocator/allocator.go). Both pick a free value the same way (KEP-3070,
``randomScanStrategyWithOffset``): the range is split at an offset (IPs: min(max(16,
size/16), 256); ports: min(max(16, size/32), 128)); a start is drawn at random in the
upper part and the scan moves forward from it, wrapping round, to the first free value;
only a full upper part sends the scan to the lower part, which is thereby kept for
values users ask for (the ``kubernetes`` Service's 10.96.0.1, CoreDNS's 10.96.0.10).

Differences, on purpose: the random start comes from the cluster's seeded generator (one
seed, the same IPs and ports on every run), and what is in use is read from the Services in
the store, so an IP or port is released the moment its Service is deleted or stops
needing it (upstream's IPAddress objects and bitmaps are not kept; no IPAddress or
ServiceCIDR objects are served). The error texts are upstream's, word for word.
"""

from __future__ import annotations

import ipaddress
from typing import Any, Callable, Iterable

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FieldError
from fakekube.api.registry import Rng
from fakekube.api.types._util import go_string_slice, index

Obj = dict[str, Any]

#: kind's ``networking.serviceSubnet`` (kubeadm's own default is 10.96.0.0/12).
DEFAULT_SERVICE_CIDR = "10.96.0.0/16"
#: kube-apiserver's ``--service-node-port-range`` default.
DEFAULT_NODE_PORT_RANGE = "30000-32767"
#: kube-apiserver refuses a larger ``--service-cluster-ip-range`` while the bitmap
#: allocator is still written (DisableAllocatorDualWrite off in 1.33): at most 20 host bits.
MAX_CIDR_HOST_BITS = 20

IPV4, IPV6 = "IPv4", "IPv6"
CLUSTER_IP_NONE = "None"

# The allocators' error texts (ipallocator/interfaces.go, portallocator/allocator.go).
IP_ALLOCATED = "provided IP is already allocated"
NETWORK_MISMATCH = "the provided network does not match the current range"
RANGE_FULL = "range is full"
PORT_ALLOCATED = "provided port is already allocated"


def _range_offset(size: int, minimum: int, maximum: int, step: int) -> int:
    """``calculateRangeOffset``: the size of the lower (static) band of a range."""
    if size <= minimum:
        return 0
    return min(max(minimum, size // step), maximum)


def scan_with_offset(size: int, offset: int, taken: Callable[[int], bool], rng: Rng) -> int | None:
    """``randomScanStrategyWithOffset``: the index of a free value in ``[0, size)``, upper
    band ``[offset, size)`` first, each band scanned from a random start; None when full."""
    upper = size - offset
    if upper > 0:
        start = rng.randrange(0, upper)
        for step in range(upper):
            at = offset + (start + step) % upper
            if not taken(at):
                return at
    if offset > 0:
        start = rng.randrange(0, offset)
        for step in range(offset):
            at = (start + step) % offset
            if not taken(at):
                return at
    return None


class IPRange:
    """One ``--service-cluster-ip-range``: the addresses a ClusterIP may take.

    The network's own address is never handed out, nor (IPv4) its broadcast address.
    """

    def __init__(self, cidr: str) -> None:
        self.network = ipaddress.ip_network(cidr, strict=True)
        host_bits = self.network.max_prefixlen - self.network.prefixlen
        if self.network.version == 6 and self.network.prefixlen < 64:
            raise ValueError(f"shortest allowed prefix length for service CIDR is 64, got {self.network.prefixlen}")
        if host_bits > MAX_CIDR_HOST_BITS:
            raise ValueError(f"specified --service-cluster-ip-range is too large; for {self.network.max_prefixlen}-bit "
                             f"addresses, the mask must be >= /{self.network.max_prefixlen - MAX_CIDR_HOST_BITS}")
        self.family = IPV4 if self.network.version == 4 else IPV6
        self._first = int(self.network.network_address) + 1
        self.size = self.network.num_addresses - (2 if self.network.version == 4 else 1)
        if self.size < 1:
            raise ValueError(f"service CIDR {cidr} has no address to hand out")
        self.offset = _range_offset(self.network.num_addresses, 16, 256, 16)

    @property
    def first_address(self) -> str:
        """The first usable address: the ``kubernetes`` Service's ClusterIP (10.96.0.1)."""
        return self._address(0)

    def _address(self, index: int) -> str:
        return str(ipaddress.ip_address(self._first + index))

    def _index(self, ip: str) -> int | None:
        try:
            value = int(ipaddress.ip_address(ip))
        except ValueError:
            return None
        at = value - self._first
        return at if 0 <= at < self.size else None

    def contains(self, ip: str) -> bool:
        try:
            return ipaddress.ip_address(ip) in self.network
        except ValueError:
            return False

    def allocate_next(self, used: set[str], rng: Rng) -> str | None:
        """A free address, upstream's way; None when the range is full."""
        used_indexes = {at for at in (self._index(ip) for ip in used) if at is not None}
        at = scan_with_offset(self.size, self.offset, used_indexes.__contains__, rng)
        return None if at is None else self._address(at)

    def refusal(self, ip: str, used: set[str]) -> str | None:
        """Why ``ip`` cannot be taken (upstream's error text), or None if it is free."""
        if not self.contains(ip):
            return NETWORK_MISMATCH
        if self._index(ip) is None:
            return (f"the provided IP ({ipaddress.ip_address(ip)}) is not in the valid range. "
                    f"The range of valid IPs is {self.network}")
        return IP_ALLOCATED if normalized_ip(ip) in used else None


class PortRange:
    """``--service-node-port-range``: ``base-max`` inclusive (or ``base+size``)."""

    def __init__(self, spec: str) -> None:
        text = spec.strip()
        try:
            if "+" in text:
                base_text, size_text = text.split("+", 1)
                self.base, self.size = int(base_text), int(size_text) + 1
            else:
                low, _, high = text.partition("-")
                self.base, self.size = int(low), int(high or low) - int(low) + 1
        except ValueError:
            raise ValueError(f"invalid port range {spec!r}: expected <low>-<high>, e.g. 30000-32767") from None
        if not (1 <= self.base and self.size >= 1 and self.base + self.size - 1 <= 65535):
            raise ValueError(f"invalid port range {spec!r}: ports must be within 1-65535, low <= high")
        self.offset = _range_offset(self.size, 16, 128, 32)

    def __str__(self) -> str:
        return f"{self.base}-{self.base + self.size - 1}"

    def allocate_next(self, used: set[int], rng: Rng) -> int | None:
        at = scan_with_offset(self.size, self.offset, lambda i: self.base + i in used, rng)
        return None if at is None else self.base + at

    def refusal(self, port: int, used: set[int]) -> str | None:
        if not self.base <= port < self.base + self.size:
            return f"provided port is not in the valid range. The range of valid ports is {self}"
        return PORT_ALLOCATED if port in used else None


class ServiceNetwork:
    """kube-apiserver's Service ranges: ``--service-cluster-ip-range`` (single stack) and
    ``--service-node-port-range``. ``ValueError`` when either does not parse: both are
    parsed when it is made, so a bad config fails at once."""

    __slots__ = ("cidr", "node_port_range", "ip_range", "port_range")

    def __init__(self, cidr: str = DEFAULT_SERVICE_CIDR, node_port_range: str = DEFAULT_NODE_PORT_RANGE) -> None:
        self.cidr = cidr
        self.node_port_range = node_port_range
        self.ip_range = IPRange(cidr)
        self.port_range = PortRange(node_port_range)

    @property
    def family(self) -> str:
        """The cluster's (only) IP family: the default of ``spec.ipFamilies``."""
        return self.ip_range.family


def normalized_ip(ip: str) -> str:
    try:
        return str(ipaddress.ip_address(ip))
    except ValueError:
        return ip


def used_cluster_ips(services: Iterable[Obj]) -> set[str]:
    return {normalized_ip(ip) for svc in services for ip in (svc.get("spec") or {}).get("clusterIPs") or []
            if ip and ip != CLUSTER_IP_NONE}


def node_ports_of(spec: Obj) -> set[int]:
    """Every node port a Service holds: its ports' and its health-check port."""
    ports = {p["nodePort"] for p in spec.get("ports") or [] if isinstance(p, dict) and p.get("nodePort")}
    if spec.get("healthCheckNodePort"):
        ports.add(spec["healthCheckNodePort"])
    return ports


def used_node_ports(services: Iterable[Obj]) -> set[int]:
    return {port for svc in services for port in node_ports_of(svc.get("spec") or {})}


# -- ClusterIPs ------------------------------------------------------------------------

def allocate_cluster_ips(name: str, spec: Obj, network: ServiceNetwork, used: set[str], rng: Rng) -> None:
    """``allocClusterIPs``: fill the empty ClusterIPs of the cluster's family, reserve the
    ones the client chose. Raises upstream's 422 (a taken or foreign IP) or 500 (full)."""
    if spec.get("type") == "ExternalName":
        return
    ips = list(spec.get("clusterIPs") or [])
    if ips and ips[0] == CLUSTER_IP_NONE:
        return
    families = spec.get("ipFamilies") or [network.family]
    ips += [""] * (len(families) - len(ips))
    for i, family in enumerate(families):
        if family != network.family:
            continue  # refused earlier (init_ip_family_fields): never reached
        ips[i] = _allocate_ip(name, ips, ips[i], network.ip_range, used, rng)
    spec["clusterIPs"] = ips
    spec["clusterIP"] = ips[0]


def _allocate_ip(name: str, ips: list[str], ip: str, ip_range: IPRange, used: set[str], rng: Rng) -> str:
    if not ip:
        allocated = ip_range.allocate_next(used, rng)
        if allocated is None:
            raise errors.internal_error(f"failed to allocate a serviceIP: {RANGE_FULL}")
        return allocated
    problem = ip_range.refusal(ip, used)
    if problem is not None:
        raise _invalid(name, errors.invalid("spec.clusterIPs", go_string_slice(ips), f"failed to allocate IP {ip}: {problem}"))
    return ip


def init_ip_family_fields(name: str, spec: Obj, old_spec: Obj | None, network: ServiceNetwork) -> None:
    """``initIPFamilyFields`` for a single-stack cluster: default ``ipFamilyPolicy`` (the old
    object's on update; RequireDualStack for a headless Service without selector, else
    SingleStack) and ``ipFamilies`` (from the ClusterIPs, else the cluster's family), and
    refuse what this cluster cannot serve, with upstream's 422."""
    if spec.get("type") == "ExternalName":
        return
    headless_selectorless = spec.get("clusterIP") == CLUSTER_IP_NONE and not spec.get("selector")
    if spec.get("ipFamilyPolicy") is None:
        if old_spec is not None and old_spec.get("ipFamilyPolicy") is not None:
            spec["ipFamilyPolicy"] = old_spec["ipFamilyPolicy"]
        else:
            spec["ipFamilyPolicy"] = "RequireDualStack" if headless_selectorless else "SingleStack"
    policy = spec["ipFamilyPolicy"]
    ips = list(spec.get("clusterIPs") or [])
    families = list(spec.get("ipFamilies") or [])
    if old_spec is not None and policy == "SingleStack":
        if ips == (old_spec.get("clusterIPs") or []) and len(ips) > 1:
            ips = spec["clusterIPs"] = ips[:1]
        if families == (old_spec.get("ipFamilies") or []) and len(families) > 1:
            families = spec["ipFamilies"] = families[:1]
    problems = _policy_problems(spec, policy, ips, families)
    for i, ip in enumerate(ips):
        if ip == CLUSTER_IP_NONE:
            break
        if i >= len(families):
            family = IPV6 if ":" in ip else IPV4
            if family != network.family:
                problems.append(errors.invalid(index("spec.clusterIPs", i), go_string_slice(ips),
                                               f"{family} is not configured on this cluster"))
            else:
                families.append(family)
    if problems:
        raise _invalid(name, *problems)
    if headless_selectorless:
        families = families or [network.family]
        if len(families) < 2 and policy != "SingleStack":
            families.append(IPV6 if families[0] == IPV4 else IPV4)
        spec["ipFamilies"] = families
        return
    if policy == "RequireDualStack":
        problems.append(errors.invalid("spec.ipFamilyPolicy", policy, "this cluster is not configured for dual-stack services"))
    problems += [errors.invalid(index("spec.ipFamilies", i), family, "not configured on this cluster")
                 for i, family in enumerate(families) if family != network.family]
    if problems:
        raise _invalid(name, *problems)
    spec["ipFamilies"] = families or [network.family]


def _policy_problems(spec: Obj, policy: str, ips: list[str], families: list[str]) -> list[FieldError]:
    if policy != "SingleStack":
        return []
    problems = []
    if len(ips) == 2:
        problems.append(errors.invalid("spec.ipFamilyPolicy", policy,
                                       "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"))
    if len(families) == 2:
        problems.append(errors.invalid("spec.ipFamilyPolicy", policy,
                                       "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"))
    return problems


# -- NodePorts -------------------------------------------------------------------------

def needs_node_ports(spec: Obj) -> bool:
    """The Service's type has node ports (NodePort, LoadBalancer)."""
    return spec.get("type") in ("NodePort", "LoadBalancer")


def should_allocate_node_ports(spec: Obj) -> bool:
    """``shouldAllocateNodePorts``: missing node ports are filled in (a LoadBalancer with
    ``allocateLoadBalancerNodePorts: false`` only keeps the ones asked for)."""
    if spec.get("type") == "NodePort":
        return True
    return spec.get("type") == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is not False


def needs_health_check(spec: Obj) -> bool:
    """``NeedsHealthCheck``: a LoadBalancer with ``externalTrafficPolicy: Local``."""
    return spec.get("type") == "LoadBalancer" and spec.get("externalTrafficPolicy") == "Local"


def allocate_node_ports(name: str, spec: Obj, old_spec: Obj | None, network: ServiceNetwork, used: set[int],
                        rng: Rng) -> None:
    """``initNodePorts`` (create) and ``updateNodePorts`` (update): reserve the node ports
    asked for, fill in the missing ones; ``used`` grows with every reservation."""
    if not needs_node_ports(spec):
        return
    ports = [p for p in spec.get("ports") or [] if isinstance(p, dict)]
    fill = should_allocate_node_ports(spec)
    if old_spec is None:
        _init_node_ports(name, ports, fill, network.port_range, used, rng)
        return
    kept = node_ports_of(old_spec) if needs_node_ports(old_spec) else set()
    for i, port in enumerate(ports):
        wanted = port.get("nodePort") or 0
        if wanted:
            if wanted not in kept:
                _reserve_port(name, i, wanted, network.port_range, used)
                kept.add(wanted)
        elif fill:
            port["nodePort"] = _next_port(network.port_range, used, rng)


def _init_node_ports(name: str, ports: list[Obj], fill: bool, port_range: PortRange, used: set[int], rng: Rng) -> None:
    """On create, two ports with the same number (TCP and UDP 53) share one node port."""
    by_service_port: dict[Any, int] = {}
    for i, port in enumerate(ports):
        wanted = port.get("nodePort") or 0
        if not wanted and not fill:
            continue
        shared = by_service_port.get(port.get("port"))
        if shared is None:
            requested = next((p.get("nodePort") for p in ports if p.get("port") == port.get("port") and p.get("nodePort")), 0)
            if requested:
                _reserve_port(name, i, requested, port_range, used)
                value = requested
            else:
                value = _next_port(port_range, used, rng)
            port["nodePort"] = by_service_port[port.get("port")] = value
        elif not wanted:
            port["nodePort"] = shared
        elif wanted != shared:
            _reserve_port(name, i, wanted, port_range, used)


def _reserve_port(name: str, i: int, port: int, port_range: PortRange, used: set[int]) -> None:
    problem = port_range.refusal(port, used)
    if problem is not None:
        raise _invalid(name, errors.invalid(f"spec.ports[{i}].nodePort", port, problem))
    used.add(port)


def _next_port(port_range: PortRange, used: set[int], rng: Rng) -> int:
    port = port_range.allocate_next(used, rng)
    if port is None:
        raise errors.internal_error(f"failed to allocate a nodePort: {RANGE_FULL}")
    used.add(port)
    return port


def allocate_health_check_port(spec: Obj, old_spec: Obj | None, network: ServiceNetwork, used: set[int],
                               rng: Rng) -> None:
    """``allocHealthCheckNodePort`` when a Service starts needing one; failures are 500s upstream."""
    if not needs_health_check(spec) or (old_spec is not None and needs_health_check(old_spec)):
        return
    wanted = spec.get("healthCheckNodePort") or 0
    if wanted:
        problem = network.port_range.refusal(wanted, used)
        if problem is not None:
            raise errors.internal_error(f"failed to allocate requested HealthCheck NodePort {wanted}: {problem}")
        used.add(wanted)
        return
    port = network.port_range.allocate_next(used, rng)
    if port is None:
        raise errors.internal_error(f"failed to allocate a HealthCheck NodePort 0: {RANGE_FULL}")
    used.add(port)
    spec["healthCheckNodePort"] = port


def _invalid(name: str, *problems: FieldError) -> errors.ApiError:
    return errors.invalid_object("", "Service", name, list(problems))
