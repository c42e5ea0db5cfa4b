"""The admission chain: kube-apiserver's default plugins in its order, enabled by upstream's
names (``--enable-admission-plugins``/``--disable-admission-plugins``), each plugin's
effect, DefaultTolerationSeconds on update, and CONNECT requests through the webhooks.

Expected answers were measured on a real kube-apiserver 1.36: its flag errors, a PUT of a
pod manifest without tolerations (200, the tolerations put back), an exec, attach,
port-forward and proxy reaching a webhook as CONNECT with their options as the object.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest

from fakekube import Cluster, ClusterConfig
from fakekube.api.admission import DEFAULT_PLUGINS, UnknownPlugins, enabled_plugins
from fakekube.api.machinery.errors import ApiError
from fakekube.cluster.configfile import ConfigError
from tests.integration.webhook_server import WebhookServer

Obj = dict[str, Any]
SERVICE_HOST = "hooks.default.svc:443"

#: What fakekube runs by default: upstream's default-on plugins it implements, in upstream's order.
IMPLEMENTED_DEFAULTS = ["NamespaceLifecycle", "LimitRanger", "ServiceAccount", "TaintNodesByCondition", "Priority",
                        "DefaultTolerationSeconds",
                        "DefaultStorageClass", "StorageObjectInUseProtection", "CertificateSubjectRestriction",
                        "FakekubeBehaviour",
                        "MutatingAdmissionWebhook", "ValidatingAdmissionPolicy", "ValidatingAdmissionWebhook",
                        "ResourceQuota"]


def pod(name: str = "p", **spec: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}


def test_the_default_chain_is_upstreams_in_upstreams_order() -> None:
    assert Cluster().api.admission.names == IMPLEMENTED_DEFAULTS
    # The default-on names fakekube does not implement are still upstream's defaults.
    assert {"TaintNodesByCondition", "RuntimeClass", "PodSecurity", "CertificateApproval"} <= set(DEFAULT_PLUGINS)


def test_disabled_plugins_leave_a_pod_as_the_client_sent_it() -> None:
    cluster = Cluster(disable_admission_plugins=("ServiceAccount", "Priority", "DefaultTolerationSeconds"))
    spec = cluster.create(pod())["spec"]
    assert [k for k in ("serviceAccountName", "volumes", "tolerations", "priority", "preemptionPolicy")
            if k in spec] == []
    assert "ServiceAccount" not in cluster.api.admission.names


def test_an_enabled_plugin_joins_the_chain_at_its_upstream_place() -> None:
    cluster = Cluster(enable_admission_plugins=("AlwaysDeny",))
    assert cluster.api.admission.names == IMPLEMENTED_DEFAULTS + ["AlwaysDeny"]
    with pytest.raises(ApiError) as refused:
        cluster.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}})
    assert (refused.value.code, refused.value.message) == (
        403, 'configmaps "c" is forbidden: admission control is denying all modifications')
    # Reads are not admitted; writes are, controllers' too: the root CA publisher's ConfigMap was refused.
    assert cluster.list("v1", "ConfigMap", "default") == []


def test_upstream_names_fakekube_does_not_simulate_are_accepted() -> None:
    assert enabled_plugins(("AlwaysPullImages", "PodNodeSelector"), ("PodSecurity",))[:3] == (
        "NamespaceLifecycle", "LimitRanger", "ServiceAccount")
    assert Cluster(enable_admission_plugins=("NodeRestriction",)).api.admission.names == IMPLEMENTED_DEFAULTS


def test_unknown_names_are_refused_with_upstreams_words() -> None:
    with pytest.raises(UnknownPlugins) as unknown:
        ClusterConfig(enable_admission_plugins=("Foo",))
    assert str(unknown.value) == 'enable-admission-plugins plugin "Foo" is unknown'
    with pytest.raises(UnknownPlugins) as several:
        ClusterConfig(enable_admission_plugins=("Foo", "NamespaceLifecycle"),
                      disable_admission_plugins=("NamespaceLifecycle", "Bar"))
    assert str(several.value) == (
        '[enable-admission-plugins plugin "Foo" is unknown, disable-admission-plugins plugin "Bar" is unknown, '
        "[NamespaceLifecycle] in enable-admission-plugins and disable-admission-plugins overlapped]")


def test_the_yaml_config_names_plugins(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text("disableAdmissionPlugins: [ServiceAccount]\nenableAdmissionPlugins: AlwaysAdmit, AlwaysDeny\n")
    cluster = Cluster.from_config_file(path)
    assert cluster.api.admission.names[0] == "AlwaysAdmit" and "ServiceAccount" not in cluster.api.admission.names
    path.write_text("disableAdmissionPlugins: [ServiceAcount]\n")
    with pytest.raises(ConfigError, match='disableAdmissionPlugins: disable-admission-plugins plugin '
                                          '"ServiceAcount" is unknown'):
        Cluster.from_config_file(path)


def test_fakekube_serve_flags_name_plugins_over_the_config_file(tmp_path: Path) -> None:
    from fakekube.cli.main import build_parser, cluster_config
    path = tmp_path / "cluster.yaml"
    path.write_text("disableAdmissionPlugins: [Priority]\n")
    args = build_parser().parse_args(["serve", "--config", str(path), "--enable-admission-plugins", "AlwaysDeny",
                                      "--disable-admission-plugins", "ServiceAccount, ResourceQuota"])
    config = cluster_config(args, None)
    assert (config.enable_admission_plugins, config.disable_admission_plugins) == (
        ("AlwaysDeny",), ("ServiceAccount", "ResourceQuota"))
    config = cluster_config(build_parser().parse_args(["serve", "--config", str(path)]), None)
    assert (config.enable_admission_plugins, config.disable_admission_plugins) == ((), ("Priority",))


def test_fakekube_serve_refuses_an_unknown_plugin_flag() -> None:
    done = subprocess.run([sys.executable, "-m", "fakekube", "serve", "--enable-admission-plugins", "Foo,AlwaysDeny"],
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (2, 'fakekube: enable-admission-plugins plugin "Foo" is unknown\n')


# -- DefaultTolerationSeconds on update ---------------------------------------------------

def test_a_replace_without_tolerations_gets_them_back() -> None:
    # kubectl replace -f pod.yaml: the manifest has no tolerations; upstream admits the update
    # too, so the two defaults come back and nothing changed (200).
    cluster = Cluster().start()
    try:
        cluster.create({"apiVersion": "v1", "kind": "ServiceAccount",
                        "metadata": {"name": "sa2", "namespace": "default"}, "automountServiceAccountToken": False})
        manifest = pod("p2", serviceAccountName="sa2")
        created = cluster.create(manifest)
        code, replaced = send(cluster, "PUT", "/api/v1/namespaces/default/pods/p2", manifest)
    finally:
        cluster.stop()
    assert code == 200, replaced
    assert replaced["spec"]["tolerations"] == created["spec"]["tolerations"] == [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300}]


def test_a_node_created_through_the_api_is_not_ready_for_scheduling_until_it_is_ready() -> None:
    """TaintNodesByCondition: a new Node gets the not-ready NoSchedule taint (once; kube-apiserver
    1.36 answers so); the node lifecycle controller takes it away when its kubelet reports
    Ready. The nodes the cluster registers itself never carry it."""
    cluster = Cluster(nodes=1).start()
    try:
        assert cluster.get("v1", "Node", "node-1")["spec"].get("taints") is None
        code, created = send(cluster, "POST", "/api/v1/nodes", {"metadata": {"name": "extra"}})
        not_ready = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
        assert code == 201 and created["spec"]["taints"] == [not_ready]
        code, tainted = send(cluster, "POST", "/api/v1/nodes", {"metadata": {"name": "tainted"},
                                                                 "spec": {"taints": [not_ready]}})
        assert code == 201 and tainted["spec"]["taints"] == [not_ready]
        cluster.settle()
        assert cluster.get("v1", "Node", "extra")["spec"].get("taints") is None
    finally:
        cluster.stop()

def send(cluster: Cluster, method: str, path: str, body: Obj | None = None) -> tuple[int, Obj]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(cluster.url + path, data, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


# -- the in-tree plugins' order -----------------------------------------------------------

def test_namespace_lifecycle_refuses_before_the_service_account_is_looked_up() -> None:
    cluster = Cluster()
    with pytest.raises(ApiError) as refused:
        cluster.create({**pod(), "metadata": {"name": "p", "namespace": "nowhere"}})
    assert (refused.value.code, refused.value.message) == (404, 'namespaces "nowhere" not found')


def test_the_initial_namespaces_cannot_be_deleted() -> None:
    cluster = Cluster()
    with pytest.raises(ApiError) as refused:
        cluster.delete("v1", "Namespace", "default", "")
    assert (refused.value.code, refused.value.message) == (403, 'namespaces "default" is forbidden: this namespace '
                                                                'may not be deleted')


# -- CONNECT ------------------------------------------------------------------------------

@pytest.fixture
def server() -> Iterator[WebhookServer]:
    webhook_server = WebhookServer()
    yield webhook_server
    webhook_server.close()


def test_exec_attach_port_forward_and_proxy_reach_webhooks_as_connect(server: WebhookServer) -> None:
    seen: list[Obj] = []

    def deny(request: Obj) -> Obj:
        seen.append(request)
        return {"allowed": False, "status": {"code": 403, "reason": "Forbidden", "message": "no exec"}}
    server.handlers["/validate"] = deny
    cluster = Cluster().start()
    try:
        cluster.webhook_addresses[SERVICE_HOST] = server.address
        hook = {"name": "c.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
                "clientConfig": {"service": {"namespace": "default", "name": "hooks", "path": "/validate"},
                                 "caBundle": server.ca_bundle},
                "rules": [{"operations": ["CONNECT"], "apiGroups": [""], "apiVersions": ["v1"],
                           "resources": ["pods/exec", "pods/attach", "pods/portforward", "pods/proxy"]}]}
        cluster.create({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
                        "metadata": {"name": "c"}, "webhooks": [hook]})
        base = "/api/v1/namespaces/default/pods/nosuch"
        answers = [send(cluster, method, base + path) for method, path in (
            ("POST", "/exec?command=ls&command=-l&stdout=true&stdin=false&container=c"),
            ("POST", "/attach?stdout=1&tty=true"), ("GET", "/portforward?ports=80,81"),
            ("GET", "/proxy/some/path?x=1"))]
    finally:
        cluster.stop()
    assert {(code, answer["message"]) for code, answer in answers} == {
        (403, 'admission webhook "c.example.com" denied the request: no exec')}
    objects = [request["object"] for request in seen]
    assert objects == [
        {"kind": "PodExecOptions", "apiVersion": "v1", "stdout": True, "container": "c", "command": ["ls", "-l"]},
        {"kind": "PodAttachOptions", "apiVersion": "v1", "stdout": True, "tty": True},
        {"kind": "PodPortForwardOptions", "apiVersion": "v1", "ports": [80, 81]},
        {"kind": "PodProxyOptions", "apiVersion": "v1", "path": "/some/path"}]
    first = seen[0]
    assert (first["operation"], first["kind"], first["subResource"], first["name"], first["options"],
            first["oldObject"], first["dryRun"]) == (
        "CONNECT", {"group": "", "version": "v1", "kind": "PodExecOptions"}, "exec", "nosuch", None, None, False)


# -- which plugins a write calls ----------------------------------------------------------
def test_a_plugin_that_declares_its_resources_is_not_called_for_others() -> None:
    """A plugin's ``resources`` say which resources a phase acts on: a configmap create
    does not call a pods-only plugin (upstream's plugins check the resource inside; the
    chain skips the call instead), a pod create does."""
    from fakekube.api.admission.attributes import CREATE, Attributes
    from fakekube.api.admission.chain import Chain
    from fakekube.api.admission.interfaces import Handler

    seen: list[str] = []

    class PodsOnly(Handler):
        name = "PodsOnly"
        operations = frozenset((CREATE,))
        resources = {"admit": frozenset({("", "pods")})}

        def admit(self, a: Attributes) -> None:
            seen.append(a.rt.plural)

    cluster = Cluster()
    cluster.api.admission = Chain(cluster.api.admission.plugins + (PodsOnly(),))
    cluster.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "default"}})
    cluster.create(pod())
    assert seen == ["pods"]


def _bare(rt: Any) -> Obj:
    meta = {"name": "x", "namespace": "default"} if rt.namespaced else {"name": "x"}
    return {"apiVersion": rt.api_version, "kind": rt.kind, "metadata": meta, "spec": {}, "status": {}}


def test_a_plugin_does_nothing_for_a_resource_it_declares_it_leaves_alone() -> None:
    """The declarations are an optimization only: every enabled plugin, called anyway for
    every resource its phase declares it leaves alone, changes nothing and refuses nothing
    (so skipping the call gives the same answers)."""
    import copy

    from fakekube.api.admission.attributes import CREATE, DELETE, UPDATE, Attributes
    from fakekube.api.admission.interfaces import Handler

    cluster = Cluster()
    checked = 0
    for plugin in cluster.api.admission.plugins:
        assert isinstance(plugin, Handler)
        for phase, only in plugin.resources.items():
            for rt in cluster.api.registry:
                if rt.key in only:
                    continue
                for operation in sorted(plugin.operations & {CREATE, UPDATE, DELETE}):
                    for subresource in ("", "status"):
                        obj = None if operation == DELETE else _bare(rt)
                        old = None if operation == CREATE else _bare(rt)
                        a = Attributes(operation, rt, "default" if rt.namespaced else "", "x", subresource,
                                       obj=copy.deepcopy(obj), old=copy.deepcopy(old))
                        getattr(plugin, phase)(a)
                        assert (a.obj, a.warnings) == (obj, []), (plugin.name, phase, rt.plural, operation)
                        checked += 1
    assert checked > 1000


def test_the_chains_plans_stay_bounded_as_custom_resources_come_and_go() -> None:
    from fakekube.api.admission import chain

    plugins = Cluster().api.admission
    for index in range(chain.MAX_PLANS + 10):
        plugins._plan("admit", "CREATE", (f"g{index}.example.com", "widgets"))
    assert plugins._plans is not None and 0 < len(plugins._plans) <= chain.MAX_PLANS
    assert [p.name for p in plugins._plan("admit", "CREATE", ("", "configmaps"))] == [
        "NamespaceLifecycle", "MutatingAdmissionWebhook"]
