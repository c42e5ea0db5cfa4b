"""The node faults the differential tests inject by name (one dispatch, shared)."""

from __future__ import annotations

from fakekube import Cluster

#: The faults :func:`inject` knows, by the Cluster method each calls.
FAULTS = ("fail", "recover", "partition", "heal", "restart")


def inject(cluster: Cluster, fault: str, node: str) -> bool:
    """Apply ``fault`` to ``node``; False for a name that is not one of :data:`FAULTS`."""
    method = {"fail": cluster.fail_node, "recover": cluster.recover_node, "partition": cluster.partition_node,
              "heal": cluster.heal_node, "restart": cluster.restart_kubelet}.get(fault)
    if method is None:
        return False
    method(node)
    return True
