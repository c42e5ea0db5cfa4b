"""metrics-server as an add-on: its APIService, and its figures read from the kubelets.

With ``ClusterConfig.metrics_server`` on, the cluster serves ``metrics.k8s.io/v1beta1``
(kind with metrics-server's published manifest installed): the registry holds its types,
the APIService ``v1beta1.metrics.k8s.io`` exists and is Available, and reads get their
figures from the simulated kubelets (:class:`EngineUsage`). With kind's add-ons on, the
metrics-server Deployment and Service run in ``kube-system`` too
(fakekube/cluster/system/metricsserver.py). Simplification: the APIService is a record
only (deleting it, or the Deployment, does not stop the group being served).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Sequence

from fakekube.api.verbs import objectmeta
from fakekube.api.verbs.apiserver import APIServer
from fakekube.engine import Engine
from fakekube.objects.metrics import NodeUsage, PodUsage

if TYPE_CHECKING:  # the kubelets' side: a phased load's first half serves without it
    from fakekube.kubelet.resourcemetrics import ResourceMetrics

Obj = dict[str, Any]

#: The APIService metrics-server's manifest registers (components.yaml), as defaulted.
API_SERVICE_NAME = "v1beta1.metrics.k8s.io"


def api_service(now: str) -> Obj:
    """``v1beta1.metrics.k8s.io`` as stored once kube-aggregator found it available."""
    return {
        "metadata": {"name": API_SERVICE_NAME, "labels": {"k8s-app": "metrics-server"}},
        "spec": {
            "service": {"namespace": "kube-system", "name": "metrics-server", "port": 443},
            "group": "metrics.k8s.io", "version": "v1beta1", "insecureSkipTLSVerify": True,
            "groupPriorityMinimum": 100, "versionPriority": 100,
        },
        "status": {"conditions": [{"type": "Available", "status": "True", "lastTransitionTime": now,
                                   "reason": "Passed", "message": "all checks passed"}]},
    }


def register_api_service(api: APIServer) -> None:
    """Store the APIService (its uid from a stream of its own: no other identifier moves)."""
    rt = api.registry.lookup("apiregistration.k8s.io", "v1", "apiservices")
    ctx = api.write_context(api.rng.fork("metrics-server"))
    obj = api_service(api.now_rfc3339())
    with api.store.lock:
        objectmeta.stamp_new(rt, obj, ctx)
        api.store.create(rt.key, obj)


class EngineUsage:
    """The kubelets' figures at cluster time, read on the engine thread (where they move)."""

    def __init__(self, engine: Engine, metrics: ResourceMetrics) -> None:
        self._engine = engine
        self._metrics = metrics

    def pod_usage(self, pods: Sequence[tuple[str, str]]) -> dict[tuple[str, str], PodUsage]:
        return self._engine.run(lambda: self._metrics.pod_usage(pods, self._engine.clock.now()))

    def node_usage(self, nodes: Sequence[tuple[str, datetime]]) -> dict[str, NodeUsage]:
        return self._engine.run(lambda: self._metrics.node_usage(nodes, self._engine.clock.now()))
