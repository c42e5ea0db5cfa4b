"""The cluster network as a container's ``nslookup``, ``wget`` and ``curl`` see it (kubelet/netutils.py).

Built for one exec or program run over the runtime's read view (Services, Endpoints, Pods);
nothing is kept. DNS follows CoreDNS's kubernetes plugin (``cluster.local``): Services (ClusterIP,
or a headless Service's ready endpoint addresses), ``A-B-C-D.NAMESPACE.pod``, and the
``HOSTNAME.SUBDOMAIN`` names of pods behind a headless Service; a name with fewer dots than
``ndots`` is tried with each search domain first, then as given. A connection to a Service's
ClusterIP and port goes to the first ready endpoint (by address) on the port's ``targetPort``;
to a pod IP, to that pod. What the pod answers on that port is the responder's (the behaviour
model of servers); without one nothing answers.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence

from fakekube.kubelet.netutils import HttpAnswer, HttpResponder
from fakekube.kubelet.rootfs import CLUSTER_DNS, CLUSTER_DOMAIN

Obj = dict[str, Any]


class ClusterNetwork:
    """DNS and connections over the cluster's objects (see the module docstring)."""

    dns_server = CLUSTER_DNS

    def __init__(self, get: Callable[[str, str, str], Obj | None], list_: Callable[[str], list[Obj]],
                 responder: HttpResponder | None = None) -> None:
        #: ``get(plural, namespace, name)`` and ``list_(plural)`` over services, endpoints and pods.
        self._get, self._list = get, list_
        self.responder = responder

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

    # -- connections ---------------------------------------------------------------------------------
    def connect(self, address: str, port: int) -> tuple[Obj, int] | None:
        for service in self._list("services"):
            spec = service.get("spec") or {}
            if spec.get("clusterIP") != address:
                continue
            for service_port in spec.get("ports") or []:
                if service_port.get("port") != port:
                    continue
                namespace = service["metadata"]["namespace"]
                for _, pod in sorted(self._ready_endpoints(namespace, service["metadata"]["name"]),
                                     key=lambda item: item[0]):
                    if pod is not None:
                        target = _target_port(pod, service_port.get("targetPort", port))
                        if target is not None:
                            return pod, target
            return None
        for pod in self._list("pods"):
            status = pod.get("status") or {}
            if status.get("podIP") == address and status.get("phase") == "Running":
                return pod, port
        return None

    def answer(self, pod: Obj, container_port: int, method: str, path: str) -> HttpAnswer | None:
        if self.responder is None:
            return None
        return self.responder.answer(pod, container_port, method, path)


def _target_port(pod: Obj, target: Any) -> int | None:
    """A Service's ``targetPort`` on one pod: a number, or a named container port."""
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    for container in (pod.get("spec") or {}).get("containers") or []:
        for port in container.get("ports") or []:
            if port.get("name") == target:
                return int(port.get("containerPort", 0)) or None
    return None
