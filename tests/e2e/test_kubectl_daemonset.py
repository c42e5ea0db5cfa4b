"""kubectl against the DaemonSet controller: `get ds` columns as the pods start, `rollout
status` through a rolling update, `rollout history` and `undo` from ControllerRevisions,
describe's events, and `drain --ignore-daemonsets` recognising daemon pods."""

from __future__ import annotations

import json

import pytest

from fakekube import Cluster

from .conftest import Kubectl
from .test_kubectl import section

pytestmark = pytest.mark.fakekube(nodes=3)

DS_YAML = """\
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
    spec:
      nodeSelector: {kubernetes.io/os: linux}
      containers:
      - name: agent
        image: busybox:1.36
"""


def row(kubectl: Kubectl) -> list[str]:
    header, line = kubectl.ok("get", "ds", "agent").splitlines()
    assert header.split() == ["NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE", "SELECTOR",
                              "AGE"]
    return line.split()[:7]


def agent_pods(kubectl: Kubectl) -> dict[str, str]:
    """Pod name → node of the daemon pods not being deleted."""
    listed = json.loads(kubectl.ok("get", "pods", "-l", "app=agent", "-o", "json"))["items"]
    return {p["metadata"]["name"]: p["spec"].get("nodeName", "") for p in listed
            if not p["metadata"].get("deletionTimestamp")}


def rollout_status(kubectl: Kubectl, fakekube: Cluster, steps: int = 10) -> tuple[int, list[str]]:
    """``kubectl rollout status ds/agent`` while the clock moves a second at a time."""
    stream = kubectl.stream("rollout", "status", "ds/agent")
    stream.wait_for_lines(1)
    for _ in range(steps):
        if stream._process.poll() is not None:
            break
        fakekube.advance(1)
        stream.wait_for_lines(len(stream.lines) + 1, timeout_s=0.5)
    result = stream.stop()
    return result.rc, [line for line in result.stdout.splitlines() if line] + result.stderr.splitlines()


def test_get_and_rollout_status_of_a_daemon_set(kubectl: Kubectl, fakekube: Cluster) -> None:
    assert kubectl.ok("create", "-f", "-", stdin=DS_YAML) == "daemonset.apps/agent created\n"
    assert row(kubectl) == ["agent", "3", "3", "0", "3", "0", "kubernetes.io/os=linux"]
    assert sorted(agent_pods(kubectl).values()) == ["node-1", "node-2", "node-3"]
    rc, lines = rollout_status(kubectl, fakekube)
    assert rc == 0
    assert lines == ['Waiting for daemon set "agent" rollout to finish: 0 of 3 updated pods are available...',
                     'daemon set "agent" successfully rolled out']
    assert row(kubectl) == ["agent", "3", "3", "3", "3", "3", "kubernetes.io/os=linux"]
    events = section(kubectl.ok("describe", "ds", "agent"), "Events")
    created = [line for line in events if "SuccessfulCreate" in line]
    assert len(created) == 3 and all("daemonset-controller" in line and "Created pod: agent-" in line
                                      for line in created)


def test_set_image_rolls_one_node_at_a_time_and_undo_goes_back(kubectl: Kubectl, fakekube: Cluster) -> None:
    kubectl.ok("create", "-f", "-", stdin=DS_YAML)
    fakekube.advance(1)
    assert kubectl.ok("set", "image", "ds/agent", "agent=busybox:1.37") == "daemonset.apps/agent image updated\n"
    rc, lines = rollout_status(kubectl, fakekube)
    assert rc == 0
    # One line per watch event (each status write); the set image already replaced node-1's pod.
    assert [line for i, line in enumerate(lines) if i == 0 or lines[i - 1] != line] == [
        'Waiting for daemon set "agent" rollout to finish: 1 out of 3 new pods have been updated...',
        'Waiting for daemon set "agent" rollout to finish: 2 out of 3 new pods have been updated...',
        'Waiting for daemon set "agent" rollout to finish: 2 of 3 updated pods are available...',
        'daemon set "agent" successfully rolled out']
    history = kubectl.ok("rollout", "history", "ds/agent").splitlines()
    assert history[0].strip() == "daemonset.apps/agent"
    assert history[1].split() == ["REVISION", "CHANGE-CAUSE"]
    assert [line.split() for line in history[2:] if line.strip()] == [["1", "<none>"], ["2", "<none>"]]
    revision_1 = kubectl.ok("rollout", "history", "ds/agent", "--revision=1")
    assert "busybox:1.36" in revision_1
    assert kubectl.ok("rollout", "undo", "ds/agent") == "daemonset.apps/agent rolled back\n"
    rc, _ = rollout_status(kubectl, fakekube)
    assert rc == 0
    ds = json.loads(kubectl.ok("get", "ds", "agent", "-o", "json"))
    assert ds["spec"]["template"]["spec"]["containers"][0]["image"] == "busybox:1.36"
    revisions = json.loads(kubectl.ok("get", "controllerrevisions", "-o", "json"))["items"]
    assert sorted(r["revision"] for r in revisions) == [2, 3]  # revision 1's template is revision 3 now


def test_drain_recognises_daemon_pods(kubectl: Kubectl, fakekube: Cluster) -> None:
    kubectl.ok("create", "-f", "-", stdin=DS_YAML)
    fakekube.advance(1)
    on_node_1 = next(name for name, node in agent_pods(kubectl).items() if node == "node-1")
    refused = kubectl("drain", "node-1")
    assert refused.rc != 0
    assert (f"cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): default/{on_node_1}"
            in refused.stderr)
    result = kubectl("drain", "node-1", "--ignore-daemonsets")
    assert result.rc == 0, result.stderr
    assert result.stdout.splitlines() == ["node/node-1 already cordoned", "node/node-1 drained"]  # by the refusal
    assert f"Warning: ignoring DaemonSet-managed Pods: default/{on_node_1}" in result.stderr
    fakekube.advance(10)
    assert agent_pods(kubectl)[on_node_1] == "node-1"  # it tolerates the unschedulable taint: stays
    assert row(kubectl)[1:6] == ["3", "3", "3", "3", "3"]
