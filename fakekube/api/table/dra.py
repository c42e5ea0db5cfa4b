"""Printers of resource.k8s.io (dynamic resource allocation, GA in 1.34): device classes,
resource claims and their templates, resource slices."""

from __future__ import annotations

from datetime import datetime

from fakekube.api.table.cells import age_cell, get, meta
from fakekube.api.table.columns import AGE, NAME, Cells, Column, Obj, TableSpec
from fakekube.api.table.docs import doc_col

DEVICE_CLASS_TABLE = TableSpec((NAME, AGE), lambda dc, now: [meta(dc, "name", ""), age_cell(dc, now)])
RESOURCE_CLAIM_TEMPLATE_TABLE = TableSpec((NAME, AGE), lambda t, now: [meta(t, "name", ""), age_cell(t, now)])


def resource_claim_state(claim: Obj) -> str:
    """``resourceClaimState``: deleted, pending (not allocated), allocated, reserved."""
    states = []
    deleting = bool(meta(claim, "deletionTimestamp", None))
    if deleting:
        states.append("deleted")
    if get(claim, "status", "allocation") is None:
        if not deleting:
            states.append("pending")
    else:
        states.append("allocated")
        if get(claim, "status", "reservedFor"):
            states.append("reserved")
    return ",".join(states)


RESOURCE_CLAIM_TABLE = TableSpec((
    NAME,
    Column("State", description="A summary of the current state (allocated, pending, reserved, etc.)."),
    AGE,
), lambda claim, now: [meta(claim, "name", ""), resource_claim_state(claim), age_cell(claim, now)])


def _slice_cells(rs: Obj, now: datetime) -> Cells:
    return [meta(rs, "name", ""), get(rs, "spec", "nodeName", default="") or "", get(rs, "spec", "driver", default=""),
            get(rs, "spec", "pool", "name", default=""), age_cell(rs, now)]


_SLICE_SPEC = "resource.v1.ResourceSliceSpec"
RESOURCE_SLICE_TABLE = TableSpec((
    NAME,
    doc_col("Node", "string", _SLICE_SPEC, "nodeName"),
    doc_col("Driver", "string", _SLICE_SPEC, "driver"),
    doc_col("Pool", "string", "resource.v1.ResourcePool", "name"),
    AGE,
), _slice_cells)
