"""What label and field selectors share: the operators, the error type, Go's int parsing.

This is apimachinery's ``pkg/selection`` plus the two bits both selector grammars lean
on, kept apart so ``labels`` and ``fields`` can each import it without importing the
other.
"""

from __future__ import annotations

import re

# Operators, spelled as apimachinery's selection.Operator values.
IN = "in"
NOT_IN = "notin"
EQUALS = "="
DOUBLE_EQUALS = "=="
NOT_EQUALS = "!="
EXISTS = "exists"
DOES_NOT_EXIST = "!"
GREATER_THAN = "gt"
LESS_THAN = "lt"

BINARY_OPERATORS = (IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN)
ALL_OPERATORS = BINARY_OPERATORS + (EXISTS, DOES_NOT_EXIST)

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1
_GO_INT_RE = re.compile(r"[+-]?[0-9]+\Z")


class SelectorError(ValueError):
    """A selector that apimachinery would refuse; ``str()`` is upstream's message."""


def parse_int64(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``: optional sign, ASCII digits, int64 range."""
    if not _GO_INT_RE.match(text):
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else None
