"""`kubectl top` against metrics.k8s.io, as with metrics-server on kind: pods, containers,
nodes (percentages of allocatable), selectors, sorting, and the errors kubectl prints."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest
from kubernetes import client

from fakekube import Cluster
from fakekube.objects.quantity import milli_value

from .conftest import Kubectl, find_kubectl

pytestmark = pytest.mark.fakekube(nodes=2, metrics_server=True)

BUSY = {"cpu_usage_m": [[0, 120], [100, 30]], "memory_usage_bytes": "96Mi"}


def run_pods(fakekube: Cluster) -> None:
    """web (default usage) and api (busy, two containers) on node-1, worker on node-2."""
    for name, node, behaviour, containers in (("web", "node-1", None, ["nginx"]),
                                              ("api", "node-1", {"app": BUSY}, ["app", "proxy"]),
                                              ("worker", "node-2", {"cpu_usage_m": 7, "memory_usage_bytes": "12Mi"},
                                               ["worker"])):
        meta = {"name": name, "namespace": "default", "labels": {"app": name, "team": "shop"}}
        if behaviour is not None:
            meta["annotations"] = {"fakekube.io/behaviour": json.dumps(behaviour)}
        fakekube.create({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                         "spec": {"nodeName": node, "containers": [{"name": c, "image": "nginx"} for c in containers]}})
    fakekube.advance(30)


def table(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines()]


def test_top_pod_lists_each_pods_usage(kubectl: Kubectl, fakekube: Cluster) -> None:
    run_pods(fakekube)
    assert table(kubectl.ok("top", "pod")) == [
        ["NAME", "CPU(cores)", "MEMORY(bytes)"],
        ["api", "121m", "100Mi"], ["web", "1m", "4Mi"], ["worker", "7m", "12Mi"],
    ]
    assert table(kubectl.ok("top", "pod", "--sort-by=cpu", "--no-headers")) == [
        ["api", "121m", "100Mi"], ["worker", "7m", "12Mi"], ["web", "1m", "4Mi"]]
    assert table(kubectl.ok("top", "pod", "-l", "app in (web,worker)", "--sort-by=memory")) == [
        ["NAME", "CPU(cores)", "MEMORY(bytes)"], ["worker", "7m", "12Mi"], ["web", "1m", "4Mi"]]
    assert table(kubectl.ok("top", "pod", "web")) == [["NAME", "CPU(cores)", "MEMORY(bytes)"], ["web", "1m", "4Mi"]]


def test_top_pod_containers_and_all_namespaces(kubectl: Kubectl, fakekube: Cluster) -> None:
    run_pods(fakekube)
    assert table(kubectl.ok("top", "pod", "api", "--containers")) == [
        ["POD", "NAME", "CPU(cores)", "MEMORY(bytes)"], ["api", "app", "120m", "96Mi"], ["api", "proxy", "1m", "4Mi"]]
    assert table(kubectl.ok("top", "pod", "-A", "--no-headers", "--sort-by=memory")) == [
        ["default", "api", "121m", "100Mi"], ["default", "worker", "7m", "12Mi"], ["default", "web", "1m", "4Mi"]]


def test_usage_changes_with_cluster_time(kubectl: Kubectl, fakekube: Cluster) -> None:
    run_pods(fakekube)
    fakekube.advance(90)  # the 120 s scrape: api's app ran 119 s, at 30m since 100 s
    assert table(kubectl.ok("top", "pod", "api", "--containers", "--no-headers")) == [
        ["api", "app", "30m", "96Mi"], ["api", "proxy", "1m", "4Mi"]]


def test_top_node_shows_usage_against_allocatable(kubectl: Kubectl, fakekube: Cluster) -> None:
    run_pods(fakekube)
    nodes = {n.metadata.name: n.status.allocatable for n in client.CoreV1Api(fakekube.client()).list_node().items}
    usage = {"node-1": (25 + 1 + 120 + 1, (256 + 4 + 96 + 4) * 2**20), "node-2": (25 + 7, (256 + 12) * 2**20)}
    percent = "(%)" if int(kubectl.version.split(".")[1]) >= 32 else "%"  # kubectl 1.32 renamed CPU% CPU(%)
    expected = [["NAME", "CPU(cores)", f"CPU{percent}", "MEMORY(bytes)", f"MEMORY{percent}"]]
    for name, (cpu_m, memory) in usage.items():
        cpu_pct = int(cpu_m / milli_value(nodes[name]["cpu"]) * 100)
        memory_pct = int(memory * 1000 / milli_value(nodes[name]["memory"]) * 100)
        expected.append([name, f"{cpu_m}m", f"{cpu_pct}%", f"{memory // 2**20}Mi", f"{memory_pct}%"])
    assert table(kubectl.ok("top", "node")) == expected
    assert table(kubectl.ok("top", "node", "node-2", "--no-headers")) == [expected[2]]
    assert table(kubectl.ok("top", "node", "-l", "kubernetes.io/hostname=node-1", "--no-headers")) == [expected[1]]


def test_errors_are_kubectls(kubectl: Kubectl, fakekube: Cluster) -> None:
    result = kubectl("top", "pod", "missing")
    assert (result.rc, result.stderr.strip()) == (1, 'Error from server (NotFound): pods "missing" not found')
    run_pods(fakekube)
    result = kubectl("top", "pod", "-n", "kube-system")
    assert (result.rc, result.stderr.strip()) == (0, "No resources found in kube-system namespace.")


@pytest.mark.fakekube(nodes=1, metrics_server=False)
def test_without_metrics_server_the_api_is_not_available(kubectl: Kubectl) -> None:
    for kind in ("pod", "node"):
        result = kubectl("top", kind)
        assert (result.rc, result.stderr.strip()) == (1, "error: Metrics API not available")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    """kubectl 1.33 against a ``fakekube serve`` run with no flags but its kubeconfig and release."""
    binary = find_kubectl("1.33")
    if binary is None:
        pytest.skip("kubectl 1.33 not found (.ci/fetch-kubectl)")
    directory = Path(tmp_path_factory.mktemp("top-serve"))
    proc = subprocess.Popen([sys.executable, "-m", "fakekube", "serve", "--kubernetes-version", "1.33",
                             "--kubeconfig", str(directory / "kc")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and " at " in proc.stdout.readline()
        yield Kubectl(binary, "1.33", str(directory / "kc"), str(directory / "cache"))
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


def test_kubectl_top_works_against_a_default_serve(served: Kubectl) -> None:
    nodes = table(served.ok("top", "node", "--no-headers"))
    assert [row[0] for row in nodes] == ["fakekube-control-plane"]  # booted 30 s before now: scraped twice
    pods = table(served.ok("top", "pod", "-n", "kube-system", "--no-headers"))
    apiserver = [row for row in pods if row[0] == "kube-apiserver-fakekube-control-plane"]
    assert apiserver == [["kube-apiserver-fakekube-control-plane", "40m", "220Mi"]]
