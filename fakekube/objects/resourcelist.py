"""Resource lists as quota and LimitRange arithmetic sees them: exact amounts that print as
``resource.Quantity.String`` does after ``Add``/``Sub``.

A Quantity keeps a format (BinarySI for ``Ki``…``Ei``, DecimalSI otherwise) and prints
canonically in it; ``Add`` on a zero quantity takes the other's format, so ``0 + 64Mi``
prints ``64Mi`` while ``64Mi + 100M`` stays BinarySI and prints in bytes when no power of
1024 divides it. Quota messages and ``status.used`` are made of these strings, so the
format travels with the value here (upstream ``pkg/api/resource/quantity.go`` and
``pkg/quota/v1/resources.go``).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Iterable, Mapping, NamedTuple

from fakekube.objects.quantity import format_binary_si, format_decimal_si, parse_quantity

_BINARY_SUFFIXES = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_NANO = 10**9


class Amount(NamedTuple):
    """An exact quantity and whether it prints BinarySI."""

    value: Fraction
    binary: bool = False

    def __str__(self) -> str:
        value = self.value
        if self.binary and value.denominator == 1 and abs(value) >= 1024:
            return format_binary_si(int(value))
        nanos = value * _NANO
        return format_decimal_si(int(nanos), -9) if nanos.denominator == 1 else str(float(value))

    def plus(self, other: "Amount") -> "Amount":
        """``Quantity.Add``: a zero quantity takes the other's format."""
        return Amount(self.value + other.value, other.binary if self.value == 0 else self.binary)

    def minus(self, other: "Amount") -> "Amount":
        """``Quantity.Sub``: a zero quantity takes the other's format."""
        return Amount(self.value - other.value, other.binary if self.value == 0 else self.binary)


ZERO = Amount(Fraction(0))
ONE = Amount(Fraction(1))
ResourceList = dict[str, Amount]


def amount(value: Any) -> Amount:
    """A quantity from an object (string or JSON number); ValueError when it does not parse."""
    binary = isinstance(value, str) and value.endswith(_BINARY_SUFFIXES)
    return Amount(parse_quantity(value), binary)


def canonical(value: Any) -> str:
    """A stored quantity as upstream prints it (``0.5`` → ``500m``); the text itself if it does not parse."""
    try:
        return str(amount(value))
    except ValueError:
        return str(value)


def parse_list(values: Mapping[str, Any] | None) -> ResourceList:
    """An object's ``{name: quantity}`` map; entries that do not parse are left out (validation refuses them)."""
    result: ResourceList = {}
    for name, value in (values or {}).items():
        try:
            result[name] = amount(value)
        except ValueError:
            continue
    return result


def add(a: Mapping[str, Amount], b: Mapping[str, Amount]) -> ResourceList:
    """``quota.Add``: every key of either, summed."""
    result = dict(a)
    for name, value in b.items():
        result[name] = result[name].plus(value) if name in result else value
    return result


def subtract_non_negative(a: Mapping[str, Amount], b: Mapping[str, Amount]) -> ResourceList:
    """``quota.SubtractWithNonNegativeResult``: a − b per key of a, never below zero."""
    result: ResourceList = {}
    for name, value in a.items():
        left = value.minus(b[name]) if name in b else value
        result[name] = left if left.value > 0 else Amount(Fraction(0), left.binary)
    return result


def take_max(a: Mapping[str, Amount], b: Mapping[str, Amount]) -> ResourceList:
    """Per key, the larger of the two (``maxResourceList``)."""
    result = dict(a)
    for name, value in b.items():
        if name not in result or value.value > result[name].value:
            result[name] = value
    return result


def mask(values: Mapping[str, Amount], names: Iterable[str]) -> ResourceList:
    """``quota.Mask``: only the named keys."""
    return {name: values[name] for name in names if name in values}


def remove_zeros(values: Mapping[str, Amount]) -> ResourceList:
    return {name: value for name, value in values.items() if value.value != 0}


def exceeded(used: Mapping[str, Amount], hard: Mapping[str, Amount]) -> list[str]:
    """``quota.LessThanOrEqual``'s second answer: the keys of ``used`` above ``hard``, sorted."""
    return sorted(name for name, value in used.items() if name in hard and value.value > hard[name].value)


def equal(a: Mapping[str, Amount], b: Mapping[str, Amount]) -> bool:
    """``quota.Equals``: same keys, same values (formats aside)."""
    return a.keys() == b.keys() and all(a[name].value == b[name].value for name in a)


def pretty(values: Mapping[str, Amount]) -> str:
    """``prettyPrint``: ``name=value`` by sorted name, comma-joined."""
    return ",".join(f"{name}={values[name]}" for name in sorted(values))


def to_object(values: Mapping[str, Amount]) -> dict[str, str]:
    """The wire form, keys sorted (Go marshals maps in key order)."""
    return {name: str(values[name]) for name in sorted(values)}


def ceil_int(value: Fraction) -> int:
    """Rounded up, away from zero (``Value``/``MilliValue``)."""
    return math.ceil(value) if value >= 0 else math.floor(value)
