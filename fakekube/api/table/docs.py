"""Columns whose description is a field's documentation (upstream's ``SwaggerDoc()[field]``).

The text is the served release's OpenAPI description of that field, read when a Table is
first rendered (the schemas load lazily; a cluster that never prints such a column never
loads them).
"""

from __future__ import annotations

from fakekube.api.table.columns import Column, Obj
from fakekube.api.wire import schema

_API = "io.k8s.api."


class DocColumn(Column):
    """A column described by ``definition``'s ``field`` (``certificates.v1.CertificateSigningRequestSpec``)."""

    __slots__ = ("definition", "field")

    def __init__(self, name: str, type: str = "string", description: str = "", priority: int = 0,
                 format: str = "", definition: str = "", field: str = "") -> None:
        super().__init__(name, type, description, priority, format)
        self.definition = definition
        self.field = field

    def to_dict(self) -> Obj:
        out = super().to_dict()
        out["description"] = field_doc(self.definition, self.field)
        return out


def field_doc(definition: str, field: str) -> str:
    """The description of ``field`` of the ``io.k8s.api.<definition>`` schema ("" if none)."""
    found = schema.load(schema.DEFAULT_KUBERNETES_VERSION).definition(_API + definition) or {}
    return str(((found.get("properties") or {}).get(field) or {}).get("description") or "")


def doc_col(name: str, typ: str, definition: str, field: str, fmt: str = "") -> DocColumn:
    return DocColumn(name, typ, format=fmt, definition=definition, field=field)
