"""The shell people write, in container commands and in exec, at exact virtual times.

A Job's ``for i in $(seq 0 9)`` completes with its ten lines; pipes, redirections,
``if``/``case``/``until``, functions and arithmetic run; a script reads its stdin over exec
(the official client's ``stream()``); ``nslookup`` answers from Services; a program's
``trap … TERM`` is what SIGTERM runs. The cluster starts at t=0; a pod created then starts its
containers at t=1.
"""

from __future__ import annotations

import json
import time
from typing import Any, Iterator

import pytest
from kubernetes import client
from kubernetes.stream import stream
from kubernetes.stream.ws_client import ERROR_CHANNEL

from fakekube import Cluster
from fakekube.kubelet.behaviour import LogLine
from fakekube.kubelet.programs import stop_response
from fakekube.kubelet.termination import StopResponse
from tests.integration.support import pod
from tests.integration.timeline import at

Obj = dict[str, Any]


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    with Cluster(nodes=1) as served:
        yield served


def busybox(name: str = "c", **fields: Any) -> Obj:
    return {"name": name, "image": "busybox:1.36", **fields}


def logs(cluster: Cluster, name: str, timestamps: bool = False) -> str:
    return client.CoreV1Api(cluster.client()).read_namespaced_pod_log(name, "default", timestamps=timestamps)


def test_a_jobs_counting_loop_completes_in_a_second_with_its_ten_lines(cluster: Cluster) -> None:
    cluster.create({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "count", "namespace": "default"},
                    "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [busybox(
                        command=["sh", "-c", "for i in $(seq 0 9); do echo $i; done"])]}}}})
    at(cluster, 2)
    job = cluster.get("batch/v1", "Job", "count")
    assert job["status"].get("succeeded") == 1
    assert job["status"]["completionTime"] == "2025-01-01T00:00:01Z"
    (name,) = [p["metadata"]["name"] for p in cluster.list("v1", "Pod")
               if p["metadata"].get("labels", {}).get("job-name") == "count"]
    assert logs(cluster, name) == "".join(f"{i}\n" for i in range(10))


def test_pipes_redirections_and_compound_commands_in_a_containers_script(cluster: Cluster) -> None:
    script = """
        greet() { printf 'hello %s\\n' "$1"; }
        n=0
        until [ $n -ge 3 ]; do n=$((n + 1)); greet "round $n" >> /tmp/log; sleep 2; done
        case "$(wc -l < /tmp/log)" in
            3) echo "three lines" ;;
            *) echo "unexpected" ;;
        esac
        if grep -q 'round 2' /tmp/log; then cut -d' ' -f3 /tmp/log | tr '\\n' ','; echo; fi
        echo "$(date +%S) done" 2>&1 | sed 's/done/finished/'
        exit 4
    """
    cluster.create(pod("script", restartPolicy="Never", containers=[busybox(command=["sh", "-c", script])]))
    at(cluster, 8)
    terminated = cluster.get("v1", "Pod", "script")["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["finishedAt"]) == (4, "2025-01-01T00:00:07Z")
    assert logs(cluster, "script", timestamps=True) == (
        "2025-01-01T00:00:07.000000000Z three lines\n"
        "2025-01-01T00:00:07.000000000Z 1,2,3,\n"
        "2025-01-01T00:00:07.000000000Z 07 finished\n")


def test_an_init_containers_endless_loop_never_completes_and_the_next_sees_what_one_wrote(cluster: Cluster) -> None:
    volume = [{"name": "work", "emptyDir": {}}]
    mount = [{"name": "work", "mountPath": "/work"}]
    cluster.create(pod("staged", volumes=volume, initContainers=[
        busybox("prepare", command=["sh", "-c", "echo ready > /work/flag"], volumeMounts=mount)],
        containers=[busybox("app", command=["sh", "-c", "cat /work/flag; sleep infinity"], volumeMounts=mount)]))
    cluster.create(pod("stuck", initContainers=[busybox("wait", command=["sh", "-c", "while true; do date; sleep 5; done"])],
                       containers=[busybox("app", command=["sleep", "infinity"])]))
    at(cluster, 30)
    core = client.CoreV1Api(cluster.client())
    assert core.read_namespaced_pod_log("staged", "default", container="app") == "ready\n"
    stuck = cluster.get("v1", "Pod", "stuck")["status"]
    assert stuck["phase"] == "Pending"
    assert "running" in stuck["initContainerStatuses"][0]["state"]
    assert core.read_namespaced_pod_log("stuck", "default", container="wait").count("\n") == 6


def test_exec_reads_a_script_from_stdin_line_by_line(cluster: Cluster) -> None:
    cluster.create(pod("bb", containers=[busybox(command=["sleep", "infinity"])]))
    at(cluster, 2)
    core = client.CoreV1Api(cluster.client())
    session = stream(core.connect_post_namespaced_pod_exec, "bb", "default", command=["/bin/sh"], stderr=True,
                     stdin=True, stdout=True, tty=False, _preload_content=False)
    session.write_stdin("x=41; echo test string $((x + 1))\n")
    assert session.readline_stdout(timeout=5) == "test string 42"
    session.write_stdin("echo to stderr >&2\n")
    assert session.readline_stderr(timeout=5) == "to stderr"
    session.write_stdin("cd /tmp && echo $x > kept\n")
    session.write_stdin("cat kept; exit 3\n")
    deadline = time.monotonic() + 5
    while session.is_open() and time.monotonic() < deadline:
        session.update(timeout=1)
    assert session.read_stdout() == "41\n"
    status = json.loads(session.read_channel(ERROR_CHANNEL))
    assert status["reason"] == "NonZeroExitCode" and status["details"]["causes"][0]["message"] == "3"
    # A command that names no stdin to read runs at once, even with stdin open (Ansible's k8s_cp).
    cat = stream(core.connect_get_namespaced_pod_exec, "bb", "default", command=["cat", "/tmp/kept"], stderr=True,
                 stdin=True, stdout=True, tty=False, _preload_content=False)
    cat.run_forever(timeout=5)
    assert (cat.read_stdout(), cat.returncode) == ("41\n", 0)


def test_sh_c_cat_echoes_stdin_at_once_and_ends_when_stdin_closes(cluster: Cluster) -> None:
    """The official client's e2e test_pod_exec_close_channel: ``sh -c cat`` over v5, then CLOSE of stdin."""
    cluster.create(pod("bb", containers=[busybox(command=["sleep", "infinity"])]))
    at(cluster, 2)
    core = client.CoreV1Api(cluster.client())
    session = stream(core.connect_post_namespaced_pod_exec, "bb", "default", command=["/bin/sh", "-c", "cat"],
                     stderr=True, stdin=True, stdout=True, tty=False, _preload_content=False)
    assert session.subprotocol == "v5.channel.k8s.io"
    session.write_stdin("test-close\n")
    assert session.readline_stdout(timeout=5) == "test-close"
    session.close_channel(0)
    session.run_forever(timeout=5)
    assert (session.is_open(), session.returncode) == (False, 0)


def test_a_script_that_reads_no_stdin_runs_at_once_with_stdin_open(cluster: Cluster) -> None:
    """lightkube's exec always asks for stdin; ``sh -c 'ls /'`` answers without waiting for its end."""
    cluster.create(pod("bb", containers=[busybox(command=["sleep", "infinity"])]))
    at(cluster, 2)
    core = client.CoreV1Api(cluster.client())
    session = stream(core.connect_get_namespaced_pod_exec, "bb", "default", command=["/bin/sh", "-c", 'printf %s "$HOME"'],
                     stderr=True, stdin=True, stdout=True, tty=False, _preload_content=False)
    try:
        session.run_forever(timeout=5)
        assert not session.is_open()
        assert (session.read_stdout(timeout=1), session.returncode) == ("/root", 0)
    finally:
        session.close()


def test_nslookup_answers_from_services_and_wget_is_refused_without_a_declared_server(cluster: Cluster) -> None:
    cluster.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
                    "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})
    cluster.create(pod("bb", containers=[busybox(command=["sleep", "infinity"])]))
    at(cluster, 2)
    cluster_ip = cluster.get("v1", "Service", "web")["spec"]["clusterIP"]

    def run(command: list[str]) -> Any:
        return exec_(cluster, "bb", command)

    assert run(["nslookup", "web"]) == (0, (
        f"Server:\t\t10.96.0.10\nAddress:\t10.96.0.10:53\n\nName:\tweb.default.svc.cluster.local\n"
        f"Address: {cluster_ip}\n\n"), "")
    assert run(["nslookup", "nope"])[0] == 1
    assert run(["wget", "-qO-", "http://web/"]) == (
        1, "", f"wget: can't connect to remote host ({cluster_ip}): Connection refused\n")
    assert run(["wget", "-qO-", "http://example.com/"]) == (1, "", "wget: bad address 'example.com'\n")


def exec_(cluster: Cluster, name: str, command: list[str]) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``kubectl exec`` through the official client's stream()."""
    session = stream(client.CoreV1Api(cluster.client()).connect_get_namespaced_pod_exec, name, "default",
                     command=command, stderr=True, stdin=False, stdout=True, tty=False, _preload_content=False)
    session.run_forever(timeout=10)
    return session.returncode, session.read_stdout(), session.read_stderr()


def test_wget_and_curl_reach_a_services_pods_and_their_http_behaviour(cluster: Cluster) -> None:
    """The shell's clients go where kube-proxy sends them (a Service's targetPort on a ready
    endpoint, a pod IP) and get what that pod's HTTP behaviour answers (kubelet/httpmodel.py)."""
    routes: Obj = {"http": [{"port": 8080, "path": "/healthz", "body": "ok\n"}]}
    web = pod("web", containers=[{"name": "nginx", "image": "nginx:1.27"}])
    api = pod("api", routes, containers=[{"name": "c", "image": "example/api:1", "ports": [{"containerPort": 8080}]}])
    for server in (web, api):
        server["metadata"]["labels"] = {"app": server["metadata"]["name"]}
        cluster.create(server)
    for name, port, target in (("web", 80, 80), ("api", 80, 8080)):
        cluster.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "default"},
                        "spec": {"selector": {"app": name}, "ports": [{"port": port, "targetPort": target}]}})
    cluster.create(pod("bb", containers=[busybox(command=["sleep", "infinity"])]))
    at(cluster, 3)
    code, page, _ = exec_(cluster, "bb", ["wget", "-qO-", "http://web/"])
    assert code == 0 and "<title>Welcome to nginx!</title>" in page
    assert exec_(cluster, "bb", ["wget", "-q", "-O", "-", "http://web.default.svc.cluster.local/nope"]) == (
        1, "", "wget: server returned error: HTTP/1.1 404 Not Found\n")
    api_ip = cluster.get("v1", "Pod", "api")["status"]["podIP"]
    assert exec_(cluster, "bb", ["wget", "-qO-", f"http://{api_ip}:8080/healthz"]) == (0, "ok\n", "")
    assert exec_(cluster, "bb", ["wget", "-qO-", f"http://{api_ip}:9090/"]) == (
        1, "", f"wget: can't connect to remote host ({api_ip}): Connection refused\n")
    # A container's program asks when it starts (4 s), once the Services have ready endpoints.
    cluster.create(pod("probe", restartPolicy="Never", containers=[busybox(
        command=["sh", "-c", "wget -qO- http://api/healthz; curl -s -o /dev/null -w '%{http_code}\\n' http://api/x"],
        image="example/tools:1")]))
    at(cluster, 5)
    assert logs(cluster, "probe") == "ok\n404\n"


def test_sigterm_runs_the_trap_after_the_foreground_sleep_and_is_ignored_without_one(cluster: Cluster) -> None:
    trapped = "trap 'echo caught; exit 0' TERM; echo up; while true; do sleep 10; done"
    cluster.create(pod("trapped", containers=[busybox(command=["sh", "-c", trapped])]))
    cluster.create(pod("plain", containers=[busybox(command=["sh", "-c", "while true; do sleep 10; done"])]))
    at(cluster, 5)
    runs = {state.label.split("_")[0]: state.runs[0] for state in cluster.kubelets.pods.states()}
    # TERM at 14 s into the container's life: the sleep in progress (10 → 20) ends first.
    assert stop_response(runs["trapped"].program, 14.0) == StopResponse(6.0, 0, (LogLine(20.0, "caught"),))
    assert stop_response(runs["plain"].program, 14.0) is None
