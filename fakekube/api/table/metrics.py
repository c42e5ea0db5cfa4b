"""metrics-server's Table for ``metrics.k8s.io`` (``kubectl get podmetrics``): its own
``ConvertToTable`` in ``pkg/api/table.go``, re-expressed.

Columns: the name, one per resource in the usage (``cpu``, ``memory``, sorted), then the
window. A pod's row sums its containers' usage, as ``Quantity.Add`` does.
"""

from __future__ import annotations

from datetime import datetime

from fakekube.api.table.columns import Cells, Column, Obj, TableSpec
from fakekube.objects.quantity import format_binary_si, format_decimal_si, parse_quantity

_NAME = Column("Name", description="Name of the resource", format="name")
_COLUMNS = (_NAME, Column("cpu", format="quantity"), Column("memory", format="quantity"),
            Column("Window", format="duration"))


def _node_cells(obj: Obj, now: datetime) -> Cells:
    usage = obj.get("usage") or {}
    return [obj["metadata"]["name"], usage.get("cpu", "0"), usage.get("memory", "0"), obj.get("window", "")]


def _pod_cells(obj: Obj, now: datetime) -> Cells:
    containers = obj.get("containers") or []
    cpu = sum(parse_quantity((c.get("usage") or {}).get("cpu", "0")) for c in containers)
    memory = sum(parse_quantity((c.get("usage") or {}).get("memory", "0")) for c in containers)
    return [obj["metadata"]["name"], format_decimal_si(int(cpu * 10**9), -9), format_binary_si(int(memory)),
            obj.get("window", "")]


NODE_METRICS_TABLE = TableSpec(_COLUMNS, _node_cells)
POD_METRICS_TABLE = TableSpec(_COLUMNS, _pod_cells)
