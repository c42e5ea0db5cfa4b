"""The Cluster: one object that wires clock, randomness, store, apiserver and server.

``Cluster`` is the public Python API (DESIGN.md part 7). It starts in milliseconds, can
be reset to its initial state instantly (so a pytest fixture can hand every test a
clean cluster without rebuilding it), and exposes the URL, a kubeconfig file and a
configured official client.
"""

from __future__ import annotations

import builtins
import threading
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Generic, Sequence, TypeVar, overload

from fakekube.api.auth.authn import Authenticator, parse_token_file
from fakekube.api.auth.authorizer import RBAC, parse_mode
from fakekube.api.auth.identity import ADMIN_TOKEN, UserInfo
from fakekube.api.verbs.apiserver import APIServer, WriteOptions
from fakekube.api.verbs.fieldmanager import APISERVER_MANAGER
from fakekube.api.verbs.deletion import DeleteOptions
from fakekube.api.machinery.errors import ApiError
from fakekube.api.machinery.jsonutil import deep_copy
from fakekube.api.verbs.listing import ListOptions
from fakekube.api.registry import Registry, ResourceType
from fakekube.api.types import ServiceNetwork, builtin_registry
from fakekube.clock import VirtualClock
from fakekube.cluster import checks, objectverbs, waiting
from fakekube.cluster import snapshot as snapshots
from fakekube.cluster.config import ClusterConfig
from fakekube.cluster.kubeconfig import write_kubeconfig
from fakekube.cluster.objectverbs import ExecResult
from fakekube.cluster.waiting import Condition
from fakekube.cluster.system import SystemPlan, boot_start
from fakekube.cluster.system.kubeadm import ADMIN_USER, CLUSTER_ADMINS_GROUP
from fakekube.engine import Engine, enabled_controllers
from fakekube.engine.events import list_events
from fakekube.kubelet.logs import PodLogOptions
from fakekube.kubelet.logstream import LogStreams, TooManyStreams
from fakekube.kubelet.staticpods import StaticPodManifest, build_manifests
from fakekube.objects.kinds import NODES, PODS
from fakekube.random import SeededRandom
from fakekube.store import Store

# What only building, reports, the demo or the clock modes use is imported where it is
# used: a boot restored for ``serve`` answers its first request without them.
if TYPE_CHECKING:
    from fakekube.cluster.snapshot import Snapshot
    from fakekube.engine.autoadvance import AutoAdvance
    from fakekube.engine.scaled import ScaledTime
    from fakekube.engine.ticker import Ticker
    from fakekube.engine.tickets import Ticket
    from fakekube.kubelet.agents import Kubelets
    from fakekube.scheduler import Scheduler
    from fakekube.api.http import BackgroundServer, RestApp
    from fakekube.api.http.activity import ActivityMeter
    from fakekube.cluster.pki import ClusterPKI, KeyPair

Obj = dict[str, Any]


#: The config fields ``Cluster.load`` may set otherwise than the file: not state (where the
#: cluster listens and writes its kubeconfig, how its time flows).
LOAD_OVERRIDES = ("host", "port", "kubeconfig_path", "time_scale", "auto_advance")

_Part = TypeVar("_Part")


class _EngineSide(Generic[_Part]):
    """A Cluster attribute of the engine's side (the engine, controllers, scheduler, kubelets):
    after a phased load (``Cluster.load(..., phased=True)``) reading it waits until the second
    phase has put that side in place — and started it, when the cluster serves — so nothing
    ever sees a cluster without its engine (docs/snapshots.md "Phased boot")."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._slot = "_" + name

    @overload
    def __get__(self, cluster: None, owner: type) -> "_EngineSide[_Part]": ...

    @overload
    def __get__(self, cluster: "Cluster", owner: type) -> _Part: ...

    def __get__(self, cluster: "Cluster | None", owner: type) -> Any:
        if cluster is None:
            return self
        if cluster._later is not None:
            cluster._complete_load()
        try:
            return cluster.__dict__[self._slot]
        except KeyError:  # not built yet: as a plain attribute would say
            raise AttributeError(f"'Cluster' object has no attribute {self._slot[1:]!r}") from None

    def __set__(self, cluster: "Cluster", value: _Part) -> None:
        cluster.__dict__[self._slot] = value


class _LaterHalf:
    """A phased load's second phase, run once: by the thread ``start`` begins, or by whoever
    needs the engine's side first (the others wait on the lock)."""

    def __init__(self, rest: Callable[[], dict[str, Any]]) -> None:
        self.rest = rest
        self.lock = threading.RLock()
        self.running = False
        self.error: BaseException | None = None


class Cluster:
    """A fake Kubernetes cluster in this process. Use as a context manager or start/stop."""

    engine: _EngineSide[Engine] = _EngineSide()
    #: The enabled controllers by name (kube-controller-manager's, see cluster/wiring.py).
    controllers: _EngineSide[dict[str, Any]] = _EngineSide()
    #: kube-scheduler (None when the config turns it off: pods then wait for a binding).
    scheduler: _EngineSide[Scheduler | None] = _EngineSide()
    kubelets: _EngineSide[Kubelets] = _EngineSide()

    def __init__(self, config: ClusterConfig | None = None, **overrides: Any) -> None:
        self._configure(config, overrides)
        self._configure_controllers()
        self._init_serving()
        self._time_observers.append(self.log_streams.wake)
        self._fresh_state()

    def _configure(self, config: ClusterConfig | None, overrides: dict[str, Any]) -> None:
        """What a cluster keeps across resets and restores: its config and what derives from
        it (ValueError for a config that cannot make a cluster)."""
        self.config = (config or ClusterConfig()).replace(**overrides)  # a misspelt name: did you mean ...?
        self.config = self.config.replace(authorization_mode=parse_mode(self.config.authorization_mode))  # ValueError
        self.service_network = ServiceNetwork(self.config.service_cidr, self.config.service_node_port_range)
        self.registry: Registry = builtin_registry(self.service_network, metrics_server=bool(self.config.metrics_server),
                                                   release=self.config.release)
        self._time_observers: list[Callable[[datetime], None]] = []
        #: The nodes and system objects a new cluster gets (fakekube/cluster/system/).
        self._plan = SystemPlan.for_config(self.config)
        self._static_manifests = _static_manifests(self.config, self._plan)
        self._static_tokens = _static_tokens(self.config)  # ValueError: an unreadable token file

    def _configure_controllers(self) -> None:
        """The enabled controllers' specs (ValueError: an unknown name, or a cluster CIDR that
        cannot fit the nodes). Apart from ``_configure``: importing every controller is the
        engine's side's cost, which a phased load pays in its second phase."""
        from fakekube.cluster.wiring import CONTROLLERS
        from fakekube.controllers.nodeipam import NodeIPAMController, check_node_room
        self._controller_specs = enabled_controllers(CONTROLLERS, self.config.controllers)  # ValueError: unknown name
        if any(spec.name == NodeIPAMController.name for spec in self._controller_specs):
            check_node_room(self.config.cluster_cidr, self.config.node_cidr_mask_size, self.config.service_cidr,
                            len(self._plan.nodes))  # ValueError: the cluster CIDR cannot fit the nodes

    def _init_serving(self) -> None:
        """The parts that serve the state (built lazily) and the log streams."""
        #: The REST layer (and its activity meter), built at the first start: it loads
        #: werkzeug, which a cluster used in-process only never needs.
        self._app: RestApp | None = None
        self._activity: ActivityMeter | None = None
        self._mounted: Callable | None = None
        #: Unexpected exceptions from serving requests (the REST layer appends to this list).
        self._serving_errors: list[BaseException] = []
        self.log_streams = LogStreams()  # pods/log follow streams, woken whenever cluster time moves
        self._server: BackgroundServer | None = None
        self.scaled_time: ScaledTime | None = None
        self.auto_advance: AutoAdvance | None = None
        self._tempdir: str | None = None
        self._kubeconfig: Path | None = None
        #: The cluster CA and what it signs, when TLS is on (made at start).
        self.pki: ClusterPKI | None = None
        #: A phased load's second phase while it has not run (see :meth:`load`).
        self._later: _LaterHalf | None = None

    @classmethod
    def load(cls, path: str | Path, kubernetes_version: str | None = None, *, phased: bool = False,
             **runtime: Any) -> "Cluster":
        """The cluster a snapshot file holds (``save``), continuing exactly as the saved one
        would, built with the config saved in it — but for ``runtime``, the config fields
        that are not state (where it listens, how time flows: ``LOAD_OVERRIDES``). Refuses
        (``SnapshotFileError``, a ValueError, with the reason) a file another fakekube
        version or Kubernetes version (``kubernetes_version`` when given) wrote, and a
        truncated, garbled or hostile one: a file from anywhere cannot run code
        (docs/snapshots.md).

        ``phased``: decode only the apiserver's side now (store, registry, clock, apiserver);
        the engine's side (engine, controllers, scheduler, kubelets) is decoded by a thread
        ``start`` begins once the server listens, or by whoever needs it first — anything
        that reads it waits until it is in place (``serve``'s boot cache: docs/snapshots.md
        "Phased boot"). A garbled engine side then shows when it is needed."""
        from fakekube.cluster import snapfile
        unknown = sorted(set(runtime) - set(LOAD_OVERRIDES))
        if unknown:
            raise TypeError(f"Cluster.load cannot change {', '.join(unknown)}: the file holds the cluster's config "
                            f"(only {', '.join(LOAD_OVERRIDES)} may differ)")
        document, config = snapfile.read_config(path, kubernetes_version)
        config = config.replace(**runtime)
        cluster = cls.__new__(cls)
        cluster._configure(config, {})
        cluster._init_serving()
        cluster._time_observers.append(cluster.log_streams.wake)
        if not phased:
            cluster._configure_controllers()
            cluster._install_state(snapfile.read_state(document, cluster))
            return cluster
        serving, decoder, rest = snapfile.read_state_phased(document, cluster)
        cluster._install_state(serving)
        cluster._later = _LaterHalf(rest)
        decoder.complete = cluster._complete_load
        return cluster

    def _complete_load(self) -> None:
        """Run a phased load's second phase (once; other threads wait for it): put the engine's
        side in place and, when serving, start it and the clock modes — all before anyone
        else reads it. A failure is kept and raised to every later reader."""
        later = self._later
        if later is None:
            return
        with later.lock:
            if later.error is not None:
                raise RuntimeError(f"the cluster's engine side could not be loaded: {later.error}") from later.error
            if later.running or self._later is None:
                return  # done meanwhile, or this thread is installing it (a read on the way)
            later.running = True
            try:
                self._configure_controllers()
                self._install_state({part: value for part, value in later.rest().items()
                                     if part not in snapshots.SERVING_PARTS})
                if self._server is not None:
                    self.engine.start()
                    self._start_clock_modes()
            except BaseException as error:
                later.error = error
                raise
            self._later = None

    def _complete_load_in_background(self) -> None:
        """``start``'s thread for a phased load: its failure is the cluster's internal error."""
        try:
            self._complete_load()
        except Exception as error:  # kept: every reader of the engine's side raises it too
            self._serving_errors.append(error)

    def save(self, path: str | Path) -> None:
        """Write the whole cluster's state now to ``path`` (``Cluster.load`` reads it back):
        a snapshot as a file, in a safe, versioned format (docs/snapshots.md). TypeError
        naming the path to state that cannot be written."""
        from fakekube.cluster import snapfile
        snapfile.save(path, snapfile.dumps_cluster(self, self.snapshot()))

    @classmethod
    def from_config_file(cls, path: str | Path, **overrides: Any) -> "Cluster":
        """A cluster from a YAML config file (docs/config.md); keyword overrides win over the file.

        Raises ``fakekube.cluster.configfile.ConfigError`` (a ValueError) naming the bad key.
        """
        from fakekube.cluster.configfile import load_config_file  # loaded with a config file only
        return cls(load_config_file(path), **overrides)

    def _build_state(self) -> None:
        """Fresh clock, randomness and store, populated with the initial content."""
        from fakekube.cluster import bootstrap, rbacpolicy
        from fakekube.cluster.metricsserver import EngineUsage, register_api_service
        from fakekube.cluster.podstreams import KubeletStreams, StoreReads
        from fakekube.cluster.wiring import APISERVER_CONTROLLERS, admission_options, admission_plugins
        self.clock = VirtualClock(boot_start(self.config))  # start_time itself unless the cluster boots
        for observer in self._time_observers:
            self.clock.add_observer(observer)
        self.rng = SeededRandom(self.config.seed)
        self.store = Store(self.config.history_limit, guard=self.config.immutability_guard,
                           history_max_bytes=self.config.history_max_bytes)
        self.api = APIServer(self.registry, self.store, self.clock, self.rng, self.config.kubernetes_version,
                             self.config.patch_version)
        self.api.authorization_mode = self.config.authorization_mode
        self.api.static_tokens = self._static_tokens
        self.engine = Engine(self.store, self.clock, self.api, self.rng.fork("engine"),
                             rate_limits=self.config.rate_limits, seed=self.config.seed)
        self.controllers = {spec.name: spec.factory(self.config) for spec in self._controller_specs}
        from fakekube.kubelet.agents import Kubelets  # the engine's side: a phased load's second half
        from fakekube.scheduler import Scheduler
        self.scheduler = Scheduler(self.config.scheduler) if self.config.scheduler is not None else None
        self.kubelets = Kubelets(self.config.kubelet, self._plan.behaviours(self.config.behaviours),
                                 self._static_manifests, self.config.image_policy.with_preloaded(self._plan.images),
                                 observed_generation=self.config.release.enabled("PodObservedGenerationTracking"))
        scheduler = (self.scheduler,) if self.scheduler is not None else ()
        apiserver_controllers = tuple(factory(self.config) for factory in APISERVER_CONTROLLERS)
        for controller in (*self.controllers.values(), *scheduler, *self.kubelets.controllers()):
            self.engine.register(controller)
        for controller in apiserver_controllers:
            self.engine.register(controller, field_manager=APISERVER_MANAGER)
        self.api.pod_logs = self._pod_logs
        self.api.pod_exec = self._pod_exec
        streams = KubeletStreams(self.engine, self.kubelets, self.clock, self.store)
        self.api.pod_streams, self.api.pod_http = streams, streams.answer
        self.kubelets.pods.reads = StoreReads(self.store)
        self.api.kubelet_unreachable = self._kubelet_unreachable
        self.api.webhook_transport.addresses.update(self.config.webhook_addresses)
        bootstrap.populate(self.api, self._plan.node_specs, self.config.kubelet_version,
                           self.service_network.ip_range.first_address, self.service_network.cidr)
        # The config's admission chain from here on: the apiserver's own initial objects above
        # went through upstream's default one (a chain refusing them leaves no cluster to run).
        self.api.configure_admission(admission_plugins(self.config), admission_options(self.config))
        rbacpolicy.populate(self.store, self.registry, self.rng, self.api.now_rfc3339(),
                            control=self.config.authorization_mode == RBAC, minor=self.api.release.minor)
        if self.config.metrics_server:
            self.api.metrics.source = EngineUsage(self.engine, self.kubelets.metrics)
            register_api_service(self.api)
        nodes = {name: self.store.get(NODES, ("", name)) or {} for name, _ in self._plan.nodes}
        self.kubelets.static_pods.check(self.engine.client, nodes, self.clock.now())
        self._plan.create_objects(self.api)
        self.engine.settle()  # the engine thread is not running yet: this runs here
        if self._plan.joining_nodes:
            self._plan.join_nodes(self.api, self.config.kubelet_version)
            self.engine.settle()
        if self.clock.now() < self.config.start_time:
            self.engine.advance((self.config.start_time - self.clock.now()).total_seconds())  # the boot

    # -- lifecycle -----------------------------------------------------------
    def start(self) -> "Cluster":
        if self._server is None:
            later = self._later  # a phased load's engine side: started once in place, below
            if later is None:
                self.engine.start()
            if self.config.tls_enabled and self.pki is None:
                from fakekube.cluster.pki import ClusterPKI  # ssl and cryptography: only with TLS
                self.pki = ClusterPKI(self.config.seed)
            context = self.pki.server_context(self.config.host) if self.pki is not None else None
            from fakekube.api.http import BackgroundServer
            try:
                self._server = BackgroundServer(self._rest_app()[1], self.config.host, self.config.port,
                                                max_body_bytes=self.config.max_body_bytes, ssl_context=context)
            except OSError as error:  # a taken port: one line naming it, not a socket traceback
                if later is None:
                    self.engine.stop()
                raise checks.PortInUse(self.config.host, self.config.port, error.strerror or str(error)) from None
            self._server.start()
            if later is None:
                self._start_clock_modes()
            else:
                threading.Thread(target=self._complete_load_in_background, name="fakekube-load", daemon=True).start()
            self._kubeconfig = self._write_kubeconfig()
        return self

    def _rest_app(self) -> tuple[RestApp, ActivityMeter]:
        """The REST layer and its activity meter, built on first use (see ``__init__``)."""
        if self._app is None or self._activity is None:
            from fakekube.api.http import RestApp
            from fakekube.api.http.activity import ActivityMeter
            self._app = RestApp(self.api, self._mounted, max_body_bytes=self.config.max_body_bytes,
                                writes=self)
            self._app.authenticator = Authenticator(self._static_tokens)
            self._app.server_metrics.queues = lambda: self.engine.queue_stats()  # the current engine's
            self._app.internal_errors = self._serving_errors
            self._activity = ActivityMeter(self._app)
        return self._app, self._activity

    def stop(self) -> None:
        if self._server is None:
            return
        try:
            self._complete_load()  # a phased load's thread starts the clock modes: let it finish first
        except RuntimeError:
            pass  # its second phase failed: no engine and no clock mode ever ran; stop the server
        tickers = self._request_clock_modes_stop()
        self._rest_app()[0].stopping.set()
        self.store.close()
        self._server.stop()
        self._server = None
        if self._later is None:
            self.engine.stop()  # ends running work, and so a tick waiting on it
        for ticker in tickers:
            ticker.join()
        if self._tempdir:
            import shutil  # with tempfile below: loaded only by a served cluster
            shutil.rmtree(self._tempdir, ignore_errors=True)
            self._tempdir = None

    def _start_clock_modes(self) -> None:
        """Start whichever clock modes the config asks for (scaled time, auto-advance)."""
        if self.config.time_scale > 0:
            from fakekube.engine.scaled import ScaledTime
            self.scaled_time = ScaledTime(self.engine, self.config.time_scale)
            self.scaled_time.start()
        if self.config.auto_advance:
            from fakekube.engine.autoadvance import WAITER_CHECK_S, AutoAdvance
            app, meter = self._rest_app()
            # A waiter that hung up must stop counting soon, or time runs on past its answer.
            app.watch_check_interval_s = min(app.watch_check_interval_s, WAITER_CHECK_S)
            self.log_streams.poll_interval_s = min(self.log_streams.poll_interval_s, WAITER_CHECK_S)
            self.auto_advance = AutoAdvance(self.engine, meter.snapshot)
            self.auto_advance.start()

    def _request_clock_modes_stop(self) -> list[Ticker]:
        """Tell the clock modes' tickers to stop (join them once the engine stopped: a
        tick may be waiting for the engine's running work)."""
        tickers: list[Ticker] = [t for t in (self.scaled_time, self.auto_advance) if t is not None]
        for ticker in tickers:
            ticker.request_stop()
        self.scaled_time = self.auto_advance = None
        return tickers

    def __enter__(self) -> "Cluster":
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def reset(self) -> None:
        """Back to the initial state, as if just created with the same config: ends open watches.

        While time flows with the wall clock (``time_scale > 0``), "just created" means now:
        the new cluster starts at the instant the old one had reached (to the second; it
        becomes ``config.start_time``), so the ages kubectl computes keep matching its clock.
        In manual time it starts at ``config.start_time`` again, the same on every run."""
        def build() -> None:
            if self.config.time_scale > 0:
                self.config = self.config.replace(start_time=self.clock.now().replace(microsecond=0))
            self._fresh_state()
        self._replace_state(build, expired=False)

    def _fresh_state(self) -> None:
        """The state of a cluster just built with this config: restored from the process's
        build cache when this config was built before (cluster/buildcache.py), else built."""
        from fakekube.cluster.buildcache import BUILDS
        state = BUILDS.fresh_state(self)
        if state is None:
            self._build_state()
            BUILDS.built(self)
            return
        self._install_state(state)

    def _install_state(self, state: dict[str, Any]) -> None:
        """Put a copied state's parts in place (a snapshot's, a file's, the build cache's): its
        engine is a copy that no thread serves, its clock tells this cluster's observers."""
        for part, value in state.items():
            setattr(self, part, value)
        if "engine" in state:  # a phased load's first phase has none yet
            self.engine.detach()
        self.clock.set_observers(self._time_observers)  # who observes now, not then

    def _replace_state(self, install: Callable[[], None], expired: bool) -> None:
        """Stop the engine and the clock modes, ``install`` new state, start them again on it
        (when serving), point the REST layer at the new apiserver, and end the old store's
        watches (with 410 Gone when ``expired``: a restore, as after etcd compaction)."""
        self._complete_load()  # as in stop: nothing half loaded is replaced
        old_store = self.store
        running = self._server is not None
        tickers = self._request_clock_modes_stop()
        self.engine.stop()
        for ticker in tickers:
            ticker.join()
        install()
        if running:
            self.engine.start()
            self._start_clock_modes()
        if self._app is not None:
            self._app.rebind(self.api)
        old_store.close(expired=expired)

    # -- snapshots (cluster/snapshot.py) ---------------------------------------
    def snapshot(self) -> Snapshot:
        """The whole cluster's state now, as a value to restore later (any number of times).

        Taken between two pieces of the engine's work, so it never holds half a reconcile;
        requests keep being served meanwhile."""
        return self.engine.run_exclusive(lambda: snapshots.take(self))

    def restore(self, snapshot: Snapshot) -> None:
        """Put ``snapshot``'s state in place: the cluster continues exactly as it did from
        that instant. Open watches end with 410 Gone; resourceVersions this cluster issued
        are never handed out again for other data (cluster/snapshot.py). ValueError for a
        snapshot of a cluster with another configuration."""
        state = snapshots.fresh_state(self, snapshot)
        issued_rv = self.store.resource_version

        def install() -> None:
            self._install_state(state)
            self.store.continue_after(issued_rv)
        self._replace_state(install, expired=True)

    def time_observers(self) -> list[Callable[[datetime], None]]:
        """The observers :meth:`observe_time` added (they outlive resets and restores)."""
        return list(self._time_observers)

    # -- time -----------------------------------------------------------------
    @property
    def now(self) -> datetime:
        """Cluster time (virtual): every timestamp the cluster writes comes from it."""
        return self.clock.now()

    def advance(self, seconds: float | timedelta) -> datetime:
        """Move cluster time forward, running every timer and reaction due on the way."""
        if isinstance(seconds, timedelta):
            seconds = seconds.total_seconds()
        return self.engine.advance(checks.seconds(seconds, "seconds"))

    def advance_until(self, condition: Callable[["Cluster"], bool], timeout_s: float | timedelta) -> datetime:
        """Step from timer to timer until ``condition(cluster)`` holds; returns the time it did.

        ``timeout_s`` is virtual: past it, TimeoutError (with time left at the timeout).
        The condition is checked first, and after every instant at which something was due.
        """
        if isinstance(timeout_s, timedelta):
            timeout_s = timeout_s.total_seconds()
        checks.seconds(timeout_s, "timeout_s")
        deadline = self.now + timedelta(seconds=timeout_s)
        while not condition(self):
            next_due = self.clock.next_deadline()
            if next_due is None or next_due > deadline:
                self.advance((deadline - self.now).total_seconds())
                if condition(self):
                    return self.now
                raise TimeoutError(f"condition not met within {timeout_s} virtual seconds (now {self.now.isoformat()})")
            self.engine.step()
        return self.now

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

    def begin_write(self) -> tuple[Engine, Ticket]:
        """A client write starts on this thread: what it changes is tracked to its
        consequences (fakekube/engine/tickets.py). Pass the result to :meth:`end_write`."""
        engine = self.engine  # a reset meanwhile swaps the engine: the write belongs to this one
        return engine, engine.begin_write()

    def end_write(self, write: tuple[Engine, Ticket]) -> None:
        """The write is done: return once its consequences at this instant have run (bounded)."""
        engine, ticket = write
        engine.end_write(ticket)

    def _pod_logs(self, namespace: str, name: str, container: str | None, query: dict[str, str]) -> Any:
        """pods/log from the pod's simulated kubelet (read on the engine thread: a still state);
        with ``follow`` a stream that stays open while cluster time moves (kubelet/logstream.py)."""
        try:
            options = PodLogOptions.from_query(query)
            if not options.follow:
                return self.engine.run(lambda: self.kubelets.pods.logs(namespace, name, container, options, self.now))
            follow = self.engine.run(lambda: self.kubelets.pods.follow(namespace, name, container, options, self.now))
            store = self.store
            return self.log_streams.open(follow, self.clock.now, lambda: not store.closed,
                                         self._serving_errors.append)
        except LookupError:
            return b""  # not run by a simulated kubelet (unscheduled)
        except ValueError as exc:
            raise ApiError(400, "BadRequest", str(exc)) from None
        except TooManyStreams as exc:
            raise ApiError(429, "TooManyRequests", str(exc)) from None

    def _pod_exec(self, pod: dict[str, Any], container: str, argv: list[str], stream: bool = False) -> Any:
        """pods/exec from the pod's simulated kubelet (kubelet/execs.py), on the engine thread with
        the kubelet's read view (the container's files, volumes and network); with ``stream``, a
        session its stdin is fed to (kubelet/execsession.py). LookupError when the container is
        not running."""
        pods = self.kubelets.pods
        if stream:
            from fakekube.kubelet.execsession import Bound
            session = self.engine.query(pods.name, lambda ctx: pods.open_exec(ctx, pod, container, argv))
            return Bound(session, lambda work: self.engine.query(pods.name, work))
        return self.engine.query(pods.name, lambda ctx: pods.exec(pod, container, argv, ctx.now, ctx))

    def _kubelet_unreachable(self, node_name: str) -> tuple[str, str] | None:
        """The node's kubelet address and Go's dial error when it cannot be reached (see
        ``Kubelets.unreachable``; its fault state is read on the engine thread)."""
        node = self.store.get(NODES, ("", node_name))
        return None if node is None else self.engine.run(lambda: self.kubelets.unreachable(node))

    # -- node faults ------------------------------------------------------------
    def fail_node(self, name: str) -> None:
        """The node's kubelet stops: no more Lease renewals or status reports."""
        self._require_node(name)
        self._on_engine(lambda: self.kubelets.fail(name))

    def recover_node(self, name: str) -> None:
        """The node's kubelet is back: heartbeats resume at once."""
        self._kubelet_back(name, lambda: self.kubelets.recover(name, self.engine))

    def partition_node(self, name: str) -> None:
        """The node loses its connection to the apiserver: its kubelet keeps running its pods
        but writes nothing (no Lease, status or pod status) until healed."""
        self._require_node(name)
        self._on_engine(lambda: self.kubelets.partition(name))

    def heal_node(self, name: str) -> None:
        """The partition ends: the kubelet reports at once and its pods catch up."""
        self._kubelet_back(name, lambda: self.kubelets.heal(name, self.engine))

    def restart_kubelet(self, name: str) -> None:
        """The kubelet process restarts (its containers keep running): it posts its Lease and
        status at once and its heartbeat cadence starts again from now."""
        self._kubelet_back(name, lambda: self.kubelets.restart(name, self.engine))

    def set_node_condition(self, name: str, condition_type: str, status: str, reason: str = "",
                           message: str = "") -> None:
        """The node's kubelet detects a condition (e.g. MemoryPressure True) and reports it at its
        next 10 s status check; the node lifecycle controller then taints the node."""
        self._require_node(name)
        self._on_engine(lambda: self.kubelets.set_condition(name, condition_type, status, reason, message))

    def clear_node_condition(self, name: str, condition_type: str) -> None:
        """The kubelet reports ``condition_type`` as healthy again (at its next status check)."""
        self._require_node(name)
        self._on_engine(lambda: self.kubelets.clear_condition(name, condition_type))

    def kubelet_state(self, name: str) -> dict[str, Any]:
        """The node's simulated kubelet: ``{"heartbeats": "running"|"stopped"|"partitioned",
        "conditions": {type: {"status", "reason", "message"}}}`` (what it reports)."""
        self._require_node(name)
        return self._on_engine(lambda: self.kubelets.state(name))

    def _kubelet_back(self, name: str, fault_ends: Callable[[], None]) -> None:
        self._require_node(name)
        self._on_engine(fault_ends)
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
    def webhook_addresses(self) -> dict[str, str]:
        """Where admission webhooks are reached: the ``host:port`` the apiserver would dial
        (``hooks.default.svc:443``, or a webhook URL's) → the socket (``127.0.0.1:8443``).
        Edit it to route a webhook a test serves; a reset restores
        ``ClusterConfig.webhook_addresses``."""
        return self.api.webhook_transport.addresses

    @property
    def kubeconfig(self) -> str:
        """Path of a kubeconfig file for this cluster (written when it starts)."""
        if self._kubeconfig is None:
            raise RuntimeError("the cluster is not started")
        return str(self._kubeconfig)

    def _write_kubeconfig(self) -> Path:
        import tempfile  # not at import: an in-process cluster writes no files
        self._tempdir = tempfile.mkdtemp(prefix="fakekube-")
        if self.pki is not None:
            (Path(self._tempdir) / "ca.crt").write_bytes(self.pki.ca_pem)
        if self.config.kubeconfig_path:
            path = Path(self.config.kubeconfig_path)
        else:
            path = Path(self._tempdir) / "kubeconfig"
        if self.pki is None:
            return write_kubeconfig(path, self.url)
        return write_kubeconfig(path, self.url, self.pki.ca_pem, self.pki.client(*self.admin_identity()))

    def admin_identity(self) -> tuple[str, tuple[str, ...]]:
        """Who the kubeconfig's client certificate names (TLS): kubeadm's admin.conf user in
        ``kubeadm:cluster-admins`` where kubeadm ran (the control plane is on: its
        ClusterRoleBinding makes the group cluster-admin), else ``system:masters``, as a bare
        apiserver's admin."""
        if self._plan.system.control_plane:
            return ADMIN_USER, (CLUSTER_ADMINS_GROUP,)
        return ADMIN_USER, ("system:masters",)

    def client_certificate(self, user: str, groups: tuple[str, ...] = ()) -> KeyPair:
        """A client certificate (and key, PEM) the cluster authenticates as ``user`` in ``groups``
        (TLS only): ``O=system:masters`` is an admin."""
        if self.pki is None:
            raise RuntimeError("client certificates need TLS: Cluster(tls=True), started")
        return self.pki.client(user, groups)

    def client(self, token: str | None = None) -> Any:
        """A ``kubernetes.client.ApiClient`` for this cluster (needs the ``kubernetes`` package),
        as the kubeconfig's admin or with another bearer ``token`` (a service account's, a static one)."""
        try:
            from kubernetes import client
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise RuntimeError("Cluster.client() needs the `kubernetes` package: pip install 'fakekube[client]'") from exc
        configuration = client.Configuration()
        configuration.host = self.url
        if self.pki is not None and self._tempdir is not None:
            configuration.ssl_ca_cert = str(Path(self._tempdir) / "ca.crt")
        configuration.api_key = {"authorization": f"Bearer {token if token is not None else ADMIN_TOKEN}"}
        return client.ApiClient(configuration)

    def mount(self, app: Callable) -> None:
        """Serve ``app`` (WSGI) under ``/fakekube/``: how the control API attaches itself
        (it is a layer above the cluster, so the cluster does not import it)."""
        self._mounted = app
        if self._app is not None:
            self._app.fallback = app

    @property
    def internal_errors(self) -> list[BaseException]:
        """Unexpected exceptions: server 500s, engine loops, controller crashes (a fixture re-raises them)."""
        return self._serving_errors + [e.error for e in self.engine.errors]

    # -- Python API: objects as dicts, copied in and out -----------------------
    def resource(self, api_version: str, kind: str) -> ResourceType:
        rt = self.registry.by_kind(api_version, kind)
        if rt is None:
            raise KeyError(f"unknown kind {kind} in {api_version}")
        return rt

    def create(self, obj: Obj, *, field_manager: str = "") -> Obj:
        """Create ``obj`` (``POST``); returns it as stored. ``field_manager`` names who owns the
        fields it sets in managedFields (``unknown`` when not given, as for a client that sends
        neither a fieldManager nor a User-Agent)."""
        rt = self.resource(obj["apiVersion"], obj["kind"])
        namespace = (obj.get("metadata") or {}).get("namespace") or ("default" if rt.namespaced else "")
        options = objectverbs.write_options("CreateOptions", field_manager) if field_manager else WriteOptions()
        return self._write(lambda: self.api.create(rt, namespace, deep_copy(obj), options).obj)

    def get(self, api_version: str, kind: str, name: str, namespace: str = "default") -> Obj:
        return deep_copy(self.api.get(self.resource(api_version, kind), namespace, name))

    def list(self, api_version: str, kind: str, namespace: str = "", label_selector: str = "",
             field_selector: str = "") -> list[Obj]:
        rt = self.resource(api_version, kind)
        options = ListOptions(label_selector=label_selector, field_selector=field_selector)
        items = self.api.list(rt, namespace, options)["items"]
        return [deep_copy({"apiVersion": rt.api_version, "kind": rt.kind, **item}) for item in items]

    def delete(self, api_version: str, kind: str, name: str, namespace: str = "default") -> None:
        write = self.begin_write()
        try:
            self.api.delete(self.resource(api_version, kind), namespace, name, DeleteOptions())
        finally:
            self.end_write(write)

    def apply(self, obj: Obj, *, field_manager: str, force: bool = False, subresource: str = "") -> Obj:
        """Server-side apply of ``obj`` (``kubectl apply --server-side``): the fields it sets
        become ``field_manager``'s; a field another manager owns with another value is a 409
        Conflict naming it, unless ``force`` takes it over. Creates the object if missing."""
        rt = self.resource(obj["apiVersion"], obj["kind"])
        return self._write(lambda: objectverbs.apply(self.api, rt, obj, field_manager, force, subresource))

    def patch(self, api_version: str, kind: str, name: str, patch: Any, namespace: str = "default",
              patch_type: str = "strategic", *, field_manager: str = "", subresource: str = "") -> Obj:
        """Patch one object as ``kubectl patch --type`` does: ``"strategic"`` (merge keys, the
        default for built-in types), ``"merge"`` (RFC 7386) or ``"json"`` (RFC 6902, a list of
        operations). ``subresource="status"`` patches the status. Returns the object as stored."""
        rt = self.resource(api_version, kind)
        return self._write(lambda: objectverbs.patch(self.api, rt, namespace, name, patch, patch_type,
                                                     field_manager, subresource))

    def update(self, obj: Obj, *, field_manager: str = "", subresource: str = "") -> Obj:
        """Replace the object (``PUT``): its ``metadata.resourceVersion`` must be the stored one
        (else 409 Conflict, as over HTTP; get, change, update again). ``subresource="status"``
        writes only the status. Returns the object as stored."""
        rt = self.resource(obj["apiVersion"], obj["kind"])
        return self._write(lambda: objectverbs.update(self.api, rt, obj, field_manager, subresource))

    def scale(self, api_version: str, kind: str, name: str, replicas: int, namespace: str = "default", *,
              field_manager: str = "") -> Obj:
        """Set the replicas through the ``scale`` subresource (``kubectl scale``); returns the
        autoscaling/v1 Scale. A type without one is a 404, as over HTTP."""
        rt = self.resource(api_version, kind)
        return self._write(lambda: objectverbs.scale(self.api, rt, namespace, name, replicas, field_manager))

    def logs(self, pod: str, namespace: str = "default", container: str | None = None, *, previous: bool = False,
             tail_lines: int | None = None, since_seconds: int | None = None, timestamps: bool = False) -> str:
        """The container's log as ``kubectl logs`` gets it (``GET pods/<pod>/log``): what its
        behaviour wrote so far in cluster time; ``previous`` the last terminated instance's."""
        return objectverbs.logs(self.api, namespace, pod, container, previous, tail_lines, since_seconds, timestamps)

    def exec(self, pod: str, command: Sequence[str], namespace: str = "default", container: str | None = None, *,
             stdin: str | bytes | None = None) -> ExecResult:
        """Run ``command`` in the container as ``kubectl exec`` does (the simulated kubelet's
        shell and coreutils, docs/behaviour.md); returns stdout, stderr and the exit code (a
        non-zero exit is a result). A container that is not running is a 500, as over HTTP."""
        return objectverbs.exec_command(self.api, namespace, pod, command, container, stdin)

    def wait_for(self, obj: Obj, condition: Condition, timeout_virtual_s: float | timedelta,
                 namespace: str | None = None) -> Obj | None:
        """Advance cluster time until ``condition`` holds for ``obj`` (an object, or a reference
        ``{"apiVersion", "kind", "name", "namespace"}``); returns the object then (None for
        ``"delete"``). ``condition``: ``"Ready"``, ``"Available"``, ``"Complete"`` (any condition
        type), ``"Running"`` (a pod phase), ``"condition=Ready=False"``, ``"delete"``,
        ``"jsonpath={.status.phase}=Running"`` (as ``kubectl wait --for``), or a callable of the
        object (None once gone). Past the virtual timeout: ``WaitTimeout`` (a TimeoutError)
        naming the object, the condition and its last status."""
        seconds = checks.seconds(timeout_virtual_s.total_seconds() if isinstance(timeout_virtual_s, timedelta)
                                 else timeout_virtual_s, "timeout_virtual_s")
        predicate = waiting.parse(condition)
        rt, ref_namespace, name = self._reference(obj)
        ns = objectverbs.scoped(rt, namespace if namespace is not None else ref_namespace)
        where = f"{rt.kind} {ns + '/' if ns else ''}{name}"
        seen: builtins.list[Obj | None] = [None]

        def holds(_: "Cluster") -> bool:
            seen[0] = self._get_or_none(rt, ns, name)
            return predicate.test(seen[0])
        try:
            self.advance_until(holds, seconds)
        except TimeoutError:
            raise waiting.WaitTimeout(f"{where}: {predicate.text} did not hold within {seconds:g} virtual seconds "
                                      f"(now {self.now.isoformat()}); last status: {waiting.last_status(seen[0])}",
                                      seen[0]) from None
        return deep_copy(seen[0]) if seen[0] is not None else None

    def _reference(self, obj: Obj) -> tuple[ResourceType, str, str]:
        """(type, namespace, name) of an object or an ObjectReference-like dict."""
        rt = self.resource(obj["apiVersion"], obj["kind"])
        meta = obj.get("metadata") or {}
        name = meta.get("name") or obj.get("name")
        if not name:
            raise ValueError("wait_for needs an object with metadata.name or a reference with a name")
        return rt, meta.get("namespace") or obj.get("namespace") or "default", name

    def _get_or_none(self, rt: ResourceType, namespace: str, name: str) -> Obj | None:
        try:
            return self.api.get(rt, namespace, name)
        except ApiError as error:
            if error.code == 404:
                return None
            raise

    def _write(self, verb: Callable[[], Obj]) -> Obj:
        """Run a write verb as a client's write: its consequences at this instant have run on
        return (the write ticket); the answer is the caller's copy."""
        write = self.begin_write()
        try:
            return deep_copy(verb())
        finally:
            self.end_write(write)

    def explain_scheduling(self, pod: str | Obj, namespace: str = "default") -> Obj:
        """Why the scheduler puts ``pod`` (a name in ``namespace``, or a pod object not yet
        created) where it does: per node the filter plugin that rejects it and why, or each
        score plugin's normalized score, weight and the total; the best node(s) or the
        FailedScheduling message (fakekube/scheduler/explain.py). Changes nothing.

        Raises KeyError when the pod does not exist, LookupError when no scheduler runs."""
        scheduler = self.scheduler
        if scheduler is None:
            raise LookupError("this cluster runs no scheduler (ClusterConfig.scheduler is None)")
        if isinstance(pod, str):
            stored = self.store.get(PODS, (namespace, pod))
            if stored is None:
                raise KeyError(f"pod {namespace}/{pod} not found")
            pod = stored
        target = pod
        self.settle()  # the scheduler's cache sees every write made so far
        from fakekube.scheduler.explain import explain
        return self.engine.query(scheduler.name, lambda ctx: explain(scheduler, target, ctx))

    def events(self, namespace: str | None = None, involved_name: str | None = None,
               reason: str | None = None) -> builtins.list[Obj]:
        """core/v1 Events in the order they were last written (a repeat that bumps ``count``
        moves its Event to the end), optionally only one namespace's, about objects named
        ``involved_name``, or with ``reason``. Copies, same order on every run."""
        return list_events(self.api, namespace, involved_name, reason)

    def report(self, replay: str | None = None) -> str:
        """What a person needs to understand a failure, as text at most 100 columns wide:
        seed and time, the last events, nodes with conditions and taints, pods per node, why
        each Pending pod waits, controller errors, and ``replay`` (a command that runs the
        same test again) last. The pytest plugin attaches it to a failing test's report."""
        from fakekube.cluster.report import build_report
        return build_report(self, replay)

    def populate(self, seed: int, *, nodes: int | None = None, apps: int = 10) -> builtins.list[Obj]:
        """Fill the cluster with a realistic demo: team namespaces, and per app a ConfigMap,
        sometimes a Secret, a Deployment with a readiness probe and a Service — names, labels
        and images drawn from a Faker seeded with ``seed`` (the same on every run,
        fakekube/cluster/demo.py). ``nodes``: join nodes until the cluster has that many.
        Creates them as a client would, then advances cluster time until every Deployment
        has rolled out; returns the objects as stored."""
        from fakekube.cluster import demo  # faker, with the demo's first use
        demo.check_arguments(seed, apps, nodes)
        if nodes is not None:
            self._join_nodes(nodes)
        created = [self.create(obj, field_manager=demo.FIELD_MANAGER) for obj in demo.manifests(seed, apps)]
        wanted = [(d["metadata"]["namespace"], d["metadata"]["name"]) for d in demo.deployments(created)]
        deployments = self.resource("apps/v1", "Deployment")

        def waiting() -> builtins.list[str]:
            return [f"{ns}/{name}" for ns, name in wanted if not demo.rolled_out(self._get_or_none(deployments, ns, name))]
        try:
            self.advance_until(lambda _: not waiting(), demo.AVAILABLE_TIMEOUT_S)
        except TimeoutError:
            raise TimeoutError(demo.not_rolled_out_message(waiting(), demo.AVAILABLE_TIMEOUT_S,
                                                           len(self.list("v1", "Node")))) from None
        return created

    def _join_nodes(self, count: int) -> None:
        """Register Ready nodes until there are ``count``: named ``node-<n>`` (the first free n,
        as the config names workers), each with the next node index (hence IP) after the others'."""
        from fakekube.cluster import bootstrap
        node_type = self.resource("v1", "Node")
        names = {node["metadata"]["name"] for node in self.api.list(node_type, "", ListOptions())["items"]}
        number = 0
        while len(names) < count:
            number += 1
            name = f"node-{number}"
            if name in names:
                continue
            node = bootstrap.node_object(name, len(names) + 1, self.api.rng.fork(name), self.config.kubelet_version,
                                         self.api.now_rfc3339())
            self._write(lambda: self.api.create(node_type, "", node, bootstrap.TRUSTED).obj)
            names.add(name)

    def timeline(self, path: str | Path | None = None) -> str:
        """The cluster's story over cluster time as one self-contained HTML page (SVG inside, no
        network): nodes as lanes, pods as bars coloured by phase and readiness, node condition
        changes, taints, evictions, rollouts and every Event on hover (fakekube/cluster/timeline.py).
        Written to ``path`` when given (its folder made); returns the page."""
        from fakekube.cluster.timeline import build_timeline
        page = build_timeline(self)
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(page, encoding="utf-8")
        return page


def _static_manifests(config: ClusterConfig, plan: SystemPlan) -> tuple[StaticPodManifest, ...]:
    """The static pods of every node's kubelet: the config's, each node spec's, the directory's (read now, once)."""
    per_node = [(name, spec.static_pods) for name, spec in plan.nodes if spec.static_pods]
    return build_manifests(config.static_pods, per_node, config.static_pod_path)


def _static_tokens(config: ClusterConfig) -> dict[str, UserInfo]:
    """``static_tokens`` plus the token-auth-file's (ValueError: unreadable or malformed)."""
    tokens = dict(config.static_tokens)
    if config.token_auth_file is not None:
        try:
            text = Path(config.token_auth_file).read_text(encoding="utf-8")
        except OSError as error:
            raise ValueError(f"token-auth-file {config.token_auth_file}: {error.strerror or error}") from None
        tokens.update(parse_token_file(text))
    return tokens
