"""``resource.Quantity`` strings (``100m``, ``1.5Gi``, ``2e3``) as exact numbers.

Scheduling and eviction compare requests against allocatable exactly, so quantities are
:class:`~fractions.Fraction` here, never floats. The grammar and the suffixes are
apimachinery's (``pkg/api/resource/quantity.go``): a signed decimal number, then a
binary suffix (Ki…Ei), a decimal one (n, u, m, k, M…E) or a decimal exponent (``e3``).
``milli_value`` and ``int_value`` round as upstream's ``MilliValue`` and ``Value`` do:
up, away from zero.
"""

from __future__ import annotations

import functools
import math
import re
from fractions import Fraction
from typing import Union

Quantity = Union[str, int, float]

#: Upstream's ErrFormatWrong text.
FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"

_QUANTITY_RE = re.compile(r"([+-]?)([0-9]+\.?[0-9]*|\.[0-9]+)(?:([eE][+-]?[0-9]+)|([a-zA-Z]*))\Z")

#: suffix -> (base, power)
_SUFFIXES = {
    "": (10, 0), "n": (10, -9), "u": (10, -6), "m": (10, -3),
    "k": (10, 3), "M": (10, 6), "G": (10, 9), "T": (10, 12), "P": (10, 15), "E": (10, 18),
    "Ki": (2, 10), "Mi": (2, 20), "Gi": (2, 30), "Ti": (2, 40), "Pi": (2, 50), "Ei": (2, 60),
}


#: ``ParseQuantity`` caps a binary-suffixed value at the largest int64 ("the max is just
#: a simple cap"); here every quantity saturates there (upstream keeps a larger decimal
#: one exact, but its ``Value()`` and ``MilliValue()`` then overflow int64), so a huge
#: exponent or a thousand-digit number costs nothing.
MAX_QUANTITY = Fraction(2**63 - 1)
#: Upstream rounds every non-zero quantity up to whole nano-units (away from zero).
_NANO = 10**9


def parse_quantity(value: Quantity) -> Fraction:
    """The exact value of a quantity; raises :class:`ValueError` (upstream's text) when it does not parse.

    JSON numbers are accepted as they are (the API server serialises them as strings,
    but hand-built objects in tests often hold ints). Magnitudes past 2^63-1 saturate at
    :data:`MAX_QUANTITY` and fractions round up to a nano-unit, as ``ParseQuantity`` does.
    """
    if isinstance(value, bool):
        raise ValueError(FORMAT_ERROR)
    if isinstance(value, int):
        return Fraction(value) if abs(value) <= MAX_QUANTITY else MAX_QUANTITY * (1 if value > 0 else -1)
    if isinstance(value, float):
        value = repr(value) if value == value and abs(value) != float("inf") else ""
    if not isinstance(value, str):
        raise ValueError(FORMAT_ERROR)
    return _parse_text(value)


@functools.lru_cache(maxsize=4096)
def _parse_text(value: str) -> Fraction:
    """A quantity string's value, remembered: specs repeat a handful of strings ("100m",
    "64Mi") thousands of times, and Fractions are immutable. Bounded: 4,096 strings."""
    match = _QUANTITY_RE.match(value)
    if match is None:
        raise ValueError(FORMAT_ERROR)
    sign, number, exponent, suffix = match.groups()
    if exponent:
        digits = exponent[1:].lstrip("+-").lstrip("0")
        power = int(exponent[1:]) if len(digits) <= 12 else (-(10**12) if "-" in exponent else 10**12)
        base = 10
    elif suffix in _SUFFIXES:
        base, power = _SUFFIXES[suffix]
    else:
        raise ValueError(FORMAT_ERROR)
    result = _magnitude(number, base, power)
    return -result if sign == "-" else result


def _magnitude(number: str, base: int, power: int) -> Fraction:
    """``number`` × base^power in whole nano-units (rounded up), saturated at 2^63-1,
    without building a number much larger than int64: the digits and the exponent come
    from the client, and Python's big numbers would spend minutes on ``1e999999999``."""
    whole, _, fraction = number.partition(".")
    whole, fraction = whole.lstrip("0"), fraction.rstrip("0")
    if not whole and not fraction:
        return Fraction(0)
    if base == 2:  # 2^power is at least 1024: more than 19 whole digits is past 2^63-1
        if len(whole) > 19:
            return MAX_QUANTITY
        kept = fraction[:30]  # 2^60 / 10^30 is far below a nano-unit
        digits = int(whole + kept) + (len(fraction) > len(kept))
        nanos = _ceil_div(digits * 2**power * _NANO, 10 ** len(kept))
        return min(Fraction(nanos, _NANO), MAX_QUANTITY)
    digits_text = (whole + fraction).lstrip("0")
    exponent = power - len(fraction)  # value = int(digits_text) * 10^exponent
    if len(digits_text) + exponent > 19:
        return MAX_QUANTITY
    keep = len(digits_text) + exponent + 9  # the digits worth a nano-unit or more
    if keep <= 0:
        return Fraction(1, _NANO)  # below a nano-unit: rounds up to one
    head, rest = digits_text[:keep], digits_text[keep:]
    nanos = int(head) * 10 ** (exponent + len(digits_text) - len(head) + 9) + (rest.strip("0") != "")
    return min(Fraction(nanos, _NANO), MAX_QUANTITY)


def _ceil_div(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)


def _round_away_from_zero(value: Fraction) -> int:
    return math.ceil(value) if value >= 0 else math.floor(value)


def milli_value(value: Quantity) -> int:
    """``Quantity.MilliValue``: thousandths, rounded up (CPU requests are compared this way)."""
    return _round_away_from_zero(parse_quantity(value) * 1000)


def int_value(value: Quantity) -> int:
    """``Quantity.Value``: whole units, rounded up (bytes of memory and storage, pod counts)."""
    return _round_away_from_zero(parse_quantity(value))


#: The decimal suffixes by power of ten (multiples of three), as ``Quantity.String`` uses them.
_DECIMAL_SUFFIXES = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BINARY_SUFFIXES = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


def format_decimal_si(value: int, power: int = 0) -> str:
    """``value × 10^power`` as ``Quantity.String`` prints a DecimalSI quantity: trailing zeros
    taken into the largest exact suffix (``1000000`` nanos → ``1m``, ``1500000`` → ``1500u``)."""
    if value == 0:
        return "0"
    while value % 10 == 0 and power < 18:
        value //= 10
        power += 1
    extra = power % 3  # down to a multiple of three, keeping the number whole
    return f"{value * 10 ** extra}{_DECIMAL_SUFFIXES[power - extra]}"


def format_binary_si(value: int) -> str:
    """Whole bytes as ``Quantity.String`` prints a BinarySI quantity: the largest power of
    1024 that divides it (``2928640`` → ``2860Ki``); below 1024 upstream switches to
    DecimalSI (``1000`` → ``1k``)."""
    if -1024 < value < 1024:
        return format_decimal_si(value)
    index = 0
    while value % 1024 == 0 and index < len(_BINARY_SUFFIXES) - 1:
        value //= 1024
        index += 1
    return f"{value}{_BINARY_SUFFIXES[index]}"


def canonical_quantity(value: Quantity, round_up_to_milli: bool = False) -> str:
    """A quantity as ``Quantity.MarshalJSON`` writes it after parsing (``1000m`` → ``1``,
    ``1024Mi`` → ``1Gi``, ``0.5`` → ``500m``, ``2e3`` stays ``2e3``); raises ValueError
    (upstream's text) when it does not parse.

    The format follows the suffix (``CanonicalizeBytes``): Ki…Ei keep BinarySI while the
    value is a whole number of at least 1024, an exponent keeps DecimalExponent, anything
    else is DecimalSI; the number is the shortest whole mantissa with an exponent that is a
    multiple of three. ``round_up_to_milli``: first rounded up (away from zero) to a
    thousandth, as core/v1's defaulting does to every ``ResourceList`` (``1n`` → ``1m``).
    """
    if isinstance(value, bool):
        raise ValueError(FORMAT_ERROR)
    if isinstance(value, int):
        return _canonical_text(str(value), round_up_to_milli)
    if isinstance(value, float):
        value = repr(value) if value == value and abs(value) != float("inf") else ""
    if not isinstance(value, str):
        raise ValueError(FORMAT_ERROR)
    return _canonical_text(value.strip(), round_up_to_milli)


@functools.lru_cache(maxsize=4096)
def _canonical_text(text: str, round_up_to_milli: bool) -> str:
    """Bounded like :func:`_parse_text`: specs repeat a handful of strings."""
    amount = _parse_text(text)
    if round_up_to_milli and (amount * 1000).denominator != 1:
        amount = Fraction(_round_away_from_zero(amount * 1000), 1000)
    if amount == 0:
        return "0"
    match = _QUANTITY_RE.match(text)
    assert match is not None  # _parse_text matched it
    exponent, suffix = match.group(3), match.group(4)
    if suffix in _BINARY_SUFFIXES[1:] and amount.denominator == 1 and abs(amount) >= 1024:
        return format_binary_si(int(amount))
    nanos = amount * _NANO  # whole: parsing rounds up to nano-units
    if exponent:
        return _format_decimal_exponent(int(nanos), -9)
    return format_decimal_si(int(nanos), -9)


def _format_decimal_exponent(value: int, power: int) -> str:
    """``value × 10^power`` in DecimalExponent form (``1500`` → ``1500``, ``2000`` → ``2e3``)."""
    while value % 10 == 0 and value:
        value //= 10
        power += 1
    extra = power % 3
    value, power = value * 10 ** extra, power - extra
    return f"{value}e{power}" if power else str(value)
