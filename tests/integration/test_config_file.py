"""Clusters built from YAML config files, starting with the full example in docs/config.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakekube import Cluster
from fakekube.cluster.configfile import ConfigError
from tests.examples.docs_blocks import region
from tests.integration.timeline import at

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"


def docs_example(directory: Path) -> Path:
    """docs/config.md's full example (tests/examples/config_full.yaml), written out with the
    manifests/ directory it names."""
    (directory / "manifests").mkdir()
    (directory / "manifests" / "node-exporter.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: node-exporter, namespace: kube-system}\n"
        "spec: {hostNetwork: true, containers: [{name: exporter, image: prom/node-exporter:v1.9.1}]}\n")
    path = directory / "cluster.yaml"
    path.write_text(region("docs/config.md", "full-example").text)
    return path


def test_the_documented_example_builds_the_cluster_it_describes(tmp_path: Path) -> None:
    cluster = Cluster.from_config_file(docs_example(tmp_path))
    nodes = {n["metadata"]["name"]: n for n in cluster.list("v1", "Node")}
    assert list(nodes) == ["big-1", "big-2", "control-plane", "node-1", "node-2"]
    assert {name: (n["metadata"]["labels"][ZONE], n["metadata"]["labels"][REGION]) for name, n in nodes.items()} == {
        "control-plane": ("zone-a", "region-1"), "node-1": ("zone-a", "region-1"), "node-2": ("zone-a", "region-1"),
        "big-1": ("zone-b", "region-1"), "big-2": ("zone-b", "region-1")}
    # registration order is the order of pod CIDRs
    assert [nodes[n]["spec"]["podCIDR"] for n in ("control-plane", "node-1", "node-2", "big-1", "big-2")] == [
        f"10.244.{i}.0/24" for i in range(5)]
    cp = nodes["control-plane"]
    assert cp["spec"]["taints"] == [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]
    assert cp["metadata"]["labels"]["node-role.kubernetes.io/control-plane"] == ""
    big = nodes["big-1"]["status"]
    assert (big["capacity"]["cpu"], big["allocatable"]["cpu"], big["allocatable"]["memory"]) == ("16", "15800m", "64Gi")
    assert cluster.config.seed == 42 and cluster.config.node_lifecycle.grace_period_s == 40
    mirrors = sorted(p["metadata"]["name"] for p in cluster.list("v1", "Pod", "kube-system"))
    assert mirrors == sorted(["etcd-control-plane"] + [f"{pod}-{node}" for node in nodes
                                                         for pod in ("kube-proxy", "node-exporter")])
    assert not cluster.internal_errors


def test_the_documented_behaviours_apply_to_pods(tmp_path: Path) -> None:
    cluster = Cluster.from_config_file(docs_example(tmp_path))
    cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "job", "namespace": "default"},
                    "spec": {"nodeName": "node-1", "restartPolicy": "Never",
                             "containers": [{"name": "c", "image": "busybox:1.36"}]}})
    at(cluster, 6)  # starts at 1, runs 5 s, exits 1
    status = cluster.get("v1", "Pod", "job")["status"]
    assert status["phase"] == "Failed"
    assert status["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 1


def test_node_lifecycle_settings_change_the_timings(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text("nodes: 3\nnodeLifecycle: {nodeMonitorGracePeriod: 20s, nodeMonitorPeriod: 2s}\n")
    cluster = Cluster.from_config_file(path)
    cluster.fail_node("node-1")

    def ready(seconds: float) -> str:
        at(cluster, seconds)
        node = cluster.get("v1", "Node", "node-1", "")
        return next(c["status"] for c in node["status"]["conditions"] if c["type"] == "Ready")

    assert ready(19) == "True"
    assert ready(22) == "Unknown"  # 20 s grace, noticed within one 2 s monitor period


def test_keyword_overrides_win_over_the_file(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text("seed: 1\nnodes: [{zone: a}]\n")
    cluster = Cluster.from_config_file(path, seed=9, nodes=2)
    assert cluster.config.seed == 9
    assert [n["metadata"]["name"] for n in cluster.list("v1", "Node")] == ["node-1", "node-2"]


def test_a_bad_file_raises_a_config_error_naming_the_key(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text("nodes:\n  - zone: a\n    taints: [{key: k, effect: Never}]\n")
    with pytest.raises(ConfigError, match=r"^nodes\[0\]\.taints\[0\]\.effect: must be one of"):
        Cluster.from_config_file(path)


def test_the_same_file_gives_the_same_cluster(tmp_path: Path) -> None:
    path = docs_example(tmp_path)

    def dump() -> list[tuple[str, str]]:
        cluster = Cluster.from_config_file(path)
        cluster.advance(30)
        return [(p["metadata"]["name"], p["metadata"]["uid"]) for p in cluster.list("v1", "Pod")]

    assert dump() == dump()
