"""``intstr.IntOrString`` values scaled against a total: PDB budgets, rolling-update surges.

A field such as ``minAvailable: "50%"`` or ``maxUnavailable: 1`` is an int or a percent
string; controllers turn it into a count of pods with
``intstr.GetScaledValueFromIntOrPercent`` (apimachinery ``pkg/util/intstr/intstr.go``).
Percentages round up or down as the caller asks: the disruption controller rounds up,
Deployments round maxSurge up and maxUnavailable down. The arithmetic is exact integer
arithmetic, which gives what upstream's float64 ``math.Ceil``/``math.Floor`` give for every
value an int32 field can hold.
"""

from __future__ import annotations

import re
from typing import Any

_DECIMAL = re.compile(r"^[+-]?[0-9]+$")


def scaled_value(value: Any, total: int, round_up: bool) -> int:
    """The count ``value`` stands for out of ``total``: an int as is, ``"N%"`` as N % of
    ``total`` rounded up (``round_up``) or down.

    Raises :class:`ValueError` with upstream's message for None, a string without ``%``
    or a percent that is not a number.
    """
    if value is None:
        raise ValueError("nil value for IntOrString")
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if not isinstance(value, str):
        raise ValueError("invalid value for IntOrString: invalid type: neither int nor percentage")
    if not value.endswith("%"):
        raise ValueError("invalid value for IntOrString: invalid type: string is not a percentage")
    digits = value[:-1]
    if not _DECIMAL.match(digits):
        raise ValueError(f'invalid value for IntOrString: invalid value "{value}": '
                         f'strconv.Atoi: parsing "{digits}": invalid syntax')
    percent = int(digits)
    product = percent * total
    return -(-product // 100) if round_up else product // 100


def is_percent(value: Any) -> bool:
    """Is ``value`` the string form (a percentage) rather than an int?"""
    return isinstance(value, str)
