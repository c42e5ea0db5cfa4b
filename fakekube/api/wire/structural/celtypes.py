"""The CEL types a CRD rule sees, and its type check at CRD create/update.

apiextensions compiles each ``x-kubernetes-validations`` rule against its schema's
declared types (SchemaDeclType, :class:`~.celcost.Declarations`): ``self`` is the value
where the rule sits and ``oldSelf`` the same type (``optional_type(...)`` with
``optionalOldSelf``). An object is an object type named by its path from the rule's
root (``selfType<N>.spec.template``; upstream's N is the nanosecond the rule was
compiled at, fakekube's is 0), a list's elements ``<path>.@idx``, a map's values
``<path>.@elem``; int-or-string is ``dyn``; a property whose schema has no CEL type
(no ``type``) is not a field at all. A rule that fails the check, or is not a bool,
is refused with upstream's wording.
"""

from __future__ import annotations

from fakekube.api.wire import cel
from fakekube.api.wire.cel import checker
from fakekube.api.wire.cel import types as t

#: What upstream's object type names start with (then the compile instant's nanoseconds).
ROOT_TYPE_NAME = "selfType0"

_SCALARS = {"bool": t.BOOL_T, "int": t.INT_T, "double": t.DOUBLE_T, "string": t.STRING_T, "bytes": t.BYTES_T,
            "duration": t.DURATION_T, "timestamp": t.TIMESTAMP_T, "dyn": t.DYN_T}


def declare(decl: cel.Decl, name: str, structs: dict[str, dict[str, t.Type]]) -> t.Type:
    """The CEL type of ``decl`` named ``name`` (MaybeAssignTypeName), its object types
    added to ``structs``."""
    if decl.kind == "struct":
        structs[name] = {field: declare(sub, f"{name}.{field}", structs) for field, sub in decl.fields.items()}
        return t.struct(name)
    if decl.kind == "list" and decl.elem is not None:
        return t.list_of(declare(decl.elem, f"{name}.@idx", structs))
    if decl.kind == "map" and decl.elem is not None:
        return t.map_of(t.STRING_T, declare(decl.elem, f"{name}.@elem", structs))
    return _SCALARS.get(decl.kind, t.DYN_T)


def rule_env(decl: cel.Decl, optional_old_self: bool, minor: int) -> checker.Env:
    """``self`` and ``oldSelf`` of a rule whose position declares ``decl``."""
    structs: dict[str, dict[str, t.Type]] = {}
    self_type = declare(decl, ROOT_TYPE_NAME, structs)
    old_type = t.optional_of(self_type) if optional_old_self else self_type
    return checker.Env({"self": self_type, "oldSelf": old_type}, structs, minor)


def check_rule(program: cel.Program, decl: cel.Decl, optional_old_self: bool, minor: int, want: t.Type) -> str:
    """Why a compiled rule (or messageExpression, ``want`` string) cannot be at a position
    declaring ``decl``: cel-go's errors after ``compilation failed: ``, ``""`` when it
    type-checks to ``want``, or ``"type"`` when it checks to another type."""
    tree, source = program.tree, program.source
    if tree is None:  # the cost parser cannot read it: nothing to check it on
        return ""
    found = checker.check(tree, source, rule_env(decl, optional_old_self, minor))
    if found.errors:
        return found.errors
    return "" if found.type == want or (found.unsure and t.is_dyn(found.type)) else "type"
