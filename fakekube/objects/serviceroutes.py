"""How an HTTP request reaches a pod: the addresses, the Service routing and the errors a
client sees on the way (a simulated pod's answers themselves are kubelet/httpmodel.py's).
Shared by the apiserver's proxy (api/verbs/connect.py) and in-cluster clients (the kubelet).

Three ways in, each with upstream's rules:

* ``kubectl port-forward`` dials ``localhost:PORT`` inside the pod's network namespace:
  any container of the pod listening there answers (kubelet/network.py words containerd's
  error when none does);
* the apiserver's ``proxy`` of a pod (``pod:port``, else the first declared container port,
  else 80) or of a Service (``name:port`` — a port number is turned into the Service port's
  name — through the Service's Endpoints to one ready pod address; :func:`service_backend`,
  upstream's ``ResourceLocation``, which picks at random: here the first, so runs repeat);
* a client inside the cluster (``curl``/``wget`` in another container: the shell model's
  interface, :func:`resolve`) names a Service by DNS (``web``, ``web.shop``,
  ``web.shop.svc``, ``web.shop.svc.cluster.local``) or cluster IP, or a pod by IP; a Service
  port leads to its ``targetPort`` on a ready endpoint (kube-proxy's choice is random: here
  the first), a Service without ready endpoints rejects the connection (kube-proxy's
  REJECT rule), and a name nothing resolves fails as the resolver does.

Pure: objects in, an address or an error out.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple, Sequence

Obj = Mapping[str, Any]

#: The cluster domain kind's kubelets use.
CLUSTER_DOMAIN = "cluster.local"


class Backend(NamedTuple):
    """Where a request goes: a pod (namespace, name) and the port on it."""

    namespace: str
    pod: str
    ip: str
    port: int


class Unreachable(NamedTuple):
    """Why nothing answered; ``message`` is the client's error text."""

    message: str
    #: The HTTP status the apiserver's proxy answers with (503 ServiceUnavailable).
    code: int = 503


def dial_refused(ip: str, port: int) -> str:
    """Go's dial error for a port nothing listens on."""
    return f"dial tcp {_join(ip, port)}: connect: connection refused"


def _join(ip: str, port: int) -> str:
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


def pod_ip(pod: Obj) -> str:
    return str(((pod.get("status") or {}).get("podIP")) or "")


def pod_proxy_port(pod: Obj, port: str) -> int | None:
    """The port of a ``pods/{name}:{port}/proxy`` request: the number given, else the first
    container's first declared port, else 80 (an URL without a port); None for a name."""
    if port:
        return int(port) if port.isdigit() else None
    for container in (pod.get("spec") or {}).get("containers") or []:
        for declared in container.get("ports") or []:
            if isinstance(declared.get("containerPort"), int):
                return int(declared["containerPort"])
    return 80


def service_backend(service: Obj, endpoints: Obj | None, port: str, requested: str = "") -> Backend | Unreachable:
    """Upstream's service ``ResourceLocation``: ``port`` is the text after ``name:`` (empty,
    a port name, or a number turned into its Service port's name); ``requested``: the id as
    the client wrote it (``web:80``), which the last error names."""
    name = (service.get("metadata") or {}).get("name", "")
    namespace = (service.get("metadata") or {}).get("namespace", "")
    if port.isdigit():
        match = next((p for p in (service.get("spec") or {}).get("ports") or [] if p.get("port") == int(port)), None)
        if match is None:
            return Unreachable(f'no service port {port} found for service "{name}"')
        port = str(match.get("name") or "")
    subsets = (endpoints or {}).get("subsets") or []
    if not subsets:
        return Unreachable(f'no endpoints available for service "{name}"')
    for subset in subsets:
        addresses = subset.get("addresses") or []
        for endpoint_port in subset.get("ports") or []:
            if (endpoint_port.get("name") or "") != port:
                continue
            for address in addresses:
                target = address.get("targetRef") or {}
                if target.get("kind") == "Pod" and target.get("namespace", namespace) == namespace:
                    return Backend(namespace, str(target.get("name")), str(address.get("ip")),
                                   int(endpoint_port.get("port") or 0))
    return Unreachable(f'no endpoints available for service "{requested or name}"')


def service_names(host: str, client_namespace: str) -> tuple[str, str] | None:
    """(namespace, service) a DNS name names from a pod of ``client_namespace`` (its search
    path: ``<ns>.svc.cluster.local``, ``svc.cluster.local``, ``cluster.local``); None when the
    name is not a Service's."""
    name = host.rstrip(".").lower()
    suffix = f".svc.{CLUSTER_DOMAIN}"
    if name.endswith(suffix):
        name = name[:-len(suffix)]
    elif name.endswith(".svc"):
        name = name[:-len(".svc")]
    parts = name.split(".")
    if len(parts) == 1 and parts[0]:
        return client_namespace, parts[0]
    if len(parts) == 2 and all(parts):
        return parts[1], parts[0]
    return None


def resolve(host: str, port: int, client_namespace: str, get_service: Callable[[str, str], Obj | None],
            services: Callable[[], Sequence[Obj]], get_endpoints: Callable[[str, str], Obj | None],
            pods_by_ip: Callable[[str], Obj | None]) -> Backend | Unreachable:
    """Where a connection from a pod in ``client_namespace`` to ``host:port`` lands (module
    docstring): a Service by DNS name or cluster IP, or a pod by its IP."""
    named = service_names(host, client_namespace)
    service = get_service(*named) if named is not None else None
    if service is None:
        service = next((s for s in services() if (s.get("spec") or {}).get("clusterIP") == host), None)
    if service is None:
        pod = pods_by_ip(host)
        if pod is not None:
            meta = pod.get("metadata") or {}
            return Backend(str(meta.get("namespace")), str(meta.get("name")), host, port)
        if named is not None or not _is_ip(host):
            return Unreachable(f"Could not resolve host: {host}", 0)
        return Unreachable(f"Failed to connect to {host} port {port}: Connection timed out", 0)
    return _through_service(service, port, get_endpoints)


def _through_service(service: Obj, port: int, get_endpoints: Callable[[str, str], Obj | None]) -> Backend | Unreachable:
    meta, spec = service.get("metadata") or {}, service.get("spec") or {}
    address = str(spec.get("clusterIP") or "")
    declared = next((p for p in spec.get("ports") or [] if p.get("port") == port
                     and (p.get("protocol") or "TCP") == "TCP"), None)
    if declared is None:
        return Unreachable(f"Failed to connect to {address} port {port}: Connection refused", 0)
    backend = service_backend(service, get_endpoints(str(meta.get("namespace")), str(meta.get("name"))),
                              str(declared.get("name") or ""))
    if isinstance(backend, Unreachable):
        return Unreachable(f"Failed to connect to {address} port {port}: Connection refused", 0)
    return backend


def _is_ip(host: str) -> bool:
    parts = host.split(".")
    return (len(parts) == 4 and all(p.isdigit() and int(p) < 256 for p in parts)) or ":" in host
