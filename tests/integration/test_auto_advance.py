"""Auto-advance over HTTP: time moves while a client waits on a watch, and only then."""

from __future__ import annotations

import json
import time
import urllib.request

from kubernetes import client, watch

from fakekube import Cluster
from fakekube.control import attach

#: Reads of the clock with nobody waiting, and the wall seconds between them: over this
#: pause the old rule ("jump whenever no request is in flight") stepped dozens of timers.
IDLE_READS = 5
IDLE_PAUSE_S = 0.25


def control(cluster: Cluster, path: str, method: str = "GET") -> dict:
    request = urllib.request.Request(cluster.url + "/fakekube/v1" + path, method=method,
                                     data=b"" if method == "POST" else None)
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.load(response)


def test_a_watching_client_sees_a_failed_node_go_unknown_without_advancing() -> None:
    with Cluster(nodes=2, auto_advance=True) as cluster:
        attach(cluster)
        assert control(cluster, "/nodes/node-1/fail", "POST")["heartbeats"] == "stopped"
        api = client.CoreV1Api(cluster.client())
        seen = None
        # The watch is the client waiting; its timeout is wall-clock transport time, a safety net.
        for event in watch.Watch().stream(api.list_node, field_selector="metadata.name=node-1", timeout_seconds=20):
            ready = next(c for c in event["object"].status.conditions if c.type == "Ready")
            if ready.status == "Unknown":
                seen = ready.last_transition_time
                break
        assert seen is not None, "auto-advance never moved the clock"
        lease = client.CoordinationV1Api(cluster.client()).read_namespaced_lease("node-1", "kube-node-lease")
        assert (seen - lease.spec.renew_time).total_seconds() == 55.0  # upstream timing, untouched


def test_with_nobody_waiting_time_stands_still_between_requests() -> None:
    with Cluster(nodes=1, auto_advance=True) as cluster:
        attach(cluster)
        control(cluster, "/nodes/node-1/fail", "POST")
        readings = []
        for _ in range(IDLE_READS):  # a script's commands, with pauses between them
            readings.append(control(cluster, "/clock")["now"])
            time.sleep(IDLE_PAUSE_S)
        assert readings == [readings[0]] * IDLE_READS
        ready = next(c for c in cluster.get("v1", "Node", "node-1", "")["status"]["conditions"] if c["type"] == "Ready")
        assert ready["status"] == "True"  # the 55 s to Unknown did not pass unobserved


def test_time_stops_again_once_the_waiting_client_hung_up() -> None:
    with Cluster(nodes=1, auto_advance=True) as cluster:
        attach(cluster)
        path = ("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases?watch=true&timeoutSeconds=10"
                "&fieldSelector=metadata.name%3Dnode-1")
        with urllib.request.urlopen(cluster.url + path, timeout=15) as stream:
            for _ in range(3):  # the renewals auto-advance lets happen while the watch waits
                stream.readline()
        # Hung up: the server notices within a few checks (tens of ms); from then on the
        # clock stays put however long the script pauses.
        readings = [control(cluster, "/clock")["now"]]
        for _ in range(IDLE_READS):
            time.sleep(IDLE_PAUSE_S)
            readings.append(control(cluster, "/clock")["now"])
        assert readings[1:] == [readings[1]] * IDLE_READS


def test_a_watch_on_jobs_sees_the_active_deadline_pass_and_nothing_moves_before_it_opens() -> None:
    with Cluster(nodes=1, auto_advance=True) as cluster:
        attach(cluster)
        cluster.create({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "slow", "namespace": "default"},
                        "spec": {"activeDeadlineSeconds": 120, "backoffLimit": 0, "template": {"spec": {
                            "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox",
                                                                      "command": ["sleep", "3600"]}]}}}})
        created = control(cluster, "/clock")["now"]
        time.sleep(IDLE_PAUSE_S)
        assert control(cluster, "/clock")["now"] == created  # nobody waits yet
        api = client.BatchV1Api(cluster.client())
        failed = None
        for event in watch.Watch().stream(api.list_namespaced_job, "default", timeout_seconds=20):
            conditions = event["object"].status.conditions or []
            failed = next((c for c in conditions if c.type == "Failed" and c.status == "True"), None)
            if failed is not None:
                break
        assert failed is not None and failed.reason == "DeadlineExceeded"
        job = api.read_namespaced_job("slow", "default")
        target = next(c for c in job.status.conditions if c.type == "FailureTarget")
        # Upstream timing: the deadline at 120 s; Failed once the pod is gone, 30 s of grace later.
        assert [(c.last_transition_time - job.status.start_time).total_seconds() for c in (target, failed)] == [120, 150]


def test_a_followed_log_is_a_client_waiting() -> None:
    with Cluster(nodes=1, auto_advance=True) as cluster:
        attach(cluster)
        cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
                        "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
        api = client.CoreV1Api(cluster.client())
        for event in watch.Watch().stream(api.list_namespaced_pod, "default", timeout_seconds=20):
            if event["object"].status.phase == "Running":  # nobody else waits: this watch got it there
                break
        with urllib.request.urlopen(cluster.url + "/api/v1/namespaces/default/pods/web/log?follow=true",
                                    timeout=15):
            before = control(cluster, "/clock")["now"]
            deadline = time.monotonic() + 10  # wall-clock safety net: the clock moves within a few ticks
            while control(cluster, "/clock")["now"] == before and time.monotonic() < deadline:
                time.sleep(0.05)
            assert control(cluster, "/clock")["now"] > before
