"""docs/time-and-faults.md's resource usage example, as a test: the block is a region of this file."""

from __future__ import annotations

import pytest


def test_howto_usage_over_time(capsys: pytest.CaptureFixture[str]) -> None:
    # docs:begin docs/time-and-faults.md#usage
    import json

    from kubernetes import client

    from fakekube import Cluster

    with Cluster(nodes=1, metrics_server=True) as cluster:   # fakekube serve has it on
        cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {
                            "name": "api", "annotations": {"fakekube.io/behaviour": json.dumps(
                                {"cpu_usage_m": [[0, 5], [60, 250]], "memory_usage_bytes": "96Mi"})}},
                        "spec": {"nodeName": "node-1", "containers": [{"name": "app", "image": "my/api:1"}]}})
        metrics = client.CustomObjectsApi(cluster.client())

        def usage() -> dict:
            pod = metrics.get_namespaced_custom_object("metrics.k8s.io", "v1beta1", "default", "pods", "api")
            return pod["containers"][0]["usage"]

        cluster.advance(30)
        print(usage())                           # {'cpu': '5m', 'memory': '96Mi'}
        cluster.advance(60)                      # the 90 s scrape: busy since 61 s
        print(usage())                           # {'cpu': '250m', 'memory': '96Mi'}
    # docs:end
    assert capsys.readouterr().out == "{'cpu': '5m', 'memory': '96Mi'}\n{'cpu': '250m', 'memory': '96Mi'}\n"
