"""The cluster network as a container's ``nslookup``, ``wget`` and ``curl`` see it (kubelet/netutils.py).

Built for one exec or program run over the runtime's read view (Services, Endpoints, Pods);
nothing is kept. DNS follows CoreDNS's kubernetes plugin (``cluster.local``): Services (ClusterIP,
or a headless Service's ready endpoint addresses), ``A-B-C-D.NAMESPACE.pod``, and the
``HOSTNAME.SUBDOMAIN`` names of pods behind a headless Service; a name with fewer dots than
``ndots`` is tried with each search domain first, then as given. A connection goes where
objects/serviceroutes.py routes it and is answered by that pod's HTTP behaviour
(``PodRunner.request``, kubelet/httpmodel.py).
"""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence

from fakekube.kubelet.httpmodel import HttpAnswer, HttpRequest
from fakekube.kubelet.rootfs import CLUSTER_DNS, CLUSTER_DOMAIN
from fakekube.objects.serviceroutes import Unreachable

Obj = dict[str, Any]
#: ``request(client_namespace, host, port, request)``: ``PodRunner.request``.
Requester = Callable[[str, str, int, HttpRequest], "HttpAnswer | Unreachable"]


class ClusterNetwork:
    """DNS and connections over the cluster's objects (see the module docstring)."""

    dns_server = CLUSTER_DNS

    def __init__(self, get: Callable[[str, str, str], Obj | None], client_namespace: str = "default",
                 requester: Requester | None = None) -> None:
        #: ``get(plural, namespace, name)`` over services, endpoints and pods.
        self._get = get
        self._namespace = client_namespace
        self._requester = requester

    # -- DNS ----------------------------------------------------------------------------------
    def resolve(self, name: str, search: Sequence[str], ndots: int) -> tuple[str, list[str]] | None:
        name = name.rstrip(".")
        candidates = [name] if name.count(".") >= ndots else []
        candidates += [f"{name}.{domain}" for domain in search]
        if name not in candidates:
            candidates.append(name)
        for candidate in candidates:
            addresses = self._addresses(candidate)
            if addresses:
                return candidate, addresses
        return None

    def _addresses(self, fqdn: str) -> list[str]:
        suffix = "." + CLUSTER_DOMAIN
        if not fqdn.endswith(suffix):
            return []
        labels = fqdn[:-len(suffix)].split(".")
        if len(labels) == 3 and labels[2] == "svc":
            return self._service_addresses(labels[1], labels[0])
        if len(labels) == 4 and labels[3] == "svc":
            return self._hostname_addresses(labels[2], labels[1], labels[0])
        if len(labels) == 3 and labels[2] == "pod" and re.fullmatch(r"\d+-\d+-\d+-\d+", labels[0]):
            return [labels[0].replace("-", ".")]
        return []

    def _service_addresses(self, namespace: str, name: str) -> list[str]:
        service = self._get("services", namespace, name)
        if service is None:
            return []
        spec = service.get("spec") or {}
        if spec.get("type") == "ExternalName":
            return []
        cluster_ip = spec.get("clusterIP")
        if cluster_ip and cluster_ip != "None":
            return [str(cluster_ip)]
        return sorted(address for address, _ in self._ready_endpoints(namespace, name))

    def _hostname_addresses(self, namespace: str, subdomain: str, hostname: str) -> list[str]:
        found = []
        for address, pod in self._ready_endpoints(namespace, subdomain):
            if pod is not None and (pod.get("spec") or {}).get("hostname") == hostname:
                found.append(address)
        return found

    def _ready_endpoints(self, namespace: str, name: str) -> list[tuple[str, Obj | None]]:
        endpoints = self._get("endpoints", namespace, name) or {}
        found: list[tuple[str, Obj | None]] = []
        for subset in endpoints.get("subsets") or []:
            for address in subset.get("addresses") or []:
                target = address.get("targetRef") or {}
                pod = self._get("pods", namespace, target.get("name", "")) if target.get("kind") == "Pod" else None
                found.append((str(address.get("ip")), pod))
        return found

    # -- connections ---------------------------------------------------------------------------
    def request(self, address: str, port: int, method: str, target: str) -> HttpAnswer | Unreachable:
        """An HTTP request to ``address:port`` (an address :meth:`resolve` gave, or an IP)."""
        if self._requester is None:
            return Unreachable(f"Failed to connect to {address} port {port}: Connection refused", 0)
        return self._requester(self._namespace, address, port, HttpRequest(method, target))
