"""User-supplied regular expressions, run in linear time with Go's ``regexp`` rules.

Kubernetes compiles every user-supplied pattern with Go's ``regexp`` package: a CRD
schema's ``pattern``, CEL's ``find``/``findAll``. That is RE2: no backreferences, no
look-around, and matching in time linear in the text, so ``^(a+)+$`` against a long
string costs what any other pattern does. Python's ``re`` backtracks (that pattern
against 26 characters took 12 s, holding the interpreter), so user patterns run on
RE2 itself (the ``google-re2`` package) and never on ``re``; fakekube's own constant
patterns stay on ``re``.

- :func:`compile` → a compiled :class:`Regexp` (cached, bounded), or :class:`RegexpError`
  whose text is Go's (``error parsing regexp: missing closing ): `(abc```).
- :meth:`Regexp.search`, :meth:`Regexp.find`, :meth:`Regexp.find_all`: ``MatchString``,
  ``FindString`` and ``FindAllString`` with Go's rules for empty matches.

Both engines parse RE2 syntax; where the C++ library accepts what Go refuses (``\\C``),
the pattern is refused as Go refuses it. Each compiled program is held to RE2's default
memory budget (8 MiB): a larger one is Go's ``expression too large``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import re2  # type: ignore[import-untyped]  # google-re2 ships no type information

#: Compiled patterns kept (least recently used dropped).
MAX_CACHED_PATTERNS = 1024

#: RE2's error texts (re2/regexp.cc) and Go's for the same error (regexp/syntax ErrorCode).
_GO_CODES = (
    ("missing )", "missing closing )"),
    ("missing ]", "missing closing ]"),
    ("unexpected )", "unexpected )"),
    ("trailing \\", "trailing backslash at end of expression"),
    ("no argument for repetition operator", "missing argument to repetition operator"),
    ("invalid repetition size", "invalid repeat count"),
    ("bad repetition operator", "invalid nested repetition operator"),
    ("invalid perl operator", "invalid or unsupported Perl syntax"),
    ("invalid character class range", "invalid character class range"),
    ("invalid character class", "invalid character class"),
    ("invalid escape sequence", "invalid escape sequence"),
    ("invalid UTF-8", "invalid UTF-8"),
    ("invalid named capture group", "invalid named capture"),
    ("duplicate capture group name", "duplicate capture group name"),
    ("pattern too large", "expression too large"),
)



class RegexpError(ValueError):
    """A pattern Go's ``regexp.Compile`` refuses; ``str()`` is Go's ``err.Error()``."""


class Regexp:
    """One compiled pattern, matched against UTF-8 text as Go matches (byte offsets)."""

    __slots__ = ("pattern", "_program")

    def __init__(self, pattern: str, program: Any) -> None:
        self.pattern = pattern
        self._program = program

    def search(self, text: str) -> bool:
        """``MatchString``: does the pattern match anywhere in ``text``?"""
        return self._program.search(_utf8(text)) is not None

    def find(self, text: str) -> str:
        """``FindString``: the leftmost match, or "" when there is none."""
        found = self._program.search(_utf8(text))
        return found.group().decode("utf-8", errors="replace") if found is not None else ""

    def find_all(self, text: str, limit: int = -1, on_match: Callable[[], None] | None = None) -> list[str]:
        """``FindAllString(text, limit)``: successive non-overlapping matches (all of them
        when ``limit`` < 0); an empty match right after a previous match is skipped, as Go
        does. ``on_match`` is told of each match (a caller metering its work may stop it)."""
        data = _utf8(text)
        found: list[str] = []
        position, previous_end = 0, -1
        while (limit < 0 or len(found) < limit) and position <= len(data):
            match = self._program.search(data, position)
            if match is None:
                break
            start, end = match.span()
            accept = True
            if end == start:  # an empty match: step over one character
                accept = start != previous_end
                position = end + _rune_width(data, end)
            else:
                position = end
            previous_end = end
            if on_match is not None:
                on_match()
            if accept:
                found.append(data[start:end].decode("utf-8", errors="replace"))
        return found


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", errors="replace")


def _rune_width(data: bytes, at: int) -> int:
    """The length of the UTF-8 character starting at ``at`` (1 past the end)."""
    if at >= len(data):
        return 1
    lead = data[at]
    return 1 if lead < 0xC0 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4


@functools.lru_cache(maxsize=MAX_CACHED_PATTERNS)
def compile(pattern: str) -> Regexp:  # noqa: A001 - Go's verb
    """``regexp.Compile(pattern)``; raises :class:`RegexpError` with Go's text."""
    if _has_byte_escape(pattern):
        raise RegexpError("error parsing regexp: invalid escape sequence: `\\C`")
    options = re2.Options()
    options.log_errors = False  # the error is raised, not printed to stderr
    try:
        program = re2.compile(_utf8(pattern), options)
    except re2.error as exc:
        raise RegexpError(_go_error(exc)) from None
    return Regexp(pattern, program)


def _has_byte_escape(pattern: str) -> bool:
    """Does the pattern use ``\\C`` (any byte: RE2's, not Go's)? One pass, escapes paired."""
    position = pattern.find("\\")
    while position != -1:
        if pattern[position + 1:position + 2] == "C":
            return True
        position = pattern.find("\\", position + 2)
    return False


def _go_error(exc: Exception) -> str:
    """RE2's ``code: fragment`` as Go's ``error parsing regexp: code: `fragment```."""
    raw = exc.args[0] if exc.args else b""
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else str(raw)
    for code, go_code in _GO_CODES:
        if text.startswith(code):
            fragment = text[len(code):].removeprefix(": ")
            return f"error parsing regexp: {go_code}: `{fragment}`"
    return f"error parsing regexp: {text}"


def search(pattern: str, text: str) -> bool:
    """``regexp.MatchString(pattern, text)``."""
    return compile(pattern).search(text)
