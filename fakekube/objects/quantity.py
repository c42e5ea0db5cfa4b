"""``resource.Quantity`` strings (``100m``, ``1.5Gi``, ``2e3``) as exact numbers.

Scheduling and eviction compare requests against allocatable exactly, so quantities are
:class:`~fractions.Fraction` here, never floats. The grammar and the suffixes are
apimachinery's (``pkg/api/resource/quantity.go``): a signed decimal number, then a
binary suffix (Ki…Ei), a decimal one (n, u, m, k, M…E) or a decimal exponent (``e3``).
``milli_value`` and ``int_value`` round as upstream's ``MilliValue`` and ``Value`` do:
up, away from zero.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Union

Quantity = Union[str, int, float]

#: Upstream's ErrFormatWrong text.
FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"

_QUANTITY_RE = re.compile(r"([+-]?)([0-9]+\.?[0-9]*|\.[0-9]+)(?:([eE][+-]?[0-9]+)|([a-zA-Z]*))\Z")

_SUFFIXES = {
    "": Fraction(1),
    "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000),
    "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
    "P": Fraction(10**15), "E": Fraction(10**18),
    "Ki": Fraction(2**10), "Mi": Fraction(2**20), "Gi": Fraction(2**30), "Ti": Fraction(2**40),
    "Pi": Fraction(2**50), "Ei": Fraction(2**60),
}


def parse_quantity(value: Quantity) -> Fraction:
    """The exact value of a quantity; raises :class:`ValueError` (upstream's text) when it does not parse.

    JSON numbers are accepted as they are (the API server serialises them as strings,
    but hand-built objects in tests often hold ints).
    """
    if isinstance(value, bool):
        raise ValueError(FORMAT_ERROR)
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        return Fraction(str(value))
    match = _QUANTITY_RE.match(value) if isinstance(value, str) else None
    if match is None:
        raise ValueError(FORMAT_ERROR)
    sign, number, exponent, suffix = match.groups()
    magnitude = Fraction(number if not number.endswith(".") else number[:-1])
    if exponent:
        scale = Fraction(10) ** int(exponent[1:])
    elif suffix in _SUFFIXES:
        scale = _SUFFIXES[suffix]
    else:
        raise ValueError(FORMAT_ERROR)
    result = magnitude * scale
    return -result if sign == "-" else result


def _round_away_from_zero(value: Fraction) -> int:
    return math.ceil(value) if value >= 0 else math.floor(value)


def milli_value(value: Quantity) -> int:
    """``Quantity.MilliValue``: thousandths, rounded up (CPU requests are compared this way)."""
    return _round_away_from_zero(parse_quantity(value) * 1000)


def int_value(value: Quantity) -> int:
    """``Quantity.Value``: whole units, rounded up (bytes of memory and storage, pod counts)."""
    return _round_away_from_zero(parse_quantity(value))
