"""Pods with PersistentVolumeClaims through the whole scheduler: upstream's FailedScheduling
texts, pods waiting for claims that nobody binds, and the instant they are scheduled once
a test binds the claim. These clusters run without the PV binder (the tests play its part,
step by step); tests/integration/test_volume_binding.py has it bind."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

from fakekube import Cluster
from fakekube.cluster.nodespec import NodeSpec

Obj = dict[str, Any]
#: Every controller but the PV binder, so that the tests decide when claims are bound.
NO_BINDER = ("*", "-persistentvolume-binder-controller")
MERGE = "application/merge-patch+json"


def pod(name: str, *claims: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}],
                     "volumes": [{"name": c, "persistentVolumeClaim": {"claimName": c}} for c in claims]}}


def claim(name: str, class_name: str | None = None, storage: str = "1Gi") -> Obj:
    spec: Obj = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": storage}}}
    if class_name is not None:
        spec["storageClassName"] = class_name
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": spec}


def volume(name: str, class_name: str = "", storage: str = "1Gi", on_node: str | None = None,
           labels: dict[str, str] | None = None) -> Obj:
    spec: Obj = {"capacity": {"storage": storage}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": f"/{name}"}}
    if class_name:
        spec["storageClassName"] = class_name
    if on_node:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [on_node]}]}]}}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name, "labels": labels or {}},
            "spec": spec}


def storage_class(name: str, mode: str, provisioner: str = "example.com/csi") -> Obj:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": provisioner, "volumeBindingMode": mode}


def patch(cluster: Cluster, kind: str, name: str, body: Obj, namespace: str = "default", status: bool = False) -> None:
    rt = cluster.resource("v1", kind)
    cluster.api.patch(rt, namespace if rt.namespaced else "", name, MERGE, json.dumps(body).encode(),
                      subresource="status" if status else "")
    cluster.settle()


def bind_volume(cluster: Cluster, claim_name: str, volume_name: str) -> None:
    """The PV controller's first half: the PV's claimRef and phase."""
    pvc = cluster.get("v1", "PersistentVolumeClaim", claim_name)
    ref = {"kind": "PersistentVolumeClaim", "namespace": "default", "name": claim_name,
           "uid": pvc["metadata"]["uid"], "apiVersion": "v1"}
    patch(cluster, "PersistentVolume", volume_name, {"spec": {"claimRef": ref}})
    patch(cluster, "PersistentVolume", volume_name, {"status": {"phase": "Bound"}}, status=True)


def bind_claim(cluster: Cluster, claim_name: str, volume_name: str) -> None:
    """The second half: the claim's volumeName and annotations (one write: from here on it
    is fully bound), then its phase."""
    patch(cluster, "PersistentVolumeClaim", claim_name, {
        "metadata": {"annotations": {"pv.kubernetes.io/bind-completed": "yes",
                                     "pv.kubernetes.io/bound-by-controller": "yes"}},
        "spec": {"volumeName": volume_name}})
    patch(cluster, "PersistentVolumeClaim", claim_name, {"status": {"phase": "Bound"}}, status=True)


def bind(cluster: Cluster, claim_name: str, volume_name: str) -> None:
    bind_volume(cluster, claim_name, volume_name)
    bind_claim(cluster, claim_name, volume_name)


def node_of(cluster: Cluster, name: str) -> str | None:
    return cluster.get("v1", "Pod", name)["spec"].get("nodeName")


def failures(cluster: Cluster, name: str) -> list[tuple[str, int]]:
    """FailedScheduling (message, count) pairs; the message without DefaultPreemption's
    closing "preemption: ... not helpful" sentence, which no volume rejection changes."""
    out = []
    for event in cluster.events("default", involved_name=name):
        if event["reason"] == "FailedScheduling":
            message = re.sub(r" preemption: 0/\d+ nodes are available: \d+ Preemption is not helpful for scheduling\.$",
                             "", event["message"])
            out.append((message, (event.get("series") or {}).get("count") or 1))
    return out


def scheduled_at(cluster: Cluster, name: str) -> str:
    [event] = [e for e in cluster.events("default", involved_name=name) if e["reason"] == "Scheduled"]
    return str(event["eventTime"])[:19] + "Z"


def stamp(cluster: Cluster, start: Any, seconds: float) -> str:
    return (start + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_a_missing_claim_gives_upstreams_message() -> None:
    cluster = Cluster(controllers=NO_BINDER, nodes=3)
    cluster.create(pod("web", "data"))
    cluster.advance(30)
    assert node_of(cluster, "web") is None
    assert failures(cluster, "web") == [
        ('0/3 nodes are available: persistentvolumeclaim "data" not found.', 1)]
    # Creating the claim (unbound, no class: Immediate) retries the pod at once.
    cluster.create(claim("data"))
    assert failures(cluster, "web")[-1] == (
        "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims.", 1)


def test_an_unbound_immediate_claim_waits_until_bound() -> None:
    """Rejected at t=0; the PV side of the binding at t=30 retries it (and fails again);
    the claim becomes fully bound at t=60, past the back-off: scheduled at that instant."""
    cluster = Cluster(controllers=NO_BINDER, nodes=2)
    start = cluster.clock.now()
    cluster.create(claim("data"))
    cluster.create(volume("pv-1", on_node="node-2"))
    cluster.create(pod("web", "data"))
    cluster.advance(30)
    assert failures(cluster, "web") == [
        ("0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims.", 1)]
    bind_volume(cluster, "data", "pv-1")
    cluster.advance(30)
    assert node_of(cluster, "web") is None
    bind_claim(cluster, "data", "pv-1")
    assert node_of(cluster, "web") == "node-2"  # the PV's node affinity
    assert scheduled_at(cluster, "web") == stamp(cluster, start, 60)


def test_wait_for_first_consumer_provisioning_annotates_the_claim_and_waits() -> None:
    cluster = Cluster(controllers=NO_BINDER, nodes=(NodeSpec(zone="a"), NodeSpec(zone="b")))
    start = cluster.clock.now()
    cluster.create(storage_class("late", "WaitForFirstConsumer"))
    cluster.create(claim("data", "late"))
    cluster.create(pod("web", "data"))
    cluster.advance(20)
    selected = cluster.get("v1", "PersistentVolumeClaim", "data")["metadata"]["annotations"][
        "volume.kubernetes.io/selected-node"]
    assert selected in ("node-1", "node-2")
    assert node_of(cluster, "web") is None
    # Nobody provisions: the claim stays Pending and the pod with it. One retry (the
    # annotation is a claim update); rewriting the same annotation changes nothing.
    assert cluster.get("v1", "PersistentVolumeClaim", "data")["status"]["phase"] == "Pending"
    waiting = ("binding volumes: waiting for the PersistentVolumeClaims to be bound", 1)
    assert failures(cluster, "web") == [waiting, waiting]  # two pod resourceVersions: two events
    # A provisioner (the test) creates a volume on that node and binds it.
    cluster.create(volume("pvc-data", "late", on_node=selected))
    bind_volume(cluster, "data", "pvc-data")
    cluster.advance(20)
    assert node_of(cluster, "web") is None
    bind_claim(cluster, "data", "pvc-data")
    assert node_of(cluster, "web") == selected
    assert scheduled_at(cluster, "web") == stamp(cluster, start, 40)


def test_wait_for_first_consumer_picks_a_static_volume_on_its_node() -> None:
    cluster = Cluster(controllers=NO_BINDER, nodes=3)
    cluster.create(storage_class("local", "WaitForFirstConsumer", provisioner="kubernetes.io/no-provisioner"))
    cluster.create(volume("local-3", "local", on_node="node-3"))
    patch(cluster, "PersistentVolume", "local-3", {"status": {"phase": "Available"}}, status=True)
    cluster.create(claim("data", "local"))
    cluster.create(pod("web", "data"))
    cluster.advance(5)
    pv = cluster.get("v1", "PersistentVolume", "local-3")
    ref = pv["spec"]["claimRef"]
    assert (ref["kind"], ref["namespace"], ref["name"]) == ("PersistentVolumeClaim", "default", "data")
    assert ref["uid"] == cluster.get("v1", "PersistentVolumeClaim", "data")["metadata"]["uid"]
    assert pv["metadata"]["annotations"] == {"pv.kubernetes.io/bound-by-controller": "yes"}
    assert node_of(cluster, "web") is None
    patch(cluster, "PersistentVolume", "local-3", {"status": {"phase": "Bound"}}, status=True)
    cluster.advance(20)
    bind_claim(cluster, "data", "local-3")
    assert node_of(cluster, "web") == "node-3"


def test_no_volume_anywhere_for_a_local_claim() -> None:
    cluster = Cluster(controllers=NO_BINDER, nodes=2)
    cluster.create(storage_class("local", "WaitForFirstConsumer", provisioner="kubernetes.io/no-provisioner"))
    cluster.create(claim("data", "local"))
    cluster.create(pod("web", "data"))
    assert failures(cluster, "web") == [
        ("0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind.", 1)]


def test_a_bound_zonal_volume_keeps_the_pod_in_its_zone() -> None:
    cluster = Cluster(controllers=NO_BINDER, nodes=(NodeSpec(zone="a", count=2), NodeSpec(zone="b")))
    cluster.create(volume("pv-b", labels={"topology.kubernetes.io/zone": "b"}))
    cluster.create(claim("data"))
    bind(cluster, "data", "pv-b")
    cluster.create(pod("web", "data"))
    assert node_of(cluster, "web") == "node-3"
    cluster.create(volume("pv-c", labels={"topology.kubernetes.io/zone": "c"}))
    cluster.create(claim("elsewhere"))
    bind(cluster, "elsewhere", "pv-c")
    cluster.create(pod("lost", "elsewhere"))
    assert failures(cluster, "lost") == [
        ("0/3 nodes are available: 3 node(s) had no available volume zone.", 1)]


def test_read_write_once_pod_claims_are_used_by_one_pod() -> None:
    cluster = Cluster(controllers=NO_BINDER, nodes=2)
    solo = claim("solo")
    solo["spec"]["accessModes"] = ["ReadWriteOncePod"]
    cluster.create(solo)
    cluster.create(volume("pv-1"))
    bind(cluster, "solo", "pv-1")
    cluster.create(pod("first", "solo"))
    assert node_of(cluster, "first") is not None
    cluster.create(pod("second", "solo"))
    assert node_of(cluster, "second") is None
    assert failures(cluster, "second")[0][0].startswith(
        "0/2 nodes are available: 2 node has pod using PersistentVolumeClaim with the same name and "
        "ReadWriteOncePod access mode.")
    cluster.delete("v1", "Pod", "first")
    cluster.advance(40)
    assert node_of(cluster, "second") is not None


def test_a_pod_waiting_in_prebind_is_scheduled_the_instant_its_claim_binds() -> None:
    """PreBind's Pending (the claim is not bound yet) is retried by the claim's own update
    without the pod's back-off (upstream's queueImmediately for pending plugins): bound at
    t=0.3, not at the end of a 1-second back-off."""
    cluster = Cluster(controllers=NO_BINDER, nodes=1)
    cluster.create(storage_class("late", "WaitForFirstConsumer"))
    cluster.create(claim("data", "late"))
    cluster.create(volume("pvc-data", "late", on_node="node-1"))
    cluster.create(pod("web", "data"))
    assert node_of(cluster, "web") is None
    cluster.advance(0.3)
    bind(cluster, "data", "pvc-data")
    assert node_of(cluster, "web") == "node-1"
    bound = next(c for c in cluster.get("v1", "Pod", "web")["status"]["conditions"] if c["type"] == "PodScheduled")
    assert bound["status"] == "True"
    assert cluster.clock.now() - cluster.config.start_time == timedelta(seconds=0.3)
