"""kubectl against the Deployment controller: create deployment, get, scale, set image,
rollout status (waiting while the test moves the clock), history, undo (--to-revision),
restart, pause/resume, a progress deadline exceeded, and describe's conditions and events."""

from __future__ import annotations

import json

import pytest

from fakekube import Cluster

from .conftest import Kubectl
from .test_kubectl import section

pytestmark = pytest.mark.fakekube(nodes=2)


def row(kubectl: Kubectl) -> list[str]:
    header, line = kubectl.ok("get", "deploy", "web").splitlines()
    assert header.split() == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    return line.split()[:4]


def deployment(kubectl: Kubectl) -> dict:
    return json.loads(kubectl.ok("get", "deploy", "web", "-o", "json"))


def image(kubectl: Kubectl) -> str:
    return deployment(kubectl)["spec"]["template"]["spec"]["containers"][0]["image"]


def history(kubectl: Kubectl) -> list[list[str]]:
    lines = kubectl.ok("rollout", "history", "deployment/web").splitlines()
    assert lines[0].strip() == "deployment.apps/web"
    assert lines[1].split() == ["REVISION", "CHANGE-CAUSE"]
    return [line.split() for line in lines[2:] if line.strip()]


def wait_rollout(kubectl: Kubectl, fakekube: Cluster, step_s: float = 1.0, steps: int = 30) -> tuple[int, list[str]]:
    """``kubectl rollout status`` while the clock moves ``step_s`` at a time (the e2e
    cluster's clock is manual): its exit code and the lines it printed."""
    stream = kubectl.stream("rollout", "status", "deployment/web")
    stream.wait_for_lines(1)
    for _ in range(steps):
        if stream._process.poll() is not None:
            break
        fakekube.advance(step_s)
        stream.wait_for_lines(len(stream.lines) + 1, timeout_s=0.5)
    result = stream.stop()
    return result.rc, [line for line in result.stdout.splitlines() if line] + result.stderr.splitlines()


def test_create_scale_and_roll_out_a_deployment(kubectl: Kubectl, fakekube: Cluster) -> None:
    out = kubectl.ok("create", "deployment", "web", "--image=nginx:1.27", "--replicas=3")
    assert out == "deployment.apps/web created\n"
    assert row(kubectl) == ["web", "0/3", "3", "0"]
    rc, lines = wait_rollout(kubectl, fakekube)
    assert rc == 0
    assert lines[0] == 'Waiting for deployment "web" rollout to finish: 0 of 3 updated replicas are available...'
    assert lines[-1] == 'deployment "web" successfully rolled out'
    assert row(kubectl) == ["web", "3/3", "3", "3"]
    assert kubectl.ok("scale", "deployment", "web", "--replicas=5") == "deployment.apps/web scaled\n"
    fakekube.advance(2)
    assert row(kubectl) == ["web", "5/5", "5", "5"]
    rs = json.loads(kubectl.ok("get", "rs", "-l", "app=web", "-o", "json"))["items"]
    assert len(rs) == 1 and rs[0]["metadata"]["name"].startswith("web-")
    hash_ = rs[0]["metadata"]["labels"]["pod-template-hash"]
    assert rs[0]["metadata"]["name"] == f"web-{hash_}"
    events = section(kubectl.ok("describe", "deployment", "web"), "Events")
    name = rs[0]["metadata"]["name"]
    assert any(line.endswith(f"deployment-controller Scaled up replica set {name} from 0 to 3") for line in events)
    assert any(line.endswith(f"deployment-controller Scaled up replica set {name} from 3 to 5") for line in events)


def test_set_image_history_undo_and_restart(kubectl: Kubectl, fakekube: Cluster) -> None:
    kubectl.ok("create", "deployment", "web", "--image=nginx:1.27", "--replicas=4")
    fakekube.advance(2)
    out = kubectl.ok("set", "image", "deployment/web", "nginx=nginx:1.28")
    assert out == "deployment.apps/web image updated\n"
    rc, lines = wait_rollout(kubectl, fakekube)
    assert rc == 0 and lines[-1] == 'deployment "web" successfully rolled out'
    assert all(line.startswith('Waiting for deployment "web" rollout to finish: ') for line in lines[:-1])
    assert history(kubectl) == [["1", "<none>"], ["2", "<none>"]]
    kubectl.ok("annotate", "deployment/web", "kubernetes.io/change-cause=to-1.28")
    fakekube.advance(1)  # the annotation reaches the current ReplicaSet
    assert history(kubectl) == [["1", "<none>"], ["2", "to-1.28"]]
    detail = kubectl.ok("rollout", "history", "deployment/web", "--revision=1")
    assert "nginx:1.27" in detail and "pod-template-hash" in detail
    assert kubectl.ok("rollout", "undo", "deployment/web") == "deployment.apps/web rolled back\n"
    assert image(kubectl) == "nginx:1.27"
    fakekube.advance(5)
    assert history(kubectl) == [["2", "to-1.28"], ["3", "<none>"]]  # undo copied revision 1's annotations back
    assert deployment(kubectl)["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"
    assert kubectl.ok("rollout", "undo", "deployment/web", "--to-revision=2") == "deployment.apps/web rolled back\n"
    assert image(kubectl) == "nginx:1.28"
    fakekube.advance(5)
    assert history(kubectl) == [["3", "<none>"], ["4", "to-1.28"]]
    missing = kubectl("rollout", "undo", "deployment/web", "--to-revision=9")
    assert missing.rc == 1 and "unable to find specified revision 9 in history" in missing.stderr
    assert kubectl.ok("rollout", "restart", "deployment/web") == "deployment.apps/web restarted\n"
    annotations = deployment(kubectl)["spec"]["template"]["metadata"]["annotations"]
    assert "kubectl.kubernetes.io/restartedAt" in annotations
    fakekube.advance(5)
    assert history(kubectl) == [["3", "<none>"], ["4", "to-1.28"], ["5", "to-1.28"]]
    assert row(kubectl) == ["web", "4/4", "4", "4"]


def test_pause_resume_and_a_progress_deadline(kubectl: Kubectl, fakekube: Cluster) -> None:
    kubectl.ok("create", "deployment", "web", "--image=nginx:1.27", "--replicas=2")
    fakekube.advance(2)
    assert kubectl.ok("rollout", "pause", "deployment/web") == "deployment.apps/web paused\n"
    kubectl.ok("set", "image", "deployment/web", "nginx=nginx:1.28")
    fakekube.advance(5)
    assert history(kubectl) == [["1", "<none>"]]
    conditions = section(kubectl.ok("describe", "deployment", "web"), "Conditions")
    assert "Progressing Unknown DeploymentPaused" in conditions
    assert kubectl.ok("rollout", "resume", "deployment/web") == "deployment.apps/web resumed\n"
    fakekube.advance(5)
    assert history(kubectl) == [["1", "<none>"], ["2", "<none>"]]
    never_ready = {"spec": {"progressDeadlineSeconds": 30, "template": {
        "metadata": {"annotations": {"fakekube.io/behaviour": '{"readiness": false}'}},
        "spec": {"containers": [{"name": "nginx", "image": "nginx:1.29",
                                 "readinessProbe": {"httpGet": {"path": "/", "port": 80}}}]}}}}
    kubectl.ok("patch", "deployment", "web", "-p", json.dumps(never_ready))
    rc, lines = wait_rollout(kubectl, fakekube, step_s=10, steps=10)
    assert rc == 1
    assert lines[-1] == 'error: deployment "web" exceeded its progress deadline'
    conditions = section(kubectl.ok("describe", "deployment", "web"), "Conditions")
    assert "Progressing False ProgressDeadlineExceeded" in conditions
    assert "Available True MinimumReplicasAvailable" in conditions
