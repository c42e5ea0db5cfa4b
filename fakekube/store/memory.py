"""The in-memory etcd stand-in.

Objects are kept by (group, resource) and then (namespace, name). One cluster-wide
counter gives every write a strictly increasing resourceVersion. Stored objects are
never mutated after they are written — a write replaces the dict — so readers may
serialise them without copying, and a failed request can never leave a half-written
object behind (DESIGN.md, "nothing lost").

Concurrency: one re-entrant lock serialises writes, like etcd's linearised
transactions. The REST layer holds :attr:`Store.lock` across read-modify-write so
optimistic-concurrency checks and the write are atomic. Watchers wait on a condition
and read the shared :class:`History`; a slow watcher therefore never blocks a writer.
"""

from __future__ import annotations

import bisect
import threading
from typing import Any, Callable

from fakekube.store.history import ADDED, DELETED, MODIFIED, Change, History

Obj = dict[str, Any]
ResourceKey = tuple[str, str]  # (group, plural)
ObjectKey = tuple[str, str]  # (namespace, name); namespace "" for cluster-scoped
FieldPath = tuple[str, ...]  # e.g. ("spec", "nodeName")


class TooOldResourceVersion(Exception):
    """The requested resourceVersion is older than the retained history."""


class Store:
    """Objects by resource and key, the global resourceVersion, and the change log."""

    def __init__(self, history_limit: int | None = None) -> None:
        self.lock = threading.RLock()
        self._changed = threading.Condition(self.lock)
        #: Threads blocked in wait_for_change: a write wakes them only when there are some
        #: (Condition.notify_all costs a microsecond even with nobody waiting).
        self._waiting = 0
        self._objects: dict[ResourceKey, dict[ObjectKey, Obj]] = {}
        self._sorted_keys: dict[ResourceKey, list[tuple[str, ObjectKey]] | None] = {}
        #: resource → field path → field value → keys of the objects with that value.
        self._indexes: dict[ResourceKey, dict[FieldPath, dict[str, set[ObjectKey]]]] = {}
        self.history = History(history_limit) if history_limit else History()
        self._rv = 0
        self._listeners: list[Callable[[Change], None]] = []
        #: Set when the cluster is reset or stopped: open watches end.
        self.closed = False

    # -- reads ---------------------------------------------------------------
    @property
    def resource_version(self) -> int:
        """The newest resourceVersion written."""
        return self._rv

    def get(self, resource: ResourceKey, key: ObjectKey) -> Obj | None:
        """The stored object (do not mutate it) or None."""
        with self.lock:
            return self._objects.get(resource, {}).get(key)

    def get_many(self, resource: ResourceKey, keys: list[ObjectKey]) -> list[Obj | None]:
        """Several objects under one lock (a batch of heartbeats reads thousands at once)."""
        with self.lock:
            bucket = self._objects.get(resource, {})
            return [bucket.get(key) for key in keys]

    def list(self, resource: ResourceKey, namespace: str = "") -> tuple[list[Obj], int]:
        """Objects of one resource in etcd key order ("namespace/name"), and the list's rv."""
        with self.lock:
            bucket = self._objects.get(resource, {})
            keys = self._keys(resource)
            if namespace:
                # Keys sort as strings, so one namespace's "ns/" prefix is a contiguous run.
                lo = bisect.bisect_left(keys, (namespace + "/",))
                hi = bisect.bisect_left(keys, (namespace + "0",))  # "0" follows "/"
                keys = keys[lo:hi]
            return [bucket[k[1]] for k in keys], self._rv

    def by_field(self, resource: ResourceKey, path: FieldPath, value: str) -> list[Obj]:
        """Objects whose string field at ``path`` equals ``value``, in key order.

        Like an informer's indexer: the index is built on first use and kept on every
        write after that, so "the pods on node-7" costs the pods on node-7, not all pods.
        """
        with self.lock:
            keys = self._field_index(resource, path).get(value, ())
            bucket = self._objects.get(resource, {})
            return [bucket[key] for key in sorted(keys, key=sort_key)]

    def field_values(self, resource: ResourceKey, path: FieldPath) -> list[str]:
        """The values the field at ``path`` has on at least one object, sorted."""
        with self.lock:
            return sorted(self._field_index(resource, path))

    def _field_index(self, resource: ResourceKey, path: FieldPath) -> dict[str, set[ObjectKey]]:
        indexes = self._indexes.setdefault(resource, {})
        index = indexes.get(path)
        if index is None:
            index = indexes[path] = {}
            for key, obj in self._objects.get(resource, {}).items():
                _index_add(index, _field(obj, path), key)
        return index

    def _reindex(self, resource: ResourceKey, key: ObjectKey, prev: Obj | None, obj: Obj | None) -> None:
        for path, index in self._indexes.get(resource, {}).items():
            old, new = _field(prev, path), _field(obj, path)
            if old != new:
                _index_remove(index, old, key)
                _index_add(index, new, key)

    def list_at(self, resource: ResourceKey, namespace: str, rv: int) -> list[Obj]:
        """The objects as they were at resourceVersion ``rv`` (an exact snapshot).

        Rolls the current state back through the history, which is how a paginated
        list stays consistent while writes continue. Raises TooOldResourceVersion past
        the history.
        """
        with self.lock:
            if rv > self._rv:
                raise ValueError("resourceVersion is in the future")
            if not self.history.covers(rv):
                raise TooOldResourceVersion(rv)
            state = dict(self._objects.get(resource, {}))
            for change in self.history.newer_than(rv):
                if (change.group, change.resource) != resource:
                    continue
                key = (change.namespace, change.name)
                if change.prev is None:
                    state.pop(key, None)
                else:
                    state[key] = change.prev
        keys = sorted((sort_key(k), k) for k in state if not namespace or k[0] == namespace)
        return [state[k[1]] for k in keys]

    def count(self, resource: ResourceKey) -> int:
        with self.lock:
            return len(self._objects.get(resource, {}))

    def resources(self) -> list[ResourceKey]:
        with self.lock:
            return sorted(self._objects)

    # -- writes --------------------------------------------------------------
    def create(self, resource: ResourceKey, obj: Obj) -> Obj:
        """Store a new object; the caller has checked it does not exist yet."""
        with self.lock:
            key = _object_key(obj)
            bucket = self._objects.setdefault(resource, {})
            if key in bucket:
                raise KeyError(key)
            stored = self._stamp(obj)
            bucket[key] = stored
            keys = self._sorted_keys.get(resource)
            if keys is not None:
                bisect.insort(keys, (sort_key(key), key))
            if resource in self._indexes:
                self._reindex(resource, key, None, stored)
            self._record(ADDED, resource, key, stored, None)
            return stored

    def replace(self, resource: ResourceKey, obj: Obj) -> Obj:
        """Overwrite an existing object with a new version."""
        with self.lock:
            key = _object_key(obj)
            bucket = self._objects[resource]
            prev = bucket[key]
            stored = self._stamp(obj)
            bucket[key] = stored
            if resource in self._indexes:
                self._reindex(resource, key, prev, stored)
            self._record(MODIFIED, resource, key, stored, prev)
            return stored

    def remove(self, resource: ResourceKey, key: ObjectKey) -> Obj:
        """Delete an object; returns its last state stamped with the delete's rv."""
        with self.lock:
            prev = self._objects[resource].pop(key)
            keys = self._sorted_keys.get(resource)
            if keys is not None:
                del keys[bisect.bisect_left(keys, (sort_key(key), key))]
            tombstone = self._stamp(prev)
            if resource in self._indexes:
                self._reindex(resource, key, prev, None)
            self._record(DELETED, resource, key, tombstone, prev)
            return tombstone

    def add_listener(self, listener: Callable[[Change], None]) -> None:
        """Call ``listener(change)`` after every write, under the store lock.

        For the engine's work queue: listeners must be quick and must not write.
        """
        with self.lock:
            self._listeners.append(listener)

    # -- watch support -------------------------------------------------------
    def changes_since(self, rv: int) -> list[Change]:
        """Every change after ``rv``; TooOldResourceVersion if the log lost some."""
        with self.lock:
            if not self.history.covers(rv):
                raise TooOldResourceVersion(rv)
            return self.history.since(rv)

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

    def close(self) -> None:
        """End every open watch on this store (reset or shutdown)."""
        with self._changed:
            self.closed = True
            self._changed.notify_all()

    # -- internals -----------------------------------------------------------
    def _keys(self, resource: ResourceKey) -> list[tuple[str, ObjectKey]]:
        keys = self._sorted_keys.get(resource)
        if keys is None:
            keys = sorted((sort_key(k), k) for k in self._objects.get(resource, {}))
            self._sorted_keys[resource] = keys
        return keys

    def _stamp(self, obj: Obj) -> Obj:
        """A shallow-new object with the next resourceVersion in its metadata."""
        self._rv += 1
        stamped = dict(obj)
        stamped["metadata"] = dict(obj.get("metadata") or {}, resourceVersion=str(self._rv))
        return stamped

    def _record(self, kind: str, resource: ResourceKey, key: ObjectKey, obj: Obj, prev: Obj | None) -> None:
        change = Change(self._rv, kind, resource[0], resource[1], key[0], key[1], obj, prev)
        self.history.append(change)
        for listener in self._listeners:
            listener(change)
        if self._waiting:
            self._changed.notify_all()


def _field(obj: Obj | None, path: FieldPath) -> str | None:
    """The string at ``path`` in ``obj``; None when absent, empty or not a string."""
    value: Any = obj
    for part in path:
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value if isinstance(value, str) and value else None


def _index_add(index: dict[str, set[ObjectKey]], value: str | None, key: ObjectKey) -> None:
    if value is not None:
        index.setdefault(value, set()).add(key)


def _index_remove(index: dict[str, set[ObjectKey]], value: str | None, key: ObjectKey) -> None:
    keys = index.get(value) if value is not None else None
    if keys is not None:
        keys.discard(key)
        if not keys:
            del index[value]


def _object_key(obj: Obj) -> ObjectKey:
    meta = obj["metadata"]
    return (meta.get("namespace") or "", meta["name"])



def sort_key(key: ObjectKey) -> str:
    """The etcd key suffix ("namespace/name" or "name"): upstream lists sort by it."""
    namespace, name = key
    return f"{namespace}/{name}" if namespace else name
