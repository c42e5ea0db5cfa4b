"""A container's filesystem: stores of plain data, a mount table, and the system calls the shell needs.

Every filesystem a container sees is made of *stores*, each a tree of entries kept as plain
data (so a cluster snapshot can copy it): a directory is ``["d", mode, mtime_s, {name: entry}]``,
a file ``["f", mode, mtime_s, data]``, a symbolic link ``["l", 0o777, mtime_s, target]`` (lists:
mutable in place, so a write costs the path, not the tree). A store is ``{"root": dir,
"used": bytes}``. The container's root is one store (its image's layout, copied when the
container starts, so every restart begins again from the image); each volume is another
(emptyDir per pod, hostPath per node, a PersistentVolume per volume, the kubelet's files of a
ConfigMap, Secret, downward-API or projected volume), mounted at its ``mountPath`` with its
``subPath`` and ``readOnly``. A :class:`FileSystem` is a short-lived view over those stores for
one command: it resolves paths through mounts and symbolic links (40 links at most, as Linux),
and reads and writes entries, failing as Linux would (:class:`FsError`: ``ENOENT``,
``EROFS``, ``ENOSPC``…).

Bounds: a store holds at most :data:`MAX_STORE_BYTES` (file bytes plus
:data:`ENTRY_COST_BYTES` per entry); a write past it fails with ``ENOSPC`` ("No space left on
device"), as a full disk does.

A container's own program runs once, when the container starts (kubelet/programs.py); its
writes happen at the times it makes them. So a program works on a copy of each store it
writes to (:class:`Overlay`) and its writes are kept as *operations* with their times, which
the kubelet applies to the real stores when the clock reaches them
(:func:`apply_operation`). An exec writes to the real stores at once.
"""

from __future__ import annotations

import copy
import marshal
import posixpath
import stat
from typing import Any, Iterator, MutableMapping, NamedTuple

FILE, DIR, LINK = "f", "d", "l"
#: One entry: see the module docstring.
Entry = list[Any]
Store = dict[str, Any]
StoreMap = MutableMapping[str, Store]

#: The most one store (a container's writable layer, one volume) may hold.
MAX_STORE_BYTES = 512 * 1024 * 1024
#: What an entry costs besides its bytes (a directory entry is not free).
ENTRY_COST_BYTES = 256
#: Symbolic links followed while resolving one path (Linux's MAXSYMLINKS).
MAX_SYMLINKS = 40
DEFAULT_FILE_MODE = 0o644
DEFAULT_DIR_MODE = 0o755

_MESSAGES = {"ENOENT": "No such file or directory", "EEXIST": "File exists", "ENOTDIR": "Not a directory",
             "EISDIR": "Is a directory", "EROFS": "Read-only file system", "ENOSPC": "No space left on device",
             "ENOTEMPTY": "Directory not empty", "ELOOP": "Symbolic link loop", "EINVAL": "Invalid argument",
             "EACCES": "Permission denied", "EBUSY": "Resource busy"}


class FsError(Exception):
    """A failed filesystem call: ``code`` (``ENOENT``…) and the path; ``str()`` is the C library's text."""

    def __init__(self, code: str, path: str) -> None:
        super().__init__(code, path)
        self.code, self.path = code, path

    def __str__(self) -> str:
        return _MESSAGES.get(self.code, self.code)


class Mount(NamedTuple):
    """A store mounted at ``path`` (absolute, normalized); ``sub_path`` is the directory of the
    store that appears there (``/`` for its root)."""

    path: str
    store: str
    sub_path: str = "/"
    read_only: bool = False


def new_store() -> Store:
    return {"root": [DIR, DEFAULT_DIR_MODE, 0.0, {}], "used": 0}


def split(path: str) -> list[str]:
    return [part for part in path.split("/") if part]


def normalize(path: str) -> str:
    """An absolute path without ``.``, ``..``, or repeated slashes (``//etc`` is ``/etc`` here)."""
    parts: list[str] = []
    for part in split(path):
        if part == "..":
            if parts:
                parts.pop()
        elif part != ".":
            parts.append(part)
    return "/" + "/".join(parts)


def entry_bytes(entry: Entry) -> int:
    """What an entry and everything under it costs against a store's bound."""
    if entry[0] == FILE:
        return ENTRY_COST_BYTES + len(entry[3])
    if entry[0] == DIR:
        return ENTRY_COST_BYTES + sum(entry_bytes(child) for child in entry[3].values())
    return ENTRY_COST_BYTES + len(entry[3])


def mode_string(entry: Entry) -> str:
    """``ls -l``'s first column: ``drwxr-xr-x``."""
    kind = {DIR: stat.S_IFDIR, FILE: stat.S_IFREG, LINK: stat.S_IFLNK}[entry[0]]
    return stat.filemode(kind | (entry[1] & 0o7777))


# -- a store's tree (shared by live writes and replayed operations) ---------------------------

def store_get(store: Store, parts: list[str]) -> Entry | None:
    entry: Entry = store["root"]
    for name in parts:
        if entry[0] != DIR:
            return None
        found = entry[3].get(name)
        if found is None:
            return None
        entry = found
    return entry


def _parent(store: Store, parts: list[str], path: str) -> Entry:
    parent = store_get(store, parts[:-1])
    if parent is None:
        raise FsError("ENOENT", path)
    if parent[0] != DIR:
        raise FsError("ENOTDIR", path)
    return parent


def _charge(store: Store, delta: int, path: str, limit_bytes: int) -> None:
    if delta > 0 and store["used"] + delta > limit_bytes:
        raise FsError("ENOSPC", path)
    store["used"] = max(0, store["used"] + delta)


def store_write(store: Store, parts: list[str], data: bytes, append: bool, mode: int, mtime_s: float,
                path: str = "", limit_bytes: int = MAX_STORE_BYTES) -> None:
    """Create or replace (``append``: extend) the file at ``parts``."""
    if not parts:
        raise FsError("EISDIR", path or "/")
    parent = _parent(store, parts, path)
    existing = parent[3].get(parts[-1])
    if existing is not None and existing[0] == DIR:
        raise FsError("EISDIR", path)
    if existing is None or existing[0] != FILE:
        _charge(store, ENTRY_COST_BYTES + len(data) - (entry_bytes(existing) if existing else 0), path, limit_bytes)
        parent[3][parts[-1]] = [FILE, mode, mtime_s, data]
        parent[2] = mtime_s
        return
    new = existing[3] + data if append else data
    _charge(store, len(new) - len(existing[3]), path, limit_bytes)
    existing[3], existing[2] = new, mtime_s


def store_mkdir(store: Store, parts: list[str], mode: int, mtime_s: float, path: str = "",
                limit_bytes: int = MAX_STORE_BYTES) -> None:
    if not parts:
        raise FsError("EEXIST", path or "/")
    parent = _parent(store, parts, path)
    if parts[-1] in parent[3]:
        raise FsError("EEXIST", path)
    _charge(store, ENTRY_COST_BYTES, path, limit_bytes)
    parent[3][parts[-1]] = [DIR, mode, mtime_s, {}]
    parent[2] = mtime_s


def store_link(store: Store, parts: list[str], target: str, mtime_s: float, path: str = "",
               limit_bytes: int = MAX_STORE_BYTES) -> None:
    parent = _parent(store, parts, path)
    if not parts or parts[-1] in parent[3]:
        raise FsError("EEXIST", path)
    _charge(store, ENTRY_COST_BYTES + len(target), path, limit_bytes)
    parent[3][parts[-1]] = [LINK, 0o777, mtime_s, target]


def store_remove(store: Store, parts: list[str], mtime_s: float, path: str = "") -> Entry:
    """Remove the entry (a whole subtree) and return it."""
    if not parts:
        raise FsError("EBUSY", path or "/")
    parent = _parent(store, parts, path)
    entry = parent[3].pop(parts[-1], None)
    if entry is None:
        raise FsError("ENOENT", path)
    store["used"] = max(0, store["used"] - entry_bytes(entry))
    parent[2] = mtime_s
    return entry


def store_put(store: Store, parts: list[str], entry: Entry, mtime_s: float, path: str = "",
              limit_bytes: int = MAX_STORE_BYTES) -> None:
    """Place a whole entry (a moved subtree) at ``parts``, replacing what is there."""
    parent = _parent(store, parts, path)
    old = parent[3].get(parts[-1])
    _charge(store, entry_bytes(entry) - (entry_bytes(old) if old else 0), path, limit_bytes)
    parent[3][parts[-1]] = entry
    parent[2] = mtime_s


#: A recorded write: (kind, store id, path parts, arguments…); see :func:`apply_operation`.
Operation = tuple[Any, ...]


def apply_operation(stores: StoreMap, operation: Operation) -> None:
    """Replay one operation a program made (kubelet/programs.py) on the real stores; one that no
    longer fits (its directory went away meanwhile) is dropped, as the write would have failed."""
    kind, store_id, parts = operation[0], operation[1], list(operation[2])
    store = stores.get(store_id)
    if store is None:
        return
    try:
        if kind == "write":
            store_write(store, parts, operation[3], operation[4], operation[5], operation[6])
        elif kind == "mkdir":
            store_mkdir(store, parts, operation[3], operation[4])
        elif kind == "link":
            store_link(store, parts, operation[3], operation[4])
        elif kind == "remove":
            store_remove(store, parts, operation[3])
        elif kind == "put":
            store_put(store, parts, copy.deepcopy(operation[3]), operation[4])
        elif kind == "meta":
            entry = store_get(store, parts)
            if entry is not None:
                entry[1], entry[2] = operation[3], operation[4]
    except FsError:
        pass


class Stores(MutableMapping[str, Store]):
    """Stores by id, each kept packed (``marshal``'s bytes) until first used: a snapshot
    packs them, and a restored cluster unpacks only the stores a command or a write
    touches — most of a hundred pods' filesystems are never looked at again, and copying
    bytes is what makes a restore take milliseconds (issue 22). Iteration is in insertion
    order, as a dict's."""

    def __init__(self) -> None:
        self._stores: dict[str, Store | bytes] = {}

    def __getitem__(self, store_id: str) -> Store:
        store = self._stores[store_id]
        if isinstance(store, bytes):
            store = self._stores[store_id] = marshal.loads(store)
        return store

    def __setitem__(self, store_id: str, store: Store) -> None:
        self._stores[store_id] = store

    def __delitem__(self, store_id: str) -> None:
        del self._stores[store_id]

    def __contains__(self, store_id: object) -> bool:
        return store_id in self._stores

    def __iter__(self) -> Iterator[str]:
        return iter(self._stores)

    def __len__(self) -> int:
        return len(self._stores)

    def pack(self, store_id: str) -> None:
        """Keep ``store_id`` packed until it is used again: a container's root is about 11 KB
        of dicts and lists and 2 KB packed, and most are not looked at after their start
        (150,000 pods: ~1.3 GB). Whoever uses it next unpacks it (``__getitem__``); a
        caller must not hold the unpacked store across a pack (the kubelet packs at the
        end of a pod's reconcile, on the engine thread, where every use of it runs)."""
        store = self._stores.get(store_id)
        if store is not None and not isinstance(store, bytes):
            self._stores[store_id] = _packed(store)

    def is_packed(self, store_id: str) -> bool:
        return isinstance(self._stores.get(store_id), bytes)

    def __reduce__(self) -> tuple[Any, ...]:
        """Packed: plain data all through, so ``marshal`` writes it at C speed."""
        return _packed_stores, ({store_id: _packed(store) for store_id, store in self._stores.items()},)


def _packed(store: Store | bytes) -> Store | bytes:
    if isinstance(store, bytes):
        return store
    try:
        return marshal.dumps(store)
    except ValueError:  # not plain data after all (an immutable object the guard froze): as it is
        return store


def _packed_stores(packed: dict[str, Store | bytes]) -> Stores:
    stores = Stores()
    stores._stores = packed
    return stores


# -- the view ------------------------------------------------------------------------------

class Overlay:
    """The stores a program sees while it runs: the real ones until it writes to one, then its
    own copy of it; every write is recorded (``operations``, with the program's clock)."""

    def __init__(self, stores: StoreMap) -> None:
        self.real = stores
        self.copies: StoreMap = {}
        self.operations: list[tuple[float, Operation]] = []

    def read(self, store_id: str) -> Store | None:
        return self.copies.get(store_id) or self.real.get(store_id)

    def write(self, store_id: str) -> Store | None:
        if store_id not in self.copies:
            real = self.real.get(store_id)
            if real is None:
                return None
            self.copies[store_id] = copy.deepcopy(real)
        return self.copies[store_id]


class _Direct:
    """The real stores, written in place (an exec)."""

    def __init__(self, stores: StoreMap) -> None:
        self.real = stores

    def read(self, store_id: str) -> Store | None:
        return self.real.get(store_id)

    write = read


class FileSystem:
    """One process's view: the mounts over the stores, its working directory and its clock."""

    def __init__(self, stores: StoreMap | Overlay, mounts: tuple[Mount, ...], now_s: float = 0.0,
                 cwd: str = "/") -> None:
        self.access = stores if isinstance(stores, Overlay) else _Direct(stores)
        self.mounts = tuple(sorted(mounts, key=lambda mount: len(mount.path), reverse=True))
        self.now_s = now_s
        #: Seconds the process's clock has moved since it started (recorded with each operation).
        self.elapsed_s = 0.0
        self.cwd = cwd

    # -- paths ---------------------------------------------------------------------------
    def absolute(self, path: str) -> str:
        return normalize(posixpath.join(self.cwd, path)) if path else self.cwd

    def _mount(self, path: str) -> tuple[Mount, list[str]]:
        """The mount holding ``path`` (canonical) and the path's parts inside its store."""
        for mount in self.mounts:
            if path == mount.path or path.startswith(mount.path.rstrip("/") + "/"):
                rest = path[len(mount.path.rstrip("/")):]
                return mount, split(mount.sub_path) + split(rest)
        raise FsError("ENOENT", path)

    def _entry(self, path: str) -> Entry | None:
        mount, parts = self._mount(path)
        store = self.access.read(mount.store)
        return store_get(store, parts) if store is not None else None

    def resolve(self, path: str, follow: bool = True) -> str:
        """The canonical absolute path (symbolic links followed; the last one only with ``follow``);
        the last component need not exist."""
        pending = split(self.absolute(path))
        done: list[str] = []
        links = 0
        while pending:
            name = pending.pop(0)
            if name == ".":
                continue
            if name == "..":
                if done:
                    done.pop()
                continue
            candidate = "/" + "/".join(done + [name])
            entry = self._entry(candidate)
            if entry is not None and entry[0] == LINK and (pending or follow):
                links += 1
                if links > MAX_SYMLINKS:
                    raise FsError("ELOOP", path)
                target = entry[3]
                if target.startswith("/"):
                    done = []
                pending = split(target) + pending
                continue
            if pending and entry is None:
                raise FsError("ENOENT", path)
            if pending and entry[0] != DIR:  # type: ignore[index]
                raise FsError("ENOTDIR", path)
            done.append(name)
        return "/" + "/".join(done)

    def lookup(self, path: str, follow: bool = True) -> Entry | None:
        """The entry at ``path``, or None when it (or a directory on the way) does not exist."""
        try:
            return self._entry(self.resolve(path, follow))
        except FsError:
            return None

    def stat(self, path: str, follow: bool = True) -> Entry:
        entry = self._entry(self.resolve(path, follow))
        if entry is None:
            raise FsError("ENOENT", path)
        return entry

    def is_dir(self, path: str) -> bool:
        entry = self.lookup(path)
        return entry is not None and entry[0] == DIR

    def read(self, path: str) -> bytes:
        if path == "/dev/null":
            return b""
        entry = self.stat(path)
        if entry[0] == DIR:
            raise FsError("EISDIR", path)
        return bytes(entry[3])

    def listdir(self, path: str) -> list[tuple[str, Entry]]:
        """The directory's entries by name (mount points show the mounted store's root)."""
        canonical = self.resolve(path)
        entry = self._entry(canonical)
        if entry is None:
            raise FsError("ENOENT", path)
        if entry[0] != DIR:
            raise FsError("ENOTDIR", path)
        names = dict(entry[3])
        for mount in self.mounts:
            if posixpath.dirname(mount.path) == canonical and mount.path != canonical:
                mounted = self._entry(mount.path)
                if mounted is not None:
                    names[posixpath.basename(mount.path)] = mounted
        return sorted(names.items())

    def walk(self, path: str) -> Iterator[tuple[str, Entry]]:
        """``path`` and everything under it, parents first, names in order (links not followed
        below the top)."""
        entry = self.stat(path, follow=True)
        yield path, entry
        if entry[0] == DIR:
            for name, _ in self.listdir(path):
                yield from self.walk_entry(posixpath.join(path, name))

    def walk_entry(self, path: str) -> Iterator[tuple[str, Entry]]:
        entry = self.stat(path, follow=False)
        yield path, entry
        if entry[0] == DIR:
            for name, _ in self.listdir(path):
                yield from self.walk_entry(posixpath.join(path, name))

    # -- writes ---------------------------------------------------------------------------------
    def _writable(self, path: str) -> tuple[Mount, Store, list[str]]:
        canonical = self.resolve(path, follow=False)
        mount, parts = self._mount(canonical)
        if mount.read_only:
            raise FsError("EROFS", path)
        store = self.access.write(mount.store)
        if store is None:
            raise FsError("ENOENT", path)
        return mount, store, parts

    def _record(self, operation: Operation) -> None:
        if isinstance(self.access, Overlay):
            self.access.operations.append((self.elapsed_s, operation))

    @property
    def mtime_s(self) -> float:
        return self.now_s + self.elapsed_s

    def write(self, path: str, data: bytes, append: bool = False, mode: int = DEFAULT_FILE_MODE) -> None:
        """Write a file (following a link at its end, as ``open(O_CREAT)`` does)."""
        if path == "/dev/null":
            return
        mount, store, parts = self._writable(self.resolve(path, follow=True))
        store_write(store, parts, data, append, mode, self.mtime_s, path)
        self._record(("write", mount.store, tuple(parts), data, append, mode, self.mtime_s))

    def mkdir(self, path: str, parents: bool = False, mode: int = DEFAULT_DIR_MODE) -> None:
        if parents:
            built = ""
            for name in split(self.absolute(path)):
                built += "/" + name
                entry = self.lookup(built)
                if entry is None:
                    self.mkdir(built, mode=mode)
                elif entry[0] != DIR:
                    raise FsError("ENOTDIR", path)
            return
        mount, store, parts = self._writable(path)
        store_mkdir(store, parts, mode, self.mtime_s, path)
        self._record(("mkdir", mount.store, tuple(parts), mode, self.mtime_s))

    def symlink(self, target: str, path: str) -> None:
        mount, store, parts = self._writable(path)
        store_link(store, parts, target, self.mtime_s, path)
        self._record(("link", mount.store, tuple(parts), target, self.mtime_s))

    def remove(self, path: str) -> Entry:
        """Unlink the entry (a link itself, not what it points to); a directory goes with its contents."""
        mount, store, parts = self._writable(path)
        if self.absolute(path) in {m.path for m in self.mounts}:
            raise FsError("EBUSY", path)
        entry = store_remove(store, parts, self.mtime_s, path)
        self._record(("remove", mount.store, tuple(parts), self.mtime_s))
        return entry

    def rename(self, source: str, target: str) -> None:
        """Move an entry (across mounts too: a copy then a removal, as ``mv`` does)."""
        entry = self.stat(source, follow=False)
        if self.lookup(target, follow=False) is not None and self.is_dir(target) and entry[0] != DIR:
            raise FsError("EISDIR", target)
        moved = copy.deepcopy(entry)
        mount, store, parts = self._writable(target)
        store_put(store, parts, moved, self.mtime_s, target)
        self._record(("put", mount.store, tuple(parts), copy.deepcopy(moved), self.mtime_s))
        self.remove(source)

    def put(self, path: str, entry: Entry) -> None:
        """Place a copy of an entry (``cp -r``'s directories, with their contents)."""
        mount, store, parts = self._writable(path)
        copied = copy.deepcopy(entry)
        store_put(store, parts, copied, self.mtime_s, path)
        self._record(("put", mount.store, tuple(parts), copy.deepcopy(copied), self.mtime_s))

    def set_meta(self, path: str, mode: int | None = None, mtime_s: float | None = None) -> None:
        """chmod and utime (following links)."""
        mount, store, parts = self._writable(self.resolve(path))
        entry = store_get(store, parts)
        if entry is None:
            raise FsError("ENOENT", path)
        if mode is not None:
            entry[1] = mode
        if mtime_s is not None:
            entry[2] = mtime_s
        self._record(("meta", mount.store, tuple(parts), entry[1], entry[2]))
