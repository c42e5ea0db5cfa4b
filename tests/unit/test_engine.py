"""The engine: reactions in change order, timers on the virtual clock, bounded settling."""

from __future__ import annotations

import json
import threading
import urllib.request
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Iterable

import pytest

from fakekube import Cluster
from fakekube.api.machinery.errors import ApiError
from fakekube.api.verbs.apiserver import WriteOptions
from fakekube.engine import Context, EngineStuck, WorkQueue
from fakekube.objects.kinds import CONFIGMAPS
from fakekube.store import DELETED, Change


def cm(name: str, **data: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}, "data": data}


def key_of(change: Change) -> Iterable[str]:
    return [f"{change.namespace}/{change.name}"]


@dataclass
class Mirror:
    """Keeps ``mirror-X`` equal to every ``src-X`` configmap."""

    name: str = "mirror"
    resources: tuple = (CONFIGMAPS,)
    seen: list[str] = field(default_factory=list)

    def keys_for(self, change: Change) -> Iterable[str]:
        return key_of(change) if change.name.startswith("src-") else []

    def reconcile(self, key: str, ctx: Context) -> None:
        self.seen.append(key)
        namespace, name = key.split("/")
        source = ctx.get(CONFIGMAPS, name, namespace)
        target = "mirror-" + name[len("src-"):]
        if source is None:
            return
        if ctx.get(CONFIGMAPS, target, namespace) is None:
            ctx.client.create(CONFIGMAPS, cm(target, **source.get("data", {})))


@dataclass
class Ticker:
    """Stamps the cluster time into a configmap every 10 s of cluster time."""

    name: str = "ticker"
    resources: tuple = (CONFIGMAPS,)
    ticks: list[str] = field(default_factory=list)

    def keys_for(self, change: Change) -> Iterable[str]:
        return key_of(change) if change.name == "ticker" and change.type != DELETED and not self.ticks else []

    def reconcile(self, key: str, ctx: Context) -> None:
        self.ticks.append(ctx.now.strftime("%H:%M:%S"))
        ctx.requeue_after(10)


@dataclass
class Restless:
    """Writes its own trigger on every reconcile: a loop that never goes quiet."""

    name: str = "restless"
    resources: tuple = (CONFIGMAPS,)

    def keys_for(self, change: Change) -> Iterable[str]:
        return key_of(change) if change.name == "loop" else []

    def reconcile(self, key: str, ctx: Context) -> None:
        current = ctx.get(CONFIGMAPS, "loop", "default")
        assert current is not None
        ctx.client.patch(CONFIGMAPS, "loop", {"data": {"n": str(int(current["data"]["n"]) + 1)}}, "default")


@dataclass
class Crashing:
    name: str = "crashing"
    resources: tuple = (CONFIGMAPS,)

    def keys_for(self, change: Change) -> Iterable[str]:
        return key_of(change) if change.name == "boom" else []

    def reconcile(self, key: str, ctx: Context) -> None:
        raise ValueError("broken controller")


def test_reactions_run_when_the_cluster_settles() -> None:
    cluster = Cluster()
    mirror = Mirror()
    cluster.engine.register(mirror)
    cluster.create(cm("src-a", k="v"))  # the Python API settles after each write
    assert cluster.get("v1", "ConfigMap", "mirror-a")["data"] == {"k": "v"}
    assert mirror.seen == ["default/src-a"]


def test_a_client_sees_reactions_before_its_next_call() -> None:
    with Cluster() as cluster:
        cluster.engine.register(Mirror())
        request = urllib.request.Request(cluster.url + "/api/v1/namespaces/default/configmaps", method="POST",
                                         data=json.dumps(cm("src-b", k="v")).encode(),
                                         headers={"Content-Type": "application/json"})
        urllib.request.urlopen(request, timeout=5).read()
        with urllib.request.urlopen(cluster.url + "/api/v1/namespaces/default/configmaps/mirror-b", timeout=5) as r:
            assert json.load(r)["data"] == {"k": "v"}


def test_timers_fire_at_exact_virtual_times_during_advance() -> None:
    cluster = Cluster()
    ticker = Ticker()
    cluster.engine.register(ticker)
    cluster.create(cm("ticker"))
    assert ticker.ticks == ["00:00:00"]
    cluster.advance(35)
    assert ticker.ticks == ["00:00:00", "00:00:10", "00:00:20", "00:00:30"]
    assert cluster.now.strftime("%H:%M:%S") == "00:00:35"


def test_changes_reach_controllers_in_write_order_and_registration_order() -> None:
    cluster = Cluster()
    first, second = Mirror(name="first"), Mirror(name="second")
    cluster.engine.register(first)
    cluster.engine.register(second)
    for name in ("src-c", "src-a", "src-b"):
        cluster.api.create(cluster.resource("v1", "ConfigMap"), "default", cm(name))
    order = []  # the queue holds (controller, key) in the order the changes came
    while (item := cluster.engine.queue.pop()) is not None:
        order.append(item)
    assert order == [("first", "default/src-c"), ("second", "default/src-c"), ("first", "default/src-a"),
                     ("second", "default/src-a"), ("first", "default/src-b"), ("second", "default/src-b")]


def test_a_controller_that_never_goes_quiet_is_named() -> None:
    cluster = Cluster()
    cluster.engine.max_steps_per_instant = 50
    cluster.engine.register(Restless())
    cluster.api.create(cluster.resource("v1", "ConfigMap"), "default", cm("loop", n="0"))
    with pytest.raises(EngineStuck, match="controller 'restless' did not go quiet: 'default/loop'"):
        cluster.settle()


def test_one_key_looping_is_caught_by_the_per_key_bound_while_a_wide_burst_is_not() -> None:
    cluster = Cluster()
    cluster.engine.max_reconciles_per_key = 20
    cluster.engine.register(Mirror())
    for index in range(100):  # 100 distinct keys at one instant: far over 20 reconciles in all
        cluster.api.create(cluster.resource("v1", "ConfigMap"), "default", cm(f"src-{index}"))
    assert cluster.settle() == 100  # each source once
    cluster.engine.register(Restless())
    cluster.api.create(cluster.resource("v1", "ConfigMap"), "default", cm("loop", n="0"))
    with pytest.raises(EngineStuck, match="'default/loop' reconciled 21 times .* 20 per key"):
        cluster.settle()


def test_a_crashing_controller_is_reported_and_the_cluster_keeps_working() -> None:
    cluster = Cluster()
    cluster.engine.register(Crashing())
    cluster.create(cm("boom"))
    assert [str(e.error) for e in cluster.engine.errors] == ["broken controller"]
    assert "crashing reconciling 'default/boom' at 2025-01-01T00:00:00+00:00" in str(cluster.engine.errors[0])
    assert cluster.create(cm("after"))["metadata"]["name"] == "after"


def test_work_queue_is_stingy_ordered_and_reports_its_limit_without_refusing() -> None:
    told: list[int] = []
    work = WorkQueue(limit=2, on_over_limit=told.append)
    work.add("a")
    work.add("b")
    work.add("a")  # already waiting: keeps its place
    work.add("c")  # past the limit: queued all the same, and told once
    work.add("d")
    assert told == [2] and work.high_water == 4
    assert [work.pop(), work.pop(), work.pop(), work.pop(), work.pop()] == ["a", "b", "c", "d", None]
    work.add("e")
    work.add("f")  # drained below half the limit in between: a new crossing is told again
    assert told == [2, 2]


def test_a_burst_of_creates_past_the_queue_limit_settles_with_every_pod_handled(
        caplog: pytest.LogCaptureFixture) -> None:
    """Writes nobody settles between (the in-process API's trusted path) queue one item per
    (controller, key): a second change to each pod adds nothing, and a burst past the
    queue's limit is neither refused nor dropped (it used to raise QueueFull in the write)."""
    cluster = Cluster(nodes=2)
    cluster.engine.queue.limit = 100
    pods = cluster.resource("v1", "Pod")
    trusted = WriteOptions(internal=True)
    burst = 60  # about eight controllers watch pods: ~480 distinct keys, past the limit
    for index in range(burst):
        cluster.api.create(pods, "default", {
            "metadata": {"name": f"p-{index}"},
            "spec": {"nodeName": f"node-{index % 2 + 1}", "containers": [{"name": "c", "image": "nginx"}]}}, trusted)
    distinct = len(cluster.engine.queue)
    assert distinct > cluster.engine.queue.limit
    for index in range(burst):  # a second change to every pod coalesces with the first
        cluster.api.patch(pods, "default", f"p-{index}", "application/merge-patch+json",
                          b'{"metadata": {"annotations": {"again": "yes"}}}', trusted)
    assert len(cluster.engine.queue) == distinct == cluster.engine.queue.high_water
    cluster.advance(5)
    phases = [p["status"].get("phase") for p in cluster.list("v1", "Pod")]
    assert phases == ["Running"] * burst
    assert not cluster.engine.errors and len(cluster.engine.queue) == 0
    assert "the work queue holds 100 distinct (controller, key) items" in caplog.text


class GcWatcher:
    """Records whether the cyclic collector was on during each of its reconciles."""

    name = "gc-watcher"
    resources = ()

    def __init__(self) -> None:
        self.seen: list[bool] = []

    def keys_for(self, change):  # pragma: no cover - watches nothing
        return []

    def reconcile(self, key, ctx) -> None:
        import gc
        self.seen.append(gc.isenabled())


def test_the_cyclic_gc_is_paused_during_an_advance_and_restored_after() -> None:
    import gc

    watcher = GcWatcher()
    cluster = Cluster()
    cluster.engine.register(watcher)
    cluster.engine.enqueue_at("gc-watcher", "tick", cluster.now + timedelta(seconds=5))
    assert gc.isenabled()
    cluster.advance(10)
    assert watcher.seen == [False] and gc.isenabled()
    gc.disable()
    try:
        cluster.engine.enqueue_at("gc-watcher", "tick", cluster.now + timedelta(seconds=5))
        cluster.advance(10)
        assert watcher.seen == [False, False] and not gc.isenabled()  # a process's own choice stands
    finally:
        gc.enable()


def test_the_cyclic_gc_is_paused_during_a_settle_and_restored_after() -> None:
    """A burst of creates settles as one long run of writes, like an advance (issue 22)."""
    import gc

    watcher = GcWatcher()
    cluster = Cluster()
    cluster.engine.register(watcher)
    cluster.engine.enqueue("gc-watcher", "now")
    assert gc.isenabled()
    cluster.settle()
    assert watcher.seen == [False] and gc.isenabled()


def test_a_reconcile_that_loses_a_race_with_a_client_is_retried_not_reported() -> None:
    class Racy:
        """Fails with a Conflict the first time, as when a client wrote between read and write."""

        name = "racy"
        resources = (CONFIGMAPS,)
        attempts = 0

        def keys_for(self, change):
            return key_of(change)

        def reconcile(self, key, ctx) -> None:
            Racy.attempts += 1
            if Racy.attempts == 1:
                raise ApiError(409, "Conflict", "the object has been modified")

    cluster = Cluster()
    cluster.engine.register(Racy())
    cluster.create(cm("raced"))
    assert Racy.attempts == 1  # retried after client-go's first back-off step, 5 ms
    cluster.advance(0.005)
    assert Racy.attempts == 2 and not cluster.internal_errors
    assert [(r.controller, r.key, r.code, r.delay_s) for r in cluster.engine.retries] == [
        ("racy", "default/raced", 409, 0.005)]


def test_a_timer_that_re_arms_at_the_instant_it_fires_is_caught() -> None:
    class Rearming:
        name = "rearming"
        resources = ()

        def keys_for(self, change):  # pragma: no cover - watches nothing
            return []

        def reconcile(self, key, ctx) -> None:
            ctx.requeue_after(0)  # due again at this very instant: time can never move on

    cluster = Cluster()
    cluster.engine.max_reconciles_per_key = 50
    cluster.engine.register(Rearming())
    cluster.engine.enqueue_at("rearming", "again", cluster.now + timedelta(seconds=1))
    with pytest.raises(EngineStuck, match="timers keep firing at 2025-01-01T00:00:01"):
        cluster.advance(5)


@dataclass
class Gate:
    """Holds its reconcile of ``gate`` until the test opens it."""

    name: str = "gate"
    resources: tuple = (CONFIGMAPS,)
    started: threading.Event = field(default_factory=threading.Event)
    opened: threading.Event = field(default_factory=threading.Event)
    done: list[str] = field(default_factory=list)

    def keys_for(self, change: Change) -> Iterable[str]:
        return key_of(change) if change.name == "gate" else []

    def reconcile(self, key: str, ctx: Context) -> None:
        self.started.set()
        assert self.opened.wait(30)
        self.done.append(key)


def test_a_settle_with_nothing_queued_still_waits_for_work_a_running_job_took() -> None:
    """A settle that finds the queue empty returns at once only when no job is running:
    work another caller's settle already took is still in progress, and must be done
    before this settle returns (a client sees its write's reactions on its next call)."""
    cluster = Cluster()
    gate = Gate()
    cluster.engine.register(gate)
    cluster.engine.start()
    try:
        cluster.store.create(CONFIGMAPS, cm("gate"))  # queued, not yet settled
        first = threading.Thread(target=cluster.engine.settle)
        first.start()
        assert gate.started.wait(30)  # the engine thread took the item: the queue is empty
        seen_at_return: list[list[str]] = []
        second = threading.Thread(target=lambda: (cluster.engine.settle(), seen_at_return.append(list(gate.done))))
        second.start()
        second.join(0.2)  # a settle that did not wait would be done by now
        gate.opened.set()
        second.join(30)
        first.join(30)
        assert seen_at_return == [["default/gate"]]
        assert cluster.engine.settle() == 0  # nothing queued, nothing running: returns at once
    finally:
        gate.opened.set()
        cluster.engine.stop()
