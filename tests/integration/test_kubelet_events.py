"""The simulated kubelets record upstream's events, correlated, at exact virtual times.

Default behaviour: no pull time, 1 s to create and start, runs forever, healthy. Times are
seconds since the cluster's epoch; pods are created at t=0 on node-1.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client

from fakekube import Cluster
from fakekube.kubelet.behaviour import BEHAVIOUR_ANNOTATION

Obj = dict[str, Any]


def pod(name: str, behaviour: Obj | None = None, **spec: Any) -> Obj:
    containers = spec.pop("containers", [{"name": "c", "image": "nginx"}])
    meta: Obj = {"name": name, "namespace": "default"}
    if behaviour is not None:
        meta["annotations"] = {BEHAVIOUR_ANNOTATION: json.dumps(behaviour)}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"nodeName": "node-1", "containers": containers, **spec}}


def stamp(seconds: int) -> str:
    return f"2025-01-01T00:{seconds // 60:02d}:{seconds % 60:02d}Z"


def summary(cluster: Cluster, name: str) -> list[tuple[str, int, str, str, str]]:
    """(reason, count, firstTimestamp, lastTimestamp, message) in write order."""
    return [(e["reason"], e["count"], e["firstTimestamp"], e["lastTimestamp"], e["message"])
            for e in cluster.events(involved_name=name)]


def test_a_pod_starting_records_pulling_pulled_created_started() -> None:
    cluster = Cluster(nodes=1)
    created = cluster.create(pod("web"))
    cluster.advance(5)
    events = cluster.events(involved_name="web")
    size = events[1]["message"].rsplit(": ", 1)[1]
    assert summary(cluster, "web") == [
        ("Pulling", 1, stamp(0), stamp(0), 'Pulling image "nginx"'),
        ("Pulled", 1, stamp(0), stamp(0), f'Successfully pulled image "nginx" in 0s (0s including waiting). '
                                          f"Image size: {size}"),
        ("Created", 1, stamp(1), stamp(1), "Created container: c"),
        ("Started", 1, stamp(1), stamp(1), "Started container c")]
    first = events[0]
    assert first["type"] == "Normal" and first["metadata"]["namespace"] == "default"
    assert first["source"] == {"component": "kubelet", "host": "node-1"}
    assert (first["reportingComponent"], first["reportingInstance"]) == ("kubelet", "node-1")
    involved = first["involvedObject"]
    assert (involved["kind"], involved["name"], involved["uid"], involved["apiVersion"], involved["fieldPath"]) == (
        "Pod", "web", created["metadata"]["uid"], "v1", "spec.containers{c}")


def test_init_containers_are_referenced_by_their_own_field_path() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(pod("init", {"init": {"run_for_s": 2}},
                       initContainers=[{"name": "init", "image": "busybox:1.36"}]))
    cluster.advance(10)
    paths = [(e["reason"], e["involvedObject"]["fieldPath"], e["lastTimestamp"])
             for e in cluster.events(involved_name="init")]
    assert paths == [
        ("Pulling", "spec.initContainers{init}", stamp(0)), ("Pulled", "spec.initContainers{init}", stamp(0)),
        ("Created", "spec.initContainers{init}", stamp(1)), ("Started", "spec.initContainers{init}", stamp(1)),
        ("Pulling", "spec.containers{c}", stamp(3)), ("Pulled", "spec.containers{c}", stamp(3)),
        ("Created", "spec.containers{c}", stamp(4)), ("Started", "spec.containers{c}", stamp(4))]


def test_crash_loop_back_off_counts_one_event_per_resync() -> None:
    cluster = Cluster(nodes=1)
    created = cluster.create(pod("crash", {"run_for_s": 5, "exit_code": 1}))
    uid = created["metadata"]["uid"]
    # Runs 1–6 and restarts at once (runs 7–12); waits 10 s (BackOff at 12), runs 23–28; waits 20 s
    # (BackOff at 28 and 38), runs 49–54; waits 40 s (BackOff at 54). "nginx" is nginx:latest,
    # whose imagePullPolicy is Always: every restart pulls it again.
    cluster.advance(60)
    pulled = summary(cluster, "crash")[1][4]
    assert summary(cluster, "crash")[-4:] == [
        ("Pulled", 4, stamp(0), stamp(48), pulled),
        ("Created", 4, stamp(1), stamp(49), "Created container: c"),
        ("Started", 4, stamp(1), stamp(49), "Started container c"),
        ("BackOff", 4, stamp(12), stamp(54),
         f"Back-off restarting failed container c in pod crash_default({uid})")]
    backoff = cluster.events(reason="BackOff")[0]
    assert backoff["type"] == "Warning"
    assert len(cluster.events(involved_name="crash")) == 5  # counted, not one object per occurrence


def test_image_pull_failure_and_back_off() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(pod("pull", {"image_pull_error": "rpc error: code = NotFound desc = not found"}))
    cluster.advance(25)  # pulls fail at 0 and 10; retry at 30
    assert summary(cluster, "pull") == [
        ("Pulling", 2, stamp(0), stamp(10), 'Pulling image "nginx"'),
        ("Failed", 2, stamp(0), stamp(10), 'Failed to pull image "nginx": rpc error: code = NotFound desc = not found'),
        ("Failed", 2, stamp(0), stamp(10), "Error: ErrImagePull"),
        ("BackOff", 3, stamp(1), stamp(21), 'Back-off pulling image "nginx"'),
        ("Failed", 3, stamp(1), stamp(21), "Error: ImagePullBackOff")]
    assert [e["type"] for e in cluster.events(involved_name="pull")] == ["Normal", "Warning", "Warning", "Normal",
                                                                         "Warning"]


def test_probe_failures_are_unhealthy_events_and_a_liveness_kill_is_killing() -> None:
    cluster = Cluster(nodes=1)
    probes = {"readinessProbe": {"httpGet": {"path": "/ready", "port": 80}, "periodSeconds": 10},
              "livenessProbe": {"tcpSocket": {"port": 8080}, "periodSeconds": 5}}
    cluster.create(pod("probed", {"readiness": [[0, True], [15, False]], "liveness": [[0, True], [22, False]]},
                       containers=[{"name": "c", "image": "my/app:1", **probes}]))
    ip = cluster.get("v1", "Pod", "probed")["status"]["podIP"]
    cluster.advance(36)
    # Started at 1: readiness ticks at 1, 11, 21, 31 (fails from 16); liveness at 1, 6, … (fails from 23,
    # the third failure kills at 36; readiness does not probe at the kill).
    assert [(reason, count, first, last, message) for reason, count, first, last, message
            in summary(cluster, "probed") if reason in ("Unhealthy", "Killing")] == [
        ("Unhealthy", 2, stamp(21), stamp(31), "Readiness probe failed: HTTP probe failed with statuscode: 500"),
        ("Unhealthy", 3, stamp(26), stamp(36), f"Liveness probe failed: dial tcp {ip}:8080: connect: connection refused"),
        ("Killing", 1, stamp(36), stamp(36), "Container c failed liveness probe, will be restarted")]


def test_deleting_a_pod_records_killing_for_each_running_container() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(pod("two", containers=[{"name": "a", "image": "nginx"}, {"name": "b", "image": "redis"}]))
    cluster.advance(5)
    cluster.delete("v1", "Pod", "two")
    killing = cluster.events(reason="Killing")
    assert [(e["message"], e["involvedObject"]["fieldPath"], e["firstTimestamp"]) for e in killing] == [
        ("Stopping container a", "spec.containers{a}", stamp(5)),
        ("Stopping container b", "spec.containers{b}", stamp(5))]


def test_events_lists_in_write_order_and_filters() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(pod("crash", {"run_for_s": 5, "exit_code": 1}))
    cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    cluster.create(dict(pod("calm"), metadata={"name": "calm", "namespace": "other"}))
    cluster.advance(30)
    everything = cluster.events()
    versions = [int(e["metadata"]["resourceVersion"]) for e in everything]
    assert versions == sorted(versions)
    assert everything[-1]["reason"] == "BackOff"  # bumped last, so listed last
    assert {e["involvedObject"]["name"] for e in cluster.events(namespace="other")} == {"calm"}
    assert [e["reason"] for e in cluster.events(namespace="other", reason="Started")] == ["Started"]
    assert all(e["kind"] == "Event" and e["apiVersion"] == "v1" for e in everything)
    everything[0]["reason"] = "changed"
    assert cluster.events()[0]["reason"] != "changed"  # copies


def test_the_same_run_records_the_same_events() -> None:
    def run() -> list[Obj]:
        cluster = Cluster(nodes=2, seed=7)
        cluster.create(pod("crash", {"run_for_s": 5, "exit_code": 1}))
        cluster.create(pod("pull", {"image_pull_error": True}))
        cluster.advance(120)
        return cluster.events()
    assert run() == run()


@pytest.mark.fakekube(nodes=1)
def test_clients_list_the_kubelet_events(fakekube: Cluster) -> None:
    fakekube.create(pod("web"))
    fakekube.advance(2)
    core = client.CoreV1Api(fakekube.client())
    listed = core.list_namespaced_event("default", field_selector="involvedObject.name=web")
    assert [(e.reason, e.source.component, e.source.host, e.involved_object.field_path) for e in listed.items] == [
        ("Pulling", "kubelet", "node-1", "spec.containers{c}"), ("Pulled", "kubelet", "node-1", "spec.containers{c}"),
        ("Created", "kubelet", "node-1", "spec.containers{c}"), ("Started", "kubelet", "node-1", "spec.containers{c}")]
