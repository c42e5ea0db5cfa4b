"""The README's examples, as tests: if these break, the README is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest
from kubernetes import client

from fakekube import Cluster


def test_howto_use_a_cluster_from_python(capsys: pytest.CaptureFixture[str]) -> None:
    # docs:begin README.md#python
    from kubernetes import client

    from fakekube import Cluster

    with Cluster(nodes=3, seed=7) as cluster:   # serves HTTP until the block ends
        print(cluster.url, cluster.kubeconfig)
        v1 = client.CoreV1Api(cluster.client())
        print([n.metadata.name for n in v1.list_node().items])   # ['node-1', 'node-2', 'node-3']
    # docs:end
    first, second = capsys.readouterr().out.splitlines()
    url, kubeconfig = first.split()
    assert url.startswith("http://127.0.0.1:") and Path(kubeconfig).name == "kubeconfig"
    assert second == "['node-1', 'node-2', 'node-3']"


def test_howto_use_the_kubernetes_config_loader(fakekube) -> None:
    """Code under test that calls ``config.load_kube_config()`` finds this test's cluster."""
    from kubernetes import config

    config.load_kube_config()  # reads KUBECONFIG, which the fixture set
    namespaces = client.CoreV1Api().list_namespace().items
    assert [n.metadata.name for n in namespaces] == ["default", "kube-node-lease", "kube-public", "kube-system"]
