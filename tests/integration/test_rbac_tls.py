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
