"""docs/python.md's ``populate`` examples and README.md's ``fakekube serve --demo``, run as written."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fakekube.cluster.demo import manifests as demo_manifests
from tests.e2e.conftest import find_kubectl
from tests.examples.docs_blocks import region
from tests.examples.shell import environment, run, serving


def test_populate_fills_a_cluster_and_every_deployment_rolls_out() -> None:
    # docs:begin docs/python.md#populate
    from fakekube import Cluster

    cluster = Cluster(nodes=2)
    cluster.populate(seed=3, nodes=3, apps=10)      # returns once every Deployment has rolled out
    deployments = cluster.list("apps/v1", "Deployment", label_selector="app.kubernetes.io/part-of")
    assert len(deployments) == 10
    assert all(d["status"]["availableReplicas"] == d["spec"]["replicas"] for d in deployments)
    print(sorted({d["metadata"]["namespace"] for d in deployments}))   # the team namespaces
    # docs:end
    assert len(cluster.list("v1", "Node")) == 3


def test_the_manifests_alone() -> None:
    # docs:begin docs/python.md#demo-manifests
    from fakekube.cluster.demo import manifests

    objects = manifests(seed=3, apps=500)           # Namespaces first, then each app's objects
    assert [o["kind"] for o in objects[:1]] == ["Namespace"]
    # docs:end
    assert sum(o["kind"] == "Deployment" for o in objects) == 500


KUBECONFIG = "/tmp/fakekube-demo.kubeconfig"


def test_readme_try_it_serves_the_demo(tmp_path: Path) -> None:
    """README's "Try it": serve --demo, then its kubectl line lists the demo's Deployments."""
    kubectl = find_kubectl("1.35") or shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl not found (see tests/e2e/conftest.py find_kubectl)")
    kubeconfig = str(tmp_path / "kubeconfig")
    env = environment()
    serve = region("README.md", "try-demo-serve").text.strip().replace(KUBECONFIG, kubeconfig)
    with serving(serve, tmp_path, env, timeout_s=120):
        line = region("README.md", "try-demo-kubectl").text.strip().replace(KUBECONFIG, kubeconfig)
        done = run(line.replace("kubectl ", f"{kubectl} ", 1), tmp_path, env)
    assert done.returncode == 0, done.stderr
    listed = {tuple(row.split()[:2]) for row in done.stdout.splitlines()[1:]}
    expected = {(o["metadata"]["namespace"], o["metadata"]["name"]) for o in demo_manifests(0, 10)
                if o["kind"] == "Deployment"}
    assert listed == expected
