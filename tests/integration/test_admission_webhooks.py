"""Admission webhooks served by the test over HTTPS, seen through the official client:
denials with the webhook's message, JSON patches landing, failurePolicy against an
unreachable or slow webhook, selectors, dry runs, and a webhook that reads the apiserver
while the write waits for it."""

from __future__ import annotations

import json
import threading
import urllib.request
from typing import Any, Iterator

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from fakekube import Cluster
from tests.integration.test_request_semantics import request
from tests.integration.webhook_server import Answer, WebhookServer, json_patch

Obj = dict[str, Any]
GROUP = "/apis/admissionregistration.k8s.io/v1"
SERVICE_HOST = "hooks.default.svc:443"


@pytest.fixture
def server() -> Iterator[WebhookServer]:
    webhook_server = WebhookServer()
    yield webhook_server
    webhook_server.close()


@pytest.fixture
def cluster(fakekube: Cluster, server: WebhookServer) -> Cluster:
    fakekube.webhook_addresses[SERVICE_HOST] = server.address
    return fakekube


@pytest.fixture
def core(cluster: Cluster) -> client.CoreV1Api:
    return client.CoreV1Api(cluster.client())


def hook(server: WebhookServer, name: str, path: str, *, operations: tuple[str, ...] = ("CREATE",),
         resources: tuple[str, ...] = ("configmaps",), **extra: Any) -> Obj:
    spec: Obj = {"name": name, "sideEffects": "None", "admissionReviewVersions": ["v1"],
                 "clientConfig": {"service": {"namespace": "default", "name": "hooks", "path": path},
                                  "caBundle": server.ca_bundle},
                 "rules": [{"operations": list(operations), "apiGroups": [""], "apiVersions": ["v1"],
                            "resources": list(resources)}]}
    spec.update(extra)
    return spec


def register(cluster: Cluster, kind: str, *hooks: Obj) -> None:
    plural = kind.lower() + "s"
    body = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": "hooks"},
            "webhooks": list(hooks)}
    code, answer, _ = request(cluster, "POST", f"{GROUP}/{plural}", body)
    assert code == 201, answer


def configmap(name: str, labels: dict[str, str] | None = None) -> client.V1ConfigMap:
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name, labels=labels), data={"k": "v"})


def refusal(call: Any) -> tuple[int, Obj]:
    with pytest.raises(ApiException) as info:
        call()
    return info.value.status, json.loads(info.value.body)


def test_a_validating_webhook_denies_and_the_client_sees_its_message(
        cluster: Cluster, server: WebhookServer, core: client.CoreV1Api) -> None:
    def deny_forbidden(req: Obj) -> Obj:
        if (req["object"]["metadata"].get("labels") or {}).get("forbidden") == "yes":
            return {"allowed": False, "status": {"code": 403, "reason": "Forbidden", "message": "no forbidden maps"}}
        return {"allowed": True, "warnings": ["looked at it"]}
    server.handlers["/validate"] = deny_forbidden
    register(cluster, "ValidatingWebhookConfiguration", hook(server, "deny.example.com", "/validate"))
    code, status = refusal(lambda: core.create_namespaced_config_map("default", configmap("bad", {"forbidden": "yes"})))
    assert (code, status["reason"], status["message"]) == (
        403, "Forbidden", 'admission webhook "deny.example.com" denied the request: no forbidden maps')
    assert core.list_namespaced_config_map("default", label_selector="forbidden").items == []
    code, created, response = request(cluster, "POST", "/api/v1/namespaces/default/configmaps",
                                      {"metadata": {"name": "good"}, "data": {"k": "v"}})
    assert code == 201 and response.headers.get_all("Warning") == ['299 - "looked at it"']
    review = server.reviews[-1]
    assert review["path"] == "/validate?timeout=10s"
    req = review["request"]
    assert (req["operation"], req["name"], req["namespace"], req["kind"], req["resource"], req["dryRun"]) == (
        "CREATE", "good", "default", {"group": "", "version": "v1", "kind": "ConfigMap"},
        {"group": "", "version": "v1", "resource": "configmaps"}, False)
    assert req["object"]["metadata"]["uid"] == created["metadata"]["uid"] and req["oldObject"] is None
    assert req["userInfo"] == {"username": "fakekube-admin", "groups": ["system:masters", "system:authenticated"]}
    assert req["options"] == {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}


def test_a_mutating_webhooks_patch_lands_and_is_validated(
        cluster: Cluster, server: WebhookServer, core: client.CoreV1Api) -> None:
    server.handlers["/mutate"] = lambda req: json_patch(
        {"op": "add", "path": "/metadata/labels", "value": {"injected": "true"}})
    register(cluster, "MutatingWebhookConfiguration", hook(server, "inject.example.com", "/mutate"))
    created = core.create_namespaced_config_map(
        "default", client.V1ConfigMap(metadata=client.V1ObjectMeta(generate_name="gen-"), data={"k": "v"}))
    assert created.metadata.labels == {"injected": "true"} and created.metadata.name.startswith("gen-")
    shown = server.reviews[-1]["request"]
    # Upstream calls mutating webhooks before the name is generated and the uid is set.
    assert "name" not in shown and "uid" not in shown["object"]["metadata"]
    assert shown["object"]["metadata"]["generateName"] == "gen-"
    server.handlers["/mutate"] = lambda req: json_patch(
        {"op": "add", "path": "/metadata/labels", "value": {"bad label": "x"}})
    code, status = refusal(lambda: core.create_namespaced_config_map("default", configmap("invalid")))
    assert code == 422 and status["details"]["causes"][0]["field"] == "metadata.labels"


def test_reinvocation_if_needed_sees_a_later_webhooks_change(
        cluster: Cluster, server: WebhookServer, core: client.CoreV1Api) -> None:
    calls: list[str] = []

    def first(req: Obj) -> Obj:
        calls.append("first")
        labels = req["object"]["metadata"].get("labels") or {}
        return json_patch({"op": "add", "path": "/metadata/annotations",
                           "value": {"seen": ",".join(sorted(labels))}})

    def second(req: Obj) -> Obj:
        calls.append("second")
        return json_patch({"op": "add", "path": "/metadata/labels", "value": {"second": "yes"}})
    server.handlers["/first"], server.handlers["/second"] = first, second
    register(cluster, "MutatingWebhookConfiguration",
             hook(server, "a.example.com", "/first", reinvocationPolicy="IfNeeded"),
             hook(server, "b.example.com", "/second"))
    created = core.create_namespaced_config_map("default", configmap("again"))
    assert calls == ["first", "second", "first"]
    assert created.metadata.annotations == {"seen": "second"}


def test_failure_policy_against_an_unreachable_webhook(cluster: Cluster, core: client.CoreV1Api) -> None:
    import socket
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"https://127.0.0.1:{port}/check"
    unreachable = {"name": "down.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
                   "clientConfig": {"url": url},
                   "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                              "resources": ["configmaps"]}]}
    register(cluster, "ValidatingWebhookConfiguration", dict(unreachable, failurePolicy="Ignore"))
    assert core.create_namespaced_config_map("default", configmap("ignored")).metadata.name == "ignored"
    # A webhook configuration's PUT needs its resourceVersion (AllowUnconditionalUpdate is false).
    current = request(cluster, "GET", f"{GROUP}/validatingwebhookconfigurations/hooks")[1]["metadata"]["resourceVersion"]
    code, answer, _ = request(cluster, "PUT", f"{GROUP}/validatingwebhookconfigurations/hooks",
                              {"apiVersion": "admissionregistration.k8s.io/v1",
                               "kind": "ValidatingWebhookConfiguration",
                               "metadata": {"name": "hooks", "resourceVersion": current}, "webhooks": [unreachable]})
    assert code == 200 and answer["webhooks"][0]["failurePolicy"] == "Fail"
    code, status = refusal(lambda: core.create_namespaced_config_map("default", configmap("refused")))
    message = (f'failed calling webhook "down.example.com": failed to call webhook: Post "{url}?timeout=10s": '
               f"dial tcp 127.0.0.1:{port}: connect: connection refused")
    assert (code, status["reason"], status["message"], status["details"]["causes"]) == (
        500, "InternalError", f"Internal error occurred: {message}", [{"message": message}])


def test_a_service_without_an_address_and_a_wrong_ca(cluster: Cluster, server: WebhookServer,
                                                     core: client.CoreV1Api) -> None:
    server.handlers["/ok"] = lambda req: {"allowed": True}
    elsewhere = hook(server, "nowhere.example.com", "/ok")
    elsewhere["clientConfig"]["service"]["name"] = "nowhere"
    register(cluster, "ValidatingWebhookConfiguration", elsewhere)
    code, status = refusal(lambda: core.create_namespaced_config_map("default", configmap("x")))
    assert status["message"] == ('Internal error occurred: failed calling webhook "nowhere.example.com": failed to '
                                 'call webhook: Post "https://nowhere.default.svc:443/ok": service "nowhere" not found')
    other_ca = WebhookServer()
    try:
        wrong = hook(server, "ok.example.com", "/ok")
        wrong["clientConfig"]["caBundle"] = other_ca.ca_bundle
        request(cluster, "DELETE", f"{GROUP}/validatingwebhookconfigurations/hooks")
        register(cluster, "ValidatingWebhookConfiguration", wrong)
        code, status = refusal(lambda: core.create_namespaced_config_map("default", configmap("y")))
        assert code == 500 and status["message"].endswith(
            ": tls: failed to verify certificate: x509: certificate signed by unknown authority")
    finally:
        other_ca.close()


def test_timeout_is_a_transport_timeout(cluster: Cluster, server: WebhookServer, core: client.CoreV1Api) -> None:
    released = threading.Event()

    def slow(req: Obj) -> Obj:
        released.wait(10)
        return {"allowed": True}
    server.handlers["/slow"] = slow
    register(cluster, "ValidatingWebhookConfiguration", hook(server, "slow.example.com", "/slow", timeoutSeconds=1))
    try:
        code, status = refusal(lambda: core.create_namespaced_config_map("default", configmap("late")))
    finally:
        released.set()
    assert (code, status["message"]) == (500, (
        'Internal error occurred: failed calling webhook "slow.example.com": failed to call webhook: '
        'Post "https://hooks.default.svc:443/slow?timeout=1s": context deadline exceeded'))


def test_namespace_and_object_selectors(cluster: Cluster, server: WebhookServer, core: client.CoreV1Api) -> None:
    server.handlers["/deny"] = lambda req: {"allowed": False, "status": {"message": "selected"}}
    register(cluster, "ValidatingWebhookConfiguration",
             hook(server, "ns.example.com", "/deny", namespaceSelector={"matchLabels": {"guarded": "true"}}),
             hook(server, "obj.example.com", "/deny", objectSelector={"matchLabels": {"guard": "me"}}))
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="guarded", labels={"guarded": "true"})))
    code, status = refusal(lambda: core.create_namespaced_config_map("guarded", configmap("a")))
    assert (code, status["message"]) == (400, 'admission webhook "ns.example.com" denied the request: selected')
    assert core.create_namespaced_config_map("default", configmap("free")).metadata.name == "free"
    code, status = refusal(lambda: core.create_namespaced_config_map("default", configmap("b", {"guard": "me"})))
    assert status["message"] == 'admission webhook "obj.example.com" denied the request: selected'


def test_dry_run_update_and_delete_reviews(cluster: Cluster, server: WebhookServer, core: client.CoreV1Api) -> None:
    server.handlers["/look"] = lambda req: {"allowed": True}
    register(cluster, "ValidatingWebhookConfiguration",
             hook(server, "look.example.com", "/look", operations=("*",)))
    core.create_namespaced_config_map("default", configmap("cm"), dry_run="All")
    assert server.reviews[-1]["request"]["dryRun"] is True
    assert server.reviews[-1]["request"]["options"] == {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1",
                                                       "dryRun": ["All"]}
    assert "cm" not in [m.metadata.name for m in core.list_namespaced_config_map("default").items]
    core.create_namespaced_config_map("default", configmap("cm"))
    core.patch_namespaced_config_map("cm", "default", {"data": {"k": "w"}})
    update = server.reviews[-1]["request"]
    assert update["operation"] == "UPDATE" and update["oldObject"]["data"] == {"k": "v"}
    assert update["object"]["data"] == {"k": "w"}
    core.delete_namespaced_config_map("cm", "default", propagation_policy="Foreground")
    [delete] = [r["request"] for r in server.reviews if r["request"]["operation"] == "DELETE"]
    assert (delete["operation"], delete["object"], delete["oldObject"]["data"]) == ("DELETE", None, {"k": "w"})
    assert delete["options"] == {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1",
                                 "propagationPolicy": "Foreground"}


def test_a_webhook_that_reads_the_apiserver_during_its_call(
        cluster: Cluster, server: WebhookServer, core: client.CoreV1Api) -> None:
    def allowed_if_listed(req: Obj) -> Obj:
        url = f"{cluster.url}/api/v1/namespaces/default/configmaps/allow-list"
        with urllib.request.urlopen(url, timeout=5) as answer:
            names = json.loads(answer.read())["data"]
        return {"allowed": req["name"] in names, "status": {"message": "not on the allow-list"}}
    server.handlers["/list"] = allowed_if_listed
    core.create_namespaced_config_map("default", client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="allow-list"), data={"listed": ""}))
    register(cluster, "ValidatingWebhookConfiguration", hook(server, "list.example.com", "/list"))
    assert core.create_namespaced_config_map("default", configmap("listed")).metadata.name == "listed"
    code, status = refusal(lambda: core.create_namespaced_config_map("default", configmap("other")))
    assert status["message"] == 'admission webhook "list.example.com" denied the request: not on the allow-list'


def test_webhook_addresses_from_the_config_file(server: WebhookServer) -> None:
    from fakekube.cluster.configfile import ConfigError, parse_config
    config = parse_config({"webhookAddresses": {SERVICE_HOST: server.address}})
    assert config.webhook_addresses == {SERVICE_HOST: server.address}
    with pytest.raises(ConfigError, match=r"webhookAddresses\.hooks\.default\.svc:443: must be host:port, got 'nowhere'"):
        parse_config({"webhookAddresses": {SERVICE_HOST: "nowhere"}})
    server.handlers["/deny"] = lambda req: {"allowed": False}
    with Cluster(config) as cluster:
        register(cluster, "ValidatingWebhookConfiguration", hook(server, "deny.example.com", "/deny"))
        code, status, _ = request(cluster, "POST", "/api/v1/namespaces/default/configmaps",
                                  {"metadata": {"name": "x"}})
        assert (code, status["message"]) == (400, 'admission webhook "deny.example.com" denied the request '
                                                  "without explanation")


def test_match_conditions_skip_a_webhook_or_fail_closed(cluster: Cluster, server: WebhookServer,
                                                        core: client.CoreV1Api) -> None:
    server.handlers["/deny"] = lambda req: {"allowed": False, "status": {"message": "called"}}
    conditions = [{"name": "not-skipped", "expression": "!object.metadata.name.startsWith('skip-')"},
                  {"name": "labelled", "expression": "object.metadata.labels.team == 'a'"}]
    register(cluster, "ValidatingWebhookConfiguration",
             hook(server, "cond.example.com", "/deny", matchConditions=conditions))
    assert core.create_namespaced_config_map("default", configmap("skip-me")).metadata.name == "skip-me"
    code, status = refusal(lambda: core.create_namespaced_config_map("default", configmap("team", {"team": "a"})))
    assert status["message"] == 'admission webhook "cond.example.com" denied the request: called'
    code, status = refusal(lambda: core.create_namespaced_config_map("default", configmap("unlabelled")))
    assert (code, status["reason"], status["message"]) == (
        403, "Forbidden", "configmaps \"unlabelled\" is forbidden: expression "
        "'object.metadata.labels.team == 'a'' resulted in error: no such key: labels")


def test_an_update_is_admitted_again_when_its_webhook_changed_the_object(
        cluster: Cluster, server: WebhookServer, core: client.CoreV1Api) -> None:
    seen: list[tuple[str, str]] = []

    def touch_once(req: Obj) -> Obj:
        old_labels = (req["oldObject"]["metadata"].get("labels") or {})
        seen.append((req["object"]["data"]["k"], old_labels.get("touched", "")))
        if req["object"]["data"]["k"] == "new" and not old_labels:
            body = json.dumps({"metadata": {"labels": {"touched": "yes"}}}).encode()
            touch = urllib.request.Request(f"{cluster.url}/api/v1/namespaces/default/configmaps/cm", body,
                                           {"Content-Type": "application/merge-patch+json"}, method="PATCH")
            urllib.request.urlopen(touch, timeout=5).close()
        return {"allowed": True}
    server.handlers["/touch"] = touch_once
    core.create_namespaced_config_map("default", configmap("cm"))
    register(cluster, "ValidatingWebhookConfiguration",
             hook(server, "touch.example.com", "/touch", operations=("UPDATE",)))
    patched = core.patch_namespaced_config_map("cm", "default", {"data": {"k": "new"}})
    # The outer call, the webhook's own write, then the outer update again on the new version.
    assert seen == [("new", ""), ("v", ""), ("new", "yes")]
    assert patched.data == {"k": "new"} and patched.metadata.labels == {"touched": "yes"}


def test_webhooks_see_who_asks(cluster: Cluster, server: WebhookServer, core: client.CoreV1Api) -> None:
    server.handlers["/look"] = lambda req: {"allowed": True}
    register(cluster, "ValidatingWebhookConfiguration",
             hook(server, "look.example.com", "/look", operations=("CREATE", "DELETE")))
    core.create_namespaced_service_account("default", {"metadata": {"name": "robot"}})
    token = core.create_namespaced_service_account_token("robot", "default", {"spec": {}}).status.token
    robot = client.CoreV1Api(cluster.client(token))
    robot.create_namespaced_config_map("default", configmap("mine"))
    robot.delete_namespaced_config_map("mine", "default")
    users = [(r["request"]["operation"], r["request"]["userInfo"]["username"], r["request"]["userInfo"]["groups"])
             for r in server.reviews[-2:]]
    groups = ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"]
    assert users == [("CREATE", "system:serviceaccount:default:robot", groups),
                     ("DELETE", "system:serviceaccount:default:robot", groups)]


@pytest.mark.fakekube(nodes=1)
def test_pods_a_controller_creates_go_through_mutating_webhooks(
        cluster: Cluster, server: WebhookServer, core: client.CoreV1Api) -> None:
    sidecar = {"name": "sidecar", "image": "envoy:1.30"}
    server.handlers["/inject"] = lambda req: json_patch({"op": "add", "path": "/spec/containers/-", "value": sidecar})
    register(cluster, "MutatingWebhookConfiguration",
             hook(server, "inject.example.com", "/inject", resources=("pods",),
                  objectSelector={"matchLabels": {"inject": "yes"}}))
    client.AppsV1Api(cluster.client()).create_namespaced_replica_set("default", {
        "metadata": {"name": "web"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web", "inject": "yes"}},
                              "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}}})
    pods = core.list_namespaced_pod("default", label_selector="app=web").items
    assert len(pods) == 2
    assert [[c.name for c in pod.spec.containers] for pod in pods] == [["app", "sidecar"]] * 2
    reviews = [r["request"] for r in server.reviews if r["path"].startswith("/inject")]
    assert [(r["operation"], r["userInfo"]["username"]) for r in reviews] == [("CREATE", "fakekube-admin")] * 2


def test_a_bad_answer_is_a_call_failure_and_a_bad_patch_an_internal_error(
        cluster: Cluster, server: WebhookServer, core: client.CoreV1Api) -> None:
    server.handlers["/wrong-uid"] = lambda req: {"uid": "not-it", "allowed": True}
    register(cluster, "ValidatingWebhookConfiguration", hook(server, "uid.example.com", "/wrong-uid"))
    code, status = refusal(lambda: core.create_namespaced_config_map("default", configmap("a")))
    uid = server.reviews[-1]["request"]["uid"]
    assert (code, status["message"]) == (500, (
        'Internal error occurred: failed calling webhook "uid.example.com": received invalid webhook response: '
        f'expected response.uid="{uid}", got "not-it"'))
    request(cluster, "DELETE", f"{GROUP}/validatingwebhookconfigurations/hooks")
    server.handlers["/bad-patch"] = lambda req: json_patch({"op": "replace", "path": "/nowhere/x", "value": 1})
    register(cluster, "MutatingWebhookConfiguration", hook(server, "patch.example.com", "/bad-patch",
                                                           failurePolicy="Ignore"))
    code, status = refusal(lambda: core.create_namespaced_config_map("default", configmap("b")))
    assert (code, status["reason"], status["message"]) == (500, "InternalError", (
        "Internal error occurred: replace operation does not apply: doc is missing path: /nowhere/x: missing value"))


def test_the_control_api_routes_webhooks(cluster: Cluster, server: WebhookServer) -> None:
    code, routes, _ = request(cluster, "GET", "/fakekube/v1/webhook-addresses")
    assert (code, routes) == (200, {SERVICE_HOST: server.address})
    code, routes, _ = request(cluster, "PUT", "/fakekube/v1/webhook-addresses", {"other.ns.svc:8443": server.address})
    assert (code, cluster.webhook_addresses) == (200, {"other.ns.svc:8443": server.address})
    code, status, _ = request(cluster, "PUT", "/fakekube/v1/webhook-addresses", {"x": "y"})
    assert (code, status["message"]) == (400, "body: key 'x': must be host:port, got 'x'")


def test_custom_resources_go_through_webhooks_and_patches_are_pruned(
        cluster: Cluster, server: WebhookServer) -> None:
    from tests.integration.test_crd_serving import GROUP as CR_GROUP, crd_body, crontab
    client.ApiextensionsV1Api(cluster.client()).create_custom_resource_definition(crd_body())
    server.handlers["/cron"] = lambda req: json_patch(
        {"op": "add", "path": "/spec/image", "value": "defaulted"}, {"op": "add", "path": "/spec/unknown", "value": 1})
    cron = hook(server, "cron.example.com", "/cron", resources=("crontabs",))
    cron["rules"][0].update({"apiGroups": [CR_GROUP], "apiVersions": ["v1"]})
    register(cluster, "MutatingWebhookConfiguration", cron)
    custom = client.CustomObjectsApi(cluster.client())
    body = crontab("one")
    del body["spec"]["image"]
    made = custom.create_namespaced_custom_object(CR_GROUP, "v1", "default", "crontabs", body)
    assert made["spec"]["image"] == "defaulted" and "unknown" not in made["spec"]
    assert server.reviews[-1]["request"]["kind"] == {"group": CR_GROUP, "version": "v1", "kind": "CronTab"}


def test_server_side_apply_is_admitted_with_its_field_manager(
        cluster: Cluster, server: WebhookServer) -> None:
    server.handlers["/label"] = lambda req: json_patch(
        {"op": "add", "path": "/metadata/labels/admitted", "value": req["operation"].lower()})
    register(cluster, "MutatingWebhookConfiguration",
             hook(server, "label.example.com", "/label", operations=("CREATE", "UPDATE")))
    applied = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa", "labels": {"app": "x"}},
               "data": {"k": "v"}}
    path = "/api/v1/namespaces/default/configmaps/ssa?fieldManager=tester"
    code, made, _ = request(cluster, "PATCH", path, applied, "application/apply-patch+yaml")
    assert code == 201 and made["metadata"]["labels"] == {"app": "x", "admitted": "create"}
    applied["data"] = {"k": "w"}
    code, changed, _ = request(cluster, "PATCH", path, applied, "application/apply-patch+yaml")
    assert code == 200 and changed["metadata"]["labels"] == {"app": "x", "admitted": "update"}
    assert [(r["request"]["operation"], r["request"]["options"]) for r in server.reviews] == [
        ("CREATE", {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "tester"}),
        ("UPDATE", {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1", "fieldManager": "tester"})]


# -- issue 19: a webhook's deadline, undecodable answers and patches, warnings -----------

def served_while_pending(cluster: Cluster, server: WebhookServer, call: Any) -> Obj:
    """Run ``call`` (a write its webhook holds up) on a thread. Once the webhook has the
    review, another client writes on its own connection: it must be answered while ``call``
    still waits. Then ``call`` must end (30 s: a termination guard, far past any deadline
    here); returns ``{"result": ...}`` or ``{"error": (code, status)}``."""
    outcome: Obj = {}

    def run() -> None:
        try:
            outcome["result"] = call()
        except ApiException as exc:
            outcome["error"] = (exc.status, json.loads(exc.body))
    server.received.clear()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert server.received.wait(30), "the webhook was never called"
    code, made, _ = request(cluster, "POST", "/api/v1/namespaces/default/secrets",
                            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "meanwhile"}})
    assert code == 201, made
    assert thread.is_alive(), "the slow write ended before another client was answered"
    thread.join(30)
    assert not thread.is_alive(), "the write still waits for its webhook"
    return outcome


def drip(server: WebhookServer, path: str, **options: Any) -> None:
    """A webhook that allows everything, one byte of its answer a second."""
    def answer(req: Obj) -> Answer:
        body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                           "response": {"uid": req["uid"], "allowed": True}}).encode()
        return Answer(raw=body, drip_s=1.0, **options)
    server.handlers[path] = answer


def test_a_dripping_webhook_fails_at_its_deadline_while_others_are_served(
        cluster: Cluster, server: WebhookServer, core: client.CoreV1Api) -> None:
    drip(server, "/drip")
    register(cluster, "ValidatingWebhookConfiguration", hook(server, "drip.example.com", "/drip", timeoutSeconds=2))
    outcome = served_while_pending(cluster, server, lambda: core.create_namespaced_config_map("default", configmap("late")))
    assert outcome["error"] == (500, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "reason": "InternalError", "code": 500,
        "message": 'Internal error occurred: failed calling webhook "drip.example.com": failed to call webhook: '
                   "unexpected error when reading response body. Please retry. Original error: "
                   "context deadline exceeded",
        "details": {"causes": [{"message": 'failed calling webhook "drip.example.com": failed to call webhook: '
                                           "unexpected error when reading response body. Please retry. Original "
                                           "error: context deadline exceeded"}]}})
    assert "late" not in [m.metadata.name for m in core.list_namespaced_config_map("default").items]


def test_a_webhook_dripping_its_head_is_skipped_under_ignore(
        cluster: Cluster, server: WebhookServer, core: client.CoreV1Api) -> None:
    drip(server, "/drip", drip_head=True)
    register(cluster, "MutatingWebhookConfiguration", hook(server, "drip.example.com", "/drip", timeoutSeconds=2,
                                                           failurePolicy="Ignore"))
    outcome = served_while_pending(cluster, server, lambda: core.create_namespaced_config_map("default", configmap("on")))
    assert outcome["result"].metadata.name == "on" and outcome["result"].data == {"k": "v"}


def deep_answer(uid: str, depth: int = 20_000) -> bytes:
    """An allowing review with a field nested ``depth`` levels (upstream's scanner stops at 10,000)."""
    head = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                       "response": {"uid": uid, "allowed": True}})[:-2].encode()
    return head + b', "deep": ' + b"[" * depth + b"]" * depth + b"}}"


def test_a_deeply_nested_answer_is_a_failed_call(cluster: Cluster, server: WebhookServer,
                                                 core: client.CoreV1Api) -> None:
    server.handlers["/deep"] = lambda req: Answer(raw=deep_answer(req["uid"]))
    register(cluster, "ValidatingWebhookConfiguration", hook(server, "deep.example.com", "/deep",
                                                             failurePolicy="Ignore"))
    assert core.create_namespaced_config_map("default", configmap("ignored")).metadata.name == "ignored"
    request(cluster, "DELETE", f"{GROUP}/validatingwebhookconfigurations/hooks")
    register(cluster, "ValidatingWebhookConfiguration", hook(server, "deep.example.com", "/deep"))
    code, status = refusal(lambda: core.create_namespaced_config_map("default", configmap("refused")))
    why = ('failed calling webhook "deep.example.com": failed to call webhook: couldn\'t get version/kind; '
           "json parse error: invalid character '[' exceeded max depth")
    assert (code, status["reason"], status["message"], status["details"]["causes"]) == (
        500, "InternalError", f"Internal error occurred: {why}", [{"message": why}])


def test_a_patched_object_is_decoded_into_its_type(cluster: Cluster, server: WebhookServer,
                                                   core: client.CoreV1Api) -> None:
    server.handlers["/number"] = lambda req: json_patch({"op": "add", "path": "/data/n", "value": 5})
    server.handlers["/unknown"] = lambda req: json_patch({"op": "add", "path": "/data/m", "value": "x"},
                                                         {"op": "add", "path": "/unknown", "value": 1})
    register(cluster, "MutatingWebhookConfiguration",
             hook(server, "number.example.com", "/number", failurePolicy="Ignore",
                  objectSelector={"matchLabels": {"patch": "number"}}),
             hook(server, "unknown.example.com", "/unknown", objectSelector={"matchLabels": {"patch": "unknown"}}))
    code, status = refusal(lambda: core.create_namespaced_config_map("default", configmap("n", {"patch": "number"})))
    why = "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"
    assert (code, status["reason"], status["message"], status["details"]["causes"]) == (
        500, "InternalError", f"Internal error occurred: {why}", [{"message": why}])
    code, answer, _ = request(cluster, "GET", "/api/v1/namespaces/default/configmaps/n")
    assert code == 404, answer
    code, made, _ = request(cluster, "POST", "/api/v1/namespaces/default/configmaps",
                            {"metadata": {"name": "m", "labels": {"patch": "unknown"}}, "data": {"k": "v"}})
    assert (code, made["data"], "unknown" in made) == (201, {"k": "v", "m": "x"}, False)
    assert core.list_namespaced_config_map("default").items[-1].data == {"k": "v", "m": "x"}


def nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


def test_webhook_patches_are_bound_by_the_nesting_limit(cluster: Cluster, server: WebhookServer,
                                                        core: client.CoreV1Api) -> None:
    server.handlers["/deep-value"] = lambda req: json_patch({"op": "add", "path": "/data/deep", "value": nested(400)})
    register(cluster, "MutatingWebhookConfiguration", hook(server, "deep.example.com", "/deep-value",
                                                           failurePolicy="Ignore"))
    made = core.create_namespaced_config_map("default", configmap("skipped"))
    assert made.data == {"k": "v"}
    request(cluster, "DELETE", f"{GROUP}/mutatingwebhookconfigurations/hooks")
    register(cluster, "MutatingWebhookConfiguration", hook(server, "deep.example.com", "/deep-value"))
    code, status = refusal(lambda: core.create_namespaced_config_map("default", configmap("refused")))
    assert (code, status["message"]) == (500, (
        'Internal error occurred: failed calling webhook "deep.example.com": received undecodable patch in webhook '
        "response: invalid character '[' exceeded max depth"))
    # Each operation nests 60 levels, their sum 122: the patch decodes, the patched object does not.
    request(cluster, "DELETE", f"{GROUP}/mutatingwebhookconfigurations/hooks")
    server.handlers["/stacked"] = lambda req: json_patch(
        {"op": "add", "path": "/data/deep", "value": nested(60)},
        {"op": "add", "path": "/data/deep" + "/0" * 59 + "/-", "value": nested(60)})
    register(cluster, "MutatingWebhookConfiguration", hook(server, "stacked.example.com", "/stacked",
                                                           failurePolicy="Ignore"))
    code, status = refusal(lambda: core.create_namespaced_config_map("default", configmap("stacked")))
    assert (code, status["reason"], status["message"]) == (500, "InternalError", (
        "Internal error occurred: couldn't get version/kind; json parse error: invalid character '[' exceeded max depth"))
    assert [m.metadata.name for m in core.list_namespaced_config_map("default").items
            if m.metadata.name != "kube-root-ca.crt"] == ["skipped"]


def test_a_webhook_may_not_move_an_object_to_another_namespace(cluster: Cluster, server: WebhookServer,
                                                              core: client.CoreV1Api) -> None:
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="other")))
    core.create_namespaced_config_map("default", configmap("cm"))
    server.handlers["/move"] = lambda req: json_patch({"op": "replace", "path": "/metadata/namespace", "value": "other"})
    register(cluster, "MutatingWebhookConfiguration", hook(server, "move.example.com", "/move",
                                                           operations=("CREATE", "UPDATE")))
    message = "the namespace of the provided object does not match the namespace sent on the request"
    code, status = refusal(lambda: core.create_namespaced_config_map("default", configmap("moved")))
    assert (code, status["reason"], status["message"]) == (400, "BadRequest", message)
    code, status = refusal(lambda: core.patch_namespaced_config_map("cm", "default", {"data": {"k": "w"}}))
    assert (code, status["reason"], status["message"]) == (400, "BadRequest", message)
    assert "moved" not in [m.metadata.name for m in core.list_namespaced_config_map("other").items]
    assert "cm" not in [m.metadata.name for m in core.list_namespaced_config_map("other").items]
    assert core.read_namespaced_config_map("cm", "default").data == {"k": "v"}


def test_warnings_are_deduplicated_and_bounded_as_upstreams_recorder(
        cluster: Cluster, server: WebhookServer) -> None:
    long_ones = [f"{i:02d}" + "x" * 298 for i in range(20)]
    server.handlers["/warn"] = lambda req: {
        "allowed": True, "warnings": ["same"] * 20_000 + ["line\r\nX-Injected: yes", "naïve ☃"] + long_ones}
    register(cluster, "ValidatingWebhookConfiguration", hook(server, "warn.example.com", "/warn"))
    code, made, response = request(cluster, "POST", "/api/v1/namespaces/default/configmaps",
                                   {"metadata": {"name": "warned"}, "data": {"k": "v"}})
    assert code == 201, made
    assert response.getheader("X-Injected") is None
    # Go writes UTF-8; http.client reads header bytes as latin-1.
    headers = [h.encode("latin-1").decode("utf-8") for h in response.headers.get_all("Warning")]
    # "same" once, the text with control characters never; the long ones whole while they fit
    # in 4,096 characters (13 of them), then every one cut to 256 until 4,096 are written.
    assert headers == ['299 - "same"', '299 - "naïve ☃"'] + [f'299 - "{text[:256]}"' for text in long_ones[:16]]


def test_every_validating_webhook_is_called_and_a_denial_keeps_their_warnings(
        cluster: Cluster, server: WebhookServer) -> None:
    """Upstream calls the validating webhooks in parallel and records each one's warnings as
    it answers: a request one of them denies still carries the others' Warning headers."""
    server.handlers["/deny"] = lambda req: {"allowed": False, "status": {"message": "no"}, "warnings": ["from deny"]}
    server.handlers["/warn"] = lambda req: {"allowed": True, "warnings": ["from warn"]}
    register(cluster, "ValidatingWebhookConfiguration", hook(server, "deny.example.com", "/deny"),
             hook(server, "warn.example.com", "/warn"))
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}
    code, status, response = request(cluster, "POST", "/api/v1/namespaces/default/configmaps", body)
    assert (code, status["message"]) == (400, 'admission webhook "deny.example.com" denied the request: no')
    assert response.headers.get_all("Warning") == ['299 - "from deny"', '299 - "from warn"']
    assert [r["path"].split("?")[0] for r in server.reviews] == ["/deny", "/warn"]


@pytest.mark.parametrize("content_type, shown", [("application/json", "unknown"), ("text/plain", "webhook failed")])
def test_a_failing_webhooks_body_is_shown_only_when_it_is_text(
        cluster: Cluster, server: WebhookServer, core: client.CoreV1Api, content_type: str, shown: str) -> None:
    """client-go's newUnstructuredResponseError: a non-Status error body is quoted only when text."""
    server.handlers["/fail"] = lambda req: Answer(raw=b"webhook failed", status="500 Internal Server Error",
                                                 content_type=content_type)
    register(cluster, "ValidatingWebhookConfiguration", hook(server, "fail.example.com", "/fail"))
    code, status = refusal(lambda: core.create_namespaced_config_map("default", configmap("a")))
    assert (code, status["message"]) == (500, (
        f'Internal error occurred: failed calling webhook "fail.example.com": failed to call webhook: an error on the '
        f'server ("{shown}") has prevented the request from succeeding'))


def test_an_updates_mutating_webhooks_see_the_object_as_sent_its_validating_ones_as_stored(
        cluster: Cluster, server: WebhookServer, core: client.CoreV1Api) -> None:
    """The storage's BeforeUpdate fills uid, creationTimestamp and resourceVersion after
    mutating admission: a PUT without them reaches a mutating webhook without them."""
    server.handlers["/see"] = lambda req: {"allowed": True}
    register(cluster, "MutatingWebhookConfiguration", hook(server, "see.example.com", "/see", operations=("UPDATE",)))
    register_validating = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
                           "metadata": {"name": "see"}, "webhooks": [hook(server, "see.example.com", "/see",
                                                                          operations=("UPDATE",))]}
    assert request(cluster, "POST", f"{GROUP}/validatingwebhookconfigurations", register_validating)[0] == 201
    stored = core.create_namespaced_config_map("default", configmap("a"))
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "w"}}
    code, updated, _ = request(cluster, "PUT", "/api/v1/namespaces/default/configmaps/a", body)
    assert code == 200 and updated["metadata"].get("uid") == stored.metadata.uid, updated
    mutating, validating = [r["request"]["object"]["metadata"] for r in server.reviews]
    assert not {"uid", "creationTimestamp", "resourceVersion"} & set(mutating)
    assert (validating["uid"], validating["resourceVersion"]) == (stored.metadata.uid, stored.metadata.resource_version)
