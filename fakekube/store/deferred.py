"""Deferred writes: a batch of one-field updates that take their resourceVersions now and
their objects only when something reads them (issue 22, lazy heartbeats).

An idle cluster's writes are mostly Lease renewals that nobody reads: each changes one
timestamp of an existing object, and a 5,000-node cluster makes 500 a second. A
:class:`Deferred` block reserves the consecutive resourceVersions the eager writes would
have taken (the store's counter moves by the block's size) and records what they set, as
plain data. The store builds the objects — the same ones, with the same
resourceVersions, history entries and index entries the eager writes would have made —
the first time anything could observe them: a read of that resource, any write (the
change log stays in resourceVersion order), a watch, the change log, a snapshot.

Building them is cheaper than writing them: the bucket needs only each key's newest
version, and the bounded change log only the entries it would still hold, so a flush of
thirty 5,000-member blocks into a 10,000-entry log builds at most 20,000 changes of their
150,000 (:func:`materialize`). Where the log's byte budget could trim in between, every
entry is appended one by one, exactly as the eager writes were.
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Any, NamedTuple

from fakekube.store.history import MODIFIED, Change

if TYPE_CHECKING:
    from fakekube.store.memory import ObjectKey, ResourceKey, Store

Obj = dict[str, Any]

#: Deferred writes are built at once when more than this many times the log's entry limit
#: wait (docs/reliability.md). A build costs what the log still holds and each key's newest
#: version, however many wait, so a rarer build is cheaper: at 5,000 idle nodes, 16 × the
#: default 10,000 is over five minutes of renewals, longer than between two status reports
#: (a write, which builds them anyway). A cohort's blocks share one keys tuple, so what they
#: hold is a few bytes a block.
BUILD_AT_LIMITS = 16

#: How many of the newest blocks :func:`shared_keys` looks through for the same keys.
SHARE_KEYS_WITHIN = 8


class Deferred(NamedTuple):
    """``keys[i]`` of ``resource`` had ``obj[path[0]][path[1]] = value`` written at
    resourceVersion ``first_rv + i`` (nothing else of the object changed)."""

    resource: ResourceKey
    keys: tuple[ObjectKey, ...]
    first_rv: int
    path: tuple[str, str]
    value: str

    @property
    def last_rv(self) -> int:
        return self.first_rv + len(self.keys) - 1


def shared_keys(blocks: list[Deferred], keys: tuple[ObjectKey, ...],
                known: tuple[ObjectKey, ...] | None = None) -> tuple[ObjectKey, ...]:
    """``keys``, or an equal tuple a recent block already holds, or ``known`` if equal (a
    cohort renews the same Leases every period: one tuple for all its blocks, which the
    store also knows to be stored)."""
    for block in reversed(blocks[-SHARE_KEYS_WITHIN:]):
        if len(block.keys) == len(keys) and block.keys == keys:
            return block.keys
    if known is not None and len(known) == len(keys) and known == keys:
        return known
    return keys


def version(store: Store, block: Deferred, base: Obj, rv: int, key: ObjectKey) -> Obj:
    """The object the eager write of ``key`` at ``rv`` stored, built from any earlier version
    ``base`` (versions in a run of deferred writes differ only in the field and the rv)."""
    outer, field = block.path
    updated = dict(base)
    updated[outer] = dict(base.get(outer) or {}, **{field: block.value})
    return store._stamp_at(block.resource, key, updated, rv)


def materialize(store: Store, blocks: list[Deferred]) -> None:
    """Install ``blocks`` (of one resource, contiguous, oldest first, right after the log's
    newest change) as the eager writes would have left the objects, indexes and change log."""
    history = store.history
    sizes = _entry_sizes(store, blocks)
    if sizes is None or history.held_bytes + sum(sizes) > history.max_bytes:
        for block in blocks:
            _append_each(store, block)
        return
    dropped = _count_trim(history.limit, len(sizes), history.physical_len())
    real_dropped = min(dropped, history.physical_len())
    history.drop_oldest(real_dropped)
    first_kept = dropped - real_dropped  # entries of the blocks before it are trimmed at once
    newest: dict[ObjectKey, Obj] = {}
    _build_kept(store, blocks, first_kept, sizes, newest)
    if first_kept:
        history.compacted_rv = blocks[0].first_rv + first_kept - 1
    _install(store, blocks[0].resource, newest)


def _count_trim(limit: int, appended: int, held: int) -> int:
    """How many of the oldest entries (held ones first) appending ``appended`` entries one by
    one drops under the count rule alone: at ``2 × limit`` held, back to ``limit``."""
    total = held + appended
    if total < 2 * limit:
        return 0
    final = limit + (total - 2 * limit) % limit
    return total - final


def _entry_sizes(store: Store, blocks: list[Deferred]) -> list[int] | None:
    """Each entry's counted size (a renewal counts its previous version's); None when a key
    was never measured (the slow path measures it as the eager write did)."""
    group_sizes: list[int] = []
    measured: dict[int, list[int | None]] = {}  # by the keys tuple: a cohort's blocks share one
    for block in blocks:
        found = measured.get(id(block.keys))
        if found is None:
            found = measured[id(block.keys)] = list(map(store.history.object_sizes(block.resource).get, block.keys))
        if None in found:
            return None
        group_sizes.extend(found)  # type: ignore[arg-type]
    return group_sizes


def _build_kept(store: Store, blocks: list[Deferred], first_kept: int, sizes: list[int],
                newest: dict[ObjectKey, Obj]) -> None:
    """Append the entries from ``first_kept`` on to the log, each with its object and the
    version before it; ``newest`` ends as each key's newest built version."""
    history = store.history
    latest_rv: dict[ObjectKey, int] = {}  # a key's newest trimmed (never built) version
    position = 0
    first_rvs = [block.first_rv for block in blocks]
    for block in blocks:
        count = len(block.keys)
        if position + count <= first_kept:
            latest_rv.update(zip(block.keys, range(block.first_rv, block.first_rv + count)))
            position += count
            continue
        bucket = store._objects[block.resource]
        group, plural = block.resource
        start = max(0, first_kept - position)
        latest_rv.update(zip(block.keys[:start], range(block.first_rv, block.first_rv + start)))
        for offset in range(start, count):
            key = block.keys[offset]
            prev = newest.get(key)
            if prev is None:
                prev = _trimmed_version(blocks, first_rvs, store, key, latest_rv.get(key), bucket[key])
            rv = block.first_rv + offset
            obj = version(store, block, prev, rv, key)
            newest[key] = obj
            history.append_counted(Change(rv, MODIFIED, group, plural, key[0], key[1], obj, prev),
                                   sizes[position + offset])
        position += count
    for key, rv in latest_rv.items():
        if key not in newest:  # its last write was trimmed from the log: only the object is needed
            newest[key] = _trimmed_version(blocks, first_rvs, store, key, rv, store._objects[blocks[0].resource][key])


def _trimmed_version(blocks: list[Deferred], first_rvs: list[int], store: Store, key: ObjectKey, rv: int | None,
                     stored: Obj) -> Obj:
    """The version of ``key`` written at ``rv`` by one of ``blocks`` (None: the stored one,
    from before every block)."""
    if rv is None:
        return stored
    return version(store, blocks[bisect.bisect_right(first_rvs, rv) - 1], stored, rv, key)


def _install(store: Store, resource: ResourceKey, newest: dict[ObjectKey, Obj]) -> None:
    """Each key's newest version into the bucket, the ordered list and the indexes."""
    for key, obj in newest.items():
        store._put(resource, key, obj)


def _append_each(store: Store, block: Deferred) -> None:
    """Every entry of ``block`` as the eager write made it, one by one (the log trims as it goes)."""
    bucket = store._objects[block.resource]
    group, plural = block.resource
    for offset, key in enumerate(block.keys):
        prev = bucket[key]
        rv = block.first_rv + offset
        obj = version(store, block, prev, rv, key)
        store._put(block.resource, key, obj)
        store.history.append(Change(rv, MODIFIED, group, plural, key[0], key[1], obj, prev), same_size=True)
