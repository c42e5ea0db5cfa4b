"""The images each simulated node holds, as its kubelet reports them in ``status.images``.

Upstream: the kubelet's ``nodestatus.Images`` setter over the image manager's list — the
largest images first, at most ``nodeStatusMaxImages`` (50) of them, each with its names
(repo digests, then repo tags, at most 5). With containerd, as here, the names are fully
qualified: ``docker.io/library/nginx@sha256:…`` and ``docker.io/library/nginx:latest``.

A node holds every image its ``status.images`` listed when its kubelet looked (images
"already on disk": a test may write them) and every image one of its containers pulled;
sizes are :func:`~fakekube.kubelet.events.image_size_bytes` (the size the ``Pulled`` event
states). Nothing is ever garbage-collected. A node holding nothing leaves ``status.images``
as it is. Pure bookkeeping: no clock, no store.
"""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple

from fakekube.kubelet.behaviour import normalize_image
from fakekube.kubelet.containers import image_id
from fakekube.kubelet.events import image_size_bytes

Obj = dict[str, Any]

#: KubeletConfiguration.nodeStatusMaxImages' default.
NODE_STATUS_MAX_IMAGES = 50
#: nodestatus.MaxNamesPerImageInNodeStatus.
MAX_NAMES_PER_IMAGE = 5


class HeldImage(NamedTuple):
    """One image on a node: its names (digests first) and size."""

    names: tuple[str, ...]
    size_bytes: int

    def reported(self) -> Obj:
        return {"names": list(self.names[:MAX_NAMES_PER_IMAGE]), "sizeBytes": self.size_bytes}


class NodeImages:
    """Per node: the images held (by their tag name) and the ``status.images`` they make."""

    def __init__(self, max_images: int = NODE_STATUS_MAX_IMAGES) -> None:
        self.max_images = max_images
        self._held: dict[str, dict[str, HeldImage]] = {}
        self._reported: dict[str, list[Obj]] = {}

    def adopt(self, node: Mapping[str, Any]) -> None:
        """Hold every image the node object lists that the node does not hold yet."""
        listed = (node.get("status") or {}).get("images") or []
        if not listed:
            return
        name = node["metadata"]["name"]
        held = self._held.setdefault(name, {})
        for image in listed:
            names = tuple(str(n) for n in image.get("names") or [])
            if names and _key(names) not in held:
                held[_key(names)] = HeldImage(names, int(image.get("sizeBytes") or 0))
                self._reported.pop(name, None)

    def pulled(self, node: str, image: str) -> bool:
        """A container on ``node`` pulled ``image``; True when the node did not hold it yet."""
        normalized = normalize_image(image)
        held = self._held.setdefault(node, {})
        if not normalized or normalized in held:
            return False
        held[normalized] = HeldImage((image_id(normalized), normalized), image_size_bytes(image))
        self._reported.pop(node, None)
        return True

    def holds(self, node: str, image: str) -> bool:
        """Does ``node`` hold ``image`` (pulled there, or listed in its status as on disk)?"""
        held = self._held.get(node)
        if not held:
            return False
        normalized = normalize_image(image)
        return normalized in held or any(normalized in entry.names or image in entry.names
                                          for entry in held.values())

    def reported(self, node: str) -> list[Obj] | None:
        """``status.images`` as the node's kubelet writes it; None when it holds nothing."""
        held = self._held.get(node)
        if not held:
            return None
        cached = self._reported.get(node)
        if cached is None:
            largest = sorted(held.items(), key=lambda item: (-item[1].size_bytes, item[0]))[:self.max_images]
            cached = self._reported[node] = [image.reported() for _, image in largest]
        return cached

    def forget(self, node: str) -> None:
        self._held.pop(node, None)
        self._reported.pop(node, None)


def _key(names: tuple[str, ...]) -> str:
    """An image's identity: its first tag name (its first name when it has no tag)."""
    return next((n for n in names if "@" not in n), names[0])
