"""Tables of custom resources: a CRD version's ``additionalPrinterColumns``.

As apiextensions-apiserver's table convertor (``pkg/registry/customresource/tableconvertor``):
a Name column, then one column per printer column (type, format, priority and description
as declared), each cell the first value its JSONPath finds (missing keys give an empty
cell). ``string`` cells print the value as kubectl's jsonpath does (maps and lists as
compact JSON); ``integer``/``number``/``boolean`` cells are typed values; ``date`` cells
are ages on the virtual clock. A version without columns gets ``Age`` (upstream's
``serveDefaultColumnsIfEmpty``).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from fakekube.api.machinery.errors import go_float
from fakekube.api.table.cells import name_cell
from fakekube.api.table.columns import NAME, OBJECT_META, Column, Obj, TableSpec
from fakekube.api.table.duration import UNKNOWN, age, parse_time
from fakekube.api.table.jsonpath import JSONPath, compile_path

#: ``serveDefaultColumnsIfEmpty``: what a version without printer columns shows.
DEFAULT_COLUMNS: tuple[Obj, ...] = ({"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},)
_DEFAULT_AGE = Column("Age", "date", doc=(OBJECT_META, "creationTimestamp"))


def _column(declared: Obj) -> Column:
    """A printer column as the CRD declares it; without a description, upstream's
    ``Custom resource definition column (in JSONPath format): <path>``."""
    if declared is DEFAULT_COLUMNS[0]:
        return _DEFAULT_AGE
    description = str(declared.get("description") or "") or \
        f"Custom resource definition column (in JSONPath format): {declared.get('jsonPath') or ''}"
    return Column(str(declared.get("name") or ""), str(declared.get("type") or "string"), description,
                  int(declared.get("priority") or 0), str(declared.get("format") or ""))


def custom_table(printer_columns: list[Obj] | None) -> TableSpec:
    """The TableSpec of a CRD version; a column whose path does not compile prints empty."""
    declared = [c for c in (printer_columns or []) if isinstance(c, dict)] or list(DEFAULT_COLUMNS)
    columns = tuple(_column(c) for c in declared)
    paths = [_compiled(str(c.get("jsonPath") or "")) for c in declared]
    kinds = [column.type for column in columns]

    def cells(obj: Obj, now: datetime) -> list[Any]:
        return [name_cell(obj, now)] + [_cell(path, kind, obj, now) for path, kind in zip(paths, kinds)]
    return TableSpec((NAME, *columns), cells)


def _compiled(text: str) -> JSONPath | None:
    try:
        return compile_path(text)
    except ValueError:
        return None


def _cell(path: JSONPath | None, kind: str, obj: Obj, now: datetime) -> Any:
    found = path.find(obj) if path is not None else []
    if not found:
        return None
    value = found[0]
    if kind == "string":
        return print_value(value)
    return cell_for_json_value(kind, value, now)


def print_value(value: Any) -> str:
    """A value as kubectl's jsonpath prints it: maps and lists as compact JSON, strings
    as they are, numbers and booleans in Go's ``%v``."""
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    return str(value)


def cell_for_json_value(kind: str, value: Any, now: datetime) -> Any:
    """``cellForJSONValue``: the value if it has the column's type (integers truncate
    floats, numbers widen integers), an age for a date, else an empty cell."""
    numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "integer" and numeric:
        return int(value)
    if kind == "number" and numeric:
        return float(value)
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind == "date" and isinstance(value, str):
        if parse_time(value) is None:
            return "<invalid>"
        return age(value, now) or UNKNOWN
    return None
