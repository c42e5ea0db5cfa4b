"""kubectl against the scheduler: `kubectl run` gives a Running pod, and `kubectl describe`
of a pod that fits nowhere shows the FailedScheduling event with upstream's message."""

from __future__ import annotations

import json

import pytest

from fakekube import Cluster

from .conftest import Kubectl
from .test_kubectl import section

pytestmark = pytest.mark.fakekube(nodes=2)


def test_kubectl_run_gives_a_running_pod(kubectl: Kubectl, fakekube: Cluster) -> None:
    kubectl.ok("run", "web", "--image=nginx")
    fakekube.advance(2)  # the image pull and container start of the default behaviour
    pod = json.loads(kubectl.ok("get", "pod", "web", "-o", "json"))
    assert pod["spec"]["nodeName"] in ("node-1", "node-2")
    assert pod["status"]["phase"] == "Running"
    assert [c["type"] for c in pod["status"]["conditions"] if c["status"] == "True"][-1] == "PodScheduled"
    events = section(kubectl.ok("describe", "pod", "web"), "Events")
    scheduled = next(line for line in events if "Scheduled" in line.split()[:2])
    assert scheduled.split()[0] == "Normal"
    assert "default-scheduler" in scheduled
    assert scheduled.endswith(f"Successfully assigned default/web to {pod['spec']['nodeName']}")


def test_describe_shows_why_a_pod_is_pending(kubectl: Kubectl, fakekube: Cluster) -> None:
    for node in ("node-1", "node-2"):
        kubectl.ok("taint", "node", node, "dedicated=infra:NoSchedule")
    kubectl.ok("run", "web", "--image=nginx")
    text = kubectl.ok("describe", "pod", "web")
    assert "Status:           Pending" in text or "Status: Pending" in " ".join(text.split())
    events = section(text, "Events")
    failed = next(line for line in events if line.startswith("Warning FailedScheduling"))
    assert "default-scheduler" in failed
    assert failed.endswith("0/2 nodes are available: 2 node(s) had untolerated taint {dedicated: infra}. "
                           "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
    conditions = section(text, "Conditions")
    assert any(line.split()[:2] == ["PodScheduled", "False"] for line in conditions)
    kubectl.ok("taint", "node", "node-1", "dedicated-")
    fakekube.advance(1)  # the pod's 1-second back-off
    assert json.loads(kubectl.ok("get", "pod", "web", "-o", "json"))["spec"]["nodeName"] == "node-1"
