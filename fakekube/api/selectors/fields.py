"""Field selectors (``fields.ParseSelector``): ``field=value`` terms, escaping, matching.

Mirrors ``k8s.io/apimachinery/pkg/fields/selector.go``: terms split on unescaped commas
and sorted, the first operator in a term wins, and values use upstream's backslash
escapes. Which fields a type offers is :mod:`.fieldsets`' business.
"""

from __future__ import annotations

from typing import Mapping

from fakekube.api.machinery.errors import bad_request
from fakekube.api.selectors.selection import EQUALS, NOT_EQUALS, SelectorError


class FieldRequirement:
    """``field=value`` (``==`` is the same) or ``field!=value``; value already unescaped.
    A ``__slots__`` class, not a NamedTuple: a list reads its attributes once per object."""

    __slots__ = ("field", "operator", "value")

    def __init__(self, field: str, operator: str, value: str) -> None:
        self.field = field
        self.operator = operator
        self.value = value

    def matches(self, fields: Mapping[str, str]) -> bool:
        # A field the object does not expose reads as "" (fields.Set.Get).
        have = fields.get(self.field, "")
        return have != self.value if self.operator == NOT_EQUALS else have == self.value

    def __str__(self) -> str:
        symbol = "!=" if self.operator == NOT_EQUALS else "="
        return f"{self.field}{symbol}{escape_field_value(self.value)}"


class FieldSelector:
    """A conjunction of field terms, in upstream's order (terms sorted as written)."""

    __slots__ = ("requirements",)

    def __init__(self, requirements: tuple[FieldRequirement, ...] = ()) -> None:
        self.requirements = requirements

    def matches(self, fields: Mapping[str, str]) -> bool:
        return all(r.matches(fields) for r in self.requirements)

    def fields(self) -> list[str]:
        """Field names used, first-use order, each once: what the REST layer must check."""
        return list(dict.fromkeys(r.field for r in self.requirements))

    def empty(self) -> bool:
        return not self.requirements

    def requires_exact_match(self, field: str) -> str | None:
        for r in self.requirements:
            if r.field == field and r.operator == EQUALS:
                return r.value
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


def escape_field_value(value: str) -> str:
    """``fields.EscapeValue``: backslash-escape ``\\``, ``,`` and ``=``."""
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def unescape_field_value(value: str) -> str:
    """``fields.UnescapeValue``; raises :class:`SelectorError` with upstream's messages."""
    if not any(c in value for c in "\\,="):
        return value
    out: list[str] = []
    in_slash = False
    for c in value:
        if in_slash:
            if c not in "\\,=":
                raise SelectorError(f"invalid field selector: invalid escape sequence: \\{c}")
            out.append(c)
            in_slash = False
        elif c == "\\":
            in_slash = True
        elif c in ",=":
            # Go prints the rune with %v, i.e. as its code point number.
            raise SelectorError(f"invalid field selector: unescaped character in value: {ord(c)}")
        else:
            out.append(c)
    if in_slash:
        raise SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _split_terms(text: str) -> list[str]:
    """Split on commas not escaped by a backslash."""
    if not text:
        return []
    terms: list[str] = []
    start = 0
    in_slash = False
    for i, c in enumerate(text):
        if in_slash:
            in_slash = False
        elif c == "\\":
            in_slash = True
        elif c == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    """The first operator occurrence wins; ``!=`` and ``==`` before ``=`` at the same spot."""
    for i in range(len(term)):
        for op in ("!=", "==", "="):
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op):]
    return None


def _parse_field_terms(text: str) -> list[FieldRequirement]:
    requirements = []
    for part in sorted(_split_terms(text)):
        if not part:
            continue
        split = _split_term(part)
        if split is None:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{part}'")
        lhs, op, rhs = split
        requirements.append(FieldRequirement(lhs, NOT_EQUALS if op == "!=" else EQUALS, unescape_field_value(rhs)))
    return requirements


def parse_field_selector(text: str) -> FieldSelector:
    """Parse a ``fieldSelector`` query string; raise ApiError 400 as the apiserver does."""
    try:
        return FieldSelector(tuple(_parse_field_terms(text)))
    except SelectorError as err:
        raise bad_request(str(err)) from None
