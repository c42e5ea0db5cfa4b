"""Deferred Lease renewals must be invisible: a lazy and an eager run observe the same.

An idle cluster's Lease renewals are deferred by the store (store/deferred.py): they take
their resourceVersions at once and their objects only when something could observe them.
Here one seeded scenario runs twice — renewals deferred (and the node lifecycle monitor's
quick passes), and every renewal written at once (every node checked on every pass) — and
every observation is compared: gets and lists of Leases and Nodes, an exact-
version list and pages of a list at an old resourceVersion, watches opened at several
points and resumed later from those (old) versions with their 410 boundaries, the log's
horizon, node faults, a kubelet restart, a node deleted, a snapshot restored in the
middle, and at the end the whole store; and the same through the HTTP API (list pages,
gets, watches resumed from versions seen earlier, a 410 past the log).
"""

from __future__ import annotations

import json
import random
import urllib.request
from typing import Any

import pytest

from fakekube import Cluster
from fakekube.controllers.nodelifecycle.controller import NodeLifecycleController
from fakekube.engine.engine import Engine
from fakekube.kubelet.heartbeat import NodeHeartbeats
from fakekube.objects.kinds import LEASES, NODES
from fakekube.store import TooOldResourceVersion
from tests.integration.nodefaults import FAULTS, inject
from tests.integration.watchclient import WatchStream

NODE_COUNT = 14
LEASE_NS = "kube-node-lease"


def resume(cluster: Cluster, rv: int) -> Any:
    """What a watch from ``rv`` replays (Leases and Nodes), or its 410."""
    try:
        changes = cluster.store.changes_since(rv)
    except TooOldResourceVersion:
        return ["410", cluster.store.history.horizon_rv()]
    return [(c.rv, c.type, c.resource, c.name, c.obj) for c in changes if c.resource in ("leases", "nodes")]


def paged(cluster: Cluster, rv: int) -> Any:
    """A list of Leases at ``rv`` in pages of 4 (etcd range reads at that revision), or its 410."""
    pages, start = [], ""
    try:
        while True:
            page = cluster.store.range_at(LEASES, LEASE_NS, start, 4, rv)
            pages.append([(o["metadata"]["name"], o["metadata"]["resourceVersion"], o["spec"]["renewTime"])
                          for o in page.objects])
            if not page.remaining:
                return pages
            start = f"{LEASE_NS}/{page.objects[-1]['metadata']['name']}\x00"
    except TooOldResourceVersion:
        return ["410"]


def scenario(lazy: bool, seed: int, history_limit: int, history_max_bytes: int) -> tuple[list[str], int]:
    """The observations of one run, and how many times renewals were waiting unbuilt."""
    rng = random.Random(seed)
    cluster = Cluster(nodes=NODE_COUNT, seed=seed, history_limit=history_limit, history_max_bytes=history_max_bytes)
    cluster.store.defer_writes = lazy
    cluster.kubelets.heartbeats.quick_reports = lazy
    cluster.engine.quick_routes = lazy  # heartbeats to every watcher (engine/routing.py)
    seen: list[str] = []
    marks: list[int] = []
    waiting = 0

    def note(what: str, value: Any) -> None:
        seen.append(f"{len(seen)} {what}: {json.dumps(value, sort_keys=True, default=str)}")

    for step in range(40):
        cluster.advance(rng.choice([2, 5, 10, 15, 30, 45]))
        waiting += bool(cluster.store._deferred)
        look = rng.choice(["rv", "get", "list", "nodes", "watch", "page", "exact", "horizon", "mark"])
        note("rv", cluster.store.resource_version)  # moves with every renewal, built or not
        if look == "get":
            node = f"node-{rng.randint(1, NODE_COUNT)}"
            note("get", cluster.store.get(LEASES, (LEASE_NS, node)))
        elif look == "list":
            note("list", cluster.store.list(LEASES, LEASE_NS))
        elif look == "nodes":
            note("nodes", cluster.store.list(NODES))
        elif look == "watch" and marks:
            note("watch", resume(cluster, rng.choice(marks)))
        elif look == "page" and marks:
            note("page", paged(cluster, rng.choice(marks)))
        elif look == "exact" and marks:
            rv = rng.choice(marks)
            try:
                note("exact", cluster.store.list_at(LEASES, "", rv))
            except TooOldResourceVersion:
                note("exact", "410")
        elif look == "horizon":
            note("horizon", [cluster.store.history.horizon_rv(), cluster.store.history.covers(marks[-1] if marks else 0)])
        marks.append(cluster.store.resource_version)  # a watch opened here, resumed later
        node = f"node-{rng.randint(1, NODE_COUNT - 1)}"  # node-14 is deleted at step 30
        inject(cluster, rng.choice(["none", "none", *FAULTS]), node)
        if step == 20:
            cluster.restore(cluster.snapshot())
        if step == 30:
            cluster.delete("v1", "Node", f"node-{NODE_COUNT}", "")
    cluster.advance(400)
    waiting += bool(cluster.store._deferred)
    for rv in marks[-6:]:
        note("final watch", resume(cluster, rv))
    assert not cluster.internal_errors
    note("store", {f"{g}/{r}": cluster.store.list((g, r))[0] for g, r in cluster.store.resources()})
    return seen, waiting


@pytest.mark.parametrize(("seed", "history_limit", "history_max_bytes"), [
    (1, 10_000, 128 * 1024 * 1024),  # the default log: every mark stays in reach
    (2, 120, 128 * 1024 * 1024),  # a short log: blocks trimmed by count while deferred, 410s
    (4, 30, 128 * 1024 * 1024),  # a log shorter than the renewals waiting: most are never built
    (3, 10_000, 60_000),  # a byte budget that trims while renewals wait (built one by one)
])
def test_deferred_renewals_are_observed_as_eager_writes(seed: int, history_limit: int, history_max_bytes: int,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    lazy, waited = scenario(True, seed, history_limit, history_max_bytes)
    monkeypatch.setattr(NodeLifecycleController, "quick_passes", False)  # every node checked every pass
    monkeypatch.setattr(NodeHeartbeats, "quick_checks", False)  # every kubelet's status checked one by one
    monkeypatch.setattr(Engine, "lazy_periodic", False)  # and every periodic pass run, quiet or not
    monkeypatch.setattr(NodeHeartbeats, "paired_ticks", False)  # renewals and checks as two items
    eager, eager_waited = scenario(False, seed, history_limit, history_max_bytes)
    assert eager_waited == 0
    assert waited > 10  # renewals really were deferred at most observation points
    for index, (got, want) in enumerate(zip(lazy, eager)):
        assert got == want, f"observation {index} differs"
    assert len(lazy) == len(eager)
    gone = any('["410"' in line or line.endswith(': "410"') for line in lazy)
    assert gone == (history_limit < 10_000 or history_max_bytes < 10**6)  # the 410 boundaries were reached


LEASES_PATH = f"/apis/coordination.k8s.io/v1/namespaces/{LEASE_NS}/leases"


def http_get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.loads(answer.read())


def http_watch(cluster: Cluster, path: str, rv: str) -> list[Any]:
    """Every event a watch from ``rv`` gets before its 1 s timeout (the clock does not move
    meanwhile, so the same events every run)."""
    with WatchStream(cluster.url, f"{path}?watch=true&resourceVersion={rv}&timeoutSeconds=1") as stream:
        events = []
        while (event := stream.next_event()) is not None:
            obj = event["object"]
            events.append([event["type"], obj.get("metadata", {}).get("name"),
                           obj.get("metadata", {}).get("resourceVersion"), obj.get("spec"), obj.get("message")])
        return events


def served_scenario(lazy: bool) -> tuple[list[Any], int]:
    """Leases and Nodes through the HTTP API — pages, gets, watches resumed from versions
    seen earlier (410 past the log) — while renewals are deferred (or not)."""
    rng = random.Random(7)
    seen: list[Any] = []
    waited = 0
    cluster = Cluster(nodes=5, seed=7, history_limit=40)
    cluster.store.defer_writes = lazy
    cluster.kubelets.heartbeats.quick_reports = lazy
    cluster.engine.quick_routes = lazy  # heartbeats to every watcher (engine/routing.py)
    with cluster:
        marks = ["0"]
        for step in range(8):
            cluster.advance(rng.choice([5, 10, 30, 60]))
            waited += bool(cluster.store._deferred)
            page = http_get(f"{cluster.url}{LEASES_PATH}?limit=2")
            pages = [page]
            while pages[-1]["metadata"].get("continue"):
                pages.append(http_get(f"{cluster.url}{LEASES_PATH}?limit=2&continue={pages[-1]['metadata']['continue']}"))
            seen.append([[(o["metadata"]["name"], o["metadata"]["resourceVersion"]) for o in p["items"]] for p in pages])
            if step == 7:  # from the first version seen: past the log by now
                seen.append(http_watch(cluster, LEASES_PATH, marks[1]))
            elif step % 2:
                seen.append(http_watch(cluster, LEASES_PATH, rng.choice(marks)))
            else:
                seen.append(http_watch(cluster, "/api/v1/nodes", rng.choice(marks[1:] or marks)))
            seen.append(http_get(f"{cluster.url}{LEASES_PATH}/node-{rng.randint(1, 5)}"))
            marks.append(page["metadata"]["resourceVersion"])
            if step == 3:
                cluster.fail_node("node-2")
            if step == 5:
                cluster.restart_kubelet("node-3")
    return seen, waited


def test_served_leases_and_watches_are_the_eager_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same through the HTTP API: list pages, gets and watches from old versions."""
    lazy, waited = served_scenario(True)
    monkeypatch.setattr(NodeLifecycleController, "quick_passes", False)
    monkeypatch.setattr(NodeHeartbeats, "quick_checks", False)
    monkeypatch.setattr(Engine, "lazy_periodic", False)  # and every periodic pass run, quiet or not
    monkeypatch.setattr(NodeHeartbeats, "paired_ticks", False)  # renewals and checks as two items
    eager, _ = served_scenario(False)
    assert waited >= 4  # renewals were waiting unbuilt when the requests came
    assert lazy == eager
    assert any(isinstance(event, list) and event and event[0] == "ERROR" for watch in lazy
               if isinstance(watch, list) for event in watch)  # a resume past the log: 410
