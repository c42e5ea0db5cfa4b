"""Segments: a step function over a container's life, as immutable data.

A probe's outcome (:class:`~fakekube.kubelet.behaviour.Timeline`) and a usage figure
(:class:`~fakekube.kubelet.usage.UsageTimeline`) are both ``(from_s, value)`` pairs with
rising starts, seconds since the container started. Each subclass checks its own values;
this base keeps them immutable (one timeline is shared by every behaviour naming it) and
compares, hashes and prints them by their segments.
"""

from __future__ import annotations

from typing import Any, Generic, NoReturn, TypeVar

ValueT = TypeVar("ValueT")


class Segments(Generic[ValueT]):
    """``(from_s, value)`` pairs; set once by ``__init__``, after the subclass checked them."""

    __slots__ = ("segments",)
    segments: tuple[tuple[float, ValueT], ...]

    def __init__(self, segments: tuple[tuple[float, ValueT], ...]) -> None:
        object.__setattr__(self, "segments", segments)

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError(f"a {type(self).__name__} is immutable: cannot set {name}")

    def __reduce__(self) -> tuple[type, tuple[Any, ...]]:
        return type(self), (self.segments,)  # copy and deepcopy rebuild it (setattr refuses)

    def __eq__(self, other: object) -> bool:
        return self.segments == other.segments if type(other) is type(self) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.segments)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(segments={self.segments!r})"
