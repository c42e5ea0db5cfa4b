"""Column definitions and the ``TableSpec`` that pairs a type's columns with its cells.

Column names, types, descriptions and priorities are upstream's (kubectl shows the
descriptions with ``kubectl explain``-like tooling and hides priority-1 columns unless
``-o wide``). The columns several printers share are declared once here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable, NamedTuple

Obj = dict[str, Any]
Cells = list[Any]
#: One row's cells for an object, given the virtual clock's ``now``.
Printer = Callable[[Obj, datetime], Cells]
#: Row conditions for an object (upstream sets them on finished pods), or None.
RowConditions = Callable[[Obj], list[Obj] | None]


class Column:
    """A ``TableColumnDefinition``. Declared once per printer and shared by every Table
    rendered with it, so nothing changes one after it is made."""

    __slots__ = ("name", "type", "description", "priority", "format")

    def __init__(self, name: str, type: str = "string", description: str = "", priority: int = 0,
                 format: str = "") -> None:
        self.name = name
        self.type = type
        self.description = description
        self.priority = priority
        self.format = format

    def to_dict(self) -> Obj:
        return {"name": self.name, "type": self.type, "format": self.format,
                "description": self.description, "priority": self.priority}


class TableSpec(NamedTuple):
    """A printer: its columns, the cells of one object, and optional row conditions."""

    columns: tuple[Column, ...]
    cells: Printer
    row_conditions: RowConditions | None = None


def col(name: str, typ: str = "string", description: str = "", priority: int = 0) -> Column:
    """A column declared positionally, the way upstream's printer tables read."""
    return Column(name, typ, description, priority)


NAME_DOC = ("Name must be unique within a namespace. Is required when creating resources, although some "
            "resources may allow a client to request the generation of an appropriate name automatically. "
            "Name is primarily intended for creation idempotence and configuration definition. Cannot be "
            "updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names")
CREATED_DOC = ("CreationTimestamp is a timestamp representing the server time when this object was created. "
               "It is not guaranteed to be set in happens-before order across separate operations. Clients may "
               "not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. "
               "Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/"
               "sig-architecture/api-conventions.md#metadata")
NAME = Column("Name", description=NAME_DOC, format="name")
AGE = Column("Age", description=CREATED_DOC)
CREATED_AT = Column("Created At", "date", CREATED_DOC)
CONTAINERS = Column("Containers", description="Names of each container in the template.", priority=1)
IMAGES = Column("Images", description="Images referenced by each container in the template.", priority=1)
SELECTOR = Column("Selector", description="A label query over pods that should match the replica count.", priority=1)
