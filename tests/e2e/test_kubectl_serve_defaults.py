"""A default ``fakekube serve`` behaves like a real cluster for kubectl, with no control-API call.

Cluster time flows with the wall clock from now (issue 11): ``kubectl wait``, ``rollout
status`` and helm's ``--wait`` return, namespace deletion finishes, AGE counts up and
``describe`` shows event ages in seconds, not days. One server for the module; every wait
is bounded by the client's own ``--timeout`` (a hang fails the test) and takes about a
second of wall time.
"""

from __future__ import annotations

import re
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

import pytest

from tests.clients.conftest import CHARTS, Helm, find_helm
from tests.e2e.conftest import Kubectl, served

VERSION = "1.33"


@pytest.fixture(scope="module")
def kubectl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    """kubectl 1.33 against one ``fakekube serve`` run with no time flags at all."""
    with served(tmp_path_factory.mktemp("serve-defaults"), "--nodes", "1") as server:
        assert server.banner[3] == ("fakekube: time: real time (1x); --time-scale 0 for manual time, "
                                    "--auto-advance to skip idle waits\n"), server.banner
        yield server.kubectl


def test_kubectl_wait_sees_a_run_pod_become_ready(kubectl: Kubectl) -> None:
    kubectl.ok("run", "x", "--image=nginx")
    waited = kubectl("wait", "--for=condition=Ready", "pod/x", "--timeout=60s", timeout_s=70)
    assert (waited.rc, waited.stdout) == (0, "pod/x condition met\n"), waited.stderr


def test_rollout_status_returns_for_a_new_deployment(kubectl: Kubectl) -> None:
    kubectl.ok("create", "deployment", "web", "--image=nginx")
    rollout = kubectl("rollout", "status", "deployment/web", "--timeout=60s", timeout_s=70)
    assert rollout.rc == 0, rollout.stderr
    assert rollout.stdout.splitlines()[-1] == 'deployment "web" successfully rolled out'


def test_kubectl_delete_namespace_returns(kubectl: Kubectl) -> None:
    kubectl.ok("create", "namespace", "scratch")
    kubectl.ok("create", "configmap", "c", "-n", "scratch")
    deleted = kubectl("delete", "namespace", "scratch", "--timeout=60s", timeout_s=70)
    assert (deleted.rc, deleted.stdout) == (0, 'namespace "scratch" deleted\n'), deleted.stderr
    gone = kubectl("get", "namespace", "scratch")
    assert gone.rc == 1 and 'namespaces "scratch" not found' in gone.stderr


def test_age_counts_up_and_describe_ages_are_seconds_old(kubectl: Kubectl) -> None:
    kubectl.ok("run", "aged", "--image=nginx")
    deadline, age = time.monotonic() + 10, "0s"
    while age == "0s" and time.monotonic() < deadline:  # polls kubectl, bounded by the wall clock
        age = kubectl.ok("get", "pod", "aged", "--no-headers").split()[-1]
    assert re.fullmatch(r"[1-9]\d?s", age), age
    kubectl.ok("wait", "--for=condition=Ready", "pod/aged", "--timeout=60s")
    described = kubectl.ok("describe", "pod", "aged")
    events = described[described.index("Events:"):].splitlines()[3:]
    ages = [line.split()[2] for line in events]
    assert ages and all(re.fullmatch(r"\d{1,2}s", age) for age in ages), events  # kubectl's own clock


def test_helm_install_wait_returns(kubectl: Kubectl, tmp_path: Path) -> None:
    """helm --wait polls readiness on the wall clock: the shop chart's Deployment becomes available."""
    binary = find_helm()
    if binary is None:
        pytest.skip("helm v4 not found (.ci/fetch-kubectl)")
    helm = Helm(binary, kubectl.kubeconfig, tmp_path / "helm-home")
    out = helm.ok("install", "demo", str(CHARTS / "shop"), "--skip-crds", "--set", "widget.enabled=false",
                  "--wait", "--timeout", "60s")
    assert "STATUS: deployed" in out
    ready = kubectl.ok("get", "deployment", "demo-web", "-o", "jsonpath={.status.availableReplicas}")
    assert ready == kubectl.ok("get", "deployment", "demo-web", "-o", "jsonpath={.spec.replicas}")


def test_a_run_of_echo_succeeds_and_kubectl_logs_prints_it(kubectl: Kubectl) -> None:
    kubectl.ok("run", "hi", "--image=busybox", "--restart=Never", "--", "sh", "-c", "echo hi from $HOSTNAME; sleep 1")
    waited = kubectl("wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/hi", "--timeout=60s", timeout_s=70)
    assert (waited.rc, waited.stdout) == (0, "pod/hi condition met\n"), waited.stderr
    assert kubectl.ok("logs", "hi") == "hi from hi\n"
    assert kubectl.ok("get", "pod", "hi", "--no-headers").split()[1:4] == ["0/1", "Completed", "0"]


def test_a_job_created_with_kubectl_completes_and_its_logs_are_read(kubectl: Kubectl) -> None:
    kubectl.ok("create", "job", "hello", "--image=busybox", "--", "echo", "hello")
    waited = kubectl("wait", "--for=condition=complete", "job/hello", "--timeout=60s", timeout_s=70)
    assert (waited.rc, waited.stdout) == (0, "job.batch/hello condition met\n"), waited.stderr
    assert kubectl.ok("logs", "job/hello") == "hello\n"
    assert kubectl.ok("get", "job", "hello", "--no-headers").split()[1:3] == ["Complete", "1/1"]


def test_exec_date_shows_the_clusters_time_which_is_now(kubectl: Kubectl) -> None:
    kubectl.ok("run", "clock", "--image=busybox", "--", "sleep", "infinity")
    kubectl.ok("wait", "--for=condition=Ready", "pod/clock", "--timeout=60s")
    year = kubectl.ok("exec", "clock", "--", "date", "+%Y")
    assert year == f"{datetime.now(timezone.utc).year}\n"  # serve's time starts at the wall clock's now
    failed = kubectl("exec", "clock", "--", "date", "soon")
    assert failed.rc == 1 and "date: invalid date 'soon'" in failed.stderr
