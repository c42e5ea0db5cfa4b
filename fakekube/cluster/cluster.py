"""The Cluster: one object that wires clock, randomness, store, apiserver and server.

``Cluster`` is the public Python API (DESIGN.md part 7). It starts in milliseconds, can
be reset to its initial state instantly (so a pytest fixture can hand every test a
clean cluster without rebuilding it), and exposes the URL, a kubeconfig file and a
configured official client.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Callable

from fakekube.api import schema
from fakekube.api.apiserver import APIServer, WriteOptions
from fakekube.api.deletion import DeleteOptions
from fakekube.api.errors import ApiError
from fakekube.api.http import BackgroundServer, RestApp
from fakekube.api.jsonutil import deep_copy
from fakekube.api.listing import ListOptions
from fakekube.api.registry import Registry, ResourceType
from fakekube.api.resources import builtin_registry
from fakekube.clock import DEFAULT_EPOCH, VirtualClock
from fakekube.cluster import bootstrap
from fakekube.cluster.kubeconfig import write_kubeconfig
from fakekube.engine import Engine
from fakekube.engine.scaled import ScaledTime
from fakekube.kubelet.behaviour import BehaviourCatalog
from fakekube.kubelet.heartbeat import NodeHeartbeats
from fakekube.kubelet.logs import PodLogOptions
from fakekube.kubelet.pods import PodRunner
from fakekube.controllers.nodelifecycle.config import NodeLifecycleConfig
from fakekube.controllers.nodelifecycle.controller import NodeLifecycleController
from fakekube.controllers.nodelifecycle.tolerations import default_tolerations
from fakekube.controllers.podgc import PodGCController
from fakekube.controllers.tainteviction import TaintEvictionController
from fakekube.random import SeededRandom
from fakekube.store import DEFAULT_HISTORY_LIMIT, Store

Obj = dict[str, Any]


@dataclass(frozen=True)
class ClusterConfig:
    """Everything that decides a cluster's behaviour. Same config + same calls = same cluster."""

    seed: int = 0
    nodes: int = 0
    host: str = "127.0.0.1"
    port: int = 0
    kubeconfig_path: str | None = None
    kubernetes_version: str = schema.DEFAULT_KUBERNETES_VERSION
    patch_version: int = 0
    history_limit: int = DEFAULT_HISTORY_LIMIT
    start_time: datetime = DEFAULT_EPOCH
    max_body_bytes: int = 3 * 1024 * 1024
    node_lifecycle: NodeLifecycleConfig = field(default_factory=NodeLifecycleConfig)
    #: 0: manual time (moves only when told). k > 0: cluster time runs k × wall time.
    time_scale: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def kubelet_version(self) -> str:
        return f"v{self.kubernetes_version}.{self.patch_version}"


class Cluster:
    """A fake Kubernetes cluster in this process. Use as a context manager or start/stop."""

    def __init__(self, config: ClusterConfig | None = None, **overrides: Any) -> None:
        self.config = replace(config or ClusterConfig(), **overrides)
        self.registry: Registry = builtin_registry()
        self._time_observers: list[Callable[[datetime], None]] = []
        self._build_state()
        self._app = RestApp(self.api, max_body_bytes=self.config.max_body_bytes, after_write=self.settle)
        self._server: BackgroundServer | None = None
        self.scaled_time: ScaledTime | None = None
        self._tempdir: str | None = None
        self._kubeconfig: Path | None = None

    def _build_state(self) -> None:
        """Fresh clock, randomness and store, populated with the initial content."""
        self.clock = VirtualClock(self.config.start_time)
        for observer in self._time_observers:
            self.clock.add_observer(observer)
        self.rng = SeededRandom(self.config.seed)
        self.store = Store(self.config.history_limit)
        self.api = APIServer(self.registry, self.store, self.clock, self.rng, self.config.kubernetes_version)
        self.engine = Engine(self.store, self.clock, self.api, self.rng.fork("engine"))
        self.heartbeats = NodeHeartbeats()
        self.node_lifecycle = NodeLifecycleController(self.config.node_lifecycle)
        self.pods = PodRunner(BehaviourCatalog(), node_is_up=self.heartbeats.reaches_apiserver)
        for controller in (self.heartbeats, self.node_lifecycle, TaintEvictionController(), PodGCController(),
                           self.pods):
            self.engine.register(controller)
        self.api.mutating_admission.append(self._default_toleration_seconds)
        self.api.pod_logs = self._pod_logs
        bootstrap.populate(self.api, self.config.nodes, self.config.kubelet_version)
        self.engine.settle()  # the engine thread is not running yet: this runs here

    # -- lifecycle -----------------------------------------------------------
    def start(self) -> "Cluster":
        if self._server is None:
            self.engine.start()
            self._server = BackgroundServer(self._app, self.config.host, self.config.port)
            self._server.start()
            self._start_scaled_time()
            self._kubeconfig = self._write_kubeconfig()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._stop_scaled_time()
        self._app.stopping.set()
        self.store.close()
        self._server.stop()
        self._server = None
        self.engine.stop()
        if self._tempdir:
            shutil.rmtree(self._tempdir, ignore_errors=True)
            self._tempdir = None

    def _start_scaled_time(self) -> None:
        if self.config.time_scale > 0:
            self.scaled_time = ScaledTime(self.engine, self.config.time_scale)
            self.scaled_time.start()

    def _stop_scaled_time(self) -> None:
        if self.scaled_time is not None:
            self.scaled_time.stop()
            self.scaled_time = None

    def __enter__(self) -> "Cluster":
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def reset(self) -> None:
        """Back to the initial state, as if just created with the same config: ends open watches."""
        old_store, old_engine = self.store, self.engine
        running = self._server is not None
        self._stop_scaled_time()
        old_engine.stop()
        self._build_state()
        if running:
            self.engine.start()
            self._start_scaled_time()
        self._app.rebind(self.api)
        old_store.close()

    # -- time -----------------------------------------------------------------
    @property
    def now(self) -> datetime:
        """Cluster time (virtual): every timestamp the cluster writes comes from it."""
        return self.clock.now()

    def advance(self, seconds: float | timedelta) -> datetime:
        """Move cluster time forward, running every timer and reaction due on the way."""
        if isinstance(seconds, timedelta):
            seconds = seconds.total_seconds()
        return self.engine.advance(seconds)

    def observe_time(self, observer: Callable[[datetime], None]) -> Callable[[], None]:
        """Call ``observer(now)`` whenever cluster time moves, across resets; returns an undo."""
        self._time_observers.append(observer)
        self.clock.add_observer(observer)

        def undo() -> None:
            if observer in self._time_observers:
                self._time_observers.remove(observer)
            self.clock.remove_observer(observer)
        return undo

    def settle(self) -> int:
        """Run every reaction due at the current instant; returns how many reconciles ran."""
        return self.engine.settle()

    def _default_toleration_seconds(self, rt: ResourceType, obj: Obj, now: datetime) -> None:
        """DefaultTolerationSeconds admission: pods tolerate not-ready/unreachable 300 s."""
        if rt.key == ("", "pods"):
            added = default_tolerations(obj, self.config.node_lifecycle)
            if added:
                spec = obj.setdefault("spec", {})
                spec["tolerations"] = list(spec.get("tolerations") or []) + added

    def _pod_logs(self, namespace: str, name: str, container: str | None, query: dict[str, str]) -> bytes:
        """pods/log from the pod's simulated kubelet (read on the engine thread: a still state)."""
        try:
            options = PodLogOptions.from_query(query)
            return self.engine.run(lambda: self.pods.logs(namespace, name, container, options, self.now))
        except LookupError:
            return b""  # not run by a simulated kubelet (unscheduled, or its node is down)
        except ValueError as exc:
            raise ApiError(400, "BadRequest", str(exc)) from None

    # -- node faults ------------------------------------------------------------
    def fail_node(self, name: str) -> None:
        """The node's kubelet stops: no more Lease renewals or status reports."""
        self._require_node(name)
        self._on_engine(lambda: self.heartbeats.stop(name))

    def recover_node(self, name: str) -> None:
        """The node's kubelet is back: heartbeats resume at once."""
        self._kubelet_back(name, lambda: self.heartbeats.resume(name, self.engine))

    def partition_node(self, name: str) -> None:
        """The node loses its connection to the apiserver: its kubelet keeps running its pods
        but writes nothing (no Lease, status or pod status) until healed."""
        self._require_node(name)
        self._on_engine(lambda: self.heartbeats.partition(name))

    def heal_node(self, name: str) -> None:
        """The partition ends: the kubelet reports at once and its pods catch up."""
        self._kubelet_back(name, lambda: self.heartbeats.heal(name, self.engine))

    def restart_kubelet(self, name: str) -> None:
        """The kubelet process restarts (its containers keep running): it posts its Lease and
        status at once and its heartbeat cadence starts again from now."""
        self._kubelet_back(name, lambda: self.heartbeats.restart(name, self.engine))

    def set_node_condition(self, name: str, condition_type: str, status: str, reason: str = "",
                           message: str = "") -> None:
        """The node's kubelet detects a condition (e.g. MemoryPressure True) and reports it at its
        next 10 s status check; the node lifecycle controller then taints the node."""
        self._require_node(name)
        self._on_engine(lambda: self.heartbeats.set_condition(name, condition_type, status, reason, message))

    def clear_node_condition(self, name: str, condition_type: str) -> None:
        """The kubelet reports ``condition_type`` as healthy again (at its next status check)."""
        self._require_node(name)
        self._on_engine(lambda: self.heartbeats.clear_condition(name, condition_type))

    def kubelet_state(self, name: str) -> dict[str, Any]:
        """The node's simulated kubelet: ``{"heartbeats": "running"|"stopped"|"partitioned",
        "conditions": {type: {"status", "reason", "message"}}}`` (what it reports)."""
        self._require_node(name)
        return self._on_engine(lambda: self.heartbeats.state(name))

    def _kubelet_back(self, name: str, fault_ends: Callable[[], None]) -> None:
        self._require_node(name)
        self._on_engine(fault_ends)
        self._on_engine(lambda: self.pods.resync_node(name, self.engine))
        self.settle()

    def _require_node(self, name: str) -> None:
        if self.store.get(("", "nodes"), ("", name)) is None:
            raise KeyError(f"no node {name!r}")

    def _on_engine(self, work: Callable[[], Any]) -> Any:
        return self.engine.run(work)

    # -- where to reach it ---------------------------------------------------
    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the cluster is not started: use `with Cluster() as c:` or c.start()")
        return self._server.url

    @property
    def kubeconfig(self) -> str:
        """Path of a kubeconfig file for this cluster (written when it starts)."""
        if self._kubeconfig is None:
            raise RuntimeError("the cluster is not started")
        return str(self._kubeconfig)

    def _write_kubeconfig(self) -> Path:
        if self.config.kubeconfig_path:
            path = Path(self.config.kubeconfig_path)
        else:
            self._tempdir = tempfile.mkdtemp(prefix="fakekube-")
            path = Path(self._tempdir) / "kubeconfig"
        return write_kubeconfig(path, self.url)

    def client(self) -> Any:
        """A ``kubernetes.client.ApiClient`` for this cluster (needs the ``kubernetes`` package)."""
        try:
            from kubernetes import client
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise RuntimeError("Cluster.client() needs the `kubernetes` package: pip install kubernetes") from exc
        configuration = client.Configuration()
        configuration.host = self.url
        configuration.api_key = {"authorization": "Bearer fakekube"}
        return client.ApiClient(configuration)

    def mount(self, app: Callable) -> None:
        """Serve ``app`` (WSGI) under ``/fakekube/``: how the control API attaches itself
        (it is a layer above the cluster, so the cluster does not import it)."""
        self._app.fallback = app

    @property
    def internal_errors(self) -> list[BaseException]:
        """Unexpected exceptions: server 500s, engine loops, controller crashes (a fixture re-raises them)."""
        return self._app.internal_errors + [e.error for e in self.engine.errors]

    # -- Python API: objects as dicts, copied in and out -----------------------
    def resource(self, api_version: str, kind: str) -> ResourceType:
        rt = self.registry.by_kind(api_version, kind)
        if rt is None:
            raise KeyError(f"unknown kind {kind} in {api_version}")
        return rt

    def create(self, obj: Obj) -> Obj:
        rt = self.resource(obj["apiVersion"], obj["kind"])
        namespace = (obj.get("metadata") or {}).get("namespace") or ("default" if rt.namespaced else "")
        created = deep_copy(self.api.create(rt, namespace, deep_copy(obj), WriteOptions()).obj)
        self.settle()
        return created

    def get(self, api_version: str, kind: str, name: str, namespace: str = "default") -> Obj:
        return deep_copy(self.api.get(self.resource(api_version, kind), namespace, name))

    def list(self, api_version: str, kind: str, namespace: str = "", label_selector: str = "",
             field_selector: str = "") -> list[Obj]:
        rt = self.resource(api_version, kind)
        options = ListOptions(label_selector=label_selector, field_selector=field_selector)
        items = self.api.list(rt, namespace, options)["items"]
        return [deep_copy({"apiVersion": rt.api_version, "kind": rt.kind, **item}) for item in items]

    def delete(self, api_version: str, kind: str, name: str, namespace: str = "default") -> None:
        self.api.delete(self.resource(api_version, kind), namespace, name, DeleteOptions())
        self.settle()
