"""A structural copy of a cluster's live state, for snapshots (cluster/snapshot.py).

A snapshot must hold the whole cluster — store, clock and its timers, random streams, the
engine's queue and key timers, every controller's, the scheduler's and the kubelets' memory
— so that a restored cluster continues exactly as the original would. :class:`StateCopier`
copies that graph of objects as ``copy.deepcopy`` would, with the differences a snapshot
needs:

* **shared, not copied**: what cannot change — stored objects (the store's contract: a
  write makes a new object, readers never edit one), :class:`~fakekube.record.FrozenRecord`
  values (settings, behaviours), instances of classes that declare ``SNAPSHOT_SHARED = True``
  (immutable once made: the registry's types and states, a release's Go JSON rules, what the
  scheduler parses from a pod), times, IP addresses and networks, types and modules, functions without captured
  variables, tuples and frozensets of shared things (the store's history of changes) — and the ``shared``
  objects the caller names (the Cluster itself: what is not state). Sharing is what makes a
  copy cost what changed rather than everything stored;
* **copied with their captured variables**: closures and bound methods, so that a copied
  timer's callback calls into the *copied* engine (``deepcopy`` would keep the original's);
* **made fresh**: locks and conditions (a copy is not held by anyone), thread-locals,
  ``queue.Queue`` (requests waiting on the original are not state), weak containers
  (caches of what lives elsewhere: they refill); a live ``threading.Thread`` becomes None
  (the restored cluster starts its own);
* **refused**: generators, files, sockets — state that cannot be copied (TypeError naming
  the path to it, so that the part holding it is made plain data).

How: :meth:`StateCopier.freeze` writes the graph once with the C pickler into a
:class:`Frozen` — bytes plus a table of the shared objects, which the bytes name by index
(``persistent_id``) — and :meth:`Frozen.thaw` makes a new copy from it with the C unpickler,
at C speed: a restore is one ``thaw`` (issue 22: a 100-pod cluster in a few milliseconds,
benchmarks/bench_snapshot.py). The bytes never leave the process and are only ever read back
by the process that wrote them, with every shared object already in hand: pickle's rule
against loading untrusted data does not arise (a snapshot *file* has its own, safe format).

Deterministic: the copy preserves every container's order, and nothing here depends on
object ids beyond the tables that keep shared references shared.
"""

from __future__ import annotations

import collections
import datetime
import decimal
import enum
import gc
import io
import ipaddress
import itertools
import operator
import pickle
import queue
import random
import re
import socket
import sys
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
           FrozenDict, FrozenList, operator.itemgetter, operator.attrgetter, operator.methodcaller, re.Pattern,
           ipaddress.IPv4Address, ipaddress.IPv6Address, ipaddress.IPv4Network, ipaddress.IPv6Network)
#: Exact types the pickler writes by value (cheap, and never worth a table entry).
_BY_VALUE = frozenset({type(None), bool, int, float, str, bytes})
_LOCK = type(threading.Lock())
_RLOCK = type(threading.RLock())
_REFUSED = (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType, io.IOBase, socket.socket)
#: How deep a chain of references may go (the pickler recurses once per level, on the C
#: stack; a cluster's state is a few dozen levels deep).
MAX_DEPTH = 4_000
_FRESH: dict[type, Callable[[], Any]] = {_LOCK: threading.Lock, _RLOCK: threading.RLock, threading.local: threading.local,
                                         queue.Queue: queue.Queue, weakref.WeakValueDictionary: weakref.WeakValueDictionary,
                                         weakref.WeakKeyDictionary: weakref.WeakKeyDictionary, weakref.WeakSet: weakref.WeakSet}
_VIEWS = {type({}.keys()): "keys", type({}.values()): "values", type({}.items()): "items"}


class Frozen:
    """A copy of a graph of objects, kept as pickled bytes and the shared objects they name;
    :meth:`thaw` makes a new copy each time it is called."""

    def __init__(self, data: bytes, shared: list[object]) -> None:
        self.data = data
        self.shared = shared

    def with_replaced(self, replaced: dict[int, object]) -> "Frozen":
        """The same copy, naming others where ``replaced`` names shared objects by id (so it
        no longer keeps those alive)."""
        return Frozen(self.data, [_replaced(obj, replaced) for obj in self.shared])

    def thaw(self, replaced: dict[int, object] | None = None) -> Any:
        """A new copy, in which the shared objects ``replaced`` names by id are replaced by
        others (garbage collection paused meanwhile: it would only walk the thousands of new
        objects, all alive)."""
        shared = self.shared
        if replaced:
            shared = [_replaced(obj, replaced) for obj in shared]
        unpickler = pickle.Unpickler(io.BytesIO(self.data))
        unpickler.persistent_load = shared.__getitem__  # type: ignore[method-assign]  # C speed
        collecting = gc.isenabled()
        gc.disable()
        try:
            return unpickler.load()
        finally:
            if collecting:
                gc.enable()


def _replaced(obj: object, replaced: dict[int, object]) -> object:
    """``obj``, or what stands for it in the copy: the replacement ``replaced`` names by id,
    or a shared bound method re-bound to its owner's replacement (``api.pod_logs`` is the
    Cluster's method: a copy restored into another cluster must call that one's)."""
    new = replaced.get(id(obj))
    if new is not None:
        return new
    if type(obj) is types.MethodType:
        owner = replaced.get(id(obj.__self__))
        if owner is not None:
            return types.MethodType(obj.__func__, owner)
    return obj


class StateCopier:
    """Copies graphs of state, sharing what :meth:`share` names (and what the module
    docstring says is shared)."""

    def __init__(self, shared: Iterable[object] = ()) -> None:
        self._shared_ids: dict[int, object] = {}
        #: Closures copied with their captured state, by name: state that is not yet data
        #: (a file cannot hold it; tests/integration/test_snapshots.py keeps it empty).
        self.closures_copied: list[str] = []
        self.share_all(shared)

    def share(self, obj: object) -> None:
        """``obj`` is not copied: the copy refers to it."""
        self._shared_ids[id(obj)] = obj

    def share_all(self, objs: Iterable[object]) -> None:
        shared = self._shared_ids
        for obj in objs:
            shared[id(obj)] = obj

    def share_tree(self, root: object) -> None:
        """``root`` and every dict and list inside it are not copied (an immutable JSON tree:
        a stored object); a part already shared is not walked again (an object's versions
        share most of their parts)."""
        shared = self._shared_ids
        pending = [root]
        while pending:
            value = pending.pop()
            if id(value) in shared:
                continue
            if isinstance(value, dict):
                shared[id(value)] = value
                pending.extend(value.values())
            elif isinstance(value, list):
                shared[id(value)] = value
                pending.extend(value)

    def copy(self, root: Any) -> Any:
        """A copy of ``root`` (:meth:`freeze` then :meth:`Frozen.thaw`)."""
        return self.freeze(root).thaw()

    def freeze(self, root: Any) -> Frozen:
        """``root`` written once, to be thawed into copies (TypeError, naming where, for
        state that cannot be copied)."""
        buffer = io.BytesIO()
        pickler = _Pickler(buffer, self)
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, MAX_DEPTH))
        try:
            pickler.dump(root)
        except _Refused as refused:
            raise TypeError(f"cannot copy {type(refused.obj).__name__} at {_path_to(root, refused.obj)}: "
                            "state must be data") from None
        except (pickle.PicklingError, TypeError, AttributeError) as error:
            raise TypeError(f"cannot copy the state: {error}") from None
        finally:
            sys.setrecursionlimit(limit)
        return Frozen(buffer.getvalue(), pickler.table)

    def is_shared(self, obj: object) -> bool:
        """Whether the copy refers to ``obj`` rather than copying it (scalars aside)."""
        kind = type(obj)
        if id(obj) in self._shared_ids or isinstance(obj, _ATOMIC) or getattr(kind, "SNAPSHOT_SHARED", False):
            return True
        if kind is types.FunctionType:
            return all(self._cell_shared(cell) for cell in obj.__closure__ or ())  # type: ignore[attr-defined]
        if kind is types.MethodType:
            return self.is_shared(obj.__self__) and self.is_shared(obj.__func__)  # type: ignore[attr-defined]
        if isinstance(obj, (tuple, frozenset)):  # immutable: shared when what it holds is
            return all(type(item) in _BY_VALUE or self.is_shared(item) for item in obj)
        return False

    def _cell_shared(self, cell: Any) -> bool:
        try:
            contents = cell.cell_contents
        except ValueError:  # not assigned yet
            return True
        return type(contents) in _BY_VALUE or self.is_shared(contents)


class _Refused(Exception):
    def __init__(self, obj: object) -> None:
        super().__init__()
        self.obj = obj


class _Pickler(pickle.Pickler):
    """Names shared objects by their index in :attr:`table` and writes what pickle cannot
    (closures, bound methods, locks, random streams…) as the module docstring says."""

    def __init__(self, buffer: io.BytesIO, copier: StateCopier) -> None:
        super().__init__(buffer, protocol=pickle.HIGHEST_PROTOCOL)
        self.copier = copier
        self.table: list[object] = []
        self._index: dict[int, int] = {}

    def persistent_id(self, obj: Any) -> int | None:  # called for every object: kept short
        if type(obj) in _BY_VALUE:
            return None
        if type(obj) is _Original:
            obj = obj.function
        elif not self.copier.is_shared(obj):
            return None
        index = self._index.get(id(obj))
        if index is None:
            index = self._index[id(obj)] = len(self.table)
            self.table.append(obj)
        return index

    def reducer_override(self, obj: Any) -> Any:
        kind = type(obj)
        fresh = _FRESH.get(kind)
        if fresh is not None:
            return fresh, ()
        reducer = _REDUCERS.get(kind)
        if reducer is not None:
            return reducer(self, obj)
        if isinstance(obj, _REFUSED):
            raise _Refused(obj)
        if isinstance(obj, random.Random):
            return _random, (kind, obj.getstate(), getattr(obj, "__dict__", {}))
        if isinstance(obj, BaseException):
            return _instance, (kind, obj.args, getattr(obj, "__dict__", {}))
        return NotImplemented


def _reduce_function(pickler: _Pickler, fn: types.FunctionType) -> Any:
    """A closure over state (one over shared things only is shared: persistent_id): a new
    function with the same code and copies of what it captured."""
    pickler.copier.closures_copied.append(fn.__qualname__)
    contents = tuple(_contents(cell) for cell in fn.__closure__ or ())
    return _function, (_Original(fn), contents, dict(fn.__dict__))


class _Original:
    """The closure a copy is made from, named in the table (its code and globals are shared)."""

    def __init__(self, function: types.FunctionType) -> None:
        self.function = function


def _contents(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:
        return _Cell.UNSET


class _Cell(enum.Enum):
    """A closure's cell that is not assigned yet (a function defined before its variable)."""

    UNSET = 0


_REDUCERS: dict[type, Callable[[_Pickler, Any], Any]] = {
    types.FunctionType: _reduce_function,
    types.MethodType: lambda pickler, method: (_method, (method.__func__, method.__self__)),
    threading.Condition: lambda pickler, condition: (threading.Condition, (condition._lock,)),
    threading.Event: lambda pickler, event: (_event, (event.is_set(),)),
    threading.Thread: lambda pickler, thread: (_none, ()),
    itertools.count: lambda pickler, counter: (itertools.count, (int(repr(counter)[6:-1]),)),
    **{view: (lambda pickler, view: (_view, (dict(view.mapping), _VIEWS[type(view)]))) for view in _VIEWS},
}


# -- what thaw calls (module level: pickle names them) ---------------------------------------------
def _function(original: types.FunctionType, contents: tuple[Any, ...], attributes: dict[str, Any]) -> types.FunctionType:
    cells = tuple(types.CellType() if value is _Cell.UNSET else types.CellType(value) for value in contents)
    new = types.FunctionType(original.__code__, original.__globals__, original.__name__, original.__defaults__, cells)
    new.__kwdefaults__, new.__qualname__, new.__dict__ = original.__kwdefaults__, original.__qualname__, attributes
    return new


def _method(function: Callable[..., Any], owner: object) -> types.MethodType:
    return types.MethodType(function, owner)


def _none() -> None:
    """What a live thread becomes: the restored cluster starts its own."""
    return None


def _event(is_set: bool) -> threading.Event:
    event = threading.Event()
    if is_set:
        event.set()
    return event


def _view(contents: dict[Any, Any], name: str) -> Any:
    return getattr(contents, name)()


def _random(kind: Any, state: Any, attributes: dict[str, Any]) -> random.Random:
    """A generator's state lives in C, not in its ``__dict__``: carried by get/setstate
    (made with a seed, which ``setstate`` replaces, rather than from the OS's randomness)."""
    new: random.Random = kind.__new__(kind, 0)
    new.setstate(state)
    new.__dict__.update(attributes)
    return new


def _instance(kind: Any, args: tuple[Any, ...], attributes: dict[str, Any]) -> Any:
    """An exception without its ``__init__`` (whose signature may not be ``*args``)."""
    new = kind.__new__(kind)
    new.args = args
    new.__dict__.update(attributes)
    return new


# -- naming where a refused object is -------------------------------------------------------------
def _path_to(root: Any, target: object) -> str:
    """``['parts'].pending``: the first path from ``root`` to ``target`` (breadth first; only
    when a copy is refused, so its cost does not matter)."""
    seen = {id(root)}
    pending: collections.deque[tuple[Any, str]] = collections.deque([(root, "")])
    while pending:
        obj, path = pending.popleft()
        for step, child in _children(obj):
            if child is target:
                return path + step
            if id(child) not in seen and type(child) not in _BY_VALUE:
                seen.add(id(child))
                pending.append((child, path + step))
    return "the root"


def _children(obj: Any) -> Iterable[tuple[str, Any]]:
    if isinstance(obj, dict):
        return [(f"[{key!r:.40}]", value) for key, value in obj.items()]
    if isinstance(obj, (list, tuple, set, frozenset, collections.deque)):
        return [(f"[{index}]", item) for index, item in enumerate(obj)]
    attributes = getattr(obj, "__dict__", None)
    return [(f".{name}", value) for name, value in attributes.items()] if isinstance(attributes, dict) else []


def copy_state(root: Any, shared: Iterable[object] = ()) -> Any:
    """A copy of ``root`` as the module docstring says, sharing ``shared``."""
    return StateCopier(shared).copy(root)
