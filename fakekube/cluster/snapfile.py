"""Snapshots as files: ``Cluster.save(path)`` / ``Cluster.load(path)`` (docs/snapshots.md).

A snapshot (cluster/snapshot.py) is a graph of live objects. This module writes that graph
as *data* and reads it back without letting the file choose any code to run: no pickle, no
``eval``, no ``marshal``. A file from anywhere is safe to load.

* Every object of a fakekube class is written as (its class's symbolic name, its fields). The
  name must be in the explicit allow-list of cluster/snapfile_names.py; load looks it up in
  that list only (a name outside it is refused before anything is imported) and makes the
  object with ``object.__new__`` and its fields — no ``__init__``, ``__setstate__`` or
  ``__reduce__`` of the file's choosing runs. Functions and bound methods (timer callbacks,
  ``functools.partial``) are written by qualified name, allowed only if in the same list;
  a closure has no name and is refused at save time, as is any class not in the list (a
  TypeError naming the path to it, as statecopy does for generators).
* Containers, scalars, times, random generators' states, locks (made fresh) are written as
  tagged JSON; stored objects as their JSON (frozen again on load when the guard is on).
* A class may name fields that are not written (``SNAPSHOT_FILE_TRANSIENT``: load sets them
  to None): hooks of the serving layer, which sets them again (the store's ``write_timing``).
* What a snapshot shares with the Cluster rather than holds (the Cluster itself, its config,
  the service network, log streams, time observers: snapshot._not_state) is written as a
  symbol that load resolves against the loading cluster.

Layout: ``MAGIC`` then a zlib-compressed UTF-8 JSON document: ``{"header": {...}, "config":
value, "time": value, "resourceVersion": int, "nodes": [node...], "root": value}``, then
(optionally) a second zlib stream holding a JSON list: the nodes a phased load's second phase
decodes, which the document's ``nodes`` holds as ``null`` (so the first phase parses only its
own half; :func:`split_nodes`). A value
is a JSON scalar or a tagged list (``["#", n]`` refers to node n); a node is a tagged list
whose fields are values. Shared references stay shared (one node, many refs), cycles are
allowed through mutable nodes. The header names the format version, the fakekube version and
the Kubernetes version; load refuses any other (:class:`SnapshotFileError`, a ValueError,
with the reason), and any truncated, garbled or hostile file the same way.
"""

from __future__ import annotations

import array
import base64
import collections
import datetime
import decimal
import enum
import functools
import importlib
import ipaddress
import itertools
import json
import math
import operator
import os
import queue
import random
import re
import sys
import threading
import types
import weakref
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from fakekube.cluster.snapfile_names import CLASSES, FUNCTIONS
from fakekube.cluster.snapshot import SERVING_PARTS
from fakekube.record import FrozenRecord
from fakekube.store.frozen import FrozenDict, FrozenList, freeze

if TYPE_CHECKING:
    from fakekube.cluster.cluster import Cluster
    from fakekube.cluster.snapshot import Snapshot

#: The first bytes of every snapshot file.
MAGIC = b"FAKEKUBE-SNAPSHOT\n"
#: This module's layout; a file of another is refused (2: the second phase's nodes in a
#: stream of their own).
FORMAT_VERSION = 2
#: A file larger than this is refused before it is decompressed (a zip bomb as much as a
#: mistake); each of its two decompressed streams has the same bound.
MAX_FILE_BYTES = 1 << 30
#: How deep the saved graph may nest through immutable values (tuples in tuples…) — the only
#: recursion load does; a deeper file is refused as garbled.
MAX_NESTING = 100
#: Recursion the save may need while walking the live graph depth first (snapshot.py's).
_SAVE_RECURSION_LIMIT = 20_000

_LOCK = type(threading.Lock())
_RLOCK = type(threading.RLock())
_VIEWS = {type({}.keys()): "keys", type({}.values()): "values", type({}.items()): "items"}
_FRESH_TAGS: dict[type, str] = {_LOCK: "lock", _RLOCK: "rlock", threading.local: "local", queue.Queue: "queue",
                                weakref.WeakValueDictionary: "wvd", weakref.WeakKeyDictionary: "wkd",
                                weakref.WeakSet: "wset"}
_FRESH_MAKERS: dict[str, Callable[[], Any]] = {**{tag: cls for cls, tag in _FRESH_TAGS.items()},
                                               "lock": threading.Lock, "rlock": threading.RLock}
_IP_TYPES: dict[str, Callable[[str], Any]] = {
    "IPv4Address": ipaddress.IPv4Address, "IPv6Address": ipaddress.IPv6Address,
    "IPv4Network": ipaddress.IPv4Network, "IPv6Network": ipaddress.IPv6Network,
    "IPv4Interface": ipaddress.IPv4Interface, "IPv6Interface": ipaddress.IPv6Interface}


class SnapshotFileError(ValueError):
    """A snapshot file that cannot be loaded: another version, truncated, garbled or hostile
    (the message says which and why)."""


def header(kubernetes_version: str) -> dict[str, Any]:
    """What a file says about where it comes from (load compares it with its own)."""
    from fakekube import __version__
    return {"format": FORMAT_VERSION, "fakekube": __version__, "kubernetes": kubernetes_version}


# -- save ----------------------------------------------------------------------------------------
def dumps(snapshot: "Snapshot", state: dict[str, Any], symbols: dict[int, Any], stored: Iterable[object],
          kubernetes_version: str, crds: Iterable[tuple[str, Any]] = ()) -> bytes:
    """The file's bytes for ``snapshot`` (``state``: a copy of what it holds); ``symbols`` maps id(shared object) → its symbol,
    ``stored`` are the stored objects (written as JSON), ``crds`` the (owner, CRD) pairs whose
    types load makes again. TypeError naming the path to what cannot be written."""
    encoder = _Encoder(symbols, stored)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, _SAVE_RECURSION_LIMIT))
    try:
        document = {"header": header(kubernetes_version), "config": encoder.value(snapshot.config, "config"),
                    "time": encoder.value(snapshot.time, "time"), "resourceVersion": snapshot.resource_version,
                    "custom": [[owner, encoder.value(crd, "crd")] for owner, crd in crds],
                    "root": encoder.value(state, "state")}
    finally:
        sys.setrecursionlimit(limit)
    document["nodes"] = encoder.nodes
    if isinstance(document["root"], list) and document["root"][:1] == ["#"]:
        document["serving"] = serving_nodes(encoder.nodes, document["root"][1])
    return document_bytes(document)


def document_bytes(document: dict[str, Any]) -> bytes:
    """A file's bytes for a whole ``document``: the nodes only a phased load's second phase
    decodes go to a second compressed stream (:func:`split_nodes`)."""
    first, later = split_nodes(document)
    streams = [{**document, "nodes": first}, later]
    return MAGIC + b"".join(zlib.compress(json.dumps(part, separators=(",", ":"), ensure_ascii=False,
                                                     allow_nan=False).encode("utf-8"), 6) for part in streams)


def split_nodes(document: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    """(the document's nodes with ``None`` for each node only the second phase needs, those
    nodes in order). The first phase needs the ``"serving"`` nodes, the state's root node,
    and everything the config, time and served CRDs reach (decoded before the state)."""
    nodes = document["nodes"]
    root = document["root"]
    if "serving" not in document or not (isinstance(root, list) and root[:1] == ["#"]):
        return nodes, []
    first = {*document["serving"], root[1]}
    pending = [target for key in ("config", "time", "custom") for target, _ in _value_references(document[key])]
    while pending:
        index = pending.pop()
        if index in first:
            continue
        first.add(index)
        if nodes[index][0] != "j":
            pending.extend(target for target, _ in _references(nodes[index]))
    later = [node for index, node in enumerate(nodes) if index not in first]
    return [node if index in first else None for index, node in enumerate(nodes)], later


def _value_references(value: Any) -> list[tuple[int, bool]]:
    found: list[tuple[int, bool]] = []
    _collect(value, False, found)
    return found


def save(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all (a temporary file renamed over it)."""
    target = Path(path)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        temporary.write_bytes(data)
        os.replace(temporary, target)
    finally:
        if temporary.exists():
            temporary.unlink()


def _name(obj: Any) -> str:
    return f"{obj.__module__}:{obj.__qualname__}"


# -- the serving side (a phased load, docs/snapshots.md "Phased boot") ---------------------------
#: The modules whose objects the serving side decodes; an edge from a mutable node of that
#: side to an object, method or partial of any other module (the engine, controllers,
#: scheduler, kubelets: a clock timer's callback, the store's change listener, the
#: apiserver's kubelet streams) is left to the second phase.
SERVING_MODULES = ("fakekube.api.", "fakekube.store.", "fakekube.clock.", "fakekube.random.", "fakekube.objects.")
#: Mutable nodes: a reference they hold may be filled in later (a list item, a dict value, a field).
_CUT_FROM = frozenset({"d", "od", "dd", "l", "q", "o"})


def serving_nodes(nodes: list[Any], root: int) -> list[int]:
    """The nodes a phased load decodes first (ascending): everything the ``SERVING_PARTS``
    reach without going from a mutable node into another part's object. Immutable nodes are
    followed whole, so an edge left for later always sits where it can be filled in."""
    entry = nodes[root]
    if entry[0] != "d":
        return []
    pairs = entry[1]
    starts = [pairs[i + 1][1] for i in range(0, len(pairs), 2)
              if pairs[i] in SERVING_PARTS and isinstance(pairs[i + 1], list) and pairs[i + 1][:1] == ["#"]]
    seen = set(starts)
    pending = list(starts)
    while pending:
        index = pending.pop()
        node = nodes[index]
        if node[0] == "j":
            continue  # a stored object's JSON refers to nothing
        cut = node[0] in _CUT_FROM
        for target, in_key in _references(node):
            if target in seen or (cut and not in_key and not _serves(nodes, target)):
                continue
            seen.add(target)
            pending.append(target)
    return sorted(seen)


def _references(node: list[Any]) -> list[tuple[int, bool]]:
    """The node indices ``node`` refers to, each with whether it is in a mapping's key."""
    found: list[tuple[int, bool]] = []
    if node[0] in ("d", "od", "dd"):
        pairs = node[-1]
        for position, item in enumerate(pairs):
            _collect(item, position % 2 == 0, found)
        if node[0] == "dd":
            _collect(node[1], False, found)
        return found
    for item in node[1:]:
        _collect(item, False, found)
    return found


def _collect(value: Any, in_key: bool, found: list[tuple[int, bool]]) -> None:
    if isinstance(value, list):
        if len(value) == 2 and value[0] == "#" and type(value[1]) is int:
            found.append((value[1], in_key))
            return
        for item in value:
            _collect(item, in_key, found)
    elif isinstance(value, dict):
        for item in value.values():
            _collect(item, in_key, found)


def _serves(nodes: list[Any], index: int) -> bool:
    """Whether node ``index`` belongs to the serving side: anything but an object, method or
    partial of another module than :data:`SERVING_MODULES`."""
    node = nodes[index]
    tag = node[0]
    if tag in ("o", "oi", "fr", "nt", "rnd"):
        return str(node[1]).startswith(SERVING_MODULES)
    if tag == "m":
        return str(node[2]).startswith(SERVING_MODULES)
    if tag == "p":
        function = node[1]
        if isinstance(function, list) and function[:1] == ["fn"]:
            return str(function[1]).startswith(SERVING_MODULES)
        if isinstance(function, list) and function[:1] == ["#"] and type(function[1]) is int:
            return _serves(nodes, function[1])
    return True


class _Encoder:
    """Walks the live graph once; every container or object becomes one node."""

    def __init__(self, symbols: dict[int, Any], stored: Iterable[object]) -> None:
        self.nodes: list[Any] = []
        self.memo: dict[int, list[Any]] = {}
        self.symbols = symbols
        self.stored = {id(obj) for obj in stored}
        self._keep: list[object] = []
        self._building: set[int] = set()
        from fakekube.kubelet.fs import Stores  # the kubelet's: a save has a cluster, a load may not need it
        self._stores_type = Stores

    def value(self, obj: Any, path: Any) -> Any:
        kind = type(obj)
        if kind is str or kind is int or kind is bool or obj is None:
            return obj
        if kind is float:
            return obj if math.isfinite(obj) else ["f", repr(obj)]
        ref = self.memo.get(id(obj))
        if ref is not None:
            return ref
        symbol = self.symbols.get(id(obj))
        if symbol is not None:
            return ["@", symbol]
        if kind is tuple and all(type(item) in _SCALARS for item in obj):
            return ["t", [self.value(item, path) for item in obj]]
        inline = self._inline(obj, path)
        if inline is not None:
            return inline
        if id(obj) in self._building:
            raise TypeError(f"cannot save a cycle through immutable {kind.__qualname__} at {_render(path)}")
        self._building.add(id(obj))
        ref = ["#", len(self.nodes)]
        self.nodes.append(None)
        if _mutable(obj):
            self.memo[id(obj)] = ref  # a cycle back to it refers to it
        self._keep.append(obj)
        self.nodes[ref[1]] = self._node(obj, path)
        self.memo[id(obj)] = ref
        self._building.discard(id(obj))
        return ref

    def _inline(self, obj: Any, path: Any) -> Any:
        """Values that are written in place (no identity to keep); None for a node."""
        kind = type(obj)
        if kind is datetime.datetime:
            return ["dt", obj.isoformat()]
        if kind is datetime.timedelta:
            return ["td", obj.days, obj.seconds, obj.microseconds]
        if kind is datetime.date:
            return ["date", obj.isoformat()]
        if kind is datetime.timezone:
            return ["tz", obj.utcoffset(None).total_seconds()]
        if kind is bytes:
            return ["b", base64.b64encode(obj).decode("ascii")]
        if kind is decimal.Decimal:
            return ["dec", str(obj)]
        if kind is complex:
            return ["cx", self.value(obj.real, path), self.value(obj.imag, path)]
        if kind is range:
            return ["rg", obj.start, obj.stop, obj.step]
        if isinstance(obj, enum.Enum):
            if type(obj.value) not in (int, str):
                raise TypeError(f"cannot save {kind.__qualname__} at {_render(path)}: an enum whose value is not "
                                "an int or a string")
            return ["e", self._allowed_class(kind, path), obj.value]  # by value: a Flag's members combine
        if isinstance(obj, type):
            return ["c", self._allowed_class(obj, path)]
        if kind is types.FunctionType:
            return ["fn", self._allowed_function(obj, path)]
        if kind is types.BuiltinFunctionType:
            return ["fn", self._allowed_function(obj, path)]
        if kind in _IP_TYPES.values():
            return ["ip", kind.__name__, str(obj)]
        return None

    def _node(self, obj: Any, path: Any) -> list[Any]:
        kind = type(obj)
        value = self.value
        if id(obj) in self.stored:
            return ["j", _json_data(obj, path)]
        if kind is dict or kind is FrozenDict:
            return ["d", self._pairs(obj, path)]
        if kind is list or kind is FrozenList:
            return ["l", [value(item, path) for item in obj]]
        if kind is tuple:
            return ["t", [value(item, path) for item in obj]]
        if kind is collections.OrderedDict:
            return ["od", self._pairs(obj, path)]
        if kind is collections.defaultdict:
            return ["dd", value(obj.default_factory, path), self._pairs(obj, path)]
        if kind is set or kind is frozenset:
            return ["s" if kind is set else "fs", [value(item, path) for item in _ordered(obj)]]
        if kind is collections.deque:
            return ["q", obj.maxlen, [value(item, path) for item in obj]]
        if kind is array.array and obj.typecode == "q":
            return ["a64", obj.tolist()]
        if kind is self._stores_type:  # unpacked: the file holds the trees as data, never marshal's bytes
            return ["fsst", self._pairs(dict(obj.items()), path)]
        if kind in _FRESH_TAGS:
            return [_FRESH_TAGS[kind]]
        if kind is threading.Condition:
            return ["cond", value(obj._lock, path)]
        if kind is threading.Event:
            return ["ev", obj.is_set()]
        if isinstance(obj, threading.Thread):
            return ["none"]
        if kind is itertools.count:
            return ["cnt", int(repr(obj)[6:-1])]
        if kind is types.MethodType:
            return ["m", value(obj.__self__, (path, ".__self__")), self._allowed_function(obj.__func__, path)]
        if kind is functools.partial:
            return ["p", value(obj.func, path), [value(arg, path) for arg in obj.args],
                    self._pairs(obj.keywords, path)]
        if kind is re.Pattern:
            return ["re", value(obj.pattern, path), obj.flags]
        if kind is operator.itemgetter:
            return ["ig", [value(item, path) for item in _itemgetter_items(obj)]]
        if kind in _VIEWS:
            return ["view", _VIEWS[kind], value(dict(obj.mapping), path)]
        if isinstance(obj, random.Random):
            version, internal, gauss = obj.getstate()  # the Mersenne Twister's 625 words: one JSON list
            return ["rnd", self._allowed_class(kind, path), [version, list(internal), value(gauss, path)],
                    self._fields(getattr(obj, "__dict__", {}), path)]
        if isinstance(obj, FrozenRecord):
            return ["fr", self._allowed_class(kind, path), self._fields(obj.fields(), path)]
        if isinstance(obj, tuple) and hasattr(kind, "_fields"):
            return ["nt", self._allowed_class(kind, path), [value(item, path) for item in obj]]
        if isinstance(obj, (dict, list, tuple, set)):
            raise TypeError(f"cannot save {kind.__qualname__} at {_render(path)}: a container subclass")
        tag = "o" if _mutable(obj) else "oi"  # "oi": hashed by value, built before use as a key
        fields = _object_fields(obj)
        for name in getattr(kind, "SNAPSHOT_FILE_TRANSIENT", ()):  # hooks the serving layer sets again
            if name in fields:
                fields[name] = None
        return [tag, self._allowed_class(kind, path), self._fields(fields, path)]

    def _pairs(self, mapping: dict[Any, Any], path: Any) -> list[Any]:
        out: list[Any] = []
        value = self.value
        for key, item in mapping.items():
            out.append(value(key, path))
            out.append(value(item, (path, key)))
        return out

    def _fields(self, fields: dict[str, Any], path: Any) -> dict[str, Any]:
        return {name: self.value(item, (path, "." + name)) for name, item in fields.items()}

    def _allowed_class(self, cls: type, path: Any) -> str:
        name = _name(cls)
        if name not in CLASSES:
            raise TypeError(f"cannot save {name} at {_render(path)}: not in the snapshot file's allow-list "
                            "(fakekube/cluster/snapfile_names.py)")
        return name

    def _allowed_function(self, fn: Any, path: Any) -> str:
        """``fn``'s name, which load resolves to ``fn`` itself: a module-level function or a
        method (a closure or a lambda has no such name: TypeError, as for any name outside
        the allow-list)."""
        module = getattr(fn, "__module__", None) or getattr(getattr(fn, "__self__", None), "__name__", "builtins")
        name = f"{module}:{fn.__qualname__}"
        if not _names(name, fn):
            raise TypeError(f"cannot save function {name} at {_render(path)}: it has no name to load it by "
                            "(a closure, lambda or nested function: state must be data — a module-level "
                            "function, or a functools.partial of one)")
        if name not in FUNCTIONS:
            raise TypeError(f"cannot save function {name} at {_render(path)}: not in the snapshot file's "
                            "allow-list (fakekube/cluster/snapfile_names.py)")
        return name


def _names(name: str, fn: Any) -> bool:
    """Whether ``name`` resolves to ``fn`` itself."""
    try:
        return _resolve(name) is fn
    except (ImportError, AttributeError):
        return False


_SCALARS = frozenset({str, int, bool, type(None)})


def _mutable(obj: Any) -> bool:
    """Whether a node may be referred to before it is complete (a cycle through it)."""
    return not isinstance(obj, (tuple, frozenset, FrozenRecord, types.MethodType, functools.partial, re.Pattern,
                                operator.itemgetter)) and type(obj).__hash__ in (None, object.__hash__)


def _ordered(items: set[Any] | frozenset[Any]) -> list[Any]:
    """A set's items in a deterministic order (sorted when comparable, else as iterated)."""
    try:
        return sorted(items)
    except TypeError:
        return list(items)


def _itemgetter_items(getter: Any) -> tuple[Any, ...]:
    items: tuple[Any, ...] = getter.__reduce__()[1]
    return items


def _object_fields(obj: Any) -> dict[str, Any]:
    fields = dict(getattr(obj, "__dict__", {}))
    kind: Any = type(obj)
    for name in _slots(kind):
        if hasattr(obj, name):
            fields[name] = getattr(obj, name)
    return fields


@functools.lru_cache(maxsize=None)
def _slots(cls: Any) -> tuple[str, ...]:
    names: list[str] = []
    for base in cls.__mro__:
        for name in base.__dict__.get("__slots__", ()):
            if name not in ("__dict__", "__weakref__") and name not in names:
                names.append(name)
    return tuple(names)


def _json_data(obj: Any, path: Any) -> Any:
    """A stored object as plain JSON (TypeError if it is not JSON all through)."""
    kind = type(obj)
    if kind is dict or kind is FrozenDict:
        out = {}
        for key, item in obj.items():
            if type(key) is not str:
                raise TypeError(f"cannot save stored object at {_render(path)}: key {key!r} is not a string")
            out[key] = _json_data(item, path)
        return out
    if kind is list or kind is FrozenList:
        return [_json_data(item, path) for item in obj]
    if kind is float and not math.isfinite(obj):
        raise TypeError(f"cannot save stored object at {_render(path)}: {obj!r} is not JSON")
    if kind in (str, int, bool, float) or obj is None:
        return obj
    raise TypeError(f"cannot save stored object at {_render(path)}: {kind.__qualname__} is not JSON")


def _render(path: Any) -> str:
    steps: list[str] = []
    while isinstance(path, tuple):
        path, step = path
        steps.append(step if isinstance(step, str) and step.startswith(".") else f"[{step!r:.40}]")
    steps.append(str(path))
    return "".join(reversed(steps)) or "the root"


# -- load ----------------------------------------------------------------------------------------
def read(path: str | Path) -> bytes:
    target = Path(path)
    try:
        size = target.stat().st_size
        if size > MAX_FILE_BYTES:
            raise SnapshotFileError(f"{target}: {size} bytes, more than a snapshot file may have ({MAX_FILE_BYTES})")
        return target.read_bytes()
    except OSError as error:
        raise SnapshotFileError(f"{target}: cannot read it: {error.strerror or error}") from None


def parse(data: bytes, kubernetes_version: str) -> dict[str, Any]:
    """The file's document, its header checked against this process (SnapshotFileError)."""
    if not data.startswith(MAGIC):
        raise SnapshotFileError("not a fakekube snapshot file (it does not start with the snapshot file's magic)")
    document, later = _inflated_json(data[len(MAGIC):], "the file is truncated (its compressed content ends early)",
                                     rest_allowed=True)
    if not isinstance(document, dict) or not isinstance(document.get("header"), dict):
        raise SnapshotFileError("the file is garbled: no header")
    document[_LATER] = later  # the second phase's nodes, parsed when it runs (complete_nodes)
    found, own = document["header"], header(kubernetes_version)
    if found.get("format") != own["format"]:
        raise SnapshotFileError(f"snapshot file format {found.get('format')!r}; this fakekube reads format {own['format']}")
    if found.get("fakekube") != own["fakekube"]:
        raise SnapshotFileError(f"the file was saved by fakekube {found.get('fakekube')!r}; this is fakekube "
                                f"{own['fakekube']}: a snapshot loads only into the version that saved it")
    for key in ("config", "time", "resourceVersion", "custom", "nodes", "root"):
        if key not in document:
            raise SnapshotFileError(f"the file is garbled: no {key!r}")
    return document


def _inflated_json(data: bytes, cut_short: str, rest_allowed: bool) -> tuple[Any, bytes]:
    """The JSON value of the zlib stream ``data`` starts with (at most MAX_FILE_BYTES once
    inflated) and the bytes after that stream — which, unless ``rest_allowed``, make it
    ``cut_short`` as an unfinished stream does; SnapshotFileError when it is too large, cut
    short or not JSON. The file's two streams are read alike."""
    try:
        inflater = zlib.decompressobj()
        text = inflater.decompress(data, MAX_FILE_BYTES)
        if inflater.unconsumed_tail:
            raise SnapshotFileError(f"its content is larger than {MAX_FILE_BYTES} bytes")
        if not inflater.eof or (inflater.unused_data and not rest_allowed):
            raise SnapshotFileError(cut_short)
        return json.loads(text.decode("utf-8")), inflater.unused_data
    except (zlib.error, UnicodeDecodeError, ValueError, RecursionError) as error:
        if isinstance(error, SnapshotFileError):
            raise
        raise SnapshotFileError(f"the file is garbled: {error}") from None


#: Where :func:`parse` keeps the file's second stream, still compressed (bytes, which no
#: JSON document can hold: whatever the file put under this key is replaced).
_LATER = "later"


def complete_nodes(document: dict[str, Any]) -> None:
    """Put the nodes of the file's second stream in the places the document holds ``None``
    for (once; a phased load's second phase, or a whole load, does it)."""
    data = document.pop(_LATER, b"")
    nodes = document["nodes"]
    if type(data) is not bytes or not isinstance(nodes, list):
        raise SnapshotFileError("the file is garbled: 'nodes' is not a list")
    missing = [index for index, node in enumerate(nodes) if node is None]
    if not data and not missing:
        return
    later, _ = _inflated_json(data, "the file is garbled or truncated (its second stream)", rest_allowed=False)
    if not isinstance(later, list) or len(later) != len(missing):
        raise SnapshotFileError(f"the file is garbled: it leaves {len(missing)} nodes for its second stream, "
                                f"which holds {len(later) if isinstance(later, list) else 'no list'}")
    for index, node in zip(missing, later):
        nodes[index] = node


def whole_document(path: str | Path) -> dict[str, Any]:
    """The file's document with every node in place (for tools and tests that edit a file:
    :func:`document_bytes` writes it back)."""
    document = parse(read(path), "")
    complete_nodes(document)
    return document


def check_kubernetes(document: dict[str, Any], kubernetes_version: str) -> None:
    found = document["header"].get("kubernetes")
    if found != kubernetes_version:
        raise SnapshotFileError(f"the file holds a Kubernetes {found!r} cluster; this cluster is Kubernetes "
                                f"{kubernetes_version}: a snapshot loads only into the version that saved it")


class Decoder:
    """Rebuilds the graph from a parsed document; every problem is a SnapshotFileError."""

    def __init__(self, document: dict[str, Any], symbols: Callable[[Any], Any], guard: bool) -> None:
        self.document = document
        self.nodes: list[Any] = document["nodes"]
        if not isinstance(self.nodes, list):
            raise SnapshotFileError("the file is garbled: 'nodes' is not a list")
        self.symbols = symbols
        self.guard = guard
        self.built: list[Any] = [_UNBUILT] * len(self.nodes)
        self._depth = 0
        #: A phased load between its phases: the nodes left for the second (None: none left).
        self._later: set[int] | None = None
        #: The mutable node being filled, and those that hold a :class:`_Pending` to replace.
        self._filling: int | None = None
        self._dirty: list[int] = []
        #: Called by a :class:`_Pending` that is used before the second phase ran: runs it
        #: (or waits for it) — the loading cluster's own completion (``Cluster._engine_side``).
        self.complete: Callable[[], None] = self._not_phased

    def run(self, key: str) -> Any:
        return self._guarded(lambda: self._run(key))

    def _run(self, key: str) -> Any:
        if key == "root":
            complete_nodes(self.document)
            self._shells(range(len(self.nodes)))
            self._fill(range(len(self.nodes)))
        return self.value(self.document[key])

    # -- a phased load: the serving side first, the rest later (docs/snapshots.md "Phased boot")
    def run_serving(self) -> dict[str, Any]:
        """Phase one: decode only the file's ``"serving"`` nodes and return the
        ``SERVING_PARTS``. A reference from them to a node left for later is a
        :class:`_Pending` until :meth:`run_rest` puts the node in its place; a file without
        the list (or a reference the list does not cover) is decoded as it is met."""
        return self._guarded(self._run_serving)

    def run_rest(self) -> Any:
        """Phase two: decode every other node, put each in place of its stand-in, and return
        the whole state (the serving parts are the objects phase one returned)."""
        return self._guarded(self._run_rest)

    def _run_serving(self) -> dict[str, Any]:
        serving = self.document.get("serving", [])
        if not isinstance(serving, list) or not all(type(i) is int and 0 <= i < len(self.nodes) for i in serving):
            raise SnapshotFileError("the file is garbled: 'serving' is not a list of its nodes")
        first = sorted(set(serving))
        self._later = set(range(len(self.nodes))).difference(first)
        self._shells(first)
        self._fill(first)
        self._filling = None
        root = self.document["root"]
        if not (type(root) is list and root[:1] == ["#"] and type(root[1]) is int and 0 <= root[1] < len(self.nodes)):
            raise SnapshotFileError("the file is garbled: its state is not a node")
        entry = self.nodes[root[1]]
        if not (isinstance(entry, list) and entry[:1] == ["d"] and isinstance(entry[1], list)):
            raise SnapshotFileError("the file is garbled: its state is not a mapping")
        found = dict(zip(entry[1][::2], entry[1][1::2]))
        return {part: self.value(found[part]) for part in SERVING_PARTS if part in found}

    def _run_rest(self) -> Any:
        complete_nodes(self.document)
        later = sorted(index for index in (self._later or ()) if self.built[index] is _UNBUILT)
        self._later = None
        self._shells(later)
        self._fill(later)
        self._filling = None
        self._patch()
        return self.value(self.document["root"])

    def _guarded(self, run: Callable[[], Any]) -> Any:
        """``run()``, any failure of a garbled file's decoding a :class:`SnapshotFileError`."""
        try:
            return run()
        except SnapshotFileError:
            raise
        except RecursionError:
            raise SnapshotFileError("the file is garbled: its values nest too deep") from None
        except (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError, re.error) as error:
            raise SnapshotFileError(f"the file is garbled: {type(error).__name__}: {error}") from None

    def _patch(self) -> None:
        """Put each node decoded in phase two in place of its :class:`_Pending` (a list item, a
        mapping's value, an object's field: where :func:`serving_nodes` leaves edges)."""
        for index in dict.fromkeys(self._dirty):
            obj, node = self.built[index], self.nodes[index]
            if node[0] in ("l", "q"):
                for position, item in enumerate(obj):
                    if type(item) is _Pending:
                        obj[position] = item.resolved()
            elif node[0] in ("d", "od", "dd"):
                if node[0] == "dd" and type(obj.default_factory) is _Pending:
                    obj.default_factory = obj.default_factory.resolved()
                for key, item in list(obj.items()):
                    if type(key) is _Pending:
                        raise SnapshotFileError(f"the file is garbled: node {index} has a key left for later")
                    if type(item) is _Pending:
                        obj[key] = item.resolved()
            elif node[0] == "o":
                for name in node[2]:
                    item = object.__getattribute__(obj, name)
                    if type(item) is _Pending or type(item) is _PendingFunction:
                        _set_fields(obj, {name: item.resolved()})
            else:
                raise SnapshotFileError(f"the file is garbled: node {index} ({node[0]!r}) refers to a node left for later")
        self._dirty.clear()

    def defers_function(self, name: Any) -> bool:
        """Whether phase one leaves function ``name`` (allow-listed, else SnapshotFileError) to
        a :class:`_PendingFunction`: one of another module than :data:`SERVING_MODULES` in an
        object's field (a store index's function from a controller's module), which phase two
        puts in place — so phase one does not import that module."""
        if not isinstance(name, str) or name not in FUNCTIONS:
            return False  # resolve_function refuses it
        filling = self._filling
        if (self._later is None or self._depth != 0 or filling is None or self.nodes[filling][0] != "o"
                or name.startswith(SERVING_MODULES)):
            return False
        self._dirty.append(filling)
        return True

    def _not_phased(self) -> None:
        raise RuntimeError("a phased load's second phase has no one to run it")

    # Pass 1: an empty shell for every mutable node, so that any reference to it resolves.
    def _shells(self, indices: Iterable[int]) -> None:
        nodes, built = self.nodes, self.built
        for index in indices:
            node = nodes[index]
            if not isinstance(node, list) or not node or not isinstance(node[0], str):
                raise SnapshotFileError(f"the file is garbled: node {index} is not a tagged list")
            maker = _SHELLS.get(node[0])
            if maker is not None:
                built[index] = maker(self, node)

    # Pass 2: fill them (immutable nodes are built when first referred to).
    def _fill(self, indices: Iterable[int]) -> None:
        nodes, built = self.nodes, self.built
        for index in indices:
            node = nodes[index]
            filler = _FILLERS.get(node[0])
            if filler is not None:
                self._filling = index
                filler(self, built[index], node)

    def value(self, encoded: Any) -> Any:
        if type(encoded) is not list:
            return encoded  # a JSON scalar (an object is plain data too: a dict of strings)
        if not encoded or not isinstance(encoded[0], str):
            raise SnapshotFileError("the file is garbled: an untagged value")
        tag = encoded[0]
        if tag == "#":
            return self.node(encoded[1])
        reader = _VALUES.get(tag)
        if reader is None:
            raise SnapshotFileError(f"the file is garbled: unknown value tag {tag!r}")
        return reader(self, encoded)

    def node(self, index: Any) -> Any:
        if type(index) is not int or not 0 <= index < len(self.nodes):
            raise SnapshotFileError(f"the file is garbled: a reference to node {index!r}, which it does not have")
        built = self.built[index]
        if built is _BUILDING:
            raise SnapshotFileError(f"the file is garbled: node {index} refers to itself through immutable values")
        if built is not _UNBUILT:
            return built
        if self._later is not None and self._depth == 0 and self._filling is not None and index in self._later:
            self._dirty.append(self._filling)  # filled in by run_rest
            return _Pending(self, index)
        node = self.nodes[index]
        builder = _BUILDERS.get(node[0])
        if builder is None and node[0] in _SHELLS:  # outside the two passes (the config): at once
            builder = _build_mutable
        if builder is None:
            raise SnapshotFileError(f"the file is garbled: unknown node tag {node[0]!r}")
        self._depth += 1
        if self._depth > MAX_NESTING:
            raise SnapshotFileError(f"the file is garbled: values nest more than {MAX_NESTING} deep")
        self.built[index] = _BUILDING
        try:
            built = builder(self, node)
        finally:
            self._depth -= 1
        self.built[index] = built
        return built

    def values(self, encoded: Any) -> list[Any]:
        if type(encoded) is not list:
            raise SnapshotFileError("the file is garbled: a list of values expected")
        value = self.value
        return [item if type(item) is not list else value(item) for item in encoded]

    def pairs(self, encoded: Any) -> Iterable[tuple[Any, Any]]:
        items = self.values(encoded)
        if len(items) % 2:
            raise SnapshotFileError("the file is garbled: a mapping with an odd number of items")
        return zip(items[::2], items[1::2])

    def fields(self, encoded: Any) -> dict[str, Any]:
        if not isinstance(encoded, dict):
            raise SnapshotFileError("the file is garbled: an object's fields are not a JSON object")
        return {str(name): self.value(item) for name, item in encoded.items()}

    def stored(self, data: Any) -> Any:
        return freeze(data) if self.guard else data


_UNBUILT = object()
_BUILDING = object()


class _PendingFunction:
    """Stands for an allow-listed function a phased load's first phase leaves for later
    (:meth:`Decoder.defers_function`): phase two replaces it with the function; a call before
    that imports the function's module and calls it."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def resolved(self) -> Any:
        return resolve_function(self._name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.resolved()(*args, **kwargs)


class _Pending:
    """Stands for a node a phased load decodes in its second phase, where the first phase
    refers to it (a timer's callback, the store's change listener). Phase two replaces every
    one of them; one used before that (read by a request meanwhile) completes the load first
    (``Decoder.complete``) and acts as the node itself."""

    __slots__ = ("_decoder", "_index")

    def __init__(self, decoder: Decoder, index: int) -> None:
        self._decoder = decoder
        self._index = index

    def resolved(self) -> Any:
        """The node (during phase two: decoded on demand)."""
        return self._decoder.node(self._index)

    def _target(self) -> Any:
        self._decoder.complete()
        built = self._decoder.built[self._index]
        if built is _UNBUILT or built is _BUILDING:
            raise RuntimeError("a phased load's second phase did not decode what the first refers to")
        return built

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target(), name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._target()(*args, **kwargs)


def _build_mutable(decoder: Decoder, node: list[Any]) -> Any:
    new = _SHELLS[node[0]](decoder, node)
    filler = _FILLERS.get(node[0])
    if filler is not None:
        filler(decoder, new, node)
    return new


def resolve_class(name: Any) -> type:
    """The allow-listed class ``name`` (module:qualname); SnapshotFileError for any other."""
    if not isinstance(name, str) or name not in CLASSES:
        raise SnapshotFileError(f"the file names class {name!r}, which is not in the snapshot file's allow-list")
    found = _resolve(name)
    if not isinstance(found, type):
        raise SnapshotFileError(f"{name} is not a class")
    return found


def resolve_function(name: Any) -> Any:
    """The allow-listed function ``name``; SnapshotFileError for any other."""
    if not isinstance(name, str) or name not in FUNCTIONS:
        raise SnapshotFileError(f"the file names function {name!r}, which is not in the snapshot file's allow-list")
    return _resolve(name)


@functools.lru_cache(maxsize=None)
def _resolve(name: str) -> Any:
    module_name, _, qualname = name.partition(":")
    found: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


def _new(cls: Any) -> Any:
    """An instance without ``__init__`` (what the file holds are its fields)."""
    return object.__new__(cls) if cls.__new__ is object.__new__ else cls.__new__(cls)


def _set_fields(obj: Any, fields: dict[str, Any]) -> None:
    kind: Any = type(obj)
    slots = _slots(kind)
    state = getattr(obj, "__dict__", None)
    for name, item in fields.items():
        if name in slots or state is None:
            object.__setattr__(obj, name, item)
        else:
            state[name] = item


def _shell_object(decoder: Decoder, node: list[Any]) -> Any:
    cls = resolve_class(node[1])
    if isinstance(cls, type) and issubclass(cls, (FrozenRecord, tuple, random.Random, BaseException)):
        raise SnapshotFileError(f"the file is garbled: {node[1]} written as a plain object")
    return _new(cls)


def _fill_object(decoder: Decoder, obj: Any, node: list[Any]) -> None:
    _set_fields(obj, decoder.fields(node[2]))


def _build_object(decoder: Decoder, node: list[Any]) -> Any:
    new = _shell_object(decoder, node)
    _fill_object(decoder, new, node)
    return new


def _fill_pairs(decoder: Decoder, obj: dict[Any, Any], node: list[Any]) -> None:
    for key, item in decoder.pairs(node[-1]):
        obj[key] = item


def _shell_defaultdict(decoder: Decoder, node: list[Any]) -> Any:
    return collections.defaultdict(None)


def _fill_defaultdict(decoder: Decoder, obj: Any, node: list[Any]) -> None:
    factory = decoder.value(node[1])
    if factory is not None and not callable(factory):
        raise SnapshotFileError("the file is garbled: a defaultdict's factory is not callable")
    obj.default_factory = factory
    _fill_pairs(decoder, obj, node)


def _shell_random(decoder: Decoder, node: list[Any]) -> Any:
    cls = resolve_class(node[1])
    if not issubclass(cls, random.Random):
        raise SnapshotFileError(f"the file is garbled: {node[1]} is not a random generator")
    new = cls.__new__(cls)
    random.Random.__init__(new)
    return new


def _fill_random(decoder: Decoder, obj: random.Random, node: list[Any]) -> None:
    version, internal, gauss = node[2]
    if version != 3 or not isinstance(internal, list) or len(internal) != 625 or \
            not all(type(item) is int for item in internal):
        raise SnapshotFileError("the file is garbled: a random generator's state is not a Mersenne Twister's")
    obj.setstate((version, tuple(internal), decoder.value(gauss)))
    for name, item in decoder.fields(node[3]).items():
        setattr(obj, name, item)


def _build_record(decoder: Decoder, node: list[Any]) -> Any:
    cls = resolve_class(node[1])
    if not issubclass(cls, FrozenRecord):
        raise SnapshotFileError(f"the file is garbled: {node[1]} is not a record")
    fields = decoder.fields(node[2])
    if set(fields) != set(cls._field_names):
        raise SnapshotFileError(f"the file is garbled: {node[1]}'s fields are not {list(cls._field_names)}")
    new = cls.__new__(cls)
    for name in cls._field_names:
        object.__setattr__(new, name, fields[name])
    return new


def _build_named_tuple(decoder: Decoder, node: list[Any]) -> Any:
    cls = resolve_class(node[1])
    if not (issubclass(cls, tuple) and hasattr(cls, "_fields")):
        raise SnapshotFileError(f"the file is garbled: {node[1]} is not a named tuple")
    return tuple.__new__(cls, decoder.values(node[2]))


def _build_method(decoder: Decoder, node: list[Any]) -> Any:
    owner = decoder.value(node[1])
    function = resolve_function(node[2])
    if not isinstance(function, types.FunctionType) or not isinstance(owner, _owner_class(node[2])):
        raise SnapshotFileError(f"the file is garbled: {node[2]} is not a method of the object it is bound to")
    return types.MethodType(function, owner)


def _owner_class(name: str) -> type:
    """The class an allow-listed method's qualified name says it belongs to."""
    module_name, _, qualname = name.partition(":")
    owner = _resolve(f"{module_name}:{qualname.rpartition('.')[0]}")
    if not isinstance(owner, type):
        raise SnapshotFileError(f"the file is garbled: {name} is not a method")
    return owner


def _build_partial(decoder: Decoder, node: list[Any]) -> Any:
    function = decoder.value(node[1])
    if not callable(function):
        raise SnapshotFileError("the file is garbled: a partial of something that is not callable")
    return functools.partial(function, *decoder.values(node[2]), **dict(decoder.pairs(node[3])))


def _build_condition(decoder: Decoder, node: list[Any]) -> Any:
    lock = decoder.value(node[1])
    if not isinstance(lock, (_LOCK, _RLOCK)):
        raise SnapshotFileError("the file is garbled: a condition without a lock")
    return threading.Condition(lock)


def _build_event(decoder: Decoder, node: list[Any]) -> Any:
    event = threading.Event()
    if node[1] is True:
        event.set()
    return event


def _build_count(decoder: Decoder, node: list[Any]) -> Any:
    if type(node[1]) is not int:
        raise SnapshotFileError("the file is garbled: a counter that is not an integer")
    return itertools.count(node[1])


def _build_int64s(decoder: Decoder, node: list[Any]) -> Any:
    if type(node[1]) is not list or not all(type(item) is int and -2**63 <= item < 2**63 for item in node[1]):
        raise SnapshotFileError("the file is garbled: an integer array holds what is not a 64-bit integer")
    return array.array("q", node[1])


def _build_stores(decoder: Decoder, node: list[Any]) -> Any:
    from fakekube.kubelet.fs import Stores  # a kubelet's containers' files: the engine's side
    stores = Stores()
    for store_id, store in decoder.pairs(node[1]):
        if type(store_id) is not str or type(store) is not dict:
            raise SnapshotFileError("the file is garbled: a filesystem store that is not a tree")
        stores[store_id] = store
    return stores


def _build_view(decoder: Decoder, node: list[Any]) -> Any:
    if node[1] not in ("keys", "values", "items"):
        raise SnapshotFileError("the file is garbled: an unknown dict view")
    mapping = decoder.value(node[2])
    if type(mapping) is not dict:
        raise SnapshotFileError("the file is garbled: a view of something that is not a dict")
    return getattr(mapping, node[1])()


def _build_deque(decoder: Decoder, node: list[Any]) -> Any:
    if node[1] is not None and type(node[1]) is not int:
        raise SnapshotFileError("the file is garbled: a deque's maxlen is not an integer")
    return collections.deque(maxlen=node[1])


def _fill_deque(decoder: Decoder, obj: Any, node: list[Any]) -> None:
    obj.extend(decoder.values(node[2]))


def _build_stored(decoder: Decoder, node: list[Any]) -> Any:
    return decoder.stored(node[1])


def _value_function(decoder: Decoder, encoded: list[Any]) -> Any:
    name = encoded[1]
    if decoder.defers_function(name):
        return _PendingFunction(name)
    return resolve_function(name)


def _value_enum(decoder: Decoder, encoded: list[Any]) -> Any:
    cls = resolve_class(encoded[1])
    if not issubclass(cls, enum.Enum):
        raise SnapshotFileError(f"the file is garbled: {encoded[1]} is not an enum")
    if type(encoded[2]) not in (int, str):
        raise SnapshotFileError("the file is garbled: an enum value that is not an int or a string")
    return cls(encoded[2])


def _value_float(decoder: Decoder, encoded: list[Any]) -> float:
    if encoded[1] not in ("nan", "inf", "-inf"):
        raise SnapshotFileError("the file is garbled: an unknown special float")
    return float(encoded[1])


def _value_timezone(decoder: Decoder, encoded: list[Any]) -> datetime.timezone:
    offset = datetime.timedelta(seconds=encoded[1])
    return datetime.timezone.utc if not offset else datetime.timezone(offset)


def _value_ip(decoder: Decoder, encoded: list[Any]) -> Any:
    maker = _IP_TYPES.get(encoded[1])
    if maker is None or not isinstance(encoded[2], str):
        raise SnapshotFileError("the file is garbled: an unknown address type")
    return maker(encoded[2])


def _value_symbol(decoder: Decoder, encoded: list[Any]) -> Any:
    return decoder.symbols(encoded[1])


def _bytes(encoded: list[Any]) -> bytes:
    return base64.b64decode(encoded[1], validate=True)


_SHELLS: dict[str, Callable[[Decoder, list[Any]], Any]] = {
    "d": lambda decoder, node: {}, "l": lambda decoder, node: [], "od": lambda decoder, node: collections.OrderedDict(),
    "dd": _shell_defaultdict, "s": lambda decoder, node: set(), "q": _build_deque, "o": _shell_object,
    "rnd": _shell_random, "none": lambda decoder, node: None,
    **{tag: (lambda maker: lambda decoder, node: maker())(maker) for tag, maker in _FRESH_MAKERS.items()},
}
_FILLERS: dict[str, Callable[[Decoder, Any, list[Any]], None]] = {
    "d": _fill_pairs, "od": _fill_pairs, "dd": _fill_defaultdict,
    "l": lambda decoder, obj, node: obj.extend(decoder.values(node[1])),
    "s": lambda decoder, obj, node: obj.update(decoder.values(node[1])),
    "q": _fill_deque, "o": _fill_object, "rnd": _fill_random,
}
_BUILDERS: dict[str, Callable[[Decoder, list[Any]], Any]] = {
    "t": lambda decoder, node: tuple(decoder.values(node[1])),
    "fs": lambda decoder, node: frozenset(decoder.values(node[1])),
    "oi": _build_object, "nt": _build_named_tuple, "fr": _build_record, "m": _build_method, "p": _build_partial,
    "re": lambda decoder, node: re.compile(decoder.value(node[1]), int(node[2])),
    "ig": lambda decoder, node: operator.itemgetter(*decoder.values(node[1])),
    "view": _build_view, "a64": _build_int64s, "fsst": _build_stores, "cond": _build_condition, "ev": _build_event, "cnt": _build_count, "j": _build_stored,
}
_VALUES: dict[str, Callable[[Decoder, list[Any]], Any]] = {
    "t": lambda decoder, encoded: tuple(decoder.values(encoded[1])),
    "f": _value_float,
    "dt": lambda decoder, encoded: datetime.datetime.fromisoformat(encoded[1]),
    "td": lambda decoder, encoded: datetime.timedelta(days=encoded[1], seconds=encoded[2], microseconds=encoded[3]),
    "date": lambda decoder, encoded: datetime.date.fromisoformat(encoded[1]),
    "tz": _value_timezone,
    "b": lambda decoder, encoded: _bytes(encoded),
    "dec": lambda decoder, encoded: decimal.Decimal(str(encoded[1])),
    "cx": lambda decoder, encoded: complex(float(decoder.value(encoded[1])), float(decoder.value(encoded[2]))),
    "rg": lambda decoder, encoded: range(int(encoded[1]), int(encoded[2]), int(encoded[3])),
    "e": _value_enum,
    "c": lambda decoder, encoded: resolve_class(encoded[1]),
    "fn": _value_function,
    "ip": _value_ip,
    "@": _value_symbol,
}


# -- a cluster's symbols -------------------------------------------------------------------------
def _registry_state(registry: Any) -> Any:
    return registry._snap


def _symbols(cluster: "Cluster", registry: Any) -> dict[int, str]:
    """What the file names rather than holds: the Cluster's own parts (snapshot._not_state),
    the release's Go JSON rules and the registry's types (immutable: the loading process
    makes the same built-in ones from the same config, and a CRD's from the CRD)."""
    from fakekube.api.wire import gojson
    symbols: dict[int, str] = {id(cluster): "cluster", id(cluster.service_network): "service_network",
                               id(cluster.log_streams): "log_streams",
                               id(gojson.for_version(cluster.config.kubernetes_version)): "gojson"}
    for index, observer in enumerate(cluster.time_observers()):
        symbols[id(observer)] = f"observer:{index}"
    state = _registry_state(registry)
    symbols[id(state)] = f"registry:{state.serial}"
    for index, resource_type in enumerate((*state.builtin, *state.aggregated)):
        symbols[id(resource_type)] = f"type:{index}"
    for owner_index, types in enumerate(state.custom.values()):
        for index, resource_type in enumerate(types):
            symbols[id(resource_type)] = f"ctype:{owner_index}:{index}"
    return symbols


def _served_crds(state: Any, store: Any) -> list[tuple[str, Any]]:
    """(owner, stored CRD) of every CRD the registry serves types for, in its order: load
    makes their types again from them (``custom_resource_types``). TypeError for a CRD that
    converts through a webhook: its types hold the apiserver's converter (not yet in files)."""
    from fakekube.objects.kinds import CUSTOM_RESOURCE_DEFINITIONS
    served = []
    for owner in state.custom:
        crd = store.get(CUSTOM_RESOURCE_DEFINITIONS, ("", owner))
        conversion = ((crd or {}).get("spec") or {}).get("conversion") or {}
        if crd is None or conversion.get("strategy") == "Webhook":
            raise TypeError(f"cannot save a cluster serving CustomResourceDefinition {owner} to a file: "
                            + ("its conversion webhook is not in the snapshot file format yet" if crd is not None
                               else "its types outlive it") + " (docs/snapshots.md)")
        served.append((owner, crd))
    return served


def dumps_cluster(cluster: "Cluster", snapshot: "Snapshot") -> bytes:
    """``snapshot`` of ``cluster`` as a file's bytes (TypeError naming what cannot be saved)."""
    state = snapshot.state()
    registry, store = state["registry"], state["store"]
    crds = _served_crds(_registry_state(registry), store)
    symbols = _symbols(cluster, registry)
    return dumps(snapshot, state, symbols, store.stored_objects(), cluster.config.kubernetes_version, crds)


def read_config(path: str | Path, kubernetes_version: str | None) -> tuple[dict[str, Any], Any]:
    """The parsed file at ``path`` and the cluster config it holds (SnapshotFileError)."""
    from fakekube.cluster.config import ClusterConfig
    from fakekube.objects.versions import SUPPORTED_VERSIONS
    document = parse(read(path), kubernetes_version or "")
    found = document["header"].get("kubernetes")
    if kubernetes_version is not None:
        check_kubernetes(document, kubernetes_version)
    elif found not in SUPPORTED_VERSIONS:
        raise SnapshotFileError(f"the file holds a Kubernetes {found!r} cluster; this fakekube serves "
                                f"{', '.join(SUPPORTED_VERSIONS)}")
    config = Decoder(document, _no_symbols, guard=False).run("config")
    if not isinstance(config, ClusterConfig):
        raise SnapshotFileError("the file is garbled: its config is not a cluster config")
    if config.kubernetes_version != found:
        raise SnapshotFileError(f"the file is garbled: its header says Kubernetes {found!r}, "
                                f"its config {config.kubernetes_version!r}")
    return document, config


def _no_symbols(symbol: Any) -> Any:
    raise SnapshotFileError(f"the file is garbled: its config refers to {symbol!r}")


def read_state(document: dict[str, Any], cluster: "Cluster") -> dict[str, Any]:
    """The state parts the document holds, for ``cluster`` (built from its config) to run on."""
    decoder, registry = _cluster_decoder(document, cluster)
    return _checked_state(decoder.run("root"), registry)


def read_state_phased(document: dict[str, Any], cluster: "Cluster") -> tuple[dict[str, Any], Decoder,
                                                                             Callable[[], dict[str, Any]]]:
    """A phased load (docs/snapshots.md "Phased boot"): the :data:`SERVING_PARTS` decoded now,
    the decoder (set its ``complete``), and what decodes the rest and returns the whole state —
    the same objects :func:`read_state` would make, the serving parts those returned now."""
    decoder, registry = _cluster_decoder(document, cluster)
    serving = decoder.run_serving()
    if list(serving) != list(SERVING_PARTS):
        raise SnapshotFileError(f"the file is garbled: its state parts do not begin with {list(SERVING_PARTS)}")
    return serving, decoder, lambda: _checked_state(decoder.run_rest(), registry)


def _checked_state(state: Any, registry: dict[str, Any]) -> dict[str, Any]:
    from fakekube.cluster.snapshot import STATE_PARTS
    if registry.get("state") is None:  # the state names no registry (garbled): nothing to check against
        raise SnapshotFileError("the file is garbled: its state has no registry")
    if not isinstance(state, dict) or list(state) != list(STATE_PARTS):
        raise SnapshotFileError(f"the file is garbled: its state parts are not {list(STATE_PARTS)}")
    return state


def _cluster_decoder(document: dict[str, Any], cluster: "Cluster") -> tuple[Decoder, dict[str, Any]]:
    """A decoder of ``document`` whose symbols resolve against ``cluster``, and where the
    registry state it names will be (``"state"``)."""
    from fakekube.api.wire import gojson
    initial = _registry_state(cluster.registry)
    registry: dict[str, Any] = {"state": None}
    observers = cluster.time_observers()
    fixed: dict[str, Any] = {"cluster": cluster, "service_network": cluster.service_network,
                             "log_streams": cluster.log_streams,
                             "gojson": gojson.for_version(cluster.config.kubernetes_version)}

    def symbol(name: Any) -> Any:
        if not isinstance(name, str):
            raise SnapshotFileError(f"the file is garbled: symbol {name!r}")
        if name in fixed:
            return fixed[name]
        kind, _, argument = name.partition(":")
        if kind in ("registry", "ctype") and registry["state"] is None:
            registry["state"] = _custom_state(decoder, initial)
        registry_state = registry["state"]
        if kind == "registry" and argument.isdigit():
            object.__setattr__(registry_state, "serial", int(argument))  # the saved one's generation
            return registry_state
        builtin = (*initial.builtin, *initial.aggregated)
        if kind == "type" and argument.isdigit() and int(argument) < len(builtin):
            return builtin[int(argument)]
        if kind == "ctype" and re.fullmatch(r"[0-9]+:[0-9]+", argument):
            owner_index, index = map(int, argument.split(":"))
            served = list(registry_state.custom.values())
            if owner_index < len(served) and index < len(served[owner_index]):
                return served[owner_index][index]
        if kind == "observer" and argument.isdigit():
            return observers[int(argument)] if int(argument) < len(observers) else None
        raise SnapshotFileError(f"the file refers to {name!r}, which this fakekube does not have")

    decoder = Decoder(document, symbol, guard=bool(cluster.config.immutability_guard))
    return decoder, registry


def _custom_state(decoder: Decoder, initial: Any) -> Any:
    """The registry's state serving the file's CRDs: ``initial`` (the built-in types) with
    each CRD's types made again from it, in the saved order. A file that serves none (a
    boot cache's) does not load the CRD machinery (structural schemas, CEL) at all: it is
    imported when the first CRD is."""
    custom = decoder.document["custom"]
    if not isinstance(custom, list):
        raise SnapshotFileError("the file is garbled: 'custom' is not a list")
    state = initial
    if not custom:
        return state
    from fakekube.api.types.custom import custom_resource_types
    for entry in custom:
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)):
            raise SnapshotFileError("the file is garbled: a served CRD is not [name, CRD]")
        crd = decoder.value(entry[1])
        if not isinstance(crd, dict):
            raise SnapshotFileError(f"the file is garbled: CRD {entry[0]!r} is not an object")
        state = state.with_owner(entry[0], custom_resource_types(crd, None))
    return state
