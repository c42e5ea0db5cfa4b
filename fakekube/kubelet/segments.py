"""Segments: a step function over a container's life, as immutable data.

A probe's outcome (:class:`~fakekube.kubelet.behaviour.Timeline`) and a usage figure
(:class:`~fakekube.kubelet.usage.UsageTimeline`) are both ``(from_s, value)`` pairs with
rising starts, seconds since the container started. Each subclass checks its own values;
this base holds them as a :class:`~fakekube.record.FrozenRecord` (one timeline is shared by
every behaviour naming it), compared, hashed and printed by its segments.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from fakekube.record import FrozenRecord

ValueT = TypeVar("ValueT")


class Segments(FrozenRecord, Generic[ValueT]):
    """``(from_s, value)`` pairs; set once by ``__init__``, after the subclass checked them."""

    __slots__ = ("segments",)
    segments: tuple[tuple[float, ValueT], ...]

    def __init__(self, segments: tuple[tuple[float, ValueT], ...]) -> None:
        self._set("segments", segments)
