"""The base of the cluster's immutable settings (:class:`ClusterConfig`, :class:`NodeSpec`).

They were frozen dataclasses; a plain class costs a fiftieth as much to define, and
these load on every cold start (docs/performance.md, "Cold start"). A subclass lists its
fields in ``__slots__``, takes each as an ``__init__`` argument of the same name, and sets
them with :meth:`_set`; this base gives what the dataclass did: equality and repr by
value, attributes that cannot be assigned, and :meth:`replace`.
"""

from __future__ import annotations

from typing import Any, NoReturn, TypeVar

_R = TypeVar("_R", bound="FrozenRecord")


class FrozenRecord:
    """Immutable fields named by ``__slots__``; compared, shown and copied by value."""

    __slots__: tuple[str, ...] = ()

    def _set(self, name: str, value: object) -> None:
        """Set a field while ``__init__`` runs (the only way in: assignment raises)."""
        object.__setattr__(self, name, value)

    def fields(self) -> dict[str, Any]:
        """The fields by name, in declaration order."""
        return {name: getattr(self, name) for name in self.__slots__}

    def replace(self: _R, **changes: Any) -> _R:
        """A copy with ``changes`` (field names); TypeError on an unknown name."""
        return type(self)(**{**self.fields(), **changes})

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"cannot assign to field {name!r}: a {type(self).__name__} is immutable (use replace())")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"cannot delete field {name!r}: a {type(self).__name__} is immutable")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, FrozenRecord)
        return self.fields() == other.fields()

    __hash__ = None  # type: ignore[assignment]  # fields hold dicts: not hashable, as before

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in self.fields().items())
        return f"{type(self).__name__}({shown})"
