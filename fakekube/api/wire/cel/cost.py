"""What a CEL expression costs, in cel-go's cost units, before it runs.

Kubernetes bounds every CEL expression twice. At CRD create/update it refuses a rule
whose worst case, estimated from the schema's ``maxItems``/``maxLength``/``maxProperties``
(cel-go's ``checker.Cost`` with Kubernetes' size and library estimators), is too large;
at run time cel-go counts the cost of each evaluation and cancels it past a limit. The
engine here counts nothing, so this module estimates: :func:`estimate` walks the
expression tree (:mod:`.syntax`) as cel-go's coster does — one unit per identifier and
field read, a traversal factor of 0.1 per character or byte, comprehensions paid per
element, library functions as Kubernetes' ``library.CostEstimator`` prices them — with
sizes from a :class:`Sizes`: the schema's bounds (:class:`DeclSizes`, at CRD validation)
or the actual values about to be evaluated (:class:`ValueSizes`, before each run: an
upper bound of what cel-go's runtime tracker would count, since that is the same
arithmetic over the real sizes, with every loop run to its end).

Simplifications (docs/reliability.md): no static types beyond what the schema, literals
and function names tell (an unknown value is ``dyn``, whose overloads cost as the
dearest one); only the maximum of each estimate is kept, not cel-go's minimum.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple, Protocol

from fakekube.api.wire.cel.syntax import (ACCUMULATOR, Call, Comprehension, Expr, Ident, ListLit, Lit, MapLit, Select,
                                          StructLit, children)

#: cel-go's ``math.MaxUint64``: an unknown size or a cost past counting.
UNBOUNDED = 2**64 - 1
#: common.StringTraversalCostFactor and RegexStringLengthCostFactor.
TRAVERSAL = 0.1
REGEX_LENGTH = 0.25
LIST_CREATE, MAP_CREATE, STRUCT_CREATE = 10, 30, 40
#: library.CostEstimator: an authorization check, and cel.MaxNameFormatRegexSize / MaxFormatSize.
AUTHZ_CHECK = 350_000
MAX_NAME_FORMAT_REGEX = 128
MAX_FORMAT = 64

SCALARS = frozenset(("bool", "int", "uint", "double", "timestamp", "duration"))
#: Kinds a field selection costs one unit on (cel-go: map, struct, type parameter).
_SELECTABLE = frozenset(("map", "struct"))
#: Namespaces whose functions read as ``ns.f(...)``.
NAMESPACES = frozenset(("math", "sets", "base64", "lists", "strings", "optional", "format", "cel"))


class Sizes(Protocol):
    """Where sizes and kinds of variables come from. A path starts at a variable; then
    field names, ``@items`` (list elements), ``@keys``/``@values`` (map keys/values)."""

    def size(self, path: tuple[str, ...]) -> int | None: ...

    def kind(self, path: tuple[str, ...]) -> str: ...


def _add(a: int, b: int) -> int:
    return min(UNBOUNDED, a + b)


def _mul(a: int, b: int) -> int:
    return min(UNBOUNDED, a * b)


def factor(size: int, per_unit: float) -> int:
    """cel-go's multiplyByCostFactor: ``ceil(size * per_unit)`` in float64, saturating."""
    value = float(size)
    if value > 0 and per_unit > 0 and value > UNBOUNDED / per_unit:
        return UNBOUNDED
    product = math.ceil(value * per_unit)
    return UNBOUNDED if product >= 2.0**64 else int(product)


class _Est(NamedTuple):
    """One expression's estimate: its cost, the size of its value (None: unknown), its
    kind, the field path it reads (None: not a path), the size of its elements (for list
    and map values built in the expression), and the kind of those elements."""

    cost: int
    size: int | None
    kind: str
    path: tuple[str, ...] | None = None
    entry: int | None = None
    elem: str = "dyn"


class _Var(NamedTuple):
    path: tuple[str, ...] | None
    size: int | None
    kind: str
    entry: int | None
    elem: str


def _known(size: int | None) -> int:
    return UNBOUNDED if size is None else size


class _Coster:
    """One estimate: the walk of cel-go's coster, maximum side only."""

    def __init__(self, sizes: Sizes, presence_cost: int, selectable: frozenset[str] = _SELECTABLE,
                 unknown: Callable[[], int] | None = None) -> None:
        self.sizes = sizes
        self.presence_cost = presence_cost
        self.selectable = selectable
        #: What an unknown size is taken to be (None: unbounded, as cel-go's estimator takes it).
        self.unknown = unknown
        self.scope: dict[str, list[_Var]] = {}

    # -- variables -------------------------------------------------------------
    def push(self, name: str, var: _Var) -> None:
        self.scope.setdefault(name, []).append(var)

    def pop(self, name: str) -> None:
        self.scope[name].pop()

    def local(self, name: str) -> _Var | None:
        stack = self.scope.get(name)
        return stack[-1] if stack else None

    def element_kind(self, path: tuple[str, ...], kind: str) -> str:
        """The kind of a list's elements (asked only of lists and values of unknown kind)."""
        return self.sizes.kind(path + ("@items",)) if kind in ("list", "dyn") else "dyn"

    def path_size(self, path: tuple[str, ...] | None, kind: str) -> int | None:
        """computeSize's lookups after the expression's own: the size source, then a scalar's 1."""
        if path and path[0] != ACCUMULATOR:
            found = self.sizes.size(path)
            if found is not None:
                return found
        return 1 if kind in SCALARS else None

    # -- the walk --------------------------------------------------------------
    def cost(self, e: Expr) -> _Est:
        est = self._cost(e)
        if self.unknown is not None and (est.size is None or (est.entry is None and est.path is None
                                                               and est.kind in ("list", "map", "dyn"))):
            bound = self.unknown()  # a value built in the expression: nothing in it is larger than everything
            est = est._replace(size=bound if est.size is None else est.size,
                               entry=bound if est.entry is None else est.entry)
        return est

    def _cost(self, e: Expr) -> _Est:
        if isinstance(e, Lit):
            size = len(e.value) if e.kind in ("string", "bytes") else 1
            return _Est(0, size, e.kind)
        if isinstance(e, Ident):
            return self.ident(e)
        if isinstance(e, Select):
            return self.select(e)
        if isinstance(e, Call):
            return self.call(e)
        if isinstance(e, ListLit):
            parts = [self.cost(x) for x in e.elements]
            entry = max((_known(p.size) for p in parts), default=0)
            return _Est(_add(sum(p.cost for p in parts), LIST_CREATE), len(parts), "list", None, entry,
                        parts[0].kind if parts else "dyn")
        if isinstance(e, MapLit):
            keys = [self.cost(k) for k, _ in e.entries]
            values = [self.cost(v) for _, v in e.entries]
            total = sum(p.cost for p in keys + values)
            entry = max((_known(p.size) for p in values), default=0)
            return _Est(_add(total, MAP_CREATE), len(values), "map", None, entry, values[0].kind if values else "dyn")
        if isinstance(e, StructLit):
            return _Est(_add(sum(self.cost(v).cost for _, v in e.fields), STRUCT_CREATE), None, "struct")
        return self.comprehension(e)

    def ident(self, e: Ident) -> _Est:
        var = self.local(e.name)
        if var is None:
            path = (e.name,)
            kind = self.sizes.kind(path)
            return _Est(1, self.path_size(path, kind), kind, path, None, self.element_kind(path, kind))
        size = self.path_size(var.path, var.kind)
        return _Est(1, var.size if size is None else size, var.kind, var.path, var.entry, var.elem)

    def select(self, e: Select) -> _Est:
        operand = self.cost(e.operand)
        if e.test_only:
            return _Est(_add(self.presence_cost, operand.cost), 1, "bool")
        cost = _add(operand.cost, 1 if operand.kind in self.selectable else 0)
        if operand.path is None:  # a field of a value built in the expression
            return _Est(cost, operand.entry, operand.elem)
        path = operand.path + (e.field,)
        kind = self.sizes.kind(path)
        return _Est(cost, self.path_size(path, kind), kind, path, None, self.element_kind(path, kind))

    def comprehension(self, e: Comprehension) -> _Est:
        bind = isinstance(e.iter_range, ListLit) and not e.iter_range.elements and e.accu_var != ACCUMULATOR \
            and isinstance(e.loop_condition, Lit) and e.loop_condition.value is False
        loop_range = self.cost(e.iter_range)
        init = self.cost(e.accu_init)
        total = _add(loop_range.cost, init.cost)
        self.push(e.accu_var, _Var(init.path, init.size, init.kind, init.entry, init.elem))
        if bind:
            result = self.cost(e.result)
            self.pop(e.accu_var)
            return result._replace(cost=_add(total, result.cost))
        names = self.push_iteration(e, loop_range)
        condition = self.cost(e.loop_condition)
        step = self.cost(e.loop_step)
        per_element = _add(condition.cost, step.cost)
        for name in names:
            self.pop(name)
        result = self.cost(e.result)
        self.pop(e.accu_var)
        count = _known(loop_range.size)
        total = _add(_add(total, result.cost), _mul(count, per_element))
        if isinstance(e.accu_init, (ListLit, MapLit)):
            return _Est(total, count, init.kind, None, step.entry, step.elem)
        return _Est(total, init.size, result.kind)

    def push_iteration(self, e: Comprehension, loop_range: _Est) -> list[str]:
        """The iteration variables: list elements (and indexes), or map keys (and values)."""
        is_list = loop_range.kind == "list" or (loop_range.kind == "dyn" and loop_range.entry is not None)
        base = loop_range.path
        element = "@items" if is_list else "@keys"
        if e.iter_var2:
            key_path = base + (("@indices" if is_list else "@keys"),) if base is not None else None
            value_path = base + (("@items" if is_list else "@values"),) if base is not None else None
            key_kind = "int" if is_list else "string"
            value_kind = self.sizes.kind(value_path) if value_path else loop_range.elem
            self.push(e.iter_var, _Var(key_path, 1 if is_list else None, key_kind, None, "dyn"))
            self.push(e.iter_var2, _Var(value_path, loop_range.entry, value_kind, None, "dyn"))
            return [e.iter_var, e.iter_var2]
        path = base + (element,) if base is not None else None
        kind = self.sizes.kind(path) if path else (loop_range.elem if is_list else "string")
        size = loop_range.entry if is_list else None
        elem = self.element_kind(path, kind) if path else "dyn"
        self.push(e.iter_var, _Var(path, size, kind, None, elem))
        return [e.iter_var]

    # -- calls -------------------------------------------------------------------
    def call(self, e: Call) -> _Est:
        function, target_expr = e.function, e.target
        if isinstance(target_expr, Ident) and target_expr.name in NAMESPACES and self.local(target_expr.name) is None \
                and self.sizes.kind((target_expr.name,)) == "dyn":
            function, target_expr = f"{target_expr.name}.{function}", None
        if function == "dyn" and len(e.args) == 1:
            inner = self.cost(e.args[0])
            return inner._replace(cost=_add(inner.cost, 1))
        args = [self.cost(a) for a in e.args]
        target = self.cost(target_expr) if target_expr is not None else None
        arg_cost = 0
        for a in args:
            arg_cost = _add(arg_cost, a.cost)
        own, result = _function(function, target, args)
        base = target.cost if target is not None else 0
        if function in ("_&&_", "_||_"):
            return result._replace(cost=_add(base, own))
        if function == "_?_:_" and len(args) == 3:
            return _Est(_add(base, own), result.size, args[1].kind, None, _union(args[1].entry, args[2].entry),
                        args[1].elem)
        if function in ("_[_]", "_[?_]") and len(args) == 2:
            result = self.index(args[0])
        elif function in _ARITHMETIC and args:
            kind = args[0].kind if args[0].kind != "dyn" or len(args) == 1 else args[1].kind
            entry = _union(args[0].entry, args[1].entry) if kind == "list" and len(args) == 2 else None
            result = result._replace(kind=kind, entry=entry, elem=args[0].elem)
        return result._replace(cost=_add(base, _add(own, arg_cost)))

    def index(self, container: _Est) -> _Est:
        """``x[i]``: an element of a list, a value of a map (its path, or its known size)."""
        step = "@items" if container.kind == "list" else "@values"
        if container.path is None:
            return _Est(0, container.entry, container.elem)
        path = container.path + (step,)
        kind = self.sizes.kind(path)
        size = container.entry if container.entry is not None else self.path_size(path, kind)
        return _Est(0, size, kind, path, None, self.element_kind(path, kind))


_ARITHMETIC = frozenset(("_+_", "_-_", "_*_", "_/_", "_%_", "-_"))


def _union(a: int | None, b: int | None) -> int | None:
    """Two entry sizes as one (unknown if either is)."""
    return None if a is None or b is None else max(a, b)


def _size(e: _Est | None) -> int:
    return UNBOUNDED if e is None or e.size is None else e.size


def _string_like(e: _Est) -> bool:
    return e.kind in ("string", "bytes")


_RESULT_KINDS: dict[str, str] = {
    "size": "int", "int": "int", "uint": "uint", "double": "double", "bool": "bool", "string": "string",
    "bytes": "bytes", "type": "type", "timestamp": "timestamp", "duration": "duration", "matches": "bool",
    "contains": "bool", "startsWith": "bool", "endsWith": "bool", "@in": "bool", "!_": "bool",
    "@not_strictly_false": "bool", "_==_": "bool", "_!=_": "bool", "_<_": "bool", "_<=_": "bool", "_>_": "bool",
    "_>=_": "bool", "lowerAscii": "string", "upperAscii": "string", "trim": "string", "substring": "string",
    "replace": "string", "join": "string", "format": "string", "strings.quote": "string", "charAt": "string",
    "find": "string", "split": "list", "findAll": "list", "indexOf": "int", "lastIndexOf": "int",
    "isSorted": "bool", "url": "url", "isURL": "bool", "quantity": "quantity", "isQuantity": "bool",
    "ip": "ip", "cidr": "cidr", "isIP": "bool", "isCIDR": "bool", "semver": "semver", "isSemver": "bool",
    "sets.contains": "bool", "sets.equivalent": "bool", "sets.intersects": "bool", "getScheme": "string",
    "getHost": "string", "getHostname": "string", "getPort": "string", "getEscapedPath": "string",
    "getQuery": "map", "masked": "cidr", "prefixLength": "int", "family": "int", "containsIP": "bool",
    "containsCIDR": "bool", "isInteger": "bool", "asInteger": "int", "asApproximateFloat": "double",
    "sign": "int", "compareTo": "int", "isGreaterThan": "bool", "isLessThan": "bool", "add": "quantity",
    "sub": "quantity", "format.named": "opaque", "validate": "opaque", "check": "opaque", "allowed": "bool",
    "reason": "string", "errored": "bool", "error": "string", "base64.encode": "string", "base64.decode": "bytes",
    "lists.range": "list", "reverse": "list", "sort": "list", "distinct": "list", "flatten": "list", "slice": "list",
}


def _function(name: str, target: _Est | None, args: list[_Est]) -> tuple[int, _Est]:
    """(the call's own cost, the estimate of its result, without cost) — cel-go's
    functionCost with Kubernetes' EstimateCallCost consulted first."""
    kind = _RESULT_KINDS.get(name, "dyn")
    found = _kubernetes(name, target, args) or _core(name, target, args)
    if found is not None:
        own, size = found
        return own, _Est(0, size, kind, None, None, "string" if name in ("split", "findAll") else "dyn")
    return 1, _Est(0, 1 if kind in SCALARS else None, kind)


def _kubernetes(name: str, target: _Est | None, args: list[_Est]) -> tuple[int, int | None] | None:
    """library.CostEstimator.EstimateCallCost (apiserver 1.33): cost, result size."""
    if name == "check":
        return AUTHZ_CHECK, None
    if name in ("serviceAccount", "path", "group", "resource", "subresource", "namespace", "name", "allowed",
                "reason", "error", "errored", "format.named", "sign", "asInteger", "isInteger", "asApproximateFloat",
                "isGreaterThan", "isLessThan", "compareTo", "add", "sub", "major", "minor", "patch", "getScheme",
                "getHostname", "getHost", "getPort", "getEscapedPath", "getQuery", "masked", "prefixLength",
                "family", "isUnspecified", "isLoopback", "isLinkLocalMulticast", "isLinkLocalUnicast",
                "isGlobalUnicast"):
        return 1, None
    if name in ("fieldSelector", "labelSelector") and len(args) == 1:
        size = _size(args[0])
        return _add(_add(LIST_CREATE, factor(size, TRAVERSAL)), factor(factor(size, 0.5), LIST_CREATE + STRUCT_CREATE)), None
    if name in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf") and target is not None:
        if target.kind == "string":
            return factor(_size(target), TRAVERSAL), None
        if target.kind != "list":
            return None
        per_element = 1 + (factor(_known(target.entry), TRAVERSAL) if target.elem in ("string", "bytes") else 0)
        return _mul(_size(target), per_element), None
    if name in ("url", "jsonpatch.escapeKey") and len(args) == 1:
        return factor(_size(args[0]), TRAVERSAL), args[0].size
    if name in ("lowerAscii", "upperAscii", "substring", "trim") and target is not None:
        return factor(_size(target), TRAVERSAL), target.size
    if name == "replace" and target is not None and len(args) >= 2:
        return factor(_size(target), 2 * TRAVERSAL), _replaced_size(target, args[0], args[1])
    if name == "split" and target is not None:
        limit = args[1].size if len(args) > 1 and args[1].kind == "int" else None
        return factor(_size(target), 2 * TRAVERSAL), _size(target) if limit is None else limit
    if name == "join" and target is not None:
        size = _mul(_size(target), _known(target.entry)) if target.elem in ("string", "dyn") else 0
        if args:
            size = _add(size, _mul(_size(args[0]), max(_size(target) - 1, 0)))
        return factor(size, TRAVERSAL), size
    if name in ("find", "findAll") and target is not None and args:
        return _mul(factor(_add(_size(target), 1), TRAVERSAL), factor(_size(args[0]), REGEX_LENGTH)), _size(target)
    if name in ("cidr", "isIP", "isCIDR", "quantity", "isQuantity", "semver", "isSemver") and args:
        return factor(_size(args[0]), TRAVERSAL), None
    if name == "ip":
        return (factor(_size(args[0]), TRAVERSAL) if args and args[0].kind == "string" else 1), None
    if name in ("containsIP", "containsCIDR") and args:
        own = factor(32, TRAVERSAL) + (factor(16, TRAVERSAL) + 1 if name == "containsCIDR" else 0)
        return own + (factor(_size(args[0]), TRAVERSAL) if args[0].kind == "string" else 0), None
    if name == "validate" and args:
        return factor(factor(_size(args[0]), TRAVERSAL), MAX_NAME_FORMAT_REGEX * REGEX_LENGTH), None
    if name == "_==_" and len(args) == 2 and args[0].kind == args[1].kind:
        if args[0].kind in ("ip", "cidr", "quantity", "semver", "opaque"):
            return 1, None
        if args[0].kind == "url":
            return factor(max(1, _size(args[1])), TRAVERSAL), None
    return None


def _replaced_size(target: _Est, old: _Est, new: _Est) -> int:
    """``replace``'s longest result (the search string's minimum known only for a literal)."""
    size, new_size = _size(target), _size(new)
    old_min = old.size if old.path is None and old.size is not None and old.kind == "string" else 0
    if old_min == 0:
        return _add(_mul(_add(size, 1) if size < UNBOUNDED else size, new_size), size)
    if new_size <= old_min:
        return size
    return _mul(math.ceil(size / old_min), new_size)


def _core(name: str, target: _Est | None, args: list[_Est]) -> tuple[int, int | None] | None:
    """cel-go's own function costs (checker/cost.go functionCost, ext sets)."""
    if name in ("_&&_", "_||_") and len(args) == 2:
        return _add(args[0].cost, args[1].cost), 1
    if name == "_?_:_" and len(args) == 3:
        return _add(args[0].cost, max(args[1].cost, args[2].cost)), max(_size(args[1]), _size(args[2]))
    if name == "_+_" and len(args) == 2:
        return _plus(args[0], args[1])
    if name in ("_==_", "_!=_") or (name in ("_<_", "_<=_", "_>_", "_>=_") and _compares_text(args)):
        smallest = min(_size(args[0]), _size(args[1])) if len(args) == 2 else 0
        return factor(smallest, TRAVERSAL), 1
    if name == "@in" and len(args) == 2 and args[1].kind != "map":
        return _size(args[1]), 1
    if name == "matches" and target is not None and len(args) == 1:
        return _mul(factor(_add(_size(target), 1), TRAVERSAL), factor(_size(args[0]), REGEX_LENGTH)), 1
    if name == "contains" and target is not None and len(args) == 1 and target.kind in ("string", "dyn"):
        return _mul(factor(_size(target), TRAVERSAL), factor(_size(args[0]), TRAVERSAL)), 1
    if name in ("startsWith", "endsWith") and target is not None and len(args) == 1:
        return factor(_size(args[0]), TRAVERSAL), 1
    if name == "format" and target is not None:
        return factor(_size(target), TRAVERSAL), None
    if name == "strings.quote" and len(args) == 1:
        return factor(_size(args[0]), TRAVERSAL), _add(_mul(_size(args[0]), 2), 2)
    if name == "string" and len(args) == 1 and args[0].kind == "bytes":
        return factor(_size(args[0]), TRAVERSAL), args[0].size
    if name == "bytes" and len(args) == 1 and args[0].kind == "string":
        return factor(_size(args[0]), TRAVERSAL), _mul(_size(args[0]), 4)
    if name in ("sets.contains", "sets.intersects", "sets.equivalent") and len(args) == 2:
        pairs = _mul(_size(args[0]), _size(args[1]))
        return _add(factor(pairs, 2.0 if name == "sets.equivalent" else 1.0), 1), 1
    return None


def _compares_text(args: list[_Est]) -> bool:
    """An ordering whose overloads include the string/bytes ones."""
    return len(args) == 2 and (any(_string_like(a) for a in args) or all(a.kind == "dyn" for a in args))


def _plus(left: _Est, right: _Est) -> tuple[int, int | None]:
    size = _add(_size(left), _size(right))
    kinds = {left.kind, right.kind}
    if kinds & {"string", "bytes"} or kinds == {"dyn"}:
        return factor(size, TRAVERSAL), size
    if "list" in kinds:
        return 1, size
    return 1, None


def estimate(expr: Expr, sizes: Sizes, presence_cost: int = 0, unknown: Callable[[], int] | None = None) -> int:
    """The most ``expr`` can cost with the sizes ``sizes`` gives (Kubernetes counts
    ``has()`` as free: ``presence_cost`` 0). ``unknown`` bounds what the sizes do not tell
    (a value computed in the expression, as the parts of a ``split``): at run time the
    values are all there, and nothing the expression computes from them is larger than
    all of them together; left None, an unknown size is unbounded (cel-go's estimate)."""
    return _Coster(sizes, presence_cost, unknown=unknown).cost(expr).cost


def literal_size(expr: Expr) -> int:
    """The sizes of the literals in ``expr``, added up (what it can add to its values)."""
    stack: list[Expr] = [expr]
    total = 0
    while stack:
        node = stack.pop()
        if isinstance(node, Lit):
            total += value_size(node.value)
        stack.extend(children(node))
    return total


class UnknownSizes:
    """No size known: what an expression costs whatever the values (UNBOUNDED when that
    depends on them)."""

    def size(self, path: tuple[str, ...]) -> int | None:
        return None

    def kind(self, path: tuple[str, ...]) -> str:
        return "dyn"


class Recording:
    """Another source, noting each question asked of it and whether an unknown size was
    bounded: an estimate is a function of those answers alone, so a later run whose values
    answer the same questions the same way costs the same (:class:`Program` keeps it)."""

    def __init__(self, sizes: Sizes) -> None:
        self.sizes = sizes
        self.questions: list[tuple[bool, tuple[str, ...]]] = []
        self.bounded = False

    def size(self, path: tuple[str, ...]) -> int | None:
        self.questions.append((True, path))
        return self.sizes.size(path)

    def kind(self, path: tuple[str, ...]) -> str:
        self.questions.append((False, path))
        return self.sizes.kind(path)


def answers(sizes: Sizes, questions: tuple[tuple[bool, tuple[str, ...]], ...]) -> tuple[Any, ...]:
    """What ``sizes`` answers to recorded questions (sizes for True, kinds for False)."""
    return tuple(sizes.size(path) if is_size else sizes.kind(path) for is_size, path in questions)


class KindsOnly:
    """The kinds another source declares, with every size unknown."""

    def __init__(self, kinds: Sizes) -> None:
        self.kinds = kinds

    def size(self, path: tuple[str, ...]) -> int | None:
        return None

    def kind(self, path: tuple[str, ...]) -> str:
        return self.kinds.kind(path)


def fixed_cost(expr: Expr, presence_cost: int = 0, kinds: Sizes | None = None) -> int:
    """The cost of ``expr`` when it does not depend on the sizes of the values (a field
    read of an unknown kind counted as the dearer map read; ``kinds``, when given, says
    what the values are, so that ``self.n >= 0`` is known to compare numbers), else
    UNBOUNDED: estimates only go up with sizes, so a finite answer bounds every run."""
    sizes: Sizes = KindsOnly(kinds) if kinds is not None else UnknownSizes()
    cost = _Coster(sizes, presence_cost, _SELECTABLE | {"dyn"}).cost(expr).cost
    return cost if cost < _SIZE_DEPENDENT else UNBOUNDED


#: Any term scaled by an unknown size is at least UNBOUNDED times the smallest cost factor
#: (0.1): far above this; a cost without one is far below.
_SIZE_DEPENDENT = 2**53


# -- sizes from a schema -----------------------------------------------------------------

class Decl(NamedTuple):
    """A value's type as Kubernetes declares it to CEL (apiserver's DeclType): its kind,
    its largest size (``MaxElements``), and its fields, elements and keys."""

    kind: str
    max_elements: int = 0
    min_size: int = 1
    fields: Mapping[str, "Decl"] = {}
    elem: "Decl | None" = None
    key: "Decl | None" = None


class DeclSizes:
    """Sizes from declarations (the CRD schema): the sizeEstimator of apiextensions'
    compilation, which walks the path from the rule's ``self`` (whatever the variable)."""

    def __init__(self, root: Decl, variables: Iterable[str] = ("self", "oldSelf")) -> None:
        self.root = root
        self.variables = frozenset(variables)

    def _find(self, path: tuple[str, ...]) -> Decl | None:
        if path[0] not in self.variables:
            return None
        node: Decl | None = self.root
        for step in path[1:]:
            if node is None:
                return None
            if step in ("@items", "@values"):
                node = node.elem
            elif step == "@keys":
                node = node.key
            else:
                node = node.fields.get(step)
        return node

    def size(self, path: tuple[str, ...]) -> int | None:
        found = self._find(path)
        return None if found is None else found.max_elements

    def kind(self, path: tuple[str, ...]) -> str:
        found = self._find(path)
        return "dyn" if found is None else found.kind


# -- sizes from values -----------------------------------------------------------------------

#: Kinds of the values handed to the engine.
_VALUE_KINDS: tuple[tuple[type, str], ...] = ((bool, "bool"), (int, "int"), (float, "double"), (str, "string"),
                                               (bytes, "bytes"), (list, "list"), (dict, "map"))


def value_kind(value: Any) -> str:
    if value is None:
        return "null"
    for python_type, kind in _VALUE_KINDS:
        if isinstance(value, python_type):
            return kind
    return "opaque"


def value_size(value: Any) -> int:
    """A value's size as the runtime's ``actualSize`` reads it (1 for what has no size)."""
    return len(value) if isinstance(value, (str, bytes, list, dict)) else 1


class ValueSizes:
    """Sizes from the values about to be evaluated: at each path, the largest size among
    the values found there (every list element, every map value). Each path is walked
    once, over only the part of the values it names."""

    def __init__(self, variables: Mapping[str, Any]) -> None:
        self.variables = variables
        self._memo: dict[tuple[str, ...], tuple[int | None, str]] = {}
        self._levels: dict[tuple[str, ...], list[Any]] = {}
        self._total: int | None = None

    def _values(self, path: tuple[str, ...]) -> list[Any]:
        """Every value at ``path`` (the values at its parent path, memoized, one step on)."""
        if len(path) == 1:
            return [self.variables[path[0]]] if path[0] in self.variables else []
        parents = self._levels.get(path[:-1])
        if parents is None:
            parents = self._levels[path[:-1]] = self._values(path[:-1])
        step = path[-1]
        if step[0] != "@":  # a field: no fan-out
            return [value[step] for value in parents if isinstance(value, dict) and step in value]
        return list(_step(parents, step))

    def _lookup(self, path: tuple[str, ...]) -> tuple[int | None, str]:
        found = self._memo.get(path)
        if found is None:
            size: int | None = None
            kind = "dyn"
            for value in self._values(path):
                size = max(size or 0, value_size(value))
                if kind == "dyn" and value is not None:
                    kind = value_kind(value)
            found = self._memo[path] = (size, kind)
        return found

    def size(self, path: tuple[str, ...]) -> int | None:
        return self._lookup(path)[0]

    def kind(self, path: tuple[str, ...]) -> str:
        return self._lookup(path)[1]

    def total(self) -> int:
        """Every size in the values added up (characters, elements, entries): no value
        computed from them by one expression is larger, but for what its literals add."""
        if self._total is None:
            total = 0
            stack: list[Any] = list(self.variables.values())
            while stack:
                value = stack.pop()
                total += value_size(value)
                if isinstance(value, list):
                    stack.extend(value)
                elif isinstance(value, dict):
                    stack.extend(value.values())
                    total += sum(len(k) for k in value if isinstance(k, str))
            self._total = total
        return self._total


def _step(values: Iterable[Any], step: str) -> Iterable[Any]:
    for value in values:
        if step in ("@items", "@values"):
            if isinstance(value, list):
                yield from value
            elif isinstance(value, dict):
                yield from value.values()
        elif step == "@keys":
            if isinstance(value, dict):
                yield from value.keys()
        elif step == "@indices":
            if isinstance(value, list):
                yield from range(min(len(value), 1))
        elif isinstance(value, dict) and step in value:
            yield value[step]


__all__ = ["Decl", "DeclSizes", "Sizes", "UNBOUNDED", "UnknownSizes", "ValueSizes", "estimate", "factor", "fixed_cost",
           "Recording", "answers", "literal_size", "value_kind", "value_size"]
