"""docs/start-pytest.md, as tests: the first block is this module's tests, collected as they
are; the second (a test that fails on purpose) runs in a pytester subprocess, whose output must
hold the report the page describes."""

from __future__ import annotations

# docs:begin docs/start-pytest.md#first-test
import pytest

WEB = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
       "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                             "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}}


def test_an_empty_cluster(fakekube):             # the fixture: a fresh cluster per test, no nodes
    assert fakekube.list("v1", "Node") == []


@pytest.mark.fakekube(nodes=3, seed=7)           # the marker: this test's cluster
def test_web_runs_and_moves_off_a_failed_node(fakekube):
    fakekube.create(WEB)
    fakekube.wait_for(WEB, "Available", timeout_virtual_s=60)    # moves the clock until it holds
    node = fakekube.list("v1", "Pod", label_selector="app=web")[0]["spec"]["nodeName"]
    fakekube.fail_node(node)
    fakekube.advance(400)                        # Unknown after 50 s, evicted 300 s later
    pods = [p for p in fakekube.list("v1", "Pod", label_selector="app=web")
            if "deletionTimestamp" not in p["metadata"]]
    assert len(pods) == 2 and all(p["spec"]["nodeName"] != node for p in pods)
    assert f"{fakekube.now:%H:%M:%S}" == "00:06:41"   # 400 virtual seconds, in milliseconds of wall time
# docs:end


FAILING = """
# docs:begin docs/start-pytest.md#failing
import pytest

@pytest.mark.fakekube(nodes=1, seed=7)
def test_a_pod_too_big_for_the_node(fakekube):
    fakekube.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big"},
                     "spec": {"containers": [{"name": "c", "image": "nginx",
                                              "resources": {"requests": {"cpu": "64"}}}]}})
    fakekube.advance(10)
    assert fakekube.get("v1", "Pod", "big")["status"]["phase"] == "Running"   # fails: it is Pending
# docs:end
"""


def test_a_failing_test_gets_the_fakekube_report(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_big=FAILING)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*seed 7, cluster time 2025-01-01T00:00:10Z*",
        "*-- pending pods no node holds (the scheduler says why)*",
        "*default/big: 0/1 nodes are available: 1 Insufficient cpu.*",
        "*-- replay*",
        "*pytest test_big.py::test_a_pod_too_big_for_the_node --fakekube-seed 7*",
        "timeline: .fakekube/timelines/test_big.py_test_a_pod_too_big_for_the_node.html",
    ])
    assert (pytester.path / ".fakekube" / "timelines" / "test_big.py_test_a_pod_too_big_for_the_node.html").is_file()
