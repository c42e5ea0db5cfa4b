"""Compiling and running one CEL expression, with cel-go's error wording.

The engine (the ``cel`` package) is imported where it is first used, not with this
module: importing it also loads its command-line UI (prompt_toolkit, typer, rich), which
cost ~40 % of ``import fakekube``, and a cluster without CEL rules never needs it.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any, Callable

from fakekube.api.wire.cel.formats import FUNCTIONS as FORMAT_FUNCTIONS
from fakekube.api.wire.cel.library import FUNCTIONS as KUBERNETES_FUNCTIONS

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
            _all_functions = merged
        return _all_functions


class CelError(Exception):
    """A CEL expression that does not compile or fails to evaluate; ``str()`` is the text
    upstream puts in its messages."""


class CompileError(CelError):
    """The expression does not parse, or references an undeclared name or function."""


class EvaluationError(CelError):
    """Evaluation failed (missing key, division by zero, no such overload, ...)."""


class Program:
    """A compiled expression, immutable and safe to share between threads."""

    __slots__ = ("source", "_program", "_functions", "_variables")

    def __init__(self, source: str, program: Any, functions: dict[str, Callable[..., Any]],
                 variables: frozenset[str]) -> None:
        self.source = source
        self._program = program
        self._functions = functions
        self._variables = variables

    def references(self, name: str) -> bool:
        """Does the expression use the variable ``name``?"""
        return name in self._variables

    def evaluate(self, activation: "Mapping[str, Any] | Activation") -> Any:
        """The expression's value with the variables of ``activation`` bound."""
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
            raise EvaluationError(_evaluation_message(exc)) from None


class Activation:
    """Variables bound once for several programs.

    Handing values to the engine costs far more than running a small program (about
    5 µs per string or map in a value, against well under 1 µs to evaluate), so rules
    that see the same ``self`` share one Activation. ``programs`` are the ones it will
    serve (their library functions are bound with it).
    """

    __slots__ = ("context",)

    def __init__(self, variables: Mapping[str, Any], programs: Iterable[Program]) -> None:
        import cel  # the engine, on first use (module docstring)
        functions: dict[str, Callable[..., Any]] = {}
        for program in programs:
            functions.update(program._functions)
        self.context = cel.Context(variables=dict(variables), functions=functions or None)


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
        program = cel.compile(source)
    except ValueError as exc:
        raise CompileError(_parse_message(str(exc), source)) from None
    except Exception as exc:  # noqa: BLE001 - the parser's own failures
        raise CompileError(f"ERROR: <input>:1:1: {exc}") from None
    declared = frozenset(variables)
    bound = set(_MACRO_VARIABLE.findall(source))
    used = frozenset(program.variables())
    namespaces = used & _NAMESPACES - declared
    for name in sorted(used - declared - bound - namespaces):
        raise CompileError(_undeclared(source, name))
    library = _library()
    needed: dict[str, Callable[..., Any]] = {}
    for name in program.functions():
        qualified = [f"{space}.{name}" for space in sorted(namespaces) if f"{space}.{name}" in library]
        for full in qualified:
            needed[full] = library[full]
        if name in library:
            needed[name] = library[name]
        elif not qualified and name not in _NATIVE and not name[:1] in ("_", "@", "!"):
            raise CompileError(_undeclared(source, name))
    return Program(source, program, needed, used & declared)


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
