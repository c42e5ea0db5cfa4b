"""What a cluster runs, named in one place: the controllers (with upstream's names, aliases
and enable lists) and the admission plugins.

Adding a controller is one :class:`~fakekube.engine.ControllerSpec` here: its factory
builds it from the :class:`~fakekube.cluster.cluster.ClusterConfig`. The order of the
list is the order controllers see each change (so it is part of a run's determinism:
new controllers go at the end).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable

from fakekube.api.registry import ResourceType
from fakekube.controllers.nodeipam import NodeIPAMController
from fakekube.controllers.nodelifecycle.controller import NodeLifecycleController
from fakekube.controllers.podgc import PodGCController
from fakekube.controllers.serviceaccounts import ServiceAccountsController
from fakekube.controllers.tainteviction import TaintEvictionController
from fakekube.engine import ControllerSpec
from fakekube.objects.kinds import PODS
from fakekube.objects.tolerations import default_tolerations

if TYPE_CHECKING:
    from fakekube.cluster.cluster import ClusterConfig

Obj = dict[str, Any]
#: A mutating admission plugin: (resource type, object being created or updated, now).
AdmissionPlugin = Callable[[ResourceType, Obj, datetime], None]

#: kube-controller-manager's controllers fakekube runs, in registration order.
CONTROLLERS: tuple[ControllerSpec, ...] = (
    ControllerSpec("serviceaccount-controller", lambda c: ServiceAccountsController(), ("serviceaccount",)),
    ControllerSpec("node-lifecycle-controller",
                   lambda c: NodeLifecycleController(c.node_lifecycle.for_version(c.kubernetes_version)),
                   ("nodelifecycle",)),
    ControllerSpec("taint-eviction-controller", lambda c: TaintEvictionController()),
    ControllerSpec("pod-garbage-collector-controller", lambda c: PodGCController(c.pod_gc), ("podgc",)),
    ControllerSpec("node-ipam-controller", lambda c: NodeIPAMController(c.cluster_cidr, c.node_cidr_mask_size),
                   ("nodeipam",)),
)


def default_toleration_seconds(config: "ClusterConfig") -> AdmissionPlugin:
    """DefaultTolerationSeconds: pods tolerate not-ready/unreachable for 300 s by default."""
    def admit(rt: ResourceType, obj: Obj, now: datetime) -> None:
        if rt.key == PODS:
            lifecycle = config.node_lifecycle
            added = default_tolerations(obj, lifecycle.default_not_ready_toleration_s,
                                        lifecycle.default_unreachable_toleration_s)
            if added:
                spec = obj.setdefault("spec", {})
                spec["tolerations"] = list(spec.get("tolerations") or []) + added
    return admit


#: The mutating admission plugins fakekube adds to the apiserver's own (NamespaceLifecycle
#: is built into the apiserver's create path), by upstream name, in the order they run.
ADMISSION_PLUGINS: dict[str, Callable[["ClusterConfig"], AdmissionPlugin]] = {
    "DefaultTolerationSeconds": default_toleration_seconds,
}
