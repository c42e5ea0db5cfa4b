"""Builders and a tiny read/write context for the volume plugins' unit tests.

The plugins read claims, volumes and classes through ``handle.ctx``; :class:`FakeContext`
answers ``get``/``list`` from a dict and records ``client.update`` writes (bumping the
resourceVersion as the apiserver would), so a test can drive PreFilter → Filter →
Reserve → PreBind by hand without an engine.
"""

from __future__ import annotations

import copy
from typing import Any

from fakekube.objects.kinds import PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, STORAGE_CLASSES, Resource
from fakekube.scheduler.cache import Cache, Snapshot
from fakekube.scheduler.config import Profile, SchedulerConfig
from fakekube.scheduler.framework import PodInfo
from fakekube.scheduler.runtime import Handle

Obj = dict[str, Any]
ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
_RESOURCE_OF = {"PersistentVolumeClaim": PERSISTENT_VOLUME_CLAIMS, "PersistentVolume": PERSISTENT_VOLUMES,
                "StorageClass": STORAGE_CLASSES}


class FakeClient:
    def __init__(self, ctx: "FakeContext") -> None:
        self.ctx = ctx
        self.writes: list[tuple[Resource, Obj]] = []

    def update(self, resource: Resource, obj: Obj) -> Obj:
        stored = copy.deepcopy(obj)
        self.ctx.rv += 1
        stored["metadata"]["resourceVersion"] = str(self.ctx.rv)
        self.ctx.put(resource, stored)
        self.writes.append((resource, stored))
        return stored


class FakeContext:
    def __init__(self, *objects: Obj) -> None:
        self.objects: dict[tuple[Resource, str, str], Obj] = {}
        self.rv = 100
        self.client = FakeClient(self)
        for obj in objects:
            self.add(obj)

    def add(self, obj: Obj) -> Obj:
        self.put(_RESOURCE_OF[obj["kind"]], obj)
        return obj

    def put(self, resource: Resource, obj: Obj) -> None:
        meta = obj["metadata"]
        self.objects[(resource, meta.get("namespace", ""), meta["name"])] = obj

    def get(self, resource: Resource, name: str, namespace: str = "") -> Obj | None:
        return self.objects.get((resource, namespace, name))

    def list(self, resource: Resource, namespace: str = "") -> list[Obj]:
        return [obj for (r, ns, _), obj in sorted(self.objects.items(), key=lambda kv: kv[0][1:])
                if r == resource and (not namespace or ns == namespace)]


def handle(ctx: FakeContext, cache: Cache | None = None) -> Handle:
    out = Handle(Snapshot(cache or Cache()), SchedulerConfig(), Profile())
    out.use(ctx)  # type: ignore[arg-type]
    return out


def node(name: str, zone: str | None = None, allocatable: dict[str, Any] | None = None, **labels: str) -> Obj:
    all_labels = {HOSTNAME: name, **labels}
    if zone is not None:
        all_labels[ZONE] = zone
    return {"metadata": {"name": name, "labels": all_labels}, "spec": {},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110", **(allocatable or {})}}}


def pod(name: str = "p", *volumes: Obj, namespace: str = "default", node_name: str = "") -> Obj:
    spec: Obj = {"containers": [{"name": "c", "image": "nginx"}], "volumes": list(volumes)}
    if node_name:
        spec["nodeName"] = node_name
    return {"metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"}, "spec": spec}


def claim_volume(claim: str, name: str | None = None) -> Obj:
    return {"name": name or claim, "persistentVolumeClaim": {"claimName": claim}}


def pvc(name: str, storage: str = "1Gi", class_name: str | None = None, modes: tuple[str, ...] = ("ReadWriteOnce",),
        volume_name: str = "", bound: bool = False, annotations: dict[str, str] | None = None,
        namespace: str = "default", **spec: Any) -> Obj:
    out: Obj = {"kind": "PersistentVolumeClaim", "apiVersion": "v1",
                "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}", "resourceVersion": "7"},
                "spec": {"accessModes": list(modes), "resources": {"requests": {"storage": storage}},
                         "volumeMode": "Filesystem", **spec},
                "status": {"phase": "Bound" if bound else "Pending"}}
    if class_name is not None:
        out["spec"]["storageClassName"] = class_name
    if volume_name:
        out["spec"]["volumeName"] = volume_name
    notes = dict(annotations or {})
    if bound:
        notes["pv.kubernetes.io/bind-completed"] = "yes"
    if notes:
        out["metadata"]["annotations"] = notes
    return out


def pv(name: str, storage: str = "1Gi", class_name: str = "", modes: tuple[str, ...] = ("ReadWriteOnce",),
       phase: str = "Available", labels: dict[str, str] | None = None, affinity: list[Obj] | None = None,
       **spec: Any) -> Obj:
    out: Obj = {"kind": "PersistentVolume", "apiVersion": "v1",
                "metadata": {"name": name, "resourceVersion": "5"},
                "spec": {"capacity": {"storage": storage}, "accessModes": list(modes), "volumeMode": "Filesystem",
                         "persistentVolumeReclaimPolicy": "Retain", **spec},
                "status": {"phase": phase}}
    if class_name:
        out["spec"]["storageClassName"] = class_name
    if labels:
        out["metadata"]["labels"] = labels
    if affinity is not None:
        out["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": affinity}}
    return out


def storage_class(name: str, mode: str = "WaitForFirstConsumer", provisioner: str = "example.com/csi",
                  allowed: list[Obj] | None = None) -> Obj:
    out: Obj = {"kind": "StorageClass", "apiVersion": "storage.k8s.io/v1", "metadata": {"name": name},
                "provisioner": provisioner, "reclaimPolicy": "Delete", "volumeBindingMode": mode}
    if allowed is not None:
        out["allowedTopologies"] = allowed
    return out


def in_zone(*zones: str) -> list[Obj]:
    """Node selector terms (PV nodeAffinity) for nodes in any of ``zones``."""
    return [{"matchExpressions": [{"key": ZONE, "operator": "In", "values": list(zones)}]}]


def placed(cache: Cache, node_name: str, obj: Obj) -> PodInfo:
    """Put ``obj`` on ``node_name`` in the cache (as a bound pod) and return its PodInfo."""
    info = PodInfo(obj)
    cache.add_pod(node_name, info)
    return info
