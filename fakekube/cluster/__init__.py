"""The cluster: the public Python API that wires every part together.

Its names load on first use (a module ``__getattr__``): a part that needs only the config or
a snapshot file's reader (the first phase of ``serve``'s boot, docs/snapshots.md "Phased
boot") does not import the whole cluster — the engine, controllers, scheduler and kubelets."""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fakekube.api.machinery.errors import ApiError
    from fakekube.cluster.cluster import Cluster, ClusterConfig
    from fakekube.cluster.nodespec import NodeSpec
    from fakekube.cluster.objectverbs import ExecResult
    from fakekube.cluster.snapfile import SnapshotFileError
    from fakekube.cluster.waiting import WaitTimeout

__all__ = ["ApiError", "Cluster", "ClusterConfig", "ExecResult", "NodeSpec", "SnapshotFileError", "WaitTimeout"]

#: Where each public name lives (imported on first use).
_HOMES = {"ApiError": "fakekube.api.machinery.errors", "Cluster": "fakekube.cluster.cluster",
          "ClusterConfig": "fakekube.cluster.config", "ExecResult": "fakekube.cluster.objectverbs",
          "NodeSpec": "fakekube.cluster.nodespec", "SnapshotFileError": "fakekube.cluster.snapfile",
          "WaitTimeout": "fakekube.cluster.waiting"}


def __getattr__(name: str) -> Any:
    """A public name, from its module on first use (see the module docstring)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib
    return getattr(importlib.import_module(home), name)
