"""Every active namespace has a ``default`` ServiceAccount, as kube-controller-manager keeps it."""

from __future__ import annotations

import pytest

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
