"""A new cluster that looks like a new kind cluster: control plane, kube-system, add-ons.

With ``ClusterConfig.system_pods`` on, a cluster is built the way ``kind create cluster``
builds one, through the API and the controllers rather than as final states:

1. the control-plane node registers (``fakekube-control-plane``, index 1: InternalIP
   172.18.0.2 as kind's, and the cluster CIDR's first block) and its kubelet starts kubeadm's
   static pods (:mod:`.controlplane`);
2. kubeadm's ConfigMaps and add-ons are created (:mod:`.kubeadm`: CoreDNS, kube-proxy),
   then kind's (:mod:`.kind`: kindnet, local-path-storage), and the controllers, the
   scheduler and the kubelets react — so, as on kind, CoreDNS and the provisioner run on
   the control-plane node;
3. the worker nodes (``Cluster(nodes=N)``: ``node-1`` … ``node-N``) join, and the
   DaemonSets put kube-proxy and kindnet on them;
4. the cluster *boots*: it starts :data:`BOOT_S` before ``ClusterConfig.start_time`` and
   runs until then, so at ``start_time`` every system pod is Running and Ready, CoreDNS
   has its endpoints, and ``kubectl get pods -A`` shows ages of 30 s — the state in which
   ``kind create cluster`` hands a cluster over. 30 s is a multiple of every periodic
   loop's period (heartbeats 10 s, node monitor 5 s, pod GC 20 s), so timers keep the
   same phase relative to ``start_time`` as in an empty cluster.

System images run the default container behaviour (they start in a second and run
forever, as kind's node image preloads them) whatever ``behaviours.default`` says; an
image rule of the config that matches one of them still applies, on top of that default.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, NamedTuple, Sequence, TYPE_CHECKING

from fakekube.api.verbs.apiserver import APIServer, WriteOptions
from fakekube.cluster.nodespec import NODE_IP_BASE, NodeSpec, expand_nodes
from fakekube.cluster.rootca import root_ca_pem
from fakekube.cluster.system import controlplane, kind, kubeadm, metricsserver
from fakekube.cluster.system.config import SystemPods, as_system_pods
from fakekube.cluster.system.controlplane import CONTROL_PLANE_NODE
from fakekube.kubelet.behaviour import DEFAULT_BEHAVIOUR, BehaviourCatalog, ContainerBehaviour
from fakekube.kubelet.usage import UsageTimeline
from fakekube.random import SeededRandom

if TYPE_CHECKING:
    from fakekube.cluster.cluster import ClusterConfig

Obj = dict[str, Any]

#: How long a cluster with system pods runs before ``start_time`` (see the module docstring).
BOOT_S = 30.0
#: Our own objects are known-good (as bootstrap's).
TRUSTED = WriteOptions(internal=True)

__all__ = ["BOOT_S", "CONTROL_PLANE_NODE", "SystemPlan", "SystemPods", "as_system_pods", "boot_start",
           "cluster_root_ca"]


def boot_start(config: "ClusterConfig") -> datetime:
    """Where the cluster's clock starts: :data:`BOOT_S` before ``start_time`` when it boots."""
    booting = as_system_pods(config.system_pods).any
    return config.start_time - timedelta(seconds=BOOT_S if booting else 0.0)


def cluster_root_ca(config: "ClusterConfig") -> str:
    """The cluster's CA certificate (PEM): from the seed, valid from the clock's start."""
    return root_ca_pem(SeededRandom(config.seed), boot_start(config))


#: What each system component uses when idle, (millicores, MiB): plausible figures of an
#: idle kind cluster's ``kubectl top pod -A``, so the control-plane node shows noticeable usage.
SYSTEM_USAGE = {
    "kube-apiserver": (40, 220), "etcd": (20, 30), "kube-controller-manager": (15, 45), "kube-scheduler": (3, 20),
    "coredns": (2, 13), "kindnetd": (1, 10), "kube-proxy": (1, 14), "local-path-provisioner": (1, 8),
    "metrics-server": (4, 18),
}


def system_usage(image: str) -> ContainerBehaviour:
    """The default behaviour with the usage of the component ``image`` runs (if known)."""
    component = image.rsplit("/", 1)[-1].split(":", 1)[0]
    if component not in SYSTEM_USAGE:
        return DEFAULT_BEHAVIOUR
    cpu_m, memory_mib = SYSTEM_USAGE[component]
    return DEFAULT_BEHAVIOUR.replace(cpu_usage_m=UsageTimeline.constant(cpu_m),
                                     memory_usage_bytes=UsageTimeline.constant(memory_mib * 1024 * 1024))


class SystemPlan(NamedTuple):
    """What a cluster registers and creates at birth, in order, for one config."""

    system: SystemPods
    #: Nodes registered first (the control plane; every node when there is none), then
    #: those that join once the add-ons exist: ``(name, spec)`` in registration order.
    first_nodes: tuple[tuple[str, NodeSpec], ...]
    joining_nodes: tuple[tuple[str, NodeSpec], ...]
    #: The API objects created after the first nodes, in kubeadm's and kind's order.
    objects: tuple[Obj, ...]
    #: The images of the system pods (they get the default behaviour).
    images: tuple[str, ...]

    @classmethod
    def for_config(cls, config: "ClusterConfig") -> SystemPlan:
        """The plan for ``config``; ValueError for a node list that cannot be expanded."""
        system = as_system_pods(config.system_pods)
        workers = _worker_specs(config.nodes)
        if not system.control_plane:
            return cls(system, tuple(expand_nodes(workers)), (), _addons(config, system), _images(config, system))
        has_workers = any(spec.count for spec in workers)
        tainted = system.control_plane_taint if system.control_plane_taint is not None else has_workers
        node_ip = str(NODE_IP_BASE + 1)
        manifests = controlplane.static_pods(node_ip, config.kubelet_version, _service_cidr(config),
                                             config.cluster_cidr, config.controllers)
        expanded = expand_nodes((controlplane.control_plane_node(tainted, manifests), *workers))
        objects = (kubeadm.admin_cluster_role_binding(),
                   *kubeadm.kubeadm_config_maps(config.kubelet_version, _service_cidr(config), config.cluster_cidr,
                                                cluster_root_ca(config)))
        return cls(system, tuple(expanded[:1]), tuple(expanded[1:]), objects + _addons(config, system),
                   _images(config, system))

    @property
    def nodes(self) -> tuple[tuple[str, NodeSpec], ...]:
        """Every node, in registration order."""
        return self.first_nodes + self.joining_nodes

    @property
    def node_specs(self) -> tuple[NodeSpec, ...]:
        """The first nodes as specs for :func:`fakekube.cluster.bootstrap.populate` (named,
        so they keep the names the whole list gave them)."""
        return tuple(_named(name, spec) for name, spec in self.first_nodes)

    def behaviours(self, catalog: BehaviourCatalog) -> BehaviourCatalog:
        """``catalog`` with a rule per system image, tried first: the default behaviour (with
        the component's usage, :func:`system_usage`) and the config's first rule for that
        image on top (the config's ``default`` does not apply)."""
        system = BehaviourCatalog()
        for image in self.images:
            plain = catalog._replace(default=system_usage(image))
            system = system.with_image(image, plain.for_image(image))
        return catalog._replace(rules=system.rules + catalog.rules)

    def create_objects(self, api: APIServer) -> None:
        """Create the add-ons and kubeadm's ConfigMaps through the apiserver's create path."""
        for obj in self.objects:
            rt = api.registry.by_kind(obj["apiVersion"], obj["kind"])
            if rt is None:  # pragma: no cover - every kind used here is served
                raise LookupError(f"{obj['apiVersion']} {obj['kind']} is not served")
            namespace = (obj.get("metadata") or {}).get("namespace", "") if rt.namespaced else ""
            api.create(rt, namespace, _without_type(obj), TRUSTED)

    def join_nodes(self, api: APIServer, kubelet_version: str) -> None:
        """Register the joining nodes (their indexes, hence IPs, follow the first nodes')."""
        from fakekube.cluster import bootstrap  # a build's: a boot restored from a file never joins nodes
        node_type = api.registry.lookup("", "v1", "nodes")
        for index, (name, spec) in enumerate(self.joining_nodes, start=len(self.first_nodes) + 1):
            node = bootstrap.node_object(name, index, api.rng.fork(name), kubelet_version, api.now_rfc3339(), spec)
            api.create(node_type, "", node, TRUSTED)


def _worker_specs(nodes: int | Sequence[NodeSpec]) -> tuple[NodeSpec, ...]:
    if isinstance(nodes, bool):
        raise ValueError(f"nodes: must be a count or node specs, got {nodes!r}")
    if not isinstance(nodes, int):
        return tuple(nodes)
    if nodes < 0:
        raise ValueError(f"nodes: must be >= 0, got {nodes}")
    return (NodeSpec(count=nodes),) if nodes else ()


def _named(name: str, spec: NodeSpec) -> NodeSpec:
    """One expanded node as a spec of its own (count 1, its final name)."""
    return spec.replace(name=name, count=1)


def _addons(config: "ClusterConfig", system: SystemPods) -> tuple[Obj, ...]:
    objects: list[Obj] = []
    if system.core_dns:
        objects += kubeadm.core_dns(_service_cidr(config))
    if system.kube_proxy:
        objects += kubeadm.kube_proxy(config.kubelet_version, config.cluster_cidr)
    if system.kindnet:
        objects += kind.kindnet(config.cluster_cidr)
    if system.local_path_storage:
        objects += kind.local_path_storage()
    if _runs_metrics_server(config, system):
        objects += metricsserver.metrics_server()
    return tuple(objects)


def _runs_metrics_server(config: "ClusterConfig", system: SystemPods) -> bool:
    """A cluster serving metrics.k8s.io with kind's add-ons runs metrics-server's pod too."""
    return bool(config.metrics_server) and system.control_plane


def _images(config: "ClusterConfig", system: SystemPods) -> tuple[str, ...]:
    parts = ((system.control_plane, controlplane.static_pod_images(config.kubelet_version)),
             (system.core_dns, (kubeadm.COREDNS_IMAGE,)),
             (system.kube_proxy, (kubeadm.kube_proxy_image(config.kubelet_version),)),
             (system.kindnet, (kind.KINDNET_IMAGE,)),
             (system.local_path_storage, (kind.LOCAL_PATH_PROVISIONER_IMAGE,)),
             (_runs_metrics_server(config, system), (metricsserver.METRICS_SERVER_IMAGE,)))
    return tuple(image for on, images in parts if on for image in images)


def _service_cidr(config: "ClusterConfig") -> str:
    return str(config.service_cidr)


def _without_type(obj: Obj) -> Obj:
    return {key: value for key, value in obj.items() if key not in ("apiVersion", "kind")}
