"""A ``kubernetes.io/tls`` Secret whose certificate and key are not a pair is stored with
``tls.X509KeyPair``'s complaint as a Warning header (upstream's warningsForSecret, on create
and update); the texts are kube-apiserver 1.36's for the same inputs."""

from __future__ import annotations

import base64

import pytest
from cryptography.hazmat.primitives import serialization

from fakekube import Cluster
from tests.integration.test_request_semantics import request
from tests.integration.webhook_server import make_ca, pem


def _key_pem(key: object) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,  # type: ignore[attr-defined]
                             serialization.NoEncryption())


KEY1, CERT1 = make_ca("one")
KEY2, _ = make_ca("two")


def tls_secret(cert: bytes, key: bytes) -> dict:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "tls"}, "type": "kubernetes.io/tls",
            "data": {"tls.crt": base64.b64encode(cert).decode(), "tls.key": base64.b64encode(key).decode()}}


@pytest.mark.parametrize("cert,key,warning", [
    (pem(CERT1), _key_pem(KEY1), None),
    (b"", b"", "tls: failed to find any PEM data in certificate input"),
    (pem(CERT1), _key_pem(KEY2), "tls: private key does not match public key"),
    (pem(CERT1), pem(CERT1), "tls: found a certificate rather than a key in the PEM for the private key"),
    (_key_pem(KEY1), _key_pem(KEY1), "tls: failed to find certificate PEM data in certificate input, but did find "
                                     "a private key; PEM inputs may have been switched"),
    (pem(CERT1), b"", "tls: failed to find any PEM data in key input"),
])
def test_a_tls_secret_that_is_not_a_pair_is_stored_with_a_warning(fakekube: Cluster, cert: bytes, key: bytes,
                                                                   warning: str | None) -> None:
    status, _, response = request(fakekube, "POST", "/api/v1/namespaces/default/secrets", tls_secret(cert, key))
    assert status == 201
    assert response.headers.get_all("Warning") == (None if warning is None else [f'299 - "{warning}"'])
    status, _, response = request(fakekube, "PUT", "/api/v1/namespaces/default/secrets/tls", tls_secret(cert, key))
    assert status == 200
    assert response.headers.get_all("Warning") == (None if warning is None else [f'299 - "{warning}"'])
