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
by identity first (stored objects are immutable), so a heartbeat costs a few dict reads.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from fakekube.objects.kinds import LEASES, NODES
from fakekube.store import MODIFIED, Change

Obj = Mapping[str, Any]

_MISSING = object()


def is_heartbeat(change: Change) -> bool:
    """True when ``change`` is a Node status report that moved only its conditions'
    ``lastHeartbeatTime`` or a Lease renewal that moved only ``spec.renewTime`` (besides the
    resourceVersion): nothing a controller reads to decide what to do changed."""
    if change.type != MODIFIED or change.prev is None:
        return False
    same = _HEARTBEATS.get((change.group, change.resource))
    return same is not None and _same_but(change.obj, change.prev, same)


def heartbeat_resources() -> tuple[tuple[str, str], ...]:
    """The resources that have heartbeats (the engine keeps a shorter route for these)."""
    return tuple(_HEARTBEATS)


def _same_but(new: Any, old: Any, skip: Mapping[str, Any]) -> bool:
    """``new`` equals ``old`` except at the keys of ``skip``: a key mapped to None may differ
    freely; a key mapped to a function must satisfy it (``skip[key](new[key], old[key])``)."""
    if not isinstance(new, dict) or not isinstance(old, dict) or len(new) != len(old):
        return False
    for key, value in new.items():
        before = old.get(key, _MISSING)
        if value is before:
            continue
        if before is _MISSING:
            return False
        if key in skip:
            rule = skip[key]
            if rule is not None and not rule(value, before):
                return False
        elif value != before:
            return False
    return True


def _conditions_heartbeat(new: Any, old: Any) -> bool:
    """The same conditions in the same order, each equal but for ``lastHeartbeatTime``."""
    if not isinstance(new, list) or not isinstance(old, list) or len(new) != len(old):
        return False
    return all(n is o or _same_but(n, o, _CONDITION) for n, o in zip(new, old))


_METADATA: Mapping[str, Any] = {"resourceVersion": None}
_CONDITION: Mapping[str, Any] = {"lastHeartbeatTime": None}
_NODE_STATUS: Mapping[str, Any] = {"conditions": _conditions_heartbeat}
_LEASE_SPEC: Mapping[str, Any] = {"renewTime": None}


def _metadata(new: Any, old: Any) -> bool:
    return _same_but(new, old, _METADATA)


def _node_status(new: Any, old: Any) -> bool:
    return _same_but(new, old, _NODE_STATUS)


def _lease_spec(new: Any, old: Any) -> bool:
    return _same_but(new, old, _LEASE_SPEC)


#: Per resource with heartbeats: what may move in one (the top-level keys' rules).
_HEARTBEATS: dict[tuple[str, str], Mapping[str, Callable[[Any, Any], bool]]] = {
    (NODES[0], NODES[1]): {"metadata": _metadata, "status": _node_status},
    (LEASES[0], LEASES[1]): {"metadata": _metadata, "spec": _lease_spec},
}
