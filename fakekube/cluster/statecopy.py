"""A structural copy of a cluster's live state, for snapshots (cluster/snapshot.py).

A snapshot must hold the whole cluster — store, clock and its timers, random streams, the
engine's queue and key timers, every controller's, the scheduler's and the kubelets' memory
— so that a restored cluster continues exactly as the original would. :func:`copy_state`
copies that graph of objects as ``copy.deepcopy`` would, with the differences a snapshot
needs:

* **shared, not copied**: what cannot change — stored objects (the store's contract: a
  write makes a new object, readers never edit one), :class:`~fakekube.record.FrozenRecord`
  values (settings, behaviours), instances of classes that declare ``SNAPSHOT_SHARED = True``
  (immutable once made: the registry's types and states, a release's Go JSON rules),
  scalars, times, types and modules, functions without captured variables — and the
  ``shared`` objects the caller names (the type registry, the
  Cluster itself: what is not state). Sharing is what makes a copy cost what changed
  rather than everything stored;
* **copied with their captured variables**: closures and bound methods, so that a copied
  timer's callback calls into the *copied* engine (``deepcopy`` would keep the original's);
* **made fresh**: locks and conditions (a copy is not held by anyone), thread-locals,
  ``queue.Queue`` (requests waiting on the original are not state), weak containers
  (caches of what lives elsewhere: they refill); a live
  ``threading.Thread`` becomes None (the restored cluster starts its own);
* **copied by the class itself**: a class may define ``__snapshot_copy__(self, copier)``
  (registering its copy in ``copier.memo``) when it knows a faster way — plain data all
  through goes through :meth:`StateCopier.plain` (``marshal``, C speed);
* **refused**: generators, files, sockets — state that cannot be copied (TypeError naming
  the path to it, so that the part holding it is made plain data).

Deterministic: the copy preserves every container's order, and nothing here depends on
object ids beyond the memo that keeps shared references shared.
"""

from __future__ import annotations

import collections
import datetime
import decimal
import enum
import functools
import io
import itertools
import marshal
import operator
import queue
import random
import re
import socket
import threading
import types
import weakref
from typing import Any, Callable, Iterable

from fakekube.record import FrozenRecord
from fakekube.store.frozen import FrozenDict, FrozenList

_ATOMIC = (type(None), bool, int, float, complex, str, bytes, range, datetime.datetime, datetime.date,
           datetime.time, datetime.timedelta, datetime.timezone, decimal.Decimal, type, types.ModuleType,
           types.BuiltinFunctionType, types.BuiltinMethodType, enum.Enum, FrozenRecord, type(Ellipsis),
           types.CodeType, types.WrapperDescriptorType, types.MethodWrapperType, types.MethodDescriptorType,
           FrozenDict, FrozenList, operator.itemgetter, operator.attrgetter, operator.methodcaller, re.Pattern)
_LOCK = type(threading.Lock())
_RLOCK = type(threading.RLock())
_REFUSED = (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType, io.IOBase, socket.socket)
#: How deep a chain of references may go before the copy gives up (a cycle is not a chain:
#: the memo ends those); Python's own recursion limit is raised to fit.
MAX_DEPTH = 4_000


class StateCopier:
    """One copy: ``memo`` maps id(original) → its copy (or itself, when shared)."""

    def __init__(self, shared: Iterable[object] = ()) -> None:
        self.memo: dict[int, Any] = {}
        #: Closures copied with their captured state, by name: state that is not yet data
        #: (a file cannot hold it; tests/integration/test_snapshots.py keeps it empty).
        self.closures_copied: list[str] = []
        #: Originals kept alive while the copy runs (their ids key the memo).
        self._keep: list[object] = []
        for obj in shared:
            self.share(obj)

    def share(self, obj: object) -> None:
        """``obj`` is not copied: the copy refers to it."""
        self.memo[id(obj)] = obj
        self._keep.append(obj)

    def share_all(self, objs: Iterable[object]) -> None:
        memo, keep = self.memo, self._keep
        for obj in objs:
            memo[id(obj)] = obj
            keep.append(obj)

    def copy(self, obj: Any, path: Any = "") -> Any:
        """The copy of ``obj``; ``path`` says where it is (a string, or a (parent path,
        step) pair rendered only when a refusal names it)."""
        if type(obj) in _EXACT_ATOMIC or isinstance(obj, _ATOMIC):
            return obj
        found = self.memo.get(id(obj), _MISSING)
        if found is not _MISSING:
            return found
        self._keep.append(obj)
        if getattr(type(obj), "SNAPSHOT_SHARED", False):
            self.memo[id(obj)] = obj
            return obj
        hook = getattr(type(obj), "__snapshot_copy__", None)
        if hook is not None:
            return hook(obj, self)
        copier = _COPIERS.get(type(obj))
        if copier is not None:
            return copier(self, obj, path)
        return self._other(obj, path)

    def plain(self, data: Any, path: str = "") -> Any:
        """A copy of plain data (dicts, lists, tuples, strings, numbers, None) at C speed
        (``marshal``; shared references inside stay shared); anything else in it (a stored
        object the guard froze, a named tuple) makes it an ordinary :meth:`copy`."""
        try:
            return marshal.loads(marshal.dumps(data))
        except ValueError:
            return self.copy(data, path)

    # -- containers ----------------------------------------------------------------------------
    def _tuple(self, obj: tuple[Any, ...], path: str) -> tuple[Any, ...]:
        if _flat(obj):
            return obj
        items = [self.copy(item, path) for item in obj]
        if all(new is old for new, old in zip(items, obj)):
            self.memo[id(obj)] = obj
            return obj
        new = type(obj)(*items) if hasattr(obj, "_fields") else type(obj)(items)
        self.memo[id(obj)] = new
        return new

    def _list(self, obj: list[Any], path: str) -> list[Any]:
        new: list[Any] = type(obj)() if type(obj) is not list else []
        self.memo[id(obj)] = new
        new.extend(self.copy(item, path) for item in obj)
        return new

    def _dict(self, obj: dict[Any, Any], path: str) -> dict[Any, Any]:
        new: dict[Any, Any]
        if isinstance(obj, collections.defaultdict):
            new = collections.defaultdict(self.copy(obj.default_factory, path))
        else:
            new = type(obj)()
        self.memo[id(obj)] = new
        copy = self.copy
        for key, value in obj.items():
            if type(key) not in _EXACT_ATOMIC and not (type(key) is tuple and _flat(key)):
                key = copy(key, path)
            new[key] = value if type(value) in _EXACT_ATOMIC else copy(value, (path, key))
        return new

    def _set(self, obj: set[Any] | frozenset[Any], path: str) -> Any:
        items = [self.copy(item, path) for item in obj]
        if isinstance(obj, frozenset) and all(new is old for new, old in zip(items, obj)):
            self.memo[id(obj)] = obj
            return obj
        new = type(obj)(items)
        self.memo[id(obj)] = new
        return new

    def _deque(self, obj: collections.deque[Any], path: str) -> collections.deque[Any]:
        new: collections.deque[Any] = collections.deque(maxlen=obj.maxlen)
        self.memo[id(obj)] = new
        new.extend(self.copy(item, path) for item in obj)
        return new

    def _view(self, obj: Any, path: str) -> Any:
        """A dict's keys/values/items view: the same view of a copy of its dict's contents."""
        contents = self._dict(dict(obj.mapping), path)
        new = getattr(contents, _VIEWS[type(obj)])()
        self.memo[id(obj)] = new
        return new

    # -- code ------------------------------------------------------------------------------------
    def _function(self, fn: types.FunctionType, path: str) -> types.FunctionType:
        if not fn.__closure__:
            self.memo[id(fn)] = fn
            return fn
        cells = tuple(types.CellType() for _ in fn.__closure__)
        new = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, cells)
        new.__kwdefaults__, new.__qualname__, new.__dict__ = fn.__kwdefaults__, fn.__qualname__, dict(fn.__dict__)
        self.memo[id(fn)] = new
        changed = False
        for old_cell, cell in zip(fn.__closure__, cells):
            try:
                contents = old_cell.cell_contents
            except ValueError:  # not assigned yet
                continue
            cell.cell_contents = self.copy(contents, (path, f".<{fn.__qualname__}>"))
            changed = changed or cell.cell_contents is not contents
        if not changed:
            self.memo[id(fn)] = fn  # it captured only shared things: keep the original
            return fn
        self.closures_copied.append(fn.__qualname__)
        return new

    def _method(self, method: types.MethodType, path: str) -> types.MethodType:
        owner = self.copy(method.__self__, path)
        function = self.copy(method.__func__, path)
        if owner is method.__self__ and function is method.__func__:
            return method
        new = types.MethodType(function, owner)
        self.memo[id(method)] = new
        return new

    def _partial(self, obj: functools.partial[Any], path: str) -> functools.partial[Any]:
        new = functools.partial(self.copy(obj.func, path), *self.copy(obj.args, path),
                                **self.copy(obj.keywords, path))
        self.memo[id(obj)] = new
        return new

    # -- what is made fresh ------------------------------------------------------------------
    def _condition(self, obj: threading.Condition, path: str) -> threading.Condition:
        new = threading.Condition(self.copy(obj._lock, path))  # type: ignore[attr-defined]
        self.memo[id(obj)] = new
        return new

    def _event(self, obj: threading.Event, path: str) -> threading.Event:
        new = threading.Event()
        if obj.is_set():
            new.set()
        self.memo[id(obj)] = new
        return new

    def _fresh(self, obj: Any, path: str) -> Any:
        new = _FRESH[type(obj)]()
        self.memo[id(obj)] = new
        return new

    def _thread(self, obj: threading.Thread, path: str) -> None:
        self.memo[id(obj)] = None
        return None

    def _count(self, obj: "itertools.count[int]", path: str) -> "itertools.count[int]":
        new = itertools.count(int(repr(obj)[6:-1]))
        self.memo[id(obj)] = new
        return new

    def _random(self, obj: random.Random, path: str) -> random.Random:
        """A generator's state lives in C, not in its ``__dict__``: carried by get/setstate."""
        new = type(obj).__new__(type(obj))
        random.Random.__init__(new)
        new.setstate(obj.getstate())
        self.memo[id(obj)] = new
        for key, value in getattr(obj, "__dict__", {}).items():
            setattr(new, key, self.copy(value, (path, "." + key)))
        return new

    # -- objects -------------------------------------------------------------------------------
    def _other(self, obj: Any, path: str) -> Any:
        if isinstance(obj, _REFUSED):
            raise TypeError(f"cannot copy {type(obj).__name__} at {_render(path)}: state must be data")
        cls: Any = type(obj)
        inherited = _inherited_copier(cls)
        if inherited is not None:
            return inherited(self, obj, path)
        try:
            new = cls.__new__(cls)
        except TypeError as error:
            raise TypeError(f"cannot copy {cls.__qualname__} at {_render(path)}: {error}") from None
        self.memo[id(obj)] = new
        state = getattr(obj, "__dict__", None)
        if state is not None:
            object.__setattr__(new, "__dict__", {key: self.copy(value, (path, "." + key)) for key, value in state.items()})
        for name in _slots(cls):
            if hasattr(obj, name):
                object.__setattr__(new, name, self.copy(getattr(obj, name), (path, "." + name)))
        return new


_MISSING = object()
#: Exact types that are never copied (a set lookup: the common case, before isinstance).
_EXACT_ATOMIC = frozenset({type(None), bool, int, float, str, bytes, datetime.datetime, datetime.timedelta})


def _flat(items: tuple[Any, ...]) -> bool:
    """A tuple of scalars only (a key such as ("default", "web")): immutable all through."""
    return _EXACT_ATOMIC.issuperset(map(type, items))


def _render(path: Any) -> str:
    """``path`` as text: ``['parts'].pending`` (attribute steps are ".name", keys anything else)."""
    steps: list[str] = []
    while isinstance(path, tuple):
        path, step = path
        steps.append(step if isinstance(step, str) and step.startswith(".") else f"[{step!r:.40}]")
    steps.append(path)
    return "".join(reversed(steps)) or "the root"


@functools.lru_cache(maxsize=None)
def _inherited_copier(cls: type) -> Callable[[StateCopier, Any, str], Any] | None:
    """The copier of the first base in ``_COPIERS`` that ``cls`` derives from (a named
    tuple is a tuple, an OrderedDict subclass a dict), found once per class."""
    return next((copier for base, copier in _COPIERS.items() if issubclass(cls, base)), None)


@functools.lru_cache(maxsize=None)
def _slots(cls: type) -> tuple[str, ...]:
    names: list[str] = []
    for base in cls.__mro__:
        for name in base.__dict__.get("__slots__", ()):
            if name not in ("__dict__", "__weakref__") and name not in names:
                names.append(name)
    return tuple(names)


_VIEWS = {type({}.keys()): "keys", type({}.values()): "values", type({}.items()): "items"}
_FRESH: dict[type, Callable[[], Any]] = {_LOCK: threading.Lock, _RLOCK: threading.RLock, threading.local: threading.local,
                                         queue.Queue: queue.Queue, weakref.WeakValueDictionary: weakref.WeakValueDictionary,
                                         weakref.WeakKeyDictionary: weakref.WeakKeyDictionary, weakref.WeakSet: weakref.WeakSet}
_COPIERS: dict[type, Callable[[StateCopier, Any, str], Any]] = {
    tuple: StateCopier._tuple, list: StateCopier._list, dict: StateCopier._dict,
    collections.OrderedDict: StateCopier._dict, collections.defaultdict: StateCopier._dict,
    set: StateCopier._set, frozenset: StateCopier._set, collections.deque: StateCopier._deque,
    types.FunctionType: StateCopier._function, types.MethodType: StateCopier._method,
    functools.partial: StateCopier._partial, threading.Condition: StateCopier._condition,
    threading.Event: StateCopier._event, threading.Thread: StateCopier._thread, itertools.count: StateCopier._count,
    _LOCK: StateCopier._fresh, _RLOCK: StateCopier._fresh, threading.local: StateCopier._fresh,
    queue.Queue: StateCopier._fresh, weakref.WeakValueDictionary: StateCopier._fresh,
    weakref.WeakKeyDictionary: StateCopier._fresh, weakref.WeakSet: StateCopier._fresh,
    random.Random: StateCopier._random,
    **{view: StateCopier._view for view in _VIEWS},
}


def copy_state(root: Any, shared: Iterable[object] = ()) -> Any:
    """A copy of ``root`` as the module docstring says, sharing ``shared``."""
    return StateCopier(shared).copy(root)
