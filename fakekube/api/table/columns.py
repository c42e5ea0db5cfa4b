"""Column definitions and the ``TableSpec`` that pairs a type's columns with its cells.

Column names, types, descriptions and priorities are upstream's (kubectl shows the
descriptions with ``kubectl explain``-like tooling and hides priority-1 columns unless
``-o wide``). The columns several printers share are declared once here.
"""

from __future__ import annotations

import threading
from datetime import datetime
from typing import Any, Callable, NamedTuple

from fakekube.api.wire import schema

Obj = dict[str, Any]
Cells = list[Any]
#: One row's cells for an object, given the virtual clock's ``now``.
Printer = Callable[[Obj, datetime], Cells]
#: Row conditions for an object (upstream sets them on finished pods), or None.
RowConditions = Callable[[Obj], list[Obj] | None]


class Column:
    """A ``TableColumnDefinition``. Declared once per printer and shared by every Table
    rendered with it, so nothing changes one after it is made. A column upstream describes
    with a field's documentation (``apiv1.PodStatus{}.SwaggerDoc()["podIP"]``) names that
    field in ``doc`` — (definition, field): its text is the served release's OpenAPI
    description of it (:func:`field_doc`), so it follows the Kubernetes version."""

    __slots__ = ("name", "type", "description", "priority", "format", "doc")

    def __init__(self, name: str, type: str = "string", description: str = "", priority: int = 0,
                 format: str = "", doc: tuple[str, str] | None = None) -> None:
        self.name = name
        self.type = type
        self.description = description
        self.priority = priority
        self.format = format
        self.doc = doc

    def to_dict(self, kubernetes_version: str = schema.DEFAULT_KUBERNETES_VERSION) -> Obj:
        description = field_doc(*self.doc, kubernetes_version) if self.doc is not None else self.description
        return {"name": self.name, "type": self.type, "format": self.format,
                "description": description, "priority": self.priority}


_API = "io.k8s.api."
_docs_lock = threading.Lock()
#: Field descriptions already looked up, by (version, definition, field): a handful of
#: versions times the columns' fields (a few hundred strings at most).
_docs: dict[tuple[str, str, str], str] = {}


def field_doc(definition: str, field: str, kubernetes_version: str = schema.DEFAULT_KUBERNETES_VERSION) -> str:
    """The description of ``field`` of the ``definition`` schema (``core.v1.PodStatus`` is
    ``io.k8s.api.core.v1.PodStatus``) in ``kubernetes_version``'s schemas ("" if none). The
    schemas load on first use: a cluster that never prints a Table never reads them."""
    key = (kubernetes_version, definition, field)
    with _docs_lock:
        found = _docs.get(key)
    if found is None:
        name = definition if definition.startswith("io.k8s.") else _API + definition
        schema_def = schema.load(kubernetes_version).definition(name) or {}
        found = str(((schema_def.get("properties") or {}).get(field) or {}).get("description") or "")
        with _docs_lock:
            _docs[key] = found
    return found


class TableSpec(NamedTuple):
    """A printer: its columns, the cells of one object, and optional row conditions.
    ``since``: (minor version, the printer from that Kubernetes minor on), oldest first,
    for a type whose printer changed between the versions fakekube serves."""

    columns: tuple[Column, ...]
    cells: Printer
    row_conditions: RowConditions | None = None
    since: tuple[tuple[int, "TableSpec"], ...] = ()
    #: Annotations only the served version's conversion writes (the internal type holds the
    #: value in a field): upstream makes a row's PartialObjectMetadata from the internal
    #: object, so they are not there (a DaemonSet's template generation).
    internal_annotations: tuple[str, ...] = ()

    def for_version(self, kubernetes_version: str) -> "TableSpec":
        """The printer of ``kubernetes_version`` (``"1.35"``)."""
        chosen = self
        minor = int(kubernetes_version.split(".")[1])
        for since, spec in self.since:
            if minor >= since:
                chosen = spec
        return chosen


def col(name: str, typ: str = "string", description: str = "", priority: int = 0) -> Column:
    """A column declared positionally, the way upstream's printer tables read."""
    return Column(name, typ, description, priority)


def doc(name: str, definition: str, field: str, typ: str = "string", priority: int = 0, fmt: str = "") -> Column:
    """A column described by a field's documentation (upstream's ``SwaggerDoc()[field]``)."""
    return Column(name, typ, priority=priority, format=fmt, doc=(definition, field))


OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
NAME = Column("Name", format="name", doc=(OBJECT_META, "name"))
AGE = Column("Age", doc=(OBJECT_META, "creationTimestamp"))
CREATED_AT = Column("Created At", "date", doc=(OBJECT_META, "creationTimestamp"))
CONTAINERS = Column("Containers", description="Names of each container in the template.", priority=1)
IMAGES = Column("Images", description="Images referenced by each container in the template.", priority=1)
