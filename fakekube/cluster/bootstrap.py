"""What a new cluster contains before any test touches it.

The namespaces every cluster has, the ``kubernetes`` Service with its Endpoints and
EndpointSlice (kube-apiserver's own endpoint reconciler keeps them upstream), the two system
PriorityClasses, API Priority and Fairness' mandatory and suggested FlowSchemas and
PriorityLevelConfigurations and the default ServiceCIDR ``kubernetes`` (upstream's apiserver
creates them at start), and the simulated nodes'
Node objects (:mod:`fakekube.cluster.nodespec`) with realistic, seeded capacity, labels
and nodeInfo (each node draws from its own forked stream, so adding a node never changes
another's identity). As upstream's kubelets do, nodes register without ``spec.podCIDR``:
the node IPAM controller (:mod:`fakekube.controllers.nodeipam`) assigns it.
"""

from __future__ import annotations

import copy
import functools
from typing import Any, Sequence

from fakekube.api.registry import ResourceType, WriteContext
from fakekube.api.types.flowcontrol import bootstrap_flow_schemas, bootstrap_priority_levels, dangling_condition
from fakekube.api.types.networking import default_service_cidr
from fakekube.api.types.service_alloc import DEFAULT_SERVICE_CIDR
from fakekube.api.verbs import objectmeta
from fakekube.api.verbs.apiserver import APIServer, WriteOptions
from fakekube.api.verbs.fieldmanager import APISERVER_MANAGER
from fakekube.cluster import bootstrapfields
from fakekube.cluster.nodespec import NODE_IP_BASE, NodeSpec, expand_nodes
from fakekube.controllers import apiservices
from fakekube.controllers.nodelifecycle.zones import LABEL_REGION, LABEL_ZONE
from fakekube.kubelet.heartbeat import KUBELET_PORT, healthy_conditions
from fakekube.objects.constants import (LABEL_ENDPOINTSLICE_SKIP_MIRROR, LABEL_METADATA_NAME, LABEL_NODE_ROLE_CONTROL_PLANE,
                                        LABEL_SERVICE_NAME)
from fakekube.objects.priority import SYSTEM_PRIORITY_CLASSES
from fakekube.random import SeededRandom

Obj = dict[str, Any]

INITIAL_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")
KUBERNETES_SERVICE_IP = "10.96.0.1"
NODE_CAPACITY = {"cpu": "4", "ephemeral-storage": "102400Mi", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
                 "memory": "16384Mi", "pods": "110"}
NODE_ALLOCATABLE = {"cpu": "3900m", "ephemeral-storage": "94371840Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
                    "memory": "15872Mi", "pods": "110"}
#: kube-apiserver's secure port, the ``kubernetes`` Service's targetPort (kind, kubeadm).
APISERVER_PORT = 6443


#: Our own initial objects are known-good: skip the wire checks (and the schema load they need).
TRUSTED = WriteOptions(internal=True)


def populate(api: APIServer, nodes: int | Sequence[NodeSpec], kubelet_version: str,
             kubernetes_service_ip: str = KUBERNETES_SERVICE_IP, service_cidr: str = DEFAULT_SERVICE_CIDR) -> None:
    """Create the initial content through the normal create path (so it is validated)."""
    namespaces = api.registry.lookup("", "v1", "namespaces")
    for name in INITIAL_NAMESPACES:
        namespace = {"metadata": {"name": name, "labels": {LABEL_METADATA_NAME: name}}}
        api.create(namespaces, "", _by_apiserver(api, "Namespace", namespace), TRUSTED)
    services = api.registry.lookup("", "v1", "services")
    api.create(services, "default", _by_apiserver(api, "Service", kubernetes_service(kubernetes_service_ip)), TRUSTED)
    node_type = api.registry.lookup("", "v1", "nodes")
    created = []
    for index, (name, spec) in enumerate(expand_nodes(nodes), start=1):
        node = node_object(name, index, api.rng.fork(name), kubelet_version, api.now_rfc3339(), spec)
        created.append(api.create(node_type, "", node, TRUSTED).obj)
    address = apiserver_address(created)
    # The endpoint reconciler writes these through storage, past the field manager: no managedFields.
    api.create(api.registry.lookup("", "v1", "endpoints"), "default", kubernetes_endpoints(address), TRUSTED)
    api.create(api.registry.lookup("discovery.k8s.io", "v1", "endpointslices"), "default",
               kubernetes_endpoint_slice(address), TRUSTED)
    priority_classes = api.registry.lookup("scheduling.k8s.io", "v1", "priorityclasses")
    for priority_class in SYSTEM_PRIORITY_CLASSES:
        api.create(priority_classes, "", _by_apiserver(api, "PriorityClass", copy.deepcopy(priority_class),
                                                       "scheduling.k8s.io/v1"), TRUSTED)
    populate_api_server_objects(api, service_cidr)


def _by_apiserver(api: APIServer, kind: str, obj: Obj, api_version: str = "v1") -> Obj:
    """``obj`` with the managedFields of kube-apiserver's own create (written out:
    :mod:`fakekube.cluster.bootstrapfields`)."""
    entries = bootstrapfields.managed_fields(api_version, kind, obj, api.now_rfc3339())
    if entries:
        obj["metadata"] = {**obj["metadata"], "managedFields": entries}
    return obj


def populate_api_server_objects(api: APIServer, service_cidr: str) -> None:
    """What kube-apiserver's own controllers write at start: APF's priority levels and flow
    schemas (each finds its level: Dangling False) and the default ServiceCIDR, Ready.

    Written straight to the store, already in their defaulted, valid form
    (``tests/integration/test_flowcontrol_types.py`` checks that the create path stores the
    same): twenty-two creates through the full write path cost a cluster's start 4 ms."""
    now = api.now_rfc3339()
    # Their uids come from a stream of their own: adding them shifted no identifier the
    # cluster's main stream makes (pod names, IPs), and adding more will not either.
    ctx = api.write_context(api.rng.fork("kube-apiserver-bootstrap"))
    group = "flowcontrol.apiserver.k8s.io"
    levels, schemas = _apf_bodies()
    level_type = api.registry.lookup(group, "v1", "prioritylevelconfigurations")
    for level in levels:
        _store_known_good(api, ctx, level_type, dict(level, metadata=dict(level["metadata"]), status={}))
    schema_type = api.registry.lookup(group, "v1", "flowschemas")
    for schema in schemas:
        status = {"conditions": [dangling_condition(schema["spec"]["priorityLevelConfiguration"]["name"], True, now)]}
        _store_known_good(api, ctx, schema_type, dict(schema, metadata=dict(schema["metadata"]), status=status))
    cidrs = api.registry.lookup("networking.k8s.io", "v1", "servicecidrs")
    _store_known_good(api, ctx, cidrs, default_service_cidr(service_cidr, now))
    register_local_api_services(api, now)


#: Who kube-aggregator's writes are attributed to in managedFields (it runs in kube-apiserver).
AGGREGATOR_MANAGER = APISERVER_MANAGER


def register_local_api_services(api: APIServer, now: str) -> None:
    """kube-aggregator's on-start APIServices, one per built-in group-version served
    (``v1.``, ``v1.apps``, ``v2.autoscaling``...), Available (Local); uids from a stream of
    their own. metrics.k8s.io is metrics-server's (fakekube/cluster/metricsserver.py)."""
    ctx = api.write_context(api.rng.fork("kube-aggregator"))
    rt = api.registry.lookup("apiregistration.k8s.io", "v1", "apiservices")
    served = [(t.group, t.version) for t in api.registry if t.custom is None and t.group != "metrics.k8s.io"]
    for obj in apiservices.on_start_api_services(served):
        stamped = dict(obj, metadata=dict(obj["metadata"]))
        objectmeta.stamp_new(rt, stamped, ctx)
        stamped["metadata"]["managedFields"] = [apiservices.managed_fields(stamped, AGGREGATOR_MANAGER, now)]
        stamped["status"] = apiservices.available(now)
        api.store.create(rt.key, stamped)


@functools.cache
def _apf_bodies() -> tuple[list[Obj], list[Obj]]:
    """The APF objects' bodies, built once per process and shared by every cluster's stored
    objects (which are never edited)."""
    return bootstrap_priority_levels(), bootstrap_flow_schemas()


def _store_known_good(api: APIServer, ctx: WriteContext, rt: ResourceType, obj: Obj) -> None:
    """Store a body that is already what the create path would make of it (metadata aside)."""
    objectmeta.stamp_new(rt, obj, ctx)
    api.store.create(rt.key, obj)


def kubernetes_service(cluster_ip: str = KUBERNETES_SERVICE_IP) -> Obj:
    """The apiserver's own Service: the first address of the service CIDR, port 443 → 6443,
    single-stack (as ``CreateOrUpdateMasterServiceIfNeeded`` sends it, so it owns the policy)."""
    return {
        "metadata": {"name": "kubernetes", "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {
            "clusterIP": cluster_ip,
            "internalTrafficPolicy": "Cluster",
            "ipFamilyPolicy": "SingleStack",
            "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": APISERVER_PORT}],
            "sessionAffinity": "None",
            "type": "ClusterIP",
        },
    }


def apiserver_address(nodes: Sequence[Obj]) -> str:
    """The address kube-apiserver advertises: the first control-plane node's InternalIP (a
    kind cluster's control-plane container), else the kind network's gateway, 172.18.0.1."""
    for node in nodes:
        if LABEL_NODE_ROLE_CONTROL_PLANE in ((node.get("metadata") or {}).get("labels") or {}):
            for address in (node.get("status") or {}).get("addresses") or []:
                if address.get("type") == "InternalIP":
                    return str(address["address"])
    return str(NODE_IP_BASE)


def kubernetes_endpoints(address: str) -> Obj:
    """The Endpoints the apiserver's lease reconciler writes (``EndpointsAdapter``)."""
    return {
        "metadata": {"name": "kubernetes", "labels": {LABEL_ENDPOINTSLICE_SKIP_MIRROR: "true"}},
        "subsets": [{"addresses": [{"ip": address}],
                     "ports": [{"name": "https", "port": APISERVER_PORT, "protocol": "TCP"}]}],
    }


def kubernetes_endpoint_slice(address: str) -> Obj:
    """The apiserver's EndpointSlice ``kubernetes`` (no managed-by label: no controller's)."""
    return {
        "metadata": {"name": "kubernetes", "labels": {LABEL_SERVICE_NAME: "kubernetes"}},
        "addressType": "IPv6" if ":" in address else "IPv4",
        "endpoints": [{"addresses": [address], "conditions": {"ready": True}}],
        "ports": [{"name": "https", "protocol": "TCP", "port": APISERVER_PORT}],
    }


def node_object(name: str, index: int, rng: SeededRandom, kubelet_version: str, now: str,
                spec: NodeSpec = NodeSpec()) -> Obj:
    """A Ready node as a kubeadm-style kubelet would register it (no podCIDR yet)."""
    internal_ip = str(NODE_IP_BASE + index)
    conditions = healthy_conditions([], now)
    node_spec: Obj = {"taints": [dict(t) for t in spec.taints]} if spec.taints else {}
    return {
        "metadata": {
            "name": name,
            "labels": node_labels(name, spec),
            "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                            "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
        },
        "spec": node_spec,
        "status": {
            "capacity": {**NODE_CAPACITY, **spec.capacity},
            "allocatable": {**NODE_ALLOCATABLE, **spec.capacity, **spec.allocatable},
            "conditions": conditions,
            "addresses": [{"type": "InternalIP", "address": internal_ip}, {"type": "Hostname", "address": name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": KUBELET_PORT}},
            "nodeInfo": _node_info(rng, kubelet_version),
        },
    }


def node_labels(name: str, spec: NodeSpec) -> dict[str, str]:
    """The kubelet's well-known labels, topology labels only when configured, then ``spec.labels``."""
    labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
    }
    if spec.region is not None:
        labels[LABEL_REGION] = spec.region
    if spec.zone is not None:
        labels[LABEL_ZONE] = spec.zone
    labels.update(spec.labels)
    return labels


def _node_info(rng: SeededRandom, kubelet_version: str) -> Obj:
    """Machine identity as a kubelet reports it, drawn from the node's own seeded stream."""
    return {
        "architecture": "amd64",
        "bootID": rng.uid(),
        "containerRuntimeVersion": "containerd://2.0.3",
        "kernelVersion": f"6.8.0-{rng.randrange(31, 61)}-generic",
        "kubeProxyVersion": kubelet_version,
        "kubeletVersion": kubelet_version,
        "machineID": rng.uid().replace("-", ""),
        "operatingSystem": "linux",
        "osImage": "Debian GNU/Linux 12 (bookworm)",
        "systemUUID": rng.uid(),
    }
