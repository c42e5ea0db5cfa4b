"""The node printer (upstream's ``printNode``): status, roles, version and addresses."""

from __future__ import annotations

from datetime import datetime

from fakekube.api.table.cells import NONE, get, meta
from fakekube.api.table.columns import AGE, NAME, Cells, Obj, TableSpec, col, doc
from fakekube.api.table.duration import UNKNOWN, age

_ROLE_PREFIX = "node-role.kubernetes.io/"


def node_cells(node: Obj, now: datetime) -> Cells:
    """printNode: Ready/NotReady/Unknown plus SchedulingDisabled, roles from labels."""
    ready = next((c for c in get(node, "status", "conditions", default=[]) if c.get("type") == "Ready"), None)
    status = [] if ready is None else ["Ready" if ready.get("status") == "True" else "NotReady"]
    if not status:
        status = ["Unknown"]
    if get(node, "spec", "unschedulable"):
        status.append("SchedulingDisabled")
    info = get(node, "status", "nodeInfo", default={})
    return [
        meta(node, "name", ""), ",".join(status), ",".join(node_roles(node)) or NONE,
        age(meta(node, "creationTimestamp"), now), info.get("kubeletVersion", ""),
        _node_address(node, "InternalIP"), _node_address(node, "ExternalIP"),
        info.get("osImage") or UNKNOWN, info.get("kernelVersion") or UNKNOWN,
        info.get("containerRuntimeVersion") or UNKNOWN,
    ]


def node_roles(node: Obj) -> list[str]:
    """Roles from ``node-role.kubernetes.io/<role>`` and ``kubernetes.io/role`` labels, sorted."""
    roles: set[str] = set()
    for key, value in (meta(node, "labels") or {}).items():
        if key.startswith(_ROLE_PREFIX) and key[len(_ROLE_PREFIX):]:
            roles.add(key[len(_ROLE_PREFIX):])
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    return sorted(roles)


def _node_address(node: Obj, kind: str) -> str:
    for address in get(node, "status", "addresses", default=[]):
        if address.get("type") == kind:
            return address.get("address", "")
    return NONE


NODE_TABLE = TableSpec((
    NAME,
    col("Status", description="The status of the node"),
    col("Roles", description="The roles of the node"),
    AGE,
    doc("Version", "core.v1.NodeSystemInfo", "kubeletVersion"),
    doc("Internal-IP", "core.v1.NodeStatus", "addresses", priority=1),
    doc("External-IP", "core.v1.NodeStatus", "addresses", priority=1),
    doc("OS-Image", "core.v1.NodeSystemInfo", "osImage", priority=1),
    doc("Kernel-Version", "core.v1.NodeSystemInfo", "kernelVersion", priority=1),
    doc("Container-Runtime", "core.v1.NodeSystemInfo", "containerRuntimeVersion", priority=1),
), node_cells)
