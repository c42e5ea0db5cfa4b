"""Auto-advance over HTTP: a client that only waits on a watch sees cluster time run."""

from __future__ import annotations

import json
import urllib.request

from kubernetes import client, watch

from fakekube import Cluster
from fakekube.control import attach


def test_a_watching_client_sees_a_failed_node_go_unknown_without_advancing() -> None:
    with Cluster(nodes=2, auto_advance=True) as cluster:
        attach(cluster)
        request = urllib.request.Request(cluster.url + "/fakekube/v1/nodes/node-1/fail", method="POST", data=b"")
        with urllib.request.urlopen(request, timeout=5) as response:
            assert json.load(response)["heartbeats"] == "stopped"
        api = client.CoreV1Api(cluster.client())
        seen = None
        # The watch is the client waiting; its timeout is wall-clock transport time, a safety net.
        for event in watch.Watch().stream(api.list_node, field_selector="metadata.name=node-1", timeout_seconds=20):
            ready = next(c for c in event["object"].status.conditions if c.type == "Ready")
            if ready.status == "Unknown":
                seen = ready.last_transition_time
                break
        assert seen is not None, "auto-advance never moved the clock"
        # Time may have jumped before the fault, too; timings count from the last renewal.
        lease = client.CoordinationV1Api(cluster.client()).read_namespaced_lease("node-1", "kube-node-lease")
        assert (seen - lease.spec.renew_time).total_seconds() == 55.0  # upstream timing, untouched
