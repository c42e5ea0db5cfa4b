"""The controller runtime: reads, writes, timers, back-off, periodic work, random streams,
enable lists and the immutability guard — as a controller author relies on them."""

from __future__ import annotations

import ast
import pathlib
from datetime import timedelta
from typing import Iterable

import pytest

from fakekube import Cluster
from fakekube.api.machinery.errors import ApiError
from fakekube.engine import Context, ControllerSpec, enabled_controllers
from fakekube.engine.ratelimit import ControllerRateLimiter, RateLimits
from fakekube.objects.kinds import CONFIGMAPS, PODS
from fakekube.random import SeededRandom
from fakekube.store import Change
from fakekube.store.frozen import StoredObjectMutated

ROOT = pathlib.Path(__file__).resolve().parents[2]


def cm(name: str, **data: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}, "data": data}


def seconds(cluster: Cluster) -> float:
    return round((cluster.now - cluster.config.start_time).total_seconds(), 6)


class Refused:
    """Fails with ``code`` on its first ``failures`` attempts, recording when each ran."""

    resources = (CONFIGMAPS,)

    def __init__(self, cluster: Cluster, code: int, failures: int, name: str = "refused") -> None:
        self.name, self.cluster, self.code, self.failures = name, cluster, code, failures
        self.attempts: list[float] = []

    def keys_for(self, change: Change) -> Iterable[str]:
        return [f"{change.namespace}/{change.name}"] if change.name.startswith("try") else []

    def reconcile(self, key: str, ctx: Context) -> None:
        self.attempts.append(seconds(self.cluster))
        if len(self.attempts) <= self.failures:
            raise ApiError(self.code, "Forbidden" if self.code == 403 else "Invalid", "refused")


@pytest.mark.parametrize("code", [403, 422, 429])
def test_an_expected_api_error_is_retried_with_client_go_back_off_not_reported(code: int) -> None:
    cluster = Cluster()
    refused = Refused(cluster, code, failures=4)
    cluster.engine.register(refused)
    cluster.create(cm("try-1"))
    cluster.advance(1)
    # 5 ms doubling: retries at +5, +10, +20, +40 ms after each failure.
    assert refused.attempts == [0.0, 0.005, 0.015, 0.035, 0.075]
    assert not cluster.internal_errors
    assert [(r.code, r.delay_s) for r in cluster.engine.retries] == [(code, 0.005), (code, 0.01), (code, 0.02),
                                                                     (code, 0.04)]


def test_a_success_forgets_the_failures_so_the_next_failure_starts_at_5_ms_again() -> None:
    cluster = Cluster()
    refused = Refused(cluster, 422, failures=2)
    cluster.engine.register(refused)
    cluster.create(cm("try-1"))
    cluster.advance(1)
    assert refused.attempts == [0.0, 0.005, 0.015]  # the third attempt succeeded
    refused.failures = 4  # the next attempt of the same key fails once more
    cluster.api.update(cluster.resource("v1", "ConfigMap"), "default", "try-1", cm("try-1", k="v"))
    cluster.advance(1)
    assert refused.attempts[3:] == [1.0, 1.005]  # 5 ms again, not the 20 ms a fourth failure in a row waits


def test_a_server_error_or_an_exception_is_a_crash_reported_with_controller_and_key() -> None:
    cluster = Cluster()
    cluster.engine.register(Refused(cluster, 500, failures=1))
    cluster.create(cm("try-500"))
    cluster.advance(1)
    [error] = cluster.engine.errors
    assert str(error).startswith("refused reconciling 'default/try-500' at 2025-01-01T00:00:00+00:00")
    assert isinstance(error.error, ApiError) and error.error.code == 500 and not cluster.engine.retries


def test_the_rate_limiter_is_client_go_default_max_of_exponential_and_bucket() -> None:
    limiter = ControllerRateLimiter(RateLimits())
    assert [limiter.when("a", 0.0) for _ in range(3)] == [0.005, 0.01, 0.02]
    assert [limiter.when("b", 0.0) for _ in range(2)] == [0.005, 0.01]  # per item
    limiter.forget("a")
    assert limiter.when("a", 0.0) == 0.005
    # The shared bucket: 100 tokens, then 10 a second (the 106th retry at one instant waits 0.6 s).
    bucket = ControllerRateLimiter(RateLimits())
    delays = [bucket.when(f"k{i}", 0.0) for i in range(106)]
    assert delays[99] == 0.005 and delays[100] == pytest.approx(0.1) and delays[105] == pytest.approx(0.6)
    capped = ControllerRateLimiter(RateLimits(max_delay_s=1.0))
    assert max(capped.when("x", 0.0) for _ in range(20)) == 1.0


class Sleeper:
    """Asks for timers and records when it is reconciled."""

    name = "sleeper"
    resources = ()

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.runs: list[tuple[str, float]] = []

    def keys_for(self, change: Change) -> Iterable[str]:  # pragma: no cover - watches nothing
        return ()

    def reconcile(self, key: str, ctx: Context) -> None:
        self.runs.append((key, seconds(self.cluster)))
        if key == "start":
            ctx.enqueue_after("wake", 20)
            ctx.enqueue_after("wake", 10)  # earlier: wins
            ctx.enqueue_after("wake", 30)  # later than the armed 10 s: ignored
            ctx.enqueue_after("dropped", 5)
            ctx.cancel("dropped")


def test_one_timer_per_key_the_earliest_wins_and_cancel_drops_it() -> None:
    cluster = Cluster()
    sleeper = Sleeper(cluster)
    cluster.engine.register(sleeper)
    cluster.engine.enqueue("sleeper", "start")
    cluster.advance(60)
    assert sleeper.runs == [("start", 0.0), ("wake", 10.0)]


class Periodic:
    name = "periodic"
    resources = ()

    def __init__(self, cluster: Cluster, period_s: float) -> None:
        self.cluster = cluster
        self.periodic = (("tick", period_s),)
        self.ticks: list[float] = []

    def keys_for(self, change: Change) -> Iterable[str]:  # pragma: no cover - watches nothing
        return ()

    def reconcile(self, key: str, ctx: Context) -> None:
        self.ticks.append(seconds(self.cluster))


def test_periodic_work_runs_from_the_controller_start_every_period() -> None:
    cluster = Cluster()
    cluster.advance(3)
    periodic = Periodic(cluster, 10)
    cluster.engine.register(periodic)
    cluster.advance(25)
    assert periodic.ticks == [3.0, 13.0, 23.0]


def test_reads_by_owner_uid_and_by_index_cost_the_matching_objects() -> None:
    cluster = Cluster(nodes=1, controllers=("*", "-garbagecollector"))  # its owners are made up
    owner = cluster.create(cm("owner"))
    uid = owner["metadata"]["uid"]
    for name, refs in (("a", [uid]), ("b", []), ("c", ["other", uid])):
        obj = cm(name)
        obj["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": u}
                                              for u in refs]
        cluster.create(obj)
    seen: dict[str, list[str]] = {}

    class Reader:
        name = "reader"
        resources = ()

        def keys_for(self, change: Change) -> Iterable[str]:  # pragma: no cover
            return ()

        def reconcile(self, key: str, ctx: Context) -> None:
            seen["owned"] = [o["metadata"]["name"] for o in ctx.owned_by(CONFIGMAPS, uid)]
            seen["namespaces"] = [o["metadata"]["name"] for o in ctx.list(CONFIGMAPS, "kube-system")]
            seen["on node"] = [o["metadata"]["name"] for o in ctx.by_index(PODS, "spec.nodeName", "node-1")]

    cluster.engine.register(Reader())
    cluster.engine.enqueue("reader", "now")
    cluster.settle()
    assert seen["owned"] == ["a", "c"]
    assert seen["on node"] == []


def test_a_controller_may_not_register_for_a_resource_the_apiserver_does_not_serve() -> None:
    class Typo:
        name = "typo"
        resources = (("apps", "deploymentz"),)

        def keys_for(self, change: Change) -> Iterable[str]:  # pragma: no cover
            return ()

        def reconcile(self, key: str, ctx: Context) -> None:  # pragma: no cover
            pass

    with pytest.raises(LookupError, match="deploymentz.apps"):
        Cluster().engine.register(Typo())


# -- random streams ---------------------------------------------------------------------------

def test_a_forked_stream_depends_on_the_seed_and_label_only() -> None:
    parent = SeededRandom(7)
    first = parent.fork("controller/x").uid()
    parent.uid()
    parent.fork("controller/y")
    assert SeededRandom(7).fork("controller/x").uid() == first == parent.fork("controller/x").uid()
    assert SeededRandom(8).fork("controller/x").uid() != first


def _container_ids(controllers: tuple[str, ...], extra: bool) -> list[str]:
    """Run pods on a node and return their containers' IDs (drawn from the kubelet's stream)."""
    cluster = Cluster(nodes=1, seed=3, controllers=controllers)
    if extra:
        cluster.engine.register(Greedy())
    if "-serviceaccount" in controllers:  # pods need their account (ServiceAccount admission)
        cluster.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default",
                                                                                   "namespace": "default"}})
    for index in range(3):
        cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{index}", "namespace": "default"},
                        "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx"}]}})
    cluster.advance(30)
    pods = cluster.list("v1", "Pod", "default")
    return [p["status"]["containerStatuses"][0]["containerID"] for p in pods]


class Greedy:
    """A new controller that draws heavily from its own stream on every pod change."""

    name = "greedy"
    resources = (PODS,)

    def keys_for(self, change: Change) -> Iterable[str]:
        return ["all"]

    def reconcile(self, key: str, ctx: Context) -> None:
        for _ in range(100):
            ctx.rng.uid()


def test_registering_another_controller_changes_no_other_controller_identifiers() -> None:
    baseline = _container_ids(("*",), extra=False)
    assert len(set(baseline)) == 3
    assert _container_ids(("*",), extra=True) == baseline
    assert _container_ids(("*", "-podgc", "-serviceaccount"), extra=False) == baseline


# -- enable lists -----------------------------------------------------------------------------

def test_enable_lists_follow_kube_controller_manager() -> None:
    specs = [ControllerSpec("a-controller", lambda c: None, ("a",)), ControllerSpec("b-controller", lambda c: None),
             ControllerSpec("off-controller", lambda c: None, enabled_by_default=False)]

    def names(words: tuple[str, ...]) -> list[str]:
        return [s.name for s in enabled_controllers(specs, words)]

    assert names(("*",)) == ["a-controller", "b-controller"]
    assert names(("*", "-a")) == ["b-controller"]
    assert names(("*", "off-controller")) == ["a-controller", "b-controller", "off-controller"]
    assert names(("b-controller",)) == ["b-controller"]
    assert names(()) == []
    with pytest.raises(ValueError, match='"nope" is not in the list of known controllers'):
        names(("*", "-nope"))


def test_a_cluster_runs_the_controllers_its_enable_list_names() -> None:
    # A subset: every helper adding a controller would otherwise edit this one list.
    assert {"node-ipam-controller", "node-lifecycle-controller", "pod-garbage-collector-controller",
            "replicaset-controller", "replicationcontroller-controller", "serviceaccount-controller",
            "taint-eviction-controller"} <= set(Cluster().controllers)
    cluster = Cluster(controllers=("*", "-serviceaccount"))
    assert "serviceaccount-controller" not in cluster.controllers
    cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "quiet"}})
    assert cluster.list("v1", "ServiceAccount", "quiet") == []
    with pytest.raises(ValueError):
        Cluster(controllers=("replicaset-controlr",))


# -- the immutability guard -------------------------------------------------------------------

class Mutator:
    """Edits a stored object in place: the bug the guard exists to catch."""

    name = "mutator"
    resources = (CONFIGMAPS,)

    def keys_for(self, change: Change) -> Iterable[str]:
        return [f"{change.namespace}/{change.name}"] if change.name == "victim" else []

    def reconcile(self, key: str, ctx: Context) -> None:
        stored = ctx.get(CONFIGMAPS, "victim", "default")
        assert stored is not None
        stored["data"]["k"] = "changed"


def test_the_guard_catches_a_controller_editing_a_stored_object_naming_controller_and_key() -> None:
    cluster = Cluster(immutability_guard=True)
    cluster.engine.register(Mutator())
    cluster.create(cm("victim", k="v"))
    [error] = cluster.engine.errors
    assert isinstance(error.error, StoredObjectMutated)
    assert "mutator reconciling 'default/victim'" in str(error)
    assert "configmaps" in str(error.error) and "default/victim" in str(error.error)
    assert cluster.get("v1", "ConfigMap", "victim")["data"] == {"k": "v"}


# -- controllers use only the runtime ---------------------------------------------------------

FORBIDDEN = ("ctx.api", ".store.", "engine.queue", "registry.lookup", "call_later", "call_at")


@pytest.mark.parametrize("part", ["controllers", "kubelet"])
def test_controllers_and_kubelets_talk_to_the_cluster_only_through_the_runtime(part: str) -> None:
    offenders = []
    for path in sorted((ROOT / "fakekube" / part).rglob("*.py")):
        source = path.read_text()
        code = ast.unparse(ast.parse(source))  # comments and docstrings' prose do not count
        for word in FORBIDDEN:
            if word in code:
                offenders.append(f"{path.relative_to(ROOT)}: {word}")
    assert offenders == []


def test_a_view_is_a_live_read_only_mapping_for_hot_loops() -> None:
    cluster = Cluster()
    seen: dict[str, object] = {}

    class Viewer:
        name = "viewer"
        resources = ()

        def keys_for(self, change: Change) -> Iterable[str]:  # pragma: no cover
            return ()

        def reconcile(self, key: str, ctx: Context) -> None:
            view = ctx.view(CONFIGMAPS)
            seen["before"] = view.get(("default", "late"))
            ctx.client.create(CONFIGMAPS, cm("late", k="v"))
            seen["after"] = view[("default", "late")]["data"]
            with pytest.raises(TypeError):
                view[("default", "x")] = {}  # type: ignore[index]

    cluster.engine.register(Viewer())
    cluster.engine.enqueue("viewer", "now")
    cluster.settle()
    assert seen == {"before": None, "after": {"k": "v"}}


def test_the_periodic_controllers_with_a_quiet_hook_are_asked() -> None:
    """The node lifecycle monitor, pod GC and the PV binder's resync declare ``quiet``
    (engine.QuietPeriodic): a misspelt hook would silently never be asked."""
    from fakekube.controllers.nodelifecycle.controller import NodeLifecycleController
    from fakekube.controllers.podgc import PodGCController
    from fakekube.controllers.volume.binder import PersistentVolumeBinder
    from fakekube.engine.controller import QuietPeriodic

    for controller in (NodeLifecycleController(), PodGCController(), PersistentVolumeBinder()):
        assert isinstance(controller, QuietPeriodic), controller.name
        assert controller.periodic, controller.name
