"""Compiling and running one CEL expression, with cel-go's error wording and its limits.

The engine (the ``cel`` package) is imported where it is first used, not with this
module: importing it also loads its command-line UI (prompt_toolkit, typer, rich), which
cost ~40 % of ``import fakekube``, and a cluster without CEL rules never needs it.

Every run is bounded as Kubernetes bounds it (k8s.io/apiserver/pkg/apis/cel/config.go):
before the engine runs, the expression's cost is estimated from the actual sizes of its
values (:mod:`.cost`); past the per-call limit the run is cancelled with cel-go's
``operation cancelled: actual cost limit exceeded``, and a :class:`CostBudget` shared by
the runs of one validation refuses the run that would overdraw it. Library functions
that run in Python meter their own work against the same per-call limit
(:func:`charge`), so a cheap-looking call cannot loop for long either.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any, Callable

from fakekube.api.wire.cel import cost as costs
from fakekube.api.wire.cel import sizes as sizing
from fakekube.api.wire.cel import syntax
from fakekube.api.wire.cel.formats import FUNCTIONS as FORMAT_FUNCTIONS
from fakekube.api.wire.cel.library import FUNCTIONS as KUBERNETES_FUNCTIONS
from fakekube.api.wire.cel.errors import (BudgetExhausted, CelError, CompileError, CostLimitExceeded,
                                         EvaluationError)
from fakekube.api.wire.cel.meter import Meter, metered

#: celconfig.PerCallLimit: the most one evaluation may cost.
PER_CALL_LIMIT = 1_000_000
#: celconfig.RuntimeCELCostBudget: the most all evaluations of one custom resource's
#: validation, or of one policy binding's validations, may cost together.
RUNTIME_COST_BUDGET = 10_000_000
#: celconfig.RuntimeCELCostBudgetMatchConditions: a policy's or webhook's matchConditions.
MATCH_CONDITIONS_COST_BUDGET = 2_500_000
#: Run-time estimates one program keeps (by its values' sizes); past it they are dropped.
MAX_CACHED_COSTS = 256

#: Functions the Rust engine runs itself (operators are spelt ``_+_``, ``@in``, ``!_``...).
_NATIVE = frozenset((
    "size", "int", "uint", "double", "string", "bytes", "bool", "type", "dyn", "timestamp", "duration",
    "matches", "contains", "startsWith", "endsWith", "max", "min",
    "getFullYear", "getMonth", "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear",
    "getHours", "getMinutes", "getSeconds", "getMilliseconds",
    # optional values (optional.of(x).hasValue(), .value(), .orValue(d), .or(o))
    "of", "none", "ofNonZeroValue", "hasValue", "value", "orValue", "or",
))

#: Library namespaces: ``math.greatest`` reads as a variable ``math`` and a function
#: ``greatest`` to the engine's reference lists.
_NAMESPACES = frozenset(("math", "sets", "base64", "lists", "strings", "optional", "format"))

#: Type names, usable as values (``type(x) == int``).
_TYPE_NAMES = frozenset(("int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type"))

#: Names a comprehension macro binds (``x`` in ``self.all(x, x > 0)``): not free variables.
_MACRO_VARIABLE = re.compile(r"\.\s*(?:all|exists|exists_one|map|filter|sortBy)\s*\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*,")
_PARSE_PREFIX = re.compile(r"^Failed to parse expression .*?: (?=ERROR:)", re.DOTALL)

_functions_lock = threading.Lock()
_all_functions: dict[str, Callable[..., Any]] | None = None


def _library() -> dict[str, Callable[..., Any]]:
    """The package's cel-go extension functions plus Kubernetes' (built once, shared)."""
    global _all_functions
    with _functions_lock:
        if _all_functions is None:
            import cel  # the engine, on first use (module docstring)
            from cel import stdlib
            context = cel.Context()
            stdlib.add_stdlib_to_context(context)
            merged = dict(context.functions)
            merged.update(KUBERNETES_FUNCTIONS)
            merged.update(FORMAT_FUNCTIONS)
            _all_functions = {name: metered(name, function) for name, function in merged.items()}
        return _all_functions


class CostBudget:
    """The cost all runs of one validation may spend together (Kubernetes' remaining
    budget, passed from rule to rule); :meth:`Program.evaluate` draws on it."""

    __slots__ = ("remaining",)

    def __init__(self, total: int = RUNTIME_COST_BUDGET) -> None:
        self.remaining = total

    def spend(self, cost: int) -> None:
        """Draw ``cost``; :class:`BudgetExhausted` (and nothing left) when it is more than remains."""
        if cost > self.remaining:
            self.remaining = -1
            raise BudgetExhausted()
        self.remaining -= cost


class Program:
    """A compiled expression, immutable and safe to share between threads."""

    __slots__ = ("source", "_program", "_functions", "_variables", "tree", "_fixed_cost", "_literal_size", "_budget",
                 "_cost_questions", "_cost_cache")

    def __init__(self, source: str, program: Any, functions: dict[str, Callable[..., Any]],
                 variables: frozenset[str], tree: syntax.Expr | None) -> None:
        self.source = source
        self._program = program
        self._functions = functions
        self._variables = variables
        #: The parsed expression (None: the parser cannot read it; it is then run unestimated).
        self.tree = tree
        self._fixed_cost = costs.fixed_cost(tree) if tree is not None else 0
        self._literal_size = costs.literal_size(tree) if tree is not None else 0
        self._budget: CostBudget | None = None
        #: Run-time estimates by the sizes and kinds they were made from (see sizes.Recording).
        self._cost_questions: tuple[tuple[bool, tuple[str, ...]], ...] | None = None
        self._cost_cache: dict[tuple[Any, ...], int] = {}

    def references(self, name: str) -> bool:
        """Does the expression use the variable ``name``?"""
        return name in self._variables

    def estimated_cost(self, sizes: sizing.Sizes) -> int:
        """The most one run can cost when values are as large as ``sizes`` says (0 when
        the expression cannot be read)."""
        return costs.estimate(self.tree, sizes) if self.tree is not None else 0

    def run_cost(self, activation: "Mapping[str, Any] | Activation") -> int:
        """The most running on ``activation`` can cost: a fixed figure when sizes do not
        matter, else the estimate over the actual values."""
        if self._fixed_cost < costs.UNBOUNDED or self.tree is None:
            return self._fixed_cost
        sizes = activation.sizes() if isinstance(activation, Activation) else sizing.ValueSizes(activation)
        questions = self._cost_questions
        if questions is not None:
            known = self._cost_cache.get(sizing.answers(sizes, questions))
            if known is not None:
                return known
        recording = sizing.Recording(sizes)
        literals = self._literal_size

        def bound() -> int:
            recording.bounded = True
            return max(1, sizes.total() + literals)

        cost = costs.estimate(self.tree, recording, unknown=bound)
        asked = tuple(dict.fromkeys(recording.questions))
        if questions is None:
            self._cost_questions = questions = asked
        if asked == questions and not recording.bounded:
            if len(self._cost_cache) >= MAX_CACHED_COSTS:
                self._cost_cache.clear()
            self._cost_cache[sizing.answers(sizes, asked)] = cost
        return cost

    def fixed_cost(self, kinds: sizing.Sizes | None = None) -> int:
        """What every run costs when that does not depend on the values' sizes (``kinds``:
        what the values are, when known), else ``cost.UNBOUNDED``."""
        if self.tree is None:
            return 0
        return self._fixed_cost if kinds is None else costs.fixed_cost(self.tree, kinds=kinds)

    def evaluate(self, activation: "Mapping[str, Any] | Activation", budget: CostBudget | None = None,
                 fixed_cost: int = costs.UNBOUNDED) -> Any:
        """The expression's value with the variables of ``activation`` bound. A run whose
        cost passes the per-call limit raises :class:`CostLimitExceeded`; with a
        ``budget``, one that would overdraw it raises :class:`BudgetExhausted` (as
        Kubernetes checks the cost of a cancelled run against the budget first).
        ``fixed_cost``: a cost known to hold for every run (:meth:`fixed_cost` with the
        values' declared kinds), which spares measuring the values."""
        budget = budget if budget is not None else self._budget
        cost = fixed_cost if fixed_cost < costs.UNBOUNDED else self.run_cost(activation)
        if cost > PER_CALL_LIMIT:
            if budget is not None:
                budget.spend(PER_CALL_LIMIT + 1)
            raise CostLimitExceeded()
        if budget is not None and cost > budget.remaining:
            budget.spend(cost)
        meter = Meter(PER_CALL_LIMIT)
        try:
            with meter:
                value = self._execute(activation)
        finally:
            if budget is not None:
                budget.spend(cost + meter.used if not meter.exceeded else PER_CALL_LIMIT + 1)
        if meter.exceeded:  # an error the expression absorbed (`f() || true`) still cancels the run
            raise CostLimitExceeded()
        return value

    def _execute(self, activation: "Mapping[str, Any] | Activation") -> Any:
        try:
            if isinstance(activation, Activation):
                return self._program.execute(activation.context)
            if not self._functions:
                return self._program.execute(dict(activation))
            import cel  # loaded by compile() already: this only looks it up
            return self._program.execute(cel.Context(variables=dict(activation), functions=self._functions))
        except CelError:
            raise
        except Exception as exc:  # the engine reports failures as plain Python exceptions
            if Meter.current_exceeded():
                raise CostLimitExceeded() from None
            raise EvaluationError(_evaluation_message(exc)) from None
        except BaseException as exc:
            if type(exc).__name__ != "PanicException":  # pyo3's panics derive from BaseException
                raise
            raise EvaluationError(str(exc)) from None

    def with_budget(self, budget: CostBudget) -> "Program":
        """This program drawing on ``budget`` whenever it is evaluated without one (for
        callers that evaluate programs they look up by expression, as matchConditions)."""
        bound = Program.__new__(Program)
        for name in Program.__slots__:
            setattr(bound, name, getattr(self, name))
        bound._budget = budget
        return bound


class Activation:
    """Variables bound once for several programs.

    Handing values to the engine costs far more than running a small program (about
    5 µs per string or map in a value, against well under 1 µs to evaluate), so rules
    that see the same ``self`` share one Activation. ``programs`` are the ones it will
    serve (their library functions are bound with it). The sizes of the values, which
    the cost estimates read, are measured once too, on first need.
    """

    __slots__ = ("context", "values", "_sizes")

    def __init__(self, variables: Mapping[str, Any], programs: Iterable[Program]) -> None:
        import cel  # the engine, on first use (module docstring)
        functions: dict[str, Callable[..., Any]] = {}
        for program in programs:
            functions.update(program._functions)
        self.values = dict(variables)
        self.context = cel.Context(variables=self.values, functions=functions or None)
        self._sizes: sizing.ValueSizes | None = None

    def sizes(self) -> sizing.ValueSizes:
        if self._sizes is None:
            self._sizes = sizing.ValueSizes(self.values)
        return self._sizes


def optional_of(value: Any) -> Any:
    """CEL's ``optional.of(value)``, to bind as a variable (a rule's optional ``oldSelf``)."""
    import cel  # the engine, on first use (module docstring)
    return cel.OptionalValue.of(value)


def optional_none() -> Any:
    """CEL's ``optional.none()``, to bind as a variable."""
    import cel  # the engine, on first use (module docstring)
    return cel.OptionalValue.none()


def compile(source: str, variables: Iterable[str]) -> Program:  # noqa: A001 - CEL's own verb
    """Parse and check ``source``; ``variables`` are the names it may reference."""
    import cel  # the engine, on first use (module docstring)
    try:
        tree: syntax.Expr | None = syntax.parse(source)
    except syntax.SyntaxProblem as problem:
        if str(problem) == "max recursion depth exceeded":  # before the engine: its own parser panics on it
            raise CompileError(f"ERROR: <input>:-1:0: {problem}") from None
        tree = None
    try:
        program = cel.compile(source)
    except ValueError as exc:
        raise CompileError(_parse_message(str(exc), source)) from None
    except Exception as exc:  # noqa: BLE001 - the parser's own failures
        raise CompileError(f"ERROR: <input>:1:1: {exc}") from None
    except BaseException as exc:
        if type(exc).__name__ != "PanicException":  # pyo3's panics derive from BaseException
            raise
        raise CompileError(f"ERROR: <input>:1:1: {exc}") from None
    declared = frozenset(variables)
    bound = set(_MACRO_VARIABLE.findall(source))
    used = frozenset(program.variables())
    namespaces = used & _NAMESPACES - declared
    for name in sorted(used - declared - bound - namespaces - _TYPE_NAMES):
        raise CompileError(_undeclared(source, name))
    library = _library()
    needed: dict[str, Callable[..., Any]] = {}
    for name in program.functions():
        qualified = [f"{space}.{name}" for space in sorted(namespaces) if f"{space}.{name}" in library]
        for full in qualified:
            needed[full] = library[full]
        if name in library:
            needed[name] = library[name]
        elif not qualified and name not in _NATIVE and not name[:1] in ("_", "@", "!", "-"):
            raise CompileError(_undeclared(source, name))
    return Program(source, program, needed, used & declared, tree)


#: Programs :func:`compiled` keeps, by (source, variables); past it the least recently used goes.
MAX_COMPILED = 4096


def compiled(source: str, variables: Iterable[str]) -> Program:
    """:func:`compile`, once per process for each (source, variables): admission policies
    and webhooks' matchConditions compile an expression at its first use. The cache lives
    outside every cluster on purpose: a program is a pure function of its text and names,
    so clusters share it, and a snapshot neither copies it (the engine's compiled form cannot
    be pickled) nor writes it to a file. A source that does not compile raises every time."""
    return _compiled(source, frozenset(variables))


@functools.lru_cache(maxsize=MAX_COMPILED)
def _compiled(source: str, variables: frozenset[str]) -> Program:
    return compile(source, variables)


def _parse_message(text: str, source: str) -> str:
    """The parser's error as cel-go prints it (``ERROR: <input>:L:C: ...`` then the line
    and a caret, each indented by `` | ``)."""
    text = _PARSE_PREFIX.sub("", text)
    lines = text.splitlines()
    return "\n".join([lines[0]] + [" " + line if line.startswith("|") else line for line in lines[1:]])


def _undeclared(source: str, name: str) -> str:
    """cel-go's checker error for an unknown identifier or function."""
    match = re.search(r"(?<![A-Za-z0-9_.])" + re.escape(name) + r"(?![A-Za-z0-9_])", source)
    if match is None:
        match = re.search(r"\." + re.escape(name) + r"\s*\(", source)
    column = (match.start() + (1 if match.group(0).startswith(".") else 0)) if match else 0
    line = source.count("\n", 0, column) + 1
    line_start = source.rfind("\n", 0, column) + 1
    caret = "." * (column - line_start) + "^"
    text_line = source.splitlines()[line - 1] if source else ""
    return (f"ERROR: <input>:{line}:{column - line_start + 1}: undeclared reference to '{name}' (in container '')"
            f"\n | {text_line}\n | {caret}")


def _evaluation_message(exc: Exception) -> str:
    """cel-go's runtime error text for what the engine raised."""
    text = str(exc)
    if isinstance(exc, KeyError):
        key = exc.args[0] if exc.args else text
        return f"no such key: {key}"
    if isinstance(exc, ZeroDivisionError):
        return "division by zero" if "modulus" not in text else "modulus by zero"
    if isinstance(exc, OverflowError):
        return "integer overflow"
    if isinstance(exc, IndexError):
        return text if text.startswith("index out of bounds") else f"index out of bounds: {text}"
    if isinstance(exc, TypeError) or "no such overload" in text or "Unsupported operation" in text:
        return "no such overload"
    for marker in ("ValueError: ", "TypeError: "):
        if marker in text:
            detail = text.rsplit(marker, 1)[1].strip()
            return "no such overload" if marker == "TypeError: " else detail
    return text
