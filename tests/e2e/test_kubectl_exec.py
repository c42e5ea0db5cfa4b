"""kubectl exec runs the commands a container's behaviour declares and the container's own
commands and shell on its filesystem, over WebSocket (kubectl 1.30+) and SPDY/3.1 (kubectl
1.27-1.29, or any with KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false), with stdin; kubectl cp copies
both ways. attach and port-forward say what is not simulated."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fakekube import Cluster
from tests.e2e.conftest import Kubectl, kubectl_or_skip

WEBSOCKET_VERSIONS = ("1.30", "1.31", "1.32", "1.33", "1.34", "1.35")
SPDY_VERSIONS = ("1.27", "1.28", "1.29")
ALL_VERSIONS = SPDY_VERSIONS + WEBSOCKET_VERSIONS

BEHAVIOUR = {"exec_commands": [
    {"command": "migrate *", "stdout": "applied 3 migrations\n", "stderr": "warning: slow\n", "exit_code": 3},
    {"command": ["cat", "/etc/app.conf"], "stdout": "port=8080\n"},
]}


def _pod(name: str, containers: list[dict[str, Any]], behaviour: dict[str, Any] | None = None) -> dict[str, Any]:
    annotations = {"fakekube.io/behaviour": json.dumps(behaviour)} if behaviour else {}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "annotations": annotations},
            "spec": {"containers": containers}}


@pytest.fixture(params=ALL_VERSIONS, ids=lambda v: f"kubectl{v}")
def any_kubectl(request: pytest.FixtureRequest, fakekube: Cluster, kubectl_cache_dir: str) -> Kubectl:
    return kubectl_or_skip(request.param, fakekube, kubectl_cache_dir)


def over_websocket(kubectl: Kubectl) -> bool:
    """Does this kubectl exec over WebSocket (1.30+), through the apiserver's stream translator?"""
    return kubectl.version not in SPDY_VERSIONS


@pytest.mark.fakekube(nodes=1)
def test_exec_runs_declared_and_built_in_commands(any_kubectl: Kubectl, fakekube: Cluster) -> None:
    env = [{"name": "MODE", "value": "prod"}]
    fakekube.create(_pod("web", [{"name": "app", "image": "example/app:1", "env": env}], BEHAVIOUR))
    fakekube.advance(5)
    kubectl = any_kubectl
    assert kubectl("exec", "web", "--", "echo", "hi") == (0, "hi\n", "")
    assert kubectl.ok("exec", "web", "--", "cat", "/etc/app.conf") == "port=8080\n"
    assert kubectl.ok("exec", "web", "--", "hostname") == "web\n"
    assert kubectl.ok("exec", "web", "--", "env") == (
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nHOSTNAME=web\nMODE=prod\nHOME=/root\n")
    assert kubectl("exec", "web", "--", "printenv", "MODE", "NOPE") == (1, "prod\n", "command terminated with exit code 1\n")
    assert kubectl("exec", "web", "--", "migrate", "--all") == (
        3, "applied 3 migrations\n", "warning: slow\ncommand terminated with exit code 3\n")
    assert kubectl("exec", "web", "--", "sh", "-c", "echo $MODE && migrate now || echo rc=$?") == (
        0, "prod\napplied 3 migrations\nrc=3\n", "warning: slow\n")
    assert kubectl("exec", "web", "--", "sh", "-c", "cat /etc/app.conf | grep port") == (0, "port=8080\n", "")
    # a command that reads no stdin ends at once (some kubectl versions log that the session closed first)
    assert kubectl("exec", "-i", "web", "--", "true", stdin="ignored input\n")[:2] == (0, "")
    # a shell reads its script from stdin; a filter reads all of it
    assert kubectl("exec", "-i", "web", "--", "sh", stdin="echo $MODE > /tmp/m\ncat /tmp/m; exit 4\n") == (
        4, "prod\n", "command terminated with exit code 4\n")
    assert kubectl("exec", "-i", "web", "--", "sh", "-c", "wc -l | tr -d ' '", stdin="a\nb\n") == (0, "2\n", "")


@pytest.mark.fakekube(nodes=1)
def test_exec_of_an_undeclared_command_fails_as_containerd_does(any_kubectl: Kubectl, fakekube: Cluster) -> None:
    fakekube.create(_pod("web", [{"name": "app", "image": "example/app:1"}]))
    fakekube.advance(5)
    result = any_kubectl("exec", "web", "--", "psql", "-c", "select 1")
    assert result.rc == 1 and result.stdout == ""
    # The apiserver's stream translator (WebSocket) wraps the kubelet's InternalError once more.
    internal = "Internal error occurred: " * (2 if over_websocket(any_kubectl) else 1)
    assert result.stderr.startswith(f"error: {internal}error executing command "
                                    'in container: failed to exec in container: failed to start exec "'), result.stderr
    assert result.stderr.endswith('": OCI runtime exec failed: exec failed: unable to start container process: '
                                  'exec: "psql": executable file not found in $PATH: unknown\n'), result.stderr


@pytest.mark.fakekube(nodes=1)
def test_exec_picks_the_container_and_refuses_one_not_running(any_kubectl: Kubectl, fakekube: Cluster) -> None:
    behaviour = {"sidecar": {"exec_commands": [{"command": "whichpod", "stdout": "sidecar\n"}]},
                 "slow": {"start_delay_s": 60}}
    containers = [{"name": "app", "image": "example/app:1"}, {"name": "sidecar", "image": "example/side:1"},
                  {"name": "slow", "image": "example/slow:1"}]
    fakekube.create(_pod("web", containers, behaviour))
    fakekube.advance(5)
    kubectl = any_kubectl
    assert kubectl("exec", "web", "-c", "sidecar", "--", "whichpod") == (0, "sidecar\n", "")
    assert kubectl("exec", "web", "-c", "app", "--", "whichpod").stderr.endswith(
        'exec: "whichpod": executable file not found in $PATH: unknown\n')
    defaulted = kubectl("exec", "web", "--", "echo", "ok")
    assert defaulted.rc == 0 and defaulted.stdout == "ok\n"
    assert 'Defaulted container "app" out of: app, sidecar, slow' in defaulted.stderr
    # The kubelet refuses before the upgrade; the stream translator reports it as an InternalError.
    internal = "Internal error occurred: " if over_websocket(kubectl) else ""
    assert kubectl("exec", "web", "-c", "slow", "--", "echo", "ok") == (
        1, "", f'error: {internal}unable to upgrade connection: container not found ("slow")\n')
    unknown = kubectl("exec", "web", "-c", "nope", "--", "echo")
    assert unknown.rc == 1 and "container nope is not valid for pod web" in unknown.stderr


@pytest.mark.fakekube(nodes=1)
def test_exec_of_a_completed_pod_is_refused_by_kubectl(any_kubectl: Kubectl, fakekube: Cluster) -> None:
    pod = _pod("job", [{"name": "main", "image": "example/job:1"}], {"run_for_s": 1})
    pod["spec"]["restartPolicy"] = "Never"
    fakekube.create(pod)
    fakekube.advance(10)
    assert any_kubectl("exec", "job", "--", "true") == (
        1, "", "error: cannot exec into a container in a completed pod; current phase is Succeeded\n")


@pytest.mark.fakekube(nodes=1)
def test_exec_and_logs_on_an_unreachable_node_fail_as_the_apiserver_dials(any_kubectl: Kubectl,
                                                                           fakekube: Cluster) -> None:
    """The apiserver dials the node's kubelet (InternalIP:10250) first: Go's dial error, a 500
    without a reason, which kubectl prints as "Error from server: ..."."""
    fakekube.create(_pod("web", [{"name": "app", "image": "example/app:1"}]))
    fakekube.advance(5)
    kubelet = "172.18.0.2:10250"
    fakekube.fail_node("node-1")  # the machine is gone
    assert any_kubectl("exec", "web", "--", "true") == (
        1, "", f"Error from server: error dialing backend: dial tcp {kubelet}: connect: no route to host\n")
    assert any_kubectl("logs", "web", "--tail=5") == (
        1, "", f'Error from server: Get "https://{kubelet}/containerLogs/default/web/app?tailLines=5": '
               f"dial tcp {kubelet}: connect: no route to host\n")
    fakekube.recover_node("node-1")
    fakekube.partition_node("node-1")  # packets to it are lost: the dial times out
    assert any_kubectl("exec", "web", "--", "true")[2] == (
        f"Error from server: error dialing backend: dial tcp {kubelet}: i/o timeout\n")
    fakekube.heal_node("node-1")
    assert any_kubectl("exec", "web", "--", "true") == (0, "", "")
    assert any_kubectl("logs", "web")[0] == 0


@pytest.mark.fakekube(nodes=1)
def test_kubectl_cp_copies_into_and_out_of_a_container(any_kubectl: Kubectl, fakekube: Cluster, tmp_path: Any) -> None:
    fakekube.create(_pod("web", [{"name": "app", "image": "busybox:1.36", "command": ["sleep", "infinity"]}]))
    fakekube.advance(5)
    source = tmp_path / "site"
    (source / "assets").mkdir(parents=True)
    (source / "index.html").write_text("<h1>hi</h1>\n")
    (source / "assets" / "logo.bin").write_bytes(bytes(range(256)) * 1000)
    kubectl = any_kubectl
    assert kubectl("cp", str(source), "web:/srv/site")[0] == 0
    assert kubectl.ok("exec", "web", "--", "find", "/srv/site", "-type", "f") == (
        "/srv/site/assets/logo.bin\n/srv/site/index.html\n")
    assert kubectl.ok("exec", "web", "--", "cat", "/srv/site/index.html") == "<h1>hi</h1>\n"
    back = tmp_path / "back"
    assert kubectl("cp", "web:/srv/site", str(back))[0] == 0
    assert (back / "index.html").read_text() == "<h1>hi</h1>\n"
    assert (back / "assets" / "logo.bin").read_bytes() == bytes(range(256)) * 1000
    assert kubectl("cp", "web:/etc/resolv.conf", str(tmp_path / "resolv.conf"))[0] == 0
    assert (tmp_path / "resolv.conf").read_text().startswith("search default.svc.cluster.local ")
    kubectl("cp", "web:/nope", str(tmp_path / "nope"))  # (what kubectl prints of tar's complaint varies by version)
    assert not (tmp_path / "nope").exists()


@pytest.mark.fakekube(nodes=1, kubernetes_version="1.33")
def test_a_websocket_kubectl_told_to_use_spdy(fakekube: Cluster, kubectl_cache_dir: str) -> None:
    kubectl = kubectl_or_skip("1.33", fakekube, kubectl_cache_dir)
    kubectl._env["KUBECTL_REMOTE_COMMAND_WEBSOCKETS"] = "false"  # client-go's switch back to SPDY
    fakekube.create(_pod("web", [{"name": "app", "image": "example/app:1"}], BEHAVIOUR))
    fakekube.advance(5)
    assert kubectl("exec", "-i", "web", "--", "migrate", "now", stdin="dropped\n") == (
        3, "applied 3 migrations\n", "warning: slow\ncommand terminated with exit code 3\n")
