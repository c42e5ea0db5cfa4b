"""The per-call limit for work done in Python library functions.

The engine runs comprehensions and string functions natively, and the cost estimate made
before a run bounds them; but the library functions written in Python (Kubernetes'
libraries, cel-go's extensions as the ``cel`` package implements them) can do far more
work per estimated unit — ``findAll`` building one Python string per match, ``distinct``
comparing every pair. Each is wrapped (:func:`metered`) to charge its own work, at about
one unit per 100 ns of Python, to the :class:`Meter` of the run in progress; past the
per-call limit the run is cancelled as cel-go cancels it.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Any

from fakekube.api.wire.cel.errors import CostLimitExceeded

_local = threading.local()

#: The units a call costs at least: a call from the engine into Python.
CALL_UNITS = 10
#: One ``findAll`` match: a search resumed and a substring built, about 2 µs.
MATCH_UNITS = 20


class Meter:
    """The Python work of one run, limited to ``limit`` units (one per thread at a time)."""

    __slots__ = ("limit", "used", "exceeded", "_outer")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self.exceeded = False
        self._outer: Meter | None = None

    def __enter__(self) -> "Meter":
        self._outer = getattr(_local, "meter", None)
        _local.meter = self
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        _local.meter = self._outer

    @staticmethod
    def current_exceeded() -> bool:
        """Did the run in progress on this thread pass its limit?"""
        meter = getattr(_local, "meter", None)
        return meter is not None and meter.exceeded


def charge(units: int) -> None:
    """Count ``units`` of Python work against the run in progress (none: free)."""
    meter = getattr(_local, "meter", None)
    if meter is None:
        return
    meter.used += units
    if meter.used > meter.limit:
        meter.exceeded = True
        raise CostLimitExceeded()


def _sized(value: Any) -> int:
    return len(value) if isinstance(value, (str, bytes, list, dict, tuple)) else 1


def _traversal(args: tuple[Any, ...]) -> int:
    """A call that walks its arguments once, at C speed."""
    return CALL_UNITS + sum(_sized(a) for a in args) // 10


def _per_character(args: tuple[Any, ...]) -> int:
    """A call that loops over its first argument in Python, character by character."""
    return CALL_UNITS + (_sized(args[0]) if args else 0)


def _pairs(args: tuple[Any, ...]) -> int:
    """A call that compares every element of one list with every element of another."""
    first = _sized(args[0]) if args else 0
    second = _sized(args[1]) if len(args) > 1 else first
    return CALL_UNITS + first * second


def _count(args: tuple[Any, ...]) -> int:
    """``lists.range(n)``: n elements built."""
    n = args[0] if args and isinstance(args[0], int) and not isinstance(args[0], bool) else 0
    return CALL_UNITS + max(n, 0)


def _sorting(args: tuple[Any, ...]) -> int:
    n = _sized(args[0]) if args else 0
    return CALL_UNITS + n * max(1, math.ceil(math.log2(n + 1)))


_PRICES: dict[str, Callable[[tuple[Any, ...]], int]] = {
    "distinct": _pairs, "sets.contains": _pairs, "sets.equivalent": _pairs, "sets.intersects": _pairs,
    "lists.range": _count, "sort": _sorting, "lowerAscii": _per_character, "upperAscii": _per_character,
    "strings.quote": _per_character,
}


def metered(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` charging its price (by ``name``) before it runs."""
    price = _PRICES.get(name, _traversal)

    def call(*args: Any) -> Any:
        charge(price(args))
        return function(*args)

    call.__name__ = getattr(function, "__name__", name)
    call.__doc__ = function.__doc__
    return call
