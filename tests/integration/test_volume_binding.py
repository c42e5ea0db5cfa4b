"""Claims get volumes: the PV binder, kind's local-path provisioner and the protection
controllers, at upstream's times and in upstream's words.

A cluster with kind's system pods has the default StorageClass ``standard``
(``rancher.io/local-path``, WaitForFirstConsumer, Delete): a pod's claim is provisioned on
the pod's node 2 s after the scheduler picks it (the provisioner's helper pod). A bare
cluster has no class: claims bind to the volumes a test creates. The binder looks at every
claim again every 15 s. Times are seconds since the cluster's epoch.
"""

from __future__ import annotations

import json
from typing import Any

from fakekube import Cluster
from fakekube.api.machinery.errors import ApiError
from tests.integration.timeline import at

Obj = dict[str, Any]
PROVISIONER_SOURCE_PREFIX = "rancher.io/local-path_local-path-provisioner-"


def claim(name: str, class_name: str | None = None, storage: str = "1Gi", **spec: Any) -> Obj:
    body: Obj = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": storage}}, **spec}
    if class_name is not None:
        body["storageClassName"] = class_name
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": body}


def volume(name: str, storage: str = "1Gi", class_name: str = "", modes: tuple[str, ...] = ("ReadWriteOnce",),
           on_node: str | None = None, labels: dict[str, str] | None = None, policy: str | None = None,
           path: str | None = None) -> Obj:
    spec: Obj = {"capacity": {"storage": storage}, "accessModes": list(modes),
                 "hostPath": {"path": path or f"/data/{name}"}}
    if class_name:
        spec["storageClassName"] = class_name
    if policy:
        spec["persistentVolumeReclaimPolicy"] = policy
    if on_node:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [on_node]}]}]}}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name, "labels": labels or {}},
            "spec": spec}


def storage_class(name: str, provisioner: str, mode: str = "Immediate") -> Obj:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": provisioner, "volumeBindingMode": mode}


def pod(name: str, *claims: str, stop_delay_s: float = 0) -> Obj:
    meta: Obj = {"name": name, "namespace": "default"}
    if stop_delay_s:
        meta["annotations"] = {"fakekube.io/behaviour": json.dumps({"stop_delay_s": stop_delay_s})}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}],
                     "volumes": [{"name": c, "persistentVolumeClaim": {"claimName": c}} for c in claims]}}


def get(cluster: Cluster, kind: str, name: str) -> Obj | None:
    try:
        return cluster.get("v1", kind, name)
    except ApiError as err:
        assert err.code == 404
        return None


def pvc(cluster: Cluster, name: str) -> Obj:
    found = get(cluster, "PersistentVolumeClaim", name)
    assert found is not None
    return found


def pv(cluster: Cluster, name: str) -> Obj:
    found = get(cluster, "PersistentVolume", name)
    assert found is not None
    return found


def bound_to(cluster: Cluster, name: str) -> tuple[str, str | None]:
    """(phase, volume name) of a claim."""
    found = pvc(cluster, name)
    return found["status"]["phase"], found["spec"].get("volumeName")


def phases(cluster: Cluster) -> dict[str, str]:
    return {v["metadata"]["name"]: v["status"]["phase"] for v in cluster.list("v1", "PersistentVolume")}


def events(cluster: Cluster, name: str) -> list[tuple[str, str, str, int]]:
    """(type, reason, message, count) of the events about ``name`` from the volume controllers."""
    return [(e["type"], e["reason"], e["message"], e["count"]) for e in cluster.events("default", involved_name=name)
            if e["involvedObject"]["kind"] in ("PersistentVolumeClaim", "PersistentVolume")]


def stamp(seconds: int) -> str:
    return f"2025-01-01T00:{seconds // 60:02d}:{seconds % 60:02d}Z"


EXTERNAL = ("Waiting for a volume to be created either by the external provisioner '{}' or manually by the system "
            "administrator. If volume creation is delayed, please verify that the provisioner is running and "
            "correctly registered.")


def test_a_pod_with_a_default_class_claim_runs_on_a_volume_provisioned_on_its_node() -> None:
    cluster = Cluster(nodes=2, system_pods=True)
    created = cluster.create(claim("data"))
    uid = created["metadata"]["uid"]
    assert created["spec"]["storageClassName"] == "standard"  # DefaultStorageClass admission
    assert created["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    assert events(cluster, "data") == [
        ("Normal", "WaitForFirstConsumer", "waiting for first consumer to be created before binding", 1)]
    cluster.create(pod("web", "data"))
    annotations = pvc(cluster, "data")["metadata"]["annotations"]
    node = annotations["volume.kubernetes.io/selected-node"]
    assert node in ("node-1", "node-2")
    assert annotations["volume.kubernetes.io/storage-provisioner"] == "rancher.io/local-path"
    assert annotations["volume.beta.kubernetes.io/storage-provisioner"] == "rancher.io/local-path"
    at(cluster, 1)
    assert bound_to(cluster, "data") == ("Pending", None) and cluster.list("v1", "PersistentVolume") == []
    assert cluster.get("v1", "Pod", "web")["spec"].get("nodeName") is None

    at(cluster, 2)  # the helper pod has made the directory: the PV, bound at once, the pod scheduled
    name = f"pvc-{uid}"
    volume_obj = pv(cluster, name)
    assert volume_obj["metadata"]["annotations"] == {"local.path.provisioner/selected-node": node,
                                                     "pv.kubernetes.io/provisioned-by": "rancher.io/local-path"}
    assert volume_obj["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]
    spec = volume_obj["spec"]
    assert spec["hostPath"] == {"path": f"/var/local-path-provisioner/{name}_default_data", "type": "DirectoryOrCreate"}
    assert spec["nodeAffinity"] == {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}
    assert (spec["capacity"], spec["accessModes"], spec["persistentVolumeReclaimPolicy"], spec["storageClassName"],
            spec["volumeMode"]) == ({"storage": "1Gi"}, ["ReadWriteOnce"], "Delete", "standard", "Filesystem")
    assert (spec["claimRef"]["name"], spec["claimRef"]["uid"]) == ("data", uid)
    assert volume_obj["status"] == {"phase": "Bound", "lastPhaseTransitionTime": stamp(2)}
    bound = pvc(cluster, "data")
    assert bound["spec"]["volumeName"] == name
    assert bound["status"] == {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}}
    assert bound["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"
    assert bound["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"] == "yes"
    assert cluster.get("v1", "Pod", "web")["spec"]["nodeName"] == node
    at(cluster, 3)
    assert cluster.get("v1", "Pod", "web")["status"]["phase"] == "Running"

    found = [(e["reason"], e["source"]["component"], e["firstTimestamp"]) for e in cluster.events("default", involved_name="data")]
    assert [(reason, at_) for reason, _, at_ in found] == [
        ("WaitForFirstConsumer", stamp(0)), ("ExternalProvisioning", stamp(0)), ("Provisioning", stamp(0)),
        ("ProvisioningSucceeded", stamp(2))]
    assert [source for _, source, _ in found][:2] == ["persistentvolume-controller"] * 2
    provisioner = found[2][1]
    assert provisioner.startswith(PROVISIONER_SOURCE_PREFIX) and found[3][1] == provisioner
    assert events(cluster, "data")[1:] == [
        ("Normal", "ExternalProvisioning", EXTERNAL.format("rancher.io/local-path"), 2),
        ("Normal", "Provisioning", 'External provisioner is provisioning volume for claim "default/data"', 1),
        ("Normal", "ProvisioningSucceeded", f"Successfully provisioned volume {name}", 1)]


def test_a_bare_cluster_has_no_default_class_and_binds_the_smallest_fitting_volume() -> None:
    cluster = Cluster(nodes=1)
    for pv_obj in (volume("big", "10Gi"), volume("fits", "3Gi"), volume("small", "1Gi"),
                   volume("shared", "2Gi", modes=("ReadWriteOnce", "ReadWriteMany")),
                   volume("fast-2g", "2Gi", class_name="fast"), volume("gold", "5Gi", labels={"tier": "gold"})):
        cluster.create(pv_obj)
    assert set(phases(cluster).values()) == {"Available"}
    cluster.create(claim("data", storage="2Gi"))
    cluster.create(claim("quick", "fast", storage="2Gi"))
    cluster.create(claim("picky", storage="2Gi", selector={"matchLabels": {"tier": "gold"}}))
    # Smallest of the class, but a volume offering exactly the claim's modes first: "fits"
    # (3Gi, RWO) beats "shared" (2Gi, RWO+RWX).
    assert bound_to(cluster, "data") == ("Bound", "fits")
    assert bound_to(cluster, "quick") == ("Bound", "fast-2g")
    assert bound_to(cluster, "picky") == ("Bound", "gold")
    assert "storageClassName" not in pvc(cluster, "data")["spec"]
    assert pvc(cluster, "data")["status"] == {"phase": "Bound", "accessModes": ["ReadWriteOnce"],
                                              "capacity": {"storage": "3Gi"}}
    fits = pv(cluster, "fits")
    assert fits["metadata"]["annotations"] == {"pv.kubernetes.io/bound-by-controller": "yes"}
    assert {k: fits["spec"]["claimRef"][k] for k in ("kind", "namespace", "name", "uid")} == {
        "kind": "PersistentVolumeClaim", "namespace": "default", "name": "data",
        "uid": pvc(cluster, "data")["metadata"]["uid"]}
    assert phases(cluster) == {"big": "Available", "fast-2g": "Bound", "fits": "Bound", "gold": "Bound",
                               "shared": "Available", "small": "Available"}
    assert events(cluster, "data") == []


def test_a_claim_nothing_fits_waits_for_the_next_resync_after_a_volume_appears() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(volume("small", "1Gi"))
    cluster.create(claim("huge", storage="50Gi"))
    assert bound_to(cluster, "huge") == ("Pending", None)
    assert events(cluster, "huge") == [("Normal", "FailedBinding",
                                        "no persistent volumes available for this claim and no storage class is set", 1)]
    at(cluster, 5)
    cluster.create(volume("huge-pv", "64Gi"))
    assert pv(cluster, "huge-pv")["status"]["phase"] == "Available"
    at(cluster, 14)
    assert bound_to(cluster, "huge") == ("Pending", None)
    at(cluster, 15)  # --pvclaimbinder-sync-period
    assert bound_to(cluster, "huge") == ("Bound", "huge-pv")
    assert pv(cluster, "huge-pv")["status"] == {"phase": "Bound", "lastPhaseTransitionTime": stamp(15)}


def test_wait_for_first_consumer_binds_the_volume_on_the_node_the_scheduler_picks() -> None:
    cluster = Cluster(nodes=2)
    cluster.create(storage_class("local", "kubernetes.io/no-provisioner", "WaitForFirstConsumer"))
    cluster.create(volume("local-2", "5Gi", class_name="local", on_node="node-2"))
    cluster.create(claim("data", "local"))
    at(cluster, 20)
    # Not bound without a consumer; the event repeats at every resync.
    assert bound_to(cluster, "data") == ("Pending", None)
    assert pv(cluster, "local-2")["status"]["phase"] == "Available"
    assert events(cluster, "data") == [
        ("Normal", "WaitForFirstConsumer", "waiting for first consumer to be created before binding", 3)]
    cluster.create(pod("web", "data"))
    assert bound_to(cluster, "data") == ("Bound", "local-2")
    assert cluster.get("v1", "Pod", "web")["spec"]["nodeName"] == "node-2"
    assert pv(cluster, "local-2")["status"] == {"phase": "Bound", "lastPhaseTransitionTime": stamp(20)}


def test_an_immediate_claim_of_an_external_provisioner_waits_for_its_volume() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(storage_class("nfs", "example.com/nfs"))
    cluster.create(claim("data", "nfs"))
    annotations = pvc(cluster, "data")["metadata"]["annotations"]
    assert annotations == {"volume.kubernetes.io/storage-provisioner": "example.com/nfs",
                           "volume.beta.kubernetes.io/storage-provisioner": "example.com/nfs"}
    at(cluster, 15)
    assert events(cluster, "data") == [("Normal", "ExternalProvisioning", EXTERNAL.format("example.com/nfs"), 4)]
    at(cluster, 20)
    provided = volume("nfs-1", class_name="nfs")  # as a provisioner makes it: pre-bound to the claim
    provided["spec"]["claimRef"] = {"namespace": "default", "name": "data", "uid": pvc(cluster, "data")["metadata"]["uid"]}
    cluster.create(provided)
    assert bound_to(cluster, "data") == ("Bound", "nfs-1")


def test_a_claim_naming_a_volume_binds_only_if_it_fits() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(volume("tiny", "1Gi"))
    cluster.create(volume("roomy", "8Gi"))
    cluster.create(claim("wants-tiny", storage="2Gi", volumeName="tiny"))
    cluster.create(claim("wants-roomy", storage="2Gi", volumeName="roomy"))
    assert bound_to(cluster, "wants-tiny") == ("Pending", "tiny")
    assert events(cluster, "wants-tiny") == [
        ("Warning", "VolumeMismatch", 'Cannot bind to requested volume "tiny": requested PV is too small', 1)]
    assert bound_to(cluster, "wants-roomy") == ("Bound", "roomy")
    annotations = pvc(cluster, "wants-roomy")["metadata"]["annotations"]
    assert annotations == {"pv.kubernetes.io/bind-completed": "yes"}  # the user chose the volume
    cluster.create(claim("late", storage="1Gi", volumeName="roomy"))
    assert bound_to(cluster, "late") == ("Pending", "roomy")
    assert events(cluster, "late") == [
        ("Warning", "FailedBinding", 'volume "roomy" already bound to a different claim.', 1)]


def test_deleted_claims_release_their_volumes_by_reclaim_policy() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(volume("keep", "1Gi"))  # Retain, the default for a PV
    cluster.create(volume("scratch", "1Gi", policy="Delete", path="/tmp/scratch"))
    cluster.create(volume("disk", "2Gi", policy="Delete", path="/data"))
    cluster.create(claim("a"))
    cluster.create(claim("b", storage="1500Mi"))
    cluster.create(claim("c"))
    assert [bound_to(cluster, n)[1] for n in "abc"] == ["keep", "disk", "scratch"]
    at(cluster, 5)
    for name in "abc":
        cluster.delete("v1", "PersistentVolumeClaim", name)  # no pod uses them: gone at once
        assert get(cluster, "PersistentVolumeClaim", name) is None
    keep = pv(cluster, "keep")
    assert keep["status"] == {"phase": "Released", "lastPhaseTransitionTime": stamp(5)}
    assert keep["spec"]["claimRef"]["name"] == "a"  # kept for an administrator to look at
    assert get(cluster, "PersistentVolume", "scratch") is None  # the in-tree hostPath deleter (/tmp only)
    message = "host_path deleter only supports /tmp/.+ but received provided /data"
    assert pv(cluster, "disk")["status"] == {"phase": "Failed", "lastPhaseTransitionTime": stamp(5), "message": message}
    assert events(cluster, "disk") == [("Warning", "VolumeFailedDelete", message, 1)]


def test_a_claim_in_use_stays_terminating_until_its_pod_is_gone_then_its_volume_is_deleted() -> None:
    cluster = Cluster(nodes=2, system_pods=True)
    cluster.create(claim("data"))
    cluster.create(pod("web", "data", stop_delay_s=5))
    at(cluster, 10)
    name = bound_to(cluster, "data")[1]
    cluster.delete("v1", "PersistentVolumeClaim", "data")
    at(cluster, 20)
    held = pvc(cluster, "data")
    assert (held["metadata"]["deletionTimestamp"], held["metadata"]["finalizers"]) == (
        stamp(10), ["kubernetes.io/pvc-protection"])
    assert held["status"]["phase"] == "Bound"
    cluster.delete("v1", "Pod", "web")
    at(cluster, 24)
    assert get(cluster, "PersistentVolumeClaim", "data") is not None
    at(cluster, 25)  # the pod has stopped and gone: the claim goes, its volume is Released
    assert get(cluster, "Pod", "web") is None and get(cluster, "PersistentVolumeClaim", "data") is None
    assert pv(cluster, f"{name}")["status"] == {"phase": "Released", "lastPhaseTransitionTime": stamp(25)}
    at(cluster, 26)
    assert get(cluster, "PersistentVolume", f"{name}") is not None
    at(cluster, 27)  # the provisioner's teardown helper pod ran: the volume is deleted
    assert get(cluster, "PersistentVolume", f"{name}") is None


def test_a_bound_volume_is_deleted_only_once_released() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(volume("keep", "1Gi"))
    cluster.create(claim("a"))
    cluster.delete("v1", "PersistentVolume", "keep")
    held = pv(cluster, "keep")
    assert held["metadata"]["deletionTimestamp"] == stamp(0)
    assert (held["metadata"]["finalizers"], held["status"]["phase"]) == (["kubernetes.io/pv-protection"], "Bound")
    at(cluster, 30)
    assert get(cluster, "PersistentVolume", "keep") is not None
    cluster.delete("v1", "PersistentVolumeClaim", "a")
    assert get(cluster, "PersistentVolume", "keep") is None


def test_a_bound_claim_whose_volume_is_gone_is_lost() -> None:
    cluster = Cluster(nodes=1, controllers=("*", "-persistentvolume-protection-controller"))
    cluster.create(volume("keep", "1Gi"))
    cluster.create(claim("a"))
    rt = cluster.resource("v1", "PersistentVolume")
    cluster.api.patch(rt, "", "keep", "application/merge-patch+json", b'{"metadata": {"finalizers": null}}')
    cluster.delete("v1", "PersistentVolume", "keep")
    assert bound_to(cluster, "a") == ("Lost", "keep")
    assert "accessModes" not in pvc(cluster, "a")["status"]
    assert events(cluster, "a") == [
        ("Warning", "ClaimLost", "Bound claim has lost its PersistentVolume. Data on the volume is lost!", 1)]


def test_a_volume_pre_bound_to_a_claim_waits_for_the_claims_resync() -> None:
    """A PV whose claimRef names a claim without its uid is reserved for it (Available);
    the claim takes it at its next sync — the 15 s resync when nothing else changes it."""
    cluster = Cluster(nodes=1)
    cluster.create(volume("decoy", "1Gi"))
    cluster.create(claim("data", storage="2Gi"))
    at(cluster, 3)
    reserved = volume("reserved", "4Gi")
    reserved["spec"]["claimRef"] = {"namespace": "default", "name": "data"}
    cluster.create(reserved)
    assert pv(cluster, "reserved")["status"]["phase"] == "Available"
    at(cluster, 14)
    assert bound_to(cluster, "data") == ("Pending", None)
    at(cluster, 15)
    assert bound_to(cluster, "data") == ("Bound", "reserved")
    bound = pv(cluster, "reserved")
    assert bound["spec"]["claimRef"]["uid"] == pvc(cluster, "data")["metadata"]["uid"]
    assert "annotations" not in bound["metadata"]  # the user chose the claim: not bound-by-controller


def test_a_statefulsets_claims_are_provisioned_one_ordinal_at_a_time() -> None:
    """OrderedReady: each pod's claim (from volumeClaimTemplates, default class) is
    provisioned 2 s after the pod is created, the pod runs a second later and is Ready at
    once (a readiness probe that passes), and then the next ordinal starts."""
    cluster = Cluster(nodes=2, system_pods=True)
    template = {"metadata": {"name": "www"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    container = {"name": "nginx", "image": "nginx:1.27", "readinessProbe": {"exec": {"command": ["true"]}}}
    cluster.create({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web", "namespace": "default"},
                    "spec": {"replicas": 2, "serviceName": "web", "selector": {"matchLabels": {"app": "web"}},
                             "volumeClaimTemplates": [template],
                             "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [container]}}}})
    at(cluster, 1)
    assert bound_to(cluster, "www-web-0") == ("Pending", None)
    at(cluster, 2)
    assert bound_to(cluster, "www-web-0")[0] == "Bound"
    at(cluster, 3)
    assert cluster.get("apps/v1", "StatefulSet", "web")["status"].get("readyReplicas") == 1
    assert bound_to(cluster, "www-web-1") == ("Pending", None)
    at(cluster, 5)
    assert bound_to(cluster, "www-web-1")[0] == "Bound"
    at(cluster, 6)
    assert cluster.get("apps/v1", "StatefulSet", "web")["status"].get("readyReplicas") == 2
    for ordinal in (0, 1):
        node = cluster.get("v1", "Pod", f"web-{ordinal}")["spec"]["nodeName"]
        volume_obj = pv(cluster, bound_to(cluster, f"www-web-{ordinal}")[1] or "")
        assert volume_obj["metadata"]["annotations"]["local.path.provisioner/selected-node"] == node


def test_a_claim_made_before_any_default_class_gets_it_at_the_next_resync() -> None:
    """RetroactiveDefaultStorageClass: the binder gives a class-less claim the default
    class; that update makes it ask the class's provisioner at once."""
    cluster = Cluster(nodes=1)
    cluster.create(claim("data"))
    assert "storageClassName" not in pvc(cluster, "data")["spec"]
    at(cluster, 5)
    default = storage_class("nfs", "example.com/nfs")
    default["metadata"]["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    cluster.create(default)
    at(cluster, 14)
    assert "storageClassName" not in pvc(cluster, "data")["spec"]
    at(cluster, 15)
    updated = pvc(cluster, "data")
    assert updated["spec"]["storageClassName"] == "nfs"
    assert updated["metadata"]["annotations"]["volume.kubernetes.io/storage-provisioner"] == "example.com/nfs"
    assert [reason for _, reason, _, _ in events(cluster, "data")] == ["FailedBinding", "ExternalProvisioning"]
    cluster.create(claim("explicit", ""))  # "" is a choice: no default, static volumes only
    assert pvc(cluster, "explicit")["spec"]["storageClassName"] == ""


def _vac(cluster: Cluster, name: str) -> Obj | None:
    try:
        return cluster.get("storage.k8s.io/v1", "VolumeAttributesClass", name)
    except ApiError as err:
        assert err.code == 404
        return None


def test_a_volume_attributes_class_a_claim_names_is_deleted_once_no_claim_names_it() -> None:
    cluster = Cluster(nodes=1)
    cluster.create({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttributesClass", "metadata": {"name": "gold"},
                    "driverName": "example.com/csi", "parameters": {"iops": "100"}})
    created = _vac(cluster, "gold")
    assert created is not None and created["metadata"]["finalizers"] == ["kubernetes.io/vac-protection"]
    cluster.create(claim("a", volumeAttributesClassName="gold"))
    cluster.delete("storage.k8s.io/v1", "VolumeAttributesClass", "gold")
    at(cluster, 30)
    held = _vac(cluster, "gold")
    assert held is not None and held["metadata"]["deletionTimestamp"] == stamp(0)
    cluster.delete("v1", "PersistentVolumeClaim", "a")
    assert _vac(cluster, "gold") is None


def test_a_volume_attributes_class_nothing_names_goes_at_once() -> None:
    cluster = Cluster(nodes=1)
    cluster.create({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttributesClass", "metadata": {"name": "idle"},
                    "driverName": "example.com/csi", "parameters": {"iops": "50"}})
    cluster.delete("storage.k8s.io/v1", "VolumeAttributesClass", "idle")
    assert _vac(cluster, "idle") is None
