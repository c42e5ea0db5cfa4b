"""Shell arithmetic: ``$((…))``, ``((…))`` and ``for ((;;))``, as POSIX sh and bash evaluate it.

The expression arrives with its ``$`` expansions already done (kubelet/shell.py); names left in
it are variables, read as numbers (unset or empty: 0; a value that is itself an expression is
evaluated, as bash does). Integers are 64-bit and wrap as C's do; literals may be decimal,
``0x`` hex, ``0`` octal or ``BASE#DIGITS``. Operators, loosest first: ``,``; ``=`` and the
compound assignments; ``?:``; ``||``; ``&&``; ``|``; ``^``; ``&``; ``==`` ``!=``; ``<`` ``<=``
``>`` ``>=``; ``<<`` ``>>``; ``+`` ``-``; ``*`` ``/`` ``%``; ``**``; unary ``+ - ! ~ ++ --``;
postfix ``++ --``. ``&&``, ``||`` and ``?:`` evaluate only the side they need. An error
(:class:`ArithError`) is worded as dash words it.
"""

from __future__ import annotations

import re
from typing import Callable, NamedTuple, Union

#: How deep an expression (or a variable holding one) may nest before it is refused.
MAX_DEPTH = 64
_TOKEN = re.compile(r"\s*(?:(?P<num>\d+#[0-9A-Za-z@_]+|0[xX][0-9A-Fa-f]+|\d+)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|"
                    r"(?P<op>\*\*=|<<=|>>=|\+\+|--|\*\*|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&^|]=|[-+*/%<>=!~&^|?:,()]))")
_BINARY = {",": 1, "||": 4, "&&": 5, "|": 6, "^": 7, "&": 8, "==": 9, "!=": 9, "<": 10, "<=": 10, ">": 10, ">=": 10,
           "<<": 11, ">>": 11, "+": 12, "-": 12, "*": 13, "/": 13, "%": 13, "**": 14}
_ASSIGN = {"=", "*=", "/=", "%=", "+=", "-=", "<<=", ">>=", "&=", "^=", "|=", "**="}


class ArithError(ValueError):
    """The expression cannot be evaluated; ``str()`` is the shell's message (exit status 2)."""


class _Num(NamedTuple):
    value: int


class _Var(NamedTuple):
    name: str


class _Unary(NamedTuple):
    op: str
    operand: "_Node"


class _Binary(NamedTuple):
    op: str
    left: "_Node"
    right: "_Node"


class _Ternary(NamedTuple):
    condition: "_Node"
    then: "_Node"
    otherwise: "_Node"


class _Assign(NamedTuple):
    op: str
    name: str
    value: "_Node"


class _Step(NamedTuple):
    """``++x`` (``prefix``) or ``x++``, and the same with ``--``."""

    op: str
    name: str
    prefix: bool


_Node = Union[_Num, _Var, _Unary, _Binary, _Ternary, _Assign, _Step]


def wrap(value: int) -> int:
    """A 64-bit two's-complement integer, as the shells' ``intmax_t``."""
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


def evaluate(text: str, get: Callable[[str], str], set_: Callable[[str, str], None], depth: int = 0) -> int:
    """The value of ``text``; ``get``/``set_`` read and assign shell variables."""
    if depth > MAX_DEPTH:
        raise ArithError("arithmetic expression: expression recursion level exceeded")
    if not text.strip():
        return 0
    node = _Parser(text).parse()
    return _Evaluator(get, set_, depth).value(node)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[tuple[str, str]] = []
        position = 0
        while position < len(text):
            if text[position:].strip() == "":
                break
            match = _TOKEN.match(text, position)
            if match is None:
                raise ArithError(f'arithmetic expression: expecting primary: "{text.strip()}"')
            kind = match.lastgroup or "op"
            self.tokens.append((kind, match.group(kind)))
            position = match.end()
        self.index = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise ArithError(f'arithmetic expression: expecting primary: "{self.text.strip()}"')
        self.index += 1
        return token

    def parse(self) -> _Node:
        node = self.expression(0)
        if self.peek() is not None:
            raise ArithError(f'arithmetic expression: expecting EOF: "{self.text.strip()}"')
        return node

    def expression(self, floor: int) -> _Node:
        """Operators binding at least as tight as ``floor`` (precedence climbing)."""
        left = self.unary()
        while True:
            token = self.peek()
            if token is None or token[0] != "op":
                return left
            op = token[1]
            if op in _ASSIGN:
                if floor > 2 or not isinstance(left, _Var):
                    if floor > 2:
                        return left
                    raise ArithError(f'arithmetic expression: expecting primary: "{self.text.strip()}"')
                self.take()
                left = _Assign(op, left.name, self.expression(2))
            elif op == "?":
                if floor > 3:
                    return left
                self.take()
                then = self.expression(1)
                if self.take()[1] != ":":
                    raise ArithError(f'arithmetic expression: expecting ":": "{self.text.strip()}"')
                left = _Ternary(left, then, self.expression(3))
            else:
                precedence = _BINARY.get(op)
                if precedence is None or precedence < floor:
                    return left
                self.take()
                left = _Binary(op, left, self.expression(precedence if op == "**" else precedence + 1))

    def unary(self) -> _Node:
        kind, text = self.take()
        if kind == "num":
            return _Num(_literal(text))
        if kind == "name":
            token = self.peek()
            if token is not None and token[1] in ("++", "--"):
                self.take()
                return _Step(token[1], text, prefix=False)
            return _Var(text)
        if text == "(":
            node = self.expression(0)
            if self.take()[1] != ")":
                raise ArithError(f'arithmetic expression: expecting ")": "{self.text.strip()}"')
            return node
        if text in ("++", "--"):
            name = self.take()
            if name[0] != "name":
                raise ArithError(f'arithmetic expression: expecting primary: "{self.text.strip()}"')
            return _Step(text, name[1], prefix=True)
        if text in ("+", "-", "!", "~"):
            return _Unary(text, self.unary())
        raise ArithError(f'arithmetic expression: expecting primary: "{self.text.strip()}"')


def _literal(text: str) -> int:
    try:
        if "#" in text:
            base, digits = text.split("#", 1)
            return wrap(int(digits, int(base)))
        if text.lower().startswith("0x"):
            return wrap(int(text, 16))
        if len(text) > 1 and text.startswith("0"):
            return wrap(int(text, 8))
        return wrap(int(text))
    except ValueError:
        raise ArithError(f'arithmetic expression: expecting primary: "{text}"') from None


class _Evaluator:
    def __init__(self, get: Callable[[str], str], set_: Callable[[str, str], None], depth: int) -> None:
        self.get, self.set_, self.depth = get, set_, depth

    def variable(self, name: str) -> int:
        raw = self.get(name).strip()
        if raw == "":
            return 0
        if re.fullmatch(r"[+-]?\d+", raw):
            return wrap(int(raw))
        return evaluate(raw, self.get, self.set_, self.depth + 1)

    def value(self, node: _Node) -> int:
        if isinstance(node, _Num):
            return node.value
        if isinstance(node, _Var):
            return self.variable(node.name)
        if isinstance(node, _Unary):
            operand = self.value(node.operand)
            return {"+": operand, "-": wrap(-operand), "!": int(operand == 0), "~": wrap(~operand)}[node.op]
        if isinstance(node, _Step):
            old = self.variable(node.name)
            new = wrap(old + (1 if node.op == "++" else -1))
            self.set_(node.name, str(new))
            return new if node.prefix else old
        if isinstance(node, _Ternary):
            return self.value(node.then) if self.value(node.condition) else self.value(node.otherwise)
        if isinstance(node, _Assign):
            value = self.value(node.value)
            if node.op != "=":
                value = _apply(node.op[:-1], self.variable(node.name), value)
            self.set_(node.name, str(value))
            return value
        if node.op == "&&":
            return int(bool(self.value(node.left)) and bool(self.value(node.right)))
        if node.op == "||":
            return int(bool(self.value(node.left)) or bool(self.value(node.right)))
        if node.op == ",":
            self.value(node.left)
            return self.value(node.right)
        return _apply(node.op, self.value(node.left), self.value(node.right))


def _apply(op: str, left: int, right: int) -> int:
    if op in ("/", "%"):
        if right == 0:
            raise ArithError("arithmetic expression: division by zero")
        quotient = abs(left) // abs(right) * (1 if (left >= 0) == (right >= 0) else -1)  # C truncates
        return wrap(quotient if op == "/" else left - quotient * right)
    if op == "**":
        if right < 0:
            raise ArithError("arithmetic expression: exponent less than 0")
        return wrap(pow(left, right, 1 << 64))
    if op in ("<<", ">>"):
        shift = right & 63
        return wrap(left << shift) if op == "<<" else left >> shift
    operations: dict[str, Callable[[int, int], int]] = {
        "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "&": lambda a, b: a & b,
        "|": lambda a, b: a | b, "^": lambda a, b: a ^ b, "==": lambda a, b: int(a == b),
        "!=": lambda a, b: int(a != b), "<": lambda a, b: int(a < b), "<=": lambda a, b: int(a <= b),
        ">": lambda a, b: int(a > b), ">=": lambda a, b: int(a >= b)}
    return wrap(operations[op](left, right))
