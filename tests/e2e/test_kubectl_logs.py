"""kubectl logs shows the log lines a pod's behaviour configures, on cluster time."""

from __future__ import annotations

import json

import pytest

from fakekube import Cluster
from tests.e2e.conftest import Kubectl


@pytest.mark.fakekube(nodes=1)
def test_kubectl_logs_shows_configured_lines(kubectl: Kubectl, fakekube: Cluster) -> None:
    behaviour = {"log_lines": [[0, "booting"], [3, "ready to serve"], [30, "later line"]]}
    fakekube.create({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": "app", "namespace": "default",
                                  "annotations": {"fakekube.io/behaviour": json.dumps(behaviour)}},
                     "spec": {"nodeName": "node-1", "containers": [{"name": "main", "image": "example/app:1"}]}})
    fakekube.advance(10)
    assert kubectl.ok("logs", "app") == "booting\nready to serve\n"
    fakekube.advance(30)
    assert kubectl.ok("logs", "app", "--tail=1") == "later line\n"
    missing = kubectl("logs", "app", "-c", "sidecar")
    assert missing.rc == 1 and "container sidecar is not valid for pod app" in missing.stderr
