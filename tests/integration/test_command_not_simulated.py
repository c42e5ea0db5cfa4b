"""A container whose command fakekube cannot run says so: one Warning event, at its first start.

``kubectl run d --image=python:3.12 -- myserver --port 8080`` runs as its behaviour declares (by
default: until stopped); without a word the user cannot tell that from a real server. (In a base
image whose contents fakekube knows, busybox or alpine, a missing program fails to start instead:
test_container_start_error.py.) The
kubelet records ``CommandNotSimulated`` once per pod and container (not at each restart),
naming the command and how to declare its behaviour; a command the model runs, a server the
program table knows, and a container whose behaviour is declared get none. The pod is created
at t=0 and its container starts at t=1.
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest

from fakekube import Cluster
from fakekube.kubelet.behaviour import BehaviourCatalog, ContainerBehaviour
from tests.integration.support import pod
from tests.integration.timeline import at

Obj = dict[str, Any]


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    with Cluster(nodes=1) as served:
        yield served


def warnings(cluster: Cluster, name: str) -> list[Obj]:
    return [event for event in cluster.list("v1", "Event", "default")
            if event["involvedObject"]["name"] == name and event["reason"] == "CommandNotSimulated"]


def test_an_unknown_command_gets_one_warning_naming_it_and_how_to_declare_it(cluster: Cluster) -> None:
    cluster.create(pod("srv", containers=[{"name": "app", "image": "python:3.12",
                                           "command": ["myserver", "--port", "8080"]}]))
    at(cluster, 1)
    [event] = warnings(cluster, "srv")
    assert (event["type"], event["count"], event["lastTimestamp"]) == ("Warning", 1, "2025-01-01T00:00:01Z")
    assert event["involvedObject"]["fieldPath"] == "spec.containers{app}"
    assert event["source"]["component"] == "kubelet"
    assert event["message"] == (
        "fakekube does not simulate the command of container app: myserver --port 8080; it runs as its "
        "behaviour declares (by default: until stopped, with no more log). Declare what it does with the pod "
        "annotation fakekube.io/behaviour (e.g. '{\"app\": {\"run_for_s\": 5, \"exit_code\": 0}}') or the "
        "config file's behaviours.images; see docs/behaviour.md \"Behaviour reference\"")
    at(cluster, 600)
    assert [event["count"] for event in warnings(cluster, "srv")] == [1]


def test_the_warning_is_not_repeated_when_the_container_restarts() -> None:
    crashing = BehaviourCatalog(default=ContainerBehaviour(run_for_s=5, exit_code=1))
    with Cluster(nodes=1, behaviours=crashing) as cluster:
        cluster.create(pod("app", containers=[{"name": "c", "image": "python:3.12", "command": ["python", "app.py"]}]))
        at(cluster, 120)
        assert cluster.get("v1", "Pod", "app")["status"]["containerStatuses"][0]["restartCount"] >= 3
        assert [(event["count"], event["lastTimestamp"]) for event in warnings(cluster, "app")] == [
            (1, "2025-01-01T00:00:01Z")]


@pytest.mark.parametrize("container", [
    {"image": "busybox:1.36", "args": ["date"]},                               # kubectl run d -- date
    {"image": "busybox:1.36", "command": ["sh", "-c", "echo hi"]},
    {"image": "busybox:1.36", "command": ["sleep", "5"]},
    {"image": "busybox:1.36", "command": ["sh", "-c", "while true; do date; sleep 5; done"]},
    {"image": "nginx:1.27"},                                                   # the image's own program
    {"image": "nginx:1.27", "command": ["nginx", "-g", "daemon off;"]},        # a server the table knows
    {"image": "coredns/coredns:1.11.3", "args": ["-conf", "/etc/coredns/Corefile"]},  # args for its entrypoint
], ids=["date", "sh-echo", "sleep", "loop", "image-program", "known-server", "entrypoint-args"])
def test_a_simulated_command_or_the_images_own_program_gets_no_warning(cluster: Cluster, container: Obj) -> None:
    cluster.create(pod("ok", restartPolicy="Never", containers=[{"name": "c", **container}]))
    at(cluster, 30)
    assert "waiting" not in cluster.get("v1", "Pod", "ok")["status"]["containerStatuses"][0]["state"]
    assert warnings(cluster, "ok") == []


@pytest.mark.parametrize("behaviour", [
    {"c": {"run_for_s": 5}},          # for this container
    {"exit_code": 0},                  # for every container
], ids=["per-container", "shared"])
def test_a_declared_behaviour_annotation_silences_the_warning(cluster: Cluster, behaviour: Obj) -> None:
    cluster.create(pod("declared", behaviour=behaviour, containers=[
        {"name": "c", "image": "busybox:1.36", "command": ["myserver"]}]))
    at(cluster, 3)
    assert "waiting" not in cluster.get("v1", "Pod", "declared")["status"]["containerStatuses"][0]["state"]
    assert warnings(cluster, "declared") == []


def test_an_annotation_for_another_container_leaves_the_warning(cluster: Cluster) -> None:
    cluster.create(pod("other", behaviour={"side": {"run_for_s": 5}}, containers=[
        {"name": "c", "image": "python:3.12", "command": ["myserver"]},
        {"name": "side", "image": "python:3.12", "command": ["otherserver"]}]))
    at(cluster, 30)
    assert [event["involvedObject"]["fieldPath"] for event in warnings(cluster, "other")] == ["spec.containers{c}"]


def test_an_image_rule_that_matches_silences_the_warning() -> None:
    rules = BehaviourCatalog().with_image("node:*", {"stop_delay_s": 3})
    with Cluster(nodes=1, behaviours=rules) as cluster:
        cluster.create(pod("ruled", containers=[{"name": "c", "image": "node:22", "command": ["node", "server.js"]},
                                                {"name": "d", "image": "python:3.12", "command": ["python", "x.py"]}]))
        at(cluster, 30)
        statuses = cluster.get("v1", "Pod", "ruled")["status"]["containerStatuses"]
        assert [list(status["state"]) for status in statuses] == [["running"], ["running"]]
        assert [event["involvedObject"]["fieldPath"] for event in warnings(cluster, "ruled")] == ["spec.containers{d}"]


def probe_warnings(cluster: Cluster, name: str) -> list[tuple[str, int, str]]:
    return [(event["involvedObject"]["fieldPath"], event["count"], event["message"])
            for event in cluster.list("v1", "Event", "default")
            if event["involvedObject"]["name"] == name and event["reason"] == "ProbeNotDefined"]


def test_ready_after_s_without_a_readiness_probe_is_ready_at_once_and_says_why(cluster: Cluster) -> None:
    cluster.create(pod("web", behaviour={"ready_after_s": 30}, containers=[{"name": "c", "image": "nginx:1.27"}]))
    at(cluster, 1)
    assert cluster.get("v1", "Pod", "web")["status"]["containerStatuses"][0]["ready"] is True   # as upstream
    assert probe_warnings(cluster, "web") == [(
        "spec.containers{c}", 1,
        "container c has no readinessProbe, so its behaviour's readiness timeline is never used: as in "
        "Kubernetes, a container without the probe counts as ready and alive while it runs. Add the probe to "
        "test it; see docs/behaviour.md \"Behaviour reference\"")]


def test_declared_probe_timelines_without_their_probes_are_named_together_once() -> None:
    crashing = BehaviourCatalog(default=ContainerBehaviour(run_for_s=5, exit_code=1))
    with Cluster(nodes=1, behaviours=crashing) as cluster:
        cluster.create(pod("flaky", behaviour={"liveness": [[0, True], [60, False]], "startup": [[0, False], [9, True]]},
                           containers=[{"name": "c", "image": "nginx:1.27"}]))
        at(cluster, 120)
        assert cluster.get("v1", "Pod", "flaky")["status"]["containerStatuses"][0]["restartCount"] >= 3
        [(_, count, message)] = probe_warnings(cluster, "flaky")
        assert count == 1
        assert message.startswith("container c has no livenessProbe or startupProbe, so its behaviour's "
                                  "liveness and startup timelines are never used")


def test_a_probed_timeline_and_an_init_container_get_no_probe_warning(cluster: Cluster) -> None:
    cluster.create(pod("probed", behaviour={"ready_after_s": 30}, initContainers=[
        {"name": "setup", "image": "busybox:1.36", "command": ["true"]}], containers=[
        {"name": "c", "image": "nginx:1.27", "readinessProbe": {"httpGet": {"path": "/", "port": 80}}}]))
    at(cluster, 40)
    assert cluster.get("v1", "Pod", "probed")["status"]["containerStatuses"][0]["ready"] is True
    assert probe_warnings(cluster, "probed") == []
