"""Node taints: the well-known keys and effects, identity, and changing a node's taints.

The scheduler, the node lifecycle controller, taint eviction and the kubelets all read
and write ``spec.taints``; they agree on what a taint *is* here. Sources:
k8s.io/api core/v1 ``well_known_taints.go`` and ``taint.go`` (``MatchTaint``,
``ToString``), and ``pkg/util/taints`` (``AddOrUpdateTaint``, ``RemoveTaint``,
``TaintSetDiff``). Functions return new lists and nodes; inputs are never changed.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from fakekube.objects._json import deep_copy

Taint = Mapping[str, Any]
Obj = dict[str, Any]

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"
#: Every effect a taint may have, in the order upstream's validation lists them.
TAINT_EFFECTS = (NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE)

TAINT_NODE_NOT_READY = "node.kubernetes.io/not-ready"
TAINT_NODE_UNREACHABLE = "node.kubernetes.io/unreachable"
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
TAINT_NODE_MEMORY_PRESSURE = "node.kubernetes.io/memory-pressure"
TAINT_NODE_DISK_PRESSURE = "node.kubernetes.io/disk-pressure"
TAINT_NODE_PID_PRESSURE = "node.kubernetes.io/pid-pressure"
TAINT_NODE_NETWORK_UNAVAILABLE = "node.kubernetes.io/network-unavailable"
TAINT_NODE_OUT_OF_SERVICE = "node.kubernetes.io/out-of-service"
#: Set by kubelets started with an external cloud provider until the cloud node controller initialises them.
TAINT_EXTERNAL_CLOUD_PROVIDER = "node.cloudprovider.kubernetes.io/uninitialized"
TAINT_NODE_SHUTDOWN = "node.cloudprovider.kubernetes.io/shutdown"
#: kubeadm's taint on control-plane nodes (not in well_known_taints.go, but on every kubeadm cluster).
TAINT_CONTROL_PLANE = "node-role.kubernetes.io/control-plane"


def match_taint(a: Taint, b: Taint) -> bool:
    """``Taint.MatchTaint``: taints are the same taint when key and effect agree (value aside)."""
    return (a.get("key") or "") == (b.get("key") or "") and (a.get("effect") or "") == (b.get("effect") or "")


def taint_exists(taints: Iterable[Taint] | None, taint: Taint) -> bool:
    """``TaintExists``: is a taint with the same key and effect among ``taints``?"""
    return any(match_taint(t, taint) for t in taints or ())


def taint_to_string(taint: Taint) -> str:
    """``Taint.ToString``: ``key=value:effect``, ``key:effect``, ``key=value:`` or just ``key``."""
    key, value, effect = taint.get("key") or "", taint.get("value") or "", taint.get("effect") or ""
    if not value:
        return f"{key}:{effect}" if effect else key
    return f"{key}={value}:{effect}"


def node_taints(node: Mapping[str, Any]) -> list[Taint]:
    """The node's ``spec.taints``, an empty list when there are none."""
    return list((node.get("spec") or {}).get("taints") or [])


def noexecute_taints(taints: Iterable[Taint] | None) -> list[Taint]:
    """The NoExecute taints among ``taints`` (what the taint-eviction controller acts on)."""
    return [t for t in taints or () if t.get("effect") == NO_EXECUTE]


def taints_with_effect(taints: Iterable[Taint] | None, *effects: str) -> list[Taint]:
    """The taints whose effect is one of ``effects`` (the scheduler filters on NoSchedule and NoExecute)."""
    return [t for t in taints or () if t.get("effect") in effects]


def taint_diff(desired: Sequence[Taint], current: Sequence[Taint]) -> tuple[list[Taint], list[Taint]]:
    """``TaintSetDiff``: (to add, to remove), compared by key and effect, each in input order."""
    to_add = [t for t in desired if not taint_exists(current, t)]
    to_remove = [t for t in current if not taint_exists(desired, t)]
    return to_add, to_remove


def add_or_update_taint(node: Mapping[str, Any], taint: Taint) -> tuple[Obj, bool]:
    """``AddOrUpdateTaint``: a copy of ``node`` with ``taint``, and whether anything changed.

    A taint with the same key and effect is replaced in place (unchanged when it is
    already identical); otherwise the new taint goes last.
    """
    updated: Obj = deep_copy(dict(node))
    taints = node_taints(updated)
    result: list[Any] = []
    replaced = False
    for existing in taints:
        if match_taint(existing, taint):
            if dict(existing) == dict(taint):
                return updated, False
            result.append(deep_copy(dict(taint)))
            replaced = True
        else:
            result.append(existing)
    if not replaced:
        result.append(deep_copy(dict(taint)))
    updated.setdefault("spec", {})["taints"] = result
    return updated, True


def remove_taint(node: Mapping[str, Any], taint: Taint) -> tuple[Obj, bool]:
    """``RemoveTaint``: a copy of ``node`` without taints matching ``taint``'s key and effect.

    Returns whether any was removed; an untouched copy when none matched.
    """
    updated: Obj = deep_copy(dict(node))
    taints = node_taints(updated)
    kept = [t for t in taints if not match_taint(t, taint)]
    if len(kept) == len(taints):
        return updated, False
    updated.setdefault("spec", {})["taints"] = kept
    return updated, True
