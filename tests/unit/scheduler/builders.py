"""Nodes, pods and infos for scheduler plugin unit tests (no cluster, no engine)."""

from __future__ import annotations

from typing import Any

from fakekube.scheduler.cache import Cache, Snapshot
from fakekube.scheduler.config import Profile, SchedulerConfig
from fakekube.scheduler.framework import NodeInfo, PodInfo
from fakekube.scheduler.runtime import Handle

Obj = dict[str, Any]
GI = 1024 ** 3
MI = 1024 ** 2


def node(name: str = "node-1", pods: int = 110, labels: dict[str, str] | None = None,
         images: list[Obj] | None = None, scalar: dict[str, str] | None = None, **allocatable: Any) -> Obj:
    """A Node with ``allocatable`` (cpu "4", memory "8Gi" by default; pods ``pods``) and
    ``scalar`` resources by full name."""
    values = {"cpu": "4", "memory": "8Gi", "pods": str(pods)}
    values.update({key.replace("_", "-"): value for key, value in allocatable.items()})
    values.update(scalar or {})
    status: Obj = {"allocatable": values, "capacity": dict(values)}
    if images is not None:
        status["images"] = images
    return {"metadata": {"name": name, "labels": labels or {}}, "spec": {}, "status": status}


def container(name: str = "c", image: str = "nginx:1.27", ports: list[Obj] | None = None,
              scalar: dict[str, str] | None = None, **requests: Any) -> Obj:
    """A container requesting ``requests`` (``cpu="1"``, ``memory="1Gi"``, ``ephemeral_storage=…``)
    and ``scalar`` resources by full name."""
    out: Obj = {"name": name, "image": image}
    wanted = {key.replace("_", "-"): value for key, value in requests.items()}
    wanted.update(scalar or {})
    if wanted:
        out["resources"] = {"requests": wanted}
    if ports is not None:
        out["ports"] = ports
    return out


def pod(name: str = "p", node_name: str = "", containers: list[Obj] | None = None, uid: str = "",
        init: list[Obj] | None = None, scalar: dict[str, str] | None = None, **requests: Any) -> Obj:
    """A pod with one container requesting ``requests`` and ``scalar`` resources by full
    name (or the given ``containers``)."""
    spec: Obj = {"containers": containers if containers is not None else [container(scalar=scalar, **requests)]}
    if node_name:
        spec["nodeName"] = node_name
    if init:
        spec["initContainers"] = init
    return {"metadata": {"name": name, "namespace": "default", "uid": uid or f"uid-{name}"}, "spec": spec}


def node_info(node_obj: Obj, *pods: Obj) -> NodeInfo:
    """The NodeInfo of ``node_obj`` with ``pods`` already placed on it."""
    info = NodeInfo(node_obj)
    for placed in pods:
        info.add_pod(PodInfo(placed))
    return info


def handle(*node_infos: tuple[Obj, list[Obj]]) -> Handle:
    """A Handle over a cache holding each (node, pods on it)."""
    cache = Cache()
    for node_obj, pods in node_infos:
        cache.set_node(node_obj)
        for placed in pods:
            cache.add_pod(node_obj["metadata"]["name"], PodInfo(placed))
    return Handle(Snapshot(cache), SchedulerConfig(), Profile())
