"""What a controller (or a simulated kubelet) is, and the runtime it is written against.

A controller is three things (client-go's informer handlers, work queue and sync
function, made synchronous):

* ``resources`` — the resources whose changes concern it;
* ``keys_for(change)`` — a *pure* map from one store change to the work keys it makes
  (usually ``namespace/name``). It runs on the writer's thread under the store lock, so
  it must not touch the controller's state, read the store or write anything: it only
  names keys. Whatever a change means for the controller is worked out in ``reconcile``;
* ``reconcile(key, ctx)`` — brings the world one step closer to what ``key`` wants,
  reading and writing only through its :class:`Context`.

Optionally ``periodic``: ``(key, period_s)`` pairs the runtime reconciles from the
controller's start and every ``period_s`` after (upstream's ``wait.Until`` loops); and
``quiet(key, ctx)`` (:class:`QuietPeriodic`): whether a pass of periodic ``key`` now would
provably write nothing and change no state a later pass reads — then the runtime skips
its reconcile (the tick itself keeps its instant and its place in the queue).

The runtime's guarantees (docs/architecture.md, "Writing a controller"):

* one reconcile at a time, on the engine's thread, in the order the work was made
  (store changes in write order, then timers in (deadline, sequence) order);
* reads are never stale: a reconcile sees every write made before it, its own included,
  so no expectations or resync are needed;
* at most one timer per key: ``enqueue_at`` keeps the earliest deadline;
* an expected API error (any 4xx: 403 namespace terminating, 409 conflict, 422 invalid,
  429 eviction refused) retries the key with client-go's rate-limited back-off on the
  virtual clock; a reconcile that returns normally forgets the key's failures; anything
  else (a 5xx, an exception) is a crash, reported with the controller, key and seed.
"""

from __future__ import annotations

import builtins
import contextlib
import itertools
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Protocol, Sequence, runtime_checkable

from fakekube.engine.client import Client
from fakekube.engine.timers import MAX_DELAY_S
from fakekube.engine.events import EventSource, object_reference
from fakekube.engine.eventsapi import EventsApiEvent, default_instance, truncate_note
from fakekube.objects import Resource
from fakekube.objects.metrics import UsageReader
from fakekube.random import SeededRandom
from fakekube.store import Change, TooOldResourceVersion, freeze
from fakekube.store.deferred import Deferred

if TYPE_CHECKING:
    from fakekube.engine.engine import Engine

Obj = dict[str, Any]


class Controller(Protocol):
    """A reconcile function with the routing the engine needs (see the module docstring)."""

    #: Unique, stable name: it names the controller in enable lists and errors, and seeds
    #: its random stream.
    @property
    def name(self) -> str: ...

    #: The resources whose changes this controller reacts to.
    @property
    def resources(self) -> Sequence[tuple[str, str]]: ...

    def keys_for(self, change: Change) -> Iterable[str]:
        """The work keys a store change makes for this controller (may be none). Pure."""
        ...

    def reconcile(self, key: str, ctx: "Context") -> None:
        """Bring the world one step closer to what ``key`` wants, through ``ctx``."""
        ...


@runtime_checkable
class QuietPeriodic(Protocol):
    """A periodic controller that can tell when a pass would do nothing (the optional
    ``quiet`` hook; docs/architecture.md, "The engine and time").

    ``quiet(key, ctx)`` is asked when the tick's work item reaches the head of the queue —
    the moment the pass would start, after everything queued before it at that instant —
    and must answer True only when the pass would write nothing, record no event, arm no
    timer and change none of the controller's state a later pass reads: the runtime then
    skips the reconcile, and no observation (object, event, resourceVersion, ``/metrics``
    counter, snapshot) differs from the eager run (``Engine.lazy_periodic = False`` runs
    every pass: what the differential tests compare with). The timer chain itself is not
    skipped: a tick armed some other way would take another place among the timers due at
    its instant, and that order is what the eager run's writes follow.
    """

    def quiet(self, key: str, ctx: "Context") -> bool:
        """Whether a pass of periodic ``key`` now would provably do nothing. Cheap: it is
        asked at every tick."""
        ...


class Context:
    """What one reconcile may use: the time, a read view, a write client, its work queue,
    its random stream and the event recorder. Built by the engine for every reconcile."""

    def __init__(self, engine: "Engine", controller: str, key: str, now: datetime, rng: SeededRandom) -> None:
        self._engine = engine
        self.controller = controller
        self.key = key
        self.now = now
        self.rng = rng
        self.client: Client = engine.client_of(controller)
        #: Set when this reconcile asked for a rate-limited retry (its failures are kept).
        self.backing_off = False

    # -- reads ------------------------------------------------------------------------
    @property
    def usage(self) -> UsageReader | None:
        """Pods' and nodes' resource usage as metrics-server reports it (what a
        HorizontalPodAutoscaler reads through metrics.k8s.io); None without metrics-server."""
        return self._engine.api.metrics.source

    def get(self, resource: Resource, name: str, namespace: str = "") -> Obj | None:
        """The stored object (shared: never edit it; write a changed copy) or None."""
        return self._engine.store.get(resource, (namespace, name))

    def get_many(self, resource: Resource, names: Sequence[str], namespace: str = "") -> list[Obj | None]:
        """Several objects of one namespace at once (a batch of heartbeats reads thousands)."""
        return self._engine.store.get_many(resource, list(zip(itertools.repeat(namespace), names)))  # at C speed

    def view(self, resource: Resource) -> Mapping[tuple[str, str], Obj]:
        """A live read-only mapping of ``resource``'s objects by (namespace, name): for a hot
        loop looking up thousands one by one (each lookup is one atomic dict read)."""
        return self._engine.store.view(resource)

    def list(self, resource: Resource, namespace: str = "") -> list[Obj]:
        """Every object of ``resource`` (in one namespace, or all), in key order."""
        return self._engine.store.list(resource, namespace)[0]

    def count(self, resource: Resource) -> int:
        """How many objects of ``resource`` there are (deferred writes change no count)."""
        return self._engine.store.count(resource)

    def by_index(self, resource: Resource, index: str, value: str) -> builtins.list[Obj]:
        """Objects whose index ``index`` (registered with the engine) has ``value``, in key order."""
        return self._engine.store.by_index(resource, index, value)

    def index_values(self, resource: Resource, index: str) -> builtins.list[str]:
        """The values index ``index`` has on at least one object, sorted."""
        return self._engine.store.index_values(resource, index)

    def owned_by(self, resource: Resource, owner_uid: str) -> builtins.list[Obj]:
        """Objects of ``resource`` with an ownerReference to ``owner_uid`` (any, controller or not)."""
        self._engine.owner_index(resource)
        return self._engine.store.by_index(resource, OWNER_INDEX, owner_uid)

    @property
    def resource_version(self) -> int:
        """The newest resourceVersion written (a cursor for :meth:`changes_since`)."""
        return self._engine.store.resource_version

    def changes_since(self, resource_version: int) -> builtins.list[Change] | None:
        """Every store change after ``resource_version``, in write order — or None when the
        bounded history no longer reaches back that far (read the objects instead). For a
        periodic pass that only needs what changed since its last run."""
        try:
            return self._engine.store.changes_since(resource_version)
        except TooOldResourceVersion:
            return None

    def renewals_since(self, resource_version: int) -> tuple[builtins.list[Change], builtins.list[Deferred]] | None:
        """:meth:`changes_since` with the store's deferred writes left as blocks (keys and
        the value each set), for a pass that only needs which objects were written with
        what; None as there."""
        try:
            return self._engine.store.changes_and_deferred_since(resource_version)
        except TooOldResourceVersion:
            return None

    def untouched_since(self, resource_version: int, resources: Sequence[Resource]) -> bool:
        """Whether no object of ``resources`` was written after ``resource_version`` (deferred
        writes included, without building them); False when the change log no longer reaches
        back that far. For a periodic pass that found nothing to do and reads only these:
        with them untouched it would find nothing again (a cost of the changes since)."""
        try:
            changes, blocks = self._engine.store.changes_and_deferred_since(resource_version)
        except TooOldResourceVersion:
            return False
        watched = {(resource[0], resource[1]) for resource in resources}
        return (not any((change.group, change.resource) in watched for change in changes)
                and not any(block.resource in watched for block in blocks))

    def defer_set(self, resource: Resource, names: Sequence[str], namespace: str, path: tuple[str, str],
                  value: str) -> bool:
        """Write ``value`` at ``path`` (one field outside metadata) of each named stored object,
        in order, as that many writes the store may defer until something could observe
        them (store/deferred.py); False when it cannot, and the caller writes them itself."""
        return self._engine.store.defer_set(resource, list(zip(itertools.repeat(namespace), names)), path, value)

    @contextlib.contextmanager
    def atomically(self) -> Iterator[None]:
        """Hold the store's write lock across several reads and writes: no client writes in
        between, and a batch (thousands of Lease renewals) takes the lock once — except while
        one of those writes calls an admission webhook, when the lock is released (so a
        client may write meanwhile; the write re-reads its object after the call)."""
        with self._engine.store.lock:
            yield

    # -- work -------------------------------------------------------------------------
    def enqueue(self, key: str) -> None:
        """Reconcile ``key`` at this instant (after the work already queued)."""
        self._engine.enqueue(self.controller, key)

    def enqueue_at(self, key: str, when: datetime) -> None:
        """Reconcile ``key`` when cluster time reaches ``when``; an earlier timer for it wins."""
        self._engine.enqueue_at(self.controller, key, when)

    def enqueue_after(self, key: str, delay_s: float) -> None:
        """Reconcile ``key`` ``delay_s`` seconds of cluster time from now (earliest timer wins).
        A delay past :data:`~fakekube.engine.timers.MAX_DELAY_S` (about 292 years) is never due."""
        if not delay_s <= MAX_DELAY_S:  # NaN too
            return
        self.enqueue_at(key, self.now + timedelta(seconds=max(0.0, delay_s)))

    def requeue_after(self, delay_s: float) -> None:
        """Reconcile this key again ``delay_s`` seconds from now."""
        self.enqueue_after(self.key, delay_s)

    def requeue_rate_limited(self) -> None:
        """Retry this key after client-go's back-off (5 ms doubling to 1000 s; 10/s overall).

        Failures add up until a reconcile of the key ends without asking for this."""
        self.backing_off = True
        self._engine.requeue_rate_limited(self.controller, self.key)

    def cancel(self, key: str) -> None:
        """Drop ``key``'s pending timer, if any."""
        self._engine.cancel_timer(self.controller, key)

    # -- events -----------------------------------------------------------------------
    def record_event(self, obj: Obj, kind: str, event_type: str, reason: str, message: str,
                     component: str, api_version: str = "v1") -> Obj | None:
        """A controller's event about a stored object (referenced by kind/name/uid), correlated
        as client-go's recorder does. Returns the stored Event, or None if it was filtered."""
        return self.record(object_reference(obj, kind, api_version), event_type, reason, message,
                           EventSource(component))

    def record(self, involved: Obj, event_type: str, reason: str, message: str, source: EventSource,
               at: datetime | None = None) -> Obj | None:
        """An event about ``involved`` (an ObjectReference) from ``source``, stamped ``at``
        (default now: a kubelet catching up stamps each step with the instant it happened)."""
        return self._engine.recorder.record(self._engine.api, at or self.now, involved, event_type, reason,
                                            message, source)

    def record_eventf(self, regarding: Obj, kind: str, event_type: str, reason: str, action: str, note: str,
                      reporting_controller: str, reporting_instance: str = "", related: Obj | None = None,
                      related_kind: str = "", api_version: str = "v1") -> Obj | None:
        """An events.k8s.io/v1 event about a stored object, as client-go's ``tools/events``
        recorder makes one (kube-scheduler's ``Eventf(regarding, related, type, reason, action,
        note)``): isomorphic repeats become a series (see :mod:`fakekube.engine.eventsapi`).

        The references carry kind, name, uid, apiVersion and resourceVersion (``related`` is
        of ``related_kind``, default ``kind``); ``reporting_instance`` defaults to
        ``<reporting_controller>-<control-plane host>``. The note is cut to 1024 bytes as
        kube-scheduler's ``truncateMessage`` does. Returns the Event written (events.k8s.io/v1
        shape), or None when nothing was written (a repeat counted in memory, a refusal)."""
        occurrence = EventsApiEvent(  # frozen references: the recorder's cache entry is then shared by snapshots
            freeze(object_reference(regarding, kind, api_version, resource_version=True)),
            freeze(object_reference(related, related_kind or kind, api_version, resource_version=True)) if related else None,
            event_type, reason, action, truncate_note(note), reporting_controller,
            reporting_instance or default_instance(reporting_controller))
        return self._engine.events_api.record(self.now, occurrence)


#: The index of every resource's objects by the uids in their ownerReferences (``owned_by``).
OWNER_INDEX = "ownerUID"
