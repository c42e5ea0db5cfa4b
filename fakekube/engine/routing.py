"""Which store changes are heartbeats, so the engine can route them only to the controllers
that might get work from one.

A kubelet tells the cluster it is alive in two ways: it renews its node's Lease every 10 s
(``spec.renewTime`` moves) and reports its node's status every 5 minutes when nothing else
changed (each condition's ``lastHeartbeatTime`` moves). An idle 5,000-node cluster makes
5,000 such Node writes at one instant every 5 minutes, and a Node change is routed to about
ten controllers, most of which only ever compare labels, taints or podCIDRs of the old and
new object and name no key. A controller that declares ``keyless_heartbeats = True``
promises that a heartbeat gives it no key (a unit test per declaration checks it), and the
engine then neither calls its ``keys_for`` nor queues anything for it.

:func:`is_heartbeat` is exact, not a guess from who wrote: a change is a heartbeat only
when the new object equals the previous one in everything but those times and its
``resourceVersion`` (a condition's status, reason or transition, a taint, a label, the
allocatable resources, ``unschedulable``, the images, managedFields — any of them moved
makes it an ordinary change, routed to everyone). Sub-objects the write kept are compared
by identity first (stored objects are immutable), so a heartbeat costs a few dict copies
and comparisons at C speed.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from fakekube.objects.kinds import LEASES, NODES
from fakekube.store import MODIFIED, Change

Obj = Mapping[str, Any]

def is_heartbeat(change: Change) -> bool:
    """True when ``change`` is a Node status report that moved only its conditions'
    ``lastHeartbeatTime`` or a Lease renewal that moved only ``spec.renewTime`` (besides the
    resourceVersion): nothing a controller reads to decide what to do changed."""
    if change.type != MODIFIED or change.prev is None:
        return False
    same = _HEARTBEATS.get((change.group, change.resource))
    return same is not None and same(change.obj, change.prev)


def heartbeat_resources() -> tuple[tuple[str, str], ...]:
    """The resources that have heartbeats (the engine keeps a shorter route for these)."""
    return tuple(_HEARTBEATS)


def _equal_but(new: Any, old: Any, **moved: None) -> bool:
    """Whether two dicts are equal once the ``moved`` keys are blanked (present or not).
    Dict equality runs at C speed and takes a value shared by both as equal at once."""
    return isinstance(new, dict) and isinstance(old, dict) and dict(new, **moved) == dict(old, **moved)


def _node_heartbeat(new: Obj, old: Obj) -> bool:
    """Only ``metadata.resourceVersion`` and the conditions' ``lastHeartbeatTime`` moved."""
    if not _equal_but(new, old, metadata=None, status=None):
        return False
    if not _equal_but(new["metadata"], old["metadata"], resourceVersion=None):
        return False
    status, before = new.get("status"), old.get("status")
    if status is before:
        return True
    if not _equal_but(status, before, conditions=None):
        return False
    conditions, previous = status.get("conditions"), before.get("conditions")  # type: ignore[union-attr]
    if conditions is previous:
        return True
    return isinstance(conditions, list) and isinstance(previous, list) and len(conditions) == len(previous) \
        and all(_equal_but(c, p, lastHeartbeatTime=None) for c, p in zip(conditions, previous))


def _lease_renewal(new: Obj, old: Obj) -> bool:
    """Only ``metadata.resourceVersion`` and ``spec.renewTime`` moved."""
    return _equal_but(new, old, metadata=None, spec=None) \
        and _equal_but(new["metadata"], old["metadata"], resourceVersion=None) \
        and _equal_but(new.get("spec"), old.get("spec"), renewTime=None)


#: Per resource with heartbeats: whether a change of it (new, previous object) is one.
_HEARTBEATS: dict[tuple[str, str], Callable[[Obj, Obj], bool]] = {
    (NODES[0], NODES[1]): _node_heartbeat,
    (LEASES[0], LEASES[1]): _lease_renewal,
}
