"""``fakekube serve`` as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from datetime import datetime
from pathlib import Path


def test_serve_prints_url_and_kubeconfig_and_serves_nodes(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kc.yaml"
    proc = subprocess.Popen([sys.executable, "-m", "fakekube", "serve", "--nodes", "2", "--seed", "3",
                             "--kubeconfig", str(kubeconfig)], stdout=subprocess.PIPE, text=True)
    try:
        lines = [proc.stdout.readline() for _ in range(3)]
        url = lines[0].split(" at ")[1].strip()
        assert lines[1].strip().endswith(str(kubeconfig))
        assert f"kubectl --kubeconfig {kubeconfig} get nodes" in lines[2]
        assert url in kubeconfig.read_text()
        with urllib.request.urlopen(url + "/api/v1/nodes", timeout=5) as response:
            nodes = json.load(response)
        # Like `kind create cluster` with two workers: the control-plane node, then node-1, node-2.
        assert [n["metadata"]["name"] for n in nodes["items"]] == ["fakekube-control-plane", "node-1", "node-2"]
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=10)
    assert proc.returncode == 0
    assert "stopped" in out


def test_serve_no_system_pods_is_an_empty_cluster(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "fakekube", "serve", "--nodes", "2", "--no-system-pods",
                             "--kubeconfig", str(tmp_path / "kc")], stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().split(" at ")[1].strip()
        with urllib.request.urlopen(url + "/api/v1/nodes", timeout=5) as response:
            nodes = json.load(response)
        with urllib.request.urlopen(url + "/api/v1/pods", timeout=5) as response:
            pods = json.load(response)
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
    assert [n["metadata"]["name"] for n in nodes["items"]] == ["node-1", "node-2"]
    assert pods["items"] == []


def test_serve_rejects_negative_nodes() -> None:
    result = subprocess.run([sys.executable, "-m", "fakekube", "serve", "--nodes", "-1"],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert "--nodes must be >= 0" in result.stderr


def test_serve_start_time_sets_cluster_time(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "fakekube", "serve", "--start-time", "2030-05-06T07:08:09Z",
                             "--kubeconfig", str(tmp_path / "kc")], stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().split(" at ")[1].strip()
        with urllib.request.urlopen(url + "/fakekube/v1/clock", timeout=5) as response:
            assert json.load(response)["now"] == "2030-05-06T07:08:09Z"
        with urllib.request.urlopen(url + "/api/v1/namespaces/default", timeout=5) as response:
            namespace = json.load(response)
        # The cluster booted for 30 s before the start time, as kind hands over a running cluster.
        assert namespace["metadata"]["creationTimestamp"] == "2030-05-06T07:07:39Z"
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


def test_serve_rejects_a_start_time_without_timezone() -> None:
    result = subprocess.run([sys.executable, "-m", "fakekube", "serve", "--start-time", "2030-05-06T07:08:09"],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2 and "needs a timezone" in result.stderr


def test_serve_auto_advance_moves_time_while_nobody_asks(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "fakekube", "serve", "--nodes", "1", "--auto-advance",
                             "--kubeconfig", str(tmp_path / "kc")], stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().split(" at ")[1].strip()
        # A watch is a client waiting, not talking: it sees the Lease renewals auto-advance lets
        # happen, 10 virtual s apart (its timeout is wall-clock transport time, a safety net).
        path = ("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases?watch=true&timeoutSeconds=10"
                "&fieldSelector=metadata.name%3Dnode-1")  # not the control-plane node's
        with urllib.request.urlopen(url + path, timeout=15) as stream:
            renewals = [datetime.fromisoformat(json.loads(stream.readline())["object"]["spec"]["renewTime"])
                        for _ in range(3)]
        assert [(b - a).total_seconds() for a, b in zip(renewals, renewals[1:])] == [10.0, 10.0]
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


def test_serve_controllers_flag_is_kube_controller_manager_s() -> None:
    from fakekube.cli.main import build_parser, cluster_config

    args = build_parser().parse_args(["serve", "--controllers", "*,-podgc"])
    assert cluster_config(args, None).controllers == ("*", "-podgc")
    default = build_parser().parse_args(["serve"])
    assert cluster_config(default, None).controllers == ("*",)


def test_serve_rejects_an_unknown_controller() -> None:
    result = subprocess.run([sys.executable, "-m", "fakekube.cli.main", "serve", "--controllers", "*,-nope"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert '"nope" is not in the list of known controllers' in result.stderr
