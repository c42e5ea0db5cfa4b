"""``kubectl auth can-i`` / ``auth whoami`` against a cluster with RBAC on (and TLS, which RBAC
turns on: kubectl sends no bearer token over plain HTTP).

The expected output is what kubectl prints against a real 1.33 cluster: ``yes``/``no`` with
exit codes 0/1, the ``--list`` table of the asker's rules (the bootstrap policy's
discovery and public-info rules included, duplicates and all), whoami's attribute table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
import yaml

from fakekube import Cluster
from fakekube.api.auth import UserInfo

from .conftest import VERSIONS, Kubectl, find_kubectl, server_version

PUBLIC_RULES = """\
selfsubjectreviews.authentication.k8s.io        []                  []               [create]
selfsubjectaccessreviews.authorization.k8s.io   []                  []               [create]
selfsubjectrulesreviews.authorization.k8s.io    []                  []               [create]
                                                [/api/*]            []               [get]
                                                [/api]              []               [get]
                                                [/apis/*]           []               [get]
                                                [/apis]             []               [get]
                                                [/healthz]          []               [get]
                                                [/healthz]          []               [get]
                                                [/livez]            []               [get]
                                                [/livez]            []               [get]
                                                [/openapi/*]        []               [get]
                                                [/openapi]          []               [get]
                                                [/readyz]           []               [get]
                                                [/readyz]           []               [get]
                                                [/version/]         []               [get]
                                                [/version/]         []               [get]
                                                [/version]          []               [get]
                                                [/version]          []               [get]
"""
SERVICE_ACCOUNT_LIST = """\
Resources                                       Non-Resource URLs                     Resource Names   Verbs
selfsubjectreviews.authentication.k8s.io        []                                    []               [create]
selfsubjectaccessreviews.authorization.k8s.io   []                                    []               [create]
selfsubjectrulesreviews.authorization.k8s.io    []                                    []               [create]
configmaps                                      []                                    []               [get list watch]
                                                [/.well-known/openid-configuration]   []               [get]
                                                [/api/*]                              []               [get]
                                                [/api]                                []               [get]
                                                [/apis/*]                             []               [get]
                                                [/apis]                               []               [get]
                                                [/healthz]                            []               [get]
                                                [/healthz]                            []               [get]
                                                [/livez]                              []               [get]
                                                [/livez]                              []               [get]
                                                [/openapi/*]                          []               [get]
                                                [/openapi]                            []               [get]
                                                [/openid/v1/jwks]                     []               [get]
                                                [/readyz]                             []               [get]
                                                [/readyz]                             []               [get]
                                                [/version/]                           []               [get]
                                                [/version/]                           []               [get]
                                                [/version]                            []               [get]
                                                [/version]                            []               [get]
"""
HEADER = "Resources                                       Non-Resource URLs   Resource Names   Verbs\n"


@pytest.fixture(scope="module")
def rbac_clusters() -> Iterator[dict[str, Cluster]]:
    """One RBAC cluster per release, started when a kubectl first needs it (server_version)."""
    started: dict[str, Cluster] = {}
    yield started
    for cluster in started.values():
        cluster.stop()


@pytest.fixture(params=VERSIONS, ids=lambda v: f"kubectl{v}")
def kubectl(request: pytest.FixtureRequest, rbac_clusters: dict[str, Cluster], kubectl_cache_dir: str) -> Kubectl:
    binary = find_kubectl(request.param)
    if binary is None:
        pytest.skip(f"kubectl {request.param} not found (.ci/fetch-kubectl)")
    release = server_version(request.param)
    if release not in rbac_clusters:
        rbac_clusters[release] = Cluster(authorization_mode="RBAC", kubernetes_version=release,
                                         static_tokens={"alice-token": UserInfo("alice", ("devs",), "a-1")}).start()
    rbac_cluster = rbac_clusters[release]
    rbac_cluster.reset()
    return Kubectl(binary, request.param, rbac_cluster.kubeconfig, kubectl_cache_dir)


def with_token(kubectl: Kubectl, token: str, folder: Path) -> Kubectl:
    """kubectl with the kubeconfig's user holding only ``token``: with the kubeconfig's
    client certificate also sent (as ``--token`` would leave it), a real apiserver
    authenticates the certificate first, and so does fakekube."""
    config = yaml.safe_load(Path(kubectl.kubeconfig).read_text())
    user = config["contexts"][0]["context"]["user"]
    config["users"] = [{"name": user, "user": {"token": token}}]
    path = folder / f"kubeconfig-{token}"
    path.write_text(yaml.safe_dump(config))
    return Kubectl(kubectl.binary, kubectl.version, str(path), kubectl._env["KUBECACHEDIR"])


def grant_configmaps(kubectl: Kubectl) -> None:
    kubectl.ok("create", "namespace", "apps")
    kubectl.ok("create", "serviceaccount", "operator", "-n", "apps")
    kubectl.ok("create", "role", "operator", "-n", "apps", "--verb=get,list,watch", "--resource=configmaps")
    kubectl.ok("create", "rolebinding", "operator", "-n", "apps", "--role=operator", "--serviceaccount=apps:operator")


def test_can_i_answers_from_rbac(kubectl: Kubectl) -> None:
    grant_configmaps(kubectl)
    assert kubectl("auth", "can-i", "create", "pods") == (0, "yes\n", "")
    sa = "--as=system:serviceaccount:apps:operator"
    assert kubectl("auth", "can-i", "list", "configmaps", "-n", "apps", sa) == (0, "yes\n", "")
    assert kubectl("auth", "can-i", "delete", "configmaps", "-n", "apps", sa) == (1, "no\n", "")
    assert kubectl("auth", "can-i", "list", "configmaps", "-n", "default", sa) == (1, "no\n", "")
    assert kubectl("auth", "can-i", "get", "pods/log", "-n", "apps", sa) == (1, "no\n", "")
    assert kubectl("auth", "can-i", "get", "/healthz", sa) == (0, "yes\n", "")


def test_can_i_list(kubectl: Kubectl) -> None:
    grant_configmaps(kubectl)
    out = kubectl.ok("auth", "can-i", "--list", "-n", "apps", "--as=system:serviceaccount:apps:operator")
    # Service accounts also hold system:service-account-issuer-discovery's two URLs (wider column).
    assert out == SERVICE_ACCOUNT_LIST
    admin = kubectl.ok("auth", "can-i", "--list")
    assert admin.startswith(HEADER + "*.*                                             []                  []               [*]\n"
                                     "                                                [*]                 []               [*]\n")
    assert kubectl.ok("auth", "can-i", "--list", "--as=bob") == HEADER + PUBLIC_RULES


def test_whoami(kubectl: Kubectl, tmp_path: Path) -> None:
    # the kubeconfig's client certificate (TLS: kind's admin; no kubeadm here, so system:masters)
    assert kubectl.ok("auth", "whoami") == ("ATTRIBUTE   VALUE\nUsername    kubernetes-admin\n"
                                            "Groups      [system:masters system:authenticated]\n")
    assert kubectl.ok("auth", "whoami", "--token=alice-token") == kubectl.ok("auth", "whoami")  # the certificate wins
    assert with_token(kubectl, "alice-token", tmp_path).ok("auth", "whoami") == (
        "ATTRIBUTE   VALUE\nUsername    alice\nUID         a-1\nGroups      [devs system:authenticated]\n")
    assert kubectl.ok("auth", "whoami", "--as=system:serviceaccount:apps:operator") == (
        "ATTRIBUTE   VALUE\nUsername    system:serviceaccount:apps:operator\n"
        "Groups      [system:serviceaccounts system:serviceaccounts:apps system:authenticated]\n")


def test_forbidden_and_unauthorized_as_kubectl_prints_them(kubectl: Kubectl, tmp_path: Path) -> None:
    alice = with_token(kubectl, "alice-token", tmp_path)
    assert alice("get", "pods") == (
        1, "", 'Error from server (Forbidden): pods is forbidden: User "alice" cannot list resource "pods" '
               'in API group "" in the namespace "default"\n')
    result = alice("get", "pods", "--as=bob")
    refused = ('pods is forbidden: User "alice" cannot impersonate-on:user-info:list resource "pods" in API group "" '
               'in the namespace "default"' if server_version(kubectl.version) == "1.36" else  # ConstrainedImpersonation
               'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster '
               'scope')
    assert result.rc == 1 and result.stderr.endswith(f"Error from server (Forbidden): {refused}\n")
    result = with_token(kubectl, "wrong", tmp_path)("get", "pods")
    assert result.rc == 1 and result.stderr.endswith(
        "error: You must be logged in to the server (Unauthorized)\n")
