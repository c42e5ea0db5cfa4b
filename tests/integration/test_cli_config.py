"""``fakekube serve --config cluster.yaml`` as a user runs it: the file, flags over it, bad files."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from fakekube import Cluster
from fakekube.cluster.configfile import ConfigError, parse_config

CONFIG = """
seed: 1
startTime: 2030-01-01T00:00:00Z
systemPods: false                    # this file describes its own nodes, "cp" included
nodes:
  - {name: cp, zone: zone-a, region: region-1}
  - {zone: zone-b, region: region-1, count: 2}
staticPods:
  - apiVersion: v1
    kind: Pod
    metadata: {name: agent, namespace: kube-system}
    spec: {containers: [{name: a, image: agent:1}]}
"""


def serve(*args: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "fakekube", "serve", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert " at " in line, proc.stderr.read()
    return proc, line.split(" at ")[1].strip()


def get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.load(response)


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.communicate(timeout=10)


def test_serve_builds_the_configured_cluster_and_flags_override_the_file(tmp_path: Path) -> None:
    config = tmp_path / "cluster.yaml"
    config.write_text(CONFIG)
    proc, url = serve("--config", str(config), "--seed", "9", "--kubeconfig", str(tmp_path / "kc"))
    try:
        nodes = get(url + "/api/v1/nodes")["items"]
        pods = get(url + "/api/v1/namespaces/kube-system/pods")["items"]
    finally:
        stop(proc)
    assert [(n["metadata"]["name"], n["metadata"]["labels"]["topology.kubernetes.io/zone"]) for n in nodes] == [
        ("cp", "zone-a"), ("node-1", "zone-b"), ("node-2", "zone-b")]
    assert nodes[0]["metadata"]["creationTimestamp"] == "2030-01-01T00:00:00Z"
    assert sorted(p["metadata"]["name"] for p in pods) == ["agent-cp", "agent-node-1", "agent-node-2"]
    # --seed 9 won over the file's seed 1: the same UIDs as a cluster built from the file with seed 9
    expected = Cluster.from_config_file(config, seed=9).get("v1", "Node", "cp", "")["metadata"]["uid"]
    assert nodes[0]["metadata"]["uid"] == expected


def test_nodes_flag_replaces_the_file_s_node_list(tmp_path: Path) -> None:
    config = tmp_path / "cluster.yaml"
    config.write_text(CONFIG)
    proc, url = serve("--config", str(config), "--nodes", "1", "--kubeconfig", str(tmp_path / "kc"))
    try:
        nodes = get(url + "/api/v1/nodes")["items"]
    finally:
        stop(proc)
    assert [n["metadata"]["name"] for n in nodes] == ["node-1"]
    assert "topology.kubernetes.io/zone" not in nodes[0]["metadata"]["labels"]


def test_a_bad_config_is_one_line_and_exit_code_2(tmp_path: Path) -> None:
    config = tmp_path / "cluster.yaml"
    config.write_text("nodes:\n  - zone: a\n  - zone: 3\n")
    result = subprocess.run([sys.executable, "-m", "fakekube", "serve", "--config", str(config)],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert result.stderr == f"fakekube: bad --config {config}: nodes[1].zone: must be a string, got an integer (3)\n"
    assert result.stdout == ""


def test_a_bad_static_pod_manifest_is_a_config_error_too(tmp_path: Path) -> None:
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "web.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: web}]}\n")
    config = tmp_path / "cluster.yaml"
    config.write_text("nodes: 1\nstaticPodPath: manifests\n")
    result = subprocess.run([sys.executable, "-m", "fakekube", "serve", "--config", str(config)],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    # Checked against the first node that runs it: serve's control-plane node.
    assert result.stderr.startswith(f"fakekube: bad --config {config}: staticPodPath: web.yaml: "
                                    'Pod "web-fakekube-control-plane" is invalid: '
                                    "spec.containers[0].image: Required value")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_a_missing_config_file_is_exit_code_2() -> None:
    result = subprocess.run([sys.executable, "-m", "fakekube", "serve", "--config", "/nonexistent/cluster.yaml"],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert result.stderr.startswith("fakekube: bad --config /nonexistent/cluster.yaml: cannot read")


def test_auto_advance_comes_from_the_file_and_must_be_a_bool() -> None:
    assert parse_config({"autoAdvance": True}).auto_advance is True
    with pytest.raises(ConfigError, match="autoAdvance: must be true or false"):
        parse_config({"autoAdvance": "yes"})


def test_a_cluster_cidr_too_small_for_the_nodes_is_a_config_error(tmp_path: Path) -> None:
    config = tmp_path / "cluster.yaml"
    config.write_text("nodes: 300\nclusterCIDR: 10.244.0.0/16\n")
    result = subprocess.run([sys.executable, "-m", "fakekube", "serve", "--config", str(config)],
                            capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stdout) == (2, "")
    # serve adds kind's control-plane node: 301 nodes
    assert result.stderr == (f"fakekube: bad --config {config}: clusterCIDR 10.244.0.0/16 with nodeCIDRMaskSize 24 "
                             "has room for 256 nodes; the config asks for 301 (widen clusterCIDR, e.g. the default "
                             "10.224.0.0/11, or lengthen nodeCIDRMaskSize)\n")
