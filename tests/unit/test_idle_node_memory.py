"""What an idle node costs in fakekube's own bookkeeping (issue 22: < 10 KB per idle node).

Stored objects are immutable, so parts that are equal may be one object: the Events of a
kubelet share their ``source`` and ``involvedObject``, the Event TTL queue shares one
deadline per instant, the change log keys object sizes by the store's own key tuples, and
the work queue does not keep the table of its largest burst once it has drained. (With the
immutability guard, on in this suite, the store keeps a frozen copy of every object instead:
no sharing is possible there.)
"""

from __future__ import annotations

import sys

from fakekube import Cluster
from fakekube.objects.kinds import EVENTS, NODES


def test_a_kubelets_start_events_share_their_source_and_involved_object() -> None:
    cluster = Cluster(nodes=2, immutability_guard=False)  # the guard stores a frozen copy of each
    events = [e for e in cluster.store.list(EVENTS)[0]
              if e["source"].get("host") == "node-1" and e["involvedObject"].get("kind") == "Node"]
    assert len(events) >= 5
    assert len({id(e["source"]) for e in events}) == 1
    assert len({id(e["involvedObject"]) for e in events}) == 1
    others = [e for e in cluster.store.list(EVENTS)[0] if e["source"].get("host") == "node-2"]
    assert others and others[0]["source"] is not events[0]["source"]  # another source, its own
    assert others[0]["source"] == {"component": "kubelet", "host": "node-2"}


def test_events_written_at_one_instant_share_their_ttl_deadline() -> None:
    cluster = Cluster(nodes=3)
    ttl = cluster.engine._controllers["event-ttl-controller"]
    deadlines = [deadline for _, deadline in ttl.leases.values()]  # type: ignore[attr-defined]
    assert len(deadlines) >= 15
    assert len({id(d) for d in deadlines}) == len(set(deadlines))


def test_the_change_log_keys_object_sizes_by_the_stores_own_key_tuples() -> None:
    cluster = Cluster(nodes=2)
    sizes = cluster.store.history.object_sizes(NODES)
    bucket = cluster.store._objects[NODES]
    assert set(sizes) == set(bucket)
    assert all(any(k is key for k in bucket) for key in sizes)  # the same tuple objects


def test_the_work_queue_lets_a_drained_bursts_table_go() -> None:
    cluster = Cluster(nodes=300)
    cluster.settle()
    empty = sys.getsizeof(type(cluster.engine.queue._items)())
    assert sys.getsizeof(cluster.engine.queue._items) == empty
    assert cluster.engine.queue.high_water > 1_000  # the build's burst was big
