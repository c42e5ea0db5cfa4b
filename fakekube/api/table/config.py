"""Printers of the small core/v1 types: Namespaces, ConfigMaps, Secrets, ServiceAccounts,
LimitRanges and ResourceQuotas. Most are a name, a count and an age.
"""

from __future__ import annotations

from datetime import datetime

from fakekube.api.table.cells import age_cell, created_at_cell, get, meta, name_cell, simple
from fakekube.api.table.columns import AGE, CREATED_AT, NAME, Cells, Obj, TableSpec, col, doc


def _quota_cells(quota: Obj, now: datetime) -> Cells:
    """REQUEST and LIMIT: ``resource: used/hard`` pairs, ``limits.*`` under LIMIT."""
    hard = get(quota, "status", "hard", default={})
    used = get(quota, "status", "used", default={})
    requests: list[str] = []
    limits: list[str] = []
    for resource in sorted(hard):
        target = limits if resource.split(".")[0] == "limits" and "." in resource else requests
        target.append(f"{resource}: {used.get(resource, '0')}/{hard[resource]}")
    return [meta(quota, "name", ""), ", ".join(requests), ", ".join(limits), age_cell(quota, now)]


NAMESPACE_TABLE = TableSpec((
    NAME, col("Status", description="The status of the namespace"), AGE,
), simple(name_cell, lambda o, n: get(o, "status", "phase", default=""), age_cell))

CONFIG_MAP_TABLE = TableSpec((
    NAME, doc("Data", "core.v1.ConfigMap", "data"), AGE,
), simple(name_cell, lambda o, n: len(o.get("data") or {}) + len(o.get("binaryData") or {}), age_cell))

SECRET_TABLE = TableSpec((
    NAME,
    doc("Type", "core.v1.Secret", "type"),
    doc("Data", "core.v1.Secret", "data"),
    AGE,
), simple(name_cell, lambda o, n: o.get("type", ""),
          lambda o, n: len(o.get("data") or {}) + len(o.get("stringData") or {}), age_cell))

#: Up to 1.34 with the count of ``secrets``; from 1.35 without it (kubernetes#117160).
SERVICE_ACCOUNT_TABLE = TableSpec((
    NAME,
    doc("Secrets", "core.v1.ServiceAccount", "secrets"),
    AGE,
), simple(name_cell, lambda o, n: len(o.get("secrets") or []), age_cell),
    since=((35, TableSpec((NAME, AGE), simple(name_cell, age_cell))),))

LIMIT_RANGE_TABLE = TableSpec((NAME, CREATED_AT), simple(name_cell, created_at_cell))

RESOURCE_QUOTA_TABLE = TableSpec((
    NAME,
    col("Request", description="Request represents a minimum amount of cpu/memory that a container may consume."),
    col("Limit", description="Limits control the maximum amount of cpu/memory that a container may use "
                             "independent of contention on the node."),
    AGE,
), _quota_cells)
