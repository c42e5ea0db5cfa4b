"""Who lets the store defer a Lease renewal (store/deferred.py), and who stops it.

A renewal may be deferred only while no listener would act on it as a write: every
controller watching Leases declares that a change setting one field outside metadata gives
it no key. The garbage collector declares it; a controller that does not (a user's,
watching Leases) keeps every renewal eager.
"""

from __future__ import annotations

from typing import Iterable

from fakekube import Cluster
from fakekube.controllers.garbagecollector.controller import GarbageCollectorController
from fakekube.engine import Context
from fakekube.objects.kinds import LEASES
from fakekube.store import MODIFIED, Change
from fakekube.store.deferred import BUILD_AT_LIMITS

LEASE_NS = "kube-node-lease"


def test_the_garbage_collector_gives_no_key_for_a_renewal_as_it_declares() -> None:
    cluster = Cluster(nodes=1)
    lease = cluster.store.get(LEASES, (LEASE_NS, "node-1"))
    assert lease is not None
    renewed = dict(lease, spec=dict(lease["spec"], renewTime="2030-01-01T00:00:00.000000Z"),
                   metadata=dict(lease["metadata"], resourceVersion="999999"))
    change = Change(999999, MODIFIED, *LEASES, LEASE_NS, "node-1", renewed, lease)
    gc = next(c for c in cluster.engine._controllers.values() if isinstance(c, GarbageCollectorController))
    assert GarbageCollectorController.keyless_field_writes is True
    assert list(gc.keys_for(change)) == []


def test_renewals_of_an_idle_cluster_wait_unbuilt_and_a_read_builds_them() -> None:
    cluster = Cluster(nodes=3)
    cluster.advance(10)
    rv = cluster.store.resource_version
    assert cluster.store._deferred  # taken resourceVersions, no objects yet
    lease = cluster.store.get(LEASES, (LEASE_NS, "node-2"))
    assert not cluster.store._deferred
    assert lease is not None and int(lease["metadata"]["resourceVersion"]) <= rv


class LeaseWatcher:
    """A controller of the user's watching Leases, with no declaration: it sees every renewal."""

    name = "lease-watcher"
    resources = (LEASES,)

    def __init__(self) -> None:
        self.seen: list[str] = []

    def keys_for(self, change: Change) -> Iterable[str]:
        return [change.name]

    def reconcile(self, key: str, ctx: Context) -> None:
        self.seen.append(key)


def test_a_controller_watching_leases_without_the_declaration_keeps_renewals_eager() -> None:
    cluster = Cluster(nodes=3)
    watcher = LeaseWatcher()
    cluster.engine.register(watcher)
    cluster.advance(30)
    assert not cluster.store._deferred
    assert watcher.seen.count("node-1") == 3  # a renewal every 10 s, each one seen


def test_deferred_renewals_are_bounded_by_a_multiple_of_the_change_log() -> None:
    """Renewals nobody reads for a long time are built once they pass BUILD_AT_LIMITS times
    the log's limit (a build costs what the log holds, so rarer builds are cheaper), so their
    memory has a bound; a cohort's waiting blocks share one keys tuple."""
    cluster = Cluster(nodes=20, history_limit=10)
    most = 0
    for _ in range(20):
        cluster.advance(10)
        most = max(most, cluster.store._deferred_count)
        assert len({id(block.keys) for block in cluster.store._deferred}) <= 1
    assert BUILD_AT_LIMITS * 10 - 20 < most <= BUILD_AT_LIMITS * 10


def test_renewing_keys_found_stored_before_is_refused_once_one_of_them_was_removed() -> None:
    """The store remembers the last keys it found all stored (a cohort renews the same ones
    every period) until an object is removed: a renewal naming a removed key is refused."""
    from fakekube.store import Store

    store = Store()
    for name in ("a", "b", "c"):
        store.create(LEASES, {"metadata": {"name": name, "namespace": LEASE_NS}, "spec": {"renewTime": "t0"}})
    keys = [(LEASE_NS, name) for name in ("a", "b", "c")]
    assert store.defer_set(LEASES, keys, ("spec", "renewTime"), "t1")
    assert store.defer_set(LEASES, list(keys), ("spec", "renewTime"), "t2")
    assert store._deferred[0].keys is store._deferred[1].keys  # one tuple, checked once
    store.remove(LEASES, (LEASE_NS, "b"))
    assert not store.defer_set(LEASES, keys, ("spec", "renewTime"), "t3")
    assert store.get(LEASES, (LEASE_NS, "c"))["spec"]["renewTime"] == "t2"  # type: ignore[index]
