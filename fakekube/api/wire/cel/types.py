"""CEL's static types and how cel-go's checker unifies them.

A :class:`Type` is a kind, a name and parameters, as cel-go's ``types.Type``: ``int``,
``list(string)``, ``map(string, int)``, ``optional_type(int)``, an object type of a
CRD schema (``selfType0.spec``), a type parameter (``A``, or a fresh ``_var3`` while
an overload is matched). :class:`Mapping` holds the parameters bound so far, and the
functions below are cel-go's assignability rules (checker/types.go) over it: a call's
argument types are matched against each overload's, binding parameters as they go;
``dyn`` and errors match anything. The checker (:mod:`.checker`) drives them.
"""

from __future__ import annotations

from typing import NamedTuple

# Kinds (cel-go's types.Kind, by name).
ANY, BOOL, BYTES, DOUBLE, DURATION, DYN, ERROR, INT, LIST, MAP, NULL, OPAQUE, STRING, STRUCT, TIMESTAMP, TYPE, \
    PARAM, UINT = ("any", "bool", "bytes", "double", "duration", "dyn", "error", "int", "list", "map", "null",
                   "opaque", "string", "struct", "timestamp", "type", "param", "uint")


class Type(NamedTuple):
    """One CEL type. ``name`` is the runtime type name (``list``, ``google.protobuf.Duration``
    is ``duration`` here, an object type's full name, a parameter's name)."""

    kind: str
    name: str
    params: tuple["Type", ...] = ()

    def __str__(self) -> str:
        return format_type(self)


def _simple(kind: str, name: str | None = None) -> Type:
    return Type(kind, name if name is not None else kind)


BOOL_T, BYTES_T, DOUBLE_T, INT_T, STRING_T, UINT_T = (_simple(k) for k in (BOOL, BYTES, DOUBLE, INT, STRING, UINT))
DURATION_T = _simple(DURATION, "google.protobuf.Duration")
TIMESTAMP_T = _simple(TIMESTAMP, "google.protobuf.Timestamp")
NULL_T = _simple(NULL, "null_type")
DYN_T = _simple(DYN)
ANY_T = _simple(ANY, "google.protobuf.Any")
ERROR_T = _simple(ERROR)
TYPE_T = _simple(TYPE)


def list_of(elem: Type) -> Type:
    return Type(LIST, "list", (elem,))


def map_of(key: Type, value: Type) -> Type:
    return Type(MAP, "map", (key, value))


def optional_of(value: Type) -> Type:
    return Type(OPAQUE, "optional_type", (value,))


def opaque(name: str, *params: Type) -> Type:
    return Type(OPAQUE, name, params)


def struct(name: str) -> Type:
    return Type(STRUCT, name)


def param(name: str) -> Type:
    return Type(PARAM, name)


def type_of(value: Type | None = None) -> Type:
    """``type`` (no parameter) or ``type(value)``."""
    return TYPE_T if value is None else Type(TYPE, "type", (value,))


def is_dyn(t: Type) -> bool:
    """The checker's isDyn: dyn and any."""
    return t.kind in (DYN, ANY)


def is_dyn_or_error(t: Type) -> bool:
    return t.kind in (DYN, ANY, ERROR)


def is_optional(t: Type) -> bool:
    return t.kind == OPAQUE and t.name == "optional_type"


def unwrap_optional(t: Type) -> tuple[Type, bool]:
    return (t.params[0], True) if is_optional(t) else (t, False)


# -- formatting (checker.FormatCELType) ---------------------------------------------------------

_NAMES = {ANY: "any", DURATION: "duration", ERROR: "!error!", NULL: "null", TIMESTAMP: "timestamp"}


def format_type(t: Type) -> str:
    """How cel-go's errors print a type: ``list(string)``, ``map(string, int)``, ``null``."""
    if t.kind in _NAMES:
        return _NAMES[t.kind]
    if not t.params:
        return t.name
    return f"{t.name}({', '.join(format_type(p) for p in t.params)})"


def format_call(arguments: list[Type], member: bool) -> str:
    """An overload's argument list as the no-matching-overload error prints it:
    ``(int, string)`` or ``string.(int)``."""
    if member:
        return f"{format_type(arguments[0])}.({', '.join(format_type(a) for a in arguments[1:])})"
    return f"({', '.join(format_type(a) for a in arguments)})"


# -- assignability (checker/types.go) -----------------------------------------------------------

class Mapping:
    """Type parameters bound so far (cel-go's mapping); copied for a tentative match."""

    __slots__ = ("bound",)

    def __init__(self, bound: dict[str, Type] | None = None) -> None:
        self.bound: dict[str, Type] = bound if bound is not None else {}

    def copy(self) -> "Mapping":
        return Mapping(dict(self.bound))

    def find(self, t: Type) -> Type | None:
        return self.bound.get(format_type(t))

    def add(self, t: Type, to: Type) -> None:
        self.bound[format_type(t)] = to


def _runtime_dyn(t: Type) -> bool:
    """types.Type.isDyn: dyn, any and type parameters."""
    return t.kind in (DYN, ANY, PARAM)


def accepts(to: Type, source: Type) -> bool:
    """types.Type.IsAssignableType's default: same kind, name and assignable parameters,
    or a dynamic target."""
    if to == source or _runtime_dyn(to):
        return True
    if to.kind != source.kind or to.name != source.name or len(to.params) != len(source.params):
        return False
    return all(accepts(tp, sp) for tp, sp in zip(to.params, source.params))


def _less_specific(t1: Type, t2: Type) -> bool:
    """isEqualOrLessSpecific."""
    if is_dyn(t1) or t1.kind == PARAM:
        return True
    if is_dyn(t2) or t2.kind == PARAM:
        return False
    if t1.kind != t2.kind:
        return False
    if t1.kind == OPAQUE:
        return t1.name == t2.name and len(t1.params) == len(t2.params) and \
            all(_less_specific(a, b) for a, b in zip(t1.params, t2.params))
    if t1.kind in (LIST, MAP):
        return all(_less_specific(a, b) for a, b in zip(t1.params, t2.params))
    if t1.kind == TYPE:
        return True
    return t1 == t2


def most_general(t1: Type, t2: Type) -> Type:
    return t1 if _less_specific(t1, t2) else t2


def _not_referenced_in(m: Mapping, t: Type, within: Type) -> bool:
    if t == within:
        return False
    if within.kind == PARAM:
        found = m.find(within)
        return True if found is None else _not_referenced_in(m, t, found)
    if within.kind in (OPAQUE, LIST, MAP, TYPE):
        return all(_not_referenced_in(m, t, p) for p in within.params)
    return True


def _valid_substitution(m: Mapping, t1: Type, t2: Type) -> tuple[bool, bool]:
    """isValidTypeSubstitution: can parameter ``t2`` stand for ``t1``? (valid, had a binding)"""
    if t1 == t2:
        return True, True
    bound = m.find(t2)
    if bound is not None:
        if t1 == bound:
            return True, True
        if _assignable(m, t1, bound):
            general = most_general(t1, bound)
            if _not_referenced_in(m, t2, general):
                m.add(t2, general)
            return True, True
        return False, True
    if _not_referenced_in(m, t2, t1):
        m.add(t2, t1)
        return True, False
    return False, False


def _nullable(t: Type) -> bool:
    """internalIsAssignableNull: what ``null`` may stand for."""
    return t.kind in (OPAQUE, STRUCT, ANY, DURATION, TIMESTAMP, NULL) or _runtime_dyn(t)


def _assignable(m: Mapping, t1: Type, t2: Type) -> bool:
    """internalIsAssignable: may a value of ``t2`` be used where ``t1`` is expected
    (binding parameters in ``m``)?"""
    if t2.kind == PARAM:
        valid, had = _valid_substitution(m, t1, t2)
        if valid:
            return True
        if had:
            return False
    if t1.kind == PARAM:
        return _valid_substitution(m, t2, t1)[0]
    if is_dyn_or_error(t1) or is_dyn_or_error(t2):
        return True
    if t1.kind == NULL:
        return _nullable(t2)
    if t2.kind == NULL:
        return _nullable(t1)
    if t1.kind in (BOOL, BYTES, DOUBLE, INT, STRING, UINT, ANY, DURATION, TIMESTAMP, STRUCT):
        return accepts(t2, t1)
    if t1.kind == TYPE:
        return t2.kind == TYPE
    if t1.kind in (OPAQUE, LIST, MAP):
        return t1.kind == t2.kind and t1.name == t2.name and _assignable_list(m, t1.params, t2.params)
    return False


def _assignable_list(m: Mapping, l1: tuple[Type, ...] | list[Type], l2: tuple[Type, ...] | list[Type]) -> bool:
    if len(l1) != len(l2):
        return False
    return all(_assignable(m, a, b) for a, b in zip(l1, l2))


def assignable(m: Mapping, t1: Type, t2: Type) -> Mapping | None:
    """isAssignable: the mapping with the bindings the match needed, or None (``m`` untouched)."""
    trial = m.copy()
    return trial if _assignable(trial, t1, t2) else None


def assignable_list(m: Mapping, l1: list[Type], l2: list[Type]) -> Mapping | None:
    trial = m.copy()
    return trial if _assignable_list(trial, l1, l2) else None


def substitute(m: Mapping, t: Type, params_to_dyn: bool) -> Type:
    """``t`` with its bound parameters replaced (unbound ones by ``dyn`` if asked)."""
    bound = m.find(t) if t.kind == PARAM else None
    if bound is not None:
        return substitute(m, bound, params_to_dyn)
    if params_to_dyn and t.kind == PARAM:
        return DYN_T
    if t.params and t.kind in (OPAQUE, LIST, MAP, TYPE):
        return Type(t.kind, t.name, tuple(substitute(m, p, params_to_dyn) for p in t.params))
    return t


def parameters_in(t: Type) -> set[str]:
    """The names of the type parameters ``t`` mentions."""
    if t.kind == PARAM:
        return {t.name}
    found: set[str] = set()
    for p in t.params:
        found |= parameters_in(p)
    return found


def rename(t: Type, names: dict[str, Type]) -> Type:
    """``t`` with parameters renamed (an overload instantiated with fresh variables)."""
    if t.kind == PARAM:
        return names.get(t.name, t)
    if not t.params:
        return t
    return Type(t.kind, t.name, tuple(rename(p, names) for p in t.params))
