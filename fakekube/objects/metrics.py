"""Resource usage figures as metrics-server reports them, shared by their producer and readers.

The simulated kubelets produce these figures (``fakekube/kubelet/resourcemetrics.py``);
the apiserver serves them as ``metrics.k8s.io`` (``kubectl top``), and the
HorizontalPodAutoscaler (controllers/podautoscaler/) reads them the same way: through a
:class:`UsageReader`, so no reader imports the kubelet part. Pure data, no clock reads.

metrics-server scrapes every kubelet each ``--metric-resolution`` (15 s in its published
manifests) and answers with the last scrape: CPU as the rate between the last two
scrapes (nanocores), memory as the working set at the last one (bytes).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Mapping, NamedTuple, Protocol, Sequence

#: metrics-server's ``--metric-resolution`` in its published manifests: one scrape per 15 s.
METRIC_RESOLUTION_S = 15.0
#: metrics-server's ``freshContainerMinMetricsResolution``: a container started between 10 s
#: and one resolution before a scrape reports at that scrape (its start is the window's start).
FRESH_CONTAINER_MIN_S = 10.0

_UNIX_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)


def last_scrape(now: datetime, resolution_s: float = METRIC_RESOLUTION_S) -> datetime:
    """The latest scrape instant at or before ``now``: scrapes fall on whole multiples of the
    resolution since the Unix epoch, so every run and every reader agrees on them."""
    elapsed_us = (now - _UNIX_EPOCH) // _MICROSECOND
    step_us = int(resolution_s * 1_000_000)
    return _UNIX_EPOCH + (elapsed_us - elapsed_us % step_us) * _MICROSECOND


class ContainerUsage(NamedTuple):
    """One container's figures: CPU rate over the window (nanocores) and working set (bytes)."""

    name: str
    cpu_nanocores: int
    memory_bytes: int


class PodUsage(NamedTuple):
    """A pod's figures at one scrape: every container running then, in spec order."""

    timestamp: datetime
    window_s: float
    containers: tuple[ContainerUsage, ...]


class NodeUsage(NamedTuple):
    """A node's figures at one scrape: its pods' usage plus the node's own (system) usage."""

    timestamp: datetime
    window_s: float
    cpu_nanocores: int
    memory_bytes: int


class UsageReader(Protocol):
    """Where usage figures come from (the simulated kubelets, as metrics-server scraped them).

    A pod or node without figures is simply absent from the answer (not scraped twice
    yet, nothing running, or its kubelet unreachable), as metrics-server leaves it out."""

    def pod_usage(self, pods: Sequence[tuple[str, str]]) -> Mapping[tuple[str, str], PodUsage]:
        """Figures of the pods named ``(namespace, name)``, at the last scrape."""
        ...

    def node_usage(self, nodes: Sequence[tuple[str, datetime]]) -> Mapping[str, NodeUsage]:
        """Figures of the nodes named ``(name, registered at)``, at the last scrape."""
        ...
