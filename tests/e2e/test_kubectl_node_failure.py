"""kubectl's view of a failed node, driven through the control API as a non-Python test would."""

from __future__ import annotations

import json
import urllib.request

import pytest

from fakekube import Cluster
from tests.e2e.conftest import Kubectl


def control(cluster: Cluster, path: str, body: dict | None = None) -> dict:
    request = urllib.request.Request(cluster.url + path, method="POST", data=json.dumps(body or {}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.load(response)


@pytest.mark.fakekube(nodes=3)
def test_get_nodes_shows_not_ready_after_a_failure(kubectl: Kubectl, fakekube: Cluster) -> None:
    control(fakekube, "/fakekube/v1/nodes/node-2/fail")
    control(fakekube, "/fakekube/v1/clock/advance", {"seconds": 60})
    rows = [line.split() for line in kubectl.ok("get", "nodes").splitlines()[1:]]
    assert [(row[0], row[1]) for row in rows] == [("node-1", "Ready"), ("node-2", "NotReady"), ("node-3", "Ready")]
    described = kubectl.ok("describe", "node", "node-2")
    assert "node.kubernetes.io/unreachable:NoExecute" in described
    assert "Kubelet stopped posting node status." in described


@pytest.mark.fakekube(nodes=2)
def test_describe_shows_a_reported_condition_and_its_taint(kubectl: Kubectl, fakekube: Cluster) -> None:
    control(fakekube, "/fakekube/v1/nodes/node-1/conditions", {"type": "DiskPressure", "status": "True"})
    control(fakekube, "/fakekube/v1/clock/advance", {"seconds": 10})
    described = kubectl.ok("describe", "node", "node-1")
    assert "node.kubernetes.io/disk-pressure:NoSchedule" in described
    pressure = next(line.split() for line in described.splitlines() if line.strip().startswith("DiskPressure"))
    assert pressure[1] == "True" and "KubeletHasDiskPressure" in pressure


@pytest.mark.fakekube(nodes=3)
def test_a_partitioned_node_is_not_ready_and_ready_again_once_healed(kubectl: Kubectl, fakekube: Cluster) -> None:
    control(fakekube, "/fakekube/v1/nodes/node-3/partition")
    control(fakekube, "/fakekube/v1/clock/advance", {"seconds": 60})
    rows = [line.split() for line in kubectl.ok("get", "nodes").splitlines()[1:]]
    assert [(row[0], row[1]) for row in rows] == [("node-1", "Ready"), ("node-2", "Ready"), ("node-3", "NotReady")]
    control(fakekube, "/fakekube/v1/nodes/node-3/heal")
    rows = [line.split() for line in kubectl.ok("get", "nodes").splitlines()[1:]]
    assert rows[2][:2] == ["node-3", "Ready"]


def test_serve_with_time_scale_goes_not_ready_without_advancing(tmp_path, kubectl: Kubectl,
                                                                 kubectl_cache_dir: str) -> None:
    """Black-box clients cannot move the clock: with --time-scale 60, 45 virtual seconds pass
    in under a second of wall time. The wait is bounded (10 s), not a fixed sleep."""
    import subprocess
    import sys
    import time

    kubeconfig = tmp_path / "kc"
    proc = subprocess.Popen([sys.executable, "-m", "fakekube", "serve", "--nodes", "2", "--time-scale", "60",
                             "--kubeconfig", str(kubeconfig)], stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().split(" at ")[1].strip()
        proc.stdout.readline()
        request = urllib.request.Request(url + "/fakekube/v1/nodes/node-2/fail", method="POST", data=b"{}")
        urllib.request.urlopen(request, timeout=5).read()
        local = Kubectl(kubectl.binary, kubectl.version, str(kubeconfig), kubectl_cache_dir)
        deadline = time.monotonic() + 10
        statuses: dict[str, str] = {}
        while time.monotonic() < deadline:
            rows = [line.split() for line in local.ok("get", "nodes").splitlines()[1:]]
            statuses = {row[0]: row[1] for row in rows}
            if statuses.get("node-2") == "NotReady":
                break
        # `fakekube serve` starts like kind: the control-plane node besides the two workers.
        assert statuses == {"fakekube-control-plane": "Ready", "node-1": "Ready", "node-2": "NotReady"}
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
