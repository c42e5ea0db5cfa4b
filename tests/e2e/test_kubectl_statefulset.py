"""kubectl against the StatefulSet controller on a default ``fakekube serve`` (time flows
with the wall clock): ``rollout status statefulset/web`` returns once every pod is up, and
``set image``, ``rollout history`` and ``rollout undo`` work from the ControllerRevisions.

One server for the module; every wait is bounded by kubectl's own ``--timeout`` and takes a
few seconds of wall time (a pod is Ready a second after it is created).
"""

from __future__ import annotations

import json
from typing import Iterator

import pytest

from tests.e2e.conftest import Kubectl, served

VERSION = "1.33"

STS_YAML = """\
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  clusterIP: None
  selector:
    app: web
  ports:
  - port: 80
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  replicas: 3
  serviceName: web
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
"""


@pytest.fixture(scope="module")
def kubectl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    """kubectl 1.33 against one ``fakekube serve`` run with no time flags at all."""
    with served(tmp_path_factory.mktemp("serve-statefulset"), "--nodes", "1") as server:
        yield server.kubectl


def rollout_status(kubectl: Kubectl) -> list[str]:
    done = kubectl("rollout", "status", "statefulset/web", "--timeout=60s", timeout_s=70)
    assert done.rc == 0, done.stderr
    return done.stdout.splitlines()


def test_rollout_status_returns_for_a_new_statefulset(kubectl: Kubectl) -> None:
    assert kubectl.ok("apply", "-f", "-", stdin=STS_YAML) == "service/web created\nstatefulset.apps/web created\n"
    # The apiserver defaults partition to 0, so kubectl takes its partitioned branch (as on a real cluster).
    assert rollout_status(kubectl)[-1] == "partitioned roll out complete: 3 new pods have been updated..."
    listed = json.loads(kubectl.ok("get", "pods", "-l", "app=web", "-o", "json"))["items"]
    assert [p["metadata"]["name"] for p in listed] == ["web-0", "web-1", "web-2"]
    assert kubectl.ok("get", "sts", "web", "--no-headers").split()[:2] == ["web", "3/3"]


def test_set_image_rolls_out_and_undo_goes_back(kubectl: Kubectl) -> None:
    assert kubectl.ok("set", "image", "sts/web", "nginx=nginx:1.28") == "statefulset.apps/web image updated\n"
    rollout_status(kubectl)
    history = kubectl.ok("rollout", "history", "sts/web").splitlines()
    assert history[0].strip() == "statefulset.apps/web"
    assert [line.split() for line in history[2:] if line.strip()] == [["1", "<none>"], ["2", "<none>"]]
    assert "nginx:1.27" in kubectl.ok("rollout", "history", "sts/web", "--revision=1")
    assert kubectl.ok("rollout", "undo", "sts/web") == "statefulset.apps/web rolled back\n"
    rollout_status(kubectl)
    listed = json.loads(kubectl.ok("get", "pods", "-l", "app=web", "-o", "json"))["items"]
    assert {p["spec"]["containers"][0]["image"] for p in listed} == {"nginx:1.27"}
    revisions = json.loads(kubectl.ok("get", "controllerrevisions", "-o", "json"))["items"]
    assert sorted(r["revision"] for r in revisions) == [2, 3]  # revision 1's template is revision 3 now
