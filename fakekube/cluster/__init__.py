"""The cluster: the public Python API that wires every part together."""

from typing import Any

from fakekube.api.machinery.errors import ApiError
from fakekube.cluster.cluster import Cluster, ClusterConfig
from fakekube.cluster.nodespec import NodeSpec
from fakekube.cluster.objectverbs import ExecResult
from fakekube.cluster.waiting import WaitTimeout

__all__ = ["ApiError", "Cluster", "ClusterConfig", "ExecResult", "NodeSpec", "SnapshotFileError", "WaitTimeout"]


def __getattr__(name: str) -> Any:
    """``SnapshotFileError`` (what ``Cluster.load`` raises) loads with the snapshot file
    module, on first use: a cluster that never reads a file does not import it."""
    if name == "SnapshotFileError":
        from fakekube.cluster.snapfile import SnapshotFileError
        return SnapshotFileError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
