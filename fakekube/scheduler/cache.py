"""The scheduler's cache: nodes and the pods bound to them, as NodeInfos (upstream's
``internal/cache``), plus the nominator (pods that preemption nominated to a node).

It is fed by the scheduler's reconciles — every node and pod change the scheduler saw —
and by the scheduler itself when it binds (upstream "assumes" a pod before the binding
returns; here the binding returns first, so the cache simply adds the bound pod). Pods in
phase Succeeded or Failed are left out, as upstream's pod informer filters them.

Node order is upstream's node tree: nodes grouped by zone (``topology.kubernetes.io/
region`` and ``zone`` labels), zones in the order they first appeared, nodes in the order
they were added, and the list interleaves the zones round-robin — so a scheduling cycle
that samples only part of the nodes still sees every zone.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Iterable

from fakekube.scheduler.framework import NodeInfo, PodInfo

Obj = dict[str, Any]

ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"


def zone_key(node: Obj) -> str:
    """utilnode.GetZoneKey: region and zone, or "" for a node with neither label."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    region, zone = labels.get(REGION_LABEL, ""), labels.get(ZONE_LABEL, "")
    return f"{region}:\x00:{zone}" if region or zone else ""


class NodeChangeLog:
    """The names of the nodes whose NodeInfo changed, in order: plugins that keep counts
    across cycles (PodTopologySpread) read what changed since their last position instead
    of comparing every node's generation. Bounded: past :data:`CHANGE_LOG_LIMIT` entries
    the older half is dropped; ``since`` a dropped position answers None (start over)."""

    def __init__(self, limit: int = 65536) -> None:
        self.limit = limit
        self.start = 0
        self.names: list[str] = []

    @property
    def position(self) -> int:
        return self.start + len(self.names)

    def since(self, position: int) -> list[str] | None:
        return None if position < self.start else self.names[position - self.start:]

    def record(self, name: str) -> None:
        self.names.append(name)
        if len(self.names) > self.limit:
            drop = len(self.names) // 2
            self.start += drop
            del self.names[:drop]


#: NodeChangeLog's default bound.
CHANGE_LOG_LIMIT = 65536


class Cache:
    """NodeInfos by node name, the bound pods, nominated pods; read through :class:`Snapshot`."""

    def __init__(self) -> None:
        self.nodes: dict[str, NodeInfo] = {}
        self.changes = NodeChangeLog(CHANGE_LOG_LIMIT)
        self._zones: OrderedDict[str, list[str]] = OrderedDict()
        self._node_zone: dict[str, str] = {}
        self._ordered: list[NodeInfo] | None = None
        #: Bound pods: key -> (node name, PodInfo).
        self.pods: dict[str, tuple[str, PodInfo]] = {}
        #: Pods bound to a node the cache does not have (yet): node -> key -> PodInfo.
        self._waiting: dict[str, dict[str, PodInfo]] = {}
        #: Nodes holding pods with pod (anti-)affinity, and with required anti-affinity, kept
        #: as pods come and go (InterPodAffinity reads them every cycle; scanning 5,000
        #: nodes for them cost more than the rest of a cycle).
        #: How many nodes report each image in status.images.
        self.image_nodes: dict[str, int] = {}
        self.affinity_nodes: dict[str, None] = {}
        self.anti_affinity_nodes: dict[str, None] = {}
        #: Nominated pods by node, and each pod's node.
        self._nominated: dict[str, dict[str, PodInfo]] = {}
        self._nominated_node: dict[str, str] = {}

    # -- nodes ---------------------------------------------------------------------------
    def set_node(self, node: Obj) -> NodeInfo:
        """Add or update a node; returns its NodeInfo."""
        name = node["metadata"]["name"]
        self.changes.record(name)
        info = self.nodes.get(name)
        zone = zone_key(node)
        if info is None:
            info = self.nodes[name] = NodeInfo(node)
            for pod in self._waiting.pop(name, {}).values():
                info.add_pod(pod)
            self._track_affinity(info)
            self._count_images((), info.images)
            self._zones.setdefault(zone, []).append(name)
            self._node_zone[name] = zone
            self._ordered = None
            return info
        before = info.images
        info.set_node(node)
        if info.images != before:
            self._count_images(before, info.images)
        if self._node_zone[name] != zone:
            self._remove_from_zone(name)
            self._zones.setdefault(zone, []).append(name)
            self._node_zone[name] = zone
            self._ordered = None
        return info

    def _count_images(self, before: Iterable[str], after: Iterable[str]) -> None:
        """Keep how many nodes hold each image (ImageLocality's spread) as node lists change."""
        old, new = set(before), set(after)
        for image in old - new:
            count = self.image_nodes[image] - 1
            if count:
                self.image_nodes[image] = count
            else:
                del self.image_nodes[image]
        for image in new - old:
            self.image_nodes[image] = self.image_nodes.get(image, 0) + 1

    def _track_affinity(self, node: NodeInfo) -> None:
        for tracked, has in ((self.affinity_nodes, node.pods_with_affinity),
                             (self.anti_affinity_nodes, node.pods_with_required_anti_affinity)):
            if has:
                tracked.setdefault(node.name, None)
            else:
                tracked.pop(node.name, None)

    def remove_node(self, name: str) -> None:
        """Forget a node; pods still bound to it wait for it (as upstream's imaginary node)."""
        info = self.nodes.pop(name, None)
        if info is None:
            return
        self.changes.record(name)
        if info.pods:
            self._waiting[name] = dict(info.pods)
        self._count_images(info.images, ())
        self._remove_from_zone(name)
        del self._node_zone[name]
        self.affinity_nodes.pop(name, None)
        self.anti_affinity_nodes.pop(name, None)
        self._ordered = None

    def _remove_from_zone(self, name: str) -> None:
        zone = self._node_zone[name]
        members = self._zones[zone]
        members.remove(name)
        if not members:
            del self._zones[zone]

    def ordered(self) -> list[NodeInfo]:
        """Every node in node-tree order (zones interleaved round-robin)."""
        if self._ordered is None:
            zones = list(self._zones.values())
            out: list[NodeInfo] = []
            for index in range(max((len(z) for z in zones), default=0)):
                out.extend(self.nodes[z[index]] for z in zones if index < len(z))
            self._ordered = out
        return self._ordered

    # -- pods ----------------------------------------------------------------------------
    def add_pod(self, node_name: str, info: PodInfo) -> None:
        """Account a bound pod on its node (replacing an older version of it)."""
        self.remove_pod(info.key)
        self.pods[info.key] = (node_name, info)
        self.changes.record(node_name)
        node = self.nodes.get(node_name)
        if node is None:
            self._waiting.setdefault(node_name, {})[info.key] = info
        else:
            node.add_pod(info)
            self._track_affinity(node)

    def remove_pod(self, key: str) -> PodInfo | None:
        entry = self.pods.pop(key, None)
        if entry is None:
            return None
        node_name, info = entry
        self.changes.record(node_name)
        node = self.nodes.get(node_name)
        if node is not None:
            node.remove_pod(key)
            self._track_affinity(node)
        else:
            waiting = self._waiting.get(node_name, {})
            waiting.pop(key, None)
            if not waiting:
                self._waiting.pop(node_name, None)
        return info

    def refresh_pod(self, info: PodInfo) -> None:
        """A bound pod's newer version that changes nothing the cache accounts (its scheduling
        view is the same): every place that holds its PodInfo gets the new one, and no node
        counts as changed."""
        node_name, _ = self.pods[info.key]
        self.pods[info.key] = (node_name, info)
        node = self.nodes.get(node_name)
        holders = (node.pods, node.pods_with_affinity, node.pods_with_required_anti_affinity) if node is not None \
            else (self._waiting.get(node_name, {}),)
        for holder in holders:
            if info.key in holder:
                holder[info.key] = info

    def bound(self, key: str) -> PodInfo | None:
        entry = self.pods.get(key)
        return entry[1] if entry else None

    # -- the nominator -------------------------------------------------------------------
    def nominate(self, info: PodInfo, node_name: str) -> None:
        """Record (or, with an empty name, clear) the node a pending pod is nominated to."""
        self.clear_nomination(info.key)
        if node_name:
            self._nominated.setdefault(node_name, {})[info.key] = info
            self._nominated_node[info.key] = node_name

    def refresh_nominated(self, info: PodInfo) -> None:
        """A nominated pod's newer version, in its place (the nominator's order is kept)."""
        node_name = self._nominated_node.get(info.key)
        if node_name is not None:
            self._nominated[node_name][info.key] = info

    def clear_nomination(self, key: str) -> None:
        node_name = self._nominated_node.pop(key, None)
        if node_name is not None:
            pods = self._nominated[node_name]
            pods.pop(key, None)
            if not pods:
                del self._nominated[node_name]

    def nominated_node(self, key: str) -> str:
        return self._nominated_node.get(key, "")

    def has_nominations(self) -> bool:
        return bool(self._nominated)

    def nominated_to(self, node_name: str) -> list[PodInfo]:
        return list(self._nominated.get(node_name, {}).values())


class Snapshot:
    """The plugins' read-only view of the cache (upstream's SharedLister)."""

    def __init__(self, cache: Cache) -> None:
        self._cache = cache
        #: Which nodes changed since a position (see NodeChangeLog).
        self.changes = cache.changes

    def node_infos(self) -> list[NodeInfo]:
        """Every node, in node-tree order."""
        return self._cache.ordered()

    def get(self, name: str) -> NodeInfo | None:
        return self._cache.nodes.get(name)

    def __len__(self) -> int:
        return len(self._cache.nodes)

    def have_pods_with_affinity(self) -> list[NodeInfo]:
        """Nodes with at least one pod with pod (anti-)affinity, in the order they got one."""
        nodes = self._cache.nodes
        return [nodes[name] for name in self._cache.affinity_nodes if name in nodes]

    def have_pods_with_required_anti_affinity(self) -> list[NodeInfo]:
        nodes = self._cache.nodes
        return [nodes[name] for name in self._cache.anti_affinity_nodes if name in nodes]

    def image_num_nodes(self, image: str) -> int:
        """How many nodes report ``image`` (a name as in status.images)."""
        return self._cache.image_nodes.get(image, 0)

    def nominated_pods(self, node_name: str, info: PodInfo) -> list[PodInfo]:
        """Pods nominated to ``node_name`` with priority at least ``info``'s, other than it."""
        return [other for other in self._cache.nominated_to(node_name)
                if other.key != info.key and other.priority >= info.priority]

    def nominated_node(self, key: str) -> str:
        return self._cache.nominated_node(key)

    def nominated_to(self, node_name: str) -> list[PodInfo]:
        """Every pod nominated to ``node_name``, whatever its priority."""
        return self._cache.nominated_to(node_name)
