"""Preemption on a whole cluster (DefaultPreemption): the victim gets the DisruptionTarget
condition, a graceful delete and a Preempted event; the preemptor is nominated and binds
when the victim is gone, at exact virtual times; pods that may not preempt, or would not
fit anyway, stay Pending with upstream's FailedScheduling message.

Default nodes allocate 3900m cpu. Victims whose container takes 100 s to stop are killed
at the end of their 30-second grace period, so the preemptor binds exactly then.
"""

from __future__ import annotations

import json
from typing import Any

from fakekube import Cluster
from fakekube.kubelet.behaviour import BEHAVIOUR_ANNOTATION

Obj = dict[str, Any]


def priority_class(name: str, value: int, **extra: Any) -> Obj:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, **extra}


def pod(name: str, priority_class_name: str, cpu: str, labels: dict[str, str] | None = None, grace_s: int = 30,
        stop_delay_s: int = 100) -> Obj:
    behaviour = json.dumps({"stop_delay_s": stop_delay_s})
    meta: Obj = {"name": name, "namespace": "default", "annotations": {BEHAVIOUR_ANNOTATION: behaviour}}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"priorityClassName": priority_class_name, "terminationGracePeriodSeconds": grace_s,
                     "containers": [{"name": "c", "image": "nginx:1.27", "resources": {"requests": {"cpu": cpu}}}]}}


def cluster_with_classes(nodes: int) -> Cluster:
    cluster = Cluster(nodes=nodes)
    cluster.create(priority_class("low", 100))
    cluster.create(priority_class("high", 1000))
    cluster.create(priority_class("high-never", 1000, preemptionPolicy="Never"))
    return cluster


def names(cluster: Cluster) -> list[str]:
    return sorted(p["metadata"]["name"] for p in cluster.list("v1", "Pod", "default"))


def events(cluster: Cluster, name: str, reason: str) -> list[tuple[str, str]]:
    """(time, message) of the pod's events with ``reason``."""
    return [(e["firstTimestamp"] or e["eventTime"][:19] + "Z", e["message"])
            for e in cluster.events("default", involved_name=name) if e["reason"] == reason]


def test_high_priority_pod_evicts_the_lowest_priority_pod_and_binds_after_its_grace_period() -> None:
    cluster = cluster_with_classes(1)
    cluster.create(pod("low", "low", "3"))       # 3 of 3.9 cpu
    cluster.create(pod("small", "low", "500m"))  # same priority, started at the same second
    cluster.advance(10)
    high = cluster.create(pod("high", "high", "2"))
    cluster.settle()

    # t=10: 2 cpu needs only "low" gone ("small" is reprieved: 500m + 2 <= 3.9).
    victim = cluster.get("v1", "Pod", "low")
    assert victim["metadata"]["deletionTimestamp"] == "2025-01-01T00:00:40Z"
    assert victim["metadata"]["deletionGracePeriodSeconds"] == 30
    assert victim["status"]["conditions"][0] == {
        "type": "DisruptionTarget", "status": "True", "lastProbeTime": None,
        "lastTransitionTime": "2025-01-01T00:00:10Z", "reason": "PreemptionByScheduler",
        "message": "default-scheduler: preempting to accommodate a higher priority pod"}
    [preempted] = [e for e in cluster.events("default", involved_name="low") if e["reason"] == "Preempted"]
    assert (preempted["eventTime"], preempted["type"], preempted["action"], preempted["message"]) == (
        "2025-01-01T00:00:10.000000Z", "Normal", "Preempting",
        f"Preempted by pod {high['metadata']['uid']} on node node-1")
    assert (preempted["related"]["name"], preempted["reportingComponent"]) == ("high", "default-scheduler")
    assert "deletionTimestamp" not in cluster.get("v1", "Pod", "small")["metadata"]
    preemptor = cluster.get("v1", "Pod", "high")
    assert preemptor["status"]["nominatedNodeName"] == "node-1"
    assert "nodeName" not in preemptor["spec"]
    assert events(cluster, "high", "FailedScheduling") == [
        ("2025-01-01T00:00:10Z", "0/1 nodes are available: 1 Insufficient cpu.")]

    # The victim's container ignores SIGTERM: killed at the end of its grace period, and
    # the preemptor takes its place at that instant.
    cluster.advance(29)
    assert "nodeName" not in cluster.get("v1", "Pod", "high")["spec"]
    assert names(cluster) == ["high", "low", "small"]
    cluster.advance(1)
    assert names(cluster) == ["high", "small"]
    assert cluster.get("v1", "Pod", "high")["spec"]["nodeName"] == "node-1"
    assert events(cluster, "high", "Scheduled") == [
        ("2025-01-01T00:00:40Z", "Successfully assigned default/high to node-1")]


def test_preemption_policy_never_stays_pending() -> None:
    cluster = cluster_with_classes(1)
    cluster.create(pod("low", "low", "3"))
    cluster.advance(10)
    cluster.create(pod("polite", "high-never", "2"))
    cluster.settle()
    cluster.advance(60)
    assert "deletionTimestamp" not in cluster.get("v1", "Pod", "low")["metadata"]
    polite = cluster.get("v1", "Pod", "polite")
    assert "nodeName" not in polite["spec"] and "nominatedNodeName" not in polite["status"]
    message = "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never."
    assert events(cluster, "polite", "FailedScheduling") == [("2025-01-01T00:00:10Z", message)]
    assert polite["status"]["conditions"][0]["message"] == message


def test_no_victims_when_every_pod_has_at_least_the_preemptors_priority() -> None:
    cluster = cluster_with_classes(2)
    cluster.create(pod("big-1", "high", "3"))
    cluster.create(pod("big-2", "high", "3"))
    cluster.advance(10)
    cluster.create(pod("also-high", "high", "2"))
    cluster.settle()
    assert events(cluster, "also-high", "FailedScheduling") == [(
        "2025-01-01T00:00:10Z",
        "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
        "2 No preemption victims found for incoming pod.")]
    assert "nominatedNodeName" not in cluster.get("v1", "Pod", "also-high")["status"]


def test_preemption_that_cannot_help_says_so_per_node() -> None:
    # node-1: a low pod, but 5 cpu fits on no 3.9-cpu node even empty; node-2: only a
    # high pod. Neither would take the preemptor whatever is evicted.
    cluster = cluster_with_classes(2)
    cluster.create(pod("low", "low", "1"))
    cluster.advance(10)
    cluster.create(pod("huge", "high", "5"))
    cluster.settle()
    [(_, message)] = events(cluster, "huge", "FailedScheduling")
    assert message == ("0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
                       "1 Insufficient cpu, 1 No preemption victims found for incoming pod.")
    assert "deletionTimestamp" not in cluster.get("v1", "Pod", "low")["metadata"]


def test_the_node_whose_victim_no_budget_protects_is_chosen() -> None:
    cluster = cluster_with_classes(2)
    cluster.create(pod("guarded", "low", "3", labels={"app": "db"}))
    cluster.create(pod("plain", "low", "3"))
    cluster.advance(10)
    assert {cluster.get("v1", "Pod", n)["spec"]["nodeName"] for n in ("guarded", "plain")} == {"node-1", "node-2"}
    cluster.create({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                    "metadata": {"name": "db", "namespace": "default"},
                    "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}}})
    # The disruption controller counts the one healthy pod the budget needs: nothing may go.
    status = cluster.get("policy/v1", "PodDisruptionBudget", "db")["status"]
    assert {k: v for k, v in status.items() if k != "conditions"} == {
        "observedGeneration": 1, "disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1,
        "expectedPods": 1}
    cluster.create(pod("high", "high", "2"))
    cluster.settle()
    assert "deletionTimestamp" not in cluster.get("v1", "Pod", "guarded")["metadata"]
    assert cluster.get("v1", "Pod", "plain")["metadata"]["deletionTimestamp"] == "2025-01-01T00:00:40Z"
    assert cluster.get("v1", "Pod", "high")["status"]["nominatedNodeName"] == (
        cluster.get("v1", "Pod", "plain")["spec"]["nodeName"])


def test_no_second_preemption_while_the_first_victim_terminates() -> None:
    # A 600 s grace and a container that ignores SIGTERM: when the 5-minute flush retries the
    # preemptor, its victim is still terminating on the nominated node, so it waits instead
    # of evicting "small" too.
    cluster = cluster_with_classes(1)
    cluster.create(pod("low", "low", "3", grace_s=600, stop_delay_s=1000))
    cluster.create(pod("small", "low", "500m", grace_s=600, stop_delay_s=1000))
    cluster.advance(10)
    cluster.create(pod("high", "high", "2"))
    cluster.settle()
    cluster.advance(400)
    assert events(cluster, "high", "FailedScheduling") == [
        ("2025-01-01T00:00:10Z", "0/1 nodes are available: 1 Insufficient cpu."),
        ("2025-01-01T00:05:30Z", "0/1 nodes are available: 1 Insufficient cpu. "
                                 "preemption: not eligible due to a terminating pod on the nominated node.")]
    assert "deletionTimestamp" not in cluster.get("v1", "Pod", "small")["metadata"]
    assert cluster.get("v1", "Pod", "high")["status"]["nominatedNodeName"] == "node-1"
    cluster.advance(200)  # killed at 00:10:10, the end of its grace period
    assert cluster.get("v1", "Pod", "high")["spec"]["nodeName"] == "node-1"
    assert events(cluster, "high", "Scheduled") == [
        ("2025-01-01T00:10:10Z", "Successfully assigned default/high to node-1")]


def test_a_higher_preemptor_clears_a_lower_pods_nomination_to_the_node() -> None:
    cluster = cluster_with_classes(1)
    cluster.create(priority_class("mid", 500))
    cluster.create(pod("low", "low", "3"))
    cluster.advance(10)
    cluster.create(pod("middle", "mid", "2"))
    cluster.settle()
    assert cluster.get("v1", "Pod", "middle")["status"]["nominatedNodeName"] == "node-1"
    cluster.advance(5)
    high = cluster.create(pod("high", "high", "2"))
    cluster.settle()
    # t=15: "high" needs the same room; "low" is its victim too (1.33 preempts a victim
    # already being deleted again), and "middle" loses its nomination to node-1.
    assert "nominatedNodeName" not in cluster.get("v1", "Pod", "middle")["status"]
    assert cluster.get("v1", "Pod", "high")["status"]["nominatedNodeName"] == "node-1"
    assert [m for _, m in events(cluster, "low", "Preempted")][-1] == (
        f"Preempted by pod {high['metadata']['uid']} on node node-1")
    cluster.advance(25)  # "low" is gone at 00:00:40: "high" takes the room, "middle" cannot preempt it
    assert cluster.get("v1", "Pod", "high")["spec"]["nodeName"] == "node-1"
    assert "nodeName" not in cluster.get("v1", "Pod", "middle")["spec"]
    assert events(cluster, "middle", "FailedScheduling")[-1] == (
        "2025-01-01T00:00:40Z", "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
                                "1 No preemption victims found for incoming pod.")
