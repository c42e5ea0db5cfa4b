"""docs/cookbook.md, as tests: every recipe's code is a region of this file, run by the test
around it, which then checks the outcome the page describes (the printed lines included)."""

from __future__ import annotations

import pytest

from tests.examples.docs_blocks import region


def printed(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return capsys.readouterr().out.splitlines()


# -- "A node fails: its pods are evicted and replaced" -----------------------------------------
def test_recipe_node_failure_and_eviction(capsys: pytest.CaptureFixture[str]) -> None:
    # docs:begin docs/cookbook.md#node-failure
    from fakekube import Cluster

    WEB = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
           "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}},
                                 "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}}


    def running_on(cluster, node):
        """The web pods Running on ``node`` and not being deleted."""
        return [p for p in cluster.list("v1", "Pod", label_selector="app=web")
                if p["spec"].get("nodeName") == node and p["status"]["phase"] == "Running"
                and "deletionTimestamp" not in p["metadata"]]


    cluster = Cluster(nodes=2, seed=1)
    cluster.create(WEB)
    cluster.wait_for(WEB, "Available", timeout_virtual_s=60)
    print(len(running_on(cluster, "node-1")), len(running_on(cluster, "node-2")))   # 2 1
    cluster.fail_node("node-1")                  # at 00:00:01: its kubelet stops
    when = cluster.advance_until(lambda c: len(running_on(c, "node-2")) == 3, timeout_s=600)
    print(when.time())                           # 00:06:01: Unknown at 50 s, evicted 300 s later
    for event in cluster.events(reason="TaintManagerEviction"):
        print(event["lastTimestamp"], event["message"])
    # 2025-01-01T00:06:00Z Marking for deletion Pod default/web-6ffb5b9cb4-cm5zx
    # 2025-01-01T00:06:00Z Marking for deletion Pod default/web-6ffb5b9cb4-sl4wz
    # docs:end
    assert printed(capsys) == [
        "2 1", "00:06:01",
        "2025-01-01T00:06:00Z Marking for deletion Pod default/web-6ffb5b9cb4-cm5zx",
        "2025-01-01T00:06:00Z Marking for deletion Pod default/web-6ffb5b9cb4-sl4wz"]


# -- "A rollout stalled by a bad image" ----------------------------------------------------------
def test_recipe_rollout_stalled_by_a_bad_image(capsys: pytest.CaptureFixture[str]) -> None:
    # docs:begin docs/cookbook.md#bad-image
    from fakekube import Cluster

    WEB = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
           "spec": {"replicas": 3, "progressDeadlineSeconds": 120, "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}},
                                 "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}}

    cluster = Cluster(nodes=2)
    cluster.create(WEB)
    cluster.wait_for(WEB, "Available", timeout_virtual_s=60)
    cluster.patch("apps/v1", "Deployment", "web",                   # a typo in the tag
                  {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.27-alpline"}]}}}})
    cluster.advance(20)                          # pulls fail at 00:00:01 and 00:00:11, next at 00:00:31
    new = next(p for p in cluster.list("v1", "Pod", label_selector="app=web")
               if p["spec"]["containers"][0]["image"].endswith("alpline"))
    print(new["status"]["containerStatuses"][0]["state"]["waiting"]["reason"])   # ImagePullBackOff
    cluster.wait_for(WEB, "condition=Progressing=False", timeout_virtual_s=300)   # ProgressDeadlineExceeded
    status = cluster.get("apps/v1", "Deployment", "web")["status"]
    print(f"{cluster.now:%H:%M:%S}", status["readyReplicas"], status["updatedReplicas"])   # 00:02:01 3 1
    print(next(c["message"] for c in status["conditions"] if c["type"] == "Progressing"))
    # ReplicaSet "web-6f697c4964" has timed out progressing.
    # docs:end
    lines = printed(capsys)
    assert lines == ["ImagePullBackOff", "00:02:01 3 1", 'ReplicaSet "web-6f697c4964" has timed out progressing.'], lines


# -- "A CronJob over a simulated week" -----------------------------------------------------------
def test_recipe_a_cronjob_over_a_simulated_week(capsys: pytest.CaptureFixture[str]) -> None:
    # docs:begin docs/cookbook.md#cronjob-week
    from fakekube import Cluster

    REPORT = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "report"},
              "spec": {"schedule": "0 9 * * 1-5", "timeZone": "Europe/Paris",   # weekdays, 9:00 in Paris
                       "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
                           {"name": "report", "image": "busybox", "command": ["sh", "-c", "echo sent"]}]}}}}}}

    cluster = Cluster(nodes=1)                   # 2025-01-01 is a Wednesday
    cluster.create(REPORT)
    runs = []
    for day in range(7):
        cluster.advance(24 * 3600)
        last = cluster.get("batch/v1", "CronJob", "report")["status"].get("lastScheduleTime")
        if last not in runs:
            runs.append(last)
    print(runs)
    # ['2025-01-01T08:00:00Z', '2025-01-02T08:00:00Z', '2025-01-03T08:00:00Z', '2025-01-06T08:00:00Z', '2025-01-07T08:00:00Z']
    print(len(cluster.list("batch/v1", "Job")))  # 3: successfulJobsHistoryLimit keeps the newest 3
    # docs:end
    assert printed(capsys) == [
        "['2025-01-01T08:00:00Z', '2025-01-02T08:00:00Z', '2025-01-03T08:00:00Z', '2025-01-06T08:00:00Z', "
        "'2025-01-07T08:00:00Z']", "3"]


# -- "Drain a node, held back by a PodDisruptionBudget" ------------------------------------------
def test_recipe_drain_with_a_pod_disruption_budget(capsys: pytest.CaptureFixture[str]) -> None:
    # docs:begin docs/cookbook.md#drain
    import json

    from kubernetes import client
    from kubernetes.client.rest import ApiException

    from fakekube import Cluster

    WEB = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
           "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"},          # Ready 20 s after it starts
                                              "annotations": {"fakekube.io/behaviour": json.dumps({"ready_after_s": 20})}},
                                 "spec": {"containers": [{"name": "web", "image": "nginx:1.27", "readinessProbe": {
                                     "httpGet": {"path": "/", "port": 80}, "periodSeconds": 5}}]}}}}
    PDB = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web"},
           "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}}}


    def drain(cluster, node):
        """What `kubectl drain` does: cordon the node, then evict its pods, retrying a refusal 5 s later."""
        cluster.patch("v1", "Node", node, {"spec": {"unschedulable": True}}, namespace="")
        core = client.CoreV1Api(cluster.client())
        left = sorted(p["metadata"]["name"] for p in cluster.list("v1", "Pod", "default")
                      if p["spec"]["nodeName"] == node)
        while left:
            for name in list(left):
                try:
                    core.create_namespaced_pod_eviction(name, "default", {"metadata": {"name": name}})
                    print(f"{cluster.now:%H:%M:%S} evicted {name}")
                    left.remove(name)
                except ApiException as error:
                    if error.status != 429:          # 429: the budget allows no disruption now
                        raise
                    print(f"{cluster.now:%H:%M:%S} refused {name}: {json.loads(error.body)['message']}")
            cluster.advance(5)


    with Cluster(nodes=3, seed=3) as cluster:    # serves HTTP for the official client
        cluster.create(WEB)
        cluster.create(PDB)
        cluster.wait_for(WEB, "Available", timeout_virtual_s=120)
        drain(cluster, "node-1")
        drain(cluster, "node-2")
    # 00:00:21 evicted web-d744675f-jrmzl            node-1's pod: its replacement starts on node-2
    # 00:00:26 refused web-d744675f-gqqsv: Cannot evict pod as it would violate the pod's disruption budget.
    # 00:00:26 evicted web-d744675f-slk8f            that replacement: not Ready yet, so not counted
    # 00:00:31 refused web-d744675f-gqqsv: ...       until the next replacement on node-3 is Ready
    # 00:00:51 evicted web-d744675f-gqqsv
    # docs:end
    lines = printed(capsys)
    assert lines == ['00:00:21 evicted web-d744675f-jrmzl', "00:00:26 refused web-d744675f-gqqsv: Cannot evict pod as it would violate the pod's disruption budget.", '00:00:26 evicted web-d744675f-slk8f', "00:00:31 refused web-d744675f-gqqsv: Cannot evict pod as it would violate the pod's disruption budget.", "00:00:36 refused web-d744675f-gqqsv: Cannot evict pod as it would violate the pod's disruption budget.", "00:00:41 refused web-d744675f-gqqsv: Cannot evict pod as it would violate the pod's disruption budget.", "00:00:46 refused web-d744675f-gqqsv: Cannot evict pod as it would violate the pod's disruption budget.", '00:00:51 evicted web-d744675f-gqqsv'], "\n".join(lines)
    assert {p["spec"]["nodeName"] for p in cluster.list("v1", "Pod", label_selector="app=web")} == {"node-3"}


# -- "Why is this pod Pending?" ------------------------------------------------------------------
def test_recipe_why_is_this_pod_pending(capsys: pytest.CaptureFixture[str]) -> None:
    # docs:begin docs/cookbook.md#pending
    from fakekube import Cluster

    cluster = Cluster(nodes=2)
    cluster.fail_node("node-2")
    cluster.advance(60)                          # node-2 Unknown, tainted unreachable
    cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big"},
                    "spec": {"containers": [{"name": "c", "image": "nginx",
                                             "resources": {"requests": {"cpu": "64"}}}]}})
    cluster.advance(5)
    why = cluster.explain_scheduling("big")      # evaluates every node once, changes nothing
    print(why["message"])
    for node in why["nodes"]:
        print(node["name"], node["filter"]["plugin"], node["filter"]["reasons"])
    # 0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }.
    # node-1 NodeResourcesFit ['Insufficient cpu']
    # node-2 TaintToleration ['node(s) had untolerated taint {node.kubernetes.io/unreachable: }']
    # docs:end
    assert printed(capsys) == [
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }.",
        "node-1 NodeResourcesFit ['Insufficient cpu']",
        "node-2 TaintToleration ['node(s) had untolerated taint {node.kubernetes.io/unreachable: }']"]
    assert cluster.get("v1", "Pod", "big")["status"]["phase"] == "Pending"


# -- "An autoscaler reacting to load" ------------------------------------------------------------
def test_recipe_hpa_reacting(capsys: pytest.CaptureFixture[str]) -> None:
    # docs:begin docs/cookbook.md#hpa
    import json

    from fakekube import Cluster

    API = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api"},
           "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "api"}},
                    "template": {"metadata": {"labels": {"app": "api"}, "annotations": {
                                     # each container uses 50 millicores, 400 from 5 minutes after it starts
                                     "fakekube.io/behaviour": json.dumps({"cpu_usage_m": [[0, 50], [300, 400]]})}},
                                 "spec": {"containers": [{"name": "api", "image": "nginx:1.27",
                                                          "resources": {"requests": {"cpu": "200m"}}}]}}}}
    HPA = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "api"},
           "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"},
                    "minReplicas": 2, "maxReplicas": 10, "metrics": [{"type": "Resource", "resource": {
                        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}]}}

    cluster = Cluster(nodes=3, metrics_server=True)   # the HPA reads what metrics-server reports
    cluster.create(API)
    cluster.create(HPA)
    cluster.advance(360)
    for event in cluster.events(reason="SuccessfulRescale"):
        print(event["lastTimestamp"], event["message"])
    # 2025-01-01T00:05:15Z New size: 6; reason: cpu resource utilization (percentage of request) above target
    # 2025-01-01T00:05:30Z New size: 10; reason: cpu resource utilization (percentage of request) above target
    print(cluster.get("apps/v1", "Deployment", "api")["spec"]["replicas"])   # 10: maxReplicas
    # docs:end
    assert printed(capsys) == [
        "2025-01-01T00:05:15Z New size: 6; reason: cpu resource utilization (percentage of request) above target",
        "2025-01-01T00:05:30Z New size: 10; reason: cpu resource utilization (percentage of request) above target",
        "10"]


# -- "Fast suites: prepare once, restore per test" -----------------------------------------------
SUITE = """
        # docs:begin docs/cookbook.md#template
        import pytest
        import pytest_fakekube

        ORDERS = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "orders"},
                  "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "orders"}},
                           "template": {"metadata": {"labels": {"app": "orders"}},
                                        "spec": {"containers": [{"name": "orders", "image": "nginx:1.27"}]}}}}


        @pytest_fakekube.template("orders", nodes=3, seed=5)    # prepared once per session (per xdist worker)
        def orders_running(cluster):
            cluster.create(ORDERS)
            cluster.wait_for(ORDERS, "Available", timeout_virtual_s=120)
            cluster.advance(300)                     # settled: every test starts here


        @pytest.mark.fakekube(template="orders")
        def test_a_node_failure_moves_the_pods(fakekube):
            assert f"{fakekube.now:%H:%M:%S}" == "00:05:01"   # the template's instant, not 00:00:00
            fakekube.fail_node("node-1")
            fakekube.advance(400)
            pods = fakekube.list("v1", "Pod", label_selector="app=orders")
            assert all(p["spec"]["nodeName"] != "node-1" for p in pods if "deletionTimestamp" not in p["metadata"])


        @pytest.mark.fakekube(template="orders")
        def test_each_test_gets_the_template_back(fakekube):
            assert f"{fakekube.now:%H:%M:%S}" == "00:05:01"  # the other test's failure is gone
            assert len(fakekube.list("v1", "Pod", label_selector="app=orders")) == 3
        # docs:end
"""


def test_recipe_snapshot_based_fast_suites(pytester: pytest.Pytester) -> None:
    """The block is a whole test module: its template prepares the cluster once, and both tests
    start from it (the second sees none of the first's failure)."""
    pytester.makepyfile(test_orders=SUITE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
