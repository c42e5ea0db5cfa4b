"""A container whose program is missing from its base image fails to start, as containerd and
runc make it fail: ``busybox`` has no ``myserver``, no image has ``/app/run`` unless a volume
puts it there.

The kubelet records Created, then a Warning ``Failed`` with "Error: " and the runtime's error;
the container's status is terminated with reason StartError, exit code 128, the error as its
message and a ``startedAt`` of the Unix epoch (containerd reports no start time); then it
restarts under CrashLoopBackOff as its restart policy says. fakekube knows what busybox and
alpine hold; an application image (``python:3.12``) keeps its unknown commands: those run as
declared (test_command_not_simulated.py). The pod is created at t=0, the first start at t=1.
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest

from fakekube import Cluster
from tests.integration.support import pod
from tests.integration.timeline import at

Obj = dict[str, Any]
RUNC = ("failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create "
        "failed: unable to start container process: ")


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    with Cluster(nodes=1) as served:
        yield served


def status(cluster: Cluster, name: str) -> Obj:
    return cluster.get("v1", "Pod", name)["status"]["containerStatuses"][0]


def events(cluster: Cluster, name: str) -> list[tuple[str, str, str]]:
    return [(event["type"], event["reason"], event["message"]) for event in cluster.events("default", name)]


@pytest.mark.parametrize(("container", "error"), [
    ({"image": "busybox:1.36", "command": ["myserver", "--port", "8080"]},
     'exec: "myserver": executable file not found in $PATH: unknown'),
    ({"image": "busybox", "args": ["myserver"]},      # kubectl run d --image=busybox -- myserver: no ENTRYPOINT
     'exec: "myserver": executable file not found in $PATH: unknown'),
    ({"image": "alpine:3.20", "command": ["python3", "app.py"]},
     'exec: "python3": executable file not found in $PATH: unknown'),
    ({"image": "busybox:1.36", "command": ["/app/run"]},
     'exec: "/app/run": stat /app/run: no such file or directory: unknown'),
], ids=["name", "args-alone", "alpine", "path"])
def test_a_missing_program_is_a_start_error_then_crash_loop(cluster: Cluster, container: Obj, error: str) -> None:
    cluster.create(pod("srv", containers=[{"name": "c", **container}]))
    at(cluster, 12)
    shown = status(cluster, "srv")
    assert shown["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    terminated = shown["lastState"]["terminated"]
    assert list(terminated) == ["exitCode", "reason", "message", "startedAt", "finishedAt", "containerID"]
    assert (terminated["exitCode"], terminated["reason"], terminated["message"], terminated["startedAt"]) == (
        128, "StartError", RUNC + error, "1970-01-01T00:00:00Z")
    assert shown["started"] is False and shown["ready"] is False
    seen = events(cluster, "srv")
    assert ("Warning", "Failed", "Error: " + RUNC + error) in seen
    assert [reason for _, reason, _ in seen if reason in ("Created", "Started")] == ["Created"]  # never Started
    assert not [reason for _, reason, _ in seen if reason == "CommandNotSimulated"]
    assert cluster.logs("srv") == ""


@pytest.mark.parametrize("container", [
    {"image": "busybox:1.36", "command": ["httpd", "-f", "-p", "8080"]},   # an applet the model does not run
    {"image": "busybox:1.36", "command": ["/bin/busybox", "nc", "-l", "-p", "80"]},
    {"image": "alpine:3.20", "command": ["/sbin/apk", "info"]},
    {"image": "debian:12", "command": ["apt-get", "update"]},               # more than fakekube knows
    {"image": "python:3.12", "command": ["myserver"]},                      # an application image
], ids=["applet", "busybox-path", "apk", "debian", "application"])
def test_what_the_image_may_hold_starts(cluster: Cluster, container: Obj) -> None:
    cluster.create(pod("srv", containers=[{"name": "c", **container}]))
    at(cluster, 30)
    assert list(status(cluster, "srv")["state"]) == ["running"]


def test_under_restart_policy_never_the_pod_fails(cluster: Cluster) -> None:
    cluster.create(pod("once", restartPolicy="Never",
                       containers=[{"name": "c", "image": "busybox:1.36", "command": ["myserver"]}]))
    at(cluster, 5)
    got = cluster.get("v1", "Pod", "once")["status"]
    assert got["phase"] == "Failed"
    assert got["containerStatuses"][0]["state"]["terminated"]["reason"] == "StartError"


def test_a_declared_behaviour_or_a_script_on_a_volume_starts(cluster: Cluster) -> None:
    cluster.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "scripts"},
                    "data": {"run": "#!/bin/sh\necho from the volume\nsleep 3600\n"}})
    cluster.create(pod("declared", behaviour={"run_for_s": 3600},
                       containers=[{"name": "c", "image": "busybox:1.36", "command": ["myserver"]}]))
    cluster.create(pod("script", containers=[{
        "name": "c", "image": "busybox:1.36", "command": ["/app/run"],
        "volumeMounts": [{"name": "s", "mountPath": "/app"}]}],
        volumes=[{"name": "s", "configMap": {"name": "scripts", "defaultMode": 0o755}}]))
    at(cluster, 5)
    assert list(status(cluster, "declared")["state"]) == ["running"]
    assert list(status(cluster, "script")["state"]) == ["running"]
    assert cluster.logs("script") == "from the volume\n"
