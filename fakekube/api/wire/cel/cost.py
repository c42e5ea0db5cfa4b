"""What a CEL expression costs, in cel-go's cost units, before it runs.

Kubernetes bounds every CEL expression twice. At CRD create/update it refuses a rule
whose worst case, estimated from the schema's ``maxItems``/``maxLength``/``maxProperties``
(cel-go's ``checker.Cost`` with Kubernetes' size and library estimators), is too large;
at run time cel-go counts the cost of each evaluation and cancels it past a limit. The
engine here counts nothing, so this module estimates: :func:`estimate` walks the
expression tree (:mod:`.syntax`) as cel-go's coster does — one unit per identifier and
field read, a traversal factor of 0.1 per character or byte, comprehensions paid per
element, library functions as Kubernetes' ``library.CostEstimator`` prices them — with
sizes from a :class:`~.sizes.Sizes`: the schema's bounds (at CRD validation) or the
actual values about to be evaluated (before each run: an upper bound of what cel-go's
runtime tracker would count, since that is the same arithmetic over the real sizes,
with every loop run to its end). Function prices are in :mod:`.prices`.

Simplifications (docs/reliability.md): no static types beyond what the schema, literals
and function names tell (an unknown value is ``dyn``, whose overloads cost as the
dearest one); only the maximum of each estimate is kept, not cel-go's minimum.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from fakekube.api.wire.cel.prices import (ARITHMETIC, LIST_CREATE, MAP_CREATE, SCALARS, STRUCT_CREATE, UNBOUNDED, Estimate,
                                          add, known, mul, price, union)
from fakekube.api.wire.cel.sizes import KindsOnly, Sizes, UnknownSizes, value_size
from fakekube.api.wire.cel.syntax import (ACCUMULATOR, Call, Comprehension, Expr, Ident, ListLit, Lit, MapLit, Select,
                                          StructLit, children)

#: Kinds a field selection costs one unit on (cel-go: map, struct, type parameter).
_SELECTABLE = frozenset(("map", "struct"))
#: Type names, read as values (``type(x) == int``): one unit. Their size is the rule's
#: root's, as Kubernetes' size estimator answers for any path of one name (it skips the
#: variable), so ``type(self.n) == int`` costs nothing on an object and
#: ``type(self.s) == type(1)`` is unbounded, as upstream estimates them.
TYPE_NAMES = frozenset(("int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type"))
#: Namespaces whose functions read as ``ns.f(...)``.
NAMESPACES = frozenset(("math", "sets", "base64", "lists", "strings", "optional", "format", "cel"))


class _Var(NamedTuple):
    path: tuple[str, ...] | None
    size: int | None
    kind: str
    entry: int | None
    elem: str


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
    def cost(self, e: Expr) -> Estimate:
        est = self._cost(e)
        if self.unknown is not None and (est.size is None or (est.entry is None and est.path is None
                                                               and est.kind in ("list", "map", "dyn"))):
            bound = self.unknown()  # a value built in the expression: nothing in it is larger than everything
            est = est._replace(size=bound if est.size is None else est.size,
                               entry=bound if est.entry is None else est.entry)
        return est

    def _cost(self, e: Expr) -> Estimate:
        if isinstance(e, Lit):
            size = len(e.value) if e.kind in ("string", "bytes") else 1
            return Estimate(0, size, e.kind)
        if isinstance(e, Ident):
            return self.ident(e)
        if isinstance(e, Select):
            return self.select(e)
        if isinstance(e, Call):
            return self.call(e)
        if isinstance(e, ListLit):
            parts = [self.cost(x) for x in e.elements]
            entry = max((known(p.size) for p in parts), default=0)
            return Estimate(add(sum(p.cost for p in parts), LIST_CREATE), len(parts), "list", None, entry,
                        parts[0].kind if parts else "dyn")
        if isinstance(e, MapLit):
            keys = [self.cost(k) for k, _ in e.entries]
            values = [self.cost(v) for _, v in e.entries]
            total = sum(p.cost for p in keys + values)
            entry = max((known(p.size) for p in values), default=0)
            return Estimate(add(total, MAP_CREATE), len(values), "map", None, entry, values[0].kind if values else "dyn")
        if isinstance(e, StructLit):
            return Estimate(add(sum(self.cost(v).cost for _, v in e.fields), STRUCT_CREATE), None, "struct")
        return self.comprehension(e)

    def ident(self, e: Ident) -> Estimate:
        var = self.local(e.name)
        if var is None and e.name in TYPE_NAMES and self.sizes.kind((e.name,)) == "dyn":
            return Estimate(1, self.sizes.size(("self",)), "type")
        if var is None:
            path = (e.name,)
            kind = self.sizes.kind(path)
            return Estimate(1, self.path_size(path, kind), kind, path, None, self.element_kind(path, kind))
        size = self.path_size(var.path, var.kind)
        return Estimate(1, var.size if size is None else size, var.kind, var.path, var.entry, var.elem)

    def select(self, e: Select) -> Estimate:
        operand = self.cost(e.operand)
        if e.test_only:
            return Estimate(add(self.presence_cost, operand.cost), 1, "bool")
        cost = add(operand.cost, 1 if operand.kind in self.selectable else 0)
        if operand.path is None:  # a field of a value built in the expression
            return Estimate(cost, operand.entry, operand.elem)
        path = operand.path + (e.field,)
        kind = self.sizes.kind(path)
        return Estimate(cost, self.path_size(path, kind), kind, path, None, self.element_kind(path, kind))

    def comprehension(self, e: Comprehension) -> Estimate:
        bind = isinstance(e.iter_range, ListLit) and not e.iter_range.elements and e.accu_var != ACCUMULATOR \
            and isinstance(e.loop_condition, Lit) and e.loop_condition.value is False
        loop_range = self.cost(e.iter_range)
        init = self.cost(e.accu_init)
        total = add(loop_range.cost, init.cost)
        self.push(e.accu_var, _Var(init.path, init.size, init.kind, init.entry, init.elem))
        if bind:
            result = self.cost(e.result)
            self.pop(e.accu_var)
            return result._replace(cost=add(total, result.cost))
        names = self.push_iteration(e, loop_range)
        condition = self.cost(e.loop_condition)
        step = self.cost(e.loop_step)
        per_element = add(condition.cost, step.cost)
        for name in names:
            self.pop(name)
        result = self.cost(e.result)
        self.pop(e.accu_var)
        count = known(loop_range.size)
        total = add(add(total, result.cost), mul(count, per_element))
        if isinstance(e.accu_init, (ListLit, MapLit)):
            return Estimate(total, count, init.kind, None, step.entry, step.elem)
        return Estimate(total, init.size, result.kind)

    def push_iteration(self, e: Comprehension, loop_range: Estimate) -> list[str]:
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
    def call(self, e: Call) -> Estimate:
        function, target_expr = e.function, e.target
        if isinstance(target_expr, Ident) and target_expr.name in NAMESPACES and self.local(target_expr.name) is None \
                and self.sizes.kind((target_expr.name,)) == "dyn":
            function, target_expr = f"{target_expr.name}.{function}", None
        if function == "dyn" and len(e.args) == 1:
            inner = self.cost(e.args[0])
            return inner._replace(cost=add(inner.cost, 1))
        args = [self.cost(a) for a in e.args]
        target = self.cost(target_expr) if target_expr is not None else None
        arg_cost = 0
        for a in args:
            arg_cost = add(arg_cost, a.cost)
        own, result = price(function, target, args)
        base = target.cost if target is not None else 0
        if function in ("_&&_", "_||_"):
            return result._replace(cost=add(base, own))
        if function == "_?_:_" and len(args) == 3:
            return Estimate(add(base, own), result.size, args[1].kind, None, union(args[1].entry, args[2].entry),
                        args[1].elem)
        if function in ("_[_]", "_[?_]") and len(args) == 2:
            result = self.index(args[0])
        elif function in ARITHMETIC and args:
            kind = args[0].kind if args[0].kind != "dyn" or len(args) == 1 else args[1].kind
            entry = union(args[0].entry, args[1].entry) if kind == "list" and len(args) == 2 else None
            result = result._replace(kind=kind, entry=entry, elem=args[0].elem,
                                     size=1 if kind in SCALARS and result.size is None else result.size)
        return result._replace(cost=add(base, add(own, arg_cost)))

    def index(self, container: Estimate) -> Estimate:
        """``x[i]``: an element of a list, a value of a map (its path, or its known size)."""
        step = "@items" if container.kind == "list" else "@values"
        if container.path is None:
            return Estimate(0, container.entry, container.elem)
        path = container.path + (step,)
        kind = self.sizes.kind(path)
        size = container.entry if container.entry is not None else self.path_size(path, kind)
        return Estimate(0, size, kind, path, None, self.element_kind(path, kind))


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


__all__ = ["NAMESPACES", "UNBOUNDED", "estimate", "fixed_cost", "literal_size"]
