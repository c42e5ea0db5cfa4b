"""Snapshots: a cluster's whole state as a value to keep and restore (``Cluster.snapshot()``).

A :class:`Snapshot` holds a copy of every part that has state — the virtual clock with its
pending timers, the random streams, the store (objects, history, resourceVersion), the
apiserver (its registry of served types, CRDs included, and admission state), the engine
(queued keys, key timers, rate limiters, the event recorder), every controller, the
scheduler (queue and cache) and the kubelets (pods, containers, filesystems). Restoring it
puts a fresh copy of that state in place, so a snapshot can be restored any number of times
and the restored cluster continues exactly as the original did from that instant: the same
writes, names, uids and events at the same virtual times (tests/integration/test_snapshots.py).

The copy is structural (cluster/statecopy.py): stored objects are shared — they are
immutable by the store's contract — as are settings and behaviour records; everything
else is copied. Taking a snapshot writes the state once into a
:class:`~fakekube.cluster.statecopy.Frozen`; each restore thaws a new copy from it at C
speed. What is not state stays with the Cluster: its config, the HTTP server and REST
layer, the kubeconfig and PKI, log streams.

Clients across a restore (the etcd-compaction model): every watch open on the cluster
ends with a ``410 Gone`` event, and the restored store never hands out a resourceVersion a
client has already seen for other data — when this cluster has issued resourceVersions past
the snapshot's, the restored one continues above all of them, and its history starts there
(a watch from any resourceVersion issued before is 410: relist). Restored into a cluster that has
not issued more, it continues with the snapshot's own numbers. (etcd keeps one revision
counter across a restore from backup in the same way: ``etcdutl snapshot restore
--bump-revision`` with ``--mark-compacted``.)

A snapshot belongs to clusters of the same configuration (the config it was taken with must
equal the restoring cluster's, else ValueError), the same fakekube and Kubernetes version.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fakekube.cluster.statecopy import Frozen, StateCopier
    from fakekube.cluster.cluster import Cluster
    from fakekube.store import Store

#: The Cluster attributes that hold state, copied into a snapshot and back (in this order).
STATE_PARTS = ("registry", "clock", "rng", "store", "api", "engine", "controllers", "scheduler", "kubelets")
#: The first of them: the apiserver's side, which answers reads (a phased load decodes it first).
SERVING_PARTS = STATE_PARTS[:5]


class Snapshot:
    """A cluster's state at one instant (opaque; restore it with ``Cluster.restore``)."""

    def __init__(self, frozen: Frozen, not_state: list[object], config: Any, time: datetime,
                 resource_version: int) -> None:
        self._frozen = frozen
        #: What the state refers to but does not hold (:func:`_not_state` of the cluster it
        #: was taken from): a restore into another cluster refers to that one's instead.
        self._not_state = not_state
        self.config = config
        #: Cluster time when it was taken.
        self.time = time
        #: The newest resourceVersion it holds.
        self.resource_version = resource_version

    def state(self) -> dict[str, Any]:
        """A new copy of the state it holds, by part (what a snapshot file writes)."""
        return dict(self._frozen.thaw())

    def __repr__(self) -> str:
        return f"Snapshot(time={self.time.isoformat()}, resourceVersion={self.resource_version})"


def take(cluster: "Cluster") -> Snapshot:
    """Copy ``cluster``'s state (call it where no work runs: on the engine thread between jobs)."""
    cluster.store.build_deferred()  # a snapshot holds the writes as eager ones made them
    frozen = copier_for(cluster).freeze({part: getattr(cluster, part) for part in STATE_PARTS})
    return Snapshot(frozen, _not_state(cluster), cluster.config, cluster.clock.now(), cluster.store.resource_version)


def fresh_state(cluster: "Cluster", snapshot: Snapshot) -> dict[str, Any]:
    """A new copy of ``snapshot``'s state for ``cluster`` to run on."""
    if snapshot.config != cluster.config:
        raise ValueError("this snapshot was taken from a cluster with another configuration; "
                         "restore it into a cluster built with the same config")
    # the time observers the clock names are replaced when the state is installed
    replaced = {id(old): new for old, new in zip(snapshot._not_state, _not_state(cluster)) if old is not new}
    return dict(snapshot._frozen.thaw(replaced))


class _StandIn:
    """Stands for a cluster's not-state object in a detached snapshot (restored, it is
    replaced by the restoring cluster's)."""

    __slots__ = ()


def detached(snapshot: Snapshot) -> Snapshot:
    """``snapshot`` holding no reference to the cluster it was taken from (nor its log
    streams and time observers): a snapshot kept for long, such as a build cache's, must
    not keep that cluster — its later state, its server — alive."""
    stand_ins: list[object] = [_StandIn() for _ in snapshot._not_state]
    frozen = snapshot._frozen.with_replaced({id(old): new for old, new in zip(snapshot._not_state, stand_ins)})
    return Snapshot(frozen, stand_ins, snapshot.config, snapshot.time, snapshot.resource_version)


def copier_for(cluster: "Cluster", store: "Store | None" = None) -> StateCopier:
    """A copier that shares what ``cluster`` keeps across restores and the objects ``store``
    (default: the cluster's) holds or remembers — immutable, so shared — and the dicts and
    lists inside them (what controllers, the scheduler and kubelets keep
    of an object is mostly a part of it: a pod's spec, a container)."""
    from fakekube.cluster.statecopy import StateCopier  # pickle and the copier: not a boot's first answer
    store = store if store is not None else cluster.store
    copier = StateCopier(_not_state(cluster))
    for obj in store.stored_objects():
        copier.share_tree(obj)
    return copier


def _not_state(cluster: "Cluster") -> list[object]:
    """What the copy refers to rather than copies: the Cluster and what it keeps across a
    restore (config, time observers such as the log streams)."""
    return [cluster, cluster.config, cluster.service_network, cluster.log_streams,
            *cluster.time_observers()]
