"""What a cluster runs, named in one place: the controllers (with upstream's names, aliases
and enable lists) and the admission plugins (mutating, then validating).

Adding a controller is one :class:`~fakekube.engine.ControllerSpec` here: its factory
builds it from the :class:`~fakekube.cluster.cluster.ClusterConfig`. The order of the
list is the order controllers see each change (so it is part of a run's determinism:
new controllers go at the end).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FieldError
from fakekube.api.registry import ResourceType
from fakekube.api.registry.strategy import WriteContext
from fakekube.controllers.apiextensions import CRDEstablishingController, CRDFinalizerController
from fakekube.controllers.apiservices import CRDAPIServiceController
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
from fakekube.controllers.servicelb import ServiceLBController
from fakekube.controllers.statefulset import StatefulSetController
from fakekube.controllers.tainteviction import TaintEvictionController
from fakekube.controllers.ttlafterfinished import TTLAfterFinishedController
from fakekube.controllers.volume import PersistentVolumeBinder, PVCProtectionController, PVProtectionController
from fakekube.api.verbs import quotaadmission
from fakekube.cluster.served import served_resources
from fakekube.cluster.system import cluster_root_ca
from fakekube.engine import ControllerSpec
from fakekube.kubelet.behaviour import BEHAVIOUR_ANNOTATION, annotation_problem, brief
from fakekube.objects import priority as pod_priority
from fakekube.objects.constants import FINALIZER_PV_PROTECTION, FINALIZER_PVC_PROTECTION
from fakekube.objects.kinds import PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, PODS, PRIORITY_CLASSES, STORAGE_CLASSES
from fakekube.objects.volumes import claim_has_class, default_class
from fakekube.objects.tolerations import default_tolerations

if TYPE_CHECKING:
    from fakekube.cluster.cluster import ClusterConfig

Obj = dict[str, Any]
#: A mutating admission plugin: (resource type, object being created, the write's context:
#: time, and ``ctx.store`` for reads).
AdmissionPlugin = Callable[[ResourceType, Obj, WriteContext], None]

#: The random suffix ``generateName`` gets (fakekube.api.verbs.objectmeta.generated_name).
GENERATED_SUFFIX_CHARS = 5

#: kube-controller-manager's controllers fakekube runs, in registration order.
CONTROLLERS: tuple[ControllerSpec, ...] = (
    ControllerSpec("serviceaccount-controller", lambda c: ServiceAccountsController(), ("serviceaccount",)),
    ControllerSpec("node-lifecycle-controller",
                   lambda c: NodeLifecycleController(c.node_lifecycle.for_version(c.kubernetes_version)),
                   ("nodelifecycle",)),
    ControllerSpec("taint-eviction-controller", lambda c: TaintEvictionController()),
    ControllerSpec("pod-garbage-collector-controller", lambda c: PodGCController(c.pod_gc), ("podgc",)),
    ControllerSpec("node-ipam-controller",
                   lambda c: NodeIPAMController(c.cluster_cidr, c.node_cidr_mask_size, c.service_cidr),
                   ("nodeipam",)),
    ControllerSpec("replicaset-controller", lambda c: ReplicaSetController(REPLICA_SET), ("replicaset",)),
    ControllerSpec("replicationcontroller-controller", lambda c: ReplicaSetController(REPLICATION_CONTROLLER),
                   ("replicationcontroller",)),
    ControllerSpec("disruption-controller", lambda c: DisruptionController(), ("disruption",)),
    ControllerSpec("deployment-controller", lambda c: DeploymentController(), ("deployment",)),
    ControllerSpec("daemonset-controller", lambda c: DaemonSetController(), ("daemonset",)),
    ControllerSpec("garbage-collector-controller", lambda c: GarbageCollectorController(served_resources()),
                   ("garbagecollector",)),
    ControllerSpec("endpoints-controller", lambda c: EndpointsController(), ("endpoint",)),
    ControllerSpec("endpointslice-controller", lambda c: EndpointSliceController(), ("endpointslice",)),
    ControllerSpec("service-lb-controller", lambda c: ServiceLBController(c.load_balancer_ip_pool), ("service",)),
    ControllerSpec("namespace-controller", lambda c: NamespaceController(
        served_resources(), NamespaceConfig.for_version(c.kubernetes_version)), ("namespace",)),
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
    # Not kube-controller-manager's: kind's local-path provisioner, which acts only while
    # its Deployment's pod runs (fakekube/controllers/localpath.py).
    ControllerSpec("local-path-provisioner", lambda c: LocalPathProvisioner()),
    ControllerSpec("resourcequota-controller", lambda c: ResourceQuotaController(), ("resourcequota",)),
)


#: Controllers of the apiserver itself (apiextensions-apiserver's, the Event TTL), which every cluster runs
#: whatever its ``controllers`` list says: registered after the ones above.
APISERVER_CONTROLLERS: tuple[Callable[["ClusterConfig"], Any], ...] = (
    lambda c: CRDEstablishingController(),
    lambda c: CRDFinalizerController(),
    # kube-aggregator's crdregistration: an APIService per group-version CRDs serve.
    lambda c: CRDAPIServiceController(),
    # kube-apiserver's --event-ttl: the Event storage's etcd leases (fakekube/controllers/eventttl.py).
    lambda c: EventTTLController(c.event_ttl_s),
)


def priority(config: "ClusterConfig") -> AdmissionPlugin:
    """Priority: a new pod's ``spec.priority`` and ``preemptionPolicy`` come from its
    PriorityClass (or the ``globalDefault`` one, else 0); a missing class or a value the
    client set that differs is refused with upstream's 403."""
    def admit(rt: ResourceType, obj: Obj, ctx: WriteContext) -> None:
        if rt.key != PODS:
            return
        spec = obj.setdefault("spec", {})
        name = spec.get("priorityClassName") or ""
        group, resource = PRIORITY_CLASSES
        named = ctx.store.get_object(group, resource, "", name) if name else None
        classes = [] if name else ctx.store.list_objects(group, resource)
        try:
            pod_priority.admit(spec, pod_priority.resolve(name, named, classes))
        except pod_priority.PriorityRefused as refused:
            raise errors.forbidden_error(rt.group, rt.plural, _admission_name(obj), str(refused)) from None
    return admit


def _admission_name(obj: Obj) -> str:
    """The name upstream's admission errors give a new object: admission runs before the
    name is generated, so a ``generateName`` object is named by its prefix. (Ours runs after;
    a generated name is its prefix plus five characters.)"""
    meta = obj.get("metadata") or {}
    name, prefix = meta.get("name") or "", meta.get("generateName") or ""
    if prefix and name.startswith(prefix[:58]) and len(name) == len(prefix[:58]) + GENERATED_SUFFIX_CHARS:
        return prefix
    return name or "Unknown"


def default_toleration_seconds(config: "ClusterConfig") -> AdmissionPlugin:
    """DefaultTolerationSeconds: pods tolerate not-ready/unreachable for 300 s by default."""
    def admit(rt: ResourceType, obj: Obj, ctx: WriteContext) -> None:
        if rt.key == PODS:
            lifecycle = config.node_lifecycle
            added = default_tolerations(obj, lifecycle.default_not_ready_toleration_s,
                                        lifecycle.default_unreachable_toleration_s)
            if added:
                spec = obj.setdefault("spec", {})
                spec["tolerations"] = list(spec.get("tolerations") or []) + added
    return admit


def default_storage_class(config: "ClusterConfig") -> AdmissionPlugin:
    """DefaultStorageClass: a new claim that names no class (neither ``storageClassName``,
    even "", nor the beta annotation) gets the default StorageClass, if there is one
    (the newest of several)."""
    def admit(rt: ResourceType, obj: Obj, ctx: WriteContext) -> None:
        if rt.key != PERSISTENT_VOLUME_CLAIMS or claim_has_class(obj):
            return
        group, resource = STORAGE_CLASSES
        chosen = default_class(ctx.store.list_objects(group, resource))
        if chosen is not None:
            obj.setdefault("spec", {})["storageClassName"] = chosen["metadata"]["name"]
    return admit


def storage_object_in_use_protection(config: "ClusterConfig") -> AdmissionPlugin:
    """StorageObjectInUseProtection: new claims and volumes carry the finalizer their
    protection controller removes once nothing uses them."""
    def admit(rt: ResourceType, obj: Obj, ctx: WriteContext) -> None:
        if rt.key == PERSISTENT_VOLUME_CLAIMS:
            finalizer = FINALIZER_PVC_PROTECTION
        elif rt.key == PERSISTENT_VOLUMES:
            finalizer = FINALIZER_PV_PROTECTION
        else:
            return
        meta = obj.setdefault("metadata", {})
        if finalizer not in (meta.get("finalizers") or []):
            meta["finalizers"] = list(meta.get("finalizers") or []) + [finalizer]
    return admit


#: The mutating admission plugins fakekube adds to the apiserver's own (NamespaceLifecycle
#: is built into the apiserver's create path), by upstream name, in the order they run.
ADMISSION_PLUGINS: dict[str, Callable[["ClusterConfig"], AdmissionPlugin]] = {
    "LimitRanger": lambda config: quotaadmission.limit_ranger_defaults,
    "Priority": priority,
    "DefaultTolerationSeconds": default_toleration_seconds,
    "DefaultStorageClass": default_storage_class,
    "StorageObjectInUseProtection": storage_object_in_use_protection,
}


#: A validating admission plugin: what is wrong with an object being created or updated
#: (main resource: PUT, PATCH, create; not status writes), as field errors for a 422.
ValidatingPlugin = Callable[[ResourceType, Obj], list[FieldError]]

#: The longest piece of a refused value a 422 repeats.
ECHOED_VALUE_CHARS = 200


def fakekube_behaviour(config: "ClusterConfig") -> ValidatingPlugin:
    """FakekubeBehaviour: a pod's ``fakekube.io/behaviour`` annotation must parse (fields,
    types, durations within Go's time.Duration range), or the pod is refused with 422
    naming ``metadata.annotations[fakekube.io/behaviour]`` and the reason — rather than
    accepted and then never started by its kubelet."""
    def validate(rt: ResourceType, obj: Obj) -> list[FieldError]:
        if rt.key != PODS:
            return []
        problem = annotation_problem(obj)
        if problem is None:
            return []
        value = ((obj.get("metadata") or {}).get("annotations") or {}).get(BEHAVIOUR_ANNOTATION)
        shown = value if isinstance(value, str) and len(value) <= ECHOED_VALUE_CHARS else brief(value)
        return [errors.invalid(f"metadata.annotations[{BEHAVIOUR_ANNOTATION}]", shown, problem)]
    return validate


#: fakekube's validating admission plugins, by name, in the order they run (the
#: apiserver's ``validating_admission``: after the type's own validation, in the same 422).
VALIDATING_ADMISSION_PLUGINS: dict[str, Callable[["ClusterConfig"], ValidatingPlugin]] = {
    "FakekubeBehaviour": fakekube_behaviour,
}


#: A validating admission plugin that refuses with its own Status and may write what it
#: admits against: ``(rt, obj, old or None, store, now, dry_run)`` (the apiserver's
#: ``admission_checks``: after validation and the validating webhooks, before the write).
AdmissionCheck = Callable[[ResourceType, Obj, "Obj | None", Any, Any, bool], None]

#: Validating plugins with upstream's 403s, by name, in the order they run: LimitRanger's
#: min/max/ratio checks, then ResourceQuota (upstream's last plugin: it charges the quotas).
ADMISSION_CHECKS: dict[str, Callable[["ClusterConfig"], AdmissionCheck]] = {
    "LimitRanger": lambda config: quotaadmission.limit_ranger_check,
    "ResourceQuota": lambda config: quotaadmission.resource_quota_check,
}
