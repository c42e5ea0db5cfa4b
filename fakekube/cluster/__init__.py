"""The cluster: the public Python API that wires every part together."""

from fakekube.cluster.cluster import Cluster, ClusterConfig
from fakekube.cluster.nodespec import NodeSpec

__all__ = ["Cluster", "ClusterConfig", "NodeSpec"]
