"""fakekube: a fake Kubernetes cluster inside a Python process, for CI.

Real Kubernetes REST semantics over HTTP (kubectl, helm and every client work against
it), with the cluster's time on a controllable virtual clock.
"""

from fakekube.cluster import Cluster, ClusterConfig

__all__ = ["Cluster", "ClusterConfig"]
__version__ = "0.1.0"
