"""The ``labelSelector`` string grammar: upstream's lexer and parser (``labels.Parse``).

Kept token for token with ``k8s.io/apimachinery/pkg/labels/selector.go`` so the same
strings are accepted, the same ones refused with the same messages, and the quirks
survive (``x in ()`` means "x is the empty string"; ``in``/``notin`` are identifiers
inside a value list).
"""

from __future__ import annotations

from fakekube.api.machinery.errors import bad_request
from fakekube.api.selectors.labels import LabelSelector, Requirement, label_key_error, new_requirement, sorted_by_key
from fakekube.api.selectors.selection import (
    BINARY_OPERATORS,
    DOES_NOT_EXIST,
    DOUBLE_EQUALS,
    EQUALS,
    EXISTS,
    GREATER_THAN,
    IN,
    LESS_THAN,
    NOT_EQUALS,
    NOT_IN,
    SelectorError,
)


_ERROR, _EOS, _CLOSE, _COMMA, _NOT, _DOUBLE_EQ, _EQ, _GT, _ID, _IN, _LT, _NOT_EQ, _NOT_IN, _OPEN = range(14)
_STRING_TO_TOKEN = {
    ")": _CLOSE, ",": _COMMA, "!": _NOT, "==": _DOUBLE_EQ, "=": _EQ, ">": _GT, "in": _IN,
    "<": _LT, "!=": _NOT_EQ, "notin": _NOT_IN, "(": _OPEN,
}
_WHITESPACE = " \t\r\n"
_SPECIAL = "=!(),><"


def _lex(text: str) -> list[tuple[int, str]]:
    """All tokens of ``text`` up to and including end-of-string, as upstream's Lexer."""
    tokens: list[tuple[int, str]] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos] in _WHITESPACE:
            pos += 1
        # Go reads a 0 byte at the end; a literal NUL in the input ends the string too.
        if pos >= len(text) or text[pos] == "\0":
            tokens.append((_EOS, ""))
            return tokens
        if text[pos] in _SPECIAL:
            tok, lit, pos = _scan_special(text, pos)
        else:
            tok, lit, pos = _scan_identifier(text, pos)
        tokens.append((tok, lit))


def _scan_identifier(text: str, pos: int) -> tuple[int, str, int]:
    start = pos
    while pos < len(text) and text[pos] != "\0" and text[pos] not in _SPECIAL and text[pos] not in _WHITESPACE:
        pos += 1
    literal = text[start:pos]
    return _STRING_TO_TOKEN.get(literal, _ID), literal, pos


def _scan_special(text: str, pos: int) -> tuple[int, str, int]:
    """Longest run of symbols that is still a token (``!=`` over ``!``)."""
    buffer = ""
    best: tuple[int, str, int] | None = None
    while pos < len(text) and text[pos] in _SPECIAL:
        buffer += text[pos]
        pos += 1
        if buffer in _STRING_TO_TOKEN:
            best = (_STRING_TO_TOKEN[buffer], buffer, pos)
        elif best is not None:
            break
    if best is None:
        return _ERROR, f"error expected: keyword found '{buffer}'", pos
    return best


class _Parser:
    """Recursive-descent parser over the pre-scanned tokens, upstream's state machine."""

    def __init__(self, text: str) -> None:
        self.items = _lex(text)
        self.position = 0

    def _token(self, index: int, values_context: bool) -> tuple[int, str]:
        tok, lit = self.items[index]
        # Inside values, the keywords "in"/"notin" are ordinary identifiers.
        if values_context and tok in (_IN, _NOT_IN):
            tok = _ID
        return tok, lit

    def lookahead(self, values_context: bool = True) -> tuple[int, str]:
        return self._token(self.position, values_context)

    def consume(self, values_context: bool = True) -> tuple[int, str]:
        self.position += 1
        return self._token(self.position - 1, values_context)

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            tok, lit = self.lookahead()
            if tok == _EOS:
                return requirements
            if tok not in (_ID, _NOT):
                raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")
            try:
                requirements.append(self.parse_requirement())
            except SelectorError as err:
                raise SelectorError(f"unable to parse requirement: {err}") from None
            tok, lit = self.consume()
            if tok == _EOS:
                return requirements
            if tok != _COMMA:
                raise SelectorError(f"found '{lit}', expected: ',' or 'end of string'")
            next_tok, next_lit = self.lookahead()
            if next_tok not in (_ID, _NOT):
                raise SelectorError(f"found '{next_lit}', expected: identifier after ','")

    def parse_requirement(self) -> Requirement:
        key, operator = self.parse_key_and_infer_operator()
        if operator in (EXISTS, DOES_NOT_EXIST):
            return new_requirement(key, operator, [])
        operator = self.parse_operator()
        values = self.parse_values() if operator in (IN, NOT_IN) else self.parse_exact_value()
        return new_requirement(key, operator, sorted(values))

    def parse_key_and_infer_operator(self) -> tuple[str, str]:
        operator = ""
        tok, literal = self.consume()
        if tok == _NOT:
            operator = DOES_NOT_EXIST
            tok, literal = self.consume()
        if tok != _ID:
            raise SelectorError(f"found '{literal}', expected: identifier")
        key_error = label_key_error(literal, "<nil>")
        if key_error:
            raise SelectorError(key_error)
        if self.lookahead()[0] in (_EOS, _COMMA) and operator != DOES_NOT_EXIST:
            operator = EXISTS
        return literal, operator

    def parse_operator(self) -> str:
        tok, lit = self.consume(values_context=False)
        operators = {_IN: IN, _EQ: EQUALS, _DOUBLE_EQ: DOUBLE_EQUALS, _GT: GREATER_THAN, _LT: LESS_THAN,
                     _NOT_IN: NOT_IN, _NOT_EQ: NOT_EQUALS}
        if tok not in operators:
            raise SelectorError(f"found '{lit}', expected: {', '.join(BINARY_OPERATORS)}")
        return operators[tok]

    def parse_values(self) -> set[str]:
        tok, lit = self.consume()
        if tok != _OPEN:
            raise SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self.lookahead()
        if tok in (_ID, _COMMA):
            values = self.parse_identifiers_list()
            if self.consume()[0] != _CLOSE:
                raise SelectorError(f"found '{lit}', expected: ')'")
            return values
        if tok == _CLOSE:
            self.consume()
            return {""}
        raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")

    def parse_identifiers_list(self) -> set[str]:
        values: set[str] = set()
        while True:
            tok, lit = self.consume()
            if tok == _ID:
                values.add(lit)
                next_tok, next_lit = self.lookahead()
                if next_tok == _CLOSE:
                    return values
                if next_tok != _COMMA:
                    raise SelectorError(f"found '{next_lit}', expected: ',' or ')'")
            elif tok == _COMMA:
                if not values:
                    values.add("")  # "(," starts with an empty value
                next_tok, _ = self.lookahead()
                if next_tok == _CLOSE:
                    values.add("")  # ",)" ends with one
                    return values
                if next_tok == _COMMA:
                    self.consume()
                    values.add("")  # ",," holds one
            else:
                raise SelectorError(f"found '{lit}', expected: ',', or identifier")

    def parse_exact_value(self) -> set[str]:
        if self.lookahead()[0] in (_EOS, _COMMA):
            return {""}
        tok, lit = self.consume()
        if tok == _ID:
            return {lit}
        raise SelectorError(f"found '{lit}', expected: identifier")


def parse_label_selector(text: str) -> LabelSelector:
    """Parse a ``labelSelector`` query string; raise ApiError 400 as the apiserver does."""
    try:
        return LabelSelector(sorted_by_key(_Parser(text).parse()))
    except SelectorError as err:
        raise bad_request(str(err)) from None
