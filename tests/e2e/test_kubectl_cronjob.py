"""``kubectl create cronjob`` against ``fakekube serve --time-scale 0``, its clock moved through
the control API as a test in any language would: the Job appears on the schedule, runs its
``echo`` and shows Complete in ``kubectl get jobs``."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest

from tests.e2e.conftest import Kubectl, served

VERSION = "1.33"
#: serve's clock starts here; the first scheduled minute is 07:09, 31738029 minutes after the epoch.
START = "2030-05-06T07:08:00Z"


@pytest.fixture
def served_cluster(tmp_path: Path) -> Iterator[tuple[Kubectl, str]]:
    """kubectl 1.33 and the control API's base URL of one manual-time ``fakekube serve``."""
    with served(tmp_path, "--nodes", "1", "--time-scale", "0", "--start-time", START) as server:
        yield server.kubectl, server.url


def advance(url: str, seconds: float) -> None:
    request = urllib.request.Request(url + "/fakekube/v1/clock/advance", method="POST",
                                     data=json.dumps({"seconds": seconds}).encode(),
                                     headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=10).read()


def test_a_cron_job_created_with_kubectl_runs_on_its_schedule(served_cluster: tuple[Kubectl, str]) -> None:
    kubectl, url = served_cluster
    kubectl.ok("create", "cronjob", "tick", "--image=busybox", "--schedule=* * * * *", "--", "echo", "hi")
    assert kubectl.ok("get", "jobs", "--no-headers") == ""
    advance(url, 62)  # 07:09:00 plus upstream's 100 ms, then a second to run
    rows = [line.split() for line in kubectl.ok("get", "jobs", "--no-headers").splitlines()]
    assert [row[:3] for row in rows] == [["tick-31738029", "Complete", "1/1"]]
    assert kubectl.ok("logs", "job/tick-31738029") == "hi\n"
    cron = kubectl.ok("get", "cronjob", "tick", "--no-headers").split()  # LAST SCHEDULE 07:09, AGE 07:08
    assert cron == ["tick", "*", "*", "*", "*", "*", "<none>", "False", "0", "2s", "62s"]
