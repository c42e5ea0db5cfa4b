"""kubectl's view of kube-scheduler's events (events.k8s.io/v1, a series on repeats):
``get events`` takes LAST SEEN and COUNT from the series and SOURCE from the reporting
fields; ``describe`` shows ``(xN over ...)`` from ``default-scheduler``."""

from __future__ import annotations

import re

import pytest
import yaml

from fakekube import Cluster
from fakekube.engine.controller import Context
from fakekube.random import SeededRandom
from tests.e2e.conftest import Kubectl
from tests.e2e.test_kubectl import columns, section
from tests.integration.support import pod

NOTE = "0/1 nodes are available: 1 Insufficient cpu."


def failed_scheduling(cluster: Cluster, regarding: dict) -> None:
    def work() -> None:
        ctx = Context(cluster.engine, "test-scheduler", "default/p", cluster.engine.clock.now(), SeededRandom(0))
        ctx.record_eventf(regarding, "Pod", "Warning", "FailedScheduling", "Scheduling", NOTE, "default-scheduler")
    cluster.engine.run(work)


@pytest.mark.fakekube(nodes=1)
def test_get_and_describe_show_a_series_from_default_scheduler(kubectl: Kubectl, fakekube: Cluster) -> None:
    target = fakekube.create(pod("p"))
    failed_scheduling(fakekube, target)  # t = 0
    fakekube.advance(120)
    failed_scheduling(fakekube, target)  # t = 2 min: the series, count 2
    fakekube.advance(60)

    [row] = columns(kubectl.ok("get", "events", "-o", "wide", "--field-selector", "reason=FailedScheduling"))
    assert row["LAST SEEN"] == "60s" and row["FIRST SEEN"] == "3m"
    assert (row["TYPE"], row["OBJECT"], row["COUNT"], row["MESSAGE"]) == ("Warning", "pod/p", "2", NOTE)
    assert row["SOURCE"] == "default-scheduler, default-scheduler-fakekube-control-plane"

    events = section(kubectl.ok("describe", "pod", "p"), "Events")
    [line] = [line for line in events if "FailedScheduling" in line]
    # Ages are kubectl's own (wall clock against cluster time): only their shape is checked.
    assert re.fullmatch(rf"Warning FailedScheduling \S+ \(x2 over \S+\) default-scheduler {re.escape(NOTE)}", line)

    [event] = yaml.safe_load(kubectl.ok("get", "events.v1.events.k8s.io", "-o", "yaml",
                                        "--field-selector", "reason=FailedScheduling"))["items"]
    assert (event["apiVersion"], event["series"]["count"], event["reportingController"]) == \
        ("events.k8s.io/v1", 2, "default-scheduler")
    assert event["deprecatedFirstTimestamp"] is None and event["deprecatedSource"] == {}
