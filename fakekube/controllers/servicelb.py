"""The service load balancer controller: a LoadBalancer Service gets an external IP.

Upstream's service controller (k8s.io/cloud-provider/controllers/service/controller.go,
``service-lb-controller`` in a controller manager with a cloud provider; kind has none and
leaves EXTERNAL-IP ``<pending>`` unless cloud-provider-kind or MetalLB runs): for a Service
of type LoadBalancer without ``spec.loadBalancerClass`` it records Normal
EnsuringLoadBalancer ("Ensuring load balancer"), adds the
``service.kubernetes.io/load-balancer-cleanup`` finalizer, has the cloud build a load
balancer, writes ``status.loadBalancer.ingress`` and records EnsuredLoadBalancer
("Ensured load balancer"). When such a Service is deleted or stops being a LoadBalancer,
it records DeletingLoadBalancer (when one exists), removes the finalizer and records
DeletedLoadBalancer. A failure records Warning SyncLoadBalancerFailed ("Error syncing load
balancer: ...") and is retried after 5 s, doubling to 300 s. It acts on a Service's
creation, and on updates that matter to a load balancer (``needsUpdate``: type, ports,
session affinity, loadBalancerIP, external IPs, annotations, traffic policy, health-check
port, families, source ranges) — not on its own writes.

Here the cloud is a pool of addresses (``ClusterConfig.load_balancer_ip_pool``, YAML
``loadBalancerIPPool``; default 172.18.255.200-172.18.255.250, the range MetalLB's kind
guide uses): a load balancer is ready at once, with the lowest free address of the pool
(or ``spec.loadBalancerIP`` when that one is free) and ``ipMode: VIP``. An address is free
again the moment its Service is deleted or stops being a LoadBalancer, and Services waiting
for one are retried then.
"""

from __future__ import annotations

import ipaddress
from collections import OrderedDict
from typing import Any, Iterable

from fakekube.engine import Context
from fakekube.objects.constants import FINALIZER_LOAD_BALANCER_CLEANUP
from fakekube.objects.kinds import SERVICES
from fakekube.store import ADDED, DELETED, Change

Obj = dict[str, Any]

#: MetalLB's kind guide pool, on kind's docker network (172.18.0.0/16).
DEFAULT_LB_IP_POOL = "172.18.255.200-172.18.255.250"
EVENT_COMPONENT = "service-controller"
#: The service controller's retry back-off (``minRetryDelay``, ``maxRetryDelay``).
MIN_RETRY_DELAY_S = 5.0
MAX_RETRY_DELAY_S = 300.0
#: Failing Services whose retry count is kept, and load balancers the simulated cloud
#: remembers; past either limit the oldest entry is forgotten.
MAX_TRACKED = 100_000
#: The key that retries every LoadBalancer still waiting for an address.
POOL = "~pool"


class IPPool:
    """Addresses ``first-last`` (inclusive) or a CIDR (its usable hosts), lowest first."""

    def __init__(self, spec: str) -> None:
        text = spec.strip()
        try:
            if "-" in text:
                low, high = (ipaddress.ip_address(part.strip()) for part in text.split("-", 1))
                self.first, self.last = int(low), int(high)
                self.version = low.version
                if low.version != high.version or self.first > self.last:
                    raise ValueError
            else:
                network = ipaddress.ip_network(text, strict=True)
                hosts = list(network.hosts()) if network.num_addresses <= 65536 else None
                self.first = int(hosts[0]) if hosts else int(network.network_address)
                self.last = int(hosts[-1]) if hosts else int(network.broadcast_address)
                self.version = network.version
        except (ValueError, IndexError):
            raise ValueError(f"invalid load balancer IP pool {spec!r}: expected <first>-<last> or a CIDR, "
                             f"e.g. {DEFAULT_LB_IP_POOL}") from None
        self.spec = text

    def __str__(self) -> str:
        return self.spec

    def contains(self, ip: str) -> bool:
        try:
            address = ipaddress.ip_address(ip)
        except ValueError:
            return False
        return address.version == self.version and self.first <= int(address) <= self.last

    def lowest_free(self, used: set[str]) -> str | None:
        taken = {int(ipaddress.ip_address(ip)) for ip in used if self.contains(ip)}
        value = self.first
        while value <= self.last and value in taken:  # at most len(taken) + 1 steps
            value += 1
        return str(ipaddress.ip_address(value)) if value <= self.last else None


def wants_load_balancer(service: Obj) -> bool:
    """``wantsLoadBalancer``: type LoadBalancer and no ``loadBalancerClass`` (another
    controller's then)."""
    spec = service.get("spec") or {}
    return spec.get("type") == "LoadBalancer" and not spec.get("loadBalancerClass")


def has_finalizer(service: Obj) -> bool:
    return FINALIZER_LOAD_BALANCER_CLEANUP in ((service.get("metadata") or {}).get("finalizers") or [])


def needs_cleanup(service: Obj) -> bool:
    """``needsCleanup``: it holds the finalizer but is going or no longer wants one."""
    if not has_finalizer(service):
        return False
    return bool((service.get("metadata") or {}).get("deletionTimestamp")) or not wants_load_balancer(service)


_WATCHED_SPEC = ("type", "ports", "sessionAffinity", "sessionAffinityConfig", "loadBalancerIP", "externalIPs",
                 "externalTrafficPolicy", "healthCheckNodePort", "ipFamilies", "loadBalancerSourceRanges")


def needs_update(old: Obj, new: Obj) -> bool:
    """``needsUpdate``: a change a load balancer must follow."""
    if not wants_load_balancer(old) and not wants_load_balancer(new):
        return False
    if wants_load_balancer(old) != wants_load_balancer(new):
        return True
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    if any(old_spec.get(field) != new_spec.get(field) for field in _WATCHED_SPEC):
        return True
    old_meta, new_meta = old.get("metadata") or {}, new.get("metadata") or {}
    return old_meta.get("annotations") != new_meta.get("annotations") or old_meta.get("uid") != new_meta.get("uid")


def _ingress_ips(service: Obj) -> list[str]:
    ingress = ((service.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    return [entry["ip"] for entry in ingress if isinstance(entry, dict) and entry.get("ip")]


class ServiceLBController:
    """Gives LoadBalancer Services an address from the simulated cloud's pool."""

    name = "service-lb-controller"
    resources = (SERVICES,)

    def __init__(self, pool: str = DEFAULT_LB_IP_POOL) -> None:
        self.pool = IPPool(pool)
        self._failures: OrderedDict[str, int] = OrderedDict()
        #: The simulated cloud: the load balancers it built, by Service uid (their address).
        self._balancers: OrderedDict[str, str] = OrderedDict()

    def keys_for(self, change: Change) -> Iterable[str]:
        """A Service that wants a load balancer (created or changed as ``needsUpdate``
        says) or must give one back; ``~pool`` when an address was freed."""
        keys = []
        service = change.obj
        key = f"{change.namespace}/{change.name}"
        if change.type == ADDED:
            if wants_load_balancer(service) or needs_cleanup(service):
                keys.append(key)
        elif change.type != DELETED and change.prev is not None:
            if needs_update(change.prev, service) or needs_cleanup(service):
                keys.append(key)
        before = change.obj if change.type == DELETED else change.prev
        after = None if change.type == DELETED else change.obj
        if before is not None and _ingress_ips(before) and not (after is not None and _ingress_ips(after)):
            keys.append(POOL)
        return keys

    def reconcile(self, key: str, ctx: Context) -> None:
        if key == POOL:
            for waiting in ctx.list(SERVICES):
                if wants_load_balancer(waiting) and not _ingress_ips(waiting) \
                        and not (waiting.get("metadata") or {}).get("deletionTimestamp"):
                    meta = waiting["metadata"]
                    ctx.enqueue(f"{meta['namespace']}/{meta['name']}")
            return
        namespace, name = key.split("/", 1)
        service = ctx.get(SERVICES, name, namespace)
        if service is None:
            self._failures.pop(key, None)
            return
        if needs_cleanup(service) or not wants_load_balancer(service):
            self._delete_load_balancer(service, ctx)
        elif not (service.get("metadata") or {}).get("deletionTimestamp"):
            self._ensure_load_balancer(key, service, ctx)

    def _ensure_load_balancer(self, key: str, service: Obj, ctx: Context) -> None:
        ctx.record_event(service, "Service", "Normal", "EnsuringLoadBalancer", "Ensuring load balancer", EVENT_COMPONENT)
        if not has_finalizer(service):
            meta = service["metadata"]
            finalizers = [*(meta.get("finalizers") or []), FINALIZER_LOAD_BALANCER_CLEANUP]
            service = ctx.client.patch(SERVICES, meta["name"], {"metadata": {"finalizers": finalizers,
                                                                           "resourceVersion": meta["resourceVersion"]}},
                                       meta["namespace"])
        ip, problem = self._address_for(service, ctx)
        if ip is None:
            self._failed(key, service, ctx, f"failed to ensure load balancer: {problem}")
            return
        self._failures.pop(key, None)
        _remember(self._balancers, service["metadata"].get("uid") or "", ip)
        if _ingress_ips(service) != [ip]:
            status = dict(service.get("status") or {}, loadBalancer={"ingress": [{"ip": ip, "ipMode": "VIP"}]})
            service = ctx.client.update_status(SERVICES, dict(service, status=status))
        ctx.record_event(service, "Service", "Normal", "EnsuredLoadBalancer", "Ensured load balancer", EVENT_COMPONENT)

    def _address_for(self, service: Obj, ctx: Context) -> tuple[str | None, str]:
        """The Service's address: the one it has, the one it asks for, or the lowest free."""
        meta = service["metadata"]
        used = {ip for other in ctx.list(SERVICES) if (other.get("metadata") or {}).get("uid") != meta.get("uid")
                for ip in _ingress_ips(other)}
        wanted = (service.get("spec") or {}).get("loadBalancerIP") or ""
        if wanted:
            if not self.pool.contains(wanted):
                return None, f"requested IP {wanted} is not in the load balancer pool {self.pool}"
            if wanted in used:
                return None, f"requested IP {wanted} is already in use"
            return wanted, ""
        current = [ip for ip in _ingress_ips(service) if self.pool.contains(ip) and ip not in used]
        if current:
            return current[0], ""
        free = self.pool.lowest_free(used)
        return (free, "") if free is not None else (None, f"no free IP in the load balancer pool {self.pool}")

    def _failed(self, key: str, service: Obj, ctx: Context, problem: str) -> None:
        ctx.record_event(service, "Service", "Warning", "SyncLoadBalancerFailed", f"Error syncing load balancer: {problem}",
                         EVENT_COMPONENT)
        count = self._failures.get(key, 0)
        _remember(self._failures, key, count + 1)
        ctx.enqueue_after(key, min(MIN_RETRY_DELAY_S * 2 ** count, MAX_RETRY_DELAY_S))

    def _delete_load_balancer(self, service: Obj, ctx: Context) -> None:
        """Give the address back and let the Service go (``EnsureLoadBalancerDeleted``)."""
        if not has_finalizer(service):
            return
        if self._balancers.pop(service["metadata"].get("uid") or "", None) is not None:
            ctx.record_event(service, "Service", "Normal", "DeletingLoadBalancer", "Deleting load balancer",
                             EVENT_COMPONENT)
        meta = service["metadata"]
        finalizers = [f for f in meta.get("finalizers") or [] if f != FINALIZER_LOAD_BALANCER_CLEANUP]
        ctx.client.patch(SERVICES, meta["name"], {"metadata": {"finalizers": finalizers or None,
                                                              "resourceVersion": meta["resourceVersion"]}},
                         meta["namespace"])
        ctx.record_event(service, "Service", "Normal", "DeletedLoadBalancer", "Deleted load balancer", EVENT_COMPONENT)
        remaining = ctx.get(SERVICES, meta["name"], meta["namespace"])
        if remaining is not None and _ingress_ips(remaining):
            ctx.client.update_status(SERVICES, dict(remaining, status=dict(remaining.get("status") or {},
                                                                           loadBalancer={})))


def _remember(table: "OrderedDict[str, Any]", key: str, value: Any) -> None:
    """Set ``key`` as the newest entry of a bounded table (the oldest goes past :data:`MAX_TRACKED`)."""
    table.pop(key, None)
    table[key] = value
    while len(table) > MAX_TRACKED:
        table.popitem(last=False)
