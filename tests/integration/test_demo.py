"""Realistic clusters on demand: ``Cluster.populate`` and ``fakekube serve --demo``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from fakekube import Cluster
from fakekube.cluster import demo
from fakekube.cluster.checks import ConfigError

#: What a fresh interpreter prints of ``populate(seed=3, apps=10)``: every object's identity,
#: labels and images, as stored.
DUMP = """
import json
from fakekube import Cluster
objects = Cluster(nodes=2).populate(3, apps=10)
print(json.dumps([[o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"], o["metadata"].get("labels"),
                   o["metadata"]["uid"], [c["image"] for c in o.get("spec", {}).get("template", {}).get("spec", {})
                                          .get("containers", [])]] for o in objects]))
"""


def dump_in_fresh_interpreter(hash_seed: str) -> list[object]:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run([sys.executable, "-c", DUMP], capture_output=True, text=True, env=env, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_same_seed_gives_the_same_cluster_in_any_process() -> None:
    first, second = dump_in_fresh_interpreter("1"), dump_in_fresh_interpreter("4242")
    assert first == second
    kinds = [entry[0] for entry in first]
    assert kinds.count("Deployment") == kinds.count("Service") == kinds.count("ConfigMap") == 10
    assert "Secret" in kinds and "Namespace" in kinds


def test_every_deployment_rolls_out_and_every_service_has_endpoints() -> None:
    cluster = Cluster(nodes=2)
    created = cluster.populate(3, apps=10)
    deployments = [o for o in created if o["kind"] == "Deployment"]
    services = [o for o in created if o["kind"] == "Service"]
    for deployment in deployments:
        stored = cluster.get("apps/v1", "Deployment", deployment["metadata"]["name"], deployment["metadata"]["namespace"])
        available = {c["type"]: c["status"] for c in stored["status"]["conditions"]}["Available"]
        assert available == "True"
        assert stored["status"]["readyReplicas"] == stored["spec"]["replicas"]
    for service in services:
        slices = cluster.list("discovery.k8s.io/v1", "EndpointSlice", service["metadata"]["namespace"],
                              label_selector=f"kubernetes.io/service-name={service['metadata']['name']}")
        ready = [e for s in slices for e in s.get("endpoints") or [] if e["conditions"].get("ready")]
        assert ready, service["metadata"]["name"]


def test_rollouts_take_the_readiness_delay_not_an_instant() -> None:
    """Each Deployment's pods turn ready only after their readiness probe passes, so the
    demo's cluster time has moved by the longest of those delays."""
    cluster = Cluster(nodes=2)
    start = cluster.now
    created = cluster.populate(5, apps=4)
    delays = [json.loads(d["spec"]["template"]["metadata"]["annotations"]["fakekube.io/behaviour"])["ready_after_s"]
              for d in created if d["kind"] == "Deployment"]
    assert all(d["spec"]["template"]["spec"]["containers"][0]["readinessProbe"] for d in created
               if d["kind"] == "Deployment")
    assert cluster.now - start >= timedelta(seconds=max(delays))


def test_different_seeds_give_different_clusters() -> None:
    def names(seed: int) -> list[str]:
        return [o["metadata"]["name"] for o in demo.manifests(seed, apps=10)]
    assert names(1) != names(2)
    assert names(1) == names(1)


def test_labels_tie_each_app_together() -> None:
    objects = demo.manifests(7, apps=12)
    for deployment in (o for o in objects if o["kind"] == "Deployment"):
        labels = deployment["metadata"]["labels"]
        assert set(labels) == {"app.kubernetes.io/name", "app.kubernetes.io/part-of", "app.kubernetes.io/version", "team"}
        assert deployment["spec"]["template"]["metadata"]["labels"] == labels
        image = deployment["spec"]["template"]["spec"]["containers"][0]["image"]
        assert image.endswith(f"/{labels['app.kubernetes.io/name']}:v{labels['app.kubernetes.io/version']}")
    names = [(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in objects]
    assert len(names) == len(set(names))


def test_populate_joins_nodes_until_there_are_as_many_as_asked() -> None:
    cluster = Cluster(nodes=1)
    cluster.populate(1, nodes=3, apps=6)
    nodes = cluster.list("v1", "Node")
    assert [n["metadata"]["name"] for n in nodes] == ["node-1", "node-2", "node-3"]
    assert len({n["status"]["addresses"][0]["address"] for n in nodes}) == 3
    assert {p["spec"]["nodeName"] for p in cluster.list("v1", "Pod")} == {"node-1", "node-2", "node-3"}


@pytest.mark.parametrize(("arguments", "message"), [
    ({"apps": -1}, "apps: must be >= 0, got -1"),
    ({"nodes": 0}, "nodes: must be >= 1, got 0"),
    ({"apps": 2.5}, "apps: must be an integer, got a number (2.5)"),
    ({"seed": "x"}, "seed: must be an integer, got a string ('x')"),
])
def test_bad_arguments_get_the_shared_checks_messages(arguments: dict[str, object], message: str) -> None:
    cluster = Cluster(nodes=1)
    call = {"seed": 1, **arguments}
    with pytest.raises(ConfigError) as raised:
        cluster.populate(**call)  # type: ignore[arg-type]
    assert str(raised.value) == message
    assert cluster.list("v1", "Namespace", label_selector="app.kubernetes.io/part-of") == []


def test_serve_demo_serves_the_demo_s_deployments(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "fakekube", "serve", "--port", "0", "--nodes", "2", "--demo", "4",
                             "--seed", "9", "--kubeconfig", str(tmp_path / "kc")], stdout=subprocess.PIPE, text=True)
    try:
        lines = [proc.stdout.readline() for _ in range(6)]
        url = lines[0].split(" at ")[1].strip()
        with urllib.request.urlopen(url + "/apis/apps/v1/deployments?labelSelector=app.kubernetes.io/part-of",
                                    timeout=10) as response:
            served = json.load(response)["items"]
        with urllib.request.urlopen(url + "/fakekube/v1/clock", timeout=10) as response:
            served_now = datetime.fromisoformat(json.load(response)["now"])
        wall_now = datetime.now(timezone.utc)
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
    assert lines[5].startswith("fakekube: demo: ") and "4 Deployments" in lines[5] and "seed 9" in lines[5]
    expected = sorted((o["metadata"]["namespace"], o["metadata"]["name"]) for o in demo.manifests(9, 4)
                      if o["kind"] == "Deployment")
    assert sorted((d["metadata"]["namespace"], d["metadata"]["name"]) for d in served) == expected
    assert all(d["status"].get("availableReplicas") == d["spec"]["replicas"] for d in served)
    # Served time flows from the wall clock's now (the demo's rollouts happened in the minutes
    # before), so kubectl's own ages (describe) agree with the apiserver's (get); a loaded host
    # may have taken some seconds since the banner.
    assert timedelta(seconds=-5) <= wall_now - served_now <= timedelta(seconds=60)
    assert max(datetime.fromisoformat(d["metadata"]["creationTimestamp"]) for d in served) <= served_now


def test_serve_demo_refuses_a_negative_count() -> None:
    result = subprocess.run([sys.executable, "-m", "fakekube", "serve", "--port", "0", "--no-system-pods",
                             "--demo", "-1"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr == "fakekube: --demo: must be >= 0, got -1\n"


def test_a_flowing_clock_starts_early_enough_for_the_demo_s_rollouts() -> None:
    """The demo advances time before serving; a clock that flows from now would then stand
    ahead of the wall clock, and kubectl would show ages as ``<invalid>``."""
    from fakekube.cli.main import DEMO_HEAD_START_S, build_parser, cluster_config

    assert DEMO_HEAD_START_S >= demo.AVAILABLE_TIMEOUT_S
    config = cluster_config(build_parser().parse_args(["serve", "--demo"]), None)
    assert config.start_time <= datetime.now(timezone.utc) - timedelta(seconds=demo.AVAILABLE_TIMEOUT_S)


def test_a_demo_that_cannot_roll_out_says_which_deployments_and_why() -> None:
    cluster = Cluster(nodes=0)
    with pytest.raises(TimeoutError) as raised:
        cluster.populate(1, apps=2)
    names = [f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in demo.manifests(1, 2)
             if o["kind"] == "Deployment"]
    assert str(raised.value) == (
        f"populate: 2 Deployments not rolled out within 600 virtual seconds: {', '.join(names)}; the cluster has "
        "0 nodes (a pod that does not fit stays Pending: give populate nodes=, or serve --nodes)")


def test_serve_demo_runs_three_workers_unless_told() -> None:
    from fakekube.cli.main import build_parser, cluster_config

    def nodes(*argv: str) -> object:
        return cluster_config(build_parser().parse_args(["serve", *argv]), None).nodes
    assert (nodes(), nodes("--demo")) == (0, 3)
    assert nodes("--demo", "--nodes", "5") == nodes("--nodes", "5")


def test_no_apps_is_an_empty_demo() -> None:
    cluster = Cluster(nodes=1)
    assert cluster.populate(1, apps=0) == []
    assert demo.manifests(1, apps=0) == []


def test_every_name_is_a_dns_label_whatever_the_seed() -> None:
    """Services and namespaces need DNS-1123 labels (63 characters, letters first for a Service)."""
    import re
    label = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")
    for seed in range(20):
        for obj in demo.manifests(seed, apps=20):
            assert label.match(obj["metadata"]["name"]), (seed, obj["metadata"]["name"])
