"""A kopf operator against a served fakekube: handlers, status patches, finalizers, RBAC.

The operator runs in-process (``tests/clients/operators/kopf_runner.py``), standalone,
watching the ``default`` namespace. Tests observe what a user observes: handlers fire
(create/update/delete, in order), kopf's writes land (annotations, status through the
status subresource or the main resource), and deletion waits for the delete handler
because kopf's finalizer holds the object. With RBAC on, the operator runs as a
ServiceAccount holding the rules kopf's docs list, and is denied what it lacks. kopf's
own admission webhooks (validating and mutating) are registered by kopf and called by
the cluster over HTTPS.
"""

from __future__ import annotations

import copy
import json
import datetime
import ipaddress
import threading
from pathlib import Path
from typing import Any

import kopf
import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from kubernetes import client
from kubernetes.client.rest import ApiException

from fakekube import Cluster
from tests.clients.conftest import crd_established, eventually, widget, widget_crd
from tests.clients.operators.kopf_runner import KopfThread

FINALIZER = "kopf.zalando.org/KopfFinalizerMarker"
#: Wall-clock limit of a blocked delete handler (the test releases it long before).
RELEASE_TIMEOUT_S = 20.0


class Recorder:
    """What the handlers saw, and a gate that holds the delete handler until released."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.release_delete = threading.Event()
        self.deleting = threading.Event()


def operator_for(recorder: Recorder, *resource: str, **filters: Any) -> kopf.OperatorRegistry:
    """A registry with create/update/delete handlers on ``resource`` that record calls."""
    registry = kopf.OperatorRegistry()

    @kopf.on.create(*resource, id="created", registry=registry, **filters)
    def created(name: str, patch: kopf.Patch, **_: Any) -> dict[str, str]:
        recorder.calls.append(("create", name))
        patch.metadata.annotations["shop.example.com/seen"] = "yes"
        patch.status["phase"] = "Ready"
        return {"message": f"hello {name}"}

    @kopf.on.update(*resource, id="updated", registry=registry, field="spec", **filters)
    def updated(name: str, old: Any, new: Any, **_: Any) -> None:
        recorder.calls.append(("update", name))

    @kopf.on.delete(*resource, id="deleted", registry=registry, **filters)
    def deleted(name: str, **_: Any) -> None:
        recorder.deleting.set()
        recorder.release_delete.wait(RELEASE_TIMEOUT_S)
        recorder.calls.append(("delete", name))

    return registry


@pytest.mark.parametrize("initial_streaming", [False, True], ids=["list-then-watch", "watch-list"])
def test_configmap_operator(fakekube: Cluster, initial_streaming: bool) -> None:
    """On a built-in (no status subresource, no schema): handlers, annotations, finalizer."""
    recorder = Recorder()
    core = client.CoreV1Api(fakekube.client())
    core.create_namespaced_config_map("default", {"metadata": {"name": "before", "labels": {"shop": "yes"}}})
    with KopfThread(operator_for(recorder, "configmaps", labels={"shop": "yes"}), initial_streaming=initial_streaming):
        eventually(lambda: ("create", "before") in recorder.calls)
        core.create_namespaced_config_map("default", {"metadata": {"name": "cm", "labels": {"shop": "yes"}},
                                                      "data": {"k": "v"}})
        core.create_namespaced_config_map("default", {"metadata": {"name": "ignored"}, "data": {"k": "v"}})
        stored = eventually(lambda: _annotated(fakekube.get("v1", "ConfigMap", "cm")))
        assert stored["metadata"]["finalizers"] == [FINALIZER]
        assert recorder.calls == [("create", "before"), ("create", "cm")]

        core.delete_namespaced_config_map("cm", "default")
        assert recorder.deleting.wait(RELEASE_TIMEOUT_S)
        held = fakekube.get("v1", "ConfigMap", "cm")
        assert held["metadata"]["deletionTimestamp"] and held["metadata"]["finalizers"] == [FINALIZER]
        recorder.release_delete.set()
        eventually(lambda: not fakekube.list("v1", "ConfigMap", "default", field_selector="metadata.name=cm"))
    assert recorder.calls == [("create", "before"), ("create", "cm"), ("delete", "cm")]
    assert "finalizers" not in fakekube.get("v1", "ConfigMap", "ignored")["metadata"]


def _annotated(obj: dict[str, Any]) -> dict[str, Any] | None:
    annotations = obj["metadata"].get("annotations", {})
    return obj if annotations.get("shop.example.com/seen") == "yes" and obj["metadata"].get("finalizers") else None


def _created(obj: dict[str, Any]) -> dict[str, Any] | None:
    return obj if obj.get("status", {}).get("created") else None


def gizmo_crd() -> dict[str, Any]:
    """Like the Widget CRD but without a status subresource: kopf patches status on the object."""
    crd = copy.deepcopy(widget_crd())
    crd["metadata"]["name"] = "gizmos.shop.example.com"
    crd["spec"]["names"] = {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"}
    del crd["spec"]["versions"][0]["subresources"]
    return crd


@pytest.mark.parametrize("crd", [widget_crd(), gizmo_crd()], ids=["status-subresource", "status-on-object"])
def test_custom_resource_operator(fakekube: Cluster, crd: dict[str, Any]) -> None:
    plural, kind = crd["spec"]["names"]["plural"], crd["spec"]["names"]["kind"]
    fakekube.create(crd)
    eventually(lambda: crd_established(fakekube, crd["metadata"]["name"]))
    custom = client.CustomObjectsApi(fakekube.client())
    where = ("shop.example.com", "v1", "default", plural)
    recorder = Recorder()
    with KopfThread(operator_for(recorder, "shop.example.com", "v1", plural)):
        custom.create_namespaced_custom_object(*where, {**widget("one", size=2), "kind": kind})

        stored = eventually(lambda: _created(fakekube.get("shop.example.com/v1", kind, "one")))
        assert stored["status"]["phase"] == "Ready"
        assert stored["status"]["created"] == {"message": "hello one"}
        assert stored["metadata"]["finalizers"] == [FINALIZER]
        assert stored["metadata"]["annotations"]["shop.example.com/seen"] == "yes"

        custom.patch_namespaced_custom_object(*where, "one", {"spec": {"size": 3}})
        eventually(lambda: ("update", "one") in recorder.calls)

        custom.delete_namespaced_custom_object(*where, "one")
        assert recorder.deleting.wait(RELEASE_TIMEOUT_S)
        assert fakekube.get("shop.example.com/v1", kind, "one")["metadata"]["deletionTimestamp"]
        recorder.release_delete.set()
        eventually(lambda: not fakekube.list("shop.example.com/v1", kind, "default"))
    assert recorder.calls == [("create", "one"), ("update", "one"), ("delete", "one")]


#: What a standalone kopf operator of Widgets in one namespace needs (kopf's docs, "RBAC"):
#: discovery of CRDs and namespaces cluster-wide; its resources and events in its namespace.
OPERATOR_CLUSTER_RULES = [
    {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": ["list", "watch"]},
    {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["list", "watch"]},
]
OPERATOR_RULES = [
    {"apiGroups": ["shop.example.com"], "resources": ["widgets"], "verbs": ["list", "watch", "patch"]},
    {"apiGroups": ["shop.example.com"], "resources": ["widgets/status"], "verbs": ["patch"]},
    {"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create"]},
]


def service_account_kubeconfig(cluster: Cluster, namespace: str, name: str, path: Path) -> Path:
    """The cluster's kubeconfig with the user swapped for a token of ServiceAccount ``name``."""
    core = client.CoreV1Api(cluster.client())
    token = core.create_namespaced_service_account_token(name, namespace, {"spec": {}}).status.token
    config = yaml.safe_load(Path(cluster.kubeconfig).read_text())
    user = config["contexts"][0]["context"]["user"]  # kind-fakekube over TLS
    config["users"] = [{"name": user, "user": {"token": token}}]
    path.write_text(yaml.safe_dump(config))
    return path


def grant_operator(cluster: Cluster, rules: list[dict[str, Any]]) -> None:
    """ServiceAccount default/widgets, bound to OPERATOR_CLUSTER_RULES and ``rules`` in default."""
    rbac = "rbac.authorization.k8s.io/v1"
    name = {"name": "widgets-operator"}
    subjects = [{"kind": "ServiceAccount", "name": "widgets", "namespace": "default"}]
    cluster.create({"apiVersion": "v1", "kind": "ServiceAccount",
                    "metadata": {"name": "widgets", "namespace": "default"}})
    cluster.create({"apiVersion": rbac, "kind": "ClusterRole", "metadata": name, "rules": OPERATOR_CLUSTER_RULES})
    cluster.create({"apiVersion": rbac, "kind": "Role", "metadata": {**name, "namespace": "default"}, "rules": rules})
    for kind, role in (("ClusterRoleBinding", "ClusterRole"), ("RoleBinding", "Role")):
        metadata = name if kind == "ClusterRoleBinding" else {**name, "namespace": "default"}
        cluster.create({"apiVersion": rbac, "kind": kind, "metadata": metadata, "subjects": subjects,
                        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role, "name": "widgets-operator"}})


@pytest.mark.fakekube(authorization_mode="RBAC")
def test_operator_runs_as_a_service_account_with_the_rbac_kopf_documents(
        fakekube: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fakekube.create(widget_crd())
    eventually(lambda: crd_established(fakekube, "widgets.shop.example.com"))
    grant_operator(fakekube, OPERATOR_RULES)
    monkeypatch.setenv("KUBECONFIG", str(service_account_kubeconfig(fakekube, "default", "widgets",
                                                                    tmp_path / "operator.kubeconfig")))
    custom = client.CustomObjectsApi(fakekube.client())  # the test itself stays the admin
    where = ("shop.example.com", "v1", "default", "widgets")
    recorder = Recorder()
    recorder.release_delete.set()
    with KopfThread(operator_for(recorder, "shop.example.com", "v1", "widgets")):
        custom.create_namespaced_custom_object(*where, widget("one", size=2))
        stored = eventually(lambda: _created(fakekube.get("shop.example.com/v1", "Widget", "one")))
        assert stored["status"]["phase"] == "Ready" and stored["metadata"]["finalizers"] == [FINALIZER]
        custom.delete_namespaced_custom_object(*where, "one")
        eventually(lambda: not fakekube.list("shop.example.com/v1", "Widget", "default"))
    assert recorder.calls == [("create", "one"), ("delete", "one")]


@pytest.mark.fakekube(authorization_mode="RBAC")
def test_operator_without_status_patch_rights_is_denied(fakekube: Cluster, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    """The same operator lacking ``patch`` on widgets/status: kopf's status write is a 403."""
    fakekube.create(widget_crd())
    eventually(lambda: crd_established(fakekube, "widgets.shop.example.com"))
    grant_operator(fakekube, [rule for rule in OPERATOR_RULES if rule["resources"] != ["widgets/status"]])
    monkeypatch.setenv("KUBECONFIG", str(service_account_kubeconfig(fakekube, "default", "widgets",
                                                                    tmp_path / "operator.kubeconfig")))
    recorder = Recorder()
    recorder.release_delete.set()
    with KopfThread(operator_for(recorder, "shop.example.com", "v1", "widgets")):
        client.CustomObjectsApi(fakekube.client()).create_namespaced_custom_object(
            "shop.example.com", "v1", "default", "widgets", widget("one", size=2))
        forbidden = ('widgets.shop.example.com "one" is forbidden: User "system:serviceaccount:default:widgets" '
                     'cannot patch resource "widgets/status" in API group "shop.example.com" in the namespace '
                     '"default"')
        eventually(lambda: any(forbidden in record.getMessage() for record in caplog.records))
    assert "status" not in fakekube.get("shop.example.com/v1", "Widget", "one")


def self_signed_certificate(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 that is its own CA (the webhook's caBundle), and its key."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    start = datetime.datetime(2025, 1, 1)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(1).not_valid_before(start).not_valid_after(start + datetime.timedelta(days=36500))
                   .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                                  critical=False)
                   .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                   .sign(key, hashes.SHA256()))
    cert_path, key_path = directory / "webhook.crt", directory / "webhook.key"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


def test_kopf_admission_webhooks(fakekube: Cluster, tmp_path: Path) -> None:
    """kopf serves its webhooks and writes their configurations (``auto.kopf.dev``); the
    cluster calls them: a too large widget is refused with kopf's message, a colour is defaulted."""
    fakekube.create(widget_crd())
    eventually(lambda: crd_established(fakekube, "widgets.shop.example.com"))
    cert, key = self_signed_certificate(tmp_path)
    registry = kopf.OperatorRegistry()

    @kopf.on.startup(registry=registry)
    def serve_webhooks(settings: kopf.OperatorSettings, **_: Any) -> None:
        settings.admission.server = kopf.WebhookServer(addr="127.0.0.1", host="127.0.0.1", port=None,
                                                       certfile=str(cert), pkeyfile=str(key), cafile=str(cert))
        settings.admission.managed = "auto.kopf.dev"

    @kopf.on.validate("shop.example.com", "v1", "widgets", id="size-limit", registry=registry)
    def size_limit(spec: kopf.Spec, **_: Any) -> None:
        if spec.get("size", 0) > 10:
            raise kopf.AdmissionError("a widget is at most 10", code=422)

    @kopf.on.mutate("shop.example.com", "v1", "widgets", id="colour", registry=registry)
    def colour(spec: kopf.Spec, patch: kopf.Patch, **_: Any) -> None:
        if "color" not in spec:
            patch.spec["color"] = "grey"

    admission = "admissionregistration.k8s.io/v1"
    custom = client.CustomObjectsApi(fakekube.client())
    where = ("shop.example.com", "v1", "default", "widgets")
    with KopfThread(registry):
        # kopf writes each configuration, then its webhooks once its server listens
        eventually(lambda: all(config.get("webhooks") for kind in ("ValidatingWebhookConfiguration",
                                                                   "MutatingWebhookConfiguration")
                               for config in fakekube.list(admission, kind, "") or [{}]))
        with pytest.raises(ApiException) as refused:
            custom.create_namespaced_custom_object(*where, widget("big", size=11))
        assert refused.value.status == 422
        assert json.loads(refused.value.body)["message"] == (
            'admission webhook "size-limit.auto.kopf.dev" denied the request: a widget is at most 10')
        assert custom.create_namespaced_custom_object(*where, widget("small", size=2))["spec"] == {
            "size": 2, "color": "grey"}
    assert [w["metadata"]["name"] for w in fakekube.list("shop.example.com/v1", "Widget", "default")] == ["small"]
