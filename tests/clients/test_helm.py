"""helm v4 against a served fakekube: install, upgrade, rollback, uninstall, ``--wait``.

The chart (``charts/shop``) holds a Deployment, a Service, a ConfigMap, a CRD in
``crds/`` and one custom resource. helm v4 applies server-side by default
(``--server-side`` defaults to true on install, "auto" on upgrade/rollback, which follows
the release's previous method); ``--server-side=false`` selects the client-side
three-way merge path. ``--wait`` (helm v4's "watcher" strategy) watches the objects
until they are ready: the cluster runs in auto-advance mode, so the Deployment's pods
are scheduled, started and made ready on virtual time while helm waits.
"""

from __future__ import annotations

from typing import Any

import pytest

from fakekube import Cluster
from tests.clients.conftest import CHARTS, Helm

CHART = str(CHARTS / "shop")
CLIENT_SIDE = "--server-side=false"
#: The chart without its CRD and custom resource (for the client-side path before CRDs)
NO_CRDS = ("--skip-crds", "--set", "widget.enabled=false")


def deployment(cluster: Cluster, name: str = "demo-web") -> dict[str, Any]:
    return cluster.get("apps/v1", "Deployment", name)


def greeting(cluster: Cluster) -> str:
    return cluster.get("v1", "ConfigMap", "demo-config")["data"]["greeting"]


def release_secrets(cluster: Cluster) -> list[tuple[str, str]]:
    """(name, status label) of helm's release records (Secrets of type helm.sh/release.v1)."""
    return [(s["metadata"]["name"], s["metadata"]["labels"]["status"])
            for s in cluster.list("v1", "Secret", "default", label_selector="owner=helm")]


def history(helm: Helm) -> list[list[str]]:
    """(revision, status, description) rows of ``helm history demo``."""
    rows = [line.split("\t") for line in helm.ok("history", "demo").splitlines()[1:]]
    return [[row[0].strip(), row[2].strip(), row[-1].strip()] for row in rows]


@pytest.mark.fakekube(nodes=2, auto_advance=True)
def test_client_side_install_upgrade_rollback_uninstall_with_wait(fakekube: Cluster, helm: Helm) -> None:
    out = helm.ok("install", "demo", CHART, *NO_CRDS, CLIENT_SIDE, "--wait", "--timeout", "60s")
    assert "STATUS: deployed" in out and "REVISION: 1" in out
    # --wait returned: the Deployment is available, every replica ready
    assert deployment(fakekube)["status"]["availableReplicas"] == 2
    assert greeting(fakekube) == "hello"
    assert fakekube.get("v1", "Service", "demo-web")["spec"]["ports"][0]["port"] == 80
    assert release_secrets(fakekube) == [("sh.helm.release.v1.demo.v1", "deployed")]

    # the chart's test hook: a pod whose container exits 0 after 3 (virtual) seconds
    tested = helm.ok("test", "demo", "--timeout", "60s")
    assert "TEST SUITE:     demo-test-greeting" in tested and "Phase:          Succeeded" in tested
    assert fakekube.get("v1", "Pod", "demo-test-greeting")["status"]["phase"] == "Succeeded"

    helm.ok("upgrade", "demo", CHART, *NO_CRDS, CLIENT_SIDE, "--set", "replicas=3,greeting=hi", "--wait",
            "--timeout", "60s")
    assert deployment(fakekube)["status"]["availableReplicas"] == 3
    assert greeting(fakekube) == "hi"

    helm.ok("rollback", "demo", "1", CLIENT_SIDE, "--wait", "--timeout", "60s")
    assert deployment(fakekube)["spec"]["replicas"] == 2
    assert deployment(fakekube)["status"]["availableReplicas"] == 2
    assert greeting(fakekube) == "hello"
    assert history(helm) == [["1", "superseded", "Install complete"], ["2", "superseded", "Upgrade complete"],
                             ["3", "deployed", "Rollback to 1"]]

    assert helm.ok("uninstall", "demo", "--wait", "--timeout", "60s").strip() == 'release "demo" uninstalled'
    assert fakekube.list("apps/v1", "Deployment", "default") == []
    assert fakekube.list("v1", "Service", "default", label_selector="app.kubernetes.io/instance=demo") == []
    assert fakekube.list("v1", "ConfigMap", "default", label_selector="app.kubernetes.io/instance=demo") == []
    assert release_secrets(fakekube) == []
    assert helm.ok("list").splitlines()[1:] == []


@pytest.mark.fakekube(nodes=2)
def test_wait_times_out_when_the_clock_does_not_move(fakekube: Cluster, helm: Helm) -> None:
    """Manual time: pods never become ready, so --wait really waits, then fails the release."""
    result = helm("install", "demo", CHART, *NO_CRDS, CLIENT_SIDE, "--wait", "--timeout", "2s")
    assert result.rc == 1
    assert "context deadline exceeded" in result.stderr
    assert release_secrets(fakekube) == [("sh.helm.release.v1.demo.v1", "failed")]


@pytest.mark.fakekube(nodes=2, auto_advance=True)
def test_server_side_chart_with_a_crd(fakekube: Cluster, helm: Helm) -> None:
    """helm's defaults: server-side apply, the CRD from crds/ first, then the custom resource."""
    helm.ok("install", "demo", CHART, "--wait", "--timeout", "60s")
    assert deployment(fakekube)["status"]["availableReplicas"] == 2
    widget = fakekube.get("shop.example.com/v1", "Widget", "demo-widget")
    assert widget["spec"] == {"size": 3}
    assert {m["manager"] for m in widget["metadata"]["managedFields"]} == {"helm"}

    helm.ok("upgrade", "demo", CHART, "--set", "widget.size=5,replicas=3", "--wait", "--timeout", "60s")
    assert fakekube.get("shop.example.com/v1", "Widget", "demo-widget")["spec"] == {"size": 5}
    assert deployment(fakekube)["status"]["availableReplicas"] == 3
    helm.ok("rollback", "demo", "1", "--wait", "--timeout", "60s")
    assert fakekube.get("shop.example.com/v1", "Widget", "demo-widget")["spec"] == {"size": 3}

    helm.ok("uninstall", "demo", "--wait", "--timeout", "60s")
    assert fakekube.list("shop.example.com/v1", "Widget", "default") == []
    # helm never deletes CRDs from crds/ (upstream's rule: they may hold other releases' data)
    assert fakekube.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.shop.example.com", "")


@pytest.mark.fakekube(nodes=2, auto_advance=True)
def test_client_side_chart_with_a_crd(fakekube: Cluster, helm: Helm) -> None:
    helm.ok("install", "demo", CHART, CLIENT_SIDE, "--wait", "--timeout", "60s")
    assert fakekube.get("shop.example.com/v1", "Widget", "demo-widget")["spec"] == {"size": 3}
    helm.ok("upgrade", "demo", CHART, CLIENT_SIDE, "--set", "widget.size=4", "--wait", "--timeout", "60s")
    assert fakekube.get("shop.example.com/v1", "Widget", "demo-widget")["spec"] == {"size": 4}
    helm.ok("uninstall", "demo", "--wait", "--timeout", "60s")
    assert fakekube.list("shop.example.com/v1", "Widget", "default") == []


@pytest.mark.fakekube(nodes=1, auto_advance=True)
def test_a_failing_test_hook_fails_helm_test(fakekube: Cluster, helm: Helm) -> None:
    helm.ok("install", "demo", CHART, *NO_CRDS, CLIENT_SIDE, "--set", "replicas=1,test.exitCode=1", "--wait",
            "--timeout", "60s")
    result = helm("test", "demo", "--timeout", "60s")
    assert result.rc == 1
    assert "Phase:          Failed" in result.stdout
    assert "pod demo-test-greeting failed" in result.stderr
    assert fakekube.get("v1", "Pod", "demo-test-greeting")["status"]["containerStatuses"][0]["state"][
        "terminated"]["exitCode"] == 1


@pytest.mark.fakekube(nodes=1, auto_advance=True)
def test_a_hook_job_runs_to_completion_before_install_returns(fakekube: Cluster, helm: Helm) -> None:
    out = helm.ok("install", "demo", CHART, *NO_CRDS, "--set", "replicas=1,migrate.enabled=true", "--wait",
                  "--wait-for-jobs", "--timeout", "60s")
    assert "STATUS: deployed" in out
    # hook-succeeded: helm deleted the Job once it completed; its events stay
    assert fakekube.list("batch/v1", "Job", "default") == []
    assert [e["reason"] for e in fakekube.events(involved_name="demo-migrate")] == ["SuccessfulCreate", "Completed"]


@pytest.mark.fakekube(nodes=1, auto_advance=True)
def test_a_failing_hook_job_fails_the_install(fakekube: Cluster, helm: Helm) -> None:
    result = helm("install", "demo", CHART, *NO_CRDS, "--set", "replicas=1,migrate.enabled=true,migrate.exitCode=3",
                  "--wait", "--timeout", "60s")
    assert result.rc == 1
    assert "resource Job/default/demo-migrate not ready. status: Failed, message: Job Failed. failed: 2/1" \
        in result.stderr, result.stderr
    job = fakekube.get("batch/v1", "Job", "demo-migrate")
    assert (job["status"]["failed"], job["status"]["conditions"][-1]["type"]) == (2, "Failed")
