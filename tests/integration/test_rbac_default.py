"""Authorization off (the default): every caller is served, the bootstrap policy exists, and
authentication still names who asked; the switch in the YAML config and the CLI."""

from __future__ import annotations

import base64
import json
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from fakekube import Cluster
from fakekube.cluster.configfile import ConfigError, parse_config

from .test_bad_input import request


def test_every_caller_is_served_and_a_valid_token_names_its_user(fakekube: Cluster) -> None:
    assert request(fakekube, "GET", "/api/v1/nodes")[0] == 200  # no token: the admin
    assert client.CoreV1Api(fakekube.client("not-a-token")).list_node().items == []
    core = client.CoreV1Api(fakekube.client())
    core.create_namespaced_service_account("default", {"metadata": {"name": "robot"}})
    token = core.create_namespaced_service_account_token("robot", "default", {"spec": {}}).status.token
    robot = client.AuthenticationV1Api(fakekube.client(token)).create_self_subject_review(
        {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    assert robot.status.user_info.username == "system:serviceaccount:default:robot"
    assert client.CoreV1Api(fakekube.client(token)).list_namespaced_secret("kube-system").items == []
    review = client.AuthorizationV1Api(fakekube.client(token)).create_self_subject_access_review(
        {"spec": {"resourceAttributes": {"verb": "delete", "resource": "nodes"}}})
    assert review.status.allowed is True


def test_the_bootstrap_policy_is_there(fakekube: Cluster) -> None:
    rbac = client.RbacAuthorizationV1Api(fakekube.client())
    roles = {role.metadata.name: role for role in rbac.list_cluster_role().items}
    assert {"cluster-admin", "admin", "edit", "view", "system:discovery", "system:basic-user",
            "system:public-info-viewer", "system:kube-scheduler", "system:aggregate-to-view"} <= set(roles)
    view = roles["view"]
    assert view.metadata.labels == {"kubernetes.io/bootstrapping": "rbac-defaults",
                                    "rbac.authorization.k8s.io/aggregate-to-edit": "true"}
    assert view.metadata.annotations == {"rbac.authorization.kubernetes.io/autoupdate": "true"}
    assert view.aggregation_rule.cluster_role_selectors[0].match_labels == {
        "rbac.authorization.k8s.io/aggregate-to-view": "true"}
    assert view.rules == roles["system:aggregate-to-view"].rules
    assert roles["admin"].rules[-2:] == roles["system:aggregate-to-admin"].rules
    bindings = {b.metadata.name: b for b in rbac.list_cluster_role_binding().items}
    assert [s.name for s in bindings["system:public-info-viewer"].subjects] == [
        "system:authenticated", "system:unauthenticated"]
    assert bindings["cluster-admin"].subjects[0].to_dict() == {
        "kind": "Group", "api_group": "rbac.authorization.k8s.io", "name": "system:masters", "namespace": None}


def test_the_yaml_config_switch(tmp_path: Path) -> None:
    (tmp_path / "tokens.csv").write_text('t2,dave,42,"a,b"\n# a comment\n')
    config = parse_config({"authorizationMode": "RBAC", "tokenAuthFile": "tokens.csv", "tls": False,
                           "staticTokens": [{"token": "t1", "user": "carol", "groups": ["ops"]}]}, base_dir=tmp_path)
    assert (config.authorization_mode, config.tls_enabled) == ("RBAC", False)
    with Cluster(config) as cluster:
        dave = client.AuthenticationV1Api(cluster.client("t2")).create_self_subject_review(
            {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}).status.user_info
        assert (dave.username, dave.uid, dave.groups) == ("dave", "42", ["a", "b", "system:authenticated"])
        assert request(cluster, "GET", "/api/v1/nodes")[0] == 403
    with pytest.raises(ConfigError, match="authorizationMode: authorization-mode 'ABAC': use one of AlwaysAllow, RBAC"):
        parse_config({"authorizationMode": "ABAC"})
    with pytest.raises(ConfigError, match=r"staticTokens\[0\].user: required"):
        parse_config({"staticTokens": [{"token": "x"}]})


def test_serve_authorization_mode_rbac_serves_https_with_the_ca_in_the_kubeconfig(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kc.yaml"
    proc = subprocess.Popen([sys.executable, "-m", "fakekube", "serve", "--authorization-mode", "RBAC",
                             "--no-system-pods", "--kubeconfig", str(kubeconfig)], stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().split(" at ")[1].strip() if proc.stdout else ""
        assert url.startswith("https://")
        config = yaml.safe_load(kubeconfig.read_text())
        ca = base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
        context = ssl.create_default_context(cadata=ca)
        admin = urllib.request.Request(url + "/api/v1/nodes", headers={"Authorization": "Bearer fakekube"})
        with urllib.request.urlopen(admin, context=context, timeout=10) as response:
            assert json.load(response)["kind"] == "NodeList"
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(url + "/api/v1/nodes", context=context, timeout=10)
        assert refused.value.code == 403
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


def test_serve_rejects_an_unknown_authorization_mode() -> None:
    result = subprocess.run([sys.executable, "-m", "fakekube.cli.main", "serve", "--authorization-mode", "ABAC"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "authorization-mode 'ABAC': use one of AlwaysAllow, RBAC" in result.stderr


@pytest.mark.parametrize("version, gated", [("1.33", set()), ("1.34", {"resource-claim-controller",
                                                                       "volumeattributesclass-protection-controller"}),
                                             ("1.36", {"resource-claim-controller", "device-taint-eviction-controller",
                                                       "volumeattributesclass-protection-controller"})])
def test_the_controllers_roles_are_the_releases_and_bound_to_their_accounts(version: str, gated: set[str]) -> None:
    """kube-apiserver's bootstrap policy (reference: 1.36.2 and its 1.33 emulation): a role per
    controller, bound to kube-system's account of its name; feature-gated ones by release."""
    with Cluster(kubernetes_version=version, nodes=0) as cluster:
        rbac = client.RbacAuthorizationV1Api(cluster.client())
        names = {role.metadata.name for role in rbac.list_cluster_role(
            label_selector="kubernetes.io/bootstrapping=rbac-defaults").items}
        assert {"system:certificates.k8s.io:kube-apiserver-client-approver", "system:heapster",
                "system:node-bootstrapper", "system:controller:deployment-controller"} <= names
        controllers = {n.removeprefix("system:controller:") for n in names if n.startswith("system:controller:")}
        assert len(controllers) == 36 + len(gated) and gated <= controllers
        binding = rbac.read_cluster_role_binding("system:controller:deployment-controller")
        assert [s.to_dict() for s in binding.subjects] == [
            {"kind": "ServiceAccount", "api_group": None, "name": "deployment-controller", "namespace": "kube-system"}]
        assert rbac.read_namespaced_role("system:controller:bootstrap-signer", "kube-public").rules[1].resource_names == [
            "cluster-info"]
