"""Where a DaemonSet's pods belong: which nodes, with which tolerations, pinned how.

Pure rules from upstream (Kubernetes 1.33): ``NodeShouldRunDaemonPod`` and ``predicates``
(``pkg/controller/daemon/daemon_controller.go``), ``AddOrUpdateDaemonPodTolerations``,
``ReplaceDaemonSetPodNodeNameNodeAffinity`` and ``GetTargetNodeName``
(``pkg/controller/daemon/util/daemonset_util.go``), ``AddOrUpdateTolerationInPodSpec``
(``pkg/apis/core/v1/helper``). Inputs are never changed.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from fakekube.objects._json import deep_copy
from fakekube.objects.nodeaffinity import RequiredNodeAffinity, required_node_affinity
from fakekube.objects.nodeselectors import NODE_NAME_FIELD
from fakekube.objects.taints import (
    NO_EXECUTE,
    NO_SCHEDULE,
    TAINT_NODE_DISK_PRESSURE,
    TAINT_NODE_MEMORY_PRESSURE,
    TAINT_NODE_NETWORK_UNAVAILABLE,
    TAINT_NODE_NOT_READY,
    TAINT_NODE_PID_PRESSURE,
    TAINT_NODE_UNREACHABLE,
    TAINT_NODE_UNSCHEDULABLE,
)
from fakekube.objects.tolerations import OP_EXISTS, first_untolerated_taint

Obj = dict[str, Any]


def _exists(key: str, effect: str) -> Obj:
    return {"key": key, "operator": OP_EXISTS, "effect": effect}


#: What every daemon pod tolerates, in the order upstream adds them: node problems must not
#: evict it (no tolerationSeconds: forever), and the condition taints must not keep it off.
DAEMON_TOLERATIONS: tuple[Obj, ...] = (
    _exists(TAINT_NODE_NOT_READY, NO_EXECUTE),
    _exists(TAINT_NODE_UNREACHABLE, NO_EXECUTE),
    _exists(TAINT_NODE_DISK_PRESSURE, NO_SCHEDULE),
    _exists(TAINT_NODE_MEMORY_PRESSURE, NO_SCHEDULE),
    _exists(TAINT_NODE_PID_PRESSURE, NO_SCHEDULE),
    _exists(TAINT_NODE_UNSCHEDULABLE, NO_SCHEDULE),
)
#: Added too for a hostNetwork pod, which needs no pod network.
HOST_NETWORK_TOLERATION = _exists(TAINT_NODE_NETWORK_UNAVAILABLE, NO_SCHEDULE)

_IDENTITY = ("key", "operator", "value", "effect")


def add_or_update_toleration(tolerations: Sequence[Mapping[str, Any]], toleration: Mapping[str, Any]) -> list[Obj]:
    """``AddOrUpdateTolerationInPodSpec``: a toleration with the same key, operator, value and
    effect is replaced where it stands (a user's ``tolerationSeconds`` goes); otherwise the
    new one is appended."""
    result: list[Obj] = []
    replaced = False
    for existing in tolerations:
        if all((existing.get(f) or "") == (toleration.get(f) or "") for f in _IDENTITY):
            result.append(dict(toleration))
            replaced = True
        else:
            result.append(dict(existing))
    if not replaced:
        result.append(dict(toleration))
    return result


def daemon_pod_tolerations(spec: Mapping[str, Any]) -> list[Obj]:
    """``AddOrUpdateDaemonPodTolerations``: the pod spec's tolerations with the daemon ones."""
    tolerations: list[Obj] = [dict(t) for t in spec.get("tolerations") or []]
    wanted = DAEMON_TOLERATIONS + ((HOST_NETWORK_TOLERATION,) if spec.get("hostNetwork") else ())
    for toleration in wanted:
        tolerations = add_or_update_toleration(tolerations, toleration)
    return tolerations


class Placement:
    """``NodeShouldRunDaemonPod`` for one DaemonSet, compiled once per sync (a sync asks it
    about every node, up to three times)."""

    __slots__ = ("_node_name", "_affinity", "_tolerations")

    def __init__(self, ds: Mapping[str, Any]) -> None:
        template = (ds.get("spec") or {}).get("template") or {}
        spec = template.get("spec") or {}
        self._node_name: str = spec.get("nodeName") or ""
        self._affinity: RequiredNodeAffinity = required_node_affinity(template)
        self._tolerations = daemon_pod_tolerations(spec)

    def should_run(self, node: Mapping[str, Any]) -> tuple[bool, bool]:
        """(should run: a daemon pod belongs here if there is none; should continue running:
        one already here may stay). A node the pod does not fit is (False, False); a node
        whose only obstacle is a tolerated-for-NoExecute NoSchedule taint is (False, True)."""
        meta = node.get("metadata") or {}
        name = meta.get("name") or ""
        if self._node_name and self._node_name != name:
            return False, False
        if not self._affinity.matches(meta.get("labels") or {}, name):
            return False, False
        taints = (node.get("spec") or {}).get("taints")
        if first_untolerated_taint(taints, self._tolerations, (NO_SCHEDULE, NO_EXECUTE)) is None:
            return True, True
        return False, first_untolerated_taint(taints, self._tolerations, (NO_EXECUTE,)) is None


def pinned_affinity(affinity: Mapping[str, Any] | None, node_name: str) -> Obj:
    """``ReplaceDaemonSetPodNodeNameNodeAffinity``: ``affinity`` whose required node affinity
    is replaced by one term ``matchFields metadata.name In [node_name]`` (the default
    scheduler then can only bind the pod there; preferred terms and pod affinity stay)."""
    term = {"matchFields": [{"key": NODE_NAME_FIELD, "operator": "In", "values": [node_name]}]}
    result: Obj = deep_copy(dict(affinity or {}))
    node_affinity = dict(result.get("nodeAffinity") or {})
    required = dict(node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    required["nodeSelectorTerms"] = [term]
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = required
    result["nodeAffinity"] = node_affinity
    return result


def target_node_name(pod: Mapping[str, Any]) -> str | None:
    """``GetTargetNodeName``: the node a daemon pod is bound to, or pinned to by its node
    affinity while unscheduled; None when neither says (such a pod is ignored)."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution"))
    for term in (required or {}).get("nodeSelectorTerms") or []:
        for field in (term or {}).get("matchFields") or []:
            if field.get("key") == NODE_NAME_FIELD and field.get("operator") == "In":
                values = field.get("values") or []
                return str(values[0]) if len(values) == 1 else None
    return None
