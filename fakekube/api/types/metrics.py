"""``metrics.k8s.io/v1beta1``: NodeMetrics and PodMetrics, as metrics-server serves them.

A cluster serves them when ``ClusterConfig.metrics_server`` is on (``fakekube serve``
turns it on, as kind with metrics-server installed). They are read-only and never
stored: each read computes them from the simulated kubelets' usage
(:mod:`fakekube.api.verbs.metrics`). metrics-server's storage is a Getter and Lister
only, so discovery lists ``get`` and ``list`` and names no singular, and a watch is
refused with apimachinery's 405 (the HTTP layer's rule for a verb a type lacks).
"""

from __future__ import annotations

from fakekube.api.registry import GET_LIST, ResourceType
from fakekube.api.table import NODE_METRICS_TABLE, POD_METRICS_TABLE

METRICS_GROUP = "metrics.k8s.io"
METRICS_VERSION = "v1beta1"

NODE_METRICS = ResourceType(
    METRICS_GROUP, METRICS_VERSION, "NodeMetrics", "nodes", namespaced=False, verbs=GET_LIST, persisted=False,
    table=NODE_METRICS_TABLE, singular_name="",
)
POD_METRICS = ResourceType(
    METRICS_GROUP, METRICS_VERSION, "PodMetrics", "pods", namespaced=True, verbs=GET_LIST, persisted=False,
    table=POD_METRICS_TABLE, singular_name="",
)

#: What metrics-server's APIService serves, in discovery order.
METRICS_TYPES = (NODE_METRICS, POD_METRICS)
