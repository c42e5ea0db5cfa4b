"""CEL source parsed into a small tree, macros expanded as cel-go expands them.

The engine (the ``cel`` package) runs expressions but shows nothing of their structure,
and Kubernetes decides whether a rule may exist, and how much a run may cost, from that
structure (:mod:`.cost`). This parser follows CEL's grammar (cel-spec ``langdef.md``)
and cel-go's macro expansion (``has``, ``all``, ``exists``, ``exists_one``, ``map``,
``filter``, ``cel.bind``, the two-variable comprehensions), so a comprehension here is
the loop cel-go's cost estimator sees. It runs only on expressions the engine already
accepted; anything it does not know is a :class:`SyntaxProblem`.

Binary chains are built with loops (``&&``/``||`` balanced, as cel-go does). A tree
deeper than ``MAX_DEPTH`` is refused (cel-go refuses 250; the engine itself already
refuses about 96 nested parentheses), so no walk of a tree recurses further than that.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple, Union

#: The deepest expression tree read (a walk of it recurses once per level).
MAX_DEPTH = 100

#: The accumulator cel-go's macros use (``@result``; ``__result__`` before v0.17).
ACCUMULATOR = "@result"


class SyntaxProblem(ValueError):
    """The parser cannot read the expression (or it nests too deep)."""


class Lit(NamedTuple):
    kind: str  # int, uint, double, string, bytes, bool, null
    value: Any


class Ident(NamedTuple):
    name: str


class Select(NamedTuple):
    operand: "Expr"
    field: str
    test_only: bool = False


class Call(NamedTuple):
    function: str
    target: "Expr | None"
    args: tuple["Expr", ...]


class ListLit(NamedTuple):
    elements: tuple["Expr", ...]


class MapLit(NamedTuple):
    entries: tuple[tuple["Expr", "Expr"], ...]


class StructLit(NamedTuple):
    type_name: str
    fields: tuple[tuple[str, "Expr"], ...]


class Comprehension(NamedTuple):
    iter_var: str
    iter_var2: str  # "" for a one-variable comprehension
    iter_range: "Expr"
    accu_var: str
    accu_init: "Expr"
    loop_condition: "Expr"
    loop_step: "Expr"
    result: "Expr"


Expr = Union[Lit, Ident, Select, Call, ListLit, MapLit, StructLit, Comprehension]

_TOKEN = re.compile(r"""
    (?P<space>\s+|//[^\n]*)
  | (?P<double>(?:[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+|\.[0-9]+(?:[eE][+-]?[0-9]+)?))
  | (?P<hex>0[xX][0-9a-fA-F]+[uU]?)
  | (?P<number>[0-9]+[uU]?)
  | (?P<string>(?:[rR][bB]?|[bB][rR]?)?(?:\"\"\"|'''|"|'))
  | (?P<ident>[_a-zA-Z][_a-zA-Z0-9]*)
  | (?P<quoted>`[^`]*`)
  | (?P<op>\|\||&&|==|!=|<=|>=|\.\?|\[\?|[-+*/%!<>?:.,()\[\]{}])
""", re.VERBOSE)

_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "?": "?",
            '"': '"', "'": "'", "`": "`"}


class _Token(NamedTuple):
    kind: str  # double, hex, number, string, ident, quoted, op, end
    text: str
    value: Any = None


def _string_end(source: str, start: int, quote: str, raw: bool) -> int:
    """The index just past the closing ``quote`` of a literal whose body starts at ``start``."""
    position = start
    while True:
        found = source.find(quote, position)
        if found == -1:
            raise SyntaxProblem("unterminated string literal")
        if raw:
            return found + len(quote)
        backslashes = 0
        while found - backslashes - 1 >= start and source[found - backslashes - 1] == "\\":
            backslashes += 1
        if backslashes % 2 == 0:
            return found + len(quote)
        position = found + 1


def _unescape(body: str) -> str:
    """The value of a (non-raw) string literal body; octal, hex and unicode escapes read."""
    out: list[str] = []
    position = 0
    while position < len(body):
        char = body[position]
        if char != "\\":
            out.append(char)
            position += 1
            continue
        code = body[position + 1:position + 2]
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            position += 2
        elif code in ("x", "X"):
            out.append(chr(int(body[position + 2:position + 4], 16)))
            position += 4
        elif code == "u":
            out.append(chr(int(body[position + 2:position + 6], 16)))
            position += 6
        elif code == "U":
            out.append(chr(int(body[position + 2:position + 10], 16)))
            position += 10
        elif code.isdigit():
            out.append(chr(int(body[position + 1:position + 4], 8)))
            position += 4
        else:
            raise SyntaxProblem(f"invalid escape \\{code}")
    return "".join(out)


def tokenize(source: str) -> list[_Token]:
    """The expression's tokens (spaces and comments dropped), ending with an ``end``."""
    tokens: list[_Token] = []
    position = 0
    while position < len(source):
        match = _TOKEN.match(source, position)
        if match is None:
            raise SyntaxProblem(f"unexpected character {source[position]!r}")
        kind = match.lastgroup or ""
        if kind == "string":
            prefix = match.group().rstrip("'\"")
            quote = match.group()[len(prefix):]
            end = _string_end(source, match.end(), quote, "r" in prefix.lower())
            body = source[match.end():end - len(quote)]
            value = body if "r" in prefix.lower() else _unescape(body)
            tokens.append(_Token("bytes" if "b" in prefix.lower() else "string", source[position:end], value))
            position = end
            continue
        if kind != "space":
            tokens.append(_Token(kind, match.group()))
        position = match.end()
    tokens.append(_Token("end", ""))
    return tokens


class _Parser:
    """Recursive descent over CEL's grammar; ``depth`` counts nesting as cel-go does."""

    def __init__(self, source: str) -> None:
        self.tokens = tokenize(source)
        self.position = 0

    # -- tokens --------------------------------------------------------------
    def peek(self, offset: int = 0) -> _Token:
        return self.tokens[min(self.position + offset, len(self.tokens) - 1)]

    def take(self) -> _Token:
        token = self.peek()
        self.position += 1
        return token

    def accept(self, text: str) -> bool:
        token = self.peek()
        if token.kind in ("op", "ident") and token.text == text:
            self.position += 1
            return True
        return False

    def expect(self, text: str) -> None:
        if not self.accept(text):
            raise SyntaxProblem(f"expected {text!r}, found {self.peek().text!r}")

    # -- grammar -------------------------------------------------------------
    def parse(self) -> Expr:
        expr = self.expr()
        if self.peek().kind != "end":
            raise SyntaxProblem(f"unexpected {self.peek().text!r}")
        return expr

    def expr(self) -> Expr:
        condition = self.logical("||")
        if self.accept("?"):
            when_true = self.logical("||")
            self.expect(":")
            condition = Call("_?_:_", None, (condition, when_true, self.expr()))
        return condition

    def logical(self, operator: str) -> Expr:
        """``||`` over ``&&`` over relations; each chain balanced as cel-go's balancer builds it."""
        operands = [self.logical("&&") if operator == "||" else self.relation()]
        while self.accept(operator):
            operands.append(self.logical("&&") if operator == "||" else self.relation())
        return _balanced(f"_{operator}_", operands)

    def relation(self) -> Expr:
        left = self.calc(0)
        while self.peek().text in ("<", "<=", ">", ">=", "==", "!=", "in") and self.peek().kind in ("op", "ident"):
            operator = self.take().text
            left = Call("@in" if operator == "in" else f"_{operator}_", None, (left, self.calc(0)))
        return left

    _LEVELS = (("+", "-"), ("*", "/", "%"))

    def calc(self, level: int) -> Expr:
        if level == len(self._LEVELS):
            return self.unary()
        left = self.calc(level + 1)
        while self.peek().kind == "op" and self.peek().text in self._LEVELS[level]:
            operator = self.take().text
            left = Call(f"_{operator}_", None, (left, self.calc(level + 1)))
        return left

    def unary(self) -> Expr:
        if self.peek().kind == "op" and self.peek().text in ("!", "-"):
            operator = self.take().text
            operand = self.unary()
            if operator == "-" and isinstance(operand, Lit) and operand.kind in ("int", "double"):
                return Lit(operand.kind, -operand.value)
            return Call("!_" if operator == "!" else "-_", None, (operand,))
        return self.member()

    def member(self) -> Expr:
        expr = self.primary()
        while True:
            if self.accept(".") or self.accept(".?"):
                optional = self.tokens[self.position - 1].text == ".?"
                name = self.field_name()
                if not optional and self.accept("("):
                    expr = self.call(name, expr, self.arguments(")"))
                else:
                    expr = Call("_?._", None, (expr, Lit("string", name))) if optional else Select(expr, name)
            elif self.accept("[") or self.accept("[?"):
                optional = self.tokens[self.position - 1].text == "[?"
                index = self.expr()
                self.expect("]")
                expr = Call("_[?_]" if optional else "_[_]", None, (expr, index))
            else:
                return expr

    def field_name(self) -> str:
        token = self.take()
        if token.kind == "ident":
            return token.text
        if token.kind == "quoted":
            return token.text[1:-1]
        raise SyntaxProblem(f"expected a field name, found {token.text!r}")

    def primary(self) -> Expr:
        token = self.take()
        if token.kind in ("double", "hex", "number"):
            return _number(token)
        if token.kind in ("string", "bytes"):
            return Lit(token.kind, token.value)
        if token.kind == "ident":
            return self.name(token.text)
        if token.text == "." and self.peek().kind == "ident":
            return self.name("." + self.take().text)
        if token.text == "(":
            inner = self.expr()
            self.expect(")")
            return inner
        if token.text == "[":
            return ListLit(tuple(self.arguments("]")))
        if token.text == "{":
            return MapLit(tuple(self.entries()))
        raise SyntaxProblem(f"unexpected {token.text!r}")

    def name(self, text: str) -> Expr:
        if text in ("true", "false"):
            return Lit("bool", text == "true")
        if text == "null":
            return Lit("null", None)
        if self.accept("("):
            return self.call(text.lstrip("."), None, self.arguments(")"))
        if self.peek().text == "{" and text.lstrip(".")[:1].isupper():  # a message: Type{field: value}
            self.take()
            return StructLit(text.lstrip("."), tuple(self.field_inits()))
        return Ident(text.lstrip("."))

    def arguments(self, closing: str) -> list[Expr]:
        args: list[Expr] = []
        while not self.accept(closing):
            self.accept("?")  # an optional list element ([?x]) costs as the element
            args.append(self.expr())
            if not self.accept(","):
                self.expect(closing)
                break
        return args

    def entries(self) -> list[tuple[Expr, Expr]]:
        entries: list[tuple[Expr, Expr]] = []
        while not self.accept("}"):
            self.accept("?")
            key = self.expr()
            self.expect(":")
            entries.append((key, self.expr()))
            if not self.accept(","):
                self.expect("}")
                break
        return entries

    def field_inits(self) -> list[tuple[str, Expr]]:
        fields: list[tuple[str, Expr]] = []
        while not self.accept("}"):
            self.accept("?")
            name = self.field_name()
            self.expect(":")
            fields.append((name, self.expr()))
            if not self.accept(","):
                self.expect("}")
                break
        return fields

    # -- macros ----------------------------------------------------------------
    def call(self, function: str, target: Expr | None, args: list[Expr]) -> Expr:
        if target is None and function == "has" and len(args) == 1 and isinstance(args[0], Select):
            return Select(args[0].operand, args[0].field, test_only=True)
        if target is not None and _is_variable(target, "cel") and function == "bind" and len(args) == 3:
            name = _variable_name(args[0])
            return Comprehension("#unused", "", ListLit(()), name, args[1], Lit("bool", False), Ident(name), args[2])
        if target is not None and function in _MACROS and len(args) in _MACROS[function]:
            return self.comprehension(function, target, args)
        return Call(function, target, tuple(args))

    def comprehension(self, function: str, target: Expr, args: list[Expr]) -> Expr:
        """cel-go's expansion of a comprehension macro over ``target``."""
        accu = Ident(ACCUMULATOR)
        two = function in ("all", "exists", "existsOne", "exists_one") and len(args) == 3 or \
            function in ("transformList", "transformMap") and len(args) >= 3 or function == "transformMapEntry"
        names = [_variable_name(a) for a in args[:2 if two else 1]]
        first, second = names[0], names[1] if two else ""
        body = args[len(names):]
        kind = "exists_one" if function == "existsOne" else function
        parts: tuple[Expr, Expr, Expr, Expr]
        if kind == "all":
            parts = (Lit("bool", True), Call("@not_strictly_false", None, (accu,)), Call("_&&_", None, (accu, body[0])), accu)
        elif kind == "exists":
            parts = (Lit("bool", False), Call("@not_strictly_false", None, (Call("!_", None, (accu,)),)),
                     Call("_||_", None, (accu, body[0])), accu)
        elif kind == "exists_one":
            step = Call("_?_:_", None, (body[0], Call("_+_", None, (accu, Lit("int", 1))), accu))
            parts = (Lit("int", 0), Lit("bool", True), step, Call("_==_", None, (accu, Lit("int", 1))))
        elif kind in ("map", "transformList", "sortBy"):
            step = Call("_+_", None, (accu, ListLit((body[-1],))))
            if len(body) == 2:
                step = Call("_?_:_", None, (body[0], step, accu))
            parts = (ListLit(()), Lit("bool", True), step, accu)
        elif kind == "filter":
            step = Call("_?_:_", None, (body[0], Call("_+_", None, (accu, ListLit((Ident(first),)))), accu))
            parts = (ListLit(()), Lit("bool", True), step, accu)
        else:  # transformMap, transformMapEntry, optMap, optFlatMap: a map or value built per element
            step = Call("cel.@mapInsert", None, (accu, Ident(first), body[-1]))
            if len(body) == 2:
                step = Call("_?_:_", None, (body[0], step, accu))
            parts = (MapLit(()), Lit("bool", True), step, accu)
        return Comprehension(first, second, target, ACCUMULATOR, *parts)


#: Receiver-style macros and their argument counts (variables included).
_MACROS = {"all": (2, 3), "exists": (2, 3), "exists_one": (2,), "existsOne": (2, 3), "map": (2, 3),
           "filter": (2,), "transformList": (3, 4), "transformMap": (3, 4), "transformMapEntry": (3, 4),
           "sortBy": (2,)}


def _balanced(function: str, operands: list[Expr]) -> Expr:
    """cel-go's balancer: ``a && b && c && d`` as ``(a && b) && (c && d)``."""
    while len(operands) > 1:
        paired = [Call(function, None, (operands[i], operands[i + 1])) for i in range(0, len(operands) - 1, 2)]
        operands = paired + ([operands[-1]] if len(operands) % 2 else [])
    return operands[0]


def _number(token: _Token) -> Lit:
    text = token.text
    unsigned = text[-1:] in ("u", "U") and token.kind != "double"
    digits = text[:-1] if unsigned else text
    if token.kind == "double":
        return Lit("double", float(text))
    value = int(digits, 16) if token.kind == "hex" else int(digits)
    return Lit("uint" if unsigned else "int", value)


def _is_variable(expr: Expr, name: str) -> bool:
    return isinstance(expr, Ident) and expr.name == name


def _variable_name(expr: Expr) -> str:
    if not isinstance(expr, Ident):
        raise SyntaxProblem("argument must be a simple name")
    return expr.name


def _looks_like_type(qualified: str, _next: str) -> bool:
    """A message construction ``Type{...}``: only with a capitalised last name (CEL's own
    types and Kubernetes' are spelled so); ``x {`` does not occur otherwise in a rule."""
    last = qualified.rpartition(".")[2]
    return last[:1].isupper()


def children(node: Expr) -> tuple[Expr, ...]:
    """The expressions directly inside ``node``."""
    if isinstance(node, Select):
        return (node.operand,)
    if isinstance(node, Call):
        return ((node.target,) if node.target is not None else ()) + node.args
    if isinstance(node, ListLit):
        return node.elements
    if isinstance(node, MapLit):
        return tuple(part for entry in node.entries for part in entry)
    if isinstance(node, StructLit):
        return tuple(value for _, value in node.fields)
    if isinstance(node, Comprehension):
        return node.iter_range, node.accu_init, node.loop_condition, node.loop_step, node.result
    return ()


def depth(expr: Expr) -> int:
    """How many levels the tree has (counted without recursing)."""
    deepest = 0
    stack: list[tuple[Expr, int]] = [(expr, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children(node))
    return deepest


def parse(source: str) -> Expr:
    """The expression tree of ``source``; :class:`SyntaxProblem` when it cannot be read
    (``max recursion depth exceeded`` when it nests deeper than ``MAX_DEPTH``)."""
    try:
        tree = _Parser(source).parse()
    except RecursionError:
        raise SyntaxProblem("max recursion depth exceeded") from None
    except (ValueError, OverflowError, IndexError) as exc:  # a literal Python cannot read (int(), chr())
        raise SyntaxProblem(str(exc)) from None
    if depth(tree) > MAX_DEPTH:
        raise SyntaxProblem("max recursion depth exceeded")
    return tree
