"""CustomResourceDefinition schemas: upstream's structural-schema rules and what a custom
resource's write does with its version's ``openAPIV3Schema``.

The contract the CRD serving code (``fakekube/api/types/apiextensions.py`` and the custom
resource strategy) relies on; apiextensions-apiserver is the spec:

- :func:`validate_crd_schema`: the checks a CRD's ``openAPIV3Schema`` gets at CRD create
  and update (structural schema, allowed extensions, CEL rules that compile), as
  ``FieldError``s under ``path`` with upstream's messages.
- :func:`compile_schema`: a schema compiled once per served CRD version into a
  :class:`CompiledSchema` that defaults, prunes and validates objects of that version.
"""

from __future__ import annotations

from typing import Any

from fakekube.api.machinery.errors import FieldError

Obj = dict[str, Any]


class CompiledSchema:
    """One CRD version's schema, ready to apply to objects (built by :func:`compile_schema`).

    A write of a custom resource runs ``prune`` (unknown fields), ``default``, then
    ``validate`` (create) or ``validate_update`` (update, with CEL transition rules).
    """

    def __init__(self, schema: Obj) -> None:
        self.schema = schema

    def prune(self, obj: Obj) -> list[str]:
        """Drop fields the schema does not know (unless ``x-kubernetes-preserve-unknown-fields``),
        in place; return their paths (``spec.foo``), for fieldValidation's warnings and errors."""
        return []

    def default(self, obj: Obj) -> None:
        """Fill the schema's ``default`` values in place."""

    def validate(self, obj: Obj) -> list[FieldError]:
        """The schema's checks and ``x-kubernetes-validations`` rules of a new object."""
        return []

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        """``validate`` plus the transition rules (``oldSelf``) between ``old`` and ``new``."""
        return self.validate(new)


def compile_schema(schema: Obj) -> CompiledSchema:
    """A version's ``openAPIV3Schema`` compiled for object writes."""
    return CompiledSchema(schema)


def validate_crd_schema(schema: Obj, path: str) -> list[FieldError]:
    """Upstream's checks of a CRD version's ``openAPIV3Schema`` at ``path``
    (e.g. ``spec.versions[0].schema.openAPIV3Schema``)."""
    return []


__all__ = ["CompiledSchema", "compile_schema", "validate_crd_schema"]
