"""Cluster.timeline(): the page's structure matches the cluster's story (read back with xml.etree)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import requests

from fakekube import Cluster

SVG = "{http://www.w3.org/2000/svg}"
NOW = "2025-01-01T00:09:10Z"  # where the story ends
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
              "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                       "template": {"metadata": {"labels": {"app": "web"}},
                                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
BIG = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big"},
       "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100"}}}]}}


@pytest.fixture(scope="module")
def story() -> tuple[Cluster, list[dict], str]:
    """node-1 fails; its pods are evicted (Terminating: their kubelet is gone) and replaced on
    node-2; one pod never fits; then a scale-down deletes a pod for good.
    Returns the cluster, the pods it held at some point (live and deleted) and the page."""
    cluster = Cluster(nodes=2, seed=5)
    cluster.create(DEPLOYMENT)
    cluster.create(BIG)
    cluster.advance(30)
    cluster.fail_node("node-1")
    cluster.advance(460)
    before = cluster.list("v1", "Pod")
    cluster.scale("apps/v1", "Deployment", "web", 1)
    cluster.advance(60)
    live = cluster.list("v1", "Pod")
    gone = [p for p in before if p["metadata"]["uid"] not in {q["metadata"]["uid"] for q in live}]
    assert len(gone) == 1 and gone[0]["spec"]["nodeName"] == "node-2"  # the story happened
    return cluster, live + gone, cluster.timeline()


def parse(page: str) -> ET.Element:
    assert page.startswith("<!DOCTYPE html>\n")
    return ET.fromstring(page.split("\n", 1)[1])


def test_one_lane_per_node(story: tuple[Cluster, list[dict], str]) -> None:
    _, _, page = story
    lanes = [g.get("data-lane") for g in parse(page).iter(f"{SVG}g") if g.get("class") == "lane"]
    assert lanes == ["cluster", "node-1", "node-2", "(not scheduled)"]


def test_one_bar_per_pod_with_its_phase_and_times(story: tuple[Cluster, list[dict], str]) -> None:
    cluster, pods, page = story
    root = parse(page)
    bars = {rect.get("data-pod"): rect for rect in root.iter(f"{SVG}rect") if rect.get("data-pod")}
    assert sorted(bars) == sorted(f"default/{p['metadata']['name']}" for p in pods)
    lane_of = {rect.get("data-pod"): g.get("data-lane") for g in root.iter(f"{SVG}g") if g.get("class") == "lane"
               for rect in g.iter(f"{SVG}rect") if rect.get("data-pod")}
    live = {p["metadata"]["uid"] for p in cluster.list("v1", "Pod")}
    for pod in pods:
        bar = bars[f"default/{pod['metadata']['name']}"]
        classes = (bar.get("class") or "").split()
        if pod["metadata"]["uid"] not in live:  # its last state, in the store's change log
            pod = next(c.obj for c in reversed(cluster.store.history.since(0)) if c.type == "DELETED"
                       and c.obj["metadata"]["uid"] == pod["metadata"]["uid"])
        scheduled = next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")
        assert f"phase-{pod['status']['phase']}" in classes
        assert lane_of[bar.get("data-pod")] == pod["spec"].get("nodeName", "(not scheduled)")
        if pod["metadata"]["uid"] not in live:  # scaled down: from binding to its deletion
            assert "deleted" in classes and pod["status"]["phase"] == "Succeeded"
            assert (bar.get("data-start"), bar.get("data-end")) == (scheduled["lastTransitionTime"],
                                                                    pod["metadata"]["deletionTimestamp"])
        elif pod["metadata"].get("deletionTimestamp"):  # evicted, Terminating on the failed node
            assert "deleted" not in classes and "not-ready" in classes
            assert bar.get("data-start") == scheduled["lastTransitionTime"] and bar.get("data-end") == NOW
        elif pod["spec"].get("nodeName"):
            ready = next(c for c in pod["status"]["conditions"] if c["type"] == "Ready")
            assert "ready" in classes and "deleted" not in classes
            assert bar.get("data-start") == scheduled["lastTransitionTime"] == pod["status"]["startTime"]
            assert bar.get("data-end") == NOW
            spans = [r for r in root.iter(f"{SVG}rect") if r.get("class") == "ready-span"
                     and pod["metadata"]["name"] in (r.findtext(f"{SVG}title") or "")]
            assert [s.get("data-start") for s in spans] == [ready["lastTransitionTime"]]
        else:
            assert "not-ready" in classes and bar.get("data-start") == pod["metadata"]["creationTimestamp"]


def test_the_evicted_pods_were_ready_until_their_node_went_unknown(story: tuple[Cluster, list[dict], str]) -> None:
    """Readiness comes from the pods' past versions in the store's change log."""
    cluster, _, page = story
    not_ready = [e for e in cluster.events(reason="NodeNotReady") if e["involvedObject"]["kind"] == "Pod"]
    assert not_ready
    evicted = [p["metadata"]["name"] for p in cluster.list("v1", "Pod") if p["metadata"].get("deletionTimestamp")]
    assert evicted  # (one of the two replicas ran on node-1)
    for name in evicted:
        spans = [r for r in parse(page).iter(f"{SVG}rect") if r.get("class") == "ready-span"
                 and name in (r.findtext(f"{SVG}title") or "")]
        assert [s.get("data-end") for s in spans] == [not_ready[0]["lastTimestamp"]] == ["2025-01-01T00:01:25Z"]


def test_a_title_per_event_and_marks_for_taints_conditions_evictions_rollouts(
        story: tuple[Cluster, list[dict], str]) -> None:
    cluster, _, page = story
    root = parse(page)
    marks = [p for p in root.iter(f"{SVG}polygon") if "event" in (p.get("class") or "").split()]
    events = cluster.events()
    assert len(marks) == len(events)
    titles = sorted(m.findtext(f"{SVG}title") or "" for m in marks)
    assert titles == sorted(f"{e['lastTimestamp'] or e['eventTime'][:19] + 'Z'} {e['type']} {e['involvedObject']['kind']} "
                            f"{e['involvedObject'].get('namespace', '') + '/' if e['involvedObject'].get('namespace') else ''}"
                            f"{e['involvedObject']['name']} {e['reason']}"
                            f"{' (x' + str(e['count']) + ')' if e.get('count', 1) > 1 else ''}: {e['message']}"
                            for e in events)
    assert {m.get("data-reason") for m in marks if "eviction" in m.get("class", "")} >= {"TaintManagerEviction"}
    assert {m.get("data-reason") for m in marks if "rollout" in m.get("class", "")} >= {"ScalingReplicaSet"}
    taints = [r.findtext(f"{SVG}title") for r in root.iter(f"{SVG}rect") if r.get("class") == "taint"]
    assert taints == ["taint node.kubernetes.io/unreachable:NoSchedule since 2025-01-01T00:01:25Z",
                      "taint node.kubernetes.io/unreachable:NoExecute since 2025-01-01T00:01:30Z"]
    conditions = [line.findtext(f"{SVG}title") for line in root.iter(f"{SVG}line") if line.get("class") == "condition"]
    assert len(conditions) == 4 and all("=Unknown at 2025-01-01T00:01:25Z: NodeStatusUnknown" in c
                                        for c in conditions)


def test_the_page_is_self_contained(story: tuple[Cluster, list[dict], str], tmp_path: Path) -> None:
    cluster, _, page = story
    written = cluster.timeline(tmp_path / "deep" / "timeline.html")
    assert (tmp_path / "deep" / "timeline.html").read_text(encoding="utf-8") == written == page
    root = parse(page)
    assert [e.tag for e in root.iter() if e.tag in ("script", "link", "img", "iframe", "object")] == []
    assert [e.get("href") or e.get("src") for e in root.iter() if e.get("href") or e.get("src")] == []
    assert "url(" not in page and "@import" not in page


def test_serve_answers_the_timeline_on_the_control_api() -> None:
    from fakekube.control import attach
    with Cluster(nodes=1, seed=5) as cluster:
        attach(cluster)
        cluster.create(BIG)
        answer = requests.get(cluster.url + "/fakekube/v1/timeline", timeout=10)
        assert answer.status_code == 200 and answer.headers["Content-Type"] == "text/html; charset=utf-8"
        assert answer.text == cluster.timeline()
        lanes = [g.get("data-lane") for g in parse(answer.text).iter(f"{SVG}g") if g.get("class") == "lane"]
        assert lanes == ["cluster", "node-1", "(not scheduled)"]
        openapi = requests.get(cluster.url + "/fakekube/v1/openapi.json", timeout=10).json()
        assert list(openapi["paths"]["/fakekube/v1/timeline"]["get"]["responses"]["200"]["content"]) == ["text/html"]
