"""The discrete-event loop over the virtual clock.

Store changes become work items for the controllers that watch those resources, in
the order the changes were written; timers become work when the clock reaches them.
All work runs on the engine's one thread (DESIGN.md part 5), so a run is a pure
function of (seed, config, the sequence of API calls and clock moves):

* ``settle()`` runs queued work until none is left at the current instant;
* ``advance(seconds)`` settles, then steps the clock from timer deadline to timer
  deadline up to the target, settling at each instant.

Both are bounded: a controller that never goes quiet at one instant raises
:class:`EngineStuck`, naming the controller and key, instead of hanging. A controller
that raises is recorded in :attr:`Engine.errors` (for the test to see, with the seed;
the first :data:`MAX_ERRORS_KEPT`, later ones counted in ``errors_dropped``), logged once
per (controller, key) on the ``fakekube.engine`` logger, and does not stop the engine or
the apiserver. A stuck instant is recorded and logged the same way before it raises.

Callers on other threads hand their request to the engine thread and wait for it. A
client's write is answered once its own consequences at that instant are done
(:mod:`fakekube.engine.tickets`), so a client making sequential calls sees each call's
consequences before its next call, in the same order on every run — and a write nobody
reacts to is answered at once, even while the engine is busy.

Nobody is stalled by someone else: long work (an advance, a settle) stops at *safe
points* — between reconciles, and between the instants of an advance — to run short
requests that arrived meanwhile (a node fault, a pod's logs, an exec, a scheduling
explanation) at the then-current instant; a client's write made during an advance has
its consequences run at the advance's current instant; another advance waits for the
running one to end. :meth:`Engine.stop` ends the running work at its next safe point.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import queue
import threading
from collections import Counter, OrderedDict, deque
from datetime import datetime, timedelta
from operator import itemgetter
from typing import Callable, Iterator, NamedTuple, TypeVar, cast

from fakekube.api.verbs.apiserver import APIServer
from fakekube.api.machinery.errors import ApiError
from fakekube.clock import VirtualClock, format_rfc3339
from fakekube.engine.client import Client
from fakekube.engine.controller import OWNER_INDEX, Context, Controller, QuietPeriodic
from fakekube.engine.events import EventRecorder
from fakekube.engine.eventsapi import EventsApiRecorder
from fakekube.engine.ratelimit import ControllerRateLimiter, RateLimits
from fakekube.engine.routing import heartbeat_resources, is_heartbeat
from fakekube.engine.tickets import (EXTERNAL_WAIT_PATIENCE_S, MAX_RECONCILES_PER_BUSY_WRITE, MAX_RECONCILES_PER_WRITE,
                                     Ticket, live_tickets)
from fakekube.engine.timers import KeyTimers
from fakekube.engine.workqueue import NO_TICKETS, WorkQueue
from fakekube.objects import Resource
from fakekube.objects.kinds import APIResource
from fakekube.objects.owners import owner_uids
from fakekube.random import SeededRandom
from fakekube.store import MODIFIED, Change, Store

T = TypeVar("T")
WorkItem = tuple[str, str]  # (controller name, key)

#: Reconciles of one (controller, key) allowed at one instant before the engine declares a loop.
DEFAULT_MAX_RECONCILES_PER_KEY = 1_000
#: Reconciles of all keys allowed at one instant: a hard stop far above any real burst
#: (creating 150,000 pods at once makes ~450,000).
DEFAULT_MAX_STEPS_PER_INSTANT = 10_000_000
#: Controller errors kept; later ones are counted but not stored.
MAX_ERRORS_KEPT = 1_000
#: Expected API errors (retried with back-off) kept for inspection; older ones are dropped.
MAX_RETRIES_KEPT = 1_000
#: (controller, key) pairs whose first failure was logged; past it the oldest is forgotten
#: (so a key that failed long ago and fails again is logged again).
MAX_LOGGED_KEYS = 10_000

#: Where failing reconciles are reported (``fakekube serve`` sends it to stderr);
#: ``logging`` loads with the first failure.
LOGGER_NAME = "fakekube.engine"
#: How often (wall seconds) a waiting write re-checks the engine's state, a safety net
#: behind the notifications that normally wake it.
_RECHECK_S = 1.0


class _Job:
    """Work handed to the engine thread and the caller's wait for its outcome (what a
    ``concurrent.futures.Future`` does; that module loads ``logging`` at import).

    ``interleave``: short work that may run at a safe point of long work (a fault, a read
    of kubelet state). ``drain``: a waiting write's request to run queued work, which any
    running settle or advance satisfies."""

    __slots__ = ("work", "done", "result", "error", "interleave", "drain")

    def __init__(self, work: Callable[[], object], interleave: bool = False, drain: bool = False) -> None:
        self.work = work
        self.done = threading.Event()
        self.result: object = None
        self.error: BaseException | None = None
        self.interleave = interleave
        self.drain = drain

    def run(self) -> None:
        try:
            self.result = self.work()
        except _Stopped:
            self.error = EngineStopped("the cluster stopped before this work finished")
        except BaseException as exc:  # handed to the waiting caller
            self.error = exc
        finally:
            self.done.set()


class EngineStuck(RuntimeError):
    """Work at one instant did not run out: some controller keeps re-queueing itself."""


class EngineStopped(RuntimeError):
    """The engine was stopped (the cluster stopped or reset) while this work waited or ran."""


class _Stopped(BaseException):
    """Unwinds the engine thread's running work at a safe point when the engine stops."""


class ControllerError(NamedTuple):
    """A reconcile that raised: where, which key, at what cluster time, and why."""

    controller: str
    key: str
    at: datetime
    error: BaseException

    def __str__(self) -> str:
        return f"{self.controller} reconciling {self.key!r} at {self.at.isoformat()}: {self.error!r}"


class Retry(NamedTuple):
    """A reconcile that met an expected API error and was requeued with back-off."""

    controller: str
    key: str
    at: datetime
    code: int
    reason: str
    delay_s: float


class Engine:
    """Runs registered controllers over one store, one clock and one apiserver."""

    #: Whether a periodic pass its controller calls quiet is skipped (:class:`QuietPeriodic`).
    #: False: every pass runs — the eager form the differential tests compare with (a class
    #: switch for tests, as ``NodeLifecycleController.quick_passes``; not in snapshots).
    lazy_periodic = True

    def __init__(self, store: Store, clock: VirtualClock, api: APIServer, rng: SeededRandom,
                 max_steps_per_instant: int = DEFAULT_MAX_STEPS_PER_INSTANT,
                 max_reconciles_per_key: int = DEFAULT_MAX_RECONCILES_PER_KEY,
                 rate_limits: RateLimits = RateLimits(), seed: int | None = None) -> None:
        self.store = store
        self.clock = clock
        self.api = api
        self._rng = rng
        self.max_steps_per_instant = max_steps_per_instant
        self.max_reconciles_per_key = max_reconciles_per_key
        self.rate_limits = rate_limits
        self.client = Client(api)
        #: The clients of controllers that name their field manager, by controller name.
        self._named_clients: dict[str, Client] = {}
        self.recorder = EventRecorder()
        #: kube-scheduler's recorder (events.k8s.io/v1, client-go tools/events), swept from now.
        self.events_api = EventsApiRecorder(api, clock.call_at, clock.now(), rng.fork("events-api").uid)
        self.queue: WorkQueue[WorkItem] = WorkQueue(name_of=itemgetter(0), on_over_limit=self._queue_over_limit)
        self._timers = KeyTimers(clock, self.queue.add)
        self.errors: list[ControllerError] = []
        self.errors_dropped = 0
        self.max_errors_kept = MAX_ERRORS_KEPT
        #: The cluster's seed, which replays a run (reported with every error and loop).
        self.seed = rng.seed if seed is None else seed
        self._logged: OrderedDict[WorkItem, None] = OrderedDict()
        #: Reconciles that met an expected API error and were retried with back-off (newest last).
        self.retries: deque[Retry] = deque(maxlen=MAX_RETRIES_KEPT)
        self.retries_total = 0
        #: Reconciles run since the engine was built (a work counter tests can bound).
        self.reconciles = 0
        #: Periodic passes skipped as quiet (counted among ``reconciles`` too: the work
        #: item was taken).
        self.passes_skipped = 0
        #: The periodic (controller, key) items whose controller has a ``quiet`` hook.
        self._quiet_hooks: dict[WorkItem, QuietPeriodic] = {}
        self._controllers: dict[str, Controller] = {}
        #: What the apiserver served at the last ``served_changed`` (None: not told yet).
        self._served: tuple[APIResource, ...] | None = None
        #: (group, plural) → the controllers watching it, in registration order.
        self._routes: dict[tuple[str, str], list[tuple[str, Controller]]] = {}
        #: The same for a heartbeat of a resource that has them (engine/routing.py), where
        #: some watcher declares ``keyless_heartbeats``: the watchers that do not.
        self._heartbeat_routes: dict[tuple[str, str], list[tuple[str, Controller]]] = {}
        #: Whether heartbeats skip the controllers that declare they give no key (False: every
        #: change goes to every watcher's ``keys_for``, the form the differential tests compare).
        self.quick_routes = True
        self._rngs: dict[str, SeededRandom] = {}
        self._limiters: dict[str, ControllerRateLimiter] = {}
        self._owner_indexed: set[tuple[str, str]] = set()
        self._jobs: queue.Queue[_Job | None] = queue.Queue()
        #: Long jobs that arrived while another ran; they run next, in arrival order.
        self._deferred: deque[_Job] = deque()
        self._thread: threading.Thread | None = None
        #: The engine thread while it serves (safe points act only there; a thread object,
        #: not an ident: idents of finished threads are reused).
        self._serving: threading.Thread | None = None
        #: True while the engine thread runs a job (read by :meth:`settle`'s quiet check and
        #: by waiting writes; changed under ``queue.condition``).
        self._busy = False
        #: A waiting write asked for a drain that has not started yet (under ``queue.condition``).
        self._drain_requested = False
        self._stopping = False
        #: The most reconciles a client write's answer waits for (engine/tickets.py).
        self.max_reconciles_per_write = MAX_RECONCILES_PER_WRITE
        #: The same for a write that comes while the engine is busy with other work.
        self.max_reconciles_per_busy_write = MAX_RECONCILES_PER_BUSY_WRITE
        #: Tickets of the client write open on each thread (see :meth:`begin_write`).
        self._local = threading.local()
        #: The thread running a reconcile right now, and the tickets its new work carries.
        self._reconcile_ident: int | None = None
        self._reconciling: tuple[Ticket, ...] = NO_TICKETS
        #: A reconcile is waiting on something outside the cluster (an admission webhook),
        #: and how many such waits have begun (under ``queue.condition``).
        self._external_waits = 0
        self._external_seq = 0
        store.add_listener(self._on_change, self._keyless_field_writes)
        api.custom_types.listeners.append(self._on_served_changed)
        api.external_wait_listeners.append(self._on_external_wait)

    # -- wiring ---------------------------------------------------------------
    def register(self, controller: Controller, field_manager: str = "") -> None:
        """Add a controller; registration order is the order it sees each change.
        ``field_manager``: the manager its writes record in managedFields (the apiserver's
        own controllers: ``kube-apiserver``); empty, they record none.

        Its random stream is derived from (seed, its name) alone, so registering another
        controller shifts no identifier this one makes. Its watched resources must be
        served. Its ``indexes`` ((resource, name, fn) triples) are registered with the
        store, and its ``periodic`` keys are first reconciled at the end of this instant.
        """
        name = controller.name
        if name in self._controllers:
            raise ValueError(f"controller {name!r} registered twice")
        for resource in controller.resources:
            self.client.resource_type(resource)  # fails now, not in a reconcile
        self._controllers[name] = controller
        if field_manager:
            self._named_clients[name] = Client(self.api, field_manager)
        self._rngs[name] = self._rng.fork(f"controller/{name}")
        self._limiters[name] = ControllerRateLimiter(self.rate_limits)
        for resource in controller.resources:
            self._routes.setdefault((resource[0], resource[1]), []).append((name, controller))
        self._heartbeat_routes = _heartbeat_routes(self._routes)
        for resource, index, values in getattr(controller, "indexes", ()):
            self.store.add_index(resource, index, values)
        for key, period_s in getattr(controller, "periodic", ()):
            if isinstance(controller, QuietPeriodic):
                self._quiet_hooks[(name, key)] = controller
            self._start_periodic(name, key, period_s)

    def client_of(self, controller: str) -> Client:
        """The write client a controller's reconciles use."""
        return self._named_clients.get(controller, self.client)

    def queue_stats(self) -> list[tuple[str, int, int]]:
        """Each controller's (name, items waiting, items added so far): its workqueue's
        ``workqueue_depth`` and ``workqueue_adds_total`` (``/metrics``)."""
        depths, adds = self.queue.stats()
        return [(name, depths.get(name, 0), adds.get(name, 0)) for name in self._controllers]

    def _on_served_changed(self) -> None:
        """The apiserver's types changed (a CRD was established, changed or removed; called
        under the store lock): controllers that walk every served type (``served_changed``)
        get the new set, and changes are routed by their new ``resources`` from now on."""
        served = self.client.served_resources()
        if served == self._served:  # a CRD's status changed, not what is served
            return
        self._served = served
        for controller in self._controllers.values():
            hook = getattr(controller, "served_changed", None)
            if hook is not None:
                hook(served)
        routes: dict[tuple[str, str], list[tuple[str, Controller]]] = {}
        for name, controller in self._controllers.items():
            for resource in controller.resources:
                routes.setdefault((resource[0], resource[1]), []).append((name, controller))
        self._routes = routes
        self._heartbeat_routes = _heartbeat_routes(routes)

    def _on_change(self, change: Change) -> None:
        """Store listener (runs under the store lock): route a change to work items.

        Every write passes here (an idle 5,000-node cluster makes 500 a second), so the
        routing is one dict lookup rather than a scan of every controller. A heartbeat (a
        node's status report or Lease renewal that moved only its times: engine/routing.py)
        goes only to the watchers that do not declare ``keyless_heartbeats``.
        """
        resource = (change.group, change.resource)
        routes = self._routes.get(resource)
        if not routes:
            return
        if change.type == MODIFIED and resource in self._heartbeat_routes and self.quick_routes \
                and is_heartbeat(change):
            routes = self._heartbeat_routes[resource]
        tickets = self._current_tickets()
        for name, controller in routes:
            for key in controller.keys_for(change):
                self.queue.add((name, key), tickets)

    def _keyless_field_writes(self, resource: tuple[str, str]) -> bool:
        """Whether a write of ``resource`` that sets one field outside metadata routes to no
        work item: every controller watching it declares ``keyless_field_writes = True``
        (such a change gives it no key; checked per controller by a unit test). The store
        may then defer such writes (store/deferred.py). Without the declaration — a
        controller of the user's watching Leases — they stay eager."""
        return all(getattr(controller, "keyless_field_writes", False) for _, controller in self._routes.get(resource, ()))

    def _current_tickets(self) -> tuple[Ticket, ...]:
        """The tickets work queued now carries: a running reconcile's (when this thread runs
        it), else the client write open on this thread, else none."""
        if threading.get_ident() == self._reconcile_ident:
            return self._reconciling
        return getattr(self._local, "tickets", NO_TICKETS)

    # -- client writes (see engine/tickets.py) ------------------------------------------
    def begin_write(self) -> Ticket:
        """Open a ticket for a client write on this thread: the work its store changes
        queue (and all that work queues in turn) carries it. Close with :meth:`end_write`."""
        busy = self._busy
        ticket = Ticket(self.max_reconciles_per_busy_write if busy else self.max_reconciles_per_write, urgent=busy)
        if self._thread is not None:  # in-process (no engine thread), every write settles everything
            self._local.tickets = (ticket,)
        return ticket

    def end_write(self, ticket: Ticket) -> None:
        """The write is done: wait until its consequences at this instant are (bounded;
        see engine/tickets.py), then let its ticket go."""
        self._local.tickets = NO_TICKETS
        try:
            if self._thread is None or threading.current_thread() is self._thread:
                self._settle()  # in-process, nobody else is waiting: everything due now runs
            else:
                self._await(ticket)
        finally:
            ticket.closed = True
        if ticket.error is not None:
            raise ticket.error

    def _await(self, ticket: Ticket) -> None:
        """Wait on another thread for ``ticket``'s work; ask for a drain when the engine is idle."""
        condition = self.queue.condition
        with condition:
            while not ticket.settled and ticket.error is None and not self._stopping:
                if self._external_waits:
                    seen = self._external_seq
                    condition.wait(EXTERNAL_WAIT_PATIENCE_S)
                    if self._external_waits and self._external_seq == seen:
                        return  # a controller's webhook call outlasted our patience
                    continue
                if not self._busy and not self._drain_requested:
                    self._drain_requested = True
                    self._jobs.put(_Job(self._settle, drain=True))
                condition.wait(_RECHECK_S)

    def _on_external_wait(self, waiting: bool) -> None:
        """The apiserver's hook around an admission webhook call: note it when the caller is
        the engine's running reconcile, so waiting writes do not wait on it for long."""
        if threading.get_ident() != self._reconcile_ident:
            return
        with self.queue.condition:
            self._external_waits += 1 if waiting else -1
            self._external_seq += 1 if waiting else 0
            self.queue.condition.notify_all()

    # -- the runtime's work queue (see engine/controller.py) ----------------------------
    def enqueue(self, controller: str, key: str) -> None:
        """Reconcile ``key`` at this instant, after the work already queued."""
        self.queue.add((controller, key), self._current_tickets())

    def enqueue_at(self, controller: str, key: str, when: datetime) -> None:
        """Reconcile ``key`` when cluster time reaches ``when`` (the earliest armed deadline wins)."""
        self._timers.arm((controller, key), when)

    def cancel_timer(self, controller: str, key: str) -> None:
        self._timers.cancel((controller, key))

    def timer_deadline(self, controller: str, key: str) -> datetime | None:
        """When ``key``'s armed timer fires, or None."""
        return self._timers.deadline((controller, key))

    def requeue_rate_limited(self, controller: str, key: str) -> float:
        """Retry ``key`` after the controller's rate limiter's delay; returns that delay."""
        delay_s = self._limiters[controller].when(key, self.clock.now().timestamp())
        self.enqueue_at(controller, key, self.clock.now() + timedelta(seconds=delay_s))
        return delay_s

    def _start_periodic(self, controller: str, key: str, period_s: float) -> None:
        """``key`` now (at the end of this instant) and every ``period_s`` after (wait.Until)."""
        if period_s <= 0:
            raise ValueError(f"{controller}: period of {key!r} must be > 0, got {period_s}")
        self.clock.call_later(0, functools.partial(self._periodic_tick, controller, key, period_s))

    def _periodic_tick(self, controller: str, key: str, period_s: float) -> None:
        """A periodic key is due: queue it and set the next tick (a bound method and its
        arguments, not a closure: timers are data a snapshot can hold)."""
        self.queue.add((controller, key))
        self.clock.call_later(period_s, functools.partial(self._periodic_tick, controller, key, period_s))

    def owner_index(self, resource: Resource | tuple[str, str]) -> None:
        """Index ``resource``'s objects by owner uid (built on first use, kept after); a write
        that keeps the ``ownerReferences`` list (a Lease renewal) does not recompute it."""
        if resource not in self._owner_indexed:
            self.store.add_index(resource, OWNER_INDEX, owner_uids, reads=_owner_references)
            self._owner_indexed.add(tuple(resource))  # type: ignore[arg-type]

    # -- the thread -------------------------------------------------------------
    def detach(self) -> None:
        """This engine is a copy of another (a snapshot, cluster/snapshot.py): no thread
        serves it and no job runs or waits; its queue, timers and controllers stay as copied."""
        self._thread = self._serving = None
        self._busy = self._drain_requested = self._stopping = False
        self._jobs = queue.Queue()
        self._deferred.clear()
        self._local = threading.local()
        self._reconcile_ident = None
        self._reconciling = NO_TICKETS
        self._external_waits = 0

    def start(self) -> None:
        if self._thread is None:
            self._stopping = False
            self._thread = threading.Thread(target=self._serve, name="fakekube-engine", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop the engine thread: running work ends at its next safe point, and work still
        waiting fails with :class:`EngineStopped`."""
        if self._thread is not None:
            self._stopping = True
            self._jobs.put(None)
            with self.queue.condition:
                self.queue.condition.notify_all()
            self._thread.join(timeout=5)
            self._thread = None

    def _serve(self) -> None:
        self._serving = threading.current_thread()
        try:
            self._serve_jobs()
        finally:
            self._serving = None

    def _serve_jobs(self) -> None:
        while not self._stopping and (job := self._next_job()) is not None:
            with self.queue.condition:
                self._busy = True
                if job.drain:
                    self._drain_requested = False
            job.run()
            with self.queue.condition:
                self._busy = False
                self.queue.condition.notify_all()
        self._stopping = True
        self._fail_waiting_jobs()

    def _next_job(self) -> _Job | None:
        return self._deferred.popleft() if self._deferred else self._jobs.get()

    def _fail_waiting_jobs(self) -> None:
        """Jobs nobody will run any more: their callers get :class:`EngineStopped`."""
        waiting = list(self._deferred)
        self._deferred.clear()
        while True:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                break
            if job is not None:
                waiting.append(job)
        for job in waiting:
            job.error = EngineStopped("the cluster stopped before this work ran")
            job.done.set()

    def _safe_point(self) -> None:
        """Between two reconciles: stop if asked, and run the short requests that arrived
        (faults, kubelet reads, queries) at the current instant. A waiting write's drain is
        satisfied by the work already running (it always ends with a settle); another long
        job (an advance) waits for the running one. Work running inline (no engine thread,
        or after it stopped) has none."""
        if threading.current_thread() is not self._serving:
            return
        if self._stopping:
            raise _Stopped()
        if self._jobs.empty():
            return
        while True:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                return
            if job is None:
                self._stopping = True
                raise _Stopped()
            if job.drain:
                with self.queue.condition:
                    self._drain_requested = False
                job.done.set()
            elif job.interleave:
                job.run()
            else:
                self._deferred.append(job)

    def _on_engine_thread(self, work: Callable[[], T], interleave: bool = False) -> T:
        """Run ``work`` on the engine thread and wait; inline when there is no thread.
        ``interleave``: short work that may run at a safe point of long work."""
        if self._thread is None or threading.current_thread() is self._thread:
            return work()
        job = _Job(work, interleave=interleave)
        self._jobs.put(job)
        job.done.wait()
        if job.error is not None:
            raise job.error
        return cast(T, job.result)  # what work returned

    def run_exclusive(self, work: Callable[[], T]) -> T:
        """Run ``work`` on the engine thread when no other work runs (between two jobs; an
        advance running finishes first) — for what must see the whole state at rest."""
        return self._on_engine_thread(work)

    def run(self, work: Callable[[], T]) -> T:
        """Run ``work`` on the engine thread (e.g. a fault that touches controller state);
        short work: it runs at the next safe point of an advance already running."""
        return self._on_engine_thread(work, interleave=True)

    def query(self, controller: str, work: Callable[[Context], T]) -> T:
        """Run ``work(ctx)`` on the engine thread with a context of ``controller`` (a
        question to its state, e.g. the scheduler's explanation of a pod). Its random
        stream is a throwaway fork, so asking changes nothing a later reconcile draws."""
        def run() -> T:
            rng = self._rngs[controller].fork(f"query/{self.reconciles}")
            return work(Context(self, controller, "~query", self.clock.now(), rng))
        return self._on_engine_thread(run, interleave=True)

    # -- time and work ------------------------------------------------------------
    def settle(self) -> int:
        """Run work until none is due now; returns the number of reconciles.

        With nothing queued and no job running there is nothing to wait for, and the
        handoff to the engine thread (~50 µs, most of it thread wake-ups) is skipped: most
        writes (a ConfigMap, a Secret) wake no controller. The queue is read before the
        running flag: work that a running job had already taken is done once no job runs.
        """
        if not len(self.queue) and not self._busy:
            return 0
        return self._on_engine_thread(self._settle)

    def advance(self, seconds: float) -> datetime:
        """Move cluster time ``seconds`` forward, settling at every instant a timer is due."""
        if seconds < 0:
            raise ValueError(f"time never goes back: advance({seconds})")
        return self._on_engine_thread(lambda: self._advance(seconds))

    def step(self) -> datetime | None:
        """Settle, then move to the next timer's deadline and settle there; None if no timer is set."""
        return self._on_engine_thread(self._step)

    def _step(self) -> datetime | None:
        self._settle()
        deadline = self.clock.next_deadline()
        if deadline is None:
            return None
        return self._advance((deadline - self.clock.now()).total_seconds())

    def _advance(self, seconds: float) -> datetime:
        with paused_cyclic_gc():
            return self._advance_to(self.clock.now() + timedelta(seconds=seconds))

    def _advance_to(self, target: datetime) -> datetime:
        self._settle()
        same_instant, last = 0, None
        while (deadline := self.clock.next_deadline()) is not None and deadline <= target:
            same_instant = same_instant + 1 if deadline == last else 0
            if same_instant > self.max_reconciles_per_key:  # timers re-arming at the instant they fire
                raise EngineStuck(f"timers keep firing at {deadline.isoformat()} without time moving "
                                  f"(seed {self.seed})")
            last = deadline
            self._safe_point()
            self.clock.advance_to(deadline)
            self._settle()
        self.clock.advance_to(target)
        self._settle()
        return self.clock.now()

    def _settle(self, until: Ticket | None = None) -> int:
        """Reconcile queued work until none is left (or, with ``until``, until that write's
        consequences are done); returns how many reconciles ran. The cyclic garbage
        collector is paused meanwhile, as for an advance (:func:`paused_cyclic_gc`)."""
        with paused_cyclic_gc():
            return self._run_queued(until)

    def _run_queued(self, until: Ticket | None) -> int:
        steps: Counter[WorkItem] = Counter()
        total = 0  # Counter.total() would re-sum every item on every step
        while until is None or not until.settled:
            self._safe_point()
            popped = self.queue.pop_with_tickets()
            if popped is None:
                break
            item, tickets = popped
            try:
                steps[item] += 1
                total += 1
                self.reconciles += 1
                if steps[item] > self.max_reconciles_per_key or total > self.max_steps_per_instant:
                    stuck = EngineStuck(self._stuck_message(steps))
                    (name, key), _ = steps.most_common(1)[0]
                    self._record(ControllerError(name, key, self.clock.now(), stuck))
                    for ticket in tickets:  # the writes waiting on this work hear of it
                        ticket.error = stuck
                    raise stuck
                self._reconcile_carrying(item, tickets)
            finally:
                self.queue.done(tickets)
        return total

    def _reconcile_carrying(self, item: WorkItem, tickets: tuple[Ticket, ...]) -> None:
        """Reconcile ``item``; the work it queues carries its writes' live tickets."""
        self._reconciling = live_tickets(tickets)
        self._reconcile_ident = threading.get_ident()
        try:
            self._reconcile(*item)
        finally:
            self._reconcile_ident = None
            self._reconciling = NO_TICKETS

    def _reconcile(self, name: str, key: str) -> None:
        controller = self._controllers[name]
        ctx = Context(self, name, key, self.clock.now(), self._rngs[name])
        if self._quiet_hooks and self._skips(name, key, ctx):
            return
        try:
            controller.reconcile(key, ctx)
        except ApiError as exc:
            if exc.code >= 500:  # our own apiserver failing is a bug, not weather
                self._record(ControllerError(name, key, ctx.now, exc))
                return
            # Expected (a client's write landed first, the namespace is terminating, the
            # template is invalid, an eviction was refused): retry with back-off, as
            # client-go's controllers do with AddRateLimited.
            delay_s = self.requeue_rate_limited(name, key)
            self.retries.append(Retry(name, key, ctx.now, exc.code, exc.reason, delay_s))
            self.retries_total += 1
        except Exception as exc:  # reported, never fatal: the apiserver keeps serving
            self._record(ControllerError(name, key, ctx.now, exc))
        else:
            if not ctx.backing_off:
                self._limiters[name].forget(key)  # success: the next failure starts from 5 ms

    def _skips(self, name: str, key: str, ctx: Context) -> bool:
        """Whether this is a periodic pass its controller calls quiet (skipped as it would
        end: successfully, so the key's failures are forgotten as the pass would forget them)."""
        hook = self._quiet_hooks.get((name, key))
        if hook is None or not self.lazy_periodic or not hook.quiet(key, ctx):
            return False
        self.passes_skipped += 1
        self._limiters[name].forget(key)
        return True

    def _record(self, error: ControllerError) -> None:
        if len(self.errors) < self.max_errors_kept:
            self.errors.append(error)
        else:
            self.errors_dropped += 1
        self._log_once(error)

    def _log_once(self, error: ControllerError) -> None:
        """Log a key's first failure (with its traceback); repeats are only counted and listed."""
        item = (error.controller, error.key)
        if item in self._logged:
            return
        self._logged[item] = None
        if len(self._logged) > MAX_LOGGED_KEYS:
            self._logged.popitem(last=False)
        import logging  # not at import: an in-process cluster with no failure never logs
        log = logging.getLogger(LOGGER_NAME)
        log.error("controller %s failed reconciling %r at %s (seed %s): %s: %s; later failures of this key "
                  "are not logged again (GET /fakekube/v1/errors lists them)",
                  error.controller, error.key, format_rfc3339(error.at), self.seed,
                  type(error.error).__name__, printable(str(error.error)), exc_info=error.error)

    def _queue_over_limit(self, waiting: int) -> None:
        """The work queue reached its limit (a burst of distinct keys nobody settled between):
        warn once per crossing. Nothing is refused or dropped: the items run in order."""
        import logging
        logging.getLogger(LOGGER_NAME).warning(
            "the work queue holds %d distinct (controller, key) items, its limit %d: a burst of writes "
            "with no settle between; they stay queued and run in order (seed %s)", waiting, self.queue.limit, self.seed)

    def _stuck_message(self, steps: Counter[WorkItem]) -> str:
        (name, key), count = steps.most_common(1)[0]
        return (f"controller {name!r} did not go quiet: {key!r} reconciled {count} times at "
                f"{self.clock.now().isoformat()} (limits per instant: {self.max_reconciles_per_key} per key, "
                f"{self.max_steps_per_instant} in all; seed {self.seed})")


def _heartbeat_routes(routes: dict[tuple[str, str], list[tuple[str, Controller]]]
                      ) -> dict[tuple[str, str], list[tuple[str, Controller]]]:
    """For each resource with heartbeats, its watchers without ``keyless_heartbeats`` (in
    registration order) — only where some watcher declares it (else nothing is saved)."""
    shorter = {}
    for resource in heartbeat_resources():
        watchers = routes.get(resource, [])
        keyed = [(name, c) for name, c in watchers if not getattr(c, "keyless_heartbeats", False)]
        if len(keyed) < len(watchers):
            shorter[resource] = keyed
    return shorter


def _owner_references(obj: dict) -> object:
    """What the owner index reads: the stored ``ownerReferences`` list itself (or None)."""
    return obj["metadata"].get("ownerReferences")


@contextlib.contextmanager
def paused_cyclic_gc() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for one advance or settle, then restore it as
    it was.

    An advance is a long run of writes whose objects are acyclic (reference counting frees
    them; an hour of a cluster with crash loops, a failed node and events leaves no cycles)
    and each write leaves a few objects that live long enough to reach the oldest
    generation, so the collector kept rescanning the whole heap: 40 % of an idle
    5,000-node hour. A settle after a burst of creates is the same run of writes (a
    1,000-pod scheduler burst spent 0.8 s of its 3.5 s in the collector, six full passes
    over the heap). Any cyclic garbage made meanwhile, by anyone, is collected as usual
    once the advance or settle returns. A collector the process had disabled stays disabled.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def freeze_startup_heap() -> None:
    """Move every object alive now into the collector's permanent generation, then turn
    the collector on (``fakekube serve`` builds its cluster with it off).

    For a process that hosts one cluster for its whole life (``fakekube serve``): the
    cluster's startup objects (schemas, OpenAPI documents, the registry) are never
    garbage, yet every full collection while serving rescanned them — about 10 % of a
    ConfigMap create's CPU, halved by this. No collection first: startup leaves a few
    hundred garbage objects among ~80,000 (measured), frozen with the rest, where a full
    collection here would delay the first answer by tens of milliseconds.
    Not for a process that makes and drops clusters (a test session): a frozen cluster is
    never collected.
    """
    gc.freeze()
    gc.enable()


#: The longest error message :func:`printable` keeps (a message may quote a huge value).
MAX_MESSAGE_CHARS = 1_000


def printable(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` safe to log and to encode anywhere: lone surrogates escaped, at most ``limit``
    characters (then ``... (N more characters)``)."""
    if len(text) > limit:
        text = f"{text[:limit]}... ({len(text) - limit} more characters)"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")
