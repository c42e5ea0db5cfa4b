"""The DaemonSet controller's pure rules: placement and daemon tolerations, the rolling
update's choices, history patches and clean-up, the failed-pod back-off, status counts."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from fakekube.controllers.daemonset import history
from fakekube.controllers.daemonset.backoff import FailedPodBackoff
from fakekube.controllers.daemonset.manage import NodeFacts, creation_order, plan_node
from fakekube.controllers.daemonset.placement import (
    Placement,
    add_or_update_toleration,
    daemon_pod_tolerations,
    pinned_affinity,
    target_node_name,
)
from fakekube.controllers.daemonset.rollout import RolloutInput, budgets, plan_rolling_update
from fakekube.controllers.daemonset.status import count, new_status

Obj = dict[str, Any]
T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
EXISTS_NOT_READY = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}


def ds(**spec: Any) -> Obj:
    pod_spec = spec.pop("pod", {})
    return {"metadata": {"name": "agent", "namespace": "default", "uid": "u-1", "generation": 1},
            "spec": {"selector": {"matchLabels": {"app": "agent"}},
                     "updateStrategy": spec.pop("strategy", {"type": "RollingUpdate",
                                                             "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}),
                     "template": {"metadata": {"labels": {"app": "agent"}},
                                  "spec": {"containers": [{"name": "c", "image": "i"}], **pod_spec}}, **spec},
            "status": {}}


def node(name: str, labels: dict[str, str] | None = None, taints: list[Obj] | None = None) -> Obj:
    return {"metadata": {"name": name, "labels": labels or {}}, "spec": {"taints": taints or []}}


def pod(name: str, node_name: str, hash_: str = "new", ready: bool = True, created_s: int = 0, **extra: Any) -> Obj:
    conditions = [{"type": "Ready", "status": "True" if ready else "False",
                   "lastTransitionTime": (T0 - timedelta(seconds=60)).strftime("%Y-%m-%dT%H:%M:%SZ")}]
    return {"metadata": {"name": name, "namespace": "default", "labels": {"controller-revision-hash": hash_},
                         "creationTimestamp": (T0 + timedelta(seconds=created_s)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                         **extra},
            "spec": {"nodeName": node_name}, "status": {"phase": "Running", "conditions": conditions}}


def test_a_matching_toleration_is_replaced_where_it_stands_and_new_ones_go_last() -> None:
    mine = [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
             "tolerationSeconds": 30}, {"key": "x", "operator": "Exists"}]
    assert add_or_update_toleration(mine, EXISTS_NOT_READY) == [EXISTS_NOT_READY, {"key": "x", "operator": "Exists"}]
    tolerations = daemon_pod_tolerations({"tolerations": mine, "hostNetwork": True})
    assert [t["key"] for t in tolerations] == [
        "node.kubernetes.io/not-ready", "x", "node.kubernetes.io/unreachable", "node.kubernetes.io/disk-pressure",
        "node.kubernetes.io/memory-pressure", "node.kubernetes.io/pid-pressure", "node.kubernetes.io/unschedulable",
        "node.kubernetes.io/network-unavailable"]
    assert "tolerationSeconds" not in tolerations[0]


@pytest.mark.parametrize(("taint", "expected"), [
    (None, (True, True)),
    ({"key": "dedicated", "effect": "NoSchedule"}, (False, True)),
    ({"key": "dedicated", "effect": "NoExecute"}, (False, False)),
    ({"key": "dedicated", "effect": "PreferNoSchedule"}, (True, True)),
    ({"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"}, (False, True)),
    ({"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}, (True, True)),
    ({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}, (True, True)),
])
def test_node_should_run_daemon_pod_by_taint(taint: Obj | None, expected: tuple[bool, bool]) -> None:
    assert Placement(ds()).should_run(node("n", taints=[taint] if taint else [])) == expected


def test_node_selector_affinity_and_node_name_decide_alone() -> None:
    selective = Placement(ds(pod={"nodeSelector": {"disk": "ssd"}}))
    assert selective.should_run(node("a", {"disk": "ssd"})) == (True, True)
    assert selective.should_run(node("b", {"disk": "hdd"})) == (False, False)
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["b"]}]}]}}}
    by_field = Placement(ds(pod={"affinity": affinity}))
    assert by_field.should_run(node("a")) == (True, True) and by_field.should_run(node("b")) == (False, False)
    assert Placement(ds(pod={"nodeName": "a"})).should_run(node("b")) == (False, False)


def test_the_pinned_affinity_replaces_required_terms_and_keeps_the_rest() -> None:
    preferred = [{"weight": 1, "preference": {"matchExpressions": [{"key": "k", "operator": "Exists"}]}}]
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "k", "operator": "Exists"}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": preferred}, "podAffinity": {}}
    pinned = pinned_affinity(affinity, "node-7")
    assert pinned["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-7"]}]}]}
    assert pinned["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] == preferred
    assert "podAffinity" in pinned and affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"][0] == {"matchExpressions": [{"key": "k", "operator": "Exists"}]}  # input untouched
    assert target_node_name({"spec": {"affinity": pinned}}) == "node-7"
    assert target_node_name({"spec": {"nodeName": "node-2", "affinity": pinned}}) == "node-2"
    assert target_node_name({"spec": {}}) is None


def facts(daemon: Obj, node_pods: dict[str, list[Obj]], desired: int | None = None) -> RolloutInput:
    return RolloutInput(daemon, node_pods, "new", None, T0, len(node_pods) if desired is None else desired,
                        lambda name: True)


def test_without_surge_unavailable_old_pods_go_first_then_candidates_within_budget() -> None:
    daemon = ds(strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2, "maxSurge": 0}})
    node_pods = {"a": [pod("a-old", "a", "old")], "b": [pod("b-old", "b", "old", ready=False)],
                 "c": [pod("c-old", "c", "old")], "d": [pod("d-old", "d", "old")], "e": [pod("e-new", "e")]}
    plan = plan_rolling_update(facts(daemon, node_pods))
    assert plan.delete == ["b-old", "a-old"] and plan.create == []


def test_surge_creates_beside_old_pods_and_deletes_old_ones_once_new_ones_are_available() -> None:
    daemon = ds(strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": "50%"}})
    node_pods = {"a": [pod("a-old", "a", "old"), pod("a-new", "a")],
                 "b": [pod("b-old", "b", "old"), pod("b-new", "b", ready=False)],
                 "c": [pod("c-old", "c", "old")], "d": [pod("d-old", "d", "old")]}
    assert budgets(daemon, 4) == (2, 0)
    plan = plan_rolling_update(facts(daemon, node_pods))
    assert plan.delete == ["a-old"]  # a's new pod is available
    assert plan.create == ["c"]  # b is still surging: one more of the 2 allowed


def test_zero_surge_and_zero_unavailable_fall_back_to_one_unavailable() -> None:
    assert budgets(ds(strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "0%",
                                                                           "maxSurge": 0}}), 10) == (0, 1)
    assert budgets(ds(strategy={"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "15%",
                                                                           "maxSurge": 0}}), 10) == (0, 2)
    assert budgets(ds(strategy={"type": "OnDelete"}), 10) == (0, 1)


def test_a_node_keeps_its_oldest_pod_and_failed_pods_back_off() -> None:
    backoff = FailedPodBackoff()
    two = [pod("young", "n", created_s=5), pod("old", "n", created_s=1)]
    assert [p["metadata"]["name"] for p in creation_order(two)] == ["old", "young"]
    plan = plan_node(NodeFacts("n", True, True, two), ds(), "new", backoff, T0)
    assert (plan.create, plan.delete) == (False, ["young"])
    failed = pod("f", "n")
    failed["status"]["phase"] = "Failed"
    first = plan_node(NodeFacts("n", True, True, [failed]), ds(), "new", backoff, T0)
    assert first.delete == ["f"] and first.events[0][1] == "FailedDaemonPod"
    held = plan_node(NodeFacts("n", True, True, [failed]), ds(), "new", backoff, T0 + timedelta(seconds=0.5))
    assert (held.delete, held.retry_after_s) == ([], 1.0)
    again = plan_node(NodeFacts("n", True, True, [failed]), ds(), "new", backoff, T0 + timedelta(seconds=1))
    assert again.delete == ["f"] and backoff.delay_s("u-1/0/n") == 2.0
    gone = plan_node(NodeFacts("n", False, False, [failed]), ds(), "new", backoff, T0)
    assert gone.delete == ["f"] and not gone.events


def test_the_back_off_doubles_to_its_cap_and_starts_over_after_twice_the_cap() -> None:
    backoff = FailedPodBackoff(initial_s=1, max_s=4)
    now = T0
    for expected in (1, 2, 4, 4):
        backoff.next("k", now)
        assert backoff.delay_s("k") == expected
    assert backoff.in_backoff("k", now + timedelta(seconds=3.9))
    assert not backoff.in_backoff("k", now + timedelta(seconds=4))
    backoff.next("k", now + timedelta(seconds=9))  # untouched for more than 8 s
    assert backoff.delay_s("k") == 1
    backoff.gc(now + timedelta(seconds=100))
    assert len(backoff) == 0


def test_history_patches_sorted_keys_and_cleans_only_unused_revisions() -> None:
    daemon = ds()
    data = history.revision_data(daemon)
    assert list(data["spec"]["template"]) == ["$patch", "metadata", "spec"]
    revision = history.new_revision(daemon, "abc", 3)
    assert revision["metadata"]["name"] == "agent-abc" and revision["revision"] == 3
    assert revision["metadata"]["labels"] == {"app": "agent", "controller-revision-hash": "abc"}
    assert history.matches(daemon, revision)
    old = [dict(history.new_revision(daemon, h, n), data={}) for h, n in (("h1", 1), ("h2", 2), ("h3", 3))]
    doomed = history.revisions_to_delete(old, {"h1"}, limit=1)
    assert [r["revision"] for r in doomed] == [2, 3]


def test_status_counts_the_oldest_pod_per_node_and_omits_zero_optional_fields() -> None:
    nodes = [("a", True, [pod("a1", "a"), pod("a2", "a", "old", created_s=9)]), ("b", True, []),
             ("c", False, [pod("c1", "c")])]
    counts = count(nodes, 0, "new", None, T0)
    assert (counts.desiredNumberScheduled, counts.currentNumberScheduled, counts.numberMisscheduled,
            counts.numberReady, counts.updatedNumberScheduled, counts.numberAvailable,
            counts.numberUnavailable) == (2, 1, 1, 1, 1, 1, 1)
    status = new_status(ds(), count([("b", True, [])], 0, "new", None, T0), observe_generation=True)
    assert status == {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 1,
                      "numberReady": 0, "observedGeneration": 1, "numberUnavailable": 1}
