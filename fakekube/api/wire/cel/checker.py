"""CEL's type checker, as cel-go's ``checker.Check`` runs when Kubernetes compiles a rule.

The engine (the ``cel`` package) has no type checker, so an expression that can never
run (``self.replicas > 'x'`` on an integer, ``self.nmae`` on an object without that
field) would only fail on the first object. Kubernetes refuses it when the CRD is
written: ``compilation failed: ERROR: <input>:1:15: found no matching overload for '_>_'
applied to '(int, string)'`` with the line and a caret. This walks the parsed tree
(:mod:`.syntax`) as cel-go's checker does — each node's type from its children's,
overloads from :mod:`.overloads` matched with cel-go's unification (:mod:`.types`),
comprehensions with their variables in scope — and words its errors as cel-go does.

Anything the walk does not know types as ``dyn``, which matches everything: an
expression is refused only for what cel-go certainly refuses (values of schemas that are
``dyn`` to Kubernetes, as int-or-string, accept every operation; a function this table
does not declare is left to the engine's own undeclared-name check).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import NamedTuple

from fakekube.api.wire import regexp

from fakekube.api.wire.cel import overloads as decls
from fakekube.api.wire.cel import types as t
from fakekube.api.wire.cel.syntax import (Call, Comprehension, Expr, Ident, ListLit, Lit, MapLit, Select,
                                          StructLit)
from fakekube.objects.cronschedule import parse_go_duration_ns

#: CEL's reserved words: a field of that name is declared as ``__word__`` (apiserver's
#: escaping), and from 1.31 ``self.namespace`` finds ``__namespace__``.
RESERVED = frozenset(("true", "false", "null", "in", "as", "break", "const", "continue", "else", "for",
                      "function", "if", "import", "let", "loop", "package", "namespace", "return", "var",
                      "void", "while"))
#: The most errors one message lists (cel-go's maxErrorsToReport).
MAX_ERRORS = 100

_LITERALS = {"int": t.INT_T, "uint": t.UINT_T, "double": t.DOUBLE_T, "string": t.STRING_T, "bytes": t.BYTES_T,
             "bool": t.BOOL_T, "null": t.NULL_T}
#: Type names usable as values (``type(x) == int``), and what they denote.
_TYPE_NAMES = {"int": t.INT_T, "uint": t.UINT_T, "double": t.DOUBLE_T, "bool": t.BOOL_T, "string": t.STRING_T,
               "bytes": t.BYTES_T, "null_type": t.NULL_T, "type": t.TYPE_T, "list": t.list_of(t.param("A")),
               "map": t.map_of(t.param("A"), t.param("B")), "google.protobuf.Timestamp": t.TIMESTAMP_T,
               "google.protobuf.Duration": t.DURATION_T}
_FUNCTIONS_BY_MINOR: dict[int, dict[str, tuple[decls.Overload, ...]]] = {}


def functions(minor: int) -> dict[str, tuple[decls.Overload, ...]]:
    """The declarations of Kubernetes 1.``minor``'s environment (built once per minor)."""
    found = _FUNCTIONS_BY_MINOR.get(minor)
    if found is None:
        found = _FUNCTIONS_BY_MINOR[minor] = decls.declarations(minor)
    return found


class Env(NamedTuple):
    """What an expression may use: variables with their types, the object types they
    mention (name → field types), and the environment's version (its functions)."""

    variables: Mapping[str, t.Type]
    structs: Mapping[str, Mapping[str, t.Type]]
    minor: int


class Problem(NamedTuple):
    offset: int
    message: str


class Result(NamedTuple):
    """The expression's type (``dyn`` where unknown) and cel-go's error text ("" if none);
    ``unsure``: something in it was not known to the tables and typed as ``dyn``."""

    type: t.Type
    errors: str
    unsure: bool = False


def check(tree: Expr, source: str, env: Env) -> Result:
    """Type-check ``tree`` (parsed from ``source``) in ``env``; then, as Kubernetes'
    environment adds them (1.29), cel-go's validators of a checked expression: literal
    lists and maps of one type, and literal durations, timestamps and regexes that parse."""
    walker = _Checker(env)
    found = walker.check(tree)
    if not walker.problems and env.minor >= 29:
        walker.validate_literals()
    if not walker.problems:
        return Result(t.substitute(walker.mapping, found, True), "", walker.unsure)
    return Result(t.ERROR_T, render(source, walker.problems))


def render(source: str, problems: list[Problem]) -> str:
    """cel-go's ``Errors.ToDisplayString``: each error with its position, the source line
    and a caret, sorted by position."""
    lines = source.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    shown: list[str] = []
    for problem in sorted(problems, key=lambda p: _location(starts, p.offset))[:MAX_ERRORS]:
        number, column = _location(starts, problem.offset)
        text = f"ERROR: <input>:{number}:{column + 1}: {problem.message}"
        snippet = lines[number - 1].replace("\t", " ") if number - 1 < len(lines) else ""
        if snippet:
            caret = "".join("\uff0e" if len(c.encode()) > 1 else "." for c in snippet[:column])
            caret += "\uff3e" if column < len(snippet) and len(snippet[column].encode()) > 1 else "^"
            text += f"\n | {snippet}\n | {caret}"
        shown.append(text)
    if len(problems) > MAX_ERRORS:
        shown.append(f"{len(problems) - MAX_ERRORS} more errors were truncated")
    return "\n".join(shown)


def _location(starts: list[int], offset: int) -> tuple[int, int]:
    """(1-based line, 0-based column) of a character offset."""
    number = 1
    for index, start in enumerate(starts[1:], start=2):
        if start > offset:
            break
        number = index
    return number, max(offset - starts[number - 1], 0)


class _Checker:
    """One walk: the bound type parameters, the scopes of comprehension variables, errors."""

    def __init__(self, env: Env) -> None:
        self.env = env
        self.functions = functions(env.minor)
        self.mapping = t.Mapping()
        self.scopes: list[dict[str, t.Type]] = []
        self.problems: list[Problem] = []
        self.fresh = 0
        #: Whether a name, function or object type unknown here was typed ``dyn``.
        self.unsure = False
        #: Literal lists and maps met (their parts and the parts' types), and the calls
        #: whose literal argument a validator parses, for :meth:`validate_literals`.
        self.aggregates: list[tuple[tuple[Expr, ...], list[t.Type]]] = []
        self.literal_calls: list[tuple[str, Lit]] = []
        #: Inside ``'...'.format([...])``, whose list mixes types by design (exempt).
        self.in_format = 0

    def unknown(self) -> t.Type:
        """``dyn`` for what the tables do not know (so it refuses nothing)."""
        self.unsure = True
        return t.DYN_T

    def error(self, offset: int, message: str) -> None:
        self.problems.append(Problem(offset, message))

    def assignable(self, expected: t.Type, actual: t.Type) -> bool:
        found = t.assignable(self.mapping, expected, actual)
        if found is None:
            return False
        self.mapping = found
        return True

    def mismatch(self, node: Expr, expected: t.Type, actual: t.Type) -> None:
        self.error(node.pos, f"expected type '{t.format_type(expected)}' but found '{t.format_type(actual)}'")

    def check(self, node: Expr) -> t.Type:
        if isinstance(node, Lit):
            return _LITERALS.get(node.kind, t.DYN_T)
        if isinstance(node, Ident):
            return self.ident(node.name)
        if isinstance(node, Select):
            return self.select(node)
        if isinstance(node, Call):
            return self.call(node)
        if isinstance(node, ListLit):
            return t.list_of(self.join(node.elements, node.optional))
        if isinstance(node, MapLit):
            return self.map_literal(node)
        if isinstance(node, Comprehension):
            return self.comprehension(node)[0]
        if isinstance(node, StructLit):
            for _, value in node.fields:
                self.check(value)
        return self.unknown()

    # -- names -----------------------------------------------------------------------------
    def ident(self, name: str) -> t.Type:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        if name in self.env.variables:
            return self.env.variables[name]
        if name in _TYPE_NAMES:
            return t.type_of(_TYPE_NAMES[name])
        if name == "optional_type" and self.env.minor >= 28:
            return t.type_of(t.optional_of(t.param("A")))
        return self.unknown()  # a name the engine's own check let through (a namespace)

    def select(self, node: Select) -> t.Type:
        found = self.select_field(node, node.operand, node.field, False)
        return t.BOOL_T if node.test_only else t.substitute(self.mapping, found, False)

    def select_field(self, node: Expr, operand: Expr, field: str, optional: bool) -> t.Type:
        """checkSelectField: a map's value, an object's declared field, ``dyn`` otherwise."""
        target, was_optional = t.unwrap_optional(t.substitute(self.mapping, self.check(operand), False))
        result = t.ERROR_T
        if target.kind == t.MAP:
            result = target.params[1]
        elif target.kind == t.STRUCT:
            declared = self.field_type(target.name, field)
            if declared is None and target.name in self.env.structs:
                self.error(node.pos, f"undefined field '{field}'")
            elif declared is not None:
                result = declared
            else:
                result = self.unknown()  # an object type this table does not describe
        elif target.kind == t.PARAM:
            self.assignable(t.DYN_T, target)
            result = t.DYN_T
        else:
            if not t.is_dyn_or_error(target):
                self.error(node.pos, f"type '{t.format_type(target)}' does not support field selection")
            result = t.DYN_T
        return t.optional_of(result) if was_optional or optional else result

    def field_type(self, struct: str, field: str) -> t.Type | None:
        fields = self.env.structs.get(struct)
        if fields is None:
            return None
        if field in fields:
            return fields[field]
        if self.env.minor >= 31 and field in RESERVED:
            return fields.get(f"__{field}__")
        return None

    # -- calls -----------------------------------------------------------------------------
    def call(self, node: Call) -> t.Type:
        if node.function == "_?._" and len(node.args) == 2 and isinstance(node.args[1], Lit):
            found = self.select_field(node, node.args[0], str(node.args[1].value), True)
            return t.substitute(self.mapping, found, False)
        if node.function in ("optMap", "optFlatMap") and node.target is not None and len(node.args) == 2:
            return self.optional_macro(node)
        if node.target is not None:
            qualified = _qualified_name(node.target)
            if qualified is not None and f"{qualified}.{node.function}" in self.functions:
                return self.resolve(node, f"{qualified}.{node.function}", None, node.args)
            if isinstance(node.target, Ident) and f"{qualified}.{node.function}" in decls.EVERY_NAME \
                    and self.ident(node.target.name) == t.DYN_T:
                # a namespace another version declares: cel-go finds neither the name nor the function
                self.error(node.target.pos, f"undeclared reference to '{qualified}' (in container '')")
                for arg in node.args:
                    self.check(arg)
                if node.function not in self.functions:
                    self.error(node.pos, f"undeclared reference to '{node.function}' (in container '')")
                return t.ERROR_T
        return self.resolve(node, node.function, node.target, node.args)

    def resolve(self, node: Call, name: str, target: Expr | None, args: tuple[Expr, ...]) -> t.Type:
        """resolveOverloadOrError: the arguments' types against each overload of ``name``."""
        if name in _LITERAL_CHECKS and args and isinstance(args[0], Lit):
            self.literal_calls.append((name, args[0]))
        self.in_format += name == "format"
        try:
            arg_types = [self.check(arg) for arg in args]
        finally:
            self.in_format -= name == "format"
        target_type = self.check(target) if target is not None else None
        overloads = self.functions.get(name)
        if overloads is None:
            if name in decls.EVERY_NAME:  # declared by another version only
                self.error(node.pos, f"undeclared reference to '{name}' (in container '')")
                return t.ERROR_T
            return self.unknown()  # not in the tables: the engine's own checks decide
        if name in ("_&&_", "_||_"):
            return self.logical(args, arg_types)
        given = ([target_type] if target_type is not None else []) + arg_types
        result: t.Type | None = None
        for overload in overloads:
            if overload.member != (target is not None):
                continue
            wanted = self.instantiate(overload)
            found = t.assignable_list(self.mapping, given, list(wanted[0]))
            if found is None:
                continue
            self.mapping = found
            returned = t.substitute(self.mapping, wanted[1], False)
            if result is None:
                result = returned
            elif not t.is_dyn(result) and returned != result:
                result = t.DYN_T
        if result is None:
            shown = [t.substitute(self.mapping, g, True) for g in given]
            self.error(node.pos, f"found no matching overload for '{name}' applied to "
                                 f"'{t.format_call(shown, target is not None)}'")
            return t.ERROR_T
        return result

    def instantiate(self, overload: decls.Overload) -> tuple[tuple[t.Type, ...], t.Type]:
        """The overload's types with its parameters replaced by fresh variables."""
        if not overload.params:
            return overload.args, overload.result
        names = {}
        for name in sorted(overload.params):
            names[name] = t.param(f"_var{self.fresh}")
            self.fresh += 1
        return tuple(t.rename(a, names) for a in overload.args), t.rename(overload.result, names)

    def logical(self, args: tuple[Expr, ...], arg_types: list[t.Type]) -> t.Type:
        """``&&`` and ``||``: every operand must be a bool (an error names the operand)."""
        failed = False
        for arg, found in zip(args, arg_types):
            if not self.assignable(t.BOOL_T, found):
                self.mismatch(arg, t.BOOL_T, found)
                failed = True
        return t.ERROR_T if failed else t.BOOL_T

    def optional_macro(self, node: Call) -> t.Type:
        """``o.optMap(v, e)`` (``optional(type of e)``) and ``o.optFlatMap(v, e)`` (``e``'s
        optional type), with ``v`` bound to the optional's value."""
        assert node.target is not None
        target, is_optional = t.unwrap_optional(t.substitute(self.mapping, self.check(node.target), False))
        variable = node.args[0]
        name = variable.name if isinstance(variable, Ident) else ""
        self.scopes.append({name: target if is_optional else t.DYN_T})
        try:
            body = self.check(node.args[1])
        finally:
            self.scopes.pop()
        return t.optional_of(body) if node.function == "optMap" else body

    # -- literals and comprehensions -------------------------------------------------------------
    def join(self, elements: tuple[Expr, ...], optional: tuple[int, ...]) -> t.Type:
        """The element type of a literal list (every element of one type: cel-go's
        homogeneous aggregate literals)."""
        joined: t.Type | None = None
        seen: list[t.Type] = []
        for index, element in enumerate(elements):
            found = self.check(element)
            if index in optional:
                found, was_optional = t.unwrap_optional(found)
                if not was_optional and not t.is_dyn(found):
                    self.mismatch(element, t.optional_of(found), found)
            seen.append(found)
            joined = self.join_types(element, joined, found)
        if not self.in_format:
            self.aggregates.append((elements, seen))
        return joined if joined is not None else self.new_variable()

    def join_types(self, node: Expr, previous: t.Type | None, current: t.Type) -> t.Type:
        if previous is None:
            return current
        if self.assignable(previous, current):
            return t.most_general(previous, current)
        self.mismatch(node, previous, current)
        return t.ERROR_T

    def map_literal(self, node: MapLit) -> t.Type:
        key_type: t.Type | None = None
        value_type: t.Type | None = None
        keys: list[t.Type] = []
        values: list[t.Type] = []
        for index, (key, value) in enumerate(node.entries):
            keys.append(self.check(key))
            key_type = self.join_types(key, key_type, keys[-1])
            found = self.check(value)
            if index in node.optional:
                found, was_optional = t.unwrap_optional(found)
                if not was_optional and not t.is_dyn(found):
                    self.mismatch(value, t.optional_of(found), found)
            values.append(found)
            value_type = self.join_types(value, value_type, found)
        if not self.in_format and node.entries:
            self.aggregates.append((tuple(k for k, _ in node.entries), keys))
            self.aggregates.append((tuple(v for _, v in node.entries), values))
        if key_type is None or value_type is None:
            return t.map_of(self.new_variable(), self.new_variable())
        return t.map_of(key_type, value_type)

    def new_variable(self) -> t.Type:
        found = t.param(f"_var{self.fresh}")
        self.fresh += 1
        return found

    def comprehension(self, node: Comprehension) -> tuple[t.Type, t.Type]:
        """checkComprehension (the type and the range's type); ``sortBy`` also checks its
        keys as cel-go's expansion (``@sortByAssociatedKeys``) does and keeps the list's type."""
        range_type = t.substitute(self.mapping, self.check(node.iter_range), False)
        accu_type = self.check(node.accu_init)
        first, second = self.range_variables(node, range_type)
        self.scopes.append({node.accu_var: accu_type})
        try:
            loop = {node.iter_var: first}
            if node.iter_var2:
                loop[node.iter_var2] = second
            self.scopes.append(loop)
            try:
                self.expect(node.loop_condition, t.BOOL_T)
                self.expect(node.loop_step, accu_type)
            finally:
                self.scopes.pop()
            result = t.substitute(self.mapping, self.check(node.result), False)
        finally:
            self.scopes.pop()
        if node.macro == "sortBy":
            keys = Call("@sortByAssociatedKeys", node.iter_range, (node,), node.pos)
            return self.sorted_by(keys, range_type, result), range_type
        return result, range_type

    def sorted_by(self, node: Call, range_type: t.Type, keys: t.Type) -> t.Type:
        """The list ``sortBy`` returns, once its keys are known to be comparable."""
        overloads = self.functions.get("@sortByAssociatedKeys")
        if overloads is None:
            return range_type
        for overload in overloads:
            wanted, returned = self.instantiate(overload)
            found = t.assignable_list(self.mapping, [range_type, keys], list(wanted))
            if found is not None:
                self.mapping = found
                return t.substitute(self.mapping, returned, False)
        shown = [t.substitute(self.mapping, g, True) for g in (range_type, keys)]
        self.error(node.pos, f"found no matching overload for '@sortByAssociatedKeys' applied to "
                             f"'{t.format_call(shown, True)}'")
        return t.ERROR_T

    def range_variables(self, node: Comprehension, range_type: t.Type) -> tuple[t.Type, t.Type]:
        """The types of a comprehension's variables over ``range_type``."""
        two = bool(node.iter_var2)
        if range_type.kind == t.LIST:
            return (t.INT_T, range_type.params[0]) if two else (range_type.params[0], t.DYN_T)
        if range_type.kind == t.MAP:
            return range_type.params[0], range_type.params[1] if two else t.DYN_T
        if range_type.kind in (t.DYN, t.ANY, t.ERROR, t.PARAM):
            self.assignable(t.DYN_T, range_type)
            return t.DYN_T, t.DYN_T
        self.error(node.iter_range.pos, f"expression of type '{t.format_type(range_type)}' cannot be range of a "
                                        "comprehension (must be list, map, or dynamic)")
        return t.ERROR_T, t.ERROR_T

    def expect(self, node: Expr, expected: t.Type) -> None:
        found = self.check(node)
        if not self.assignable(expected, found):
            self.mismatch(node, expected, found)


    # -- validators of a checked expression (cel-go's ASTValidators) ------------------------------
    def validate_literals(self) -> None:
        """A literal list's elements (a map's keys, its values) must be of one type, ``dyn``
        included (``[1, dyn('a')]``); a literal duration, timestamp or regex must parse."""
        for parts, found in self.aggregates:
            final = [t.substitute(self.mapping, f, True) for f in found]
            for part, typed in zip(parts[1:], final[1:]):
                if typed != final[0]:
                    self.mismatch(part, final[0], typed)
                    break
        for name, literal in self.literal_calls:
            if not _LITERAL_CHECKS[name](literal.value):
                self.error(literal.pos, f"invalid {name} argument")


def _parses_as_duration(value: object) -> bool:
    if not isinstance(value, str):
        return True
    try:
        nanoseconds = parse_go_duration_ns(value)
    except ValueError:
        return False
    return abs(nanoseconds) <= _MAX_DURATION_NS


_RFC3339 = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-](\d{2}):(\d{2}))$")


def _parses_as_timestamp(value: object) -> bool:
    """Go's ``time.Parse(time.RFC3339, ...)`` within CEL's range (years 1 to 9999)."""
    if not isinstance(value, str):
        return True
    match = _RFC3339.match(value)
    if match is None:
        return False
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    try:
        datetime(year, month, day, hour, minute, second)
    except ValueError:
        return False
    zone_hours, zone_minutes = match.group(9), match.group(10)
    return zone_hours is None or (int(zone_hours) < 24 and int(zone_minutes) < 60)


def _parses_as_regex(value: object) -> bool:
    if not isinstance(value, str):
        return True
    try:
        regexp.compile(value)
    except regexp.RegexpError:
        return False
    return True


#: cel-go's largest duration: ±(2^63 - 1) ns is Go's, CEL bounds it to ±10,000 years.
_MAX_DURATION_NS = 315_576_000_000 * 10**9
#: The calls whose first argument, when a literal, must parse (ValidateDurationLiterals,
#: ValidateTimestampLiterals, ValidateRegexLiterals).
_LITERAL_CHECKS: dict[str, Callable[[object], bool]] = {
    "duration": _parses_as_duration, "timestamp": _parses_as_timestamp, "matches": _parses_as_regex}


def _qualified_name(node: Expr) -> str | None:
    """``a.b.c`` of a select chain over an identifier (a function's namespace), else None."""
    parts: list[str] = []
    while isinstance(node, Select) and not node.test_only:
        parts.append(node.field)
        node = node.operand
    if not isinstance(node, Ident):
        return None
    parts.append(node.name)
    return ".".join(reversed(parts))
