"""CustomResourceDefinition schemas: upstream's structural-schema rules and what a custom
resource's write does with its version's ``openAPIV3Schema``.

The contract the CRD serving code (``fakekube/api/types/apiextensions.py`` and the custom
resource strategy) relies on; apiextensions-apiserver 1.33 is the spec:

- :func:`validate_crd_schema`: the checks a CRD's ``openAPIV3Schema`` gets at CRD create
  and update (structural schema, allowed extensions, defaults, CEL rules that compile), as
  ``FieldError``s under ``path`` with upstream's messages (:mod:`.crdschema`).
- :func:`compile_schema`: a schema compiled once per served CRD version into a
  :class:`CompiledSchema` that prunes (:mod:`.pruning`), defaults (:mod:`.defaulting`) and
  validates objects of that version: OpenAPI (:mod:`.openapi`), list-type and embedded
  resource invariants (:mod:`.invariants`), then ``x-kubernetes-validations`` (:mod:`.celrules`).

Errors from ``validate``/``validate_update`` use the paths upstream gives a custom
resource (``spec.replicas``, ``<nil>`` for a rule on the root); the caller puts them in
one 422 Invalid with causes.
"""

from __future__ import annotations

from typing import Any

from fakekube.api.machinery.errors import (FIELD_NOT_SUPPORTED, FIELD_REQUIRED, FIELD_TOO_LONG, FIELD_TOO_MANY,
                                           FIELD_TYPE_INVALID, FieldError, invalid)
from fakekube.api.wire.structural.celrules import RuleValidator
from fakekube.api.wire.structural.crdschema import validate_crd_schema
from fakekube.api.wire.structural.defaulting import apply_defaults
from fakekube.api.wire.structural.invariants import embedded_resources, list_sets_and_maps
from fakekube.api.wire.structural.node import Node
from fakekube.api.wire.structural.openapi import ABSENT, OpenAPIValidator
from fakekube.api.wire.structural.pruning import prune_object

Obj = dict[str, Any]

#: Errors after which upstream does not run CEL rules (hasBlockingErr).
_BLOCKING = frozenset((FIELD_NOT_SUPPORTED, FIELD_REQUIRED, FIELD_TOO_LONG, FIELD_TOO_MANY, FIELD_TYPE_INVALID))
BLOCKED_RULES_MESSAGE = ("some validation rules were not checked because the object was invalid; "
                         "correct the existing errors to complete validation")


class CompiledSchema:
    """One CRD version's schema, ready to apply to objects (built by :func:`compile_schema`).

    A write of a custom resource runs ``prune`` (unknown fields), ``default``, then
    ``validate`` (create) or ``validate_update`` (update, with CEL transition rules).
    Immutable after construction: one instance serves concurrent writes.
    """

    def __init__(self, schema: Obj) -> None:
        self.schema = schema
        self.root = Node(schema if isinstance(schema, dict) else {})

    def prune(self, obj: Obj) -> list[str]:
        """Drop fields the schema does not know (unless ``x-kubernetes-preserve-unknown-fields``),
        in place; return their paths (``spec.foo``), for fieldValidation's warnings and errors."""
        return prune_object(obj, self.root)

    def default(self, obj: Obj) -> None:
        """Fill the schema's ``default`` values in place."""
        apply_defaults(obj, self.root)

    def validate(self, obj: Obj, accessors: list[FieldError] | None = None) -> list[FieldError]:
        """The schema's checks and ``x-kubernetes-validations`` rules of a new object.
        ``accessors``: the caller's errors of the object's scale paths, which upstream puts
        after the schema's and before the embedded-resource, list and rule ones."""
        return self._validate(obj, ABSENT, accessors or [])

    def validate_update(self, new: Obj, old: Obj, accessors: list[FieldError] | None = None) -> list[FieldError]:
        """``validate`` plus the transition rules (``oldSelf``) between ``old`` and ``new``;
        what did not change is not held against the update (validation ratcheting)."""
        return self._validate(new, old, accessors or [])

    def validate_status_update(self, new: Obj, old: Obj, accessors: list[FieldError] | None = None) -> list[FieldError]:
        """``validate_update`` of a write to the status subresource: the OpenAPI checks see
        only ``status``, against the status schema (upstream's status validator), so their
        texts name the path below it (``replicas in body ...`` at ``status.replicas``); the
        list, embedded-resource and rule checks still see the whole object."""
        checker = OpenAPIValidator(prefix="status")
        status_node = self.root.properties.get("status")
        if status_node is not None and "status" in new:
            checker.validate(new["status"], status_node, "", old.get("status", ABSENT))
        return self._validate(new, old, accessors or [], checker)

    def _validate(self, obj: Obj, old: Any, accessors: list[FieldError],
                  checker: OpenAPIValidator | None = None) -> list[FieldError]:
        if checker is None:
            checker = OpenAPIValidator()
            checker.validate(obj, self.root, "", old)
        errs = checker.errors + accessors
        errs += embedded_resources(obj, self.root)
        if old is ABSENT or not list_sets_and_maps(old, self.root):
            errs += list_sets_and_maps(obj, self.root)
        if self.root.has_rules:
            if any(e.type in _BLOCKING for e in errs):
                errs.append(invalid("<nil>", None, BLOCKED_RULES_MESSAGE))
            else:
                rules = RuleValidator(update=old is not ABSENT)
                rules.validate(obj, old, self.root, "", True, False)
                errs += rules.errors
        return errs


def compile_schema(schema: Obj) -> CompiledSchema:
    """A version's ``openAPIV3Schema`` compiled for object writes."""
    return CompiledSchema(schema)


__all__ = ["BLOCKED_RULES_MESSAGE", "CompiledSchema", "compile_schema", "validate_crd_schema"]
