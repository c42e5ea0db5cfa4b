"""The local-path provisioner kind runs (rancher/local-path-provisioner's ``provisioner.go``
over sig-storage-lib-external-provisioner's controller), simulated in-process.

It is an external provisioner, not part of kube-controller-manager: it acts only while a
pod of its Deployment (``local-path-storage/local-path-provisioner``, label
``app=local-path-provisioner``) is Running, so a cluster without kind's system pods — or
one whose provisioner pod is down — provisions nothing, as a cluster without it would.

* A claim the PV controller handed to ``rancher.io/local-path`` (the
  ``volume.kubernetes.io/storage-provisioner`` annotation), of a class with that
  provisioner and with ``volume.kubernetes.io/selected-node`` set, gets the Normal event
  ``Provisioning``; :data:`HELPER_POD_S` later the PV ``pvc-<claim uid>`` is created — a
  ``hostPath`` (DirectoryOrCreate) under ``/var/local-path-provisioner`` pinned to the node,
  the claim's request and access modes, the class's reclaim policy and mount options,
  ``claimRef`` to the claim — with ``ProvisioningSucceeded``. The PV controller binds it.
  Without a selected node (an Immediate class) it fails as local-path does.
* A Released PV it provisioned whose policy is Delete is deleted :data:`HELPER_POD_S` later.

Events come from ``rancher.io/local-path_<provisioner pod>_<uuid>``, the library's identity.

Work keys: ``claim:<namespace>/<name>``, ``volume:<name>``, and ``resync`` when the
provisioner's pod changes (everything pending is looked at again).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Iterable, Mapping

from fakekube.api.machinery.errors import ApiError
from fakekube.controllers.volume.binder import CLAIM_PREFIX, RESYNC, VOLUME_PREFIX, enqueue_every_claim_and_volume
from fakekube.engine import Context
from fakekube.objects.constants import LABEL_HOSTNAME
from fakekube.objects.kinds import PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, PODS, STORAGE_CLASSES
from fakekube.objects.syntax import go_quote
from fakekube.objects.volumes import (
    ANN_BETA_STORAGE_PROVISIONER, ANN_DYNAMICALLY_PROVISIONED, ANN_SELECTED_NODE, ANN_STORAGE_PROVISIONER,
    RECLAIM_DELETE, VOLUME_RELEASED, claim_class, claim_reference,
)
from fakekube.store import DELETED, Change

Obj = dict[str, Any]

PROVISIONER = "rancher.io/local-path"
NAMESPACE = "local-path-storage"
APP_LABEL = ("app", "local-path-provisioner")
#: The ``DEFAULT_PATH_FOR_NON_LISTED_NODES`` path of kind's ``local-path-config``.
BASE_PATH = "/var/local-path-provisioner"
ANN_NODE_NAME = "local.path.provisioner/selected-node"
#: How long creating or removing a volume's directory takes: local-path runs a helper pod
#: on the node (``helper-pod-create-…``/``helper-pod-delete-…``) and polls it once a
#: second until it has Succeeded — its container starts about a second after creation,
#: and the second poll sees it done.
HELPER_POD_S = 2.0


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _annotations(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return _meta(obj).get("annotations") or {}


def _asked_of_us(pvc: Mapping[str, Any]) -> bool:
    annotations = _annotations(pvc)
    return PROVISIONER in (annotations.get(ANN_STORAGE_PROVISIONER), annotations.get(ANN_BETA_STORAGE_PROVISIONER))


def _ours_to_delete(pv: Mapping[str, Any]) -> bool:
    """shouldDelete: Released, policy Delete, provisioned by us, not already being deleted."""
    return (_annotations(pv).get(ANN_DYNAMICALLY_PROVISIONED) == PROVISIONER
            and (pv.get("status") or {}).get("phase") == VOLUME_RELEASED
            and (pv.get("spec") or {}).get("persistentVolumeReclaimPolicy") == RECLAIM_DELETE
            and not _meta(pv).get("deletionTimestamp"))


def _is_provisioner_pod(change: Change) -> bool:
    if (change.group, change.resource) != (PODS.group, PODS.plural) or change.namespace != NAMESPACE:
        return False
    key, value = APP_LABEL
    return any((_meta(obj or {}).get("labels") or {}).get(key) == value for obj in (change.obj, change.prev))


def volume_name(pvc: Mapping[str, Any]) -> str:
    """The lib's volume name: ``pvc-<claim uid>``."""
    return f"pvc-{_meta(pvc).get('uid', '')}"


def provisioned_volume(pvc: Mapping[str, Any], storage_class: Mapping[str, Any], node: str) -> Obj:
    """The PV local-path returns for ``pvc`` on ``node``, as the library completes it."""
    meta, spec = _meta(pvc), pvc.get("spec") or {}
    name = volume_name(pvc)
    pv_spec: Obj = {
        "accessModes": list(spec.get("accessModes") or []),
        "capacity": {"storage": ((spec.get("resources") or {}).get("requests") or {}).get("storage")},
        "claimRef": claim_reference(pvc),
        "hostPath": {"path": f"{BASE_PATH}/{name}_{meta.get('namespace', '')}_{meta.get('name', '')}",
                     "type": "DirectoryOrCreate"},
        "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": LABEL_HOSTNAME, "operator": "In", "values": [node]}]}]}},
        "persistentVolumeReclaimPolicy": storage_class.get("reclaimPolicy") or RECLAIM_DELETE,
        "storageClassName": _meta(storage_class)["name"],
        "volumeMode": "Filesystem",
    }
    if storage_class.get("mountOptions"):
        pv_spec["mountOptions"] = list(storage_class["mountOptions"])
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": name, "annotations": {ANN_NODE_NAME: node, ANN_DYNAMICALLY_PROVISIONED: PROVISIONER}},
            "spec": pv_spec}


class LocalPathProvisioner:
    """Provisions and deletes ``rancher.io/local-path`` volumes (see the module docstring)."""

    name = "local-path-provisioner"
    resources = (PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, PODS)

    def __init__(self) -> None:
        #: In-flight helper pods by work key: (the object's uid, when the helper is done).
        #: Bounded by the claims and volumes being worked on; dropped when done or gone.
        self._helpers: dict[str, tuple[str, datetime]] = {}
        #: Claims already told they cannot be provisioned (no node), by key: their uids.
        self._failed: dict[str, str] = {}
        #: (provisioner pod uid, event source): the library's identity for that pod.
        self._identity: tuple[str, str] | None = None

    # -- routing (pure) ------------------------------------------------------------------
    def keys_for(self, change: Change) -> Iterable[str]:
        if _is_provisioner_pod(change):
            return [RESYNC]
        if (change.group, change.resource) == (PERSISTENT_VOLUME_CLAIMS.group, PERSISTENT_VOLUME_CLAIMS.plural):
            if change.type == DELETED or _asked_of_us(change.obj):
                return [f"{CLAIM_PREFIX}{change.namespace}/{change.name}"]
        elif (change.group, change.resource) == (PERSISTENT_VOLUMES.group, PERSISTENT_VOLUMES.plural):
            if change.type == DELETED or _ours_to_delete(change.obj):
                return [f"{VOLUME_PREFIX}{change.name}"]
        return []

    # -- work ----------------------------------------------------------------------------
    def reconcile(self, key: str, ctx: Context) -> None:
        if key == RESYNC:
            enqueue_every_claim_and_volume(ctx)
            return
        source = self._source(ctx)
        if key.startswith(CLAIM_PREFIX):
            namespace, name = key[len(CLAIM_PREFIX):].split("/", 1)
            self._claim(key, ctx.get(PERSISTENT_VOLUME_CLAIMS, name, namespace), source, ctx)
        elif key.startswith(VOLUME_PREFIX):
            self._volume(key, ctx.get(PERSISTENT_VOLUMES, key[len(VOLUME_PREFIX):]), source, ctx)

    def _source(self, ctx: Context) -> str | None:
        """The event source of the running provisioner pod, or None when none runs."""
        key, value = APP_LABEL
        running = [pod for pod in ctx.list(PODS, NAMESPACE)
                   if (_meta(pod).get("labels") or {}).get(key) == value and not _meta(pod).get("deletionTimestamp")
                   and (pod.get("status") or {}).get("phase") == "Running"]
        if not running:
            return None
        pod = running[0]
        if self._identity is None or self._identity[0] != _meta(pod).get("uid"):
            self._identity = (_meta(pod).get("uid") or "", f"{PROVISIONER}_{_meta(pod)['name']}_{ctx.rng.uid()}")
        return self._identity[1]

    def _helper_done(self, key: str, uid: str, ctx: Context) -> bool:
        """Start the helper pod for ``key`` (True once it has run for :data:`HELPER_POD_S`)."""
        started = self._helpers.get(key)
        if started is None or started[0] != uid:
            done_at = ctx.now + timedelta(seconds=HELPER_POD_S)
            self._helpers[key] = (uid, done_at)
            ctx.enqueue_at(key, done_at)
            return False
        if ctx.now < started[1]:
            ctx.enqueue_at(key, started[1])
            return False
        del self._helpers[key]
        return True

    # -- provisioning --------------------------------------------------------------------
    def _claim(self, key: str, pvc: Obj | None, source: str | None, ctx: Context) -> None:
        storage_class = self._class_to_provision(pvc, ctx)
        if pvc is None or storage_class is None or source is None:
            self._helpers.pop(key, None)
            self._failed.pop(key, None)
            return
        uid = _meta(pvc).get("uid") or ""
        node = _annotations(pvc).get(ANN_SELECTED_NODE)
        if not node:
            self._no_node(key, pvc, storage_class, source, ctx)
            return
        if key not in self._helpers:
            ctx.record_event(pvc, "PersistentVolumeClaim", "Normal", "Provisioning",
                             f"External provisioner is provisioning volume for claim "
                             f"{go_quote(_meta(pvc).get('namespace', '') + '/' + _meta(pvc)['name'])}", source)
        if not self._helper_done(key, uid, ctx):
            return
        pv = ctx.client.create(PERSISTENT_VOLUMES, provisioned_volume(pvc, storage_class, node))
        ctx.record_event(pvc, "PersistentVolumeClaim", "Normal", "ProvisioningSucceeded",
                         f"Successfully provisioned volume {_meta(pv)['name']}", source)

    def _class_to_provision(self, pvc: Obj | None, ctx: Context) -> Obj | None:
        """shouldProvision: an unbound claim asked of us, of a class of ours, with no PV yet."""
        if pvc is None or (pvc.get("spec") or {}).get("volumeName") or not _asked_of_us(pvc):
            return None
        if _meta(pvc).get("deletionTimestamp") or ctx.get(PERSISTENT_VOLUMES, volume_name(pvc)) is not None:
            return None
        name = claim_class(pvc)
        storage_class = ctx.get(STORAGE_CLASSES, name) if name else None
        if storage_class is None or storage_class.get("provisioner") != PROVISIONER:
            return None
        return storage_class

    def _no_node(self, key: str, pvc: Obj, storage_class: Obj, source: str, ctx: Context) -> None:
        """local-path needs a node: an Immediate class fails (once per claim here)."""
        uid = _meta(pvc).get("uid") or ""
        if self._failed.get(key) == uid:
            return
        self._failed[key] = uid
        ctx.record_event(pvc, "PersistentVolumeClaim", "Normal", "Provisioning",
                         f"External provisioner is provisioning volume for claim "
                         f"{go_quote(_meta(pvc).get('namespace', '') + '/' + _meta(pvc)['name'])}", source)
        ctx.record_event(pvc, "PersistentVolumeClaim", "Warning", "ProvisioningFailed",
                         f"failed to provision volume with StorageClass {go_quote(_meta(storage_class)['name'])}: "
                         "configuration error, no node was specified", source)

    # -- deleting ------------------------------------------------------------------------
    def _volume(self, key: str, pv: Obj | None, source: str | None, ctx: Context) -> None:
        if pv is None or source is None or not _ours_to_delete(pv):
            self._helpers.pop(key, None)
            return
        if not self._helper_done(key, _meta(pv).get("uid") or "", ctx):
            return
        try:
            ctx.client.delete(PERSISTENT_VOLUMES, _meta(pv)["name"], uid=_meta(pv).get("uid"))
        except ApiError as err:
            if err.code != 404:
                raise
