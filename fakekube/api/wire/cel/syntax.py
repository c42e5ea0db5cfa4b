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


# Every node keeps ``pos``, the offset (in characters) cel-go locates it at: a literal or
# name at its first character, an operator at the operator, a field selection at its
# ``.``, a call at its ``(``, an index at its ``[``, a literal list or map at its bracket;
# what a macro expands to at the macro call's ``(``. The type checker's errors point there.

class Lit(NamedTuple):
    kind: str  # int, uint, double, string, bytes, bool, null
    value: Any
    pos: int = -1


class Ident(NamedTuple):
    name: str
    pos: int = -1


class Select(NamedTuple):
    operand: "Expr"
    field: str
    test_only: bool = False
    pos: int = -1


class Call(NamedTuple):
    function: str
    target: "Expr | None"
    args: tuple["Expr", ...]
    pos: int = -1


class ListLit(NamedTuple):
    elements: tuple["Expr", ...]
    pos: int = -1
    #: The indexes of optional elements (``[?x]``: added only when ``x`` has a value).
    optional: tuple[int, ...] = ()


class MapLit(NamedTuple):
    entries: tuple[tuple["Expr", "Expr"], ...]
    pos: int = -1
    #: The indexes of optional entries (``{?k: v}``).
    optional: tuple[int, ...] = ()


class StructLit(NamedTuple):
    type_name: str
    fields: tuple[tuple[str, "Expr"], ...]
    pos: int = -1


class Comprehension(NamedTuple):
    iter_var: str
    iter_var2: str  # "" for a one-variable comprehension
    iter_range: "Expr"
    accu_var: str
    accu_init: "Expr"
    loop_condition: "Expr"
    loop_step: "Expr"
    result: "Expr"
    pos: int = -1
    #: The macro it expands ("all", "map", "sortBy", "bind", ...).
    macro: str = ""


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
    pos: int = 0


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
            tokens.append(_Token("bytes" if "b" in prefix.lower() else "string", source[position:end], value, position))
            position = end
            continue
        if kind != "space":
            tokens.append(_Token(kind, match.group(), None, position))
        position = match.end()
    tokens.append(_Token("end", "", None, len(source)))
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
        at = self.peek().pos
        if self.accept("?"):
            when_true = self.logical("||")
            self.expect(":")
            condition = Call("_?_:_", None, (condition, when_true, self.expr()), at)
        return condition

    def logical(self, operator: str) -> Expr:
        """``||`` over ``&&`` over relations; each chain balanced as cel-go's balancer builds it."""
        operands = [self.logical("&&") if operator == "||" else self.relation()]
        positions: list[int] = []
        while self.peek().text == operator and self.peek().kind == "op":
            positions.append(self.take().pos)
            operands.append(self.logical("&&") if operator == "||" else self.relation())
        return _balanced(f"_{operator}_", operands, positions)

    def relation(self) -> Expr:
        left = self.calc(0)
        while self.peek().text in ("<", "<=", ">", ">=", "==", "!=", "in") and self.peek().kind in ("op", "ident"):
            token = self.take()
            operator = token.text
            left = Call("@in" if operator == "in" else f"_{operator}_", None, (left, self.calc(0)), token.pos)
        return left

    _LEVELS = (("+", "-"), ("*", "/", "%"))

    def calc(self, level: int) -> Expr:
        if level == len(self._LEVELS):
            return self.unary()
        left = self.calc(level + 1)
        while self.peek().kind == "op" and self.peek().text in self._LEVELS[level]:
            token = self.take()
            left = Call(f"_{token.text}_", None, (left, self.calc(level + 1)), token.pos)
        return left

    def unary(self) -> Expr:
        if self.peek().kind == "op" and self.peek().text in ("!", "-"):
            token = self.take()
            operator = token.text
            operand = self.unary()
            if operator == "-" and isinstance(operand, Lit) and operand.kind in ("int", "double"):
                return Lit(operand.kind, -operand.value, token.pos)
            return Call("!_" if operator == "!" else "-_", None, (operand,), token.pos)
        return self.member()

    def member(self) -> Expr:
        expr = self.primary()
        while True:
            at = self.peek().pos
            if self.accept(".") or self.accept(".?"):
                optional = self.tokens[self.position - 1].text == ".?"
                name_at = self.peek().pos
                name = self.field_name()
                call_at = self.peek().pos
                if not optional and self.accept("("):
                    expr = self.call(name, expr, self.arguments(")"), call_at)
                else:
                    expr = Call("_?._", None, (expr, Lit("string", name, name_at)), at) if optional else \
                        Select(expr, name, False, at)
            elif self.accept("[") or self.accept("[?"):
                optional = self.tokens[self.position - 1].text == "[?"
                index = self.expr()
                self.expect("]")
                expr = Call("_[?_]" if optional else "_[_]", None, (expr, index), at)
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
            return Lit(token.kind, token.value, token.pos)
        if token.kind == "ident":
            return self.name(token.text, token.pos)
        if token.text == "." and self.peek().kind == "ident":
            return self.name("." + self.take().text, token.pos)
        if token.text == "(":
            inner = self.expr()
            self.expect(")")
            return inner
        if token.text in ("[", "[?"):  # "[?": the tokenizer's optional index, here a first optional element
            optional: list[int] = [0] if token.text == "[?" else []
            return ListLit(tuple(self.arguments("]", optional, token.text == "[?")), token.pos, tuple(optional))
        if token.text == "{":
            optional = []
            return MapLit(tuple(self.entries(optional)), token.pos, tuple(optional))
        raise SyntaxProblem(f"unexpected {token.text!r}")

    def name(self, text: str, at: int) -> Expr:
        if text in ("true", "false"):
            return Lit("bool", text == "true", at)
        if text == "null":
            return Lit("null", None, at)
        call_at = self.peek().pos
        if self.accept("("):
            return self.call(text.lstrip("."), None, self.arguments(")"), call_at)
        if self.peek().text == "{" and text.lstrip(".")[:1].isupper():  # a message: Type{field: value}
            self.take()
            return StructLit(text.lstrip("."), tuple(self.field_inits()), call_at)
        return Ident(text.lstrip("."), at)

    def arguments(self, closing: str, optional: list[int] | None = None, started: bool = False) -> list[Expr]:
        """Call arguments or list elements (``optional`` collects the indexes of ``?x`` ones;
        ``started``: the first one's ``?`` was read already)."""
        args: list[Expr] = []
        while started or not self.accept(closing):
            started = False
            if self.accept("?") and optional is not None:  # an optional element costs as the element
                optional.append(len(args))
            args.append(self.expr())
            if not self.accept(","):
                self.expect(closing)
                break
        return args

    def entries(self, optional: list[int]) -> list[tuple[Expr, Expr]]:
        entries: list[tuple[Expr, Expr]] = []
        while not self.accept("}"):
            if self.accept("?"):
                optional.append(len(entries))
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
    def call(self, function: str, target: Expr | None, args: list[Expr], at: int) -> Expr:
        if target is None and function == "has" and len(args) == 1 and isinstance(args[0], Select):
            return Select(args[0].operand, args[0].field, True, at)
        if target is not None and _is_variable(target, "cel") and function == "bind" and len(args) == 3:
            name = _variable_name(args[0])
            return Comprehension("#unused", "", ListLit((), at), name, args[1], Lit("bool", False, at), Ident(name, at),
                                 args[2], at, "bind")
        if target is not None and function in _MACROS and len(args) in _MACROS[function]:
            return self.comprehension(function, target, args, at)
        return Call(function, target, tuple(args), at)

    def comprehension(self, function: str, target: Expr, args: list[Expr], at: int) -> Expr:
        """cel-go's expansion of a comprehension macro over ``target`` (every node it makes
        located at the call's ``(``)."""
        accu = Ident(ACCUMULATOR, at)
        two = function in ("all", "exists", "existsOne", "exists_one") and len(args) == 3 or \
            function in ("transformList", "transformMap") and len(args) >= 3 or function == "transformMapEntry"
        names = [_variable_name(a) for a in args[:2 if two else 1]]
        first, second = names[0], names[1] if two else ""
        body = args[len(names):]
        kind = "exists_one" if function == "existsOne" else function
        parts: tuple[Expr, Expr, Expr, Expr]

        def call(name: str, *operands: Expr) -> Call:
            return Call(name, None, operands, at)

        if kind == "all":
            parts = (Lit("bool", True, at), call("@not_strictly_false", accu), call("_&&_", accu, body[0]), accu)
        elif kind == "exists":
            parts = (Lit("bool", False, at), call("@not_strictly_false", call("!_", accu)), call("_||_", accu, body[0]),
                     accu)
        elif kind == "exists_one":
            step = call("_?_:_", body[0], call("_+_", accu, Lit("int", 1, at)), accu)
            parts = (Lit("int", 0, at), Lit("bool", True, at), step, call("_==_", accu, Lit("int", 1, at)))
        elif kind in ("map", "transformList", "sortBy"):
            step = call("_+_", accu, ListLit((body[-1],), at))
            if len(body) == 2:
                step = call("_?_:_", body[0], step, accu)
            parts = (ListLit((), at), Lit("bool", True, at), step, accu)
        elif kind == "filter":
            step = call("_?_:_", body[0], call("_+_", accu, ListLit((Ident(first, at),), at)), accu)
            parts = (ListLit((), at), Lit("bool", True, at), step, accu)
        else:  # transformMap (key, value), transformMapEntry (a map per element): a map built per element
            step = call("cel.@mapInsert", accu, body[-1]) if kind == "transformMapEntry" else \
                call("cel.@mapInsert", accu, Ident(first, at), body[-1])
            if len(body) == 2:
                step = call("_?_:_", body[0], step, accu)
            parts = (MapLit((), at), Lit("bool", True, at), step, accu)
        init, condition, step, result = parts
        return Comprehension(first, second, target, ACCUMULATOR, init, condition, step, result, at, function)


#: Receiver-style macros and their argument counts (variables included).
_MACROS = {"all": (2, 3), "exists": (2, 3), "exists_one": (2,), "existsOne": (2, 3), "map": (2, 3),
           "filter": (2,), "transformList": (3, 4), "transformMap": (3, 4), "transformMapEntry": (3, 4),
           "sortBy": (2,)}


def _balanced(function: str, operands: list[Expr], positions: list[int]) -> Expr:
    """cel-go's balancer: ``a && b && c && d`` as ``(a && b) && (c && d)``, each call at
    its operator (``positions[i]`` joins operands i and i+1)."""

    def tree(low: int, high: int) -> Expr:  # over operators low..high; depth log2 of the chain
        middle = (low + high + 1) // 2
        left = operands[middle] if middle == low else tree(low, middle - 1)
        right = operands[middle + 1] if middle == high else tree(middle + 1, high)
        return Call(function, None, (left, right), positions[middle])

    return operands[0] if len(operands) == 1 else tree(0, len(operands) - 2)


def _number(token: _Token) -> Lit:
    text = token.text
    unsigned = text[-1:] in ("u", "U") and token.kind != "double"
    digits = text[:-1] if unsigned else text
    if token.kind == "double":
        return Lit("double", float(text), token.pos)
    value = int(digits, 16) if token.kind == "hex" else int(digits)
    return Lit("uint" if unsigned else "int", value, token.pos)


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
