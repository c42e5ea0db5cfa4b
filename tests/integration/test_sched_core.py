"""The scheduler's loop: binding, events and conditions, the queue's back-off, hints and
flush, scheduling gates, profiles, priority order and seeded tie-breaks — at exact
virtual times."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from fakekube import Cluster
from fakekube.scheduler import Profile, SchedulerConfig

Obj = dict[str, Any]
PREEMPTION_NOT_HELPFUL = "preemption: 0/{n} nodes are available: {n} Preemption is not helpful for scheduling."


def pod(name: str, **spec: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}], **spec}}


def node_of(cluster: Cluster, name: str) -> str | None:
    return cluster.get("v1", "Pod", name)["spec"].get("nodeName")


def scheduled_condition(cluster: Cluster, name: str) -> Obj:
    conditions = cluster.get("v1", "Pod", name)["status"].get("conditions") or []
    return next(c for c in conditions if c["type"] == "PodScheduled")


def scheduler_events(cluster: Cluster, name: str) -> list[tuple[str, str, str, int]]:
    return [(e["type"], e["reason"], e["message"], (e.get("series") or {}).get("count") or 1)
            for e in cluster.events("default", involved_name=name)
            if e["reason"] in ("Scheduled", "FailedScheduling")]


def attempts(cluster: Cluster, name: str) -> int:
    """FailedScheduling occurrences: events plus their series repeats (events.k8s.io
    events about one pod resourceVersion form a series; the PodScheduled condition write
    after the first failure starts a new one, as upstream)."""
    return sum(count for _, reason, _, count in scheduler_events(cluster, name) if reason == "FailedScheduling")


def taint_all(cluster: Cluster, key: str, effect: str = "NoSchedule") -> None:
    for node in cluster.store.list(("", "nodes"))[0]:
        taints = list(node["spec"].get("taints") or []) + [{"key": key, "effect": effect}]
        patch_node(cluster, node["metadata"]["name"], {"spec": {"taints": taints}})


def patch_node(cluster: Cluster, name: str, patch: Obj) -> None:
    cluster.api.patch(cluster.resource("v1", "Node"), "", name, "application/merge-patch+json",
                      json.dumps(patch).encode())


def test_a_pod_is_bound_with_the_scheduled_event_and_condition() -> None:
    cluster = Cluster(nodes=3)
    cluster.create(pod("web"))
    cluster.settle()
    node = node_of(cluster, "web")
    assert node in ("node-1", "node-2", "node-3")
    assert scheduler_events(cluster, "web") == [("Normal", "Scheduled", f"Successfully assigned default/web to {node}", 1)]
    condition = scheduled_condition(cluster, "web")
    assert (condition["status"], condition["lastTransitionTime"]) == ("True", "2025-01-01T00:00:00Z")
    cluster.advance(2)
    assert cluster.get("v1", "Pod", "web")["status"]["phase"] == "Running"


def test_pods_for_another_scheduler_are_left_alone() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(pod("mine", schedulerName="my-scheduler"))
    cluster.advance(60)
    assert node_of(cluster, "mine") is None
    assert scheduler_events(cluster, "mine") == []
    assert "conditions" not in cluster.get("v1", "Pod", "mine")["status"]


def test_no_nodes_gives_upstreams_message() -> None:
    cluster = Cluster(nodes=0)
    cluster.create(pod("web"))
    cluster.settle()
    assert scheduler_events(cluster, "web") == [
        ("Warning", "FailedScheduling", "no nodes available to schedule pods", 1)]
    condition = scheduled_condition(cluster, "web")
    assert (condition["status"], condition["reason"], condition["message"]) == (
        "False", "Unschedulable", "no nodes available to schedule pods")


def test_taints_count_per_node_in_the_failure_message() -> None:
    cluster = Cluster(nodes=3)
    taint_all(cluster, "dedicated")
    patch_node(cluster, "node-1", {"spec": {"unschedulable": True}})
    cluster.create(pod("web"))
    cluster.settle()
    message = scheduler_events(cluster, "web")[0][2]
    assert message.startswith("0/3 nodes are available: 1 node(s) were unschedulable, "
                              "2 node(s) had untolerated taint {dedicated: }.")
    assert scheduled_condition(cluster, "web")["message"] == message
    assert node_of(cluster, "web") is None


def test_a_toleration_lets_the_pod_in() -> None:
    cluster = Cluster(nodes=2)
    taint_all(cluster, "dedicated")
    cluster.create(pod("web", tolerations=[{"key": "dedicated", "operator": "Exists"}]))
    cluster.settle()
    assert node_of(cluster, "web") in ("node-1", "node-2")


def test_removing_the_taint_schedules_the_pod_after_its_back_off() -> None:
    """Failed at t=0 (back-off 1 s); the taint goes at t=0.5: the pod waits in backoffQ and
    is bound at t=1.0 exactly."""
    cluster = Cluster(nodes=1)
    taint_all(cluster, "dedicated")
    start = cluster.clock.now()
    cluster.create(pod("web"))
    cluster.advance(0.5)
    patch_node(cluster, "node-1", {"spec": {"taints": []}})
    cluster.advance(0.499)
    assert node_of(cluster, "web") is None
    cluster.advance(0.001)
    assert node_of(cluster, "web") == "node-1"
    scheduled = [e for e in cluster.events("default", involved_name="web") if e["reason"] == "Scheduled"][0]
    assert scheduled["eventTime"] == (start + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def test_removing_the_taint_after_the_back_off_schedules_at_once() -> None:
    cluster = Cluster(nodes=1)
    taint_all(cluster, "dedicated")
    cluster.create(pod("web"))
    cluster.advance(7)
    assert node_of(cluster, "web") is None
    patch_node(cluster, "node-1", {"spec": {"taints": []}})
    cluster.settle()
    assert node_of(cluster, "web") == "node-1"


def test_an_unrelated_change_does_not_retry_the_pod() -> None:
    """A node label change does not help a pod rejected by a taint: no new attempt (the
    FailedScheduling event is not repeated) until the 5-minute flush."""
    cluster = Cluster(nodes=1)
    taint_all(cluster, "dedicated")
    cluster.create(pod("web"))
    cluster.advance(10)
    patch_node(cluster, "node-1", {"metadata": {"labels": {"tier": "web"}}})
    cluster.advance(10)
    assert attempts(cluster, "web") == 1


def test_unschedulable_pods_are_retried_by_the_five_minute_flush() -> None:
    """Failed at t=0: the 30-second flush loop sends it back at the first tick past 300 s
    (330 s), where it fails again (the event's count becomes 2)."""
    cluster = Cluster(nodes=1)
    taint_all(cluster, "dedicated")
    cluster.create(pod("web"))
    cluster.advance(329.9)
    assert attempts(cluster, "web") == 1
    cluster.advance(0.1)
    assert attempts(cluster, "web") == 2


def test_scheduling_gates_hold_the_pod_until_removed() -> None:
    cluster = Cluster(nodes=1)
    cluster.create(pod("gated", schedulingGates=[{"name": "example.com/wait"}]))
    cluster.advance(400)
    assert node_of(cluster, "gated") is None
    assert scheduler_events(cluster, "gated") == []
    cluster.api.patch(cluster.resource("v1", "Pod"), "default", "gated", "application/json-patch+json",
                      json.dumps([{"op": "remove", "path": "/spec/schedulingGates"}]).encode())
    cluster.settle()
    assert node_of(cluster, "gated") == "node-1"


def test_higher_priority_pods_are_scheduled_first() -> None:
    cluster = Cluster(nodes=1)
    cluster.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
                    "value": 1000})
    taint_all(cluster, "hold")
    for name, klass in (("low-1", ""), ("high-1", "high"), ("low-2", ""), ("high-2", "high")):
        cluster.create(pod(name, priorityClassName=klass) if klass else pod(name))
    cluster.advance(20)
    patch_node(cluster, "node-1", {"spec": {"taints": []}})
    cluster.settle()
    order = [e["involvedObject"]["name"] for e in cluster.events("default") if e["reason"] == "Scheduled"]
    assert order == ["high-1", "high-2", "low-1", "low-2"]


def test_ties_are_broken_from_the_seed() -> None:
    def placements(seed: int) -> list[str | None]:
        cluster = Cluster(nodes=4, seed=seed)
        for index in range(12):
            cluster.create(pod(f"p{index}"))
        cluster.settle()
        return [node_of(cluster, f"p{index}") for index in range(12)]

    first = placements(1)
    assert placements(1) == first
    assert len(set(first)) > 1
    assert any(placements(seed) != first for seed in (2, 3, 4))


def test_a_second_profile_schedules_its_own_pods() -> None:
    config = SchedulerConfig(profiles=(Profile(), Profile(scheduler_name="second")))
    cluster = Cluster(nodes=1, scheduler=config)
    cluster.create(pod("other", schedulerName="second"))
    cluster.settle()
    assert node_of(cluster, "other") == "node-1"


def test_the_scheduler_can_be_turned_off() -> None:
    cluster = Cluster(nodes=1, scheduler=None)
    cluster.create(pod("web"))
    cluster.advance(10)
    assert node_of(cluster, "web") is None


def test_a_bad_profile_fails_at_cluster_creation() -> None:
    with pytest.raises(ValueError, match="unknown plugin"):
        Cluster(scheduler=SchedulerConfig.from_dict(
            {"profiles": [{"plugins": {"filter": {"enabled": [{"name": "NoSuchPlugin"}]}}}]}))


def test_a_config_file_configures_profiles_and_back_off(tmp_path: Any) -> None:
    config = tmp_path / "cluster.yaml"
    config.write_text(
        "nodes: 1\n"
        "scheduler:\n"
        "  podInitialBackoffSeconds: 2\n"
        "  profiles:\n"
        "  - schedulerName: default-scheduler\n"
        "  - schedulerName: no-taints\n"
        "    plugins:\n"
        "      filter:\n"
        "        disabled: [{name: TaintToleration}]\n")
    cluster = Cluster.from_config_file(config)
    taint_all(cluster, "dedicated")
    cluster.create(pod("strict"))
    cluster.create(pod("lax", schedulerName="no-taints"))
    cluster.settle()
    assert (node_of(cluster, "strict"), node_of(cluster, "lax")) == (None, "node-1")
    patch_node(cluster, "node-1", {"spec": {"taints": []}})
    cluster.advance(1.999)
    assert node_of(cluster, "strict") is None  # a 2-second back-off from the config
    cluster.advance(0.001)
    assert node_of(cluster, "strict") == "node-1"


def test_a_config_file_can_turn_the_scheduler_off(tmp_path: Any) -> None:
    config = tmp_path / "cluster.yaml"
    config.write_text("nodes: 1\nscheduler: false\n")
    assert Cluster.from_config_file(config).scheduler is None


def test_explain_scheduling_names_each_nodes_filter_and_scores() -> None:
    cluster = Cluster(nodes=3)
    patch_node(cluster, "node-1", {"spec": {"taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]}})
    patch_node(cluster, "node-3", {"spec": {"unschedulable": True}})
    cluster.settle()
    before = cluster.store.resource_version
    report = cluster.explain_scheduling(pod("web"))
    assert cluster.store.resource_version == before  # asking writes nothing
    by_node = {entry["name"]: entry for entry in report["nodes"]}
    assert by_node["node-1"]["filter"] == {"plugin": "TaintToleration", "code": "UnschedulableAndUnresolvable",
                                           "reasons": ["node(s) had untolerated taint {dedicated: db}"]}
    assert by_node["node-3"]["filter"]["reasons"] == ["node(s) were unschedulable"]
    assert by_node["node-2"]["fits"] is True
    scores = by_node["node-2"]["scores"]
    assert scores["TaintToleration"] == {"score": 100, "weight": 3, "weighted": 300}
    assert by_node["node-2"]["total"] == sum(s["weighted"] for s in scores.values())
    assert report["best"] == ["node-2"]
    cluster.create(pod("web"))
    assert node_of(cluster, "web") == "node-2"


def test_explain_scheduling_gives_the_failure_message_and_control_api_serves_it() -> None:
    import http.client
    import urllib.parse

    from fakekube.control import attach

    cluster = Cluster(nodes=2)
    attach(cluster)
    cluster.start()
    try:
        taint_all(cluster, "dedicated")
        cluster.create(pod("web"))
        report = cluster.explain_scheduling("web")
        assert report["message"] == "0/2 nodes are available: 2 node(s) had untolerated taint {dedicated: }."
        address = urllib.parse.urlsplit(cluster.url)
        connection = http.client.HTTPConnection(address.hostname or "", address.port)
        connection.request("GET", "/fakekube/v1/scheduling/default/web")
        response = connection.getresponse()
        assert (response.status, json.loads(response.read())) == (200, report)
        connection.request("GET", "/fakekube/v1/scheduling/default/nope")
        response = connection.getresponse()
        assert response.status == 404
        assert json.loads(response.read())["reason"] == "NotFound"
        connection.close()
    finally:
        cluster.stop()


def test_a_gated_pod_is_created_with_the_scheduling_gated_condition() -> None:
    cluster = Cluster(nodes=1)
    created = cluster.create(pod("gated", schedulingGates=[{"name": "example.com/wait"}]))
    assert created["status"]["conditions"] == [{
        "type": "PodScheduled", "status": "False", "lastProbeTime": None,
        "lastTransitionTime": "2025-01-01T00:00:00Z", "reason": "SchedulingGated",
        "message": "Scheduling is blocked due to non-empty scheduling gates"}]


def test_match_label_keys_are_merged_into_the_affinity_selector_at_create() -> None:
    cluster = Cluster(nodes=1)
    term = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname",
            "matchLabelKeys": ["pod-template-hash"], "mismatchLabelKeys": ["tenant"]}
    spec_pod = pod("web", affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}})
    spec_pod["metadata"]["labels"] = {"app": "web", "pod-template-hash": "abc", "tenant": "t1"}
    created = cluster.create(spec_pod)
    merged = created["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert merged["labelSelector"] == {"matchLabels": {"app": "web"}, "matchExpressions": [
        {"key": "pod-template-hash", "operator": "In", "values": ["abc"]},
        {"key": "tenant", "operator": "NotIn", "values": ["t1"]}]}
    assert merged["matchLabelKeys"] == ["pod-template-hash"]
