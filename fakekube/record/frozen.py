""":class:`FrozenRecord`: the base of fakekube's shared immutable values.

Settings and behaviour data (``ClusterConfig``, ``NodeSpec``, ``NodeLifecycleConfig``,
``ContainerBehaviour``, ``ExecCommand``, the kubelet's timelines) are made once and
shared by every reader, so they must not change, and tests compare and print them. They
were frozen dataclasses; a plain class costs a fiftieth as much to define, and these load
on every cold start (docs/performance.md, "Cold start"). A subclass lists its fields in
``__slots__`` (a subclass adding none declares ``__slots__ = ()``), takes each as an
``__init__`` argument of the same name in the same order, checks them, and sets them with
:meth:`_set`. This base gives what the dataclass did: equality, hash and repr by value,
attributes that cannot be assigned, copying (``copy``, ``deepcopy``, ``pickle``) through
``__init__``, and :meth:`replace`.
"""

from __future__ import annotations

from typing import Any, ClassVar, NoReturn, TypeVar

_R = TypeVar("_R", bound="FrozenRecord")


class FrozenRecord:
    """Immutable fields named by ``__slots__``; compared, hashed, shown and copied by value."""

    __slots__: tuple[str, ...] = ()
    #: Every field, base classes' first: each subclass's ``__slots__`` added as it is defined
    #: (``self.__slots__`` alone would miss a base's fields).
    _field_names: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._field_names = cls._field_names + tuple(cls.__dict__.get("__slots__", ()))

    def _set(self, name: str, value: object) -> None:
        """Set a field while ``__init__`` runs (the only way in: assignment raises)."""
        object.__setattr__(self, name, value)

    def fields(self) -> dict[str, Any]:
        """The fields by name, in declaration order."""
        return {name: getattr(self, name) for name in self._field_names}

    def replace(self: _R, **changes: Any) -> _R:
        """A copy with ``changes`` (field names), checked as a new one is; TypeError on an
        unknown name."""
        return type(self)(**{**self.fields(), **changes})

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot set {name!r} (use replace())")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot delete {name!r}")

    def __reduce__(self) -> tuple[type, tuple[Any, ...]]:
        return type(self), tuple(self.fields().values())  # rebuilt through __init__ (setattr refuses)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, FrozenRecord)
        return self.fields() == other.fields()

    def __hash__(self) -> int:
        """By value; a record holding a dict (``ClusterConfig``) is unhashable, as before."""
        return hash(tuple(self.fields().values()))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in self.fields().items())
        return f"{type(self).__name__}({shown})"

