"""What a simulated node is configured with: name, topology, labels, taints, resources.

A cluster's ``nodes`` is either a count (``node-1`` … ``node-N``, all alike) or a sequence
of :class:`NodeSpec`; a spec with ``count > 1`` stamps several alike nodes. Names:

* a spec without ``name`` continues the cluster-wide ``node-<n>`` numbering;
* a spec with ``name`` and ``count: 1`` is that one node;
* a spec with ``name`` and ``count > 1`` is ``<name>-1`` … ``<name>-<count>``.

Nodes register in the order given, which is the order the node IPAM controller hands
out pod CIDRs.
"""

from __future__ import annotations

import ipaddress
from typing import Any, Sequence

from fakekube.record import FrozenRecord

#: Node n's InternalIP is this address + n (node-1 → 172.18.0.2, as on a kind network).
NODE_IP_BASE = ipaddress.ip_address("172.18.0.1")

Obj = dict[str, Any]

#: The prefix of generated node names (``node-1``, ``node-2``, …).
DEFAULT_NODE_PREFIX = "node"


class NodeSpec(FrozenRecord):
    """One node, or ``count`` alike nodes, as a kubelet would register them."""

    __slots__ = ("name", "count", "zone", "region", "labels", "taints", "capacity", "allocatable", "static_pods")

    name: str | None
    count: int
    #: ``topology.kubernetes.io/zone`` / ``region`` labels; None: no label.
    zone: str | None
    region: str | None
    #: Extra labels (they may override the kubelet's own, as ``--node-labels`` can).
    labels: dict[str, str]
    #: Taints registered with the node (kubelet ``--register-with-taints``): ``{key, value?, effect}``.
    taints: tuple[Obj, ...]
    #: Per-resource overrides of ``status.capacity`` (a resource given here and not in
    #: ``allocatable`` gets the same allocatable value).
    capacity: dict[str, str]
    #: Per-resource overrides of ``status.allocatable``.
    allocatable: dict[str, str]
    #: Static pod manifests for this node's kubelet only.
    static_pods: tuple[Obj, ...]

    def __init__(self, name: str | None = None, count: int = 1, zone: str | None = None, region: str | None = None,
                 labels: dict[str, str] | None = None, taints: tuple[Obj, ...] = (),
                 capacity: dict[str, str] | None = None, allocatable: dict[str, str] | None = None,
                 static_pods: tuple[Obj, ...] = ()) -> None:
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"count: must be an integer >= 1, got {count!r}")
        self._set("name", name)
        self._set("count", count)
        self._set("zone", zone)
        self._set("region", region)
        self._set("labels", labels if labels is not None else {})
        self._set("taints", taints)
        self._set("capacity", capacity if capacity is not None else {})
        self._set("allocatable", allocatable if allocatable is not None else {})
        self._set("static_pods", static_pods)


def expand_nodes(nodes: int | Sequence[NodeSpec]) -> list[tuple[str, NodeSpec]]:
    """Every node as ``(name, spec)``, in registration order; ValueError on a duplicate name."""
    if isinstance(nodes, bool):
        raise ValueError(f"nodes: must be a count or node specs, got {nodes!r}")
    if isinstance(nodes, int):
        if nodes < 0:
            raise ValueError(f"nodes: must be >= 0, got {nodes}")
        return [(f"{DEFAULT_NODE_PREFIX}-{i}", NodeSpec()) for i in range(1, nodes + 1)]
    expanded: list[tuple[str, NodeSpec]] = []
    generated = 0
    for spec in nodes:
        for copy in range(1, spec.count + 1):
            if spec.name is None:
                generated += 1
                name = f"{DEFAULT_NODE_PREFIX}-{generated}"
            else:
                name = spec.name if spec.count == 1 else f"{spec.name}-{copy}"
            expanded.append((name, spec))
    _refuse_duplicates([name for name, _ in expanded])
    return expanded


def node_count(nodes: int | Sequence[NodeSpec]) -> int:
    """How many nodes ``nodes`` registers."""
    if isinstance(nodes, int):
        return nodes
    return sum(spec.count for spec in nodes)


def _refuse_duplicates(names: list[str]) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValueError(f"nodes: two nodes are named {name!r}")
        seen.add(name)
