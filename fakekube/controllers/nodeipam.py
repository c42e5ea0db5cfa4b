"""The node IPAM range allocator: every node's ``spec.podCIDR`` from the cluster CIDR.

Upstream (kube-controller-manager's nodeipam controller, ``--allocate-node-cidrs`` with
the RangeAllocator; pkg/controller/nodeipam/ipam/range_allocator.go and cidrset/cidr_set.go):

* kubelets register nodes without a podCIDR; the allocator gives each the next free
  block of ``--node-cidr-mask-size`` (24) bits from ``--cluster-cidr``, searching from
  just after the last block it handed out and wrapping round (so a freed block is not
  reused until the range wraps). The first node gets the first block, ``10.224.0.0/24``.
* it patches ``spec.podCIDR`` and ``spec.podCIDRs`` (one entry: single stack);
* a node that already has a podCIDR marks that block used instead;
* blocks that overlap the service CIDR are never handed out;
* when a node is deleted its block goes back to the pool;
* when no block is free it records a Warning ``CIDRNotAvailable`` event on the Node
  ("Node <name> status is now: CIDRNotAvailable", source ``cidrAllocator``) and retries
  with the controller work queue's back-off (5 ms doubling to 1000 s). The event
  recorder (:mod:`fakekube.engine.events`) folds the repeats into one Event whose ``count``
  rises. The range allocator sets no node condition (NetworkUnavailable belongs to cloud
  routes).

fakekube's default cluster CIDR is 10.224.0.0/11, not kind's 10.244.0.0/16: kind's holds
256 /24 blocks, and fakekube's envelope is 5,000 nodes (the /11 holds 8,192 and lies
outside the 10.96.0.0/12 service range). A cluster whose CIDR cannot give every node it
registers at creation a block is refused then (:func:`check_node_room`) instead of
warning ``CIDRNotAvailable`` forever.

Memory bound: one used-block entry per allocated block, at most ``2 ** (node mask size -
cluster prefix)`` (limited to 2 ** :data:`MAX_MASK_DIFF_BITS`, upstream's limit for IPv6,
applied to both families here), plus one record per node (dropped with the node).
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Any, Iterable

from fakekube.api.machinery.errors import ApiError
from fakekube.objects.kinds import NODES
from fakekube.store import ADDED, DELETED, Change

if TYPE_CHECKING:  # a cluster's config reads this module's CIDR defaults before the engine loads
    from fakekube.engine import Context

Obj = dict[str, Any]
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

#: kube-controller-manager's --cluster-cidr: room for 8,192 /24 node blocks (kind's
#: 10.244.0.0/16 holds 256; fakekube's envelope is 5,000 nodes). It contains kind's range
#: and stays clear of the default service range 10.96.0.0/12.
DEFAULT_CLUSTER_CIDR = "10.224.0.0/11"
#: --node-cidr-mask-size default for IPv4.
DEFAULT_NODE_CIDR_MASK_SIZE = 24
#: kubeadm's default --service-cluster-ip-range (the ``kubernetes`` Service is 10.96.0.1).
DEFAULT_SERVICE_CIDR = "10.96.0.0/12"
#: Upstream's clusterSubnetMaxDiff: node blocks at most 16 bits longer than the cluster prefix.
MAX_MASK_DIFF_BITS = 16
CIDR_NOT_AVAILABLE = "CIDRNotAvailable"
EVENT_COMPONENT = "cidrAllocator"


class CIDRExhausted(RuntimeError):
    """No free block is left in the cluster CIDR."""


class CIDRSet:
    """Blocks of one size carved from one network, handed out round-robin (upstream's cidrset)."""

    def __init__(self, cluster_cidr: str, node_mask_size: int) -> None:
        self.network: Network = ipaddress.ip_network(cluster_cidr, strict=True)
        if not self.network.prefixlen <= node_mask_size <= self.network.max_prefixlen:
            raise ValueError(f"node CIDR mask size {node_mask_size} must be between the cluster CIDR's prefix "
                             f"length {self.network.prefixlen} and {self.network.max_prefixlen}")
        if node_mask_size - self.network.prefixlen > MAX_MASK_DIFF_BITS:
            raise ValueError(f"node CIDR mask size {node_mask_size} is more than {MAX_MASK_DIFF_BITS} bits longer "
                             f"than the cluster CIDR's /{self.network.prefixlen}")
        self.node_mask_size = node_mask_size
        self.max_cidrs = 1 << (node_mask_size - self.network.prefixlen)
        self._used: set[int] = set()
        self._next_candidate = 0

    def __len__(self) -> int:
        """How many blocks are in use."""
        return len(self._used)

    def allocate_next(self) -> Network:
        """The first free block at or after the one following the last allocation (wrapping)."""
        if len(self._used) >= self.max_cidrs:
            raise CIDRExhausted("CIDR allocation failed; there are no remaining CIDRs left to allocate "
                                "in the accepted range")
        candidate = self._next_candidate
        while candidate in self._used:
            candidate = (candidate + 1) % self.max_cidrs
        self._next_candidate = (candidate + 1) % self.max_cidrs
        self._used.add(candidate)
        return self._block(candidate)

    def occupy(self, cidr: Network) -> None:
        """Mark every block ``cidr`` overlaps as used (a node that came with a podCIDR, the service range)."""
        for index in self._indices(cidr):
            self._used.add(index)

    def release(self, cidr: Network) -> None:
        for index in self._indices(cidr):
            self._used.discard(index)

    def _block(self, index: int) -> Network:
        shift = self.network.max_prefixlen - self.node_mask_size
        base = int(self.network.network_address) | (index << shift)
        return ipaddress.ip_network((base, self.node_mask_size))

    def _indices(self, cidr: Network) -> range:
        """Indices of the blocks ``cidr`` overlaps; empty when it lies outside the cluster CIDR."""
        if cidr.version != self.network.version or not cidr.overlaps(self.network):
            return range(0)
        shift = self.network.max_prefixlen - self.node_mask_size
        first = max(int(cidr.network_address), int(self.network.network_address))
        last = min(int(cidr.broadcast_address), int(self.network.broadcast_address))
        origin = int(self.network.network_address)
        return range((first - origin) >> shift, ((last - origin) >> shift) + 1)


def node_capacity(cluster_cidr: str, node_mask_size: int, service_cidr: str | None = DEFAULT_SERVICE_CIDR) -> int:
    """How many nodes can get a block: the cluster CIDR's blocks less those the service CIDR overlaps."""
    cidrs = CIDRSet(cluster_cidr, node_mask_size)
    if service_cidr:
        cidrs.occupy(ipaddress.ip_network(service_cidr))
    return cidrs.max_cidrs - len(cidrs)


def check_node_room(cluster_cidr: str, node_mask_size: int, service_cidr: str | None, nodes: int) -> None:
    """Refuse, with a ValueError saying why, a cluster CIDR too small for the ``nodes`` a
    cluster registers at creation (upstream would leave the rest without a podCIDR, warning)."""
    room = node_capacity(cluster_cidr, node_mask_size, service_cidr)
    if nodes > room:
        overlap = " outside the service CIDR" if room < CIDRSet(cluster_cidr, node_mask_size).max_cidrs else ""
        raise ValueError(f"clusterCIDR {cluster_cidr} with nodeCIDRMaskSize {node_mask_size} has room for {room} "
                         f"nodes{overlap}; the config asks for {nodes} (widen clusterCIDR, e.g. the default "
                         f"{DEFAULT_CLUSTER_CIDR}, or lengthen nodeCIDRMaskSize)")


class _NodeRecord:
    """What the allocator remembers about one node: its uid and its blocks."""

    __slots__ = ("uid", "cidrs")

    def __init__(self, uid: str, cidrs: tuple[Network, ...] = ()) -> None:
        self.uid = uid
        self.cidrs = cidrs


class NodeIPAMController:
    """Assigns ``spec.podCIDR`` to every node (see the module docstring)."""

    name = "node-ipam-controller"
    resources = (NODES,)

    def __init__(self, cluster_cidr: str = DEFAULT_CLUSTER_CIDR, node_mask_size: int = DEFAULT_NODE_CIDR_MASK_SIZE,
                 service_cidr: str | None = DEFAULT_SERVICE_CIDR) -> None:
        self.cidrs = CIDRSet(cluster_cidr, node_mask_size)
        if service_cidr:
            self.cidrs.occupy(ipaddress.ip_network(service_cidr))
        self._nodes: dict[str, _NodeRecord] = {}

    # -- engine interface --------------------------------------------------------
    def keys_for(self, change: Change) -> Iterable[str]:
        """New and deleted nodes, and any update of a node still waiting for a podCIDR."""
        if change.type in (ADDED, DELETED) or not _pod_cidrs(change.obj):
            return [change.name]
        return []

    def reconcile(self, key: str, ctx: Context) -> None:
        node = ctx.get(NODES, key)
        record = self._nodes.get(key)
        if record is not None and (node is None or node["metadata"].get("uid") != record.uid):
            self._forget(key, record)  # deleted (or deleted and created again): its blocks go back
            record = None
        if node is None:
            return
        if record is None:
            record = self._nodes[key] = _NodeRecord(uid=node["metadata"].get("uid", ""))
        existing = _pod_cidrs(node)
        if existing:
            self._occupy(record, existing)
        else:
            self._allocate(node, record, ctx)

    # -- allocation ----------------------------------------------------------------
    def _occupy(self, record: _NodeRecord, cidrs: list[str]) -> None:
        """A podCIDR we did not hand out (set at registration, or by someone else): mark it used."""
        networks = tuple(ipaddress.ip_network(c, strict=False) for c in cidrs)
        if networks != record.cidrs:
            for network in networks:
                self.cidrs.occupy(network)
            record.cidrs = networks

    def _allocate(self, node: Obj, record: _NodeRecord, ctx: Context) -> None:
        try:
            block = self.cidrs.allocate_next()
        except CIDRExhausted:
            self._not_available(node, ctx)
            return
        spec = dict(node.get("spec") or {}, podCIDR=str(block), podCIDRs=[str(block)])
        try:
            ctx.client.update(NODES, dict(node, spec=spec))
        except ApiError:
            self.cidrs.release(block)  # the patch failed: the block goes back, as upstream's does
            raise
        record.cidrs = (block,)

    def _not_available(self, node: Obj, ctx: Context) -> None:
        """Tell the node's watchers (an Event) and try again after the work queue's back-off."""
        message = f"Node {node['metadata']['name']} status is now: {CIDR_NOT_AVAILABLE}"
        ctx.record_event(node, "Node", "Warning", CIDR_NOT_AVAILABLE, message, EVENT_COMPONENT)
        ctx.requeue_rate_limited()

    def _forget(self, name: str, record: _NodeRecord) -> None:
        for network in record.cidrs:
            self.cidrs.release(network)
        del self._nodes[name]


def _pod_cidrs(node: Obj | None) -> list[str]:
    spec = (node or {}).get("spec") or {}
    return list(spec.get("podCIDRs") or ([spec["podCIDR"]] if spec.get("podCIDR") else []))
