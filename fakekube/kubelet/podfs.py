"""The filesystems of the pods a kubelet runs: their stores, volume versions and pending writes.

:class:`Filesystems` is the pod runner's memory of files, all plain data (dicts, lists, bytes,
numbers; the API objects it keeps are the store's immutable ones), so a cluster snapshot can
copy it:

* ``stores`` — every store by id: ``root/<container id>`` (one per container *instance*: a
  restart starts again from the image; kubelet/rootfs.py), ``emptydir/<pod uid>/<volume>``
  (shared by the pod's containers, gone with the pod), ``hostpath/<node>`` (the node's disk:
  outlives pods), ``pv/<PersistentVolume>`` (outlives pods and claims' pods),
  ``vol/<pod uid>/<volume>`` (the kubelet's files of a ConfigMap, Secret, downward-API or
  projected volume; kubelet/volumes.py);
* ``pods`` — per pod: when it was admitted, its volumes' source versions and which version
  each generated volume shows — immutable (frozen dicts and tuples, replaced on every change,
  :func:`_with`), so a snapshot refers to each pod's state instead of copying its ten parts;
* ``effects`` — writes a container's program makes later in its run (kubelet/programs.py),
  applied when the clock reaches them (lazily: at the next exec, program start or sync that
  looks), dropped if the container stopped first.

Updates of mounted ConfigMaps and Secrets (and of the pod's labels and annotations in a
downward-API volume) reach the files at the pod's next periodic sync after the change:
upstream's kubelet syncs each pod every ``syncFrequency`` (1 minute) plus up to 50 % jitter
and, with the default ``Watch`` change detection, sees the object at once; fakekube syncs
every :data:`SYNC_PERIOD_S` from the pod's admission, without jitter. A subPath mount of such
a volume sees updates too (upstream's does not: a known difference).
"""

from __future__ import annotations

import heapq
import posixpath
from typing import Any, Callable, Mapping, NamedTuple, Sequence

from fakekube.kubelet import rootfs, volumes
from fakekube.store import FrozenDict, freeze
from fakekube.kubelet.fs import (
    DIR, LINK, FileSystem, Mount, Operation, Overlay, StoreMap, Stores, apply_operation, new_store, normalize,
    split, store_get)

Obj = dict[str, Any]
#: The kubelet's periodic pod sync (``syncFrequency``), without upstream's jitter.
SYNC_PERIOD_S = 60.0
#: A projected token is written again once this share of its lifetime has passed (upstream's token manager).
TOKEN_REFRESH_SHARE = 0.8
#: Pending program writes kept (past it the oldest are applied at once).
MAX_PENDING_EFFECTS = 100_000


class Sources(NamedTuple):
    """What building a container's view reads from the cluster (live, for one call)."""

    #: ``get(kind, namespace, name)`` for configmaps, secrets, persistentvolumeclaims.
    get: Callable[[str, str, str], Obj | None]
    #: ``token(pod, service_account, audience, expiration_s)``: a TokenRequest's token.
    token: Callable[[Obj, str, str, int], str]
    node: str = ""


def sync_after(admitted_s: float, moment_s: float) -> float:
    """The pod's first periodic sync strictly after ``moment_s``."""
    periods = (moment_s - admitted_s) // SYNC_PERIOD_S + 1
    return admitted_s + max(periods, 1) * SYNC_PERIOD_S


class Filesystems:
    """Every container filesystem of one pod runner (see the module docstring)."""

    def __init__(self) -> None:
        self.stores = Stores()
        self.pods: dict[str, dict[str, Any]] = {}
        self.watchers: dict[str, list[str]] = {}
        self.effects: list[tuple[float, int, str, Operation]] = []
        self.sequence = 0
        #: container id → [pod key, container name] for the effects still pending.
        self.owners: dict[str, list[str]] = {}

    # -- pods --------------------------------------------------------------------------------
    def admit(self, key: str, pod: Obj, now_s: float, sources: Sources) -> None:
        """Remember the pod's volume sources as they are now (its first sync)."""
        meta = pod.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        versions: dict[str, tuple[tuple[float, Obj | None], ...]] = {}
        for volume in (pod.get("spec") or {}).get("volumes") or []:
            for kind, name in volumes.sources(volume):
                source = f"{kind}/{namespace}/{name}"
                if source not in versions:
                    self.watchers.setdefault(source, []).append(key)  # first: a write from now on is seen
                    versions[source] = ((now_s, sources.get(kind, namespace, name)),)
        self.pods[key] = _frozen({"uid": meta.get("uid", ""), "admitted_s": now_s, "node": sources.node,
                                  "versions": _frozen(versions), "rendered": _EMPTY, "tokens": _EMPTY,
                                  "roots": _EMPTY, "meta": ((now_s, _metadata(pod)),)})

    def pack(self, key: str) -> None:
        """Pack the pod's container roots and generated volumes until they are used again
        (:meth:`~fakekube.kubelet.fs.Stores.pack`)."""
        state = self.pods.get(key)
        if state is not None:
            for container_id in state["roots"].values():
                self.stores.pack(f"root/{container_id}")
            for store_id in state["rendered"]:
                self.stores.pack(store_id)

    def watched(self, kind: str, namespace: str, name: str) -> bool:
        return f"{kind}/{namespace}/{name}" in self.watchers

    def source_changed(self, kind: str, namespace: str, name: str, obj: Obj | None, now_s: float) -> None:
        """A mounted ConfigMap or Secret changed: each pod shows it from its next sync (deleted:
        the files stay as they were, as the kubelet keeps them)."""
        if obj is None:
            return
        source = f"{kind}/{namespace}/{name}"
        for key in self.watchers.get(source, []):
            state = self.pods.get(key)
            if state is not None:
                version = (sync_after(state["admitted_s"], now_s), obj)
                self.pods[key] = _with(state, "versions", _with(state["versions"], source,
                                                                (*state["versions"][source], version)))

    def metadata_changed(self, key: str, pod: Obj, now_s: float) -> None:
        """Labels or annotations changed (what a downward-API volume shows at the next sync)."""
        state = self.pods.get(key)
        if state is None or state["meta"][-1][1] == _metadata(pod):
            return
        self.pods[key] = _with(state, "meta", (*state["meta"], (sync_after(state["admitted_s"], now_s), _metadata(pod))))

    def forget(self, key: str) -> None:
        """The pod is gone: its roots, emptyDirs and generated volumes go; hostPath and PV stay."""
        state = self.pods.pop(key, None)
        if state is None:
            return
        uid = state["uid"]
        for store_id in [s for s in self.stores if s.startswith((f"emptydir/{uid}/", f"vol/{uid}/"))]:
            del self.stores[store_id]
        for container_id in state["roots"].values():
            self.stores.pop(f"root/{container_id}", None)
        for source in state["versions"]:
            watchers = self.watchers.get(source, [])
            if key in watchers:
                watchers.remove(key)
            if not watchers:
                self.watchers.pop(source, None)
        gone = {cid for cid, owner in self.owners.items() if owner[0] == key}
        if gone:
            self.effects = [effect for effect in self.effects if effect[2] not in gone]
            heapq.heapify(self.effects)
            for cid in gone:
                del self.owners[cid]

    # -- views ---------------------------------------------------------------------------------
    def view(self, key: str, pod: Obj, container: Mapping[str, Any], container_id: str, now_s: float,
             sources: Sources, argv: list[str], overlay: bool = False) -> FileSystem:
        """The filesystem ``container`` (instance ``container_id``) sees at ``now_s``: written
        directly (an exec) or through an :class:`~fakekube.kubelet.fs.Overlay` (a program's run)."""
        state = self.pods.get(key)
        if state is None:
            self.admit(key, pod, now_s, sources)
            state = self.pods[key]
        mounts = self._mounts(key, pod, container, now_s, sources)
        state = self.pods[key]  # rendering a volume replaced it
        root_id = f"root/{container_id}"
        if root_id not in self.stores:
            name = str(container.get("name") or "")
            previous = state["roots"].get(name)
            if previous is not None:
                self.stores.pop(f"root/{previous}", None)
            state = self.pods[key] = _with(state, "roots", _with(state["roots"], name, container_id))
            self.stores[root_id] = rootfs.root_store(pod, container, argv, [m.path for m in mounts],
                                                     sources.node or state["node"])
        root = self.stores[root_id]
        mounts = [mount._replace(path=rootfs.canonical(root, mount.path)) for mount in mounts]
        access: StoreMap | Overlay = Overlay(self.stores) if overlay else self.stores
        working_dir = str(container.get("workingDir") or "/")
        return FileSystem(access, (Mount("/", root_id),) + tuple(mounts), now_s, working_dir)

    def _mounts(self, key: str, pod: Obj, container: Mapping[str, Any], now_s: float,
                sources: Sources) -> list[Mount]:
        volumes_by_name = {v.get("name"): v for v in (pod.get("spec") or {}).get("volumes") or []}
        mounts: list[Mount] = []
        for mount in container.get("volumeMounts") or []:
            volume = volumes_by_name.get(mount.get("name"))
            path = normalize(str(mount.get("mountPath") or "/"))
            if volume is None or path == "/":
                continue
            store_id, base, read_only = self._volume_store(key, pod, volume, now_s, sources)
            sub_path = str(mount.get("subPath") or "")
            if sub_path:
                sub_path = self._store_path(store_id, posixpath.join(base, sub_path), create=not read_only)
            mounts.append(Mount(path, store_id, sub_path or base, read_only or bool(mount.get("readOnly"))))
        return mounts

    def _volume_store(self, key: str, pod: Obj, volume: Mapping[str, Any], now_s: float,
                      sources: Sources) -> tuple[str, str, bool]:
        """(store id, directory within it, read-only) for one volume, made ready for ``now_s``."""
        state = self.pods[key]
        uid, name = state["uid"], str(volume.get("name") or "")
        if "hostPath" in volume:
            store_id = f"hostpath/{state['node'] or sources.node}"
            path = normalize(str((volume["hostPath"] or {}).get("path") or "/"))
            self.stores.setdefault(store_id, new_store())
            kind = (volume["hostPath"] or {}).get("type") or ""
            self._store_path(store_id, path, create=kind in ("", "DirectoryOrCreate", "Directory"))
            return store_id, path, False
        if "persistentVolumeClaim" in volume:
            claim = str((volume["persistentVolumeClaim"] or {}).get("claimName") or "")
            namespace = (pod.get("metadata") or {}).get("namespace") or "default"
            pvc = sources.get("persistentvolumeclaims", namespace, claim)
            bound = ((pvc or {}).get("spec") or {}).get("volumeName")
            store_id = f"pv/{bound}" if bound else f"pvc/{namespace}/{claim}"
            self.stores.setdefault(store_id, new_store())
            read_only = bool((volume["persistentVolumeClaim"] or {}).get("readOnly"))
            return store_id, "/", read_only
        store_id = f"{'vol' if volumes.generated(volume) else 'emptydir'}/{uid}/{name}"
        self.stores.setdefault(store_id, new_store())
        if volumes.generated(volume):
            self._render(key, pod, volume, store_id, now_s, sources)
            return store_id, "/", True
        return store_id, "/", False

    def _store_path(self, store_id: str, path: str, create: bool) -> str:
        """``path`` inside a store with the store's own relative links followed (a subPath
        through ``..data``); its directories made when ``create``."""
        store = self.stores[store_id]
        done: list[str] = []
        pending = split(path)
        for _ in range(64):
            if not pending:
                break
            name = pending.pop(0)
            entry = store_get(store, done + [name])
            if entry is not None and entry[0] == LINK and not entry[3].startswith("/"):
                pending = split(entry[3]) + pending
                continue
            if entry is None and create and pending:
                parent = store_get(store, done)
                if parent is not None and parent[0] == DIR:
                    parent[3][name] = [DIR, 0o755, 0.0, {}]
            elif entry is None and create and not pending:
                parent = store_get(store, done)
                if parent is not None and parent[0] == DIR:
                    parent[3][name] = [DIR, 0o755, 0.0, {}]
            done.append(name)
        return "/" + "/".join(done)

    def _render(self, key: str, pod: Obj, volume: Mapping[str, Any], store_id: str, now_s: float,
                sources: Sources) -> None:
        """Write the volume's files as of the pod's last sync, if that differs from what it shows."""
        state = self.pods[key]
        namespace = (pod.get("metadata") or {}).get("namespace") or "default"
        chosen: dict[str, Obj | None] = {}
        written_s = state["admitted_s"]
        version: list[Any] = []
        kept = dict(state["versions"])
        for kind, name in volumes.sources(volume):
            source = f"{kind}/{namespace}/{name}"
            history = _as_of(kept.get(source) or ((written_s, None),), now_s)
            if source in kept:
                kept[source] = history
            effective_s, obj = history[0]
            chosen[f"{kind}/{name}"] = obj
            written_s = max(written_s, effective_s)
            version.append(effective_s)
        metas = _as_of(state["meta"], now_s)
        meta_s, meta = metas[0]
        if _uses_metadata(volume):
            written_s = max(written_s, meta_s)
            version.append(meta_s)
        volume_name = str(volume.get("name"))
        tokens = dict(state["tokens"].get(volume_name) or _NO_TOKENS)
        tokens["values"] = dict(tokens["values"])
        if tokens["issued_s"] is not None:
            due_s = sync_after(state["admitted_s"], tokens["issued_s"] + TOKEN_REFRESH_SHARE * tokens["expiration_s"])
            if now_s >= due_s:
                tokens["epoch"], tokens["values"], tokens["issued_s"] = tokens["epoch"] + 1, {}, due_s
                written_s = max(written_s, due_s)
        version.append(tokens["epoch"])
        state = self.pods[key] = _frozen({**state, "versions": _frozen(kept), "meta": metas, "tokens": _with(
            state["tokens"], volume_name, _frozen(tokens, values=_frozen(tokens["values"])))})
        if tuple(state["rendered"].get(store_id) or ()) == tuple(version):
            return
        as_of = dict(pod, metadata=dict(pod.get("metadata") or {}, **meta))

        def token(path: str, audience: str, expiration_s: int) -> str:
            if path not in tokens["values"]:
                service_account = str((pod.get("spec") or {}).get("serviceAccountName") or "default")
                tokens["values"][path] = sources.token(pod, service_account, audience, expiration_s)
                tokens["expiration_s"] = expiration_s
                if tokens["issued_s"] is None:
                    tokens["issued_s"] = written_s
            return str(tokens["values"][path])

        resources = {c.get("name"): c.get("resources") or {} for c in (pod.get("spec") or {}).get("containers") or []}
        try:
            files = volumes.payload(volume, as_of, lambda kind, name: chosen.get(f"{kind}/{name}"), token,
                                    lambda container: resources.get(container) or {})
        except volumes.MissingSource:
            files = {}
        volumes.write_atomically(self.stores[store_id], files, written_s, f"{state['uid']}/{volume.get('name')}/"
                                 f"{written_s}/{tokens['epoch']}")
        self.pods[key] = _frozen({**state, "rendered": _with(state["rendered"], store_id, tuple(version)),
                                  "tokens": _with(state["tokens"], volume_name,
                                                  _frozen(tokens, values=_frozen(tokens["values"])))})

    # -- program writes --------------------------------------------------------------------------
    def push(self, key: str, container: str, container_id: str, start_s: float,
             operations: list[tuple[float, Operation]]) -> None:
        """A program's writes, each due ``start_s`` + its clock."""
        if not operations:
            return
        self.owners[container_id] = [key, container]
        for elapsed_s, operation in operations:
            self.sequence += 1
            heapq.heappush(self.effects, (start_s + elapsed_s, self.sequence, container_id, operation))
        while len(self.effects) > MAX_PENDING_EFFECTS:
            _, _, _, operation = heapq.heappop(self.effects)
            apply_operation(self.stores, operation)

    def flush(self, now_s: float, ended: Callable[[str], float | None]) -> None:
        """Apply the writes due by ``now_s`` whose container was still running when they were due."""
        while self.effects and self.effects[0][0] <= now_s:
            due_s, _, container_id, operation = heapq.heappop(self.effects)
            end_s = ended(container_id)
            if end_s is None or due_s <= end_s:
                apply_operation(self.stores, operation)
        live = {effect[2] for effect in self.effects}
        for container_id in [cid for cid in self.owners if cid not in live]:
            del self.owners[container_id]


def _as_of(versions: Sequence[tuple[float, Any]], now_s: float) -> tuple[tuple[float, Any], ...]:
    """The versions from the one in force at ``now_s`` on (the first one before any took
    effect): the older ones are dropped."""
    chosen = 0
    for index, (effective_s, _) in enumerate(versions):
        if effective_s <= now_s:
            chosen = index
    first_s, first = versions[chosen]
    return ((float(first_s), first), *versions[chosen + 1:])


def _frozen(items: Mapping[str, Any], **changes: Any) -> dict[str, Any]:
    """A frozen dict of ``items`` with ``changes``: never edited, so snapshots share it."""
    out = FrozenDict(items, **changes)
    out._origin = None
    return out


def _with(mapping: Mapping[str, Any], key: str, value: Any) -> dict[str, Any]:
    """A frozen copy of ``mapping`` with ``key`` set to ``value``."""
    return _frozen({**mapping, key: value})


#: The empty parts of a new pod's state, and a volume's tokens before any is issued.
_EMPTY = _frozen({})
_NO_TOKENS = _frozen({"epoch": 0, "issued_s": None, "expiration_s": 0, "values": _EMPTY})


def _metadata(pod: Obj) -> dict[str, Any]:
    """The pod's labels and annotations, frozen: kept as they were at a time and never
    edited, so a snapshot shares them rather than copying."""
    meta = pod.get("metadata") or {}
    frozen: dict[str, Any] = freeze({"labels": meta.get("labels") or {}, "annotations": meta.get("annotations") or {}})
    return frozen


def _uses_metadata(volume: Mapping[str, Any]) -> bool:
    if "downwardAPI" in volume:
        return True
    return any("downwardAPI" in source for source in (volume.get("projected") or {}).get("sources") or [])
