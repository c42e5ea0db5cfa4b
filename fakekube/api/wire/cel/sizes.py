"""Where a cost estimate gets the sizes and kinds of values (:mod:`.cost`).

A path starts at a variable, then names fields, ``@items`` (a list's elements),
``@keys``/``@values`` (a map's). At CRD create/update the sizes are the schema's bounds
(:class:`Decl` s, as Kubernetes declares a schema to CEL, in :class:`DeclSizes`); before
a run they are the actual values' (:class:`ValueSizes`: at each path the largest value
there). :class:`UnknownSizes` and :class:`KindsOnly` tell what a cost is whatever the
sizes; :class:`Recording` notes the questions an estimate asked, so that an estimate can
be kept by its answers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple, Protocol


class Sizes(Protocol):
    """Where sizes and kinds of variables come from. A path starts at a variable; then
    field names, ``@items`` (list elements), ``@keys``/``@values`` (map keys/values)."""

    def size(self, path: tuple[str, ...]) -> int | None: ...

    def kind(self, path: tuple[str, ...]) -> str: ...


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


__all__ = ["Decl", "DeclSizes", "KindsOnly", "Recording", "Sizes", "UnknownSizes", "ValueSizes", "answers",
           "value_kind", "value_size"]
