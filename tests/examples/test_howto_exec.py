"""docs/time-and-faults.md's exec example, as a test: the block is a region of this file."""

from __future__ import annotations

import pytest


def test_howto_exec_a_declared_command(capsys: pytest.CaptureFixture[str]) -> None:
    # docs:begin docs/time-and-faults.md#exec
    import json

    from kubernetes import client
    from kubernetes.stream import stream

    from fakekube import Cluster

    with Cluster(nodes=1) as cluster:
        cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {
                            "name": "db", "annotations": {"fakekube.io/behaviour": json.dumps({"exec_commands": [
                                {"command": "pg_isready *", "stdout": "accepting connections\n"},
                                {"command": "psql -c *", "stderr": "FATAL: role does not exist\n", "exit_code": 2}]})}},
                        "spec": {"nodeName": "node-1", "containers": [{"name": "pg", "image": "postgres:17"}]}})
        cluster.advance(2)                       # running: exec needs a running container
        core = client.CoreV1Api(cluster.client())
        print(stream(core.connect_get_namespaced_pod_exec, "db", "default", command=["pg_isready", "-q"],
                     stdout=True, stderr=True, stdin=False, tty=False), end="")         # accepting connections
        session = stream(core.connect_get_namespaced_pod_exec, "db", "default", command=["psql", "-c", "select 1"],
                         stdout=True, stderr=True, stdin=False, tty=False, _preload_content=False)
        session.run_forever(timeout=10)
        print(session.read_stderr(), session.returncode, end="")                        # FATAL: ... 2
    # docs:end
    assert capsys.readouterr().out == "accepting connections\nFATAL: role does not exist\n 2"
