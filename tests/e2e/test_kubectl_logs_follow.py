"""``kubectl logs -f`` prints lines as cluster time reaches them and exits when the container ends."""

from __future__ import annotations

import json

import pytest

from fakekube import Cluster
from tests.e2e.conftest import CALL_TIMEOUT_S, Kubectl


@pytest.mark.fakekube(nodes=1)
def test_kubectl_logs_follow_streams_until_the_container_exits(kubectl: Kubectl, fakekube: Cluster) -> None:
    behaviour = {"log_lines": [[0, "booting"], [3, "ready to serve"], [30, "later line"], [90, "never"]],
                 "run_for_s": 60}
    fakekube.create({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": "app", "namespace": "default",
                                  "annotations": {"fakekube.io/behaviour": json.dumps(behaviour)}},
                     "spec": {"nodeName": "node-1", "restartPolicy": "Never",
                              "containers": [{"name": "main", "image": "example/app:1"}]}})
    fakekube.advance(10)
    stream = kubectl.stream("logs", "-f", "app")
    try:
        assert stream.wait_for_lines(2) == ["booting", "ready to serve"]
        fakekube.advance(30)
        assert stream.wait_for_lines(3) == ["booting", "ready to serve", "later line"]
        fakekube.advance(60)  # the container exits at 61: kubectl's stream ends, and kubectl with it
        assert stream.wait_for_lines(4) == ["booting", "ready to serve", "later line"]  # returns at the end
        exit_code = stream._process.wait(timeout=CALL_TIMEOUT_S)  # exits by itself, not stopped by us
    finally:
        result = stream.stop()
    assert exit_code == 0, result.stderr
