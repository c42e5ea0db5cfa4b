"""TLS: the generated CA in the kubeconfig, HTTPS serving, client certificates that
authenticate (CN user, O groups), as kube-apiserver's x509 authenticator reads them."""

from __future__ import annotations

import base64
import http.client
import json
import ssl
import tempfile
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import urlsplit

import pytest
import yaml
from kubernetes import client

from fakekube import Cluster

WHOAMI = json.dumps({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}).encode()


@pytest.fixture(scope="module")
def tls_cluster() -> Iterator[Cluster]:
    with Cluster(authorization_mode="RBAC") as cluster:  # RBAC turns TLS on
        yield cluster


def context(cluster: Cluster, user: str | None = None, groups: tuple[str, ...] = ()) -> ssl.SSLContext:
    """A client context trusting the kubeconfig's CA, with a client certificate for ``user``."""
    kubeconfig = yaml.safe_load(Path(cluster.kubeconfig).read_text())
    ca = base64.b64decode(kubeconfig["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
    ctx = ssl.create_default_context(cadata=ca)
    if user is not None:
        pair = cluster.client_certificate(user, groups)
        with tempfile.TemporaryDirectory() as folder:
            cert, key = Path(folder) / "c.crt", Path(folder) / "c.key"
            cert.write_bytes(pair.cert_pem)
            key.write_bytes(pair.key_pem)
            ctx.load_cert_chain(str(cert), str(key))
    return ctx


def call(cluster: Cluster, ctx: ssl.SSLContext, method: str, path: str, body: bytes | None = None) -> tuple[int, Any]:
    url = urlsplit(cluster.url)
    connection = http.client.HTTPSConnection(url.hostname, url.port, context=ctx, timeout=30)
    try:
        headers = {"Content-Type": "application/json", "Accept": "application/json"} if body else {}
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def test_the_kubeconfig_carries_the_ca_and_the_server_speaks_https(tls_cluster: Cluster) -> None:
    assert tls_cluster.url.startswith("https://127.0.0.1:")
    nodes = client.CoreV1Api(tls_cluster.client()).list_node()
    assert nodes.items == []
    with pytest.raises(ssl.SSLCertVerificationError):  # not our CA: refused
        call(tls_cluster, ssl.create_default_context(), "GET", "/version")


def test_a_client_certificate_authenticates_its_cn_and_o(tls_cluster: Cluster) -> None:
    code, body = call(tls_cluster, context(tls_cluster, "carol", ("ops", "qa")), "POST",
                      "/apis/authentication.k8s.io/v1/selfsubjectreviews", WHOAMI)
    assert code == 201
    assert body["status"]["userInfo"] == {"username": "carol", "groups": ["ops", "qa", "system:authenticated"]}
    code, body = call(tls_cluster, context(tls_cluster, "carol", ("ops",)), "GET", "/api/v1/nodes")
    assert (code, body["message"]) == (403, 'nodes is forbidden: User "carol" cannot list resource "nodes" '
                                            'in API group "" at the cluster scope')
    code, body = call(tls_cluster, context(tls_cluster, "root", ("system:masters",)), "GET", "/api/v1/nodes")
    assert code == 200 and body["kind"] == "NodeList"


def test_without_credentials_over_tls_a_request_is_anonymous(tls_cluster: Cluster) -> None:
    code, body = call(tls_cluster, context(tls_cluster), "GET", "/api/v1/namespaces")
    assert (code, body["message"]) == (403, 'namespaces is forbidden: User "system:anonymous" cannot list resource '
                                            '"namespaces" in API group "" at the cluster scope')
    assert call(tls_cluster, context(tls_cluster), "GET", "/version")[0] == 200


def test_tls_can_be_on_without_rbac() -> None:
    with Cluster(tls=True) as cluster:
        assert cluster.url.startswith("https://")
        code, body = call(cluster, context(cluster), "GET", "/api/v1/namespaces/default")
        assert (code, body["metadata"]["name"]) == (200, "default")  # authorization off: the admin


def kubeconfig_whoami(cluster: Cluster) -> tuple[str, Any]:
    """Who the written kubeconfig authenticates as, through the official client reading it
    (the user's name, the review's userInfo)."""
    from kubernetes import config as kube_config
    document = yaml.safe_load(Path(cluster.kubeconfig).read_text())
    api = kube_config.new_client_from_config(cluster.kubeconfig)
    review = client.AuthenticationV1Api(api).create_self_subject_review({"apiVersion": "authentication.k8s.io/v1",
                                                                          "kind": "SelfSubjectReview"})
    return document["users"][0]["name"], review.status.user_info


def test_over_tls_the_kubeconfig_holds_a_client_certificate_as_kinds_does(tls_cluster: Cluster) -> None:
    user = yaml.safe_load(Path(tls_cluster.kubeconfig).read_text())["users"][0]["user"]
    assert sorted(user) == ["client-certificate-data", "client-key-data"]
    name, info = kubeconfig_whoami(tls_cluster)  # no kubeadm here: the admin is in system:masters
    assert (name, info.username, info.groups) == ("kind-fakekube", "kubernetes-admin",
                                                  ["system:masters", "system:authenticated"])


def test_with_kubeadm_the_admin_is_a_cluster_admin_through_kubeadms_binding() -> None:
    with Cluster(authorization_mode="RBAC", system_pods=True) as cluster:
        name, info = kubeconfig_whoami(cluster)
        assert (name, info.username, info.groups) == ("kind-fakekube", "kubernetes-admin",
                                                      ["kubeadm:cluster-admins", "system:authenticated"])
        binding = cluster.get("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "kubeadm:cluster-admins")
        assert binding["roleRef"]["name"] == "cluster-admin"
        assert binding["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                                        "name": "kubeadm:cluster-admins"}]
        from kubernetes import config as kube_config
        nodes = client.CoreV1Api(kube_config.new_client_from_config(cluster.kubeconfig)).list_node()
        assert [n.metadata.name for n in nodes.items] == ["fakekube-control-plane"]


def test_over_http_the_kubeconfig_keeps_a_token() -> None:
    with Cluster() as cluster:
        document = yaml.safe_load(Path(cluster.kubeconfig).read_text())
        assert document["users"] == [{"name": "fakekube", "user": {"token": "fakekube"}}]
