"""Builds of a configuration seen before are restored, not rebuilt.

A test suite makes the same cluster again and again: ``Cluster(nodes=1)`` in hundreds of
tests, the pytest fixture's reset before every test. A build runs the apiserver's bootstrap
(about 100 creates, each frozen under the guard), registers every controller and kubelet,
and settles: 17–32 ms of CPU here. A snapshot of the fresh state thaws in 1–1.5 ms
(cluster/statecopy.py) and continues exactly as a fresh build would (the snapshot
contract, tests/integration/test_snapshots.py), so the second build of a configuration in
a process keeps a snapshot of its fresh state and every later one restores it.

What makes two builds "the same": an equal :class:`ClusterConfig` (every field: nodes,
seed, start time, version, controllers, behaviours…) and equal inputs read from files at
configure time (static pod manifests, static tokens), compared at each build — a file
edited between two builds is a miss, not a stale hit. Time that flows with the wall clock
starts at "now", so its configs differ from build to build and never hit.

Bounded: at most :data:`MAX_CONFIGS` configurations are remembered (the least recently used
is forgotten past it; forgetting only costs the next build its full price). It is off
where ``FAKEKUBE_BUILD_CACHE=0`` is set in the environment (read once, at import).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from fakekube.cluster import snapshot as snapshots

if TYPE_CHECKING:
    from fakekube.cluster.cluster import Cluster

#: Configurations whose fresh state is remembered, least recently used first forgotten.
MAX_CONFIGS = 16
#: Builds of one configuration before its fresh state is kept: taking the snapshot costs
#: about one build, so a configuration built only once never pays for it.
KEEP_AFTER_BUILDS = 2
ENABLED = os.environ.get("FAKEKUBE_BUILD_CACHE", "1") != "0"


class _Entry:
    """One configuration: the inputs that must match, how often it was built, its snapshot.
    (A plain class: an in-process cluster does not load dataclasses, test_lazy_imports.py.)"""

    __slots__ = ("key", "builds", "fresh")

    def __init__(self, key: tuple[Any, ...]) -> None:
        self.key = key
        self.builds = 0
        self.fresh: snapshots.Snapshot | None = None


class BuildCache:
    """Fresh states by configuration (one per process: :data:`BUILDS`)."""

    def __init__(self, max_configs: int = MAX_CONFIGS, enabled: bool = ENABLED) -> None:
        self.max_configs = max_configs
        self.enabled = enabled
        self._entries: list[_Entry] = []  # least recently used first
        #: Builds answered from a snapshot, and full builds (for tests and benchmarks).
        self.hits = 0
        self.misses = 0

    def fresh_state(self, cluster: "Cluster") -> dict[str, Any] | None:
        """A new copy of the fresh state of ``cluster``'s configuration, or None (build it)."""
        entry = self._entry(cluster, create=False) if self.enabled else None
        if entry is None or entry.fresh is None or len(entry.fresh._not_state) != len(snapshots._not_state(cluster)):
            self.misses += 1  # (or a reset of a cluster observed by more than a new one: built in full)
            return None
        self.hits += 1
        return snapshots.fresh_state(cluster, entry.fresh)

    def built(self, cluster: "Cluster") -> None:
        """``cluster`` was just built in full (nothing has run on it yet): count the build,
        and keep a snapshot of it once its configuration has been built often enough."""
        if not self.enabled:
            return
        entry = self._entry(cluster, create=True)
        assert entry is not None
        entry.builds += 1
        if entry.fresh is None and entry.builds >= KEEP_AFTER_BUILDS:
            entry.fresh = snapshots.detached(snapshots.take(cluster))

    def clear(self) -> None:
        self._entries.clear()

    def _entry(self, cluster: "Cluster", create: bool) -> _Entry | None:
        key = build_key(cluster)
        for index, entry in enumerate(self._entries):
            if entry.key == key:
                self._entries.append(self._entries.pop(index))  # now the most recently used
                return entry
        if not create:
            return None
        entry = _Entry(key)
        self._entries.append(entry)
        if len(self._entries) > self.max_configs:
            del self._entries[0]
        return entry


def build_key(cluster: "Cluster") -> tuple[Any, ...]:
    """What a fresh state is a function of: the config and what configure read from files."""
    return (cluster.config, cluster._static_manifests, cluster._static_tokens)


#: The process's cache (Cluster builds and resets use it).
BUILDS = BuildCache()
