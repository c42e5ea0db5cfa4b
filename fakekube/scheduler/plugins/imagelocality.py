"""ImageLocality: prefer nodes that already hold the pod's container images, weighted by
size and by how widely each image has spread (so one node holding an image does not draw
every pod that uses it).

Upstream: ``pkg/scheduler/framework/plugins/imagelocality/image_locality.go`` (1.33):

* each init and regular container whose image the node has adds
  ``int(size × nodes_with_image / total_nodes)`` (float64, truncated);
* the sum is clamped to [23 MiB, 1000 MiB × number of containers] and mapped linearly to
  0…100 (integer division).

Names match as upstream's ``normalizedImageName``: only ``:latest`` is appended to a name
without tag or digest. No registry is added, so ``nginx`` matches a node's
``nginx:latest`` but not the ``docker.io/library/nginx:latest`` containerd reports (the
same gap kubernetes#112699 describes; pods that name images fully qualified match).

Upstream has no PreScore; ours counts, per cycle, the nodes holding each of the pod's
images (the cache's ImageStateSummary.NumNodes) and skips the plugin when no candidate node
holds any of them (every score would be 0).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping

from fakekube.scheduler.framework import MAX_NODE_SCORE, SKIP, CycleState, NodeInfo, Obj, PodInfo, Status

if TYPE_CHECKING:
    from fakekube.scheduler.runtime import Handle

NAME = "ImageLocality"
MIB = 1024 * 1024
#: Bounds of the summed image score: the 90th percentile of Docker Hub images fits in them.
MIN_THRESHOLD_BYTES = 23 * MIB
MAX_CONTAINER_THRESHOLD_BYTES = 1000 * MIB


class ImageLocality:
    name = NAME

    def __init__(self, handle: "Handle", args: Mapping[str, Any]) -> None:
        self.handle = handle

    def pre_score(self, state: CycleState, info: PodInfo, nodes: list[NodeInfo]) -> Status | None:
        images = pod_images(info)
        wanted = set(images)
        count = self._counter()
        if not any(count(name) for name in wanted):
            return SKIP  # no node anywhere holds one: no need to look at the candidates
        if not any(name in node.images for node in nodes for name in wanted):
            return SKIP
        total = len(self.handle.snapshot)
        spread = {name: count(name) / total for name in sorted(wanted)}
        state.data[NAME] = (images, spread)
        return None

    def score(self, state: CycleState, info: PodInfo, node: NodeInfo) -> int:
        if not node.images:
            return 0
        images, spread = state.data[NAME]
        summed = 0
        for name in images:
            size = node.images.get(name)
            if size is not None:
                summed += int(float(size) * spread[name])
        return calculate_priority(summed, len(images))

    def _counter(self) -> Callable[[str], int]:
        """How many nodes hold an image: the snapshot's count when it keeps one, else a scan."""
        counted = getattr(self.handle.snapshot, "image_num_nodes", None)
        if counted is not None:
            return counted
        infos = self.handle.snapshot.node_infos()
        return lambda name: sum(1 for node in infos if name in node.images)


def pod_images(info: PodInfo) -> list[str]:
    """The normalized image of every init and regular container, in spec order (repeats count)."""
    cached = info.data.get(NAME)
    if cached is None:
        spec: Obj = info.pod.get("spec") or {}
        containers = list(spec.get("initContainers") or []) + list(spec.get("containers") or [])
        cached = info.data[NAME] = [normalized_image_name(str(c.get("image") or "")) for c in containers]
    return cached


def normalized_image_name(name: str) -> str:
    """normalizedImageName: ``:latest`` appended when the last ``:`` is not after the last ``/``."""
    return name + ":latest" if name.rfind(":") <= name.rfind("/") else name


def calculate_priority(summed_bytes: int, containers: int) -> int:
    """calculatePriority: the clamped sum mapped linearly onto 0…100."""
    max_threshold = MAX_CONTAINER_THRESHOLD_BYTES * containers
    clamped = min(max(summed_bytes, MIN_THRESHOLD_BYTES), max_threshold)
    return MAX_NODE_SCORE * (clamped - MIN_THRESHOLD_BYTES) // (max_threshold - MIN_THRESHOLD_BYTES)
