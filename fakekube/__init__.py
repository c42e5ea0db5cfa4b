"""fakekube: a fake Kubernetes cluster inside a Python process, for CI.

Real Kubernetes REST semantics over HTTP (kubectl, helm and every client work against
it), with the cluster's time on a controllable virtual clock.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fakekube.cluster import Cluster, ClusterConfig

__all__ = ["Cluster", "ClusterConfig"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """``Cluster`` and ``ClusterConfig`` load on first use: every ``import fakekube.x``
    (the pytest plugin, the CLI, ``fakekube.clock``) runs this module first, and should
    pay only for the parts it imports, not for the whole cluster (docs/performance.md)."""
    if name in __all__:
        from fakekube import cluster
        return getattr(cluster, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
