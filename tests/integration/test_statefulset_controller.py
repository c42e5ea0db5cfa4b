"""The StatefulSet controller (kube-controller-manager 1.33) at exact virtual times: pods
``<set>-<ordinal>`` created one at a time in order (OrderedReady) or all at once (Parallel),
scale-down from the highest ordinal, claims from volumeClaimTemplates and their retention
policy, rolling updates from the highest ordinal down to the partition, OnDelete, failed
pods replaced, ControllerRevisions, status and events.

A pod is created at once and its container runs a second later; with the readiness probe
below (every second) and ``ready_after_s: 5`` it turns Ready 5 s after that. Times are
seconds since the cluster's epoch.
"""

from __future__ import annotations

import json
from typing import Any

from fakekube import Cluster
from fakekube.api.registry import STATUS
from fakekube.api.verbs.apiserver import WriteOptions
from tests.integration.timeline import at

Obj = dict[str, Any]

PROBE = {"exec": {"command": ["true"]}, "periodSeconds": 1}
STRATEGIC = "application/strategic-merge-patch+json"
MERGE = "application/merge-patch+json"


def statefulset(name: str = "web", replicas: int = 3, behaviour: Obj | None = None, image: str = "nginx:1.27",
                **spec: Any) -> Obj:
    template_meta: Obj = {"labels": {"app": name}}
    if behaviour is not None:
        template_meta["annotations"] = {"fakekube.io/behaviour": json.dumps(behaviour)}
    container = {"name": "nginx", "image": image, "readinessProbe": PROBE}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "serviceName": name, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": template_meta, "spec": {"containers": [container]}}, **spec}}


def pods(cluster: Cluster, app: str = "web") -> dict[str, Obj]:
    return {p["metadata"]["name"]: p for p in cluster.list("v1", "Pod", "default", label_selector=f"app={app}")}


def names(cluster: Cluster, app: str = "web") -> list[str]:
    """The set's pods that are not being deleted, by name."""
    return sorted(name for name, pod in pods(cluster, app).items() if not pod["metadata"].get("deletionTimestamp"))


def status(cluster: Cluster, name: str = "web") -> Obj:
    return cluster.get("apps/v1", "StatefulSet", name)["status"]


def counts(cluster: Cluster, name: str = "web") -> tuple[int, int, int, int, int]:
    """(replicas, ready, current, updated, available)."""
    s = status(cluster, name)
    return (s["replicas"], s.get("readyReplicas", 0), s.get("currentReplicas", 0), s.get("updatedReplicas", 0),
            s["availableReplicas"])


def sts_events(cluster: Cluster) -> list[tuple[str, str, str]]:
    return [(e["type"], e["reason"], e["message"]) for e in cluster.events("default")
            if e["source"].get("component") == "statefulset-controller"]


def timeline(cluster: Cluster, until_s: int, app: str = "web") -> list[tuple[int, list[str]]]:
    """(second, live pod names) each time the set of live pods changes, up to ``until_s``."""
    seen: list[tuple[int, list[str]]] = []
    start = int((cluster.now - cluster.config.start_time).total_seconds())
    for second in range(start, until_s + 1):
        at(cluster, second)
        current = names(cluster, app)
        if not seen or seen[-1][1] != current:
            seen.append((second, current))
    return seen


def patch(cluster: Cluster, body: Obj, patch_type: str = STRATEGIC, name: str = "web") -> None:
    cluster.api.patch(cluster.resource("apps/v1", "StatefulSet"), "default", name, patch_type,
                      json.dumps(body).encode())
    cluster.settle()


def set_image(cluster: Cluster, image: str) -> None:
    patch(cluster, {"spec": {"template": {"spec": {"containers": [{"name": "nginx", "image": image}]}}}})


def images(cluster: Cluster) -> dict[str, str]:
    return {name: pod["spec"]["containers"][0]["image"] for name, pod in pods(cluster).items()
            if not pod["metadata"].get("deletionTimestamp")}


def revisions(cluster: Cluster) -> list[tuple[str, int]]:
    return sorted(((r["metadata"]["name"], r["revision"]) for r in cluster.list("apps/v1", "ControllerRevision",
                                                                               "default")), key=lambda x: x[1])


def test_ordered_ready_creates_one_pod_at_a_time_each_after_the_previous_is_ready() -> None:
    cluster = Cluster(nodes=2)
    created = cluster.create(statefulset(behaviour={"ready_after_s": 5}))
    # web-0 runs at 1 and is Ready at 6 (probe at +5): web-1 is created then; and so on.
    assert timeline(cluster, 20) == [(0, ["web-0"]), (6, ["web-0", "web-1"]), (12, ["web-0", "web-1", "web-2"])]
    pod = pods(cluster)["web-1"]
    revision = status(cluster)["updateRevision"]
    assert pod["metadata"]["generateName"] == "web-"
    assert pod["metadata"]["labels"] == {"app": "web", "statefulset.kubernetes.io/pod-name": "web-1",
                                         "apps.kubernetes.io/pod-index": "1", "controller-revision-hash": revision}
    assert pod["metadata"]["ownerReferences"] == [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web",
                                                   "uid": created["metadata"]["uid"], "controller": True,
                                                   "blockOwnerDeletion": True}]
    assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == ("web-1", "web")
    assert status(cluster) == {"observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "currentReplicas": 3,
                               "updatedReplicas": 3, "currentRevision": revision, "updateRevision": revision,
                               "collisionCount": 0, "availableReplicas": 3}
    assert revision.startswith("web-") and revisions(cluster) == [(revision, 1)]
    assert sts_events(cluster) == [("Normal", "SuccessfulCreate", f"create Pod web-{n} in StatefulSet web successful")
                                   for n in range(3)]


def test_status_counts_pods_as_they_come_up() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(statefulset(behaviour={"ready_after_s": 5}))
    s = status(cluster)  # web-0 created (Pending): no ready or available replica yet, zeros omitted
    assert (s["replicas"], "readyReplicas" in s, s["availableReplicas"], s["collisionCount"]) == (1, False, 0, 0)
    at(cluster, 5)
    assert counts(cluster) == (1, 0, 1, 1, 0)
    at(cluster, 6)
    assert counts(cluster) == (2, 1, 2, 2, 1)


def test_min_ready_seconds_holds_the_next_pod_until_the_previous_is_available() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(statefulset(minReadySeconds=10))
    # web-0 Ready at 1; available for more than 10 s after that; upstream looks 1 s later: 12.
    assert timeline(cluster, 30) == [(0, ["web-0"]), (12, ["web-0", "web-1"]), (24, ["web-0", "web-1", "web-2"])]
    at(cluster, 35)  # web-2 Ready at 25
    assert counts(cluster) == (3, 3, 3, 3, 2)
    at(cluster, 36)
    assert counts(cluster) == (3, 3, 3, 3, 3)


def test_ordinals_start_names_the_pods() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(statefulset(replicas=2, ordinals={"start": 5}))
    at(cluster, 3)
    assert names(cluster) == ["web-5", "web-6"]
    assert pods(cluster)["web-6"]["metadata"]["labels"]["apps.kubernetes.io/pod-index"] == "6"


def test_scale_down_deletes_from_the_highest_ordinal_waiting_for_each_to_terminate() -> None:
    cluster = Cluster(nodes=2)
    cluster.create(statefulset(replicas=4, behaviour={"stop_delay_s": 3}))
    at(cluster, 10)
    assert names(cluster) == ["web-0", "web-1", "web-2", "web-3"]
    patch(cluster, {"spec": {"replicas": 1}}, MERGE)
    # Each pod takes 3 s to stop after its deletion; the next goes when it is gone.
    assert sorted(pods(cluster)) == ["web-0", "web-1", "web-2", "web-3"]
    assert pods(cluster)["web-3"]["metadata"].get("deletionTimestamp")
    assert timeline(cluster, 20) == [(10, ["web-0", "web-1", "web-2"]), (13, ["web-0", "web-1"]), (16, ["web-0"])]
    assert sorted(pods(cluster)) == ["web-0"]
    assert counts(cluster) == (1, 1, 1, 1, 1) and status(cluster)["observedGeneration"] == 2
    assert [m for _, r, m in sts_events(cluster) if r == "SuccessfulDelete"] == [
        f"delete Pod web-{n} in StatefulSet web successful" for n in (3, 2, 1)]


def test_scale_down_waits_for_an_unhealthy_lower_ordinal() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(statefulset(replicas=2))
    at(cluster, 5)
    pod = pods(cluster)["web-0"]
    cluster.delete("v1", "Pod", "web-0")  # re-created at once, Ready 1 s later
    assert pods(cluster)["web-0"]["metadata"]["uid"] != pod["metadata"]["uid"]
    patch(cluster, {"spec": {"replicas": 1}}, MERGE)
    assert names(cluster) == ["web-0", "web-1"]  # web-0 is not Running and Ready yet
    at(cluster, 6)
    assert names(cluster) == ["web-0"]


def test_parallel_creates_and_deletes_every_pod_at_once() -> None:
    cluster = Cluster(nodes=2)
    cluster.create(statefulset(replicas=4, podManagementPolicy="Parallel", behaviour={"ready_after_s": 5}))
    assert names(cluster) == ["web-0", "web-1", "web-2", "web-3"]
    at(cluster, 6)
    assert counts(cluster) == (4, 4, 4, 4, 4)
    patch(cluster, {"spec": {"replicas": 1}}, MERGE)
    assert names(cluster) == ["web-0"]
    assert [m for _, r, m in sts_events(cluster)][-3:] == [
        f"delete Pod web-{n} in StatefulSet web successful" for n in (3, 2, 1)]


def test_claims_are_created_before_each_pod_and_mounted() -> None:
    cluster = Cluster(nodes=1)
    claim_template = {"metadata": {"name": "www", "labels": {"tier": "data"}},
                      "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    cluster.create(statefulset(replicas=2, volumeClaimTemplates=[claim_template],
                               persistentVolumeClaimRetentionPolicy={"whenDeleted": "Retain",
                                                                     "whenScaled": "Retain"}))
    claim = cluster.get("v1", "PersistentVolumeClaim", "www-web-0")
    assert claim["metadata"]["labels"] == {"tier": "data", "app": "web"}
    assert claim["spec"]["accessModes"] == ["ReadWriteOnce"] and "ownerReferences" not in claim["metadata"]
    assert pods(cluster)["web-0"]["spec"]["volumes"][0] == {"name": "www",
                                                            "persistentVolumeClaim": {"claimName": "www-web-0"}}
    assert sts_events(cluster) == [
        ("Normal", "SuccessfulCreate", "create Claim www-web-0 Pod web-0 in StatefulSet web success"),
        ("Normal", "SuccessfulCreate", "create Pod web-0 in StatefulSet web successful")]
    # No PV and no default class in a bare cluster: nothing binds the claim, web-0 stays
    # Pending, and web-1 waits.
    at(cluster, 30)
    assert names(cluster) == ["web-0"] and pods(cluster)["web-0"]["status"]["phase"] == "Pending"


def test_a_container_may_mount_a_volume_claim_template_by_name() -> None:
    """The Kubernetes docs' StatefulSet example: the template has no volume ``www``, its claim
    template has that name (apps validation adds each claim template as a volume first;
    kube-apiserver 1.36 answers 201). The template's hostname and subdomain are the
    controller's, so they are not validated either."""
    cluster = Cluster(nodes=1)
    claim_template = {"metadata": {"name": "www"},
                      "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    web = statefulset(replicas=1, volumeClaimTemplates=[claim_template])
    web["spec"]["template"]["spec"]["containers"][0]["volumeMounts"] = [{"name": "www", "mountPath": "/usr/share/nginx/html"}]
    web["spec"]["template"]["spec"]["hostname"] = "Not_A_Hostname"
    created = cluster.create(web)
    assert "volumes" not in created["spec"]["template"]["spec"]  # checked as if there, not added
    # apps/v1's conversion writes each claim template as a typed PersistentVolumeClaim.
    template = created["spec"]["volumeClaimTemplates"][0]
    assert (template["apiVersion"], template["kind"], template["status"]) == ("v1", "PersistentVolumeClaim",
                                                                            {"phase": "Pending"})
    assert pods(cluster)["web-0"]["spec"]["containers"][0]["volumeMounts"][0]["name"] == "www"


def test_retention_policy_delete_puts_owner_references_on_the_claims() -> None:
    cluster = Cluster(nodes=1)
    claim_template = {"metadata": {"name": "data"},
                      "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    created = cluster.create(statefulset(
        replicas=3, podManagementPolicy="Parallel", volumeClaimTemplates=[claim_template],
        persistentVolumeClaimRetentionPolicy={"whenDeleted": "Delete", "whenScaled": "Delete"}))
    claims = {c["metadata"]["name"]: c for c in cluster.list("v1", "PersistentVolumeClaim", "default")}
    assert sorted(claims) == ["data-web-0", "data-web-1", "data-web-2"]
    assert claims["data-web-2"]["metadata"]["labels"] == {"app": "web"}
    assert claims["data-web-2"]["metadata"]["ownerReferences"] == [
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": created["metadata"]["uid"],
         "controller": True, "blockOwnerDeletion": True}]
    web_2 = pods(cluster)["web-2"]
    patch(cluster, {"spec": {"replicas": 2}}, MERGE)
    # whenScaled: the condemned pod's claim is handed to the pod, and goes with it.
    assert "web-2" not in pods(cluster) and web_2["metadata"]["uid"]
    at(cluster, 1)
    assert sorted(c["metadata"]["name"] for c in cluster.list("v1", "PersistentVolumeClaim", "default")) == [
        "data-web-0", "data-web-1"]
    # whenDeleted: the set's claims go with the set.
    cluster.delete("apps/v1", "StatefulSet", "web")
    at(cluster, 2)
    assert cluster.list("v1", "PersistentVolumeClaim", "default") == [] and pods(cluster) == {}


def test_rolling_update_replaces_pods_from_the_highest_ordinal_one_at_a_time() -> None:
    cluster = Cluster(nodes=2)
    cluster.create(statefulset(behaviour={"ready_after_s": 5}))
    at(cluster, 20)
    old = status(cluster)["currentRevision"]
    set_image(cluster, "nginx:1.28")
    new = status(cluster)["updateRevision"]
    assert new != old and revisions(cluster) == [(old, 1), (new, 2)]
    # web-2 is replaced at once (its deletion ends at once), Ready 6 s later; then web-1, web-0.
    seen = []
    for second in range(20, 38):
        at(cluster, second)
        current = images(cluster)
        if not seen or seen[-1][1] != current:
            seen.append((second, current))
    assert seen == [(20, {"web-0": "nginx:1.27", "web-1": "nginx:1.27", "web-2": "nginx:1.28"}),
                    (26, {"web-0": "nginx:1.27", "web-1": "nginx:1.28", "web-2": "nginx:1.28"}),
                    (32, {"web-0": "nginx:1.28", "web-1": "nginx:1.28", "web-2": "nginx:1.28"})]
    assert counts(cluster) == (3, 2, 0, 3, 2) and status(cluster)["currentRevision"] == old  # web-0 Ready at 38
    at(cluster, 38)  # all updated and ready: the update revision becomes current
    assert counts(cluster) == (3, 3, 3, 3, 3)
    assert (status(cluster)["currentRevision"], status(cluster)["updateRevision"]) == (new, new)
    assert {p["metadata"]["labels"]["controller-revision-hash"] for p in pods(cluster).values()} == {new}


def test_partition_keeps_the_lower_ordinals_at_the_current_revision() -> None:
    cluster = Cluster(nodes=2)
    cluster.create(statefulset(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}))
    at(cluster, 5)
    old = status(cluster)["currentRevision"]
    set_image(cluster, "nginx:1.28")
    at(cluster, 20)
    assert images(cluster) == {"web-0": "nginx:1.27", "web-1": "nginx:1.28", "web-2": "nginx:1.28"}
    s = status(cluster)
    assert (s["currentRevision"], s["currentReplicas"], s["updatedReplicas"]) == (old, 1, 2)
    # A pod below the partition that is deleted comes back at the current revision.
    cluster.delete("v1", "Pod", "web-0")
    assert images(cluster)["web-0"] == "nginx:1.27"
    patch(cluster, {"spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}}})
    at(cluster, 22)
    assert images(cluster)["web-0"] == "nginx:1.28"
    assert status(cluster)["currentRevision"] == status(cluster)["updateRevision"] != old


def test_on_delete_replaces_only_deleted_pods() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(statefulset(updateStrategy={"type": "OnDelete"}))
    at(cluster, 5)
    set_image(cluster, "nginx:1.28")
    at(cluster, 30)
    assert set(images(cluster).values()) == {"nginx:1.27"} and counts(cluster) == (3, 3, 3, 0, 3)
    cluster.delete("v1", "Pod", "web-1")
    assert images(cluster) == {"web-0": "nginx:1.27", "web-1": "nginx:1.28", "web-2": "nginx:1.27"}
    at(cluster, 31)
    assert counts(cluster) == (3, 3, 2, 1, 3)


def test_a_failed_pod_is_deleted_and_made_again() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(statefulset(replicas=2))
    at(cluster, 5)
    pod = pods(cluster)["web-1"]
    pod["status"]["phase"] = "Failed"
    cluster.api.update(cluster.resource("v1", "Pod"), "default", "web-1", pod, WriteOptions(), STATUS)
    cluster.settle()
    fresh = pods(cluster)["web-1"]
    assert fresh["metadata"]["uid"] != pod["metadata"]["uid"] and fresh["status"]["phase"] == "Pending"
    assert sts_events(cluster)[-2:] == [
        ("Normal", "SuccessfulDelete", "delete Pod web-1 in StatefulSet web successful"),
        ("Normal", "SuccessfulCreate", "create Pod web-1 in StatefulSet web successful")]
    at(cluster, 6)
    assert counts(cluster) == (2, 2, 2, 2, 2)


def test_a_rollback_renumbers_the_old_revision_and_history_is_cut() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(statefulset(replicas=1, revisionHistoryLimit=1))
    at(cluster, 2)
    first = status(cluster)["currentRevision"]
    set_image(cluster, "nginx:1.28")
    at(cluster, 4)
    second = status(cluster)["currentRevision"]
    set_image(cluster, "nginx:1.27")  # back to the first template: its revision is renumbered
    at(cluster, 6)
    assert status(cluster)["currentRevision"] == first
    assert revisions(cluster) == [(second, 2), (first, 3)]
    set_image(cluster, "nginx:1.29")
    at(cluster, 8)
    third = status(cluster)["currentRevision"]
    assert third not in (first, second)
    # One old revision kept beyond the live ones: revision 2 (unused, oldest) goes.
    assert revisions(cluster) == [(first, 3), (third, 4)]
    data = cluster.get("apps/v1", "ControllerRevision", third)["data"]
    assert data["spec"]["template"]["$patch"] == "replace"
    assert data["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.29"


def test_orphan_pods_are_adopted_and_mismatched_ones_released() -> None:
    cluster = Cluster(nodes=1)
    cluster.create({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": "web-0", "namespace": "default", "labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}})
    created = cluster.create(statefulset(replicas=1))
    pod = pods(cluster)["web-0"]
    assert pod["metadata"]["ownerReferences"][0]["uid"] == created["metadata"]["uid"]
    cluster.api.patch(cluster.resource("v1", "Pod"), "default", "web-0", MERGE,
                      json.dumps({"metadata": {"labels": {"app": "other"}}}).encode())
    cluster.settle()
    assert "ownerReferences" not in cluster.get("v1", "Pod", "web-0")["metadata"]
    at(cluster, 10)  # a new web-0 cannot be made while the released pod holds the name
    assert pods(cluster) == {} and status(cluster)["replicas"] == 0
