"""The subset of kubectl's JSONPath (client-go ``util/jsonpath``) a CRD's printer columns use.

A column's ``jsonPath`` (``.spec.replicas``, ``.status.conditions[?(@.type=="Ready")].status``)
is evaluated on each object, as the apiserver's table convertor does with missing keys
allowed: a path that finds nothing gives no results, never an error.

Supported: ``.field`` and ``['field']`` (``\\.`` escapes a dot in a name), ``..field``
(recursive descent), ``*`` and ``[*]``, ``[n]`` (negative from the end), ``[a:b]`` slices,
unions ``[0,2]`` / ``['a','b']``, and filters ``[?(@.path)]`` and
``[?(@.path <op> literal)]`` with ``== != < <= > >=`` against a quoted string, a number or
true/false. Not supported (a ValueError when the path is compiled): ranges
(``{range}``), functions and filters combining conditions with ``&&``/``||``.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Iterator, NamedTuple

Step = Callable[[Any], Iterator[Any]]
_OPS = ("==", "!=", "<=", ">=", "<", ">")
_LITERAL_NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")


class JSONPath(NamedTuple):
    """A compiled path: ``find(obj)`` gives every value it reaches, in document order."""

    text: str
    steps: tuple[Step, ...]

    def find(self, obj: Any) -> list[Any]:
        values = [obj]
        for step in self.steps:
            values = [found for value in values for found in step(value)]
        return values


def compile_path(text: str) -> JSONPath:
    """Compile ``text`` (with or without kubectl's surrounding ``{}``); ValueError if it
    is not in the supported subset."""
    body = text.strip()
    if body.startswith("{") and body.endswith("}"):
        body = body[1:-1]
    return JSONPath(text, tuple(_Parser(body).steps()))


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def steps(self) -> Iterator[Step]:
        if self.text.startswith("$"):
            self.at = 1
        while self.at < len(self.text):
            char = self.text[self.at]
            if self.text.startswith("..", self.at):
                self.at += 2
                yield _recursive(self._name())
            elif char == ".":
                self.at += 1
                if self.at >= len(self.text):
                    return  # "." alone: the object itself
                name = self._name()
                yield _wildcard if name == "*" else _field(name)
            elif char == "[":
                yield self._bracket()
            else:
                raise ValueError(f"unrecognized character in action: {char!r} in {self.text!r}")

    def _name(self) -> str:
        out = []
        while self.at < len(self.text) and self.text[self.at] not in ".[":
            if self.text[self.at] == "\\" and self.at + 1 < len(self.text):
                self.at += 1
            out.append(self.text[self.at])
            self.at += 1
        if not out:
            raise ValueError(f"missing a field name at {self.at} in {self.text!r}")
        return "".join(out)

    def _bracket(self) -> Step:
        end = self._closing(self.at)
        inner = self.text[self.at + 1:end].strip()
        self.at = end + 1
        if inner == "*":
            return _wildcard
        if inner.startswith("?(") and inner.endswith(")"):
            return _filter(inner[2:-1].strip())
        parts = [p.strip() for p in _split_union(inner)]
        if all(p[:1] in "'\"" for p in parts):
            return _fields([p[1:-1] for p in parts])
        if len(parts) == 1 and ":" in parts[0]:
            return _slice(parts[0])
        try:
            return _indexes([int(p) for p in parts])
        except ValueError:
            raise ValueError(f"invalid array index {inner!r} in {self.text!r}") from None

    def _closing(self, start: int) -> int:
        depth, quote = 0, ""
        for i in range(start, len(self.text)):
            char = self.text[i]
            if quote:
                quote = "" if char == quote else quote
            elif char in "'\"":
                quote = char
            elif char == "[":
                depth += 1
            elif char == "]":
                depth -= 1
                if depth == 0:
                    return i
        raise ValueError(f"unterminated array in {self.text!r}")


def _split_union(inner: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    quote = ""
    for char in inner:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == ",":
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return parts


def _field(name: str) -> Step:
    def step(value: Any) -> Iterator[Any]:
        if isinstance(value, dict) and name in value:
            yield value[name]
    return step


def _fields(names: list[str]) -> Step:
    def step(value: Any) -> Iterator[Any]:
        for name in names:
            if isinstance(value, dict) and name in value:
                yield value[name]
    return step


def _wildcard(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        yield from (value[k] for k in sorted(value))  # Go's map order in jsonpath: sorted keys
    elif isinstance(value, list):
        yield from value


def _recursive(name: str) -> Step:
    def step(value: Any) -> Iterator[Any]:
        if isinstance(value, dict):
            if name == "*" or name in value:
                yield from (_wildcard(value) if name == "*" else [value[name]])
            for key in sorted(value):
                yield from step(value[key])
        elif isinstance(value, list):
            for item in value:
                yield from step(item)
    return step


def _indexes(indexes: list[int]) -> Step:
    def step(value: Any) -> Iterator[Any]:
        if isinstance(value, list):
            for i in indexes:
                if -len(value) <= i < len(value):
                    yield value[i]
    return step


def _slice(text: str) -> Step:
    pieces = [p.strip() for p in text.split(":")]
    numbers = [int(p) if p else None for p in pieces]
    start, stop = numbers[0], numbers[1] if len(numbers) > 1 else None
    stride = numbers[2] if len(numbers) > 2 and numbers[2] else 1

    def step(value: Any) -> Iterator[Any]:
        if isinstance(value, list):
            yield from value[start:stop:stride]
    return step


def _filter(condition: str) -> Step:
    """``@.path``, or ``@.path <op> literal`` (a literal may also stand on the left)."""
    for op in _OPS:
        left, sep, right = condition.partition(op)
        if sep:
            return _compare(left.strip(), op, right.strip())
    probe = _operand(condition)

    def exists(value: Any) -> Iterator[Any]:
        for item in _items(value):
            if probe(item):
                yield item
    return exists


def _compare(left_text: str, op: str, right_text: str) -> Step:
    left, right = _operand(left_text), _operand(right_text)

    def step(value: Any) -> Iterator[Any]:
        for item in _items(value):
            lefts, rights = left(item), right(item)
            if lefts and rights and _holds(lefts[0], op, rights[0]):
                yield item
    return step


def _items(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        return [value[k] for k in sorted(value)]
    return []


def _operand(text: str) -> Callable[[Any], list[Any]]:
    """A filter operand: ``@``-relative path, or a literal (a constant one-value list)."""
    if text.startswith("@"):
        path = compile_path(text[1:] or ".")
        return path.find
    if text[:1] in "'\"" and text[-1:] == text[:1] and len(text) >= 2:
        literal: Any = text[1:-1]
    elif text in ("true", "false"):
        literal = text == "true"
    elif _LITERAL_NUMBER.fullmatch(text):
        literal = json.loads(text)
    else:
        raise ValueError(f"unrecognized filter operand {text!r}")
    return lambda _: [literal]


def _holds(left: Any, op: str, right: Any) -> bool:
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (left, right))
    if op in ("==", "!="):
        same = left == right if numeric or type(left) is type(right) else False
        return same if op == "==" else not same
    if not numeric and not (isinstance(left, str) and isinstance(right, str)):
        return False
    return {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[op]
