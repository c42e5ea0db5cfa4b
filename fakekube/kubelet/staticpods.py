"""Static pods and their mirror pods, as upstream's kubelet keeps them.

A static pod comes from the kubelet's own config (a manifest file, here also the cluster
config), not from the apiserver. Upstream (pkg/kubelet/config/common.go applyDefaults,
pkg/kubelet/config/file.go, pkg/kubelet/pod/mirror_client.go, the static-pod branch of
Kubelet.SyncPod):

* the kubelet names it ``<name>-<node name in lower case>``, defaults the namespace to
  ``default``, sets ``spec.nodeName``, adds a ``{operator: Exists, effect: NoExecute}``
  toleration (a node problem never evicts it) and annotates it with
  ``kubernetes.io/config.hash`` (its UID: an md5 over the manifest, the host and the
  source), ``kubernetes.io/config.source: file`` and ``kubernetes.io/config.seen`` (when
  the kubelet first saw it);
* it runs the pod itself and creates a *mirror pod* in the API so others can see it: the
  same pod plus ``kubernetes.io/config.mirror`` (the hash) and an ownerReference to its
  Node (``controller: true``);
* a mirror pod that is deleted, or that no longer matches the static pod, is deleted
  (grace 0) and created again at the kubelet's next sync; the static pod keeps running
  throughout. The kubelet does not create mirror pods while its Node is gone or being
  deleted, and a kubelet that is down does nothing at all.

Here the mirror pod is what the :class:`~fakekube.kubelet.pods.PodRunner` runs, like any
bound pod, and the runner knows a static pod by its config hash rather than by the
mirror pod's uid (:func:`pod_identity`), so a recreated mirror pod shows the same running
containers. This controller is registered before the runner, so at one instant it
replaces a deleted mirror pod before the runner looks at it.

Manifest directories are read once, when the cluster is built: ``*.yaml``, ``*.yml`` and
``*.json`` files whose names do not start with ``.``, in name order, one pod each.

Memory bound: the manifests as configured, plus one first-seen time per node (dropped
with the node).
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Sequence


from fakekube.api.machinery.errors import ApiError
from fakekube.api.machinery.jsonutil import deep_copy
from fakekube.engine import Client, Context
from fakekube.objects.kinds import NODES, PODS
from fakekube.store import ADDED, DELETED, Change

Obj = dict[str, Any]

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
HASH_ANNOTATION = "kubernetes.io/config.hash"
SEEN_ANNOTATION = "kubernetes.io/config.seen"
SOURCE_ANNOTATION = "kubernetes.io/config.source"
#: Upstream's kubetypes.FileSource: the source of every static pod here.
FILE_SOURCE = "file"
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
#: The toleration upstream's kubelet gives every file-sourced pod.
TOLERATE_NO_EXECUTE = {"operator": "Exists", "effect": "NoExecute"}
#: The owner uid used to check a manifest when no node exists yet.
PLACEHOLDER_UID = "00000000-0000-0000-0000-000000000000"


class StaticPodManifest(NamedTuple):
    """One static pod as configured, and which kubelets run it."""

    pod: Obj
    #: Where it came from (a file name, or its place in the cluster config): part of the hash.
    source: str
    #: The one node whose kubelet runs it; None: every node's.
    node: str | None = None
    #: Where it is configured, for error messages.
    where: str = ""

    def runs_on(self, node: str) -> bool:
        return self.node is None or self.node == node


# -- manifests ------------------------------------------------------------------------------

def check_manifest(data: Any, where: str) -> Obj:
    """The shape a kubelet needs to read a pod manifest; ValueError names ``where``.

    The full pod validation happens when the cluster is built (:meth:`StaticPodController.check`).
    """
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: a static pod manifest must be a mapping (a Pod), got {_kind_of(data)}")
    if data.get("apiVersion", "v1") != "v1" or data.get("kind", "Pod") != "Pod":
        raise ValueError(f"{where}: a static pod manifest must be apiVersion v1, kind Pod; "
                         f"got {data.get('apiVersion')!r}, {data.get('kind')!r}")
    metadata = data.get("metadata")
    if not isinstance(metadata, Mapping) or not isinstance(metadata.get("name"), str) or not metadata["name"]:
        raise ValueError(f"{where}.metadata.name: a static pod needs a name")
    spec = data.get("spec")
    if not isinstance(spec, Mapping) or not isinstance(spec.get("containers"), list) or not spec["containers"]:
        raise ValueError(f"{where}.spec.containers: a static pod needs at least one container")
    return deep_copy(dict(data))


def load_manifest_dir(directory: str | Path) -> list[StaticPodManifest]:
    """Every manifest in ``directory`` (see the module docstring), for every node."""
    root = Path(directory)
    if not root.is_dir():
        raise ValueError(f"staticPodPath: {str(directory)!r} is not a directory")
    import yaml  # PyYAML loads on first use, not with the package (cold start)
    manifests = []
    for path in sorted(root.iterdir(), key=lambda p: p.name):
        if path.name.startswith(".") or path.suffix not in MANIFEST_SUFFIXES or not path.is_file():
            continue
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
            raise ValueError(f"staticPodPath: {path.name}: cannot read it: {_one_line(error)}") from None
        where = f"staticPodPath: {path.name}"
        manifests.append(StaticPodManifest(check_manifest(data, where), path.name, where=where))
    return manifests


def build_manifests(shared: Sequence[Obj], per_node: Iterable[tuple[str, Sequence[Obj]]],
                    directory: str | None) -> tuple[StaticPodManifest, ...]:
    """All static pods of a cluster: those for every node, each node's own, then the directory's."""
    manifests = [StaticPodManifest(check_manifest(pod, f"staticPods[{i}]"), f"staticPods[{i}]",
                                   where=f"staticPods[{i}]") for i, pod in enumerate(shared)]
    for node, pods in per_node:
        manifests += [StaticPodManifest(check_manifest(pod, f"node {node}: staticPods[{i}]"), f"{node}/staticPods[{i}]",
                                        node, where=f"node {node}: staticPods[{i}]") for i, pod in enumerate(pods)]
    if directory:
        manifests += load_manifest_dir(directory)
    return tuple(manifests)


# -- the kubelet's view: static pod and mirror pod ----------------------------------------------

def config_hash(manifest: StaticPodManifest, node: str) -> str:
    """The static pod's UID: md5 over the manifest, then ``host:<node>`` and ``file:<source>``."""
    hasher = hashlib.md5(usedforsecurity=False)
    hasher.update(json.dumps(manifest.pod, sort_keys=True, separators=(",", ":")).encode())
    hasher.update(f"host:{node}".encode())
    hasher.update(f"file:{manifest.source}".encode())
    return hasher.hexdigest()


def static_pod(manifest: StaticPodManifest, node: str, seen: datetime) -> Obj:
    """The pod as the kubelet holds it after applyDefaults (no status, no uid: the API assigns those)."""
    pod = deep_copy(manifest.pod)
    pod.pop("status", None)
    meta = pod.setdefault("metadata", {})
    meta.pop("uid", None)
    meta["name"] = f"{meta['name']}-{node.lower()}"
    meta["namespace"] = meta.get("namespace") or "default"
    annotations = dict(meta.get("annotations") or {})
    annotations.update({HASH_ANNOTATION: config_hash(manifest, node), SEEN_ANNOTATION: format_rfc3339_nano(seen),
                        SOURCE_ANNOTATION: FILE_SOURCE})
    meta["annotations"] = annotations
    spec = pod.setdefault("spec", {})
    spec["nodeName"] = node
    tolerations = list(spec.get("tolerations") or [])
    if TOLERATE_NO_EXECUTE not in tolerations:
        tolerations.append(dict(TOLERATE_NO_EXECUTE))
    spec["tolerations"] = tolerations
    return {"apiVersion": "v1", "kind": "Pod", **pod}


def mirror_pod(pod: Obj, node: Obj) -> Obj:
    """What the kubelet's mirror client creates: the static pod, its hash as the mirror
    annotation, owned by the Node."""
    mirror = deep_copy(pod)
    meta = mirror["metadata"]
    meta["annotations"][MIRROR_ANNOTATION] = meta["annotations"][HASH_ANNOTATION]
    meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Node", "name": node["metadata"]["name"],
                                "uid": node["metadata"].get("uid", ""), "controller": True}]
    return mirror


def is_mirror_pod(pod: Obj | None) -> bool:
    return MIRROR_ANNOTATION in (((pod or {}).get("metadata") or {}).get("annotations") or {})


def pod_identity(pod: Obj) -> str:
    """Who runs this pod on its node: a mirror pod stands for its static pod (the config
    hash, the same across recreated mirror pods); any other pod is its uid."""
    meta = pod.get("metadata") or {}
    return str((meta.get("annotations") or {}).get(MIRROR_ANNOTATION) or meta.get("uid") or "")


def format_rfc3339_nano(moment: datetime) -> str:
    """Go's time.RFC3339Nano in UTC: fractional seconds only when there are some, no trailing zeros."""
    moment = moment.astimezone(timezone.utc)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if moment.microsecond:
        text += "." + f"{moment.microsecond:06d}".rstrip("0")
    return text + "Z"


# -- the controller ---------------------------------------------------------------------------

class StaticPodController:
    """Keeps each simulated kubelet's mirror pods in the API (see the module docstring)."""

    name = "kubelet-static-pods"
    resources = (NODES, PODS)
    #: Only a node added or deleted gives a key, never a heartbeat (engine/routing.py).
    keyless_heartbeats = True

    def __init__(self, manifests: Sequence[StaticPodManifest] = (),
                 node_is_up: Callable[[str], bool] = lambda node: True) -> None:
        self.manifests = tuple(manifests)
        self._node_is_up = node_is_up
        self._seen: dict[str, datetime] = {}

    def keys_for(self, change: Change) -> Iterable[str]:
        """A new node's kubelet starts (a deleted one is forgotten); a mirror pod deleted or
        being deleted gets replaced."""
        if not self.manifests:
            return []
        if (change.group, change.resource) == NODES:
            return [change.name] if change.type in (ADDED, DELETED) else []
        if not is_mirror_pod(change.obj):
            return []
        if change.type == DELETED or (change.obj.get("metadata") or {}).get("deletionTimestamp"):
            node = (change.obj.get("spec") or {}).get("nodeName")
            return [node] if node else []
        return []

    def reconcile(self, key: str, ctx: Context) -> None:
        """Sync node ``key``'s mirror pods (the cluster enqueues it when the kubelet comes back)."""
        node = ctx.get(NODES, key)
        if node is None:
            self._seen.pop(key, None)
            return
        if node["metadata"].get("deletionTimestamp") or not self._node_is_up(key):
            return  # no Node to own mirror pods, or no kubelet running to make them
        seen = self._seen.setdefault(key, ctx.now)
        taken: set[tuple[str, str]] = set()
        for manifest in self.manifests:
            if manifest.runs_on(key):
                pod = static_pod(manifest, key, seen)
                place = (pod["metadata"]["namespace"], pod["metadata"]["name"])
                if place not in taken:  # upstream drops a second pod of the same full name
                    taken.add(place)
                    self._sync_mirror(pod, node, ctx)

    def _sync_mirror(self, pod: Obj, node: Obj, ctx: Context) -> None:
        meta = pod["metadata"]
        current = ctx.get(PODS, meta["name"], meta["namespace"])
        if current is not None and not is_mirror_pod(current):
            return  # an ordinary pod holds the name: upstream's create fails with AlreadyExists
        if current is not None and (current["metadata"].get("deletionTimestamp")
                                    or current["metadata"]["annotations"][MIRROR_ANNOTATION]
                                    != meta["annotations"][HASH_ANNOTATION]):
            _delete_now(ctx, current)
            current = None
        if current is None:
            ctx.client.create(PODS, mirror_pod(pod, node))

    # -- checked once, when the cluster is built ------------------------------------------
    def check(self, client: Client, nodes: Mapping[str, Obj], now: datetime) -> None:
        """Validate every manifest as the apiserver will (a dry-run create of its mirror pod
        for the first node that runs it; ``nodes`` by name, in order); ValueError names the
        manifest and the API's reason."""
        for manifest in self.manifests:
            node = manifest.node or next(iter(nodes), "node")
            pod = static_pod(manifest, node, now)
            owner = nodes.get(node) or {"metadata": {"name": node, "uid": PLACEHOLDER_UID}}
            try:
                client.create(PODS, mirror_pod(pod, owner), dry_run=True)
            except ApiError as error:
                raise ValueError(f"{manifest.where or manifest.source}: {error.message}") from None


def _delete_now(ctx: Context, pod: Obj) -> None:
    """The mirror client's delete: grace 0, only this very pod (uid precondition)."""
    meta = pod["metadata"]
    try:
        ctx.client.delete(PODS, meta["name"], meta["namespace"], grace_period_s=0, uid=meta.get("uid"))
    except ApiError as error:
        if error.code not in (404, 409):
            raise


def _kind_of(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())
