"""Nobody is stalled by someone else: a write is answered once its own consequences have
run, whatever else the engine is doing (fakekube/engine/tickets.py).

Each test starts something slow — a Deployment of 2,147,483,647 replicas, a year-long
clock advance, controllers whose pod creates wait on a hanging webhook, a controller
holding the store lock across a webhook call — and proves that another client's requests
are answered while it runs. Nothing here bounds the slow thing's wall time; every wait
has a generous safety net so that a regression fails instead of hanging.
"""

from __future__ import annotations

import http.client
import json
import threading
from datetime import datetime, timedelta
from typing import Any, Callable, Iterator
from urllib.parse import urlsplit

import pytest

from fakekube import Cluster
from fakekube.engine import EngineStopped
from fakekube.objects.kinds import CONFIGMAPS, PODS

from tests.integration.webhook_server import WebhookServer

Obj = dict[str, Any]
#: The safety net: how long a test waits for something that should come at once.
SAFETY_S = 120.0


def send(cluster: Cluster, method: str, path: str, body: Obj | None = None) -> tuple[int, Obj]:
    url = urlsplit(cluster.url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=SAFETY_S)
    try:
        connection.request(method, path, body=None if body is None else json.dumps(body),
                           headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


class Background:
    """A call on another thread, its result or error, and whether it is still running."""

    def __init__(self, call: Callable[[], Any]) -> None:
        self.result: Any = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(call,), daemon=True)
        self._thread.start()

    def _run(self, call: Callable[[], Any]) -> None:
        try:
            self.result = call()
        except BaseException as exc:  # handed to the test
            self.error = exc

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def join(self) -> Any:
        self._thread.join(SAFETY_S)
        assert not self._thread.is_alive(), "the call did not end within the safety net"
        if self.error is not None:
            raise self.error
        return self.result


def deployment(name: str, replicas: int) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


POD = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


@pytest.fixture
def served() -> Iterator[Cluster]:
    with Cluster(nodes=3, immutability_guard=False) as cluster:
        yield cluster


def pod_count(cluster: Cluster) -> int:
    return len(cluster.store.list(PODS)[0])


def test_a_deployment_of_max_int32_replicas_is_answered_and_others_are_served(served: Cluster) -> None:
    created = Background(lambda: send(served, "POST", "/apis/apps/v1/namespaces/default/deployments",
                                      deployment("big", 2**31 - 1)))
    code, answer = created.join()
    assert (code, answer["spec"]["replicas"]) == (201, 2**31 - 1)
    at_answer = pod_count(served)
    assert 0 < at_answer < 100_000  # answered after its first bursts (the per-write budget), not at the end
    # The ReplicaSet controller goes on creating pods in bursts; other clients are served meanwhile.
    assert send(served, "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "x"}})[0] == 201
    assert send(served, "GET", "/api/v1/namespaces/default/configmaps/x")[0] == 200
    # A pod joins the scheduler's queue behind the storm's pending pods (as upstream's would):
    # its create is answered within the write budget, scheduled or not yet.
    assert send(served, "POST", "/api/v1/namespaces/default/pods", POD)[0] == 201
    assert pod_count(served) > at_answer
    # Deleting the Deployment ends the storm (its ReplicaSet is collected, no more creates).
    assert send(served, "DELETE", "/apis/apps/v1/namespaces/default/deployments/big")[0] == 200


def workload(kind: str) -> tuple[str, Obj]:
    """(collection path, body) of a workload asking for 2,147,483,647 pods at once."""
    template = {"metadata": {"labels": {"app": "many"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}], "restartPolicy": "Never"}}
    if kind == "StatefulSet":
        template["spec"]["restartPolicy"] = "Always"
        return "/apis/apps/v1/namespaces/default/statefulsets", {
            "metadata": {"name": "many"}, "spec": {"replicas": 2**31 - 1, "podManagementPolicy": "Parallel",
                                                   "serviceName": "many", "selector": {"matchLabels": {"app": "many"}},
                                                   "template": template}}
    return "/apis/batch/v1/namespaces/default/jobs", {
        "metadata": {"name": "many"}, "spec": {"parallelism": 2**31 - 1, "completions": 2**31 - 1,
                                               "template": template}}


@pytest.mark.parametrize("kind", ["StatefulSet", "Job"])
def test_other_workloads_of_max_int32_pods_create_in_bursts(served: Cluster, kind: str) -> None:
    path, body = workload(kind)
    assert Background(lambda: send(served, "POST", path, body)).join()[0] == 201
    at_answer = pod_count(served)
    assert 0 < at_answer < 100_000
    assert send(served, "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "x"}})[0] == 201
    assert send(served, "DELETE", f"{path}/many")[0] == 200


def test_a_write_during_a_long_advance_is_answered_at_the_advance_s_current_instant(served: Cluster) -> None:
    start = served.now
    an_hour_in = threading.Event()
    served.observe_time(lambda now: an_hour_in.set() if now >= start + timedelta(hours=1) else None)
    advance = Background(lambda: served.advance(366 * 24 * 3600))
    assert an_hour_in.wait(SAFETY_S), "the advance did not get going"
    code, configmap = send(served, "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "x"}})
    assert code == 201
    created_at = datetime.fromisoformat(configmap["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
    assert start + timedelta(hours=1) <= created_at < start + timedelta(days=366)
    assert send(served, "POST", "/api/v1/namespaces/default/pods", POD)[0] == 201
    placed = send(served, "GET", "/api/v1/namespaces/default/pods/p")[1]
    assert placed["spec"].get("nodeName")  # scheduled at the advance's then-current instant
    assert advance.running  # a year of a 3-node cluster takes far longer than these calls
    served.stop()  # ends the advance at its next safe point
    with pytest.raises(EngineStopped):
        advance.join()


class HangingWebhook:
    """An admission webhook on pods that holds every call until released; counts calls."""

    def __init__(self, server: WebhookServer) -> None:
        self.server = server
        self.called = threading.Event()
        self.release = threading.Event()
        self.in_flight = 0
        server.handlers["/hang"] = self._handle

    def _handle(self, request: Obj) -> Obj:
        self.in_flight += 1
        self.called.set()
        self.release.wait(SAFETY_S)
        self.in_flight -= 1
        return {"allowed": True}

    def config(self, kind: str, operations: list[str], timeout_s: int) -> Obj:
        return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": "hang"},
                "webhooks": [{"name": "hang.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
                              "failurePolicy": "Ignore", "timeoutSeconds": timeout_s,
                              "clientConfig": {"service": {"namespace": "default", "name": "hooks", "path": "/hang"},
                                               "caBundle": self.server.ca_bundle},
                              "rules": [{"operations": operations, "apiGroups": [""], "apiVersions": ["v1"],
                                         "resources": ["pods"]}]}]}


@pytest.fixture
def hanging(served: Cluster) -> Iterator[HangingWebhook]:
    server = WebhookServer()
    served.webhook_addresses["hooks.default.svc:443"] = server.address
    webhook = HangingWebhook(server)
    yield webhook
    webhook.release.set()
    server.close()


def test_controllers_waiting_on_a_hanging_webhook_keep_no_client_waiting(served: Cluster,
                                                                          hanging: HangingWebhook) -> None:
    code, _ = send(served, "POST", "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
                   hanging.config("MutatingWebhookConfiguration", ["CREATE"], timeout_s=30))
    assert code == 201
    created = Background(lambda: send(served, "POST", "/apis/apps/v1/namespaces/default/deployments",
                                      deployment("web", 4)))
    assert hanging.called.wait(SAFETY_S), "the ReplicaSet controller's first pod create reached the webhook"
    # The engine is inside a pod create, waiting on the webhook: a write nobody reacts to is
    # answered at once, and the Deployment's own create within the patience (1 s of wall time).
    assert send(served, "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "x"}})[0] == 201
    assert hanging.in_flight == 1
    assert created.join()[0] == 201
    assert hanging.in_flight == 1 and pod_count(served) == 0  # answered while the webhook still holds the create


class BatchWriter:
    """A controller that writes a pod while holding the store lock for a batch (``ctx.atomically``)."""

    name = "batch-writer"
    resources = ()

    def keys_for(self, change: Any) -> list[str]:  # pragma: no cover - watches nothing
        return []

    def reconcile(self, key: str, ctx: Any) -> None:
        with ctx.atomically():
            ctx.list(CONFIGMAPS)
            ctx.client.create(PODS, {"metadata": {"name": "batched", "namespace": "default"},
                                     "spec": {"containers": [{"name": "c", "image": "nginx"}]}})


def test_a_webhook_called_inside_a_controller_s_batch_holds_no_lock(served: Cluster,
                                                                     hanging: HangingWebhook) -> None:
    code, _ = send(served, "POST", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
                   hanging.config("ValidatingWebhookConfiguration", ["CREATE"], timeout_s=30))
    assert code == 201
    served.engine.register(BatchWriter())
    served.engine.enqueue("batch-writer", "go")
    settling = Background(served.settle)
    assert hanging.called.wait(SAFETY_S)
    # The batch holds the store lock, but not across the webhook call: others write meanwhile.
    assert send(served, "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "x"}})[0] == 201
    assert hanging.in_flight == 1
    hanging.release.set()
    settling.join()
    assert served.store.get(PODS, ("default", "batched")) is not None


def test_after_a_stop_the_cluster_works_in_process_again() -> None:
    """A stopped cluster's engine runs work on the caller's thread, as before it started (a
    clock-mode tick that races the stop does the same) — never the engine thread's stop."""
    cluster = Cluster(nodes=2)
    with cluster:
        send(cluster, "POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "x"}})
    start = cluster.now
    assert cluster.advance(60) == start + timedelta(seconds=60)  # heartbeats, monitor passes: inline
    cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
    assert cluster.get("v1", "Pod", "p")["spec"].get("nodeName")
