"""The cluster: the public Python API that wires every part together."""

from fakekube.cluster.cluster import Cluster, ClusterConfig

__all__ = ["Cluster", "ClusterConfig"]
