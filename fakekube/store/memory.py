"""The in-memory etcd stand-in.

Objects are kept by (group, resource) and then (namespace, name). One cluster-wide
counter gives every write a strictly increasing resourceVersion. Stored objects are
never mutated after they are written — a write replaces the dict — so readers may
serialise them without copying, and a failed request can never leave a half-written
object behind (DESIGN.md, "nothing lost"). With ``guard=True`` (check mode) the store
keeps deeply frozen copies, so an in-place edit raises where it happens
(:mod:`fakekube.store.frozen`).

Indexes work like client-go's Indexer: a named function gives each object's values,
and the store keeps value → keys current on every write of that resource.

Concurrency: one re-entrant lock serialises writes, like etcd's linearised
transactions. The REST layer holds :attr:`Store.lock` across read-modify-write so
optimistic-concurrency checks and the write are atomic. Watchers wait on a condition
and read the shared :class:`History`; a slow watcher therefore never blocks a writer.
"""

from __future__ import annotations

import bisect
import builtins
import threading
from types import MappingProxyType
from typing import Any, Callable, Iterable, Iterator, Mapping, NamedTuple

from fakekube.store import deferred
from fakekube.store.deferred import Deferred
from fakekube.store.frozen import Origin, freeze, teach_yaml
from fakekube.store.history import (ADDED, DEFAULT_HISTORY_BYTES, DEFAULT_HISTORY_LIMIT, DELETED, MODIFIED, Change,
                                    History)

Obj = dict[str, Any]
ResourceKey = tuple[str, str]  # (group, plural)
ObjectKey = tuple[str, str]  # (namespace, name); namespace "" for cluster-scoped
FieldPath = tuple[str, ...]  # e.g. ("spec", "nodeName")
IndexFunc = Callable[[Obj], Iterable[str]]  # an object's index values (several, or none)

#: The name :meth:`Store.by_field` registers its index under: "field:spec.nodeName".
FIELD_INDEX_PREFIX = "field:"


class TooOldResourceVersion(Exception):
    """The requested resourceVersion is older than the retained history."""


class Store:
    """Objects by resource and key, the global resourceVersion, and the change log.

    (Annotations say ``builtins.list``: inside the class, ``list`` is the method.)
    """

    #: Not written to a snapshot file (cluster/snapfile.py): the serving layer's hook, set
    #: again by the next request (api/http/metrics.py, ``watch_store``).
    SNAPSHOT_FILE_TRANSIENT = ("write_timing",)

    def __init__(self, history_limit: int | None = None, guard: bool = False,
                 history_max_bytes: int = DEFAULT_HISTORY_BYTES) -> None:
        #: Check mode (:mod:`fakekube.store.frozen`): keep deeply frozen copies, so an
        #: in-place edit of a stored object raises where it happens.
        self.guard = guard
        if guard:
            teach_yaml()
        self.lock = threading.RLock()
        self._changed = threading.Condition(self.lock)
        #: Threads blocked in wait_for_change: a write wakes them only when there are some
        #: (Condition.notify_all costs a microsecond even with nobody waiting).
        self._waiting = 0
        self._objects: dict[ResourceKey, dict[ObjectKey, Obj]] = {}
        self._sorted_keys: dict[ResourceKey, builtins.list[tuple[str, ObjectKey]] | None] = {}
        #: The objects in the same order as ``_sorted_keys`` (kept by every write once a list
        #: built it): a list of a resource is then a slice, with no lookup per object.
        self._ordered: dict[ResourceKey, builtins.list[Obj]] = {}
        #: resource → index name → the index (value → keys of the objects filed under it).
        self._indexes: dict[ResourceKey, dict[str, Index]] = {}
        #: The change log: the newest ``history_limit`` changes, at most ``history_max_bytes``
        #: of them; a watch from before it is TooOldResourceVersion (410).
        self.history = History(history_limit or DEFAULT_HISTORY_LIMIT, history_max_bytes)
        self._rv = 0
        self._listeners: builtins.list[Callable[[Change], None]] = []
        #: Per listener: ``quiet(resource)`` says it does nothing for a change of that resource
        #: that sets one field outside metadata (None: it may act on any change).
        self._quiet: builtins.list[Callable[[ResourceKey], bool] | None] = []
        #: Writes that took their resourceVersions but not yet their objects (store/deferred.py),
        #: oldest first, all of one resource; built before anything could observe them.
        self._deferred: builtins.list[Deferred] = []
        #: How many writes ``_deferred`` holds: at ``deferred.BUILD_AT_LIMITS`` times the log's
        #: limit they are built (a bound on their memory when nothing reads or writes for long).
        self._deferred_count = 0
        #: Whether :meth:`defer_set` may defer (False: every write is eager; a test compares both).
        self.defer_writes = True
        #: Objects removed so far, and the last keys :meth:`defer_set` found all stored (with
        #: that count then): a stored key stays stored until a removal, so the same cohort's
        #: next renewal (the very tuple: deferred.shared_keys) needs no check of 5,000 keys.
        self._removals = 0
        self._stored_keys: tuple[ResourceKey, tuple[ObjectKey, ...], int] | None = None
        #: Set when the cluster is reset or stopped: open watches end.
        self.closed = False
        #: Set when a snapshot replaced this store's state: open watches end with 410 Gone.
        self.expired = False
        #: Who is told how long each write took (the apiserver's etcd metrics): a
        #: ``(timer, report)`` pair, ``report(operation, resource, seconds)`` called under the
        #: lock. The timer is the caller's: the store reads no clock of its own.
        self.write_timing: tuple[Callable[[], float], Callable[[str, ResourceKey, float], None]] | None = None

    # -- reads ---------------------------------------------------------------
    @property
    def resource_version(self) -> int:
        """The newest resourceVersion written."""
        return self._rv

    def get(self, resource: ResourceKey, key: ObjectKey) -> Obj | None:
        """The stored object (do not mutate it) or None."""
        with self.lock:
            if self._deferred:
                self._build_deferred(resource)
            return self._objects.get(resource, {}).get(key)

    def get_many(self, resource: ResourceKey, keys: builtins.list[ObjectKey]) -> builtins.list[Obj | None]:
        """Several objects under one lock (a batch of heartbeats reads thousands at once)."""
        with self.lock:
            if self._deferred:
                self._build_deferred(resource)
            return builtins.list(map(self._objects.get(resource, {}).get, keys))  # at C speed

    def view(self, resource: ResourceKey) -> Mapping[ObjectKey, Obj]:
        """A live, read-only mapping of one resource's objects by (namespace, name).

        For hot loops that look up thousands of objects one by one (the node lifecycle
        pass reads every node's Lease every 5 s): each lookup is one dict read, atomic
        under the GIL, with no list to build. It follows later writes, except deferred ones
        (:meth:`defer_set`): take a new view after one.
        """
        with self.lock:
            if self._deferred:
                self._build_deferred(resource)
            return MappingProxyType(self._objects.setdefault(resource, {}))

    def list(self, resource: ResourceKey, namespace: str = "") -> tuple[builtins.list[Obj], int]:
        """Objects of one resource in etcd key order ("namespace/name"), and the list's rv."""
        with self.lock:
            if self._deferred:
                self._build_deferred(resource)
            keys = self._keys(resource)
            lo, hi = _namespace_run(keys, namespace)
            return self._ordered_objects(resource)[lo:hi], self._rv

    def range_at(self, resource: ResourceKey, namespace: str, start: str = "", count: int | None = None,
                 rv: int | None = None) -> KeyRange:
        """Up to ``count`` objects (None: all) of one resource (in one namespace, or all) whose
        etcd key ("namespace/name") is ``start`` or after, in key order, as they were at
        resourceVersion ``rv`` (None: now) — etcd's range read at a revision, which a page
        of a list is.

        Costs the objects returned plus a binary search, plus the changes written since
        ``rv`` (bounded by the history) when ``rv`` is not now: a page never walks the keys
        before it. ValueError for an ``rv`` in the future; TooOldResourceVersion past the history.
        """
        with self.lock:
            if self._deferred:  # an older rv reads the change log: its bounds are the eager ones
                self._build_deferred(resource if rv is None else None)
            if rv is None:
                rv = self._rv
            elif rv > self._rv:
                raise ValueError("resourceVersion is in the future")
            if not self.history.covers(rv):
                raise TooOldResourceVersion(rv)
            keys = self._keys(resource)
            lo, hi = _namespace_run(keys, namespace)
            first = max(lo, bisect.bisect_left(keys, (start,))) if start else lo
            rolled_back = self._rolled_back(resource, namespace, start, rv) if rv < self._rv else {}
            if not rolled_back:  # nothing of this run changed since rv: a slice of the present
                end = hi if count is None else min(hi, first + count)
                return KeyRange(self._ordered_objects(resource)[first:end], rv, hi - end)
            return self._merged_range(resource, keys, first, hi, rolled_back, count, rv)

    def _rolled_back(self, resource: ResourceKey, namespace: str, start: str,
                     rv: int) -> dict[tuple[str, ObjectKey], Obj | None]:
        """Each key of the run (from ``start``) written after ``rv``: its state at ``rv`` (None: absent)."""
        states: dict[tuple[str, ObjectKey], Obj | None] = {}
        for change in self.history.since(rv):  # oldest first: a key's first change holds its state at rv
            if change.resource != resource[1] or change.group != resource[0]:
                continue
            if namespace and change.namespace != namespace:
                continue
            key = (change.namespace, change.name)
            entry = (sort_key(key), key)
            if entry[0] >= start and entry not in states:
                states[entry] = change.prev
        return states

    def _merged_range(self, resource: ResourceKey, keys: builtins.list[tuple[str, ObjectKey]], first: int, hi: int,
                      rolled_back: dict[tuple[str, ObjectKey], Obj | None], count: int | None, rv: int) -> KeyRange:
        """The present keys from ``first`` merged, in key order, with the rolled-back ones."""
        bucket = self._objects.get(resource, {})
        ordered = self._ordered_objects(resource)
        changed = sorted(rolled_back)
        total = hi - first  # keys at rv from the start: the present ones, corrected by the changed ones
        for key in changed:
            total += (rolled_back[key] is not None) - (key[1] in bucket)
        wanted = total if count is None else min(count, total)
        objects: builtins.list[Obj] = []
        at, next_changed = first, 0
        while len(objects) < wanted:
            entry = changed[next_changed] if next_changed < len(changed) else None  # the next changed key
            if entry is not None and (at >= hi or entry <= keys[at]):
                if at < hi and entry == keys[at]:
                    at += 1  # present now, but its state at rv is the rolled-back one
                next_changed += 1
                state = rolled_back[entry]
                if state is not None:
                    objects.append(state)
            else:
                objects.append(ordered[at])
                at += 1
        return KeyRange(objects, rv, total - len(objects))

    def by_index(self, resource: ResourceKey, name: str, value: str) -> builtins.list[Obj]:
        """Objects the index ``name`` files under ``value``, in key order (as :meth:`list`).

        Like client-go's ``Indexer.ByIndex``: "the pods on node-7" costs the pods on
        node-7, not all pods. Raises KeyError for an index nobody registered.
        """
        with self.lock:
            if self._deferred:
                self._build_deferred(resource)
            keys = self._index(resource, name).values.get(value, ())
            bucket = self._objects.get(resource, {})
            return [bucket[key] for key in sorted(keys, key=sort_key)]

    def index_values(self, resource: ResourceKey, name: str) -> builtins.list[str]:
        """The values the index ``name`` holds at least one object under, sorted."""
        with self.lock:
            if self._deferred:
                self._build_deferred(resource)
            return sorted(self._index(resource, name).values)

    def by_field(self, resource: ResourceKey, path: FieldPath, value: str) -> builtins.list[Obj]:
        """Objects whose string field at ``path`` equals ``value``, in key order.

        A field index is registered on first use (see :class:`FieldIndex`).
        """
        with self.lock:
            return self.by_index(resource, self._field_index(resource, path), value)

    def field_values(self, resource: ResourceKey, path: FieldPath) -> builtins.list[str]:
        """The values the field at ``path`` has on at least one object, sorted."""
        with self.lock:
            return self.index_values(resource, self._field_index(resource, path))

    def _index(self, resource: ResourceKey, name: str) -> Index:
        index = self._indexes.get(resource, {}).get(name)
        if index is None:
            raise KeyError(f"no index {name!r} on {resource}")
        return index

    def _field_index(self, resource: ResourceKey, path: FieldPath) -> str:
        name = FIELD_INDEX_PREFIX + ".".join(path)
        if name not in self._indexes.get(resource, {}):
            self.add_index(resource, name, FieldIndex(path))
        return name

    # -- indexes -------------------------------------------------------------
    def add_index(self, resource: ResourceKey, name: str, fn: IndexFunc,
                  reads: Callable[[Obj], Any] | None = None) -> None:
        """Keep an index ``name`` over ``resource``: ``fn(obj)`` gives an object's values.

        ``fn`` may give several values (every owner uid, every "key=value" label) or
        none; empty strings are not filed. The index is built over the objects stored
        now and kept by every write after that; a write costs only the indexes of its
        own resource. Registering the same ``fn`` again under a name is a no-op; another
        ``fn`` under a taken name raises ValueError. ``fn`` must be pure and must not
        raise: it runs under the store lock on every write of the resource.

        ``reads(obj)``, if given, returns the part of an object ``fn`` depends on (e.g. its
        ``metadata.ownerReferences``): a write whose new version shares that very part with
        the previous one (stored objects are immutable, so identity means unchanged) skips
        ``fn`` — a Lease renewal then costs the owner index one identity check.
        """
        with self.lock:
            indexes = self._indexes.setdefault(resource, {})
            existing = indexes.get(name)
            if existing is not None:
                if existing.fn != fn:
                    raise ValueError(f"index {name!r} on {resource} already exists with another function")
                return
            index = Index(fn, reads)
            for key, obj in self._objects.get(resource, {}).items():
                index.add(key, _index_values(fn, obj))
            indexes[name] = index

    def _index_updates(self, resource: ResourceKey, prev: Obj | None,
                       obj: Obj | None) -> builtins.list[tuple[Index, frozenset[str], frozenset[str]]]:
        """Each index's (removed, added) values for one write, computed before it commits."""
        updates = []
        for index in self._indexes[resource].values():
            if index.reads is not None and prev is not None and obj is not None \
                    and index.reads(prev) is index.reads(obj):
                continue
            old = _index_values(index.fn, prev) if prev is not None else frozenset()
            new = _index_values(index.fn, obj) if obj is not None else frozenset()
            if old != new:
                updates.append((index, old - new, new - old))
        return updates

    def list_at(self, resource: ResourceKey, namespace: str, rv: int) -> builtins.list[Obj]:
        """The objects as they were at resourceVersion ``rv`` (an exact snapshot), in key order.

        Rolls the current state back through the history (see :meth:`range_at`). Raises
        TooOldResourceVersion past the history.
        """
        return self.range_at(resource, namespace, rv=rv).objects

    def count(self, resource: ResourceKey) -> int:
        with self.lock:
            return len(self._objects.get(resource, {}))

    def resources(self) -> builtins.list[ResourceKey]:
        with self.lock:
            return sorted(self._objects)

    # -- writes --------------------------------------------------------------
    def create(self, resource: ResourceKey, obj: Obj) -> Obj:
        """Store a new object; the caller has checked it does not exist yet."""
        with self.lock:
            if self._deferred:  # the change log stays in resourceVersion order
                self._build_deferred(None)
            timing = self.write_timing
            started = timing[0]() if timing is not None else 0.0
            key = _object_key(obj)
            bucket = self._objects.setdefault(resource, {})
            if key in bucket:
                raise KeyError(key)
            stored = self._stamp(resource, key, obj)
            updates = self._index_updates(resource, None, stored) if resource in self._indexes else ()
            bucket[key] = stored
            keys = self._sorted_keys.get(resource)
            if keys is not None:
                entry = (sort_key(key), key)
                at = bisect.bisect_left(keys, entry)
                keys.insert(at, entry)
                ordered = self._ordered.get(resource)
                if ordered is not None:
                    ordered.insert(at, stored)
            if updates:
                _apply(updates, key)
            self._record(ADDED, resource, key, stored, None)
            if timing is not None:
                timing[1]("create", resource, timing[0]() - started)
            return stored

    def replace(self, resource: ResourceKey, obj: Obj, same_size: bool = False) -> Obj:
        """Overwrite an existing object with a new version (``same_size``: only a few scalar
        fields changed, so the history may count it at the previous version's size)."""
        with self.lock:
            if self._deferred:  # the change log stays in resourceVersion order
                self._build_deferred(None)
            timing = self.write_timing
            started = timing[0]() if timing is not None else 0.0
            key = _object_key(obj)
            stored = self._stamp(resource, key, obj)
            prev = self._put(resource, key, stored)
            self._record(MODIFIED, resource, key, stored, prev, same_size)
            if timing is not None:
                timing[1]("update", resource, timing[0]() - started)
            return stored

    def remove(self, resource: ResourceKey, key: ObjectKey) -> Obj:
        """Delete an object; returns its last state stamped with the delete's rv."""
        with self.lock:
            if self._deferred:  # the change log stays in resourceVersion order
                self._build_deferred(None)
            timing = self.write_timing
            started = timing[0]() if timing is not None else 0.0
            bucket = self._objects[resource]
            prev = bucket[key]
            self._removals += 1
            tombstone = self._stamp(resource, key, prev)
            updates = self._index_updates(resource, prev, None) if resource in self._indexes else ()
            del bucket[key]
            keys = self._sorted_keys.get(resource)
            if keys is not None:
                at = bisect.bisect_left(keys, (sort_key(key), key))
                del keys[at]
                ordered = self._ordered.get(resource)
                if ordered is not None:
                    del ordered[at]
            if updates:
                _apply(updates, key)
            self._record(DELETED, resource, key, tombstone, prev)
            if timing is not None:
                timing[1]("delete", resource, timing[0]() - started)
            return tombstone

    def add_listener(self, listener: Callable[[Change], None],
                     quiet: Callable[[ResourceKey], bool] | None = None) -> None:
        """Call ``listener(change)`` after every write, under the store lock.

        For the engine's work queue: listeners must be quick and must not write.
        ``quiet(resource)`` True promises that the listener does nothing for a change of
        ``resource`` that sets one field outside metadata (:meth:`defer_set` skips it then);
        without it, such writes of any resource are never deferred.
        """
        with self.lock:
            self._listeners.append(listener)
            self._quiet.append(quiet)

    # -- deferred writes (store/deferred.py) ------------------------------------------
    def defer_set(self, resource: ResourceKey, keys: builtins.list[ObjectKey], path: tuple[str, str],
                  value: str) -> bool:
        """Set ``obj[path[0]][path[1]] = value`` on each stored object of ``keys``, in order, as
        that many writes — deferred when nothing would see them as writes: their
        resourceVersions are taken now and their objects built when something could
        observe them (every read and list of the resource, any write, the change log, a
        watch, a snapshot), identical to eager writes'. False (and nothing done) when they
        cannot be deferred: deferral is off, a key is not stored, or a listener might act
        on them; the caller then writes them eagerly.
        """
        if path[0] == "metadata" or not keys:
            return False
        with self.lock:
            if not self.defer_writes or not all(q is not None and q(resource) for q in self._quiet):
                return False
            known = self._stored_keys[1] if self._stored_keys is not None else None
            shared = deferred.shared_keys(self._deferred, tuple(keys), known)
            if not self._all_stored(resource, shared):
                return False
            if self._deferred and self._deferred[0].resource != resource:
                self._build_deferred(None)
            self._deferred.append(Deferred(resource, shared, self._rv + 1, path, value))
            self._rv += len(keys)
            self._deferred_count += len(keys)
            self.history.before_read = self.build_deferred
            self._report_deferred(resource, len(keys))
            if self._deferred_count > deferred.BUILD_AT_LIMITS * self.history.limit:
                self._build_deferred(None)  # (a build costs what the log holds, however many wait)
            if self._waiting:
                self._changed.notify_all()
            return True

    def _all_stored(self, resource: ResourceKey, keys: tuple[ObjectKey, ...]) -> bool:
        """Whether every key of ``keys`` is stored: known when these very keys were found so
        with no removal since, else checked (and remembered)."""
        known = self._stored_keys
        if known is not None and known[1] is keys and known[0] == resource and known[2] == self._removals:
            return True
        bucket = self._objects.get(resource, {})
        if not all(map(bucket.__contains__, keys)):
            return False
        self._stored_keys = (resource, keys, self._removals)
        return True

    def _report_deferred(self, resource: ResourceKey, count: int) -> None:
        """The apiserver's etcd metrics count each deferred write as an update (their
        durations are wall time in either form, so not an observation to keep)."""
        if self.write_timing is not None:
            for _ in range(count):
                self.write_timing[1]("update", resource, 0.0)

    def build_deferred(self) -> None:
        """Build every deferred write now (before a snapshot or a read of the change log)."""
        with self.lock:
            self._build_deferred(None)

    def _build_deferred(self, resource: ResourceKey | None) -> None:
        """Build the deferred writes if they are of ``resource`` (None: whatever they are of)."""
        if not self._deferred or (resource is not None and self._deferred[0].resource != resource):
            return
        blocks, self._deferred, self._deferred_count = self._deferred, [], 0
        self.history.before_read = None
        deferred.materialize(self, blocks)

    # -- watch support -------------------------------------------------------
    def changes_since(self, rv: int) -> builtins.list[Change]:
        """Every change after ``rv``; TooOldResourceVersion if the log lost some."""
        with self.lock:
            self._build_deferred(None)
            if not self.history.covers(rv):
                raise TooOldResourceVersion(rv)
            return self.history.since(rv)

    def changes_and_deferred_since(self, rv: int) -> tuple[builtins.list[Change], builtins.list[Deferred]]:
        """:meth:`changes_since` without building deferred writes: the changes held after
        ``rv`` and the deferred blocks (all newer). For a reader that needs only which keys
        were written with what (the node lifecycle monitor's renewed Leases). Raises
        TooOldResourceVersion when the held changes do not reach back to ``rv``; it may
        answer where the eager log would already have trimmed ``rv`` — the changes given
        are all there were either way."""
        with self.lock:
            if rv < self.history.held_horizon_rv():
                raise TooOldResourceVersion(rv)
            blocks = [block if block.first_rv > rv else
                      block._replace(keys=block.keys[rv - block.first_rv + 1:], first_rv=rv + 1)
                      for block in self._deferred if block.last_rv > rv]
            return self.history.since(rv), blocks

    def wait_for_change(self, after_rv: int, timeout_s: float) -> bool:
        """Block (wall clock: transport time) until a write newer than ``after_rv``."""
        with self._changed:
            if self._rv > after_rv:
                return True
            self._waiting += 1
            try:
                self._changed.wait(timeout_s)
            finally:
                self._waiting -= 1
            return self._rv > after_rv

    def close(self, expired: bool = False) -> None:
        """End every open watch on this store (reset or shutdown); ``expired``: with a 410
        Gone event, as after etcd compaction (a snapshot was restored: clients relist)."""
        with self._changed:
            self.closed = True
            self.expired = expired
            self._changed.notify_all()

    def stored_objects(self) -> Iterator[Obj]:
        """Every object stored or remembered in the history (a snapshot shares them)."""
        self.build_deferred()
        yield from self.current_objects()
        for change in self.history.since(-1):
            yield change.obj
            if change.prev is not None:
                yield change.prev

    def current_objects(self) -> Iterator[Obj]:
        """Every object stored now."""
        self.build_deferred()
        for bucket in self._objects.values():
            yield from bucket.values()

    def continue_after(self, issued_rv: int) -> None:
        """A restored store in a cluster that has issued resourceVersions up to ``issued_rv``:
        when that is past this store's, it moves to the one after (lists carry it, the next
        write is above it) and its history starts there — a watch from any resourceVersion
        issued before is 410 — so no resourceVersion a client has seen names other data."""
        with self.lock:
            self._build_deferred(None)
            if issued_rv > self._rv:
                self._rv = issued_rv + 1
                self.history.compact_to(self._rv)

    # -- internals -----------------------------------------------------------
    def _ordered_objects(self, resource: ResourceKey) -> builtins.list[Obj]:
        """The objects in the order of :meth:`_keys` (built on first use, then kept by every write)."""
        ordered = self._ordered.get(resource)
        if ordered is None:
            bucket = self._objects.get(resource, {})
            ordered = self._ordered[resource] = [bucket[k[1]] for k in self._keys(resource)]
        return ordered

    def _keys(self, resource: ResourceKey) -> builtins.list[tuple[str, ObjectKey]]:
        keys = self._sorted_keys.get(resource)
        if keys is None:
            keys = sorted((sort_key(k), k) for k in self._objects.get(resource, {}))
            self._sorted_keys[resource] = keys
        return keys

    def _stamp(self, resource: ResourceKey, key: ObjectKey, obj: Obj) -> Obj:
        """A new object with the next resourceVersion in its metadata (not yet counted).

        Without the guard only the top level and metadata are new (the rest is shared
        with ``obj``); with it, the whole object is a frozen copy.
        """
        return self._stamp_at(resource, key, obj, self._rv + 1)

    def _stamp_at(self, resource: ResourceKey, key: ObjectKey, obj: Obj, version: int) -> Obj:
        """:meth:`_stamp` with resourceVersion ``version`` (a deferred write's, reserved earlier)."""
        rv = str(version)
        stamped = dict(obj)
        stamped["metadata"] = dict(obj.get("metadata") or {}, resourceVersion=rv)
        if self.guard:
            name = f"{key[0]}/{key[1]}" if key[0] else key[1]
            resource_name = f"{resource[1]}.{resource[0]}" if resource[0] else resource[1]
            stamped = freeze(stamped, Origin(resource_name, name, rv))
        return stamped

    def _put(self, resource: ResourceKey, key: ObjectKey, obj: Obj) -> Obj:
        """Store ``obj`` as the version of an existing key: the bucket, the ordered list and
        the indexes (a replace, or a deferred write being built); returns the version it
        replaced. It takes no resourceVersion and records nothing: its callers do."""
        bucket = self._objects[resource]
        prev = bucket[key]
        updates = self._index_updates(resource, prev, obj) if resource in self._indexes else ()
        bucket[key] = obj
        ordered = self._ordered.get(resource)
        if ordered is not None:
            ordered[bisect.bisect_left(self._keys(resource), (sort_key(key), key))] = obj
        if updates:
            _apply(updates, key)
        return prev

    def _record(self, kind: str, resource: ResourceKey, key: ObjectKey, obj: Obj, prev: Obj | None,
                same_size: bool = False) -> None:
        self._rv += 1
        change = Change(self._rv, kind, resource[0], resource[1], key[0], key[1], obj, prev)
        self.history.append(change, same_size, resource, key)
        for listener in self._listeners:
            listener(change)
        if self._waiting:
            self._changed.notify_all()


class KeyRange(NamedTuple):
    """A run of one resource's objects in key order, as they were at ``resource_version``,
    and how many keys there were after it at that version (etcd's count, less the run)."""

    objects: builtins.list[Obj]
    resource_version: int
    remaining: int


class Index:
    """One named index: its function and value → keys of the objects filed under it."""

    __slots__ = ("fn", "reads", "values")

    def __init__(self, fn: IndexFunc, reads: Callable[[Obj], Any] | None = None) -> None:
        self.fn = fn
        #: The part of an object ``fn`` reads (see :meth:`Store.add_index`), or None.
        self.reads = reads
        self.values: dict[str, set[ObjectKey]] = {}

    def add(self, key: ObjectKey, values: Iterable[str]) -> None:
        for value in values:
            self.values.setdefault(value, set()).add(key)

    def discard(self, key: ObjectKey, values: Iterable[str]) -> None:
        for value in values:
            keys = self.values.get(value)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self.values[value]


class FieldIndex:
    """The index function of :meth:`Store.by_field`: the non-empty string at a path.

    Instances with the same path compare equal, so registering one twice is a no-op.
    """

    __slots__ = ("path",)

    def __init__(self, path: FieldPath) -> None:
        self.path = path

    def __call__(self, obj: Obj) -> tuple[str, ...]:
        value = _field(obj, self.path)
        return (value,) if value is not None else ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FieldIndex) and other.path == self.path

    def __hash__(self) -> int:
        return hash(self.path)

    def __repr__(self) -> str:
        return f"FieldIndex({self.path!r})"


def _index_values(fn: IndexFunc, obj: Obj) -> frozenset[str]:
    return frozenset(value for value in fn(obj) if value)


def _apply(updates: Iterable[tuple[Index, frozenset[str], frozenset[str]]], key: ObjectKey) -> None:
    for index, removed, added in updates:
        index.discard(key, removed)
        index.add(key, added)


def _field(obj: Obj | None, path: FieldPath) -> str | None:
    """The string at ``path`` in ``obj``; None when absent, empty or not a string."""
    value: Any = obj
    for part in path:
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value if isinstance(value, str) and value else None


def _object_key(obj: Obj) -> ObjectKey:
    meta = obj["metadata"]
    return (meta.get("namespace") or "", meta["name"])


def _namespace_run(keys: builtins.list[tuple[str, ObjectKey]], namespace: str) -> tuple[int, int]:
    """Where one namespace's keys lie in ``keys`` (all of them for "")."""
    if not namespace:
        return 0, len(keys)
    # Keys sort as strings, so one namespace's "ns/" prefix is a contiguous run.
    return bisect.bisect_left(keys, (namespace + "/",)), bisect.bisect_left(keys, (namespace + "0",))  # "0" follows "/"


def sort_key(key: ObjectKey) -> str:
    """The etcd key suffix ("namespace/name" or "name"): upstream lists sort by it."""
    namespace, name = key
    return f"{namespace}/{name}" if namespace else name
