"""What the controllers share: resource keys, the internal write mode, pod helpers."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fakekube.api.verbs.apiserver import WriteOptions
from fakekube.api.machinery.jsonutil import deep_copy
from fakekube.clock import format_rfc3339
from fakekube.store import Store

Obj = dict[str, Any]

NODES = ("", "nodes")
PODS = ("", "pods")
#: Controllers write as the server's own clients: their objects skip the wire checks.
INTERNAL = WriteOptions(internal=True)

DISRUPTION_TARGET = "DisruptionTarget"


#: The field the pods-by-node index is kept on (upstream informers index pods the same way).
NODE_NAME = ("spec", "nodeName")


def pods_on_node(store: Store, node_name: str) -> list[Obj]:
    """Every pod bound to ``node_name``, in key order (from the store's index, not a scan)."""
    return store.by_field(PODS, NODE_NAME, node_name)


def with_disruption_target(pod: Obj, now: datetime, reason: str, message: str, fail: bool = False) -> Obj:
    """A copy of ``pod`` carrying the DisruptionTarget condition a controller sets before
    deleting it; with ``fail``, also phase Failed unless it already finished (PodGC)."""
    updated = deep_copy(pod)
    status = updated.setdefault("status", {})
    if fail and status.get("phase") not in ("Succeeded", "Failed"):
        status["phase"] = "Failed"
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != DISRUPTION_TARGET]
    conditions.append({"type": DISRUPTION_TARGET, "status": "True", "lastProbeTime": None,
                       "lastTransitionTime": format_rfc3339(now), "reason": reason, "message": message})
    status["conditions"] = conditions
    return updated
