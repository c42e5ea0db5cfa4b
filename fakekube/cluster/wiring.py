"""What a cluster runs, named in one place: the controllers (with upstream's names, aliases
and enable lists), and what the admission plugins take from the config (the plugins
themselves are registered by name in fakekube/api/admission/plugins.py).

Adding a controller is one :class:`~fakekube.engine.ControllerSpec` here: its factory
builds it from the :class:`~fakekube.cluster.cluster.ClusterConfig`. The order of the
list is the order controllers see each change (so it is part of a run's determinism:
new controllers go at the end).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from fakekube.api.admission import AdmissionOptions, enabled_plugins
from fakekube.api.auth.tokens import signing_key
from fakekube.controllers.apiextensions import CRDEstablishingController, CRDFinalizerController
from fakekube.controllers.apiservices import APIServiceAvailabilityController, CRDAPIServiceController
from fakekube.controllers.clusterroleaggregation import ClusterRoleAggregationController
from fakekube.controllers.cronjob import CronJobController
from fakekube.controllers.daemonset import DaemonSetController
from fakekube.controllers.deployment import DeploymentController
from fakekube.controllers.disruption import DisruptionController
from fakekube.controllers.endpoints import EndpointsController
from fakekube.controllers.endpointslice import EndpointSliceController
from fakekube.controllers.eventttl import EventTTLController
from fakekube.controllers.garbagecollector import GarbageCollectorController
from fakekube.controllers.job import JobController
from fakekube.controllers.localpath import LocalPathProvisioner
from fakekube.controllers.podautoscaler import HorizontalController
from fakekube.controllers.namespace import NamespaceConfig, NamespaceController
from fakekube.controllers.nodeipam import NodeIPAMController
from fakekube.controllers.nodelifecycle.controller import NodeLifecycleController
from fakekube.controllers.podgc import PodGCController
from fakekube.controllers.resourcequota import ResourceQuotaController
from fakekube.controllers.replicaset import REPLICA_SET, REPLICATION_CONTROLLER, ReplicaSetController
from fakekube.controllers.rootcacertpublisher import RootCACertPublisher
from fakekube.controllers.serviceaccounts import ServiceAccountsController
from fakekube.controllers.serviceaccounttokens import ServiceAccountTokensController
from fakekube.controllers.servicelb import ServiceLBController
from fakekube.controllers.statefulset import StatefulSetController
from fakekube.controllers.tainteviction import TaintEvictionController
from fakekube.controllers.ttlafterfinished import TTLAfterFinishedController
from fakekube.controllers.volume import (
    PersistentVolumeBinder, PVCProtectionController, PVProtectionController, VACProtectionController)
from fakekube.cluster.served import served_resources
from fakekube.cluster.system import cluster_root_ca
from fakekube.engine import ControllerSpec
from fakekube.kubelet.behaviour import annotation_problem

if TYPE_CHECKING:
    from fakekube.cluster.cluster import ClusterConfig

Obj = dict[str, Any]

#: kube-controller-manager's controllers fakekube runs, in registration order.
CONTROLLERS: tuple[ControllerSpec, ...] = (
    ControllerSpec("serviceaccount-controller", lambda c: ServiceAccountsController(), ("serviceaccount",)),
    ControllerSpec("node-lifecycle-controller",
                   lambda c: NodeLifecycleController(c.node_lifecycle.for_release(c.release)),
                   ("nodelifecycle",)),
    ControllerSpec("taint-eviction-controller", lambda c: TaintEvictionController()),
    ControllerSpec("pod-garbage-collector-controller", lambda c: PodGCController(c.pod_gc), ("podgc",)),
    ControllerSpec("node-ipam-controller",
                   lambda c: NodeIPAMController(c.cluster_cidr, c.node_cidr_mask_size, c.service_cidr),
                   ("nodeipam",)),
    ControllerSpec("replicaset-controller", lambda c: ReplicaSetController(
        REPLICA_SET, terminating_replicas=c.release.enabled("DeploymentReplicaSetTerminatingReplicas")), ("replicaset",)),
    ControllerSpec("replicationcontroller-controller", lambda c: ReplicaSetController(REPLICATION_CONTROLLER),
                   ("replicationcontroller",)),
    ControllerSpec("disruption-controller", lambda c: DisruptionController(), ("disruption",)),
    ControllerSpec("deployment-controller", lambda c: DeploymentController(
        c.release.enabled("DeploymentReplicaSetTerminatingReplicas")), ("deployment",)),
    ControllerSpec("daemonset-controller", lambda c: DaemonSetController(), ("daemonset",)),
    ControllerSpec("garbage-collector-controller", lambda c: GarbageCollectorController(served_resources(c.release)),
                   ("garbagecollector",)),
    ControllerSpec("endpoints-controller", lambda c: EndpointsController(), ("endpoint",)),
    ControllerSpec("endpointslice-controller", lambda c: EndpointSliceController(), ("endpointslice",)),
    ControllerSpec("service-lb-controller", lambda c: ServiceLBController(c.load_balancer_ip_pool), ("service",)),
    ControllerSpec("namespace-controller", lambda c: NamespaceController(
        served_resources(c.release), NamespaceConfig.for_release(c.release)), ("namespace",)),
    ControllerSpec("root-ca-certificate-publisher-controller", lambda c: RootCACertPublisher(cluster_root_ca(c)),
                   ("root-ca-cert-publisher",)),
    ControllerSpec("clusterrole-aggregation-controller", lambda c: ClusterRoleAggregationController(),
                   ("clusterrole-aggregation",)),
    ControllerSpec("job-controller", lambda c: JobController(), ("job",)),
    ControllerSpec("horizontal-pod-autoscaler-controller", lambda c: HorizontalController(),
                   ("horizontalpodautoscaling",)),
    ControllerSpec("statefulset-controller", lambda c: StatefulSetController(), ("statefulset",)),
    ControllerSpec("cronjob-controller", lambda c: CronJobController(), ("cronjob",)),
    ControllerSpec("ttl-after-finished-controller", lambda c: TTLAfterFinishedController(), ("ttl-after-finished",)),
    ControllerSpec("persistentvolume-binder-controller", lambda c: PersistentVolumeBinder(),
                   ("persistentvolume-binder",)),
    ControllerSpec("persistentvolumeclaim-protection-controller", lambda c: PVCProtectionController(),
                   ("pvc-protection",)),
    ControllerSpec("persistentvolume-protection-controller", lambda c: PVProtectionController(),
                   ("pv-protection",)),
    ControllerSpec("volumeattributesclass-protection-controller", lambda c: VACProtectionController(
        c.release.serves("storage.k8s.io", "v1", "volumeattributesclasses"))),
    # Not kube-controller-manager's: kind's local-path provisioner, which acts only while
    # its Deployment's pod runs (fakekube/controllers/localpath.py).
    ControllerSpec("local-path-provisioner", lambda c: LocalPathProvisioner()),
    ControllerSpec("resourcequota-controller", lambda c: ResourceQuotaController(), ("resourcequota",)),
    ControllerSpec("serviceaccount-token-controller",
                   lambda c: ServiceAccountTokensController(cluster_root_ca(c), signing_key(c.seed)),
                   ("serviceaccount-token",)),
)


#: Controllers of the apiserver itself (apiextensions-apiserver's, the Event TTL), which every cluster runs
#: whatever its ``controllers`` list says: registered after the ones above.
APISERVER_CONTROLLERS: tuple[Callable[["ClusterConfig"], Any], ...] = (
    lambda c: CRDEstablishingController(),
    lambda c: CRDFinalizerController(),
    # kube-aggregator's crdregistration: an APIService per group-version CRDs serve.
    lambda c: CRDAPIServiceController(),
    # kube-aggregator's availability controller: the Available condition of an APIService with a service.
    lambda c: APIServiceAvailabilityController(),
    # kube-apiserver's --event-ttl: the Event storage's etcd leases (fakekube/controllers/eventttl.py).
    lambda c: EventTTLController(c.event_ttl_s),
)


def admission_options(config: "ClusterConfig") -> AdmissionOptions:
    """What the admission plugins take from the cluster config (kube-apiserver's flags):
    DefaultTolerationSeconds' seconds, and FakekubeBehaviour's parser of the kubelet's
    behaviour annotation."""
    lifecycle = config.node_lifecycle
    return AdmissionOptions(lifecycle.default_not_ready_toleration_s, lifecycle.default_unreachable_toleration_s,
                            annotation_problem)


def admission_plugins(config: "ClusterConfig") -> tuple[str, ...]:
    """The admission plugins the cluster runs: kube-apiserver's defaults with the config's
    ``--enable-admission-plugins``/``--disable-admission-plugins`` (fakekube/api/admission/plugins.py)."""
    return enabled_plugins(config.enable_admission_plugins, config.disable_admission_plugins)
