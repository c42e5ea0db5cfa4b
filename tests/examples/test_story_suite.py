"""An example suite that runs on fakekube and, unchanged, on a real cluster (docs/pytest.md):

    pytest tests/examples/test_story_suite.py                # an in-process fake per test
    pytest tests/examples/test_story_suite.py --fakekube-target=kubeconfig:kind.yaml   # kind's cluster

The suite runs on fakekube with the others; tests/examples/test_howto_real_cluster.py runs it
again against a ``fakekube serve`` standing in for a real cluster.
"""

import pytest

from fakekube.cluster import ApiError

WEB = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
       "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                             "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}}
GREETER = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "greeter"},
           "spec": {"containers": [{"name": "c", "image": "busybox:1.36",
                                    "command": ["sh", "-c", "echo hello; sleep 3600"]}]}}

# docs:begin docs/pytest.md#suite
# A fake cluster has no node unless asked; on a real one, the test runs where the cluster has
# exactly this many schedulable nodes (and skips, saying so, elsewhere).
pytestmark = pytest.mark.fakekube(nodes=2)


def test_logs_and_exec(fakekube):
    fakekube.create(GREETER)
    fakekube.wait_for(GREETER, "Ready", timeout_virtual_s=60)
    assert fakekube.logs("greeter") == "hello\n"
    result = fakekube.exec("greeter", ["sh", "-c", "echo $((6 * 7))"])
    assert (result.stdout, result.exit_code) == ("42\n", 0)
# docs:end


def test_exec_says_how_a_command_ended(fakekube):
    fakekube.create(GREETER)
    fakekube.wait_for(GREETER, "Ready", timeout_virtual_s=60)
    assert fakekube.exec("greeter", ["wc", "-l"], stdin="a\nb\n").stdout.split() == ["2"]
    ended = fakekube.exec("greeter", ["sh", "-c", "echo no >&2; exit 3"])
    assert (ended.stderr, ended.exit_code) == ("no\n", 3)
    with pytest.raises(ApiError) as missing:
        fakekube.exec("greeter", ["psql"])                          # no such program: the server's Status
    assert (missing.value.code, missing.value.reason) == (500, "InternalError")


def test_a_deployment_rolls_out_and_scales(fakekube):
    fakekube.create(WEB)
    fakekube.wait_for(WEB, "Available", timeout_virtual_s=60)      # real seconds on a real cluster
    assert len(fakekube.list("v1", "Pod", label_selector="app=web")) == 2
    fakekube.scale("apps/v1", "Deployment", "web", 3)
    fakekube.wait_for(WEB, "jsonpath={.status.readyReplicas}=3", timeout_virtual_s=60)


def test_changes_and_conflicts_are_the_apis(fakekube):
    settings = fakekube.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"},
                                "data": {"mode": "fast"}})
    fakekube.patch("v1", "ConfigMap", "settings", {"data": {"mode": "slow"}}, patch_type="merge")
    with pytest.raises(ApiError) as stale:
        fakekube.update(settings)                                  # still the first resourceVersion
    assert (stale.value.code, stale.value.reason) == (409, "Conflict")
    fakekube.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "flags"}, "data": {"on": "yes"}},
                   field_manager="me")
    assert fakekube.get("v1", "ConfigMap", "flags")["data"] == {"on": "yes"}


@pytest.mark.fakekube(nodes=3)
def test_three_replicas_spread_over_three_nodes(fakekube):
    spread = {**WEB, "spec": {**WEB["spec"], "replicas": 3, "template": {**WEB["spec"]["template"], "spec": {
        **WEB["spec"]["template"]["spec"], "topologySpreadConstraints": [{
            "maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}}}]}}}}
    fakekube.create(spread)
    fakekube.wait_for(WEB, "jsonpath={.status.readyReplicas}=3", timeout_virtual_s=60)
    nodes = {pod["spec"]["nodeName"] for pod in fakekube.list("v1", "Pod", label_selector="app=web")}
    assert len(nodes) == 3


def test_pods_leave_a_failed_node(fakekube):
    fakekube.create(WEB)
    fakekube.advance(30)                        # the virtual clock: skipped on a real cluster
    fakekube.fail_node("node-1")
    fakekube.advance(420)                       # Unknown after 50 s, evicted 300 s later
    pods = fakekube.list("v1", "Pod", label_selector="app=web")
    assert {p["spec"]["nodeName"] for p in pods if not p["metadata"].get("deletionTimestamp")} == {"node-2"}
