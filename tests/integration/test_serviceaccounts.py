"""Every active namespace has a ``default`` ServiceAccount, as kube-controller-manager keeps it;
an account's secret references keep only their names."""

from __future__ import annotations

import pytest
from kubernetes import client

from fakekube import Cluster


def accounts(cluster: Cluster, namespace: str) -> list[str]:
    return [sa["metadata"]["name"] for sa in cluster.list("v1", "ServiceAccount", namespace)]


def test_the_initial_namespaces_have_their_default_account() -> None:
    cluster = Cluster()
    for namespace in ("default", "kube-node-lease", "kube-public", "kube-system"):
        assert accounts(cluster, namespace) == ["default"]


def test_a_new_namespace_gets_one_and_a_deleted_one_comes_back() -> None:
    cluster = Cluster()
    cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    first = cluster.get("v1", "ServiceAccount", "default", "team")
    cluster.delete("v1", "ServiceAccount", "default", "team")
    again = cluster.get("v1", "ServiceAccount", "default", "team")
    assert again["metadata"]["uid"] != first["metadata"]["uid"]


def test_a_terminating_namespace_gets_none_back() -> None:
    cluster = Cluster()
    cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "going"}})
    cluster.delete("v1", "Namespace", "going", "")
    assert cluster.get("v1", "Namespace", "going", "")["status"]["phase"] == "Terminating"
    cluster.delete("v1", "ServiceAccount", "default", "going")
    with pytest.raises(Exception, match="not found"):
        cluster.get("v1", "ServiceAccount", "default", "going")


def test_a_secret_reference_keeps_only_its_name() -> None:
    """cleanSecretReferences, on create and update: the Secret is the account's namespace's."""
    with Cluster(nodes=0) as cluster:
        created = cluster.create({"apiVersion": "v1", "kind": "ServiceAccount",
                                  "metadata": {"name": "robot", "namespace": "default"},
                                  "secrets": [{"name": "s", "namespace": "other", "kind": "Secret"}]})
        assert created["secrets"] == [{"name": "s"}]
        core = client.CoreV1Api(cluster.client())
        updated = core.patch_namespaced_service_account(
            "robot", "default", [{"op": "add", "path": "/secrets/-", "value": {"name": "t", "uid": "x"}}])
        assert [ref.to_dict() for ref in updated.secrets] == [
            {"api_version": None, "field_path": None, "kind": None, "name": name, "namespace": None,
             "resource_version": None, "uid": None} for name in ("s", "t")]
