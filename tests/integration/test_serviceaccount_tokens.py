"""kube-controller-manager's serviceaccount-token-controller and the legacy tokens it writes.

A ``kubernetes.io/service-account-token`` Secret annotated with a ServiceAccount gets
``token`` (a legacy JWT: issuer ``kubernetes/serviceaccount``, no audience, no expiry),
``ca.crt`` (the cluster CA, as in ``kube-root-ca.crt``) and ``namespace``, and the
account's uid annotation; a token Secret of a missing account is deleted, and an account's
are deleted with it. TokenReview (and authentication) accept such a token while its Secret
holds it and its account exists — on a real kube-apiserver 1.36, a legacy token gives
the account's username, uid and groups, no extra, for the apiserver's own audience only.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from fakekube import Cluster

Obj = dict[str, Any]
TOKEN_TYPE = "kubernetes.io/service-account-token"


def token_secret(name: str, account: str, namespace: str = "default") -> Obj:
    return {"apiVersion": "v1", "kind": "Secret", "type": TOKEN_TYPE,
            "metadata": {"name": name, "namespace": namespace,
                         "annotations": {"kubernetes.io/service-account.name": account}}}


def filled(cluster: Cluster, secret: Obj) -> Obj:
    """Create ``secret``; the answer is what was stored, the controller's fill comes after it."""
    cluster.create(secret)
    return cluster.get("v1", "Secret", secret["metadata"]["name"], secret["metadata"]["namespace"])


def decoded(secret: Obj, key: str) -> str:
    return base64.b64decode(secret["data"][key]).decode()


def review(cluster: Cluster, token: str, audiences: list[str] | None = None) -> Obj:
    spec: Obj = {"token": token}
    if audiences:
        spec["audiences"] = audiences
    answer = cluster.create({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec})
    status: Obj = answer["status"]
    return status


def test_a_token_secret_is_filled_and_its_token_authenticates() -> None:
    cluster = Cluster()
    cluster.create(token_secret("robot-token", "default"))
    secret = cluster.get("v1", "Secret", "robot-token")
    account = cluster.get("v1", "ServiceAccount", "default")
    assert sorted(secret["data"]) == ["ca.crt", "namespace", "token"]
    assert decoded(secret, "namespace") == "default"
    assert decoded(secret, "ca.crt") == cluster.get("v1", "ConfigMap", "kube-root-ca.crt")["data"]["ca.crt"]
    assert secret["metadata"]["annotations"] == {"kubernetes.io/service-account.name": "default",
                                                 "kubernetes.io/service-account.uid": account["metadata"]["uid"]}
    token = decoded(secret, "token")
    claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    assert claims == {"iss": "kubernetes/serviceaccount", "kubernetes.io/serviceaccount/namespace": "default",
                      "kubernetes.io/serviceaccount/secret.name": "robot-token",
                      "kubernetes.io/serviceaccount/service-account.name": "default",
                      "kubernetes.io/serviceaccount/service-account.uid": account["metadata"]["uid"],
                      "sub": "system:serviceaccount:default:default"}
    assert review(cluster, token) == {
        "authenticated": True, "audiences": ["https://kubernetes.default.svc.cluster.local"],
        "user": {"username": "system:serviceaccount:default:default", "uid": account["metadata"]["uid"],
                 "groups": ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"]}}
    assert review(cluster, token, ["foo"])["user"] == {}  # only the apiserver's audience
    assert decoded(filled(Cluster(), token_secret("robot-token", "default")), "token") == token  # from the seed


def test_a_token_stops_working_with_its_secret_or_its_account() -> None:
    cluster = Cluster()
    cluster.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot", "namespace": "default"},
                    "secrets": [{"name": "kept"}, {"name": "gone"}]})
    kept = decoded(filled(cluster, token_secret("kept", "robot")), "token")
    gone = decoded(filled(cluster, token_secret("gone", "robot")), "token")
    cluster.delete("v1", "Secret", "gone")
    assert review(cluster, gone)["user"] == {} and review(cluster, kept)["authenticated"]
    # The deleted Secret leaves the account's list.
    assert cluster.get("v1", "ServiceAccount", "robot")["secrets"] == [{"name": "kept"}]
    cluster.delete("v1", "ServiceAccount", "robot")
    assert [s["metadata"]["name"] for s in cluster.list("v1", "Secret", "default")] == []
    cluster.advance(10)  # the apiserver's token cache remembers kept's success for 10 s
    assert review(cluster, kept)["user"] == {}


def test_a_token_secret_for_a_missing_account_is_deleted() -> None:
    cluster = Cluster()
    cluster.create(token_secret("orphan", "nobody"))
    assert cluster.list("v1", "Secret", "default") == []


def test_with_the_controller_off_a_token_secret_stays_empty() -> None:
    cluster = Cluster(controllers=("*", "-serviceaccount-token-controller"))
    assert "data" not in cluster.create(token_secret("robot-token", "default"))
    assert "data" not in cluster.get("v1", "Secret", "robot-token")
